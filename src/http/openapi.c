/*
 * openapi.c -- the OpenAPI 3.1 document served at /openapi.json.
 *
 * Paths come from http_routes[] itself (pattern, method, summary, success
 * status, schema names, query parameters), with the errors each route's
 * operation can give from route_errors below, so a route cannot exist
 * without being documented; the component
 * schemas below describe the bodies exactly: every property a response has
 * is listed, required and typed, and objects the server builds are closed
 * (additionalProperties: false), so that validating a response proves
 * something.  Request bodies are closed where the server refuses unknown
 * keys.  tests/js/openapi.test.mjs validates the document with
 * swagger-parser, and the HTTP tests validate every response they receive
 * against its route's schema (tests/js/http-helpers.mjs), so the document
 * cannot drift from the server.
 */
#include "http/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Generated once from a readable description, then edited here by hand. */
static const char components_json[] =
"{"
" \"securitySchemes\":{"
"  \"bearer\":{"
"   \"type\":\"http\","
"   \"scheme\":\"bearer\","
"   \"description\":\"Required on every route but /healthz, /v4/auth and the web UI's files when the server runs with SMRITI_TOKEN (the web UI's cookie from POST /v4/auth also admits)\""
"  }"
" },"
" \"schemas\":{"
"  \"Error\":{"
"   \"type\":\"object\","
"   \"description\":\"Every failure but those of chat.send's provider call (ChatFailure) and of MCP (JsonRpc)\","
"   \"required\":[\"error\"],"
"   \"properties\":{"
"    \"error\":{"
"     \"type\":\"object\","
"     \"required\":[\"code\",\"message\"],"
"     \"properties\":{"
"      \"code\":{"
"       \"type\":\"string\","
"       \"examples\":["
"        \"invalid_input\","
"        \"not_found\","
"        \"conflict\","
"        \"too_large\","
"        \"unprocessable\","
"        \"provider_error\","
"        \"provider_timeout\","
"        \"unauthorized\","
"        \"misdirected\""
"       ]"
"      },"
"      \"message\":{\"type\":\"string\",\"minLength\":1}"
"     },"
"     \"additionalProperties\":false"
"    }"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"ChatFailure\":{"
"   \"type\":\"object\","
"   \"description\":\"A chat.send whose provider failed: the user turn is kept and the context that was sent is described. With text received before the failure, assistant_turn holds it (status error, or interrupted when the server stopped) with the nudge; with none, the user turn carries the error\","
"   \"required\":[\"error\"],"
"   \"properties\":{"
"    \"error\":{\"$ref\":\"#/components/schemas/Error/properties/error\"},"
"    \"generation\":{\"$ref\":\"#/components/schemas/Generation\"},"
"    \"user_turn\":{\"$ref\":\"#/components/schemas/Turn\"},"
"    \"assistant_turn\":{\"$ref\":\"#/components/schemas/Turn\"},"
"    \"context\":{\"$ref\":\"#/components/schemas/SendContext\"},"
"    \"nudge\":{\"$ref\":\"#/components/schemas/ChatSendResult/properties/nudge\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"Health\":{"
"   \"type\":\"object\","
"   \"required\":[\"ok\",\"store\"],"
"   \"properties\":{"
"    \"ok\":{\"type\":\"boolean\"},"
"    \"store\":{\"type\":\"string\",\"enum\":[\"sqlite\",\"postgres\"]}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"OpenAPI\":{"
"   \"type\":\"object\","
"   \"required\":[\"openapi\",\"info\",\"paths\"],"
"   \"properties\":{"
"    \"openapi\":{\"type\":\"string\"},"
"    \"info\":{\"type\":\"object\"},"
"    \"paths\":{\"type\":\"object\"}"
"   }"
"  },"
"  \"Metrics\":{"
"   \"type\":\"string\","
"   \"description\":\"Prometheus text exposition format 0.0.4 (docs/operations.md lists the families)\""
"  },"
"  \"Html\":{"
"   \"type\":\"string\","
"   \"description\":\"not JSON: the file itself, with its own Content-Type\""
"  },"
"  \"OpParams\":{"
"   \"type\":\"object\","
"   \"description\":\"The operation's parameters, e.g. {\\\"space\\\":\\\"demo\\\"} for head\","
"   \"properties\":{}"
"  },"
"  \"OpResult\":{"
"   \"type\":\"object\","
"   \"description\":\"The operation's result document\","
"   \"required\":[\"result\"],"
"   \"properties\":{\"result\":{}},"
"   \"additionalProperties\":false"
"  },"
"  \"Space\":{"
"   \"type\":\"object\","
"   \"required\":[\"id\",\"name\",\"description\",\"created_at\",\"head\"],"
"   \"properties\":{"
"    \"id\":{\"type\":\"string\",\"format\":\"uuid\"},"
"    \"name\":{\"type\":\"string\",\"minLength\":1},"
"    \"description\":{\"type\":\"string\"},"
"    \"created_at\":{"
"     \"type\":\"string\","
"     \"description\":\"UTC time, RFC 3339 with microseconds\","
"     \"examples\":[\"2026-12-02T11:40:00.123456Z\"]"
"    },"
"    \"role\":{\"type\":\"string\",\"enum\":[\"none\",\"reader\",\"writer\",\"owner\"],\"description\":\"the signed-in caller's role (absent without sign-in)\"},"
"    \"head\":{"
"     \"type\":[\"string\",\"null\"],"
"     \"pattern\":\"^[0-9a-f]{64}$\","
"     \"description\":\"hash of the HEAD Checkpoint; null while the Space is empty\""
"    }"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"SpaceList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Space\"}},"
"  \"SpaceCreate\":{"
"   \"type\":\"object\","
"   \"description\":\"Other keys are ignored\","
"   \"required\":[\"name\"],"
"   \"properties\":{\"name\":{\"type\":\"string\",\"minLength\":1},\"description\":{\"type\":\"string\"}}"
"  },"
"  \"SpaceRename\":{"
"   \"type\":\"object\","
"   \"description\":\"Other keys are ignored\","
"   \"required\":[\"name\"],"
"   \"properties\":{\"name\":{\"type\":\"string\",\"minLength\":1}}"
"  },"
"  \"Deleted\":{"
"   \"type\":\"object\","
"   \"required\":[\"deleted\",\"id\"],"
"   \"properties\":{"
"    \"deleted\":{\"type\":\"string\",\"description\":\"the name the Space had\"},"
"    \"id\":{\"type\":\"string\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"Decision\":{"
"   \"type\":\"object\","
"   \"description\":\"Other keys of the item are kept as given\","
"   \"required\":[\"text\"],"
"   \"properties\":{\"text\":{\"type\":\"string\",\"minLength\":1}}"
"  },"
"  \"Task\":{"
"   \"type\":\"object\","
"   \"description\":\"Other keys of the item are kept as given\","
"   \"required\":[\"text\"],"
"   \"properties\":{"
"    \"text\":{\"type\":\"string\",\"minLength\":1},"
"    \"status\":{\"type\":\"string\",\"enum\":[\"open\",\"done\"]}"
"   }"
"  },"
"  \"Entity\":{"
"   \"type\":\"object\","
"   \"description\":\"Other keys of the item are kept as given\","
"   \"required\":[\"name\"],"
"   \"properties\":{"
"    \"name\":{\"type\":\"string\",\"minLength\":1},"
"    \"kind\":{\"type\":\"string\"},"
"    \"description\":{\"type\":\"string\"}"
"   }"
"  },"
"  \"Artifact\":{"
"   \"type\":\"object\","
"   \"required\":[\"name\",\"content\"],"
"   \"properties\":{"
"    \"name\":{\"type\":\"string\",\"minLength\":1},"
"    \"kind\":{\"type\":\"string\",\"examples\":[\"text\",\"markdown\"]},"
"    \"content\":{\"type\":\"string\"}"
"   }"
"  },"
"  \"ItemIn\":{"
"   \"oneOf\":[{\"type\":\"string\",\"minLength\":1},{\"type\":\"object\"}],"
"   \"description\":\"a string, or an object with the item's key (\\\"text\\\"; \\\"name\\\" for entities and artifacts)\""
"  },"
"  \"Checkpoint\":{"
"   \"type\":\"object\","
"   \"required\":["
"    \"commit_hash\","
"    \"parent_hash\","
"    \"space\","
"    \"title\","
"    \"summary\","
"    \"decisions\","
"    \"assumptions\","
"    \"tasks\","
"    \"open_questions\","
"    \"entities\","
"    \"artifacts\","
"    \"metadata\","
"    \"author\","
"    \"created_at\""
"   ],"
"   \"properties\":{"
"    \"commit_hash\":{"
"     \"type\":\"string\","
"     \"pattern\":\"^[0-9a-f]{64}$\","
"     \"description\":\"SHA-256 of the checkpoint, hex\""
"    },"
"    \"parent_hash\":{\"type\":[\"string\",\"null\"],\"pattern\":\"^[0-9a-f]{64}$\"},"
"    \"merge_parent_hash\":{"
"     \"type\":\"string\","
"     \"pattern\":\"^[0-9a-f]{64}$\","
"     \"description\":\"SHA-256 of the checkpoint, hex\""
"    },"
"    \"space\":{\"type\":\"string\"},"
"    \"title\":{\"type\":\"string\"},"
"    \"summary\":{\"type\":\"string\"},"
"    \"decisions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Decision\"}},"
"    \"assumptions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Decision\"}},"
"    \"tasks\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Task\"}},"
"    \"open_questions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Decision\"}},"
"    \"entities\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Entity\"}},"
"    \"artifacts\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Artifact\"}},"
"    \"metadata\":{\"type\":\"object\"},"
"    \"author\":{\"type\":\"string\"},"
"    \"created_at\":{"
"     \"type\":\"string\","
"     \"description\":\"UTC time, RFC 3339 with microseconds\","
"     \"examples\":[\"2026-12-02T11:40:00.123456Z\"]"
"    },"
"    \"handoff\":{\"$ref\":\"#/components/schemas/Handoff\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"Handoff\":{"
"   \"type\":\"object\","
"   \"description\":\"On a HEAD read only: the newest hand-off note a person left for the next agent; on_head says whether it was left on this checkpoint (false: HEAD moved since)\","
"   \"required\":[\"note\",\"checkpoint\",\"author\",\"created_at\",\"on_head\"],"
"   \"properties\":{"
"    \"note\":{\"type\":\"string\",\"minLength\":1},"
"    \"checkpoint\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{64}$\"},"
"    \"author\":{\"type\":\"string\"},"
"    \"created_at\":{\"type\":\"string\"},"
"    \"on_head\":{\"type\":\"boolean\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"HandoffParams\":{"
"   \"type\":\"object\","
"   \"description\":\"Other keys are ignored\","
"   \"required\":[\"note\"],"
"   \"properties\":{"
"    \"note\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":8192},"
"    \"ref\":{\"type\":\"string\",\"description\":\"Without restore: must be HEAD (else 409); with restore: the checkpoint to restore first\"},"
"    \"restore\":{\"type\":\"boolean\"},"
"    \"author\":{\"type\":\"string\"}"
"   }"
"  },"
"  \"HandoffResult\":{"
"   \"type\":\"object\","
"   \"required\":[\"handoff\",\"checkpoint\",\"restored\"],"
"   \"properties\":{"
"    \"handoff\":{\"$ref\":\"#/components/schemas/Handoff\"},"
"    \"checkpoint\":{\"$ref\":\"#/components/schemas/Checkpoint\"},"
"    \"restored\":{\"type\":\"boolean\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"CheckpointList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Checkpoint\"}},"
"  \"Refs\":{"
"   \"type\":\"array\","
"   \"items\":{\"oneOf\":[{\"type\":\"string\",\"minLength\":1},{\"type\":\"integer\",\"minimum\":1}]},"
"   \"description\":\"Items of the parent by exact text (name for entities and artifacts) or 1-based position\""
"  },"
"  \"CheckpointPatch\":{"
"   \"type\":\"object\","
"   \"description\":\"A change to the parent's state; everything not named is kept (docs/http.md). Unknown keys are refused (400)\","
"   \"properties\":{"
"    \"parent\":{"
"     \"type\":\"string\","
"     \"description\":\"Apply only while this is HEAD (else 409); without it the patch goes on whatever HEAD is, atomically\""
"    },"
"    \"author\":{\"type\":\"string\"},"
"    \"add\":{"
"     \"type\":\"object\","
"     \"description\":\"items to add, by list\","
"     \"properties\":{"
"      \"decisions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/ItemIn\"}},"
"      \"assumptions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/ItemIn\"}},"
"      \"tasks\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/ItemIn\"}},"
"      \"open_questions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/ItemIn\"}},"
"      \"entities\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/ItemIn\"}},"
"      \"artifacts\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/ItemIn\"}}"
"     }"
"    },"
"    \"drop\":{"
"     \"type\":\"object\","
"     \"description\":\"items to drop, by list\","
"     \"properties\":{"
"      \"decisions\":{\"$ref\":\"#/components/schemas/Refs\"},"
"      \"assumptions\":{\"$ref\":\"#/components/schemas/Refs\"},"
"      \"tasks\":{\"$ref\":\"#/components/schemas/Refs\"},"
"      \"open_questions\":{\"$ref\":\"#/components/schemas/Refs\"},"
"      \"entities\":{\"$ref\":\"#/components/schemas/Refs\"},"
"      \"artifacts\":{\"$ref\":\"#/components/schemas/Refs\"}"
"     }"
"    },"
"    \"done\":{\"$ref\":\"#/components/schemas/Refs\"},"
"    \"reopen\":{\"$ref\":\"#/components/schemas/Refs\"},"
"    \"title\":{\"type\":\"string\"},"
"    \"summary\":{\"type\":\"string\"},"
"    \"metadata\":{\"type\":\"object\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"CheckpointUpdate\":{"
"   \"type\":\"object\","
"   \"required\":[\"checkpoint\",\"changes\",\"changed\"],"
"   \"properties\":{"
"    \"checkpoint\":{\"$ref\":\"#/components/schemas/Checkpoint\"},"
"    \"changes\":{\"type\":\"object\"},"
"    \"changed\":{\"type\":\"string\",\"description\":\"the change in words\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"MergeParams\":{"
"   \"type\":\"object\","
"   \"description\":\"Other keys are ignored\","
"   \"required\":[\"ref\"],"
"   \"properties\":{"
"    \"ref\":{\"type\":\"string\",\"description\":\"The checkpoint or Space (a fork) to merge in\"},"
"    \"resolution\":{"
"     \"type\":[\"object\",\"null\"],"
"     \"description\":\"{\\\"*\\\": \\\"ours\\\"|\\\"theirs\\\"} or per field and item\""
"    },"
"    \"title\":{\"type\":\"string\",\"description\":\"The merge checkpoint's own title (titles are never merged); default: Merge REF into SPACE\"},"
"    \"author\":{\"type\":\"string\"},"
"    \"dry_run\":{\"type\":\"boolean\",\"description\":\"Compute the merge and write nothing: 200 with status conflict and the conflicts instead of 409, and ahead/behind\"},"
"    \"expect_head\":{\"type\":\"string\",\"description\":\"The HEAD the caller saw (empty: none); another is 409 and nothing is written\"}"
"   }"
"  },"
"  \"MergeResult\":{"
"   \"type\":\"object\","
"   \"required\":[\"status\"],"
"   \"properties\":{"
"    \"status\":{\"type\":\"string\",\"enum\":[\"merged\",\"fast-forward\",\"up-to-date\",\"conflict\"],\"description\":\"conflict only in a dry run\"},"
"    \"base\":{\"type\":\"string\"},"
"    \"checkpoint\":{\"anyOf\":[{\"$ref\":\"#/components/schemas/Checkpoint\"},"
"     {\"type\":\"object\",\"description\":\"a dry run's would-be merge: its state, not sealed (commit_hash null)\"}]},"
"    \"contradictions\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
"    \"dry_run\":{\"const\":true},"
"    \"title\":{\"type\":\"string\",\"description\":\"a dry run's: the title the merge would get\"},"
"    \"conflicts\":{\"type\":\"array\",\"items\":{\"type\":\"object\"},\"description\":\"a dry run's: what would conflict\"},"
"    \"ahead\":{\"type\":\"integer\",\"description\":\"a dry run's: Checkpoints of REF the Space's HEAD lacks\"},"
"    \"behind\":{\"type\":\"integer\",\"description\":\"a dry run's: Checkpoints of the Space's HEAD that REF lacks\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"MergeConflict\":{"
"   \"type\":\"object\","
"   \"description\":\"409 of a merge: nothing was written. With status and conflicts the lines conflict: resolve and retry; with the error alone HEAD moved since expect_head: preview again\","
"   \"required\":[\"error\"],"
"   \"properties\":{"
"    \"error\":{\"$ref\":\"#/components/schemas/Error/properties/error\"},"
"    \"status\":{\"const\":\"conflict\"},"
"    \"base\":{\"type\":\"string\"},"
"    \"conflicts\":{"
"     \"type\":\"array\","
"     \"items\":{\"type\":\"object\"},"
"     \"description\":\"each field and item both lines changed\""
"    }"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"OpError\":{"
"   \"type\":\"object\","
"   \"description\":\"Error of /api/ops/{op}: the error, and beside it what the operation adds (a chat failure's user_turn, a merge's conflicts)\","
"   \"required\":[\"error\"],"
"   \"properties\":{"
"    \"error\":{\"$ref\":\"#/components/schemas/Error/properties/error\"}"
"   }"
"  },"
"  \"ChatCommit\":{"
"   \"type\":\"object\","
"   \"description\":\"Unknown keys are refused (400)\","
"   \"required\":[\"repo_id\"],"
"   \"properties\":{"
"    \"repo_id\":{\"type\":\"string\",\"description\":\"Space id or name\"},"
"    \"parent_commit_id\":{"
"     \"type\":[\"string\",\"null\"],"
"     \"description\":\"HEAD the agent built on (4 to 64 hex digits); if HEAD moved since, 409 and nothing is written\""
"    },"
"    \"title\":{\"type\":[\"string\",\"null\"]},"
"    \"summary\":{\"type\":[\"string\",\"null\"]},"
"    \"decisions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/ItemIn\"}},"
"    \"assumptions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/ItemIn\"}},"
"    \"tasks\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/ItemIn\"}},"
"    \"open_questions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/ItemIn\"}},"
"    \"entities\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/ItemIn\"}},"
"    \"artifacts\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Artifact\"}},"
"    \"metadata\":{\"type\":\"object\"},"
"    \"author\":{\"type\":[\"string\",\"null\"]},"
"    \"commit_hash\":{\"description\":\"ignored (so a Checkpoint document can be sent back)\"},"
"    \"parent_hash\":{\"description\":\"ignored\"},"
"    \"merge_parent_hash\":{\"description\":\"ignored\"},"
"    \"space\":{\"description\":\"ignored\"},"
"    \"created_at\":{\"description\":\"ignored\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"SearchResult\":{"
"   \"type\":\"object\","
"   \"required\":[\"query\",\"total\",\"truncated\",\"results\"],"
"   \"properties\":{"
"    \"query\":{\"type\":\"string\"},"
"    \"total\":{\"type\":\"integer\",\"minimum\":0},"
"    \"truncated\":{\"type\":\"boolean\"},"
"    \"results\":{"
"     \"type\":\"array\","
"     \"items\":{"
"      \"type\":\"object\","
"      \"description\":\"A checkpoint item (commit_hash, ordinal, in_head, first, spaces) or a chat turn (session_id, seq)\","
"      \"required\":[\"space\",\"kind\",\"snippet\",\"score\",\"text\"],"
"      \"properties\":{"
"       \"space\":{\"type\":\"string\"},"
"       \"kind\":{\"type\":\"string\"},"
"       \"field\":{\"type\":\"string\"},"
"       \"snippet\":{\"type\":\"string\"},"
"       \"highlights\":{\"type\":\"array\"},"
"       \"score\":{\"type\":\"number\"},"
"       \"text\":{\"type\":\"string\"},"
"       \"author\":{\"type\":\"string\"},"
"       \"created_at\":{\"type\":\"string\"},"
"       \"commit_hash\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{64}$\"},"
"       \"ordinal\":{\"type\":\"integer\"},"
"       \"in_head\":{\"type\":\"boolean\"},"
"       \"first\":{\"type\":\"object\"},"
"       \"spaces\":{\"type\":\"array\",\"description\":\"Every searched Space holding this checkpoint, by name; space and in_head are the first's\",\"items\":{\"type\":\"object\",\"required\":[\"space\",\"in_head\"],\"properties\":{\"space\":{\"type\":\"string\"},\"in_head\":{\"type\":\"boolean\"}}}},"
"       \"session_id\":{\"type\":\"string\"},"
"       \"seq\":{\"type\":\"integer\"}"
"      }"
"     }"
"    }"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"Blame\":{"
"   \"type\":\"object\","
"   \"required\":[\"commit_hash\",\"space\",\"items\"],"
"   \"properties\":{"
"    \"commit_hash\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{64}$\"},"
"    \"space\":{\"type\":\"string\"},"
"    \"items\":{"
"     \"type\":\"array\","
"     \"items\":{"
"      \"type\":\"object\","
"      \"required\":[\"field\",\"text\",\"introduced\"],"
"      \"properties\":{"
"       \"field\":{\"type\":\"string\"},"
"       \"ordinal\":{\"type\":\"integer\"},"
"       \"text\":{\"type\":\"string\"},"
"       \"here\":{\"type\":\"boolean\"},"
"       \"introduced\":{"
"        \"type\":\"object\","
"        \"required\":[\"commit_hash\"],"
"        \"properties\":{"
"         \"commit_hash\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{64}$\"},"
"         \"title\":{\"type\":\"string\"},"
"         \"author\":{\"type\":\"string\"},"
"         \"created_at\":{\"type\":\"string\"},"
"         \"source\":{\"type\":[\"object\",\"null\"],\"description\":\"A drafted checkpoint's session and turn range\"},"
"         \"hidden\":{\"type\":\"boolean\",\"description\":\"A checkpoint (brought back by a restore) of no Space the caller can read: its hash only\"}"
"        }"
"       }"
"      }"
"     }"
"    }"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"Reflog\":{"
"   \"type\":\"array\","
"   \"items\":{"
"    \"type\":\"object\","
"    \"required\":[\"index\",\"space_id\",\"space\",\"old\",\"new\",\"action\",\"created_at\"],"
"    \"properties\":{"
"     \"index\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"N of SPACE@{N}\"},"
"     \"space_id\":{\"type\":\"string\"},"
"     \"space\":{\"type\":\"string\"},"
"     \"old\":{\"type\":[\"string\",\"null\"]},"
"     \"new\":{\"type\":[\"string\",\"null\"]},"
"     \"action\":{\"type\":\"string\"},"
"     \"actor\":{\"type\":\"string\"},"
"     \"reason\":{\"type\":\"string\"},"
"     \"created_at\":{\"type\":\"string\"}"
"    },"
"    \"additionalProperties\":false"
"   }"
"  },"
"  \"Session\":{"
"   \"type\":\"object\","
"   \"required\":["
"    \"id\","
"    \"repo_id\","
"    \"space\","
"    \"title\","
"    \"mounted_commit_hash\","
"    \"forked_from_session_id\","
"    \"history_base_seq\","
"    \"created_at\","
"    \"last_seq\""
"   ],"
"   \"properties\":{"
"    \"id\":{\"type\":\"string\"},"
"    \"repo_id\":{\"type\":\"string\"},"
"    \"space\":{\"type\":[\"string\",\"null\"]},"
"    \"title\":{\"type\":\"string\"},"
"    \"mounted_commit_hash\":{\"type\":[\"string\",\"null\"]},"
"    \"forked_from_session_id\":{\"type\":[\"string\",\"null\"]},"
"    \"history_base_seq\":{\"type\":[\"integer\",\"null\"]},"
"    \"created_at\":{"
"     \"type\":\"string\","
"     \"description\":\"UTC time, RFC 3339 with microseconds\","
"     \"examples\":[\"2026-12-02T11:40:00.123456Z\"]"
"    },"
"    \"last_seq\":{\"type\":\"integer\",\"minimum\":0},"
"    \"leaf_seq\":{"
"     \"type\":\"integer\","
"     \"minimum\":0,"
"     \"description\":\"the turn the path shown ends at (session.switch chooses it; the newest turn by default): the next send follows it and the model sees exactly that path\""
"    },"
"    \"fork_seq\":{"
"     \"type\":[\"integer\",\"null\"],"
"     \"description\":\"started from this turn of forked_from_session_id (session.fork): its path up to there is copied as turns 1..\""
"    }"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"SessionList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Session\"}},"
"  \"SessionCreate\":{"
"   \"type\":\"object\","
"   \"description\":\"Other keys are ignored\","
"   \"properties\":{"
"    \"title\":{\"type\":\"string\"},"
"    \"commit_hash\":{"
"     \"type\":\"string\","
"     \"description\":\"mount this Checkpoint of the Space from the first turn\""
"    }"
"   }"
"  },"
"  \"Turn\":{"
"   \"type\":\"object\","
"   \"required\":["
"    \"id\","
"    \"session_id\","
"    \"sequence_number\","
"    \"role\","
"    \"content\","
"    \"provider\","
"    \"model\","
"    \"prompt_tokens\","
"    \"completion_tokens\","
"    \"latency_ms\","
"    \"error\","
"    \"status\","
"    \"created_at\""
"   ],"
"   \"properties\":{"
"    \"id\":{\"type\":\"integer\"},"
"    \"session_id\":{\"type\":\"string\"},"
"    \"sequence_number\":{\"type\":\"integer\",\"minimum\":1},"
"    \"parent_seq\":{"
"     \"type\":\"integer\","
"     \"minimum\":0,"
"     \"description\":\"the turn this one follows (0: none); edited questions and regenerated replies share their parent, and an assistant turn following an assistant turn continues it\""
"    },"
"    \"role\":{\"type\":\"string\",\"enum\":[\"user\",\"assistant\"]},"
"    \"content\":{\"type\":\"string\"},"
"    \"provider\":{\"type\":[\"string\",\"null\"]},"
"    \"model\":{\"type\":[\"string\",\"null\"]},"
"    \"prompt_tokens\":{\"type\":[\"integer\",\"null\"]},"
"    \"completion_tokens\":{\"type\":[\"integer\",\"null\"]},"
"    \"latency_ms\":{\"type\":[\"integer\",\"null\"]},"
"    \"error\":{\"type\":[\"string\",\"null\"]},"
"    \"author\":{\"type\":\"string\",\"description\":\"who wrote a user turn on a server with users (alice, alice/claude-code)\"},"
"    \"status\":{"
"     \"type\":\"string\","
"     \"enum\":[\"complete\",\"truncated\",\"stopped\",\"error\",\"interrupted\"],"
"     \"description\":\"how the turn ended (docs/providers.md)\""
"    },"
"    \"created_at\":{"
"     \"type\":\"string\","
"     \"description\":\"UTC time, RFC 3339 with microseconds\","
"     \"examples\":[\"2026-12-02T11:40:00.123456Z\"]"
"    }"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"Generation\":{"
"   \"type\":\"object\","
"   \"description\":\"a send's reply being produced (docs/http.md, Streaming chat)\","
"   \"required\":["
"    \"id\","
"    \"session_id\","
"    \"status\","
"    \"provider\","
"    \"model\","
"    \"user_turn_seq\","
"    \"assistant_turn_seq\","
"    \"error\","
"    \"created_at\","
"    \"finished_at\""
"   ],"
"   \"properties\":{"
"    \"id\":{\"type\":\"string\"},"
"    \"session_id\":{\"type\":\"string\"},"
"    \"status\":{"
"     \"type\":\"string\","
"     \"enum\":[\"running\",\"complete\",\"truncated\",\"stopped\",\"error\",\"interrupted\"]"
"    },"
"    \"provider\":{\"type\":[\"string\",\"null\"]},"
"    \"model\":{\"type\":[\"string\",\"null\"]},"
"    \"user_turn_seq\":{\"type\":[\"integer\",\"null\"]},"
"    \"assistant_turn_seq\":{\"type\":[\"integer\",\"null\"]},"
"    \"error\":{\"type\":[\"string\",\"null\"]},"
"    \"created_at\":{"
"     \"type\":\"string\","
"     \"description\":\"UTC time, RFC 3339 with microseconds\","
"     \"examples\":[\"2026-12-02T11:40:00.123456Z\"]"
"    },"
"    \"finished_at\":{\"type\":[\"string\",\"null\"]},"
"    \"space\":{\"type\":\"string\",\"description\":\"GET only\"},"
"    \"text\":{\"type\":\"string\",\"description\":\"GET while it runs: the reply so far\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"GenerationStop\":{"
"   \"type\":\"object\","
"   \"required\":[\"generation\",\"stopping\"],"
"   \"properties\":{"
"    \"generation\":{\"$ref\":\"#/components/schemas/Generation\"},"
"    \"stopping\":{\"type\":\"boolean\",\"description\":\"false when it had already ended\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"SessionWithTurns\":{"
"   \"type\":\"object\","
"   \"required\":["
"    \"id\","
"    \"repo_id\","
"    \"space\","
"    \"title\","
"    \"mounted_commit_hash\","
"    \"forked_from_session_id\","
"    \"history_base_seq\","
"    \"created_at\","
"    \"last_seq\","
"    \"turns\","
"    \"path\","
"    \"generation\""
"   ],"
"   \"properties\":{"
"    \"id\":{\"type\":\"string\"},"
"    \"repo_id\":{\"type\":\"string\"},"
"    \"space\":{\"type\":[\"string\",\"null\"]},"
"    \"title\":{\"type\":\"string\"},"
"    \"mounted_commit_hash\":{\"type\":[\"string\",\"null\"]},"
"    \"forked_from_session_id\":{\"type\":[\"string\",\"null\"]},"
"    \"history_base_seq\":{\"type\":[\"integer\",\"null\"]},"
"    \"created_at\":{"
"     \"type\":\"string\","
"     \"description\":\"UTC time, RFC 3339 with microseconds\","
"     \"examples\":[\"2026-12-02T11:40:00.123456Z\"]"
"    },"
"    \"last_seq\":{\"type\":\"integer\",\"minimum\":0},"
"    \"leaf_seq\":{\"$ref\":\"#/components/schemas/Session/properties/leaf_seq\"},"
"    \"fork_seq\":{\"$ref\":\"#/components/schemas/Session/properties/fork_seq\"},"
"    \"turns\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Turn\"}},"
"    \"path\":{"
"     \"type\":\"array\","
"     \"items\":{\"type\":\"integer\"},"
"     \"description\":\"the sequence numbers of the path shown (to leaf_seq), oldest first: the turns the next send builds on; the other turns are versions beside them\""
"    },"
"    \"generation\":{"
"     \"oneOf\":[{\"$ref\":\"#/components/schemas/Generation\"},{\"type\":\"null\"}],"
"     \"description\":\"the reply running now\""
"    }"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"ChatSend\":{"
"   \"type\":\"object\","
"   \"description\":\"Other keys are ignored\","
"   \"required\":[\"session_id\",\"message\"],"
"   \"properties\":{"
"    \"session_id\":{\"type\":\"string\"},"
"    \"message\":{\"type\":\"string\",\"minLength\":1},"
"    \"provider\":{"
"     \"type\":\"string\","
"     \"examples\":[\"openai\",\"anthropic\",\"local\"],"
"     \"description\":\"default: SMRITI_PROVIDER, else openai\""
"    },"
"    \"model\":{\"type\":\"string\",\"description\":\"default: the provider's configured model\"},"
"    \"commit_hash\":{"
"     \"type\":\"string\","
"     \"description\":\"v5.2: the Checkpoint the client mounted\""
"    },"
"    \"history_base_seq\":{"
"     \"type\":\"integer\","
"     \"minimum\":0,"
"     \"description\":\"v5.2: the client's boundary\""
"    },"
"    \"stream\":{"
"     \"type\":\"boolean\","
"     \"description\":\"answer server-sent events, as Accept: text/event-stream does\""
"    }"
"   }"
"  },"
"  \"ChatAction\":{"
"   \"type\":\"object\","
"   \"description\":\"Other keys are ignored\","
"   \"required\":[\"seq\"],"
"   \"properties\":{"
"    \"seq\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"the turn acted on\"},"
"    \"message\":{\"type\":\"string\",\"minLength\":1,\"description\":\"edit: the new text (required there)\"},"
"    \"provider\":{\"$ref\":\"#/components/schemas/ChatSend/properties/provider\"},"
"    \"model\":{\"$ref\":\"#/components/schemas/ChatSend/properties/model\"},"
"    \"stream\":{\"$ref\":\"#/components/schemas/ChatSend/properties/stream\"}"
"   }"
"  },"
"  \"TurnPick\":{"
"   \"type\":\"object\","
"   \"description\":\"Other keys are ignored\","
"   \"required\":[\"seq\"],"
"   \"properties\":{"
"    \"seq\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"a turn of the session\"},"
"    \"title\":{\"type\":\"string\",\"description\":\"fork: the new session's title (default: the old one's)\"}"
"   }"
"  },"
"  \"SendContext\":{"
"   \"type\":\"object\","
"   \"description\":\"which turns and Checkpoint the model saw\","
"   \"required\":["
"    \"commit_hash\","
"    \"history_base_seq\","
"    \"turns_included\","
"    \"turns_dropped\","
"    \"trimmed\","
"    \"mode\","
"    \"budget_chars\","
"    \"chars\","
"    \"timing\""
"   ],"
"   \"properties\":{"
"    \"commit_hash\":{\"type\":[\"string\",\"null\"]},"
"    \"history_base_seq\":{\"type\":\"integer\"},"
"    \"turns_included\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"}},"
"    \"turns_dropped\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"}},"
"    \"trimmed\":{\"type\":\"boolean\"},"
"    \"mode\":{\"type\":\"string\",\"enum\":[\"structural\",\"client\"]},"
"    \"budget_chars\":{\"type\":\"integer\"},"
"    \"chars\":{\"type\":\"integer\"},"
"    \"timing\":{"
"     \"type\":\"object\","
"     \"required\":[\"total_us\",\"provider_us\",\"cpu_us\"],"
"     \"properties\":{"
"      \"total_us\":{\"type\":\"integer\"},"
"      \"provider_us\":{\"type\":\"integer\"},"
"      \"cpu_us\":{\"type\":\"integer\"}"
"     },"
"     \"additionalProperties\":false"
"    }"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"ChatSendResult\":{"
"   \"type\":\"object\","
"   \"required\":[\"user_turn\",\"assistant_turn\"],"
"   \"properties\":{"
"    \"generation\":{\"$ref\":\"#/components/schemas/Generation\"},"
"    \"user_turn\":{\"$ref\":\"#/components/schemas/Turn\"},"
"    \"assistant_turn\":{\"$ref\":\"#/components/schemas/Turn\"},"
"    \"context\":{\"$ref\":\"#/components/schemas/SendContext\"},"
"    \"nudge\":{"
"     \"type\":\"object\","
"     \"required\":[\"suggested\",\"reasons\",\"turns_since_checkpoint\"],"
"     \"properties\":{"
"      \"suggested\":{\"type\":\"boolean\"},"
"      \"reasons\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
"      \"turns_since_checkpoint\":{\"type\":\"integer\",\"minimum\":0}"
"     },"
"     \"additionalProperties\":false"
"    }"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"JsonRpc\":{"
"   \"type\":\"object\","
"   \"description\":\"A JSON-RPC 2.0 message of the Model Context Protocol\","
"   \"required\":[\"jsonrpc\"],"
"   \"properties\":{"
"    \"jsonrpc\":{\"const\":\"2.0\"},"
"    \"id\":{\"type\":[\"string\",\"integer\",\"null\"]},"
"    \"method\":{\"type\":\"string\"},"
"    \"params\":{\"type\":\"object\"},"
"    \"result\":{},"
"    \"error\":{"
"     \"type\":\"object\","
"     \"required\":[\"code\",\"message\"],"
"     \"properties\":{\"code\":{\"type\":\"integer\"},\"message\":{\"type\":\"string\"},\"data\":{}},"
"     \"additionalProperties\":false"
"    }"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"Accepted\":{"
"   \"type\":\"object\","
"   \"description\":\"An empty object: the notification or response was accepted\","
"   \"properties\":{},"
"   \"additionalProperties\":false"
"  },"
"  \"Mount\":{"
"   \"type\":\"object\","
"   \"description\":\"Other keys are ignored\","
"   \"required\":[\"commit_hash\"],"
"   \"properties\":{"
"    \"commit_hash\":{\"type\":\"string\",\"description\":\"full hash or unique prefix\"},"
"    \"title\":{\"type\":\"string\",\"description\":\"default: the old session's\"}"
"   }"
"  },"
"  \"Draft\":{"
"   \"type\":\"object\","
"   \"description\":\"A proposed checkpoint; not saved\","
"   \"required\":["
"    \"title\","
"    \"summary\","
"    \"decisions\","
"    \"assumptions\","
"    \"tasks\","
"    \"open_questions\","
"    \"entities\","
"    \"artifacts\","
"    \"metadata\""
"   ],"
"   \"properties\":{"
"    \"title\":{\"type\":\"string\"},"
"    \"summary\":{\"type\":\"string\"},"
"    \"decisions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Decision\"}},"
"    \"assumptions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Decision\"}},"
"    \"tasks\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Task\"}},"
"    \"open_questions\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Decision\"}},"
"    \"entities\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Entity\"}},"
"    \"artifacts\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Artifact\"}},"
"    \"metadata\":{"
"     \"type\":\"object\","
"     \"required\":[\"draft\"],"
"     \"properties\":{"
"      \"draft\":{"
"       \"type\":\"object\","
"       \"required\":[\"session_id\",\"turn_range\"],"
"       \"properties\":{"
"        \"session_id\":{\"type\":\"string\"},"
"        \"turn_range\":{"
"         \"type\":\"object\","
"         \"required\":[\"first_seq\",\"last_seq\"],"
"         \"properties\":{\"first_seq\":{\"type\":\"integer\"},\"last_seq\":{\"type\":\"integer\"}},"
"         \"additionalProperties\":false"
"        },"
"        \"provider\":{\"type\":\"string\"},"
"        \"model\":{\"type\":\"string\"},"
"        \"job_id\":{\"type\":\"string\"}"
"       }"
"      }"
"     }"
"    }"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"DraftCreate\":{"
"   \"type\":\"object\","
"   \"description\":\"Unknown keys are refused (400)\","
"   \"required\":[\"session_id\"],"
"   \"properties\":{"
"    \"session_id\":{\"type\":\"string\"},"
"    \"provider\":{\"type\":\"string\",\"examples\":[\"openai\",\"anthropic\",\"local\"]},"
"    \"model\":{\"type\":\"string\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"DraftSave\":{"
"   \"type\":\"object\","
"   \"description\":\"How to save the draft (docs/draft.md). Unknown keys are refused (400)\","
"   \"properties\":{"
"    \"parent\":{"
"     \"type\":\"string\","
"     \"description\":\"Save only while this is HEAD (else 409); without it the draft goes on whatever HEAD is\""
"    },"
"    \"author\":{\"type\":\"string\"},"
"    \"replace\":{\"type\":\"boolean\",\"description\":\"Drop every item of HEAD: write exactly the draft\"},"
"    \"reject\":{"
"     \"type\":\"object\","
"     \"description\":\"Items of the draft not to take, by list, by exact text (name for entities and artifacts)\","
"     \"additionalProperties\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}"
"    },"
"    \"drop\":{"
"     \"type\":\"object\","
"     \"description\":\"Items of HEAD to drop, by list\","
"     \"additionalProperties\":{\"$ref\":\"#/components/schemas/Refs\"}"
"    },"
"    \"title\":{\"type\":\"string\",\"description\":\"Instead of the draft's\"},"
"    \"summary\":{\"type\":\"string\",\"description\":\"Instead of the draft's\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"DraftJob\":{"
"   \"type\":\"object\","
"   \"required\":["
"    \"job_id\","
"    \"session_id\","
"    \"status\","
"    \"provider\","
"    \"model\","
"    \"created_at\","
"    \"started_at\","
"    \"finished_at\""
"   ],"
"   \"properties\":{"
"    \"job_id\":{\"type\":\"string\"},"
"    \"session_id\":{\"type\":\"string\"},"
"    \"status\":{\"type\":\"string\",\"enum\":[\"queued\",\"running\",\"done\",\"failed\"]},"
"    \"provider\":{\"type\":[\"string\",\"null\"]},"
"    \"model\":{\"type\":[\"string\",\"null\"]},"
"    \"created_at\":{"
"     \"type\":\"string\","
"     \"description\":\"UTC time, RFC 3339 with microseconds\","
"     \"examples\":[\"2026-12-02T11:40:00.123456Z\"]"
"    },"
"    \"started_at\":{\"type\":[\"string\",\"null\"]},"
"    \"finished_at\":{\"type\":[\"string\",\"null\"]},"
"    \"error\":{\"type\":\"string\",\"description\":\"only when failed\"},"
"    \"draft\":{\"$ref\":\"#/components/schemas/Draft\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"ReviewParams\":{"
"   \"type\":\"object\","
"   \"description\":\"Other keys are ignored\","
"   \"properties\":{"
"    \"llm\":{\"type\":\"boolean\",\"description\":\"false skips the LLM pass\"},"
"    \"provider\":{\"type\":\"string\"},"
"    \"model\":{\"type\":\"string\"}"
"   }"
"  },"
"  \"Finding\":{"
"   \"type\":\"object\","
"   \"required\":[\"type\",\"message\",\"items\",\"source\"],"
"   \"properties\":{"
"    \"type\":{"
"     \"type\":\"string\","
"     \"examples\":["
"      \"contradiction\","
"      \"duplicate\","
"      \"unsupported_decision\","
"      \"resolved_question\","
"      \"orphan_entity\""
"     ]"
"    },"
"    \"message\":{\"type\":\"string\"},"
"    \"items\":{"
"     \"type\":\"array\","
"     \"items\":{"
"      \"type\":\"object\","
"      \"required\":[\"field\",\"index\",\"text\"],"
"      \"properties\":{"
"       \"field\":{\"type\":\"string\"},"
"       \"index\":{\"type\":\"integer\",\"minimum\":0},"
"       \"text\":{\"type\":\"string\"}"
"      },"
"      \"additionalProperties\":false"
"     }"
"    },"
"    \"source\":{\"type\":\"string\",\"enum\":[\"deterministic\",\"llm\"]}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"Review\":{"
"   \"type\":\"object\","
"   \"required\":[\"commit_hash\",\"space\",\"findings\",\"passes\"],"
"   \"properties\":{"
"    \"commit_hash\":{"
"     \"type\":\"string\","
"     \"pattern\":\"^[0-9a-f]{64}$\","
"     \"description\":\"SHA-256 of the checkpoint, hex\""
"    },"
"    \"space\":{\"type\":\"string\"},"
"    \"findings\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Finding\"}},"
"    \"passes\":{"
"     \"type\":\"array\","
"     \"items\":{"
"      \"type\":\"object\","
"      \"required\":[\"source\",\"ran\"],"
"      \"properties\":{"
"       \"source\":{\"type\":\"string\",\"enum\":[\"deterministic\",\"llm\"]},"
"       \"ran\":{\"type\":\"boolean\"},"
"       \"findings\":{\"type\":\"integer\",\"minimum\":0},"
"       \"dropped\":{\"type\":\"integer\",\"minimum\":0},"
"       \"reason\":{\"type\":\"string\"},"
"       \"error\":{\"type\":\"string\"}"
"      },"
"      \"additionalProperties\":false"
"     }"
"    }"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"Ingest\":{"
"   \"type\":\"object\","
"   \"description\":\"Other keys are ignored\","
"   \"required\":[\"space\",\"transcript\"],"
"   \"properties\":{"
"    \"space\":{\"type\":\"string\"},"
"    \"transcript\":{\"type\":\"string\"},"
"    \"format\":{\"type\":\"string\",\"enum\":[\"auto\",\"text\",\"markdown\",\"chatgpt\",\"claude\"]},"
"    \"title\":{\"type\":\"string\"}"
"   }"
"  },"
"  \"IngestResult\":{"
"   \"type\":\"object\","
"   \"required\":[\"session\",\"turns\",\"format\"],"
"   \"properties\":{"
"    \"session\":{\"$ref\":\"#/components/schemas/Session\"},"
"    \"turns\":{\"type\":\"integer\",\"minimum\":0},"
"    \"format\":{\"type\":\"string\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"ContextPackParams\":{"
"   \"type\":\"object\","
"   \"description\":\"session_id or transcript; other keys are ignored\","
"   \"properties\":{"
"    \"session_id\":{\"type\":\"string\"},"
"    \"transcript\":{\"type\":\"string\"},"
"    \"format\":{\"type\":\"string\"},"
"    \"title\":{\"type\":\"string\"}"
"   }"
"  },"
"  \"ContextPack\":{"
"   \"type\":\"object\","
"   \"required\":[\"markdown\",\"turns\",\"title\",\"source\"],"
"   \"properties\":{"
"    \"markdown\":{\"type\":\"string\"},"
"    \"turns\":{\"type\":\"integer\",\"minimum\":0},"
"    \"title\":{\"type\":\"string\"},"
"    \"source\":{\"type\":\"string\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"Overview\":{"
"   \"type\":\"array\","
"   \"items\":{"
"    \"type\":\"object\","
"    \"required\":["
"     \"id\","
"     \"name\","
"     \"description\","
"     \"created_at\","
"     \"head\","
"     \"head_checkpoint\","
"     \"sessions\","
"     \"last_activity\""
"    ],"
"    \"properties\":{"
"     \"id\":{\"type\":\"string\",\"format\":\"uuid\"},"
"     \"name\":{\"type\":\"string\",\"minLength\":1},"
"     \"description\":{\"type\":\"string\"},"
"     \"created_at\":{"
"      \"type\":\"string\","
"      \"description\":\"UTC time, RFC 3339 with microseconds\","
"      \"examples\":[\"2026-12-02T11:40:00.123456Z\"]"
"     },"
"     \"head\":{"
"      \"type\":[\"string\",\"null\"],"
"      \"pattern\":\"^[0-9a-f]{64}$\","
"      \"description\":\"hash of the HEAD Checkpoint; null while the Space is empty\""
"     },"
"     \"role\":{\"type\":\"string\",\"enum\":[\"none\",\"reader\",\"writer\",\"owner\"]},"
"     \"head_checkpoint\":{"
"      \"oneOf\":["
"       {\"type\":\"null\"},"
"       {"
"        \"type\":\"object\","
"        \"required\":[\"title\",\"author\",\"created_at\"],"
"        \"properties\":{"
"         \"title\":{\"type\":\"string\"},"
"         \"author\":{\"type\":\"string\"},"
"         \"created_at\":{"
"          \"type\":\"string\","
"          \"description\":\"UTC time, RFC 3339 with microseconds\","
"          \"examples\":[\"2026-12-02T11:40:00.123456Z\"]"
"         }"
"        },"
"        \"additionalProperties\":false"
"       }"
"      ]"
"     },"
"     \"sessions\":{\"type\":\"integer\",\"minimum\":0},"
"     \"last_activity\":{"
"      \"type\":\"string\","
"      \"description\":\"UTC time, RFC 3339 with microseconds\","
"      \"examples\":[\"2026-12-02T11:40:00.123456Z\"]"
"     }"
"    },"
"    \"additionalProperties\":false"
"   }"
"  },"
"  \"GraphNode\":{"
"   \"type\":\"object\","
"   \"required\":[\"hash\",\"parent\",\"title\",\"author\",\"created_at\",\"spaces\",\"heads\",\"own\"],"
"   \"properties\":{"
"    \"hash\":{"
"     \"type\":\"string\","
"     \"pattern\":\"^[0-9a-f]{64}$\","
"     \"description\":\"SHA-256 of the checkpoint, hex\""
"    },"
"    \"parent\":{\"type\":[\"string\",\"null\"]},"
"    \"merge_parent\":{\"type\":\"string\"},"
"    \"restored_from\":{\"type\":\"string\"},"
"    \"changes\":{\"type\":\"object\",\"description\":\"with ?changes=1: per list field that"
" differs from the first parent, {added, removed, changed} counts (tasks: done too)\","
"     \"additionalProperties\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"integer\",\"minimum\":0}}},"
"    \"title\":{\"type\":\"string\"},"
"    \"author\":{\"type\":\"string\"},"
"    \"created_at\":{"
"     \"type\":\"string\","
"     \"description\":\"UTC time, RFC 3339 with microseconds\","
"     \"examples\":[\"2026-12-02T11:40:00.123456Z\"]"
"    },"
"    \"spaces\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
"    \"heads\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
"    \"own\":{\"type\":\"boolean\"}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"Graph\":{"
"   \"type\":\"object\","
"   \"required\":[\"space\",\"total\",\"next\",\"nodes\"],"
"   \"properties\":{"
"    \"space\":{\"type\":\"string\"},"
"    \"total\":{\"type\":\"integer\",\"minimum\":0},"
"    \"next\":{\"type\":[\"string\",\"null\"],\"description\":\"pass as ?after= for the next page\"},"
"    \"nodes\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/GraphNode\"}}"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"AuthState\":{"
"   \"type\":\"object\","
"   \"required\":[\"token_required\",\"authenticated\",\"user\"],"
"   \"properties\":{\"token_required\":{\"type\":\"boolean\"},\"authenticated\":{\"type\":\"boolean\"},"
"    \"user\":{\"oneOf\":[{\"type\":\"null\"},{\"type\":\"object\",\"required\":[\"name\",\"kind\",\"admin\"],"
"     \"properties\":{\"name\":{\"type\":[\"string\",\"null\"]},\"kind\":{\"type\":\"string\",\"enum\":[\"person\",\"agent\",\"admin\",\"local\"]},"
"      \"admin\":{\"type\":\"boolean\"}},\"additionalProperties\":false}]}},"
"   \"additionalProperties\":false"
"  },"
"  \"AuthToken\":{"
"   \"type\":\"object\","
"   \"required\":[\"token\"],"
"   \"properties\":{\"token\":{\"type\":\"string\"}}"
"  },"
"  \"Version\":{"
"   \"type\":\"object\","
"   \"required\":[\"version\"],"
"   \"properties\":{\"version\":{\"type\":\"string\"}},"
"   \"additionalProperties\":false"
"  },"
"  \"Providers\":{"
"   \"type\":\"object\","
"   \"required\":[\"providers\"],"
"   \"properties\":{"
"    \"default\":{\"type\":\"string\"},"
"    \"providers\":{"
"     \"type\":\"array\","
"     \"items\":{"
"      \"type\":\"object\","
"      \"required\":[\"name\",\"default_model\",\"configured\"],"
"      \"properties\":{"
"       \"name\":{\"type\":\"string\"},"
"       \"default_model\":{\"type\":\"string\"},"
"       \"configured\":{\"type\":\"boolean\"},"
"       \"reason\":{\"type\":[\"string\",\"null\"]}"
"      },"
"      \"additionalProperties\":false"
"     }"
"    }"
"   },"
"   \"additionalProperties\":false"
"  },"
"  \"ContextPreview\":{"
"   \"type\":\"object\","
"   \"required\":["
"    \"session_id\","
"    \"provider\","
"    \"model\","
"    \"system\","
"    \"messages\","
"    \"commit_hash\","
"    \"history_base_seq\","
"    \"turns_included\","
"    \"turns_dropped\","
"    \"trimmed\","
"    \"budget_chars\","
"    \"chars\""
"   ],"
"   \"properties\":{"
"    \"session_id\":{\"type\":\"string\"},"
"    \"provider\":{\"type\":\"string\"},"
"    \"model\":{\"type\":\"string\"},"
"    \"system\":{\"type\":\"string\"},"
"    \"messages\":{"
"     \"type\":\"array\","
"     \"items\":{"
"      \"type\":\"object\","
"      \"required\":[\"role\",\"content\",\"seq\"],"
"      \"properties\":{"
"       \"role\":{\"type\":\"string\"},"
"       \"content\":{\"type\":\"string\"},"
"       \"seq\":{\"type\":\"integer\"}"
"      },"
"      \"additionalProperties\":false"
"     }"
"    },"
"    \"commit_hash\":{\"type\":[\"string\",\"null\"]},"
"    \"history_base_seq\":{\"type\":\"integer\"},"
"    \"turns_included\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"}},"
"    \"turns_dropped\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"}},"
"    \"trimmed\":{\"type\":\"boolean\"},"
"    \"budget_chars\":{\"type\":\"integer\"},"
"    \"chars\":{\"type\":\"integer\"}"
"   },"
"   \"additionalProperties\":false"
"  }"
" }"
"}";

