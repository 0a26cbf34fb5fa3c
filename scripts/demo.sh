#!/usr/bin/env bash
# The main job on embedded defaults: install, ingest the bundled corporate documents, print hits for
# sample queries, then serve the host with its dashboard on 127.0.0.1 (Ctrl-C stops it).
# Pass --no-serve to stop after the queries.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
. .venv/bin/activate
CONFIG=${RUNIQ_CONFIG:-examples/corporate-documents/runiq.toml}
INDEX=corporate-documents
runiq status -c "$CONFIG"
runiq ingest "$INDEX" -c "$CONFIG"
run_query() { echo; echo "\$ runiq query $INDEX '$1' --mode $2"; runiq query "$INDEX" "$1" --mode "$2" --top-k 3 -c "$CONFIG"; }
run_query "POL-HR-014" lexical
run_query '"manager approval"' lexical
run_query "CS1503" hybrid
run_query "IRagRetriever" hybrid
run_query "how many days can I work from home" semantic
if [ "${1:-}" = "--no-serve" ]; then
  exit 0
fi
echo
echo "Serving the dashboard; query from another shell with:"
echo "  . .venv/bin/activate && runiq query $INDEX \"POL-HR-014\" --mode lexical -c $CONFIG"
exec runiq serve "$CONFIG"
