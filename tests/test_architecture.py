"""The package layout of docs/architecture.md: every module in a layer, imports only downwards, no cycles.

The layer table is read from the document itself, so the document and the code cannot drift apart.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import gpusp
from gpusp.measure import codehash

ROOT = Path(gpusp.__file__).parent
DOC = Path(__file__).parents[1] / "docs" / "architecture.md"


def layers() -> dict[str, int]:
    """Module or package prefix -> layer number, from the document's table."""
    out = {}
    for line in DOC.read_text().splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|([^|]*)\|", line)
        if m:
            for name in re.findall(r"`(gpusp[\w.]*)`", m[2]):
                out[name] = int(m[1])
    return out


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    return codehash.module_file(name) is not None


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}
GRAPH = {name: codehash.imports_of(name, path) for name, path in MODULES.items()}


def layer_of(name: str, table: dict[str, int]) -> int | None:
    best = max((prefix for prefix in table if name == prefix or name.startswith(prefix + ".")), key=len,
               default=None)
    return table[best] if best else None


def test_the_document_names_a_layer_for_every_module():
    table = layers()
    assert len(set(table.values())) >= 5, f"the layer table of {DOC} was not found: {table}"
    missing = [m for m in MODULES if m != "gpusp" and layer_of(m, table) is None]
    assert not missing, f"modules in no layer of docs/architecture.md: {missing}"
    stale = [prefix for prefix in table if not is_module(prefix)]
    assert not stale, f"docs/architecture.md names modules that do not exist: {stale}"


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m != "gpusp"))
def test_imports_point_down_the_layers(name):
    table = layers()
    mine = layer_of(name, table)
    wrong = {t: layer_of(t, table) for t in GRAPH[name] if t != "gpusp" and layer_of(t, table) > mine}
    assert not wrong, f"{name} (layer {mine}) imports from higher layers: {wrong}"
    assert "gpusp" not in GRAPH[name], f"{name} imports the public facade gpusp/__init__.py"
    assert name in ("gpusp.cli", "gpusp.launch") or "gpusp.cli" not in GRAPH[name], f"{name} imports the command line"


def test_no_import_cycles():
    """Depth-first search over module -> imported modules (package __init__ files included)."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(GRAPH.get(node, ())):
            if nxt == node or nxt not in GRAPH:
                continue
            if state.get(nxt) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for module in sorted(GRAPH):
        if module not in state:
            visit(module)


def test_the_checker_sees_lazy_and_relative_imports():
    """The parser itself: a lazy relative import inside a function is found and resolved."""
    assert "gpusp.measure.job" in GRAPH["gpusp.measure.commands"]  # imported inside solve
    assert "gpusp.solvers.peers.build" in GRAPH["gpusp.solvers.peers.gapbs.solver"]  # `from .. import build as peers`
    assert "gpusp.measure.harness" in GRAPH["gpusp"]


# --- inside gpusp.solvers: a family is a folder -----------------------------------------------------------------------
SOLVERS = "gpusp.solvers"


def solver_roles() -> dict[str, str]:
    """Module or package -> role ('floor' or 'index') from the document's solver table; the rest are families."""
    out = {}
    for line in DOC.read_text().splitlines():
        m = re.match(r"\|\s*(floor|index)\s*\|([^|]*)\|", line)
        if m:
            for name in re.findall(r"`(gpusp\.solvers\.[\w.]+)`", m[2]):
                out[name] = m[1]
    return out


def role_of(name: str) -> str | None:
    roles = solver_roles()
    best = max((p for p in roles if name == p or name.startswith(p + ".")), key=len, default=None)
    return roles[best] if best else None


def family_of(name: str) -> str | None:
    """The family package a solvers module belongs to (gpusp.solvers.<family> or gpusp.solvers.peers.<family>), None
    for floors and the index."""
    if not name.startswith(SOLVERS + ".") or role_of(name):
        return None
    parts = name.split(".")
    depth = 4 if parts[2] == "peers" else 3
    return ".".join(parts[:depth]) if len(parts) >= depth else None


def test_the_document_names_the_solver_floors():
    roles = solver_roles()
    assert {"floor", "index"} <= set(roles.values()), f"the solver table of {DOC} was not found: {roles}"
    stale = [m for m in roles if m not in MODULES]
    assert not stale, f"docs/architecture.md names solver modules that do not exist: {stale}"
    homeless = [m for m in MODULES if m.startswith(SOLVERS + ".") and not role_of(m) and not family_of(m)
                and not (MODULES[m].name == "__init__.py" and not GRAPH[m])]  # a folder's docstring
    assert not homeless, f"modules of gpusp.solvers in no floor, index or family folder: {homeless}"


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith(SOLVERS + ".")))
def test_no_solver_family_imports_another(name):
    mine, role = family_of(name), role_of(name)
    targets = {t for t in GRAPH[name] if t.startswith(SOLVERS + ".")}
    if role == "floor":
        wrong = {t for t in targets if role_of(t) != "floor"}
        assert not wrong, f"floor {name} imports what is not a floor: {sorted(wrong)}"
        return
    if role == "index":
        wrong = {t for t in targets if family_of(t) and not t.endswith(".spec") and t != family_of(t)}
        assert not wrong, f"index {name} imports families' code beyond their spec modules: {sorted(wrong)}"
        return
    others = {t for t in targets if family_of(t) not in (None, mine)}
    assert not others, f"{name} (family {mine}) imports other families: {sorted(others)}"
    index = {t for t in targets if role_of(t) == "index" and t != f"{SOLVERS}.registry"}
    assert not index, f"family module {name} imports {sorted(index)}"


