"""Every GPU kernel compiles to sm_90 PTX offline and links as sm_90 machine code under its launch bounds (what the
simulator, which does no typing and has no shared-memory or register limits, hides).

One test per kernel, so that pytest-xdist spreads the compiles over the cores beside the other tests. The kernels
are listed at collection (in the simulator: labels only, nothing compiled); each pytest process compiles them
through one helper process of its own without the simulator (``python -m gpusp.solvers.compilecheck --serve``),
which imports Numba's CUDA target and NVVM once instead of once per kernel. A test checks that the helper, outside
the simulator, lists exactly the kernels collected here, so no kernel escapes the gate. Every kernel and case is
compiled, in a set of its cases in which every value of each of its compile-time options appears (tile sizes: the
smallest and largest; cases that compile the same function with the same signature once);
``python -m gpusp.solvers.compilecheck`` compiles every case, pairs of values included.
"""

import json
import os
import subprocess
import sys

import pytest

from gpusp.solvers.common.gate import budgets
from gpusp.solvers.compilecheck import listing, module_targets, modules

TARGETS, PROBLEMS = listing()
TILE_KEYS = ("B", "tile")


def options(label: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A target's kernel name and its case as (option, value) pairs; an unnamed value is named by its place."""
    name, _, tag = label.partition("[")
    pairs = []
    for place, item in enumerate(tag.rstrip("]").split(",") if tag else []):
        key, eq, value = item.partition("=")
        pairs.append((key, value) if eq else (f"#{place}", item))
    return name, tuple(pairs)


def distinct_compiles(targets: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """All targets but those whose Python function and signature an earlier one has: the gate compiles a kernel's
    function without its launch bounds, so cases that differ only in those (a block size) give the same PTX."""
    built = {(module, label): (getattr(k, "py_func", k), sig)
             for module in dict.fromkeys(module for module, _ in targets) for label, k, sig in module_targets(module)}
    seen, keep = set(), []
    for target in targets:
        if built[target] not in seen:
            seen.add(built[target])
            keep.append(target)
    return keep


def tile_extremes(targets: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """All targets, except that of the cases of one kernel that differ only in their tile size (a compile-time
    constant that changes no type), only the smallest and largest tile."""
    keep, tiled = set(), {}
    for i, (module, label) in enumerate(targets):
        name, items = options(label)
        tiles = [int(value) for key, value in items if key in TILE_KEYS]
        if tiles:
            rest = tuple(item for item in items if item[0] not in TILE_KEYS)
            tiled.setdefault((module, name, rest), []).append((tiles[0], i))
        else:
            keep.add(i)
    for members in tiled.values():
        keep |= {min(members)[1], max(members)[1]}
    return [t for i, t in enumerate(targets) if i in keep]


def each_value(targets: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Of each kernel's cases, a set in which every value of every option that its cases hold appears in at least
    one (chosen greedily: the case that adds the most values, the first on a tie); the targets in their order.
    Kernels without options keep their one case."""
    kernels = {}
    for i, (module, label) in enumerate(targets):
        name, items = options(label)
        kernels.setdefault((module, name), []).append((i, set(items)))
    keep = set()
    for cases in kernels.values():
        missing = set().union(*(values for _, values in cases))
        while True:
            i, values = max(cases, key=lambda case: (len(case[1] & missing), -case[0]))
            keep.add(i)
            missing -= values
            if not missing:
                break
    return [t for i, t in enumerate(targets) if i in keep]


COMPILED = each_value(tile_extremes(distinct_compiles(TARGETS)))
# the kernels whose launch assumes a register budget (@kernel(..., registers=...)): their compiled cases are held
# to it
BUDGETS = {(module, label): budget for module in dict.fromkeys(m for m, _ in TARGETS)
           for label, budget in budgets(module).items()}

pytestmark = pytest.mark.timeout(600)


class Compiler:
    """The compile helper of this pytest process, started at the first request and again after it died."""

    def __init__(self, log):
        self.log = log
        self.proc = None

    def ask(self, request: dict) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
            with open(self.log, "ab") as err:
                self.proc = subprocess.Popen([sys.executable, "-m", "gpusp.solvers.compilecheck", "--serve"], env=env,
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except BaseException:  # a timeout mid-compile: the reply would answer the next request, so start afresh
            self.close()
            raise
        if not line:
            code = self.proc.wait()
            tail = self.log.read_text(errors="replace")[-4000:]
            self.proc = None
            pytest.fail(f"the compile helper exited {code} on {request}:\n{tail}", pytrace=False)
        return json.loads(line)

    def close(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


@pytest.fixture(scope="session")
def compiler(tmp_path_factory):
    helper = Compiler(tmp_path_factory.mktemp("compilecheck") / "helper.log")
    yield helper
    helper.close()


def test_every_gpu_solver_module_lists_its_kernels():
    from gpusp.solvers.registry import SPECS

    gpu_modules = {s.impl.split(":")[0] for s in SPECS if s.device == "gpu"}
    assert gpu_modules <= set(modules())


@pytest.mark.compile
def test_the_gate_compiles_every_kernel_a_module_lists(compiler):
    """The kernels collected here are those every module lists outside the simulator, each listed once."""
    assert PROBLEMS == []
    assert TARGETS, "no kernel listed"
    reply = compiler.ask({"list": True})
    assert reply["problems"] == []
    assert [tuple(pair) for pair in reply["targets"]] == TARGETS


def test_every_kernel_and_every_option_value_is_compiled():
    def covered(targets):
        out = {}
        for module, label in targets:
            name, items = options(label)
            out.setdefault((module, name), set()).update(items)
        return out

    extremes = tile_extremes(distinct_compiles(TARGETS))
    assert covered(COMPILED) == covered(extremes)  # every kernel, every value of each of its options
    assert len(COMPILED) < len(extremes) < len(TARGETS)
    labels = {label for _, label in extremes}
    assert "global_kernels.rat3[B=4,dtype_name=int64,paths=True]" in labels
    assert "global_kernels.rat3[B=32,dtype_name=int64,paths=True]" in labels
    assert "global_kernels.rat3[B=16,dtype_name=int64,paths=True]" not in labels
    assert "clusters_wave[block=1024]" in labels and "clusters_wave[block=512]" not in labels  # launch bounds only
    assert options("k3[T=64,kind=dpx,int32]") == ("k3", (("T", "64"), ("kind", "dpx"), ("#2", "int32")))


@pytest.mark.compile
@pytest.mark.parametrize("module,label", COMPILED, ids=[f"{m.removeprefix('gpusp.solvers.')}:{t}" for m, t in COMPILED])
def test_kernel_compiles_for_sm90(compiler, module, label):
    """PTX, then sm_90 machine code linked as the driver would load it (under the kernel's launch bounds)."""
    reply = compiler.ask({"compile": [module, label], "resources": True})
    assert reply["ok"], f"{module}:{label}: {reply['error']}"
    assert reply["chars"] > 0 and reply["registers"] > 0
    budget = BUDGETS.get((module, label))
    if budget:  # the blocks per multiprocessor its launch counts on fit, and nothing spills to local memory
        assert reply["registers"] <= budget and reply["spill_stores"] == 0, f"{module}:{label}: {reply}"


@pytest.mark.compile
def test_persistent_floyd_warshall_shared_memory_is_what_the_solver_counts(compiler):
    """blockedfw_fast refuses launch=persistent where variants.persistent_shared passes SMEM_MAX (such a module
    does not load); the linked kernels hold exactly that much, plus the 1,024 bytes sm_90 reserves a block that
    uses shared memory."""
    from gpusp.solvers.blockedfw.fast.variants import persistent_shared

    module = "gpusp.solvers.blockedfw.fast.kernels"
    persistent = [label for m, label in COMPILED if m == module and label.startswith("kernels.persistent[")]
    assert not [label for label in persistent if "T=128" in label]  # refused, so not built
    for label in [persistent[0], next(label for label in persistent if "inner=vec4" in label)]:
        case = dict(options(label)[1])
        reply = compiler.ask({"compile": [module, label], "resources": True})
        assert reply["ok"], reply.get("error")
        need = persistent_shared(int(case["T"]), 8 if case["kind"] == "gen64" else 4, case["inner"],
                                 int(case["unroll"]), case["stage"])
        assert reply["shared"] == need + 1024, (label, reply)


def test_register_budgets_are_checked_on_compiled_cases():
    checked = {key for key in BUDGETS if key in COMPILED}
    assert ("gpusp.solvers.deltastep.gpu", "nearfar_kernel[int64,o=int64]") in checked
    assert {label.partition("[")[0] for _, label in checked} == {label.partition("[")[0] for _, label in BUDGETS}
