"""The code a solver runs, and a hash of it that changes whenever that code does.

A solver's record carries ``code_hash`` so that the aggregate never mixes results of different code versions. The
hash covers every file of the solver's import closure inside gpusp: its module, every gpusp module that module
imports (at module level or inside functions, relative or absolute), theirs in turn, with the packages they live in,
and the same for the timing harness that measures it; plus the solver's registry entry as values (its parameters'
defaults, choices and ranges) and, for a peer, the pinned source it is built from (and gpusp's driver of it, a C++
file that no import names). The closure is read from the source files' import statements (no module is imported),
so it is what a reader of the code sees.

Left out on purpose: the public facade ``gpusp/__init__.py`` and the registry module, which index every solver (an
edit there would change every hash); the solver's own entry stands in for the registry. A solver whose parameter
names other solvers (``bellmanford_allsources``) also covers their closures.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the gpusp package folder
HARNESS = "gpusp.measure.harness"
# never part of what a solver runs on: the facade, the table of solvers, and the kernels' signature records for the
# offline compile gate (every kernel module imports them; an edit there changes no answer or time)
LEFT_OUT = frozenset({"gpusp", "gpusp.solvers.registry", "gpusp.solvers.common.gate"})


def module_file(name: str, root: Path = ROOT) -> Path | None:
    """The source file of module ``name`` (``gpusp.x.y``) under ``root``, or None when it is not one."""
    parts = name.split(".")
    if parts[0] != "gpusp":
        return None
    base = root.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@functools.cache
def imports_of(name: str, path: Path, root: Path = ROOT) -> frozenset[str]:
    """The gpusp modules that ``path`` (module ``name``) imports, module level and lazy ones alike: ``from x import
    y`` names module ``x.y`` where y is a module, else ``x`` (tests/test_architecture.py reads the layers with it).
    Read once per process and file, like :func:`code_hash`: every solver's closure passes through the shared modules."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "gpusp")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "gpusp":
                continue
            subs = [f"{target}.{a.name}" for a in node.names if module_file(f"{target}.{a.name}", root)]
            found.update(subs if len(subs) == len(node.names) else subs + [target])
    return frozenset(found)


def _with_packages(name: str) -> list[str]:
    """``name`` and the packages above it, which Python runs first when it imports ``name``."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def closure(roots, root: Path = ROOT) -> list[str]:
    """Every gpusp module the modules ``roots`` run on, ``roots`` included, sorted (see the module docstring)."""
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        for mod in _with_packages(name):
            if mod in seen or mod in LEFT_OUT:
                continue
            path = module_file(mod, root)
            if path is None:
                continue
            seen.add(mod)
            todo.extend(imports_of(mod, path, root))
    return sorted(seen)


def solver_modules(spec, root: Path = ROOT) -> list[str]:
    """The closure of a solver (a registry spec): its module, the harness, and the solvers its parameters name."""
    from ..solvers import registry

    roots = [spec.impl.split(":")[0], HARNESS]
    for param in spec.params:
        if param.choices and all(isinstance(c, str) and c in registry.REGISTRY for c in param.choices):
            roots += [registry.get(c).impl.split(":")[0] for c in param.choices]
    return closure(roots, root)


def _spec_value(spec) -> str:
    """The registry entry of a solver as values: what a run depends on, not how the registry is written."""
    params = [(p.name, p.default, p.choices, p.minimum, p.maximum) for p in spec.params]
    value = {"name": spec.name, "problem": spec.problem, "impl": spec.impl, "params": params,
             "negative_weights": spec.negative_weights, "max_n": spec.max_n, "peer": spec.peer}
    return json.dumps(value, sort_keys=True, default=str)


def _modules_hash(mods: list[str], root: Path):
    """A sha256 fed each module's name and file bytes, in the order given."""
    h = hashlib.sha256()
    for mod in mods:
        h.update(mod.encode() + b"\0" + module_file(mod, root).read_bytes() + b"\0")
    return h


@functools.cache
def code_hash(spec, root: Path = ROOT) -> str:
    """sha256 (16 hex digits) of a solver's code: every file of its closure, its registry entry, its pinned peer
    (computed once per process and folder: the files do not change under a running benchmark)."""
    h = _modules_hash(solver_modules(spec, root), root)
    h.update(_spec_value(spec).encode())
    if spec.peer:
        from ..solvers.peers import build as peers

        entry = peers.get_peer(spec.family)
        pinned = {key: entry.get(key) for key in ("commit", "sha256", "sha256_content", "targets")}
        if entry.get("driver"):  # gpusp's own driver of the peer (Gunrock's): its source is the peer's code too
            driver = root / "solvers" / "peers" / entry["driver"]  # beside peers.yaml (cudabuild.driver_text)
            pinned["driver_sha256"] = hashlib.sha256(driver.read_bytes()).hexdigest()
        h.update(json.dumps(pinned, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


@functools.cache
def auto_code_hash(root: Path = ROOT) -> str:
    """sha256 (16 hex digits) of what ``--solver auto`` runs on: the table's module closure and the code of every
    solver it may pick (:func:`code_hash`), so that editing the table or one of those solvers reruns its jobs."""
    from ..solvers import auto

    h = _modules_hash(closure(["gpusp.solvers.auto"], root), root)
    for spec in auto.candidate_specs():
        h.update(code_hash(spec, root).encode())
    return h.hexdigest()[:16]
