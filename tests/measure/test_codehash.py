"""The code hash follows the code: a solver's hash changes whenever a file it runs on changes, and only then.

The records of one solver are refused by the aggregate when they come from different code versions, so a hash that
misses a shared module would let results of old and new code be mixed. Each test edits a module in a temporary copy
of the package and compares every solver's hash before and after.
"""

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpusp.solvers.peers import build as peers
from gpusp.measure import codehash
from gpusp.solvers import registry

SPECS = registry.SPECS


@pytest.fixture(scope="module")
def before():
    return {s.name: codehash.code_hash(s) for s in SPECS}


def edited_copy(tmp_path, module: str) -> Path:
    """A copy of the gpusp package with one line added to ``module``'s file; returns the copy's package folder."""
    root = tmp_path / "gpusp"
    shutil.copytree(codehash.ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    path = codehash.module_file(module, root)
    assert path is not None, module
    path.write_text(path.read_text() + "\n# an edit\n")
    return root


def changed_by(tmp_path, before, module: str, specs=SPECS) -> set[str]:
    root = edited_copy(tmp_path, module)
    return {s.name for s in specs if codehash.code_hash(s, root) != before[s.name]}


def names(prefix: str) -> set[str]:
    return {s.name for s in SPECS if s.name.startswith(prefix)}


def test_hashes_are_stable_and_distinct(before):
    assert all(len(h) == 16 and int(h, 16) >= 0 for h in before.values())
    assert before == {s.name: codehash.code_hash.__wrapped__(s) for s in SPECS}  # no state, same again
    assert len(set(before.values())) == len(SPECS)  # the registry entry alone tells solvers of one module apart


@pytest.mark.parametrize("module,must,must_not", [
    ("gpusp.solvers.common.dense", names("minplus_") | names("blockedfw_") | {"floydwarshall_naive", "multisource_fast",
                                                                       "nsssp_shared", "dijkstra_gpunaive"},
     {"deltastep_gpu", "deltastep_async", "edgebf_coo", "gapbs_sssp"}),
    ("gpusp.solvers.deltastep.persistent", {"deltastep_gpu", "deltastep_async"}, names("minplus_") | names("blockedfw_")),
    ("gpusp.solvers.common.launch", {"deltastep_gpu", "multisource_fast", "blockedfw_v41", "blockedfw_fast", "edgebf_coo"},
     {"scipy_dijkstra", "dijkstra_cpu", "gapbs_sssp"}),
    ("gpusp.solvers.floydwarshall.gpu", names("floydwarshall_") - {"floydwarshall_cpu"}, names("minplus_")),
    ("gpusp.solvers.deltastep.gpu", {"deltastep_gpu"}, {"deltastep_async"}),
    ("gpusp.solvers.common.maskedbf", names("edgebf_") | names("vertexbf_") | {"bellmanford_allsources"},
     {"bellmanford_naive"}),
    ("gpusp.solvers.peers.build", {"gapbs_sssp"}, {"deltastep_gpu"}),
    ("gpusp.measure.harness", {s.name for s in SPECS}, set()),
])
def test_an_edit_changes_exactly_the_solvers_that_run_the_module(tmp_path, before, module, must, must_not):
    changed = changed_by(tmp_path, before, module)
    assert must <= changed, f"editing {module} left these hashes unchanged: {sorted(must - changed)}"
    assert not (must_not & changed), f"editing {module} changed unrelated hashes: {sorted(must_not & changed)}"
    expected = {s.name for s in SPECS if module in codehash.solver_modules(s)}
    assert changed == expected


@pytest.mark.parametrize("family,whole", [("blockedfw", {"blockedfw"}), ("edgebf", set()), ("vertexbf", set())])
def test_every_module_of_a_family_folder_reaches_its_solvers(tmp_path, before, family, whole):
    """An edit of any module in a family folder changes the hash of the family's solvers that run it, and of at
    least one; in a folder whose solvers share one package (blockedfw's versions), of every one. (A family's
    spec.py reaches them through the spec's own fields, its parameters and defaults, and through the solver modules
    that import its rules.)"""
    solvers = names(f"{family}_")
    folder = codehash.ROOT / "solvers" / family
    for path in sorted(p for p in folder.glob("*.py") if p.stem != "spec"):
        module = f"gpusp.solvers.{family}" + ("" if path.stem == "__init__" else f".{path.stem}")
        specs = [registry.get(name) for name in sorted(solvers)]
        changed = changed_by(tmp_path / path.stem, before, module, specs)
        runs_it = {s.name for s in specs if module in codehash.solver_modules(s)}
        assert runs_it and changed == runs_it, f"editing {module} changed {sorted(changed)}, runs it: {sorted(runs_it)}"
        if family in whole and path.stem != "__init__":
            versions = solvers - {"blockedfw_fast", "blockedfw_dist"}  # paper 002's versions share the package
            assert versions <= changed, f"editing {module} left {sorted(versions - changed)} unchanged"


def test_a_default_or_a_pinned_peer_changes_the_hash(monkeypatch):
    spec = registry.get("deltastep_gpu")
    other = dataclasses.replace(spec, params=(dataclasses.replace(spec.params[0], default=7),) + spec.params[1:])
    assert codehash.code_hash(other) != codehash.code_hash(spec)
    gapbs = registry.get("gapbs_sssp")
    pinned = codehash.code_hash.__wrapped__(gapbs)
    entry = peers.get_peer("gapbs")
    monkeypatch.setattr(peers, "get_peer", lambda name: {**entry, "commit": "0" * 40})
    assert codehash.code_hash.__wrapped__(gapbs) != pinned


def test_the_closure_holds_every_module_a_solver_imports_at_run_time():
    """The closure is read from import statements; what Python actually loads for the solver's module and the
    harness (beyond what ``import gpusp`` itself loads) must be inside it."""
    script = """
import importlib, json, sys
import gpusp
from gpusp.solvers import registry
facade = {m for m in sys.modules if m.startswith("gpusp")}
out = {}
for spec in registry.SPECS:
    for m in [m for m in sys.modules if m.startswith("gpusp") and m not in facade]:
        del sys.modules[m]
    spec.load()
    out[spec.name] = sorted(m for m in sys.modules if m.startswith("gpusp") and m not in facade)
print(json.dumps(out))
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                         env={**__import__("os").environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert run.returncode == 0, run.stderr[-3000:]
    loaded = json.loads(run.stdout.strip().splitlines()[-1])
    for spec in SPECS:
        static = set(codehash.solver_modules(spec))
        missing = set(loaded[spec.name]) - static - codehash.LEFT_OUT
        assert not missing, f"{spec.name}: loaded at run time but not hashed: {sorted(missing)}"
