"""The package layout of docs/architecture.md: every module in a layer, imports only downwards, no cycles.

The layer table is read from the document itself, so the document and the code cannot drift apart.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import gpusp

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
    rel = Path(*name.split("."))
    return (ROOT.parent / rel).with_suffix(".py").exists() or (ROOT.parent / rel / "__init__.py").exists()


def imports(path: Path) -> set[str]:
    """Every gpusp module ``path`` imports, at module level or inside functions."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "gpusp")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "gpusp":
                continue
            subs = [f"{target}.{a.name}" for a in node.names if is_module(f"{target}.{a.name}")]
            found.update(subs if len(subs) == len(node.names) else subs + [target])
    return found


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}
GRAPH = {name: imports(path) for name, path in MODULES.items()}


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
    assert name == "gpusp.cli" or "gpusp.cli" not in GRAPH[name], f"{name} imports the command line"


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
    assert "gpusp.measure.job" in GRAPH["gpusp.cli"]  # imported inside cmd_solve
    assert "gpusp.data.peers" in GRAPH["gpusp.solvers.gapbs"]  # `from ..data import peers`
    assert "gpusp.measure.harness" in GRAPH["gpusp"]
