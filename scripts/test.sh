#!/usr/bin/env bash
# The whole test suite: installs everything into .venv, then lints, type-checks and runs every test
# (core, plugins, examples, docs). PostgreSQL tests start an embedded server unless
# RUNIQ_TEST_POSTGRES_DSN is set.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
. .venv/bin/activate
ruff check runiq plugins
mypy runiq
python -m pytest "$@"