static json_t *ref(const char *schema)
{
	char path[96];

	snprintf(path, sizeof(path), "#/components/schemas/%s", schema);
	return json_pack("{s:s}", "$ref", path);
}

static json_t *json_content(const char *schema)
{
	const char *type = !strcmp(schema, "Html")    ? "text/html" :
			   !strcmp(schema, "Metrics") ? "text/plain" : "application/json";

	return json_pack("{s:{s:o}}", type, "schema", ref(schema));
}

/* "get_v4_repos_id_commits" */
static json_t *operation_id(const struct http_route *r)
{
	char id[128];
	size_t n = 0;

	for (const char *p = r->method; *p && n < sizeof(id) - 1; p++)
		id[n++] = (char)tolower((unsigned char)*p);
	for (const char *p = r->pattern; *p && n < sizeof(id) - 1; p++) {
		if (isalnum((unsigned char)*p))
			id[n++] = *p;
		else if (n && id[n - 1] != '_' && *p != '}')
			id[n++] = '_';
	}
	while (n && id[n - 1] == '_')
		n--;
	id[n] = '\0';
	return json_string(id);
}

/* ---- parameters ---- */

struct param_doc {
	const char *prefix;      /* of the route pattern */
	const char *name;
	const char *example;
	const char *description;
};

