# complete.zsh -- prints what zsh's completion offers for a command line,
# one candidate a line: an interactive zsh on a pseudo-terminal loads the
# completion functions of COMPDIR, types the line and a Tab, and records
# every candidate handed to compadd.
#
#   zsh -f complete.zsh COMPDIR OUTFILE 'smriti lo'
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z "compadd () { builtin compadd -O __hits \"\$@\"; print -rl -- \$__hits >> ${(q)2}; builtin compadd \"\$@\" }"
zpty -w z "$3"$'\t'
zpty -w z $'\n'"print -r -- done >> ${(q)2}.done"
for i in {1..150}; do [[ -e $2.done ]] && break; sleep 0.1; done
zpty -d z
[[ -e $2.done ]]
