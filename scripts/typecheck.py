"""``mypy --strict`` over the core and every plugin, read from this checkout however they are installed.

setuptools' editable installs resolve packages through import hooks that mypy cannot follow, and a
regular install would have mypy read site-packages rather than these sources. So each distribution's
directory goes on ``MYPYPATH`` (which mypy searches before site-packages) and each package it ships
is named with ``-p``. The distributions and their packages are those of ``check_wheels.projects()``:
the core, every ``plugins/*`` and the example plugin. Third-party stubs come from each project's
``typing`` dependency group (``asyncpg-stubs``, ``types-openpyxl``, ...), which bootstrap installs.

    python scripts/typecheck.py                    # run mypy, exit with its status
    python scripts/typecheck.py --no-incremental   # other arguments go to mypy
    python scripts/typecheck.py --print            # print the command instead
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

from check_wheels import package_dirs, projects


def mypy_path() -> str:
    return os.pathsep.join(str(project) for project in projects())


def mypy_arguments() -> list[str]:
    packages = [package.name for project in projects() for package in package_dirs(project)]
    return ["--strict", *(argument for package in packages for argument in ("-p", package))]


def main(argv: list[str]) -> int:
    extra = [argument for argument in argv if argument != "--print"]
    command = [sys.executable, "-m", "mypy", *mypy_arguments(), *extra]
    if "--print" in argv:
        print(f"MYPYPATH={shlex.quote(mypy_path())} {shlex.join(command)}")
        return 0
    return subprocess.run(command, env={**os.environ, "MYPYPATH": mypy_path()}, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
