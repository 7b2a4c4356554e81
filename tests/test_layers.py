"""The package's layers: no module imports one of a higher layer, at the top of a file or inside a function;
no import cycles; imports inside a function only defer a dependency, and say so.

Layers, lowest first (a module may import its own layer and those below):

0. base: errors, file writing, grids, JSON-schema messages, numba's start-up.
1. engine: analysis, collections, index, query features, models, scoring, feedback, evaluation
   (measures, ties, statistics), query sets, the synthetic collection.
2. papers: constraint counting, phrase identification and weights, parsing, sentence trees.
3. workflow glue: config, cli, jobs, chunk jobs, report, tables and figures, housekeeping, and each
   paper's experiment-level tables (axioms.experiment).

KNOWN_UPWARD lists the imports that still run up, each with why; a new one fails, and so does a
listed one that is gone (the list only shrinks).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import irgrid

PACKAGE = Path(irgrid.__file__).parent

LAYERS = {
    **dict.fromkeys(["errors", "io", "schema_errors", "grid", "numba_start"], 0),
    **dict.fromkeys(["aot", "analysis", "collections", "index", "features", "models", "retrieve", "evaluation",
                     "querysets", "feedback", "runs"], 1),
    **dict.fromkeys(["axioms", "phrases", "parsing", "sentences"], 2),
    **dict.fromkeys(["config", "experiment_checks", "cli", "jobs", "report", "tables", "housekeeping",
                     "__main__", "axioms.experiment"], 3),
}

# (importing module, imported module): why it still runs up
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def _module_name(path: Path, package: Path | None = None) -> str:
    parts = list(path.relative_to((package or PACKAGE).parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int | None:
    parts = module.split(".")[1:]
    for depth in range(len(parts), 0, -1):
        name = ".".join(parts[:depth])
        if name in LAYERS:
            return LAYERS[name]
    return None


def _from_target(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` statement imports from, made absolute from ``package``
    (the importing module's package)."""
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(path: Path):
    """(imported irgrid module, line) of every import in the file, top level or in a function."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            target = _from_target(node, package)
            names = [f"{target}.{alias.name}" for alias in node.names]
            for name in [target, *names]:
                if name.startswith("irgrid.") and _layer(name) is not None:
                    yield name, node.lineno
                    break
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("irgrid."):
                    yield alias.name, node.lineno


def _upward_imports() -> dict[tuple[str, str], str]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        own = _layer(module)
        if own is None:
            continue
        for target, line in _imports(path):
            if _layer(target) > own:
                found[(module, target)] = f"{path.relative_to(PACKAGE.parent)}:{line}"
    return found


def test_every_module_has_a_layer():
    unplaced = sorted(_module_name(path) for path in PACKAGE.rglob("*.py")
                      if _module_name(path) != "irgrid" and _layer(_module_name(path)) is None)
    assert not unplaced, f"give these modules a layer in LAYERS: {unplaced}"


def test_no_new_import_runs_up_a_layer():
    found = _upward_imports()
    new = {pair: where for pair, where in found.items() if pair not in KNOWN_UPWARD}
    assert not new, f"imports from a lower layer to a higher one: {new}"


def test_the_known_upward_imports_are_still_there():
    """A listed exception that is gone comes off the list."""
    gone = sorted(set(KNOWN_UPWARD) - set(_upward_imports()))
    assert not gone, f"remove from KNOWN_UPWARD: {gone}"


def _fake_package(root: Path, files: dict[str, str]) -> Path:
    """A package ``irgrid`` under ``root`` holding ``files`` (path inside the package -> source)."""
    for name, text in files.items():
        path = root / "irgrid" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "irgrid"


def test_the_layer_check_sees_an_upward_import(tmp_path, monkeypatch):
    """The scan finds an engine module importing glue (the test's own check)."""
    fake = _fake_package(tmp_path, {"__init__.py": "", "models/__init__.py": "",
                                    "models/bad.py": "def f():\n    from ..tables import x\n", "tables.py": "x = 1\n"})
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    assert ("irgrid.models.bad", "irgrid.tables") in _upward_imports()


STDLIB = sys.stdlib_module_names


def _function_local_imports():
    """(file:line, module, why) of every import inside a function; ``why`` is the comment that says why
    it is there (on its line, or in the three lines above it and its block of imports), or None."""
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for function in ast.walk(ast.parse(text)):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                module = ("." * node.level + (node.module or "")) if isinstance(node, ast.ImportFrom) \
                    else node.names[0].name
                line = lines[node.lineno - 1]
                why = line.split("#", 1)[1].strip() if "#" in line else ""
                if why.startswith("noqa"):
                    why = ""
                top = node.lineno - 1
                while top > 0 and lines[top - 1].strip().startswith(("import ", "from ")):
                    top -= 1
                above = [lines[i].strip() for i in range(max(0, top - 3), top)]
                why = why or next((text[1:].strip() for text in reversed(above) if text.startswith("#")), None)
                yield f"{path.relative_to(PACKAGE.parent)}:{node.lineno}", module, why


def test_function_local_imports_defer_a_dependency_and_say_why():
    """An import inside a function is there to defer a heavy or optional dependency, and says so in a
    comment; the standard library is imported at the top of the module."""
    found = list(_function_local_imports())
    assert found, "the scan finds the package's deferred imports"
    stdlib = [where for where, module, _ in found if module.split(".")[0] in STDLIB]
    assert not stdlib, f"import the standard library at the top of the module: {stdlib}"
    silent = [f"{where} ({module})" for where, module, why in found if not why]
    assert not silent, f"function-local imports without a comment saying why: {silent}"


def test_the_local_import_scan_sees_a_silent_import(tmp_path, monkeypatch):
    """The scan tells a commented deferral from a silent one (the test's own check)."""
    fake = _fake_package(tmp_path, {"__init__.py": "", "mod.py": "def f():\n    # deferred: heavy\n    import scipy\n\n\n"
                                                                "def g():\n    x = 1\n    import numpy\n    return x\n"})
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    whys = {where.rsplit(":", 1)[1]: why for where, _, why in _function_local_imports()}
    assert whys == {"3": "deferred: heavy", "8": None}


def _module_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (at the top or in a function); ``from X import y``
    counts as importing X.y where y is a module, else X."""
    files = {_module_name(path, package): path for path in sorted(package.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        own_package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        edges = graph.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                target = _from_target(node, own_package)
                for alias in node.names:
                    name = f"{target}.{alias.name}"
                    edges.add(name if name in files else target)
            elif isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names)
        edges &= files.keys()
        edges.discard(module)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles():
    """No module imports, through any chain of imports (top level or in a function), one that imports it."""
    assert _cycles(_module_graph(PACKAGE)) == []


def test_the_cycle_check_sees_a_cycle(tmp_path):
    fake = _fake_package(tmp_path, {"__init__.py": "", "engine/__init__.py": "from .a import x\n",
                                    "engine/a.py": "x = 1\n\n\ndef f():\n    from ..b import y\n    return y\n",
                                    "b.py": "from irgrid.engine import a\ny = 2\n"})
    assert _cycles(_module_graph(fake)) == [["irgrid.b", "irgrid.engine.a"]]