/* What a path segment holds, by the route it is in (first match wins). */
static const struct param_doc path_params[] = {
	{ "/api/ops/", "op", "head", "an operation name (docs/http.md lists them)" },
	{ "/ui/", "name", "app.js", "a file of the web UI" },
	{ "/v4/repos/", "id", "demo", "a Space's id or name" },
	{ "/repos/", "id", "demo", "a Space's id or name" },
	{ "/v4/sessions/", "id", "5b0f8a4e-3c1d-4f7a-9e2b-6d8c1a0f4e21", "a session id" },
	{ "/v4/generations/", "id", "2c7e9a14-8b3d-4f60-a1e5-7d9b3c2f8e06", "a generation id" },
	{ "/v5/sessions/", "id", "5b0f8a4e-3c1d-4f7a-9e2b-6d8c1a0f4e21", "a session id" },
	{ "/v5/checkpoints/draft/", "job_id", "9d2c4b7e-1a3f-4e8b-b6d0-2f5a7c9e1b34",
	  "a draft job id" },
	{ "/", "hash", "3f9a0c12",
	  "a checkpoint hash or a unique prefix of it (4 to 64 hex digits)" },
	{ NULL, NULL, NULL, NULL },
};

/* The query parameters routes may name in their doc.query (a space-separated list). */
static const struct {
	const char *name, *type, *description;
	long minimum;            /* -1: none */
} query_params[] = {
	{ "limit", "integer", "at most this many (0 or absent: all)", 0 },
	{ "after", "string", "the hash of the last node of the previous page", -1 },
	{ "changes", "string", "1: each node says how many items it added, removed and changed"
	  " per field against its first parent", -1 },
	{ "space", "string", "a Space's name (/v4/changes: also follow its sessions; /v4/search: only"
	  " that Space)", -1 },
	{ "q", "string", "the words to search for; \"a phrase\" in quotes, prefix* with a star", -1 },
	{ "field", "string", "only this field (decisions, assumptions, tasks, open_questions,"
	  " entities, artifacts, title, summary)", -1 },
	{ "author", "string", "only what this author wrote", -1 },
	{ "since", "string", "only what was written at or after this time (the forms of @{DATE})",
	  -1 },
	{ "until", "string", "only what was written at or before this time (the forms of @{DATE};"
	  " a date alone is that day's first second, its end is DATE 23:59:59)", -1 },
	{ "turns", "integer", "1: search chat turns too", 0 },
	{ "ref", "string", "a checkpoint reference (hash, prefix, SPACE, SPACE~N, SPACE@{N}, ...)",
	  -1 },
	{ "provider", "string", "the provider the send would use (default: the server's)", -1 },
	{ "model", "string", "the model the send would use (default: the provider's)", -1 },
	{ NULL, NULL, NULL, 0 },
};

