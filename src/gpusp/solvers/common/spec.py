"""What a solver is without importing it: :class:`Param`, :class:`SolverSpec`, memory bounds that also write their
formula (:class:`Bytes`), and the parameters and constants several families share. Nothing here imports Numba, so
the registry, the CLI and the workflow read every family's ``spec.py`` without a GPU stack.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from ...errors import SolverError

PROBLEMS = ("sssp", "apsp")
WARP = 32
MAX_INT32_ARCS = 2**31 - 1  # the most arcs int32 offsets address: past it a graph's indptr is int64
JOHNSON = "johnson"  # negative_weights of a solver that needs w >= 0 yet takes negative ones by reduced weights
GPUS_PARAM = "gpus"  # the parameter of a solver that spreads its work over several GPUs: how many it takes


@dataclass(frozen=True)
class Param:
    """One solver parameter: default, allowed values (``choices``) or an integer range."""

    name: str
    default: Any
    help: str
    choices: tuple | None = None
    minimum: int | None = None
    maximum: int | None = None

    def check(self, value):
        """Return ``value`` converted to the default's type, or raise SolverError naming the problem."""
        kind = type(self.default)
        if kind is bool and isinstance(value, str):
            if value.lower() not in ("true", "false", "1", "0"):
                raise SolverError(f"parameter {self.name}={value!r}: expected true or false")
            value = value.lower() in ("true", "1")
        try:
            value = kind(value) if not isinstance(value, kind) else value
        except (TypeError, ValueError):
            raise SolverError(f"parameter {self.name}={value!r}: expected {kind.__name__}") from None
        if self.choices is not None and value not in self.choices:
            raise SolverError(f"parameter {self.name}={value!r}: allowed values are {list(self.choices)}")
        if self.minimum is not None and value < self.minimum:
            raise SolverError(f"parameter {self.name}={value!r}: must be >= {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise SolverError(f"parameter {self.name}={value!r}: must be <= {self.maximum}")
        return value


# --- memory bounds: one expression gives the bytes and the formula ---------------------------------------------------
class Bytes:
    """A memory bound in bytes: an expression in ``n`` (vertices), ``m`` (arcs), ``w`` (bytes per distance) and the
    solver's parameters, built with ``+``, ``*`` and ``//`` from :data:`N`, :data:`M`, :data:`W`, :func:`par` and the
    helpers below. Calling it gives the bytes; ``str()`` gives the formula the registry shows (:meth:`formula`)."""

    __slots__ = ("fn", "text", "prec", "defs")

    def __init__(self, fn: Callable, text: str, prec: int = 2, defs: tuple = ()):
        self.fn, self.text, self.prec, self.defs = fn, text, prec, defs  # prec: 0 sum, 1 product, 2 atom

    def __call__(self, n: int, m: int, params: dict, itemsize: int) -> int:
        return int(self.fn(int(n), int(m), params, int(itemsize)))

    def __add__(self, other):
        o = lift(other)
        return Bytes(lambda *a: self.fn(*a) + o.fn(*a), f"{self.text} + {o.text}", 0, _defs(self, o))

    def __radd__(self, other):
        return lift(other) + self

    def __mul__(self, other):
        o = lift(other)
        if self.text == o.text and self.prec == 2:
            text = f"{self.text}^2"
        else:
            first, second = (o, self) if o.text.isdigit() and not self.text.isdigit() else (self, o)  # 4(n + 1)
            left, right = (x.text if x.prec else f"({x.text})" for x in (first, second))
            tight = left.isdigit() and (right[0] == "(" or (len(right) == 1 or not right[1].isalnum()))
            text = f"{left}{'' if tight else ' '}{right}"
        return Bytes(lambda *a: self.fn(*a) * o.fn(*a), text, 1, _defs(self, o))

    def __rmul__(self, other):
        return lift(other) * self

    def __floordiv__(self, other):
        o = lift(other)
        left, right = (x.text if x.prec == 2 else f"({x.text})" for x in (self, o))
        return Bytes(lambda *a: self.fn(*a) // max(1, o.fn(*a)), f"{left}/{right}", 1, _defs(self, o))

    def __str__(self) -> str:
        return self.text

    def formula(self) -> str:
        """The formula in words: the expression in bytes, then what each named part stands for."""
        where = "; ".join(f"{name} = {meaning}" for name, meaning in self.defs)
        return f"{self.text} bytes" + (f"; {where}" if where else "")


def _defs(*parts: Bytes) -> tuple:
    out = []
    for part in parts:
        out += [d for d in part.defs if d not in out]
    return tuple(out)


def lift(value) -> Bytes:
    """A number as a constant expression (an expression as itself)."""
    if isinstance(value, Bytes):
        return value
    return Bytes(lambda *a: value, str(value))


N = Bytes(lambda n, m, p, w: n, "n")
M = Bytes(lambda n, m, p, w: m, "m")
W = Bytes(lambda n, m, p, w: w, "w")


def par(name: str) -> Bytes:
    """The value of the solver's parameter ``name``."""
    return Bytes(lambda n, m, p, w: p[name], name)


def derived(symbol: str, fn: Callable, meaning: str) -> Bytes:
    """A quantity the solver derives, ``fn(n, m, params, itemsize)``, written as ``symbol`` and explained once."""
    return Bytes(fn, symbol, 2, ((symbol, meaning),))


def named(label: str, expr: Bytes) -> Bytes:
    """``expr`` written as ``label`` in a formula, with ``label = expr`` explained after it."""
    return Bytes(expr.fn, label, 2, _defs(expr) + ((label, expr.text),))


def note(expr: Bytes, words: str) -> Bytes:
    """``expr`` followed by what it holds, in parentheses."""
    return Bytes(expr.fn, f"{expr.text} ({words})", 0, expr.defs)


def when(test: str, pred: Callable[[dict], bool], expr: Bytes) -> Bytes:
    """``expr`` where ``pred(params)`` holds, else nothing; written ``[expr if test]``."""
    expr = lift(expr)
    return Bytes(lambda n, m, p, w: expr.fn(n, m, p, w) if pred(p) else 0, f"[{expr.text} if {test}]", 2, expr.defs)


def choose(test: str, pred: Callable[[dict], bool], yes: Bytes, no: Bytes) -> Bytes:
    """``yes`` where ``pred(params)`` holds, else ``no``; written ``[yes if test, else no]``."""
    yes, no = lift(yes), lift(no)
    return Bytes(lambda n, m, p, w: yes.fn(n, m, p, w) if pred(p) else no.fn(n, m, p, w),
                 f"[{yes.text} if {test}, else {no.text}]", 2, _defs(yes, no))


def larger(a: Bytes, b: Bytes) -> Bytes:
    """The larger of two bounds."""
    a, b = lift(a), lift(b)
    return Bytes(lambda *x: max(a.fn(*x), b.fn(*x)), f"max({a.text}, {b.text})", 2, _defs(a, b))


NOTHING = lift(0)
# The graph on the device as CSR arrays with a distance and a parent array (int32 parents, a stamp each).
# Bytes of one arc offset: int32 offsets while they address every arc, int64 past that.
OFFSET = derived("o", lambda n, m, p, w: 8 if m > MAX_INT32_ARCS else 4, "bytes per arc offset (8 past 2^31 - 1 arcs)")
CSR = named("CSR", OFFSET * (N + 1) + (4 + W) * M + (2 * W + 8) * N)
# The graph's arrays alone: arc offsets, heads and weights.
GRAPH = named("G", OFFSET * (N + 1) + (4 + W) * M)
# The n x n distance matrix and its int32 predecessor matrix.
MATRIX = (W + 4) * (N * N)


# --- the spec ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SolverSpec:
    """Everything known about a solver without importing it."""

    name: str
    problem: str
    device: str
    paper: str
    summary: str
    impl: str
    params: tuple[Param, ...] = ()
    negative_weights: bool | str = False  # True, False or JOHNSON (by reduced weights, unless reweight=never)
    memory: Bytes = field(default=NOTHING, compare=False)
    max_n: int | None = None
    peer: bool = False
    batched: bool = False  # SSSP: run() takes every source of a job at once (the harness's batch protocol)
    sweeps: bool = False  # batched, with sweep(): every tree reduced on the device (gpusp.measure.alltrees)
    offsets64: bool = False  # takes int64 arc offsets: graphs of more than MAX_INT32_ARCS arcs
    # what else stops it on a graph of n vertices with distances of itemsize bytes under these (resolved) parameters:
    # (n, itemsize, params) -> the reason, or None; the solver raises the same reason when it is built anyway
    limit: Callable[[int, int, dict], str | None] | None = field(default=None, compare=False)

    @property
    def family(self) -> str:
        return self.name.split("_", 1)[0]

    @property
    def variant(self) -> str:
        return self.name.split("_", 1)[1]

    @property
    def memory_formula(self) -> str:
        return self.memory.formula()

    def resolve(self, params: dict | None = None) -> dict:
        """Defaults merged with ``params``, every value checked; unknown names are an error."""
        params = dict(params or {})
        known = {p.name: p for p in self.params}
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise SolverError(f"{self.name} has no parameter {unknown[0]!r}; it takes {sorted(known) or 'none'}")
        return {name: p.check(params.get(name, p.default)) for name, p in known.items()}

    def gpus_of(self, params: dict | None = None) -> int:
        """How many GPUs a job of this solver takes under ``params`` (resolved here): its ``gpus`` parameter where it
        declares one, else 1 for a GPU solver and 0 for a CPU solver."""
        if any(p.name == GPUS_PARAM for p in self.params):
            return int(self.resolve(params)[GPUS_PARAM])
        return 1 if self.device == "gpu" else 0

    def defaults(self) -> dict:
        """Every parameter at its default (unchecked: a default is valid by construction)."""
        return {p.name: p.default for p in self.params}

    def build(self, graph, **params):
        """The solver built on ``graph`` with ``params`` resolved: defaults filled in, every value checked."""
        return self.load()(graph, **self.resolve(params))

    def why_not(self, n: int, m: int, *, negative: bool = False, itemsize: int = 4,
                params: dict | None = None, free_bytes: int | None = None) -> str | None:
        """The reason this solver cannot run on such a graph, or None when it can."""
        if negative and not self.takes_negative(params):
            never = " with reweight=never" if self.negative_weights == JOHNSON else ""
            return f"{self.name} does not accept negative weights{never}"
        if self.max_n is not None and n > self.max_n:
            return f"{self.name} is limited to n <= {self.max_n} (n = {n})"
        if m > MAX_INT32_ARCS and not self.offsets64:
            return f"{self.name} takes int32 arc offsets, m <= 2^31 - 1 (m = {m})"
        if self.limit is not None:
            reason = self.limit(n, itemsize, self.resolve(params))
            if reason:
                return reason
        if free_bytes is not None:
            need = self.memory(n, m, self.resolve(params), itemsize)
            if need > free_bytes:
                return (f"{self.name} needs {need / 2**30:.2f} GiB of device memory ({self.memory_formula}), "
                        f"only {free_bytes / 2**30:.2f} GiB free")
        return None

    def takes_negative(self, params: dict | None = None) -> bool:
        """Whether the solver runs on negative weights under ``params``: natively, or by Johnson's reweighting
        (:mod:`~gpusp.solvers.common.johnson`) unless ``reweight`` is 'never'."""
        if self.negative_weights == JOHNSON:
            return self.resolve(params)["reweight"] != "never"
        return bool(self.negative_weights)

    def load(self):
        """Import and return the solver class (this is where Numba gets imported)."""
        module, _, attr = self.impl.partition(":")
        return getattr(importlib.import_module(module), attr)

    def describe(self) -> str:
        """One line of ``gpusp solvers``: name, problem, device, paper, whether it batches a job's sources, whether
        it takes negative weights (natively or by Johnson's reweighting), and the parameter defaults."""
        params = ", ".join(f"{p.name}={p.default}" for p in self.params)
        batched = "batched " if self.batched else ""
        negative = {True: "negative ", JOHNSON: "johnson "}.get(self.negative_weights, "")
        return f"{self.name:<32} {self.problem:<7} {self.device:<6} {self.paper:<5} {batched}{negative}{params}"

    @staticmethod
    def header() -> str:
        """The column names above :meth:`describe`'s lines."""
        return (f"{'solver':<32} {'problem':<7} {'device':<6} {'paper':<5} "
                "parameters (defaults; batched: a job's sources at once; negative: takes negative weights; johnson: "
                "takes them by Johnson's reweighting)")

    def info(self) -> dict:
        """A JSON-ready description (what ``gpusp solvers`` and :func:`gpusp.solver_info` show)."""
        return {
            "name": self.name,
            "problem": self.problem,
            "family": self.family,
            "variant": self.variant,
            "device": self.device,
            "paper": self.paper,
            "summary": self.summary,
            "negative_weights": self.negative_weights,
            "memory": self.memory_formula,
            "max_n": self.max_n,
            "offsets64": self.offsets64,
            "peer": self.peer,
            "batched": self.batched,
            "sweeps": self.sweeps,
            "gpus": self.gpus_of(),  # at the defaults
            "multi_gpu": any(p.name == GPUS_PARAM for p in self.params),
            "params": {p.name: {"default": p.default, "choices": list(p.choices) if p.choices else None,
                               "minimum": p.minimum, "maximum": p.maximum, "help": p.help}
                       for p in self.params},
        }


# --- parameters and constants several families share ------------------------------------------------------------------
PERSISTENT_BLOCKS_PER_SM = 2  # launch=persistent of the masked Bellman-Ford rounds (edgebf_coo, vertexbf_push)
MATRIX_TILES = (4, 8, 16, 32)  # tile sides the matrix kernels are compiled for (paper 000's 32 the largest)

BLOCK = Param("block", 256, "threads per block", choices=(32, 64, 128, 256, 512, 1024))
LAUNCHER = Param("launcher", "native", "how host-driven kernels are launched: 'native' hands Numba's compiled "
                 "kernel a parameter block built once to the driver (C's cost per launch); 'numba' goes through "
                 "Numba's dispatcher every launch (tens of microseconds of host time each)",
                 choices=("native", "numba"))
REWEIGHT = Param("reweight", "auto", "negative weights: 'auto' runs on Johnson's reduced weights w + h(u) - h(v) >= 0 "
                 "(potentials h from one Bellman-Ford from a virtual source, before the timed runs: counters "
                 "reweight_s, in preprocess_s) and maps the distances back exactly; a negative cycle anywhere in the "
                 "graph is refused, named; 'never' refuses negative weights", choices=("auto", "never"))
LAUNCH = Param("launch", "host", "how rounds are driven: 'host' launches a kernel per round and reads the flag back "
               "(as the paper); 'graph' replays a CUDA graph of a batch of rounds whose kernels exit at once "
               f"after convergence; 'persistent' runs every round in one cooperative kernel ({PERSISTENT_BLOCKS_PER_SM} "
               "blocks per multiprocessor) with a grid-wide barrier between rounds",
               choices=("host", "graph", "persistent"))
SWEEP_GPUS = Param("gpus", 1, "GPUs of this host the every-tree sweep spreads its sources over, one process each "
                   "(gpusp solve --all-sources / --targets: contiguous slices of the sources, the reductions merged in "
                   "source order; a single solve runs on one GPU and refuses more)", minimum=1)


def refuse_split(solver: str, gpus: int) -> None:
    """Refuse ``gpus`` > 1 outside an every-tree sweep, before any work: a single solve is not split over GPUs."""
    if gpus > 1:
        raise SolverError(f"{solver}: gpus={gpus} splits the sources of an every-tree sweep (gpusp solve "
                          "--all-sources / --targets) over GPUs; a single solve runs on one GPU: use gpus=1")
