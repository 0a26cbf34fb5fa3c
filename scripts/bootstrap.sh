#!/usr/bin/env bash
# Creates .venv (if needed) and installs runiq, every plugin and the example plugin (editable) with
# their development dependency groups (PEP 735 [dependency-groups]: never published to users).
# Works on a fresh machine that has only Python, pip and gcc (and apt for the browser and PgBouncer tests).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
# pip >= 25.1 installs dependency groups (--group).
python -m pip install --quiet --upgrade "pip>=25.1"

# sentence-transformers needs torch; the pinned CPU build is what pip finds locally (a plain
# 'torch' requirement would pull a multi-GB CUDA build), so install it first.
if [ -d plugins/runiq-sentence-transformers ]; then
  python -m pip install --quiet "torch==2.13.0"
fi

# Every dependency group a pyproject.toml declares, as pip arguments: --group PATH:NAME.
groups_of() {
  python - "$1" <<'PY'
import sys, tomllib
path = sys.argv[1]
with open(path, "rb") as handle:
    groups = tomllib.load(handle).get("dependency-groups", {})
print("\n".join(f"--group\n{path}:{name}" for name in groups))
PY
}

packages=()
for project in ./ plugins/*/ examples/*-plugin/; do
  if [ -f "$project/pyproject.toml" ]; then
    packages+=(-e "${project%/}")
    groups=$(groups_of "${project%/}/pyproject.toml")
    while IFS= read -r arg; do
      if [ -n "$arg" ]; then packages+=("$arg"); fi
    done <<< "$groups"
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

# The PostgreSQL store is also tested behind Debian's PgBouncer in transaction mode (the tests run
# it as a subprocess on a free port; a service the package may start is not used).
have_pgbouncer() { command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ]; }
if [ -d plugins/runiq-postgresql ] && ! have_pgbouncer; then
  if command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq pgbouncer >/dev/null
  fi
  if ! have_pgbouncer; then
    # The PgBouncer tests fail without it; a test run that silently skips a suite proves nothing.
    echo "bootstrap: pgbouncer is missing and apt-get could not install it" >&2
    exit 1
  fi
fi