static json_t *path_param(const struct http_route *r, const char *open)
{
	const char *close = strchr(open, '}');
	size_t n = (size_t)(close - open - 1);
	const struct param_doc *d;

	for (d = path_params; d->prefix; d++)
		if (!strncmp(r->pattern, d->prefix, strlen(d->prefix)) &&
		    strlen(d->name) == n && !strncmp(open + 1, d->name, n))
			break;
	if (!d->prefix)
		BUG("openapi.c has no description of the parameter of %s", r->pattern);
	return json_pack("{s:s%, s:s, s:b, s:s, s:{s:s}, s:s}", "name", open + 1, n, "in", "path",
			 "required", 1, "description", d->description, "schema", "type", "string",
			 "example", d->example);
}

static json_t *query_param(const char *name, size_t n)
{
	json_t *schema;

	for (size_t i = 0; query_params[i].name; i++) {
		if (strlen(query_params[i].name) != n || strncmp(query_params[i].name, name, n))
			continue;
		schema = json_pack("{s:s}", "type", query_params[i].type);
		if (query_params[i].minimum >= 0)
			json_object_set_new(schema, "minimum", json_integer(query_params[i].minimum));
		return json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", query_params[i].name, "in",
				 "query", "required", 0, "description", query_params[i].description,
				 "schema", schema);
	}
	BUG("openapi.c has no description of the query parameter '%.*s'", (int)n, name);
}

