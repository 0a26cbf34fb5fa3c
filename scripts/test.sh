#!/usr/bin/env bash
# The whole test suite: installs everything into .venv, then lints, type-checks and runs every test
# (core, plugins, examples, docs). PostgreSQL tests start an embedded server unless
# RUNIQ_TEST_POSTGRES_DSN is set.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
. .venv/bin/activate
# Lint and format: the library, every plugin, the tests, benchmarks, examples and these scripts.
ruff check runiq plugins tests benchmarks examples scripts
ruff format --check runiq plugins tests benchmarks examples scripts
# mypy --strict over the core and every plugin, from this checkout however they are installed.
python scripts/typecheck.py
python -m pytest "$@"
