#!/usr/bin/env bash
# A tour of fnbox's HTTP API with curl: health, a call, a command, a streamed call, then a session with
# files, a command and a kernel. Start a server first (`./build/fnbox serve`), then run this script.
#   FNBOX_URL   the server (default http://127.0.0.1:8080)
#   FNBOX_TOKEN its bearer token, when it was started with --token-file
# Needs curl (7.82 or later, for --json) and jq.
set -euo pipefail
URL=${FNBOX_URL:-http://127.0.0.1:8080}
auth=()
[ -n "${FNBOX_TOKEN:-}" ] && auth=(-H "Authorization: Bearer $FNBOX_TOKEN")
here=$(dirname "$0")
api() { curl -sS --fail-with-body "${auth[@]}" "$@"; }

api "$URL/v1/health" | jq -c '{status, languages}'
api --json @"$here/../greet.json" "$URL/v1/call" | jq -c '{status, result}'
api --json '{"command": "echo hi from $(uname -s)"}' "$URL/v1/execute" | jq -c '{status, stdout}'
# streamed: one NDJSON line per chunk of output, then the result line
api -N --json '{"language": "python", "code": "def f():\n    print(\"working\")\n    return 7"}' \
    -H 'Accept: application/x-ndjson' "$URL/v1/call" | jq -c '{type, data, result}'

# a session: a sandbox that lives across requests
id=$(api --json '{"files": {"notes.txt": "hello\n"}}' "$URL/v1/sessions" | jq -r .id)
trap 'api -X DELETE "$URL/v1/sessions/$id" >/dev/null' EXIT
api -X PUT --data-binary 'a,b
1,2
' "$URL/v1/sessions/$id/files?path=data/in.csv"
api --json '{"command": "cat notes.txt; wc -l < data/in.csv"}' "$URL/v1/sessions/$id/commands" | jq -c '{status, stdout}'
api "$URL/v1/sessions/$id/files/list?path=data" | jq -c '[.[].name]'
api --json '{"code": "import csv\nrows = list(csv.DictReader(open(\"data/in.csv\")))"}' \
    "$URL/v1/sessions/$id/kernels/python/execute" | jq -c '{status}'
api --json '{"code": "int(rows[0][\"a\"]) + int(rows[0][\"b\"])"}' \
    "$URL/v1/sessions/$id/kernels/python/execute" | jq -c '{status, result}'