static json_t *parameters(const struct http_route *r)
{
	json_t *list = json_array();
	const char *open = strchr(r->pattern, '{');

	if (open)
		json_array_append_new(list, path_param(r, open));
	for (const char *q = r->doc.query; q && *q;) {
		size_t n = strcspn(q, " ");

		if (n)
			json_array_append_new(list, query_param(q, n));
		q += n + (q[n] == ' ');
	}
	return list;
}

/* ---- responses ---- */

static const struct {
	int status;
	const char *description;
} error_text[] = {
	{ 400, "Bad input: malformed JSON, a wrong type, a missing field, invalid UTF-8" },
	{ 401, "Missing or wrong bearer token (when the server has SMRITI_TOKEN)" },
	{ 403, "Forbidden: a cross-origin or cross-site write, a role too low, or a route that is"
	       " the administrator's" },
	{ 404, "No such Space, Checkpoint, session, job or operation" },
	{ 406, "The MCP client does not accept application/json and text/event-stream" },
	{ 409, "Conflict: the name is taken, or HEAD moved since the parent given" },
	{ 413, "The request body is larger than --max-body" },
	{ 414, "A path segment is too long" },
	{ 415, "The request body is not JSON" },
	{ 421, "The Host header does not name this server (DNS-rebinding defence)" },
	{ 422, "Well-formed but not acceptable: an empty Checkpoint, an unknown provider,"
	       " nothing to draft" },
	{ 500, "An internal error" },
	{ 501, "The operation is not in this build" },
	{ 502, "The language-model provider failed, or has no key" },
	{ 503, "The store is unavailable, the server is shutting down or busy" },
	{ 504, "The language-model provider timed out" },
	{ 0, NULL },
};

