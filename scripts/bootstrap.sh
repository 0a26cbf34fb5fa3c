#!/usr/bin/env bash
# Creates .venv (if needed) and installs runiq, every plugin and the example plugin with test extras.
# Works on a fresh machine that has only Python, pip and gcc.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
python -m pip install --quiet --upgrade pip
packages=(-e ".[test,lint,bench]")
for plugin in plugins/*/ examples/*-plugin/; do
  if [ -f "$plugin/pyproject.toml" ]; then
    packages+=(-e "$plugin")
  fi
done
python -m pip install --quiet "${packages[@]}"