def test_every_solver_lives_in_the_folder_its_name_names():
    """`<family>_<variant>`: the solver's class, and the spec that lists it, are in the folder <family>."""
    from gpusp.solvers.registry import FAMILIES, SPECS

    folders = {f.rsplit(".", 1)[1]: f for f in FAMILIES}
    wrong = [(s.name, s.impl) for s in SPECS
             if s.family not in folders or not s.impl.startswith(folders[s.family] + ".")]
    assert not wrong, f"solvers whose code is not in their family's folder: {wrong}"
    empty = [f for f in FAMILIES if not any(s.family == f.rsplit(".", 1)[1] for s in SPECS)]
    assert not empty, f"family folders that register no solver: {empty}"


def test_every_family_has_its_design_document():
    """docs/solvers/<family>.md (the peers: docs/peers.md) exists and names each of the family's solvers."""
    from gpusp.solvers.registry import FAMILIES, SPECS

    docs = Path(__file__).parents[1] / "docs"
    for family in FAMILIES:
        folder = family.rsplit(".", 1)[1]
        doc = docs / "peers.md" if ".peers." in family else docs / "solvers" / f"{folder}.md"
        assert doc.is_file(), f"{family}: no design document {doc}"
        text = doc.read_text()
        missing = [s.name for s in SPECS if s.family == folder and s.name not in text]
        assert not missing, f"{doc} does not name {missing}"


def test_a_kernel_signature_is_written_at_its_kernel():
    """Every `void(...)` signature string in the package is an argument of an `@kernel(...)` record (the compile
    gate's list is made from those), and no module keeps a hand-written compile_targets()."""
    loose, legacy = [], []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text())
        inside = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}  # docstrings
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "kernel":
                inside |= {id(n) for arg in [*node.args, *(k.value for k in node.keywords)] for n in ast.walk(arg)}
            if isinstance(node, ast.FunctionDef) and node.name == "compile_targets":
                legacy.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}")
        loose += [f"{path.relative_to(ROOT.parent)}:{node.lineno}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and "void(" in node.value
                  and id(node) not in inside]
    assert not loose, "signature strings written apart from their kernel: " + ", ".join(loose)
    assert not legacy, "hand-written compile_targets(): " + ", ".join(legacy)


def test_the_registry_imports_without_numba():
    """The CLI lists solvers, the workflow plans jobs and the code hash reads the registry without a GPU stack."""
    code = ("import sys; import gpusp.solvers.registry as r; r.list_solvers(); "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'numba_cuda')); "
            "assert not bad, bad")
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]


def test_the_checker_sees_a_family_importing_another():
    """The rule itself: an import of another family's module is caught, one of a floor is not."""
    assert family_of("gpusp.solvers.minplus.squaring") == "gpusp.solvers.minplus"
    assert family_of("gpusp.solvers.peers.gapbs.solver") == "gpusp.solvers.peers.gapbs"
    assert family_of("gpusp.solvers.common.dense") is None and family_of("gpusp.solvers.registry") is None
    assert "gpusp.solvers.common.dense" in GRAPH["gpusp.solvers.minplus.squaring"]  # a floor, allowed
    assert family_of("gpusp.solvers.blockedfw.fast.solver") == family_of("gpusp.solvers.blockedfw.layout")


# --- sizes, and no history in the code ---------------------------------------------------------------------------------
MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 150


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_and_functions_stay_small(name):
    path = MODULES[name]
    lines = path.read_text().count("\n")
    assert lines <= MAX_MODULE_LINES, f"{path} has {lines} lines (at most {MAX_MODULE_LINES}): split it"
    long = [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, f"{path}: functions over {MAX_FUNCTION_LINES} lines: {long}"


MAX_DOCSTRING_LINES = 30


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_module_docstring_says_what_the_module_is_in_a_few_lines(name):
    """Design essays live in docs/ (a family's in docs/solvers/<family>.md), not in module docstrings."""
    text = ast.get_docstring(ast.parse(MODULES[name].read_text()), clean=False) or ""
    lines = text.count("\n") + 1 if text else 0
    assert lines <= MAX_DOCSTRING_LINES, f"{MODULES[name]}: a module docstring of {lines} lines (at most " \
                                         f"{MAX_DOCSTRING_LINES}): move the design to docs/"


DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")


def test_no_date_in_the_package():
    """Dates, call ids and before -> after timings belong in benchmarks/*.md and git history, not in code or help."""
    found = [f"{p.relative_to(ROOT.parent)}:{i}: {line.strip()[:80]}" for p in sorted(ROOT.rglob("*"))
             if p.suffix == ".py" for i, line in enumerate(p.read_text().splitlines(), 1)
             if DATE.search(line)]
    assert not found, "dates in src/gpusp:\n" + "\n".join(found)


def test_no_solver_parameter_shadows_the_harness():
    """Parameters reach the solver through the harness's ``**params``: one named like the harness's own arguments
    (a graph, a source, trials) would collide there for every job of that solver."""
    import inspect

    from gpusp.measure import harness
    from gpusp.solvers.registry import SPECS

    reserved = set()
    for fn in (harness.solve, harness.solve_many):
        reserved |= {p.name for p in inspect.signature(fn).parameters.values() if p.kind != p.VAR_KEYWORD}
    clashes = sorted((spec.name, p.name) for spec in SPECS for p in spec.params if p.name in reserved)
    assert clashes == [], f"parameters named like harness arguments {sorted(reserved)}: {clashes}"