static const char *error_description(int status)
{
	for (size_t i = 0; error_text[i].status; i++)
		if (error_text[i].status == status)
			return error_text[i].description;
	BUG("openapi.c has no description of status %d", status);
}

static int is_write(const char *method)
{
	return strcmp(method, "GET") && strcmp(method, "HEAD");
}

/*
 * The error body of a status on route r: MCP answers its own refusals as
 * JSON-RPC, chat.send's provider failures carry the user turn, a merge's
 * conflicts are named beside the error.
 */
static const char *error_schema(const struct http_route *r, int status)
{
	if (!strcmp(r->pattern, "/mcp") && status != 421 && status != 413 && status != 500 &&
	    status != 503)
		return "ErrorOrJsonRpc";
	if ((!strcmp(r->pattern, "/v4/chat/send") || !strncmp(r->pattern, "/v4/sessions/{id}/", 18)) &&
	    (status == 502 || status == 504))
		return "ChatFailure";
	if (!strcmp(r->pattern, "/v4/repos/{id}/merge") && status == 409)
		return "MergeConflict";
	if (!strcmp(r->pattern, "/api/ops/{op}") && status != 421 && status != 401)
		return "OpError";
	return "Error";
}

static void add_error(json_t *responses, const struct http_route *r, int status)
{
	char key[8];

	snprintf(key, sizeof(key), "%d", status);
	if (json_object_get(responses, key))
		return;
	json_object_set_new(responses, key,
			    json_pack("{s:s, s:o}", "description", error_description(status),
				      "content", json_content(error_schema(r, status))));
}

