"""DESIGN's direction of data flow, held by reading every module's imports with `ast`:

variants -> collect -> parse -> analyze -> store -> render -> (pipeline, CLI, ...)

A module imports only from its own layer, the layers to its left, and the leaf modules every
layer shares (schema, errors, ranges, the Study API, files, defaults). The tool never imports
a study (only the worker process loads one, by reference). `analyze` never imports plotly or
jinja2; `parse`, `analyze` and `render` never start a process. No two modules import each other,
directly or through others, not even inside a function or for type checking.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LEAVES = {
    "profiler",
    "profiler.schema",
    "profiler.tablecsv",
    "profiler.errors",
    "profiler.ranges",
    "profiler.study",
    "profiler.files",
    "profiler.defaults",
    "profiler.crashlog",
    "profiler.progress",
}
LAYERS = [  # (prefix, rank): the first prefix that matches a module gives its layer
    ("variants", 0),
    ("profiler.collect", 1),
    ("profiler.parse", 2),
    ("profiler.analyze", 3),
    ("profiler.store", 4),
    ("profiler.render", 5),
    ("profiler", 6),  # settings, sweep_steps, pipeline, importer, baseline, cli
]
NO_PROCESS = ("profiler.parse", "profiler.analyze", "profiler.render")
PROCESS_MODULES = {"subprocess", "multiprocessing", "pty"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    module_name(p): p
    for top in ("profiler", "variants")
    for p in sorted((ROOT / top).rglob("*.py"))
}


def imports(path: Path, top_level_only: bool = False) -> set[str]:
    """Every module `path` imports (at module level only, when asked), as absolute names."""
    tree = ast.parse(path.read_text(), filename=str(path))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    if top_level_only:  # `if TYPE_CHECKING:` blocks import nothing at run time
        nodes = [n for n in nodes if not (isinstance(n, ast.If) and "TYPE_CHECKING" in ast.dump(n))]
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def ours(names: set[str]) -> set[str]:
    """The profgen modules among `names` (`from pkg import mod` counts as importing mod)."""
    return {n for n in names if n in MODULES}


def rank(module: str) -> int:
    return next(r for prefix, r in LAYERS if module == prefix or module.startswith(prefix + "."))


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_flow_one_way(module: str) -> None:
    bad = []
    for dep in ours(imports(MODULES[module])):
        if dep == module or dep in LEAVES:
            continue
        if module in LEAVES:
            bad.append(f"{dep} (a leaf imports only leaves)")
        elif module.startswith("profiler") and dep.startswith("variants"):
            bad.append(f"{dep} (only the worker loads a study, by reference)")
        elif rank(dep) > rank(module):
            bad.append(f"{dep} (layer {rank(dep)} is right of layer {rank(module)})")
    assert not bad, f"{module} imports " + ", ".join(bad)


@pytest.mark.parametrize("module", [m for m in sorted(MODULES) if m.startswith(NO_PROCESS)])
def test_parse_analyze_render_start_no_process(module: str) -> None:
    found = {n.split(".")[0] for n in imports(MODULES[module])} & PROCESS_MODULES
    assert not found, f"{module} imports {found}"


@pytest.mark.parametrize("module", [m for m in sorted(MODULES) if m.startswith("profiler.analyze")])
def test_analyze_never_draws(module: str) -> None:
    found = {n.split(".")[0] for n in imports(MODULES[module])} & {"plotly", "jinja2"}
    assert not found, f"{module} imports {found}"


def test_no_import_cycles() -> None:
    graph = {m: ours(imports(p)) - {m} for m, p in MODULES.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycles.append(path[path.index(dep) :] + [dep])
            elif dep not in state:
                visit(dep, [*path, dep])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_rules_can_fail(tmp_path: Path) -> None:
    """The checks see what they should: a planted upward import and a planted cycle."""
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("from profiler.render import html\nimport subprocess\n")
    b.write_text("if TYPE_CHECKING:\n    import profiler.pipeline\ndef f():\n    import plotly\n")
    assert {"profiler.render", "profiler.render.html", "subprocess"} <= imports(a)
    assert "plotly" in imports(b) and "profiler.pipeline" not in imports(b, top_level_only=True)
    assert rank("profiler.render.html") > rank("profiler.parse.nvprof")


def test_tests_import_their_helpers_as_ci_does() -> None:
    """tox runs `pytest`, which puts tests/ (not the checkout) on sys.path: a helper imported
    as `tests.x` works under `python -m pytest` here and fails to collect in CI."""
    found = []
    for path in sorted(Path(__file__).parent.rglob("*.py")):
        if "data" in path.relative_to(Path(__file__).parent).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            found += [f"{path.name}: {n}" for n in names if n == "tests" or n.startswith("tests.")]
    assert not found, found
