"""Make runiq.rag's implementation modules private (issue 27): ``runiq.rag.X`` becomes ``runiq.rag._X``.

As in httpx, a package's public names live in its faces and everything else sits in ``_``-prefixed
modules. Under ``runiq/rag`` the faces are the package itself (``runiq.rag``), ``runiq.rag.providers``
and ``runiq.rag.testing`` (the contract kits); every other top-level module or package is renamed
with ``git mv`` (only the top level: ``runiq/rag/_stores/memory.py`` keeps its own name, the package
is already private), and every reference in the repository follows:

* dotted names, whole tokens only (``runiq.rag.stores`` but not ``runiq.rag.stores_x``), wherever
  they are: imports, string module paths (``python -m``, ``importlib``, lazy maps, ``mock.patch``
  targets), docstrings, comments, Markdown, TOML;
* file paths (``runiq/rag/wiring.py``, ``runiq/rag/stores/``);
* submodule imports from the package (``from runiq.rag import builtins`` becomes
  ``from runiq.rag import _builtins as builtins``), also in the Python blocks of Markdown files;
* relative imports that reach one of the renamed modules (``from ..stores import x``).

The rename is recorded in :data:`RECORDED`; a public module found under ``runiq/rag`` that is neither
recorded nor a face is renamed too (and named in the output), so a module another branch adds is not
missed. References are found by scanning every file git knows of (tracked, or untracked and not
ignored), so files the script has never seen are rewritten as well. A second run changes nothing.
Logger names do not change: :func:`runiq.logging.get_logger` names a logger after its module's public
path (``runiq.rag._ingestion.manager`` logs as ``runiq.rag.ingestion.manager``), and a name given to
``get_logger`` or ``logging.getLogger`` as a string is left as it is.

A line containing ``privatise: keep`` is left as it is. What a scan cannot rewrite (a module path
built at run time, a glob over ``runiq/rag/...``) is printed for a person to check.

    python scripts/privatise_modules.py            # rename, rewrite, then ruff's import sorting and format
    python scripts/privatise_modules.py --check    # change nothing; exit 1 if a run would change anything
"""

from __future__ import annotations

import argparse
import ast
import bisect
import io
import re
import shutil
import subprocess
import sys
import tokenize
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "runiq.rag"
PACKAGE_DIR = Path(*PACKAGE.split("."))
PUBLIC = frozenset({"providers", "testing"})
"""The faces under ``runiq.rag`` (besides the package itself): never renamed."""
RECORDED = (
    "builtins",
    "chunking",
    "context",
    "documents",
    "embeddings",
    "errors",
    "ingestion",
    "lexical",
    "limits",
    "loaders",
    "observability",
    "registration",
    "reranking",
    "retrieval",
    "runtime",
    "sources",
    "stores",
    "wiring",
)
"""The modules issue 27 made private (without the underscore). Rewriting their old names stays on for
every later run, so a branch merged after the rename is brought along."""
KEEP_MARKER = "privatise: keep"
LOGGER_FACTORIES = frozenset({"get_logger", "getLogger"})
LOGGER_NAME = "logger name"
"""A string passed to a logger factory is a name operators configure, not a module path: left alone."""
SELF = Path(__file__).resolve()
GIT = shutil.which("git") or "git"


@dataclass
class Report:
    renamed: list[tuple[str, str]] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    files: set[str] = field(default_factory=set)
    review: list[str] = field(default_factory=list)
    private_in_public_code: list[str] = field(default_factory=list)


