#!/usr/bin/env bash
# The API with curl: count, should-compact, compact, then fetch the archived originals.
#
#   context-compact serve &    # or: docker compose up
#   bash examples/curl.sh      # COMPACT_URL=http://host:port to point elsewhere
#
# With COMPACT_API_TOKEN set (as for the server), every call sends it as a bearer token.
set -euo pipefail
BASE="${COMPACT_URL:-http://127.0.0.1:8080}"
HERE="$(cd "$(dirname "$0")" && pwd)"
AUTH=()
if [ -n "${COMPACT_API_TOKEN:-}" ]; then AUTH=(-H "Authorization: Bearer $COMPACT_API_TOKEN"); fi
call() { curl -sS --fail-with-body ${AUTH[@]+"${AUTH[@]}"} "$@"; }
post() { call -H 'content-type: application/json' "$BASE$1" -d "$2"; }

MESSAGES='[
  {"role": "system", "content": "You are a coding agent."},
  {"role": "user", "content": "Fix the failing test."},
  {"role": "assistant", "content": "Done: the test passes."}
]'

echo "== POST /count"
post /count "{\"messages\": $MESSAGES}"
echo

echo "== POST /should-compact (from the provider's last usage, no counting)"
post /should-compact \
  "{\"messages\": $MESSAGES, \"last_usage\": {\"input_tokens\": 170000}, \"pending_input\": \"Next step.\"}"
echo

echo "== POST /compact (a real SWE-agent session, forced)"
RESULT="$(call -H 'content-type: application/json' -H 'X-Request-ID: curl-example-1' \
  "$BASE/compact" -d @"$HERE/compact-request.json")"
ARCHIVE_ID="$(printf '%s' "$RESULT" | python3 -c 'import json, sys; print(json.load(sys.stdin)["archive"]["id"])')"
printf '%s' "$RESULT" | python3 -c '
import json, sys
r = json.load(sys.stdin)
print(json.dumps({k: r[k] for k in ("compacted", "reason", "stats", "restored_files", "skipped_files")}, indent=2))'

echo "== GET /archives/$ARCHIVE_ID"
call "$BASE/archives/$ARCHIVE_ID" | python3 -c '
import json, sys
a = json.load(sys.stdin)
print(a["message_count"], "messages archived, sha256", a["sha256"])'
