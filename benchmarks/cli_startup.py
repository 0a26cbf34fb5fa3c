"""CLI start-up benchmark: wall time of ``runiq --help`` and ``runiq status -c CONFIG``.

    python benchmarks/cli_startup.py [--repeats 9] [--config examples/corporate-documents/runiq.toml]
        [--disable NAME[,NAME...]] [--baseline DIR] [--json FILE]

Each command runs ``--repeats`` times as a fresh subprocess (``python -m runiq.cli ...``, the same code as
the ``runiq`` script) after one untimed warm-up run that fills the bytecode caches (written to a
temporary ``PYTHONPYCACHEPREFIX``, even where ``PYTHONDONTWRITEBYTECODE`` is set); reported are the
median, the fastest and the slowest wall time per command, the median above the floor (``python -c pass``
measured the same way: the interpreter's own start-up), the median CPU time (user + system; less
sensitive than wall time to other processes), and the load average (wall times are noisy on a shared
machine). The commands run in turn within each repeat (in an order that rotates between repeats), so
a burst of load hits all of them.
``status`` opens no store, so it measures imports, plugin loading and host building. A per-module
breakdown of one command: ``python -X importtime -m runiq.cli status -c CONFIG 2> imports.txt``.
The commands import runiq and its plugins from the checkout this script is in. ``--disable`` blocks
installed plugins by entry-point name (``RUNIQ_DISABLED_PLUGINS``) for every run, which shows what
loading each one costs ``status``. ``--baseline DIR`` also runs both commands from another checkout
of the repository (``git archive COMMIT | tar -x -C DIR``: its ``runiq`` and plugin packages first on
``PYTHONPATH``, the installed entry points unchanged) in the same rounds, so a before/after
comparison sees the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = ROOT / "examples" / "corporate-documents" / "runiq.toml"


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# Interpreter arguments, environment, working directory (``python -m`` imports from it first).
Command = tuple[list[str], dict[str, str], Path]


def _source_path(tree: Path) -> str:
    """``PYTHONPATH`` that imports runiq and its plugins from the checkout ``tree``."""
    plugins = sorted(tree.glob("plugins/*/")) + sorted(tree.glob("examples/*-plugin/"))
    return os.pathsep.join(str(path) for path in [tree, *plugins])


def _run(command: Command) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run."""
    arguments, environment, tree = command
    cpu, started = _cpu_of_children(), time.perf_counter()
    completed = subprocess.run(  # our own interpreter running our own CLI (or nothing, for the floor)
        [sys.executable, *arguments], capture_output=True, check=False, cwd=tree, env=environment
    )
    elapsed, cpu = time.perf_counter() - started, _cpu_of_children() - cpu
    if completed.returncode != 0:
        raise SystemExit(f"python {' '.join(arguments)} exited {completed.returncode}:\n{completed.stderr.decode()}")
    return elapsed, cpu


def measure(commands: dict[str, Command], repeats: int) -> dict[str, dict[str, float]]:
    """Wall times per command: one untimed warm-up each (bytecode and page caches), then ``repeats``
    rounds in which every command runs once, in an order that rotates between rounds."""
    for command in commands.values():
        _run(command)
    runs: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
    labels = list(commands)
    for repeat in range(repeats):
        for label in labels[repeat % len(labels) :] + labels[: repeat % len(labels)]:  # rotating order
            runs[label].append(_run(commands[label]))
    figures = {}
    for label, values in runs.items():
        walls = [wall for wall, _ in values]
        figures[label] = {
            "median_s": statistics.median(walls),
            "min_s": min(walls),
            "max_s": max(walls),
            "median_cpu_s": statistics.median(cpu for _, cpu in values),
        }
    return figures


def _environment(cache: str) -> dict[str, str]:
    """The commands' environment: no ``RUNIQ_*`` setting of this shell, runiq imported from this checkout,
    and bytecode written by the warm-up run into ``cache`` and read by the timed runs, as an installed
    package's would be (``PYTHONDONTWRITEBYTECODE``, set in some shells, would make every run compile
    runiq's sources again), without writing ``__pycache__`` into the checkouts."""
    environment = {k: v for k, v in os.environ.items() if not k.upper().startswith("RUNIQ_")}
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    environment["PYTHONPYCACHEPREFIX"] = cache
    environment["PYTHONPATH"] = _source_path(ROOT)  # this checkout, whichever one is installed
    return environment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--disable", default="", help="comma-separated plugin entry-point names to block")
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout to run in the same rounds")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    options = parser.parse_args()
    disabled = [name for name in options.disable.split(",") if name]
    cache = tempfile.TemporaryDirectory(prefix="runiq-cli-startup-")
    environment = _environment(cache.name)
    if disabled:
        environment["RUNIQ_DISABLED_PLUGINS"] = json.dumps(disabled)
    runiq = {
        "runiq --help": ["-m", "runiq.cli", "--help"],
        "runiq status": ["-m", "runiq.cli", "status", "-c", str(options.config.resolve())],
    }
    commands: dict[str, Command] = {"python -c pass": (["-c", "pass"], environment, ROOT)}
    commands.update({label: (arguments, environment, ROOT) for label, arguments in runiq.items()})
    if options.baseline is not None:
        tree = options.baseline.resolve()
        baseline = {**environment, "PYTHONPATH": _source_path(tree)}
        commands.update({f"{label} (baseline)": (arguments, baseline, tree) for label, arguments in runiq.items()})
    report: dict[str, object] = {
        "load_average": os.getloadavg(),
        "repeats": options.repeats,
        "disabled": disabled,
        "baseline": str(options.baseline) if options.baseline else None,
    }
    print(f"load average at start {report['load_average']}, {options.repeats} runs each, disabled {disabled}")
    with cache:
        figures = measure(commands, options.repeats)
    floor = figures["python -c pass"]["median_s"]
    for label, values in figures.items():
        values["above_floor_s"] = values["median_s"] - floor
        report[label] = values
        low, high = values["min_s"], values["max_s"]
        print(
            f"{label:26} median {values['median_s']:.2f} s  (min {low:.2f}, max {high:.2f}; "
            f"{values['above_floor_s']:+.2f} s above the floor)  CPU {values['median_cpu_s']:.2f} s"
        )
    report["load_average_at_end"] = os.getloadavg()
    if options.json is not None:
        options.json.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