def git(*arguments: str) -> str:
    return subprocess.run([GIT, *arguments], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def discover_public_modules(root: Path) -> list[str]:
    """Top-level modules and packages of ``runiq/rag`` that are neither faces nor ``_``-prefixed."""
    found = []
    for entry in sorted((root / PACKAGE_DIR).iterdir()):
        name = entry.stem if entry.suffix == ".py" else entry.name
        is_module = entry.is_file() and entry.suffix == ".py"
        is_package = entry.is_dir() and (entry / "__init__.py").exists()
        if (is_module or is_package) and not name.startswith("_") and name not in PUBLIC:
            found.append(name)
    return found


def names_to_privatise(root: Path, report: Report) -> list[str]:
    discovered = discover_public_modules(root)
    report.unrecorded = [name for name in discovered if name not in RECORDED]
    return sorted({*RECORDED, *discovered})


# --- moving the files -------------------------------------------------------------------------------


def move_modules(names: Iterable[str], report: Report, *, dry_run: bool) -> None:
    """``git mv`` each public module or package to its ``_`` name, file by file (so a file merged into the
    old directory after the rename joins the new one); caches and emptied directories are removed."""
    tracked = set(git("ls-files", "-z", "--", str(PACKAGE_DIR)).split("\0"))
    for name in names:
        for old in (PACKAGE_DIR / f"{name}.py", PACKAGE_DIR / name):
            if not has_sources(ROOT / old):
                continue
            new = old.with_name(f"_{old.name}")
            report.renamed.append((str(old), str(new)))
            if not dry_run:
                move_tree(old, new, tracked)


def has_sources(path: Path) -> bool:
    """A module file, or a directory holding any file outside ``__pycache__`` (not just a stale cache)."""
    if path.is_file():
        return True
    return path.is_dir() and any(f.is_file() and "__pycache__" not in f.parts for f in path.rglob("*"))


def move_tree(old: Path, new: Path, tracked: set[str]) -> None:
    sources = [old] if (ROOT / old).is_file() else sorted((ROOT / old).rglob("*"))
    for source in sources:
        relative = source.relative_to(ROOT) if source.is_absolute() else source
        if (ROOT / relative).is_dir() or "__pycache__" in relative.parts:
            continue
        target = new / relative.relative_to(old) if relative != old else new
        if (ROOT / target).exists():
            raise SystemExit(f"{target} exists already: merge it with {relative} by hand, then run again")
        (ROOT / target).parent.mkdir(parents=True, exist_ok=True)
        if str(relative) in tracked:
            git("mv", str(relative), str(target))
        else:
            (ROOT / relative).rename(ROOT / target)
    if (ROOT / old).is_dir():
        for cache in sorted((ROOT / old).rglob("__pycache__"), reverse=True):
            shutil.rmtree(cache)
        for directory in sorted((ROOT / old).rglob("*"), reverse=True):
            directory.rmdir()  # only directories are left; a file here would make this fail loudly
        (ROOT / old).rmdir()


# --- rewriting references ---------------------------------------------------------------------------


class Rewriter:
    """The rewrites of one file's text, each counted under its kind."""

    def __init__(self, names: Iterable[str], report: Report) -> None:
        alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
        dots = re.escape(PACKAGE)
        slashes = re.escape(PACKAGE_DIR.as_posix())
        self.names = frozenset(names)
        self.dotted = re.compile(rf"(?<![\w.]){dots}\.({alternatives})(?!\w)")
        self.path = re.compile(rf"(?<![\w.-]){slashes}/({alternatives})(?![\w-])")
        self.report = report

    def rewrite(self, relative: Path, text: str) -> str:
        if relative.suffix == ".py":
            text = self.python_imports(relative, text)
            kinds = python_kinds(text)
        else:
            text = self.markdown_blocks(relative, text) if relative.suffix == ".md" else text
            kinds = None
        text = self.substitute(self.dotted, rf"{PACKAGE}._\1", text, relative, kinds, "dotted name")
        return self.substitute(self.path, rf"{PACKAGE_DIR.as_posix()}/_\1", text, relative, None, "file path")

    def substitute(
        self,
        pattern: re.Pattern[str],
        replacement: str,
        text: str,
        relative: Path,
        kinds: Callable[[int], str] | None,
        kind: str,
    ) -> str:
        out, offset = [], 0
        for line in text.split("\n"):
            rewritten = line
            if KEEP_MARKER not in line:

                def replace(match: re.Match[str], base: int = offset) -> str:
                    where = kinds(base + match.start()) if kinds else file_kind(relative)
                    if where == LOGGER_NAME:
                        self.report.counts[f"{kind} left as it is: {where}"] += 1
                        return match.group(0)
                    self.report.counts[f"{kind}: {where}"] += 1
                    return match.expand(replacement)

                rewritten = pattern.sub(replace, line)
            out.append(rewritten)
            offset += len(line) + 1
        return "\n".join(out)

    def python_imports(self, relative: Path, text: str) -> str:
        """``from runiq.rag import stores`` and relative imports of a renamed module, found with ast."""
        try:
            tree = ast.parse(text)
        except SyntaxError:
            self.report.review.append(f"{relative}: not parsed (syntax error); only dotted names rewritten")
            return text
        package = module_package(relative)
        edits: list[tuple[int, int, int, str]] = []  # (line, start byte, end byte, new text)
        lines = text.split("\n")
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or KEEP_MARKER in lines[node.lineno - 1]:
                continue
            absolute = resolve(node, package)
            if absolute is None:
                continue
            if absolute == PACKAGE:
                edits.extend(self.alias_edits(node, relative))
            elif node.level > 0:
                edits.extend(self.relative_module_edit(node, absolute, lines, relative))
        return apply_edits(lines, edits)

    def alias_edits(self, node: ast.ImportFrom, relative: Path) -> Iterable[tuple[int, int, int, str]]:
        for alias in node.names:
            if alias.name in self.names:
                self.report.counts[f"submodule import: {file_kind(relative)}"] += 1
                assert alias.end_col_offset is not None
                new = f"_{alias.name} as {alias.asname or alias.name}"
                yield alias.lineno, alias.col_offset, alias.end_col_offset, new

    def relative_module_edit(
        self, node: ast.ImportFrom, absolute: str, lines: list[str], relative: Path
    ) -> Iterable[tuple[int, int, int, str]]:
        parts = absolute.split(".")
        depth = len(PACKAGE.split("."))
        if len(parts) <= depth or ".".join(parts[:depth]) != PACKAGE or parts[depth] not in self.names:
            return
        line = lines[node.lineno - 1].encode()
        match = re.compile(rb"from\s+(\.+)([\w.]+)").match(line, node.col_offset)
        assert match is not None
        assert node.module is not None
        module_parts = node.module.split(".")
        index = len(module_parts) - (len(parts) - depth)
        if index < 0:
            return
        module_parts[index] = f"_{module_parts[index]}"
        self.report.counts[f"relative import: {file_kind(relative)}"] += 1
        yield node.lineno, match.start(2), match.end(2), ".".join(module_parts)

    def markdown_blocks(self, relative: Path, text: str) -> str:
        """The submodule-import rewrite, applied to each fenced ``python`` block."""

        def block(match: re.Match[str]) -> str:
            return match.group(1) + self.python_imports(relative, match.group(2)) + match.group(3)

        return re.sub(r"(```python[^\n]*\n)(.*?)(^```)", block, text, flags=re.DOTALL | re.MULTILINE)


def apply_edits(lines: list[str], edits: list[tuple[int, int, int, str]]) -> str:
    """Byte-offset edits (ast's columns are UTF-8 offsets), applied right to left on each line."""
    for number, start, end, new in sorted(edits, reverse=True):
        encoded = lines[number - 1].encode()
        lines[number - 1] = (encoded[:start] + new.encode() + encoded[end:]).decode()
    return "\n".join(lines)


def module_package(relative: Path) -> list[str] | None:
    """The package a file's relative imports start from, if the file lies in the core's tree."""
    if relative.parts[0] != PACKAGE.split(".")[0] or relative.suffix != ".py":
        return None
    parts = list(relative.with_suffix("").parts)
    return parts[:-1]


def resolve(node: ast.ImportFrom, package: list[str] | None) -> str | None:
    if node.level == 0:
        return node.module
    if package is None or node.level - 1 > len(package):
        return None
    anchor = package[: len(package) - (node.level - 1)]
    return ".".join([*anchor, *([node.module] if node.module else [])])


def python_kinds(text: str) -> Callable[[int], str]:
    """Where an offset of a Python file lies: an import statement, a string, a comment, or code."""
    try:
        tree = ast.parse(text)
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (SyntaxError, tokenize.TokenError):
        return lambda _offset: "python (unparsed)"
    starts = [0, *(newline.end() for newline in re.finditer("\n", text))]  # ast and tokenize count lines by \n
    docstring_lines = {
        number
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for number in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }
    import_lines = {
        number
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for number in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }
    logger_names = [
        (
            starts[name.lineno - 1] + name.col_offset,
            starts[(name.end_lineno or name.lineno) - 1] + (name.end_col_offset or 0),
        )
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and call_name(call.func) in LOGGER_FACTORIES
        for name in call.args[:1]
    ]
    spans = [
        (starts[token.start[0] - 1] + token.start[1], starts[token.end[0] - 1] + token.end[1], token.type)
        for token in tokens
        if token.type in (tokenize.STRING, tokenize.COMMENT, getattr(tokenize, "FSTRING_MIDDLE", -1))
    ]

    def kind(offset: int) -> str:
        line = bisect.bisect_right(starts, offset)
        if any(start <= offset < end for start, end in logger_names):
            return LOGGER_NAME
        for start, end, token_type in spans:
            if start <= offset < end:
                if token_type == tokenize.COMMENT:
                    return "python comment"
                return "python docstring" if line in docstring_lines else "python string"
        return "python import" if line in import_lines else "python code"

    return kind


def call_name(function: ast.expr) -> str | None:
    if isinstance(function, ast.Attribute):
        return function.attr
    return function.id if isinstance(function, ast.Name) else None


def file_kind(relative: Path) -> str:
    return {".py": "python", ".md": "markdown", ".toml": "toml", ".ini": "ini", ".sh": "shell"}.get(
        relative.suffix, relative.suffix or relative.name
    )


# --- what a scan cannot do --------------------------------------------------------------------------

UNREWRITABLE = re.compile(
    rf"{re.escape(PACKAGE)}\.(?:\{{|[\"'] *\+)|{re.escape(PACKAGE_DIR.as_posix())}/[{{*]|from runiq import rag\b"
)
PUBLIC_CODE = ("plugins/", "examples/", "docs/", "README.md")


def review(relative: Path, text: str, names: frozenset[str], report: Report) -> None:
    """Lines a person should look at: module paths built at run time, and (in plugins, examples and docs)
    imports of a private module, which should go through a face."""
    private_import = re.compile(rf"^\s*(?:from|import)\s+{re.escape(PACKAGE)}\._(?:{'|'.join(names)})\b")
    public_code = relative.as_posix().startswith(PUBLIC_CODE) and not {"tests", "benchmarks"} & set(relative.parts)
    for number, line in enumerate(text.splitlines(), 1):
        if UNREWRITABLE.search(line) and KEEP_MARKER not in line:
            report.review.append(f"{relative}:{number}: {line.strip()}")
        if public_code and private_import.search(line):
            report.private_in_public_code.append(f"{relative}:{number}: {line.strip()}")


# --- the run ----------------------------------------------------------------------------------------


def candidate_files() -> list[Path]:
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    return sorted({Path(name) for name in listed if name and (ROOT / name).is_file() and ROOT / name != SELF})


def rewrite_files(names: list[str], report: Report, *, dry_run: bool) -> list[Path]:
    rewriter = Rewriter(names, report)
    changed = []
    for relative in candidate_files():
        try:
            text = (ROOT / relative).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary
        new = rewriter.rewrite(relative, text)
        review(relative, new, frozenset(names), report)
        if new != text:
            changed.append(relative)
            report.files.add(relative.as_posix())
            if not dry_run:
                (ROOT / relative).write_text(new, encoding="utf-8")
    return changed


def tidy(changed: list[Path]) -> None:
    """ruff re-sorts the imports whose order the underscore changed and re-wraps lines it lengthened."""
    python = [str(path) for path in changed if path.suffix == ".py"]
    if not python:
        return
    ruff = [sys.executable, "-m", "ruff"]
    subprocess.run([*ruff, "check", "--select", "I001", "--fix", "--quiet", *python], cwd=ROOT, check=False)
    subprocess.run([*ruff, "format", "--quiet", *python], cwd=ROOT, check=False)


def print_report(report: Report, *, dry_run: bool) -> None:
    verb = "would rename" if dry_run else "renamed"
    for old, new in report.renamed:
        print(f"{verb} {old} -> {new}")
    if report.unrecorded:
        print(f"not in RECORDED, privatised too: {', '.join(report.unrecorded)} (add them to RECORDED or PUBLIC)")
    verb = "would rewrite" if dry_run else "rewrote"
    rewritten = sum(count for kind, count in report.counts.items() if "left as it is" not in kind)
    print(f"{verb} {rewritten} references in {len(report.files)} files:")
    for kind, count in sorted(report.counts.items()):
        print(f"  {count:5d}  {kind}")
    if report.review:
        print("to check by hand (a scan cannot rewrite these):")
        print("\n".join(f"  {line}" for line in report.review))
    if report.private_in_public_code:
        print("plugins, examples or docs importing a private module (should use a face):")
        print("\n".join(f"  {line}" for line in report.private_in_public_code))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a run would")
    parser.add_argument("--no-tidy", action="store_true", help="skip ruff's import sorting and formatting")
    arguments = parser.parse_args(argv)
    report = Report()
    names = names_to_privatise(ROOT, report)
    move_modules(names, report, dry_run=arguments.check)
    changed = rewrite_files(names, report, dry_run=arguments.check)
    if not arguments.check and not arguments.no_tidy:
        tidy(changed)
    print_report(report, dry_run=arguments.check)
    return 1 if arguments.check and (report.renamed or report.files) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
