# bash completion for smriti(1).
#
# Commands and options are read from `smriti help` and `smriti COMMAND
# --help` when completing, so they follow the installed version; Space
# names come from `smriti space list --names` (one name a line, as stored:
# quotes and spaces in a name stay data) on the store the command line
# names (--db, --remote, or the environment).

# Prints the global options already typed, one word a line, so that Space
# names come from the store the command will use.
_smriti_globals()
{
	local i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--db | --remote) printf '%s\n' "${words[i]}" "${words[i + 1]}" ;;
		--db=* | --remote=*) printf '%s\n' "${words[i]}" ;;
		esac
	done
}

# Sets COMPREPLY to the Space names starting with $cur.  A SQLite store that
# does not exist yet is left alone: listing it would create it.
_smriti_complete_spaces()
{
	local IFS=$'\n' globals db remote name i
	globals=($(_smriti_globals))
	db=${SMRITI_DB:-${XDG_DATA_HOME:-$HOME/.local/share}/smriti/smriti.db}
	remote=$SMRITI_URL
	for ((i = 0; i < ${#globals[@]}; i++)); do
		case ${globals[i]} in
		--db) db=${globals[i + 1]} ;;
		--db=*) db=${globals[i]#--db=} ;;
		--remote) remote=${globals[i + 1]} ;;
		--remote=*) remote=${globals[i]#--remote=} ;;
		esac
	done
	if [[ -z $remote && $db != postgres://* && $db != postgresql://* && ! -e $db ]]; then
		return
	fi
	COMPREPLY=()
	while read -r name; do
		[[ $name == "$cur"* ]] && COMPREPLY+=("$(printf '%q' "$name")")
	done < <("$1" "${globals[@]}" space list --names 2>/dev/null)
}

_smriti()
{
	local cur prev words cword
	_init_completion -n '=~' || return

	local i cmd sub nargs=0
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--db | --remote) ((i++)) ;;
		-*) ;;
		*)
			if [[ -z $cmd ]]; then
				cmd=${words[i]}
			elif [[ ($cmd == space || $cmd == user || $cmd == token) && -z $sub ]]; then
				sub=${words[i]}
			else
				((nargs++))
			fi
			;;
		esac
	done

	case $prev in
	--db | --from-json | --resolve | --output | -o)
		_filedir
		return
		;;
	--remote | --listen | --description | --title | --message | -m | --summary | \
		--decision | --assumption | --task | --question | --entity | --meta | \
		--parent | --author | --limit | -n | --workers | --threads | --max-body | \
		--model | --into | --artifact | --drop | --done | --reopen | --job | --expires | --since | --until | \
		--budget | --url)
		return
		;;
	--log-format)
		COMPREPLY=($(compgen -W "text json" -- "$cur"))
		return
		;;
	--hook | --stop-hook)
		COMPREPLY=($(compgen -W "claude codex gemini vscode cursor" -- "$cur"))
		return
		;;
	--file)
		_filedir md
		return
		;;
	--space)
		_smriti_complete_spaces "$1"
		return
		;;
	--provider)
		COMPREPLY=($(compgen -W "openai anthropic local" -- "$cur"))
		return
		;;
	--format)
		COMPREPLY=($(compgen -W "text markdown chatgpt claude" -- "$cur"))
		return
		;;
	--field)
		COMPREPLY=($(compgen -W "title summary decisions assumptions tasks open_questions
			entities artifacts turn" -- "$cur"))
		return
		;;
	esac

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--db --remote --no-pager --version --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$("$1" help 2>/dev/null |
				sed -n 's/^  smriti \([a-z-]*\).*/\1/p') help version" -- "$cur"))
		fi
		return
	fi

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("$1" "$cmd" --help 2>/dev/null |
			grep -o -- '--[a-z][a-z-]*' | sort -u) --help" -- "$cur"))
		return
	fi

	case $cmd in
	space)
		if [[ -z $sub ]]; then
			COMPREPLY=($(compgen -W "create list rename delete" -- "$cur"))
		elif [[ ($sub == rename || $sub == delete) && $nargs == 0 ]]; then
			_smriti_complete_spaces "$1"
		fi
		;;
	checkpoint)
		if [[ $nargs == 0 ]]; then
			COMPREPLY=($(compgen -W "create" -- "$cur"))
		elif [[ $nargs == 1 ]]; then
			_smriti_complete_spaces "$1"
		fi
		;;
	commit | head | show | log | fork | fsck | review | reflog | blame | prime | init)
		[[ $nargs == 0 ]] && _smriti_complete_spaces "$1"
		;;
	export)
		_smriti_complete_spaces "$1"
		;;
	setup)
		[[ $nargs == 0 ]] && COMPREPLY=($(compgen -W "claude codex gemini cursor vscode
			claude-desktop agents-md" -- "$cur"))
		;;
	import)
		[[ $nargs == 0 ]] && _filedir
		;;
	diff | restore | merge)
		[[ $nargs -lt 2 ]] && _smriti_complete_spaces "$1"
		;;
	ingest)
		[[ $nargs == 0 ]] && _filedir
		;;
	user)
		[[ -z $sub ]] && COMPREPLY=($(compgen -W "add list disable enable" -- "$cur"))
		;;
	token)
		[[ -z $sub ]] && COMPREPLY=($(compgen -W "create list revoke" -- "$cur"))
		;;
	grant)
		if [[ $nargs == 1 ]]; then
			_smriti_complete_spaces "$1"
		elif [[ $nargs == 2 ]]; then
			COMPREPLY=($(compgen -W "reader writer owner" -- "$cur"))
		fi
		;;
	revoke)
		[[ $nargs == 1 ]] && _smriti_complete_spaces "$1"
		;;
	access)
		[[ $nargs == 0 ]] && _smriti_complete_spaces "$1"
		;;
	esac
} &&
	complete -F _smriti smriti
