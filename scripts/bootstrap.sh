#!/usr/bin/env bash
# Creates .venv (if needed) and installs runiq, every plugin and the example plugin with their extras.
# Works on a fresh machine that has only Python, pip and gcc (and apt for the browser tests).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
python -m pip install --quiet --upgrade pip

# sentence-transformers needs torch; the pinned CPU build is what pip finds locally (a plain
# 'torch' requirement would pull a multi-GB CUDA build), so install it first.
if [ -d plugins/runiq-sentence-transformers ]; then
  python -m pip install --quiet "torch==2.13.0"
fi

packages=(-e ".[test,lint,bench]")
for plugin in plugins/*/ examples/*-plugin/; do
  if [ -f "$plugin/pyproject.toml" ]; then
    extras=""
    if grep -q '^test = ' "$plugin/pyproject.toml"; then extras="[test]"; fi
    packages+=(-e "${plugin%/}${extras}")
  fi
done
python -m pip install --quiet "${packages[@]}"

# The dashboard page is tested in Debian's Chromium (never a downloaded browser).
if [ -d plugins/runiq-dashboard ] && [ ! -x /usr/bin/chromium ]; then
  if command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq chromium >/dev/null
  fi
  if [ ! -x /usr/bin/chromium ]; then
    # The browser suite skips without it; a test run that silently skips a suite proves nothing.
    echo "bootstrap: /usr/bin/chromium is missing and apt-get could not install it" >&2
    exit 1
  fi
fi