/*
 * The error statuses each route's operation gives, beyond the ones every
 * route of its kind gets from the server's admission (add_errors).  A route
 * missing here documents a "default" error instead, whose shape the tests
 * still check; tests/js/openapi.test.mjs insists that none is missing.
 */
static const struct {
	const char *method, *pattern, *errors;
} route_errors[] = {
	{ "GET", "/", "" },
	{ "GET", "/ui/{name}", "404" },
	{ "GET", "/healthz", "" },
	{ "GET", "/metrics", "403 404" },
	{ "GET", "/openapi.json", "" },
	{ "POST", "/api/ops/{op}", "404 409 422 501 502 504" },
	{ "GET", "/v4/repos", "" },
	{ "POST", "/v4/repos", "409 422" },
	{ "GET", "/v4/repos/{id}", "404" },
	{ "PATCH", "/v4/repos/{id}", "404 409" },
	{ "DELETE", "/v4/repos/{id}", "404" },
	{ "GET", "/v4/repos/{id}/commits", "404" },
	{ "PATCH", "/v4/repos/{id}/head", "404 409 422" },
	{ "POST", "/v4/repos/{id}/merge", "404 409 422" },
	{ "POST", "/v4/repos/{id}/handoff", "404 409 413 422" },
	{ "GET", "/v4/repos/{id}/sessions", "404" },
	{ "POST", "/v4/repos/{id}/sessions", "404 422" },
	{ "GET", "/v4/sessions/{id}", "404" },
	{ "POST", "/v4/chat/send", "404 409 422 502 504" },
	{ "GET", "/v4/generations/{id}", "404" },
	{ "POST", "/v4/generations/{id}/stop", "404 409" },
	{ "POST", "/v5/sessions/{id}/mount", "404 422" },
	{ "POST", "/v4/sessions/{id}/edit", "404 409 422 502 504" },
	{ "POST", "/v4/sessions/{id}/regenerate", "404 409 422 502 504" },
	{ "POST", "/v4/sessions/{id}/continue", "404 409 422 502 504" },
	{ "POST", "/v4/sessions/{id}/switch", "404 409 422" },
	{ "POST", "/v4/sessions/{id}/fork", "404 422" },
	{ "GET", "/repos/{id}/head", "404" },
	{ "GET", "/commits/{hash}", "404" },
	{ "POST", "/chat/commit", "404 409 422" },
	{ "POST", "/mcp", "404 406" },
	{ "POST", "/v5/checkpoints/draft", "404 422 502" },
	{ "GET", "/v5/checkpoints/draft/{job_id}", "404" },
	{ "POST", "/v5/checkpoints/draft/{job_id}/save", "404 409 422" },
	{ "POST", "/v5/checkpoints/{hash}/review", "404 422 502 504" },
	{ "POST", "/v1/ingest", "404 422" },
	{ "POST", "/v1/context-pack", "404 422" },
	{ "GET", "/v4/auth", "" },
	{ "POST", "/v4/auth", "401" },
	{ "DELETE", "/v4/auth", "" },
	{ "GET", "/v4/overview", "" },
	{ "GET", "/v4/repos/{id}/graph", "404" },
	{ "GET", "/v4/changes", "404" },
	{ "GET", "/v4/providers", "" },
	{ "GET", "/v4/sessions/{id}/context", "404 422" },
	{ "GET", "/v4/search", "404 413 422" },
	{ "GET", "/v4/blame", "404 422" },
	{ "GET", "/v4/repos/{id}/reflog", "404" },
	{ NULL, NULL, NULL },
};

