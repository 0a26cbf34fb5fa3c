"""CLI start-up benchmark: wall time of ``runiq --help`` and ``runiq status -c CONFIG``.

    python benchmarks/cli_startup.py [--repeats 9] [--config examples/corporate-documents/runiq.toml] [--json FILE]

Each command runs ``--repeats`` times as a fresh subprocess (``python -m runiq.cli ...``, the same code as
the ``runiq`` script) after one untimed warm-up run that fills the bytecode caches; reported are the
median, the fastest and the slowest wall time per command, and the load average (the figures are noisy
on a shared machine). ``status`` opens no store, so it measures imports, plugin loading and host
building. A per-module breakdown of one command:
``python -X importtime -m runiq.cli status -c CONFIG 2> imports.txt``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = ROOT / "examples" / "corporate-documents" / "runiq.toml"


def _wall_time(arguments: list[str]) -> float:
    started = time.perf_counter()
    completed = subprocess.run(  # our own interpreter running our own CLI
        [sys.executable, "-m", "runiq.cli", *arguments], capture_output=True, check=False, cwd=ROOT
    )
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"runiq {' '.join(arguments)} exited {completed.returncode}:\n{completed.stderr.decode()}")
    return elapsed


def measure(arguments: list[str], repeats: int) -> dict[str, float]:
    _wall_time(arguments)  # warm-up: bytecode caches, page cache
    times = [_wall_time(arguments) for _ in range(repeats)]
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    options = parser.parse_args()
    commands = {"runiq --help": ["--help"], "runiq status": ["status", "-c", str(options.config)]}
    report: dict[str, object] = {"load_average": os.getloadavg(), "repeats": options.repeats}
    print(f"load average {report['load_average']}, {options.repeats} runs each")
    for label, arguments in commands.items():
        figures = measure(arguments, options.repeats)
        report[label] = figures
        low, high = figures["min_s"], figures["max_s"]
        print(f"{label:14} median {figures['median_s']:.2f} s  (min {low:.2f}, max {high:.2f})")
    if options.json is not None:
        options.json.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