/* route_errors' list for r, or NULL. */
static const char *errors_of(const struct http_route *r)
{
	for (size_t i = 0; route_errors[i].method; i++)
		if (!strcmp(route_errors[i].method, r->method) &&
		    !strcmp(route_errors[i].pattern, r->pattern))
			return route_errors[i].errors;
	return NULL;
}

/*
 * The errors every route of its kind can give (the server's admission, see
 * server.c), then the ones its operation gives (route_errors).
 */
static void add_errors(json_t *responses, const struct http_route *r)
{
	const char *e = errors_of(r);

	add_error(responses, r, 421);
	add_error(responses, r, 500);
	if (!(r->flags & ROUTE_OPEN))
		add_error(responses, r, 401);
	if (strchr(r->pattern, '{')) {
		add_error(responses, r, 400);     /* a path that is not UTF-8 */
		add_error(responses, r, 414);
	}
	if (!(r->flags & ROUTE_NO_STORE) || (r->flags & ROUTE_BLOCKING))
		add_error(responses, r, 503);
	if (is_write(r->method)) {
		add_error(responses, r, 400);
		add_error(responses, r, 403);
		add_error(responses, r, 413);
		add_error(responses, r, 415);
		add_error(responses, r, 503);
	}
	if (r->doc.query)
		add_error(responses, r, 400);
	if (!e) {
		json_object_set_new(responses, "default",
				    json_pack("{s:s, s:o}", "description", "an error", "content",
					      json_content("Error")));
		return;
	}
	while (*e) {
		char *end;
		long status = strtol(e, &end, 10);

		if (end == e)
			BUG("bad route_errors entry of %s %s", r->method, r->pattern);
		add_error(responses, r, (int)status);
		e = end + strspn(end, " ");
	}
}

static json_t *responses_of(const struct http_route *r)
{
	char status[8];
	json_t *responses = json_object(), *ok;

	snprintf(status, sizeof(status), "%d", r->doc.status);
	ok = json_pack("{s:s, s:o}", "description", "success", "content",
		       json_content(r->doc.result));
	json_object_set_new(responses, status, ok);
	if (r->doc.events)
		json_object_set_new(json_object_get(ok, "content"), "text/event-stream",
				    json_pack("{s:{s:s, s:s}}", "schema", "type", "string",
					      "description", !strcmp(r->pattern, "/mcp") ?
					      "a 2026-07-28 subscriptions/listen: JSON-RPC messages"
					      " as server-sent events (docs/mcp.md)" :
					      "server-sent events generation, delta...,"
					      " then done or error, each with an id (docs/http.md,"
					      " Streaming chat)"));
	if (!strcmp(r->pattern, "/mcp"))
		json_object_set_new(responses, "202",
				    json_pack("{s:s, s:o}", "description",
					      "a notification or a response was accepted; the body is {}",
					      "content", json_content("Accepted")));
	if (r->run == http_ui_index || r->run == http_ui_asset)
		json_object_set_new(responses, "304",
				    json_pack("{s:s}", "description",
					      "Not Modified: the If-None-Match given names this ETag"));
	add_errors(responses, r);
	return responses;
}

/*
 * What an operation declares (api.h) as a document: {need, role?, param?}.
 * The role tests (tests/js/teams.test.mjs) are generated from these.
 */
static json_t *access_json(const struct api_access *a)
{
	json_t *o = json_pack("{s:s}", "need", api_need_name(a->need));

	if (a->role != ROLE_NONE)
		json_object_set_new(o, "role", json_string(role_name(a->role)));
	if (a->param)
		json_object_set_new(o, "param", json_string(a->param));
	return o;
}

/* A route's rule: its operation's, or what the route itself stands for. */
static json_t *route_access(const struct http_route *r)
{
	const struct api_op *op = r->doc.op ? api_find(r->doc.op) : NULL;

	if (op)
		return access_json(&op->access);
	if (r->doc.op)
		return json_pack("{s:s}", "need", "undeclared");
	if (r->flags & ROUTE_OPEN)
		return json_pack("{s:s}", "need", "public");
	if (r->flags & ROUTE_ADMIN)
		return json_pack("{s:s}", "need", "admin");
	if (r->flags & ROUTE_BY_OP)
		return json_pack("{s:s}", "need", "operation");
	if (r->flags & ROUTE_BY_TOOL)
		return json_pack("{s:s}", "need", "tool");
	return json_pack("{s:s}", "need", "signed-in");
}

/* {operation name: its rule} for every operation of this binary. */
static json_t *operations_access(void)
{
	json_t *all = json_object();

	for (size_t t = 0; api_tables[t]; t++)
		for (const struct api_op *op = api_tables[t]; op->name; op++)
			json_object_set_new(all, op->name, access_json(&op->access));
	return all;
}

static json_t *operation(const struct http_route *r)
{
	json_t *op;

	op = json_pack("{s:s, s:o, s:o, s:o}", "summary", r->doc.summary, "operationId",
		       operation_id(r), "parameters", parameters(r), "responses", responses_of(r));
	if (r->doc.op)
		json_object_set_new(op, "description",
				    json_sprintf("Calls the operation '%s'.", r->doc.op));
	if (r->doc.body)
		json_object_set_new(op, "requestBody",
				    json_pack("{s:b, s:o}", "required", !!strcmp(r->doc.body, "OpParams"),
					      "content", json_content(r->doc.body)));
	if (r->flags & ROUTE_OPEN)
		json_object_set_new(op, "security", json_array());
	json_object_set_new(op, "x-smriti-access", route_access(r));
	return op;
}

/* Schemas shared by more than one error body, added to the components. */
static void add_shared_schemas(json_t *components)
{
	json_t *schemas = json_object_get(components, "schemas");

	json_object_set_new(schemas, "ErrorOrJsonRpc",
			    json_pack("{s:[o, o]}", "anyOf", ref("Error"), ref("JsonRpc")));
}

json_t *http_openapi(void)
{
	json_t *doc, *paths = json_object();
	json_t *components = json_loads(components_json, 0, NULL);

	if (!components)
		BUG("the components literal of openapi.c is not valid JSON");
	add_shared_schemas(components);
	for (const struct http_route *r = http_routes; r->method; r++) {
		char method[8];
		json_t *item = json_object_get(paths, r->pattern);
		size_t i;

		for (i = 0; r->method[i] && i < sizeof(method) - 1; i++)
			method[i] = (char)tolower((unsigned char)r->method[i]);
		method[i] = '\0';
		if (!item) {
			item = json_object();
			json_object_set_new(paths, r->pattern, item);
		}
		json_object_set_new(item, method, operation(r));
	}
	doc = json_pack("{s:s, s:{s:s, s:s, s:s}, s:[{s:s, s:s}], s:o, s:o, s:[{s:[]}, {}]}",
			"openapi", "3.1.0",
			"info", "title", "Smriti HTTP API", "version", "1",
			"description", "Version control for reasoning state. Spaces are 'repos'"
			" and Checkpoints are 'commits' in the API.",
			"servers", "url", "http://127.0.0.1:7411",
			"description", "smriti serve's default address (--listen changes it)",
			"paths", paths, "components", components,
			"security", "bearer");
	json_object_set_new(doc, "x-smriti-operations", operations_access());
	return doc;
}

char *http_openapi_text(void)
{
	json_t *doc = http_openapi();
	char *text = json_dumps(doc, JSON_INDENT(2));

	json_decref(doc);
	if (!text)
		BUG("cannot serialise the OpenAPI document");
	return text;
}
