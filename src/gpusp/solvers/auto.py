"""``auto``: the SSSP solver the committed benchmarks measured fastest on graphs like this one, picked from what the
graph shows. :class:`Features` are the graph's size, degree spread, weights and hop depth; :data:`RULES` is the table,
rows of conditions -> a registry solver and its parameters, each citing the benchmark it comes from; :func:`pick`
takes the first row whose conditions hold and whose solver accepts the graph (its own limits, memory and negative
weights, as :meth:`SolverSpec.why_not` says). auto is a resolution step over registry names, not a solver: the record
names the solver picked and carries :meth:`Pick.info` (the row, the features, the rows passed over and why).
Nothing here imports Numba. The rows' evidence and exceptions: docs/solvers/auto.md.
"""

from __future__ import annotations

import operator
from dataclasses import asdict, dataclass, field

from ..errors import SolverError
from . import registry

AUTO = "auto"
SUMMARY = ("the fastest validated SSSP solver for the graph, picked by the table of gpusp.solvers.auto from its "
           "size, degree spread, weights and hop depth (docs/solvers/auto.md)")

TINY_ARCS = 4096  # ring-4096: a CPU search of 4,096 arcs takes 0.05-0.07 ms, under any GPU solve's floor
THIN_LEVEL = 32  # vertices per hop level below which a search is a chain: one vertex a round on the GPU
DEEP_HOPS = 64  # road graphs measured 300-1,000 hops deep, the SNAP graphs 10-30
EVEN_SPREAD = 16  # largest / mean out-degree of the road graphs measured: about 3 (a social graph's: hundreds)
LARGE_ARCS = 1 << 26  # GAP's kron and urand from scale 22 up: 128-134M arcs at 22, deltastep_lean measured there

OPS = {"<=": operator.le, ">=": operator.ge, "==": operator.eq}


@dataclass(frozen=True)
class Features:
    """What a graph shows: n, m, the largest out-degree, the weight range, the hop depth (a lower bound on the hop
    diameter, :meth:`Graph.hop_landmarks`) and the bytes of a distance."""

    n: int
    m: int
    max_degree: int
    weight_min: int | None
    weight_max: int | None
    hop_depth: int
    itemsize: int = 4

    @classmethod
    def of(cls, graph) -> Features:
        degree = graph.out_degree()
        w = graph.weights
        return cls(n=graph.n, m=graph.m, max_degree=int(degree.max()) if graph.n else 0,
                   weight_min=int(w.min()) if graph.m else None, weight_max=int(w.max()) if graph.m else None,
                   hop_depth=int(graph.hop_landmarks()[0]), itemsize=int(graph.dtype.itemsize))

    @property
    def negative(self) -> bool:
        return self.weight_min is not None and self.weight_min < 0

    @property
    def mean_degree(self) -> float:
        return self.m / max(1, self.n)

    @property
    def degree_spread(self) -> float:
        """Largest / mean out-degree (0 without arcs): about 3 on a road network, hundreds on a social graph."""
        return self.max_degree / self.mean_degree if self.m else 0.0

    @property
    def weight_spread(self) -> float | None:
        """Largest / smallest weight where every weight is positive (None otherwise)."""
        return self.weight_max / self.weight_min if self.weight_min is not None and self.weight_min > 0 else None

    @property
    def level_width(self) -> float:
        """Vertices per hop level, n / (hop depth + 1): what one round of a level-synchronous search can hold."""
        return self.n / (self.hop_depth + 1)

    def info(self) -> dict:
        """The features and the quantities the rows read, JSON-ready."""
        return {**asdict(self), "negative": self.negative, "mean_degree": round(self.mean_degree, 3),
                "degree_spread": round(self.degree_spread, 3), "level_width": round(self.level_width, 3),
                "weight_spread": None if self.weight_spread is None else round(self.weight_spread, 3)}


@dataclass(frozen=True)
class Rule:
    """One row: when every condition ``(feature, op, bound)`` holds, ``solver`` with ``params``; ``evidence`` names
    the committed benchmark rows it comes from."""

    name: str
    when: tuple[tuple[str, str, object], ...]
    solver: str
    params: tuple[tuple[str, object], ...] = ()
    evidence: str = ""

    def holds(self, features: Features) -> bool:
        values = features.info()
        return all(OPS[op](values[key], bound) for key, op, bound in self.when)

    def conditions(self) -> str:
        return " and ".join(f"{key} {op} {bound}" for key, op, bound in self.when) or "any graph"


NEGATIVE, NONNEGATIVE = ("negative", "==", True), ("negative", "==", False)
RULES: tuple[Rule, ...] = (
    Rule("tiny, negative weights", (NEGATIVE, ("m", "<=", TINY_ARCS)), "scipy_dijkstra",
         evidence="sssp-fast-h200 and workflow-h100, ring-4096: SciPy 0.16 / 0.25 ms, the fastest solver that "
                  "accepts negative weights (the Bellman-Ford family 11-18 ms)"),
    Rule("a chain, negative weights", (NEGATIVE, ("level_width", "<=", THIN_LEVEL)), "scipy_dijkstra",
         evidence="as the row above: ring-4096 is one vertex a level"),
    Rule("deep, negative weights", (NEGATIVE, ("hop_depth", ">=", DEEP_HOPS)), "edgebf_coo",
         (("launch", "persistent"),),
         evidence="sssp-fast-h200, USA-road-d.NY and BAY: edgebf_coo launch=persistent 11.7 / 16.7 ms, the fastest "
                  "solver that accepts negative weights (vertexbf_push 13.4 / 20.0 ms)"),
    Rule("shallow, negative weights", (NEGATIVE,), "edgebf_coo", (("launch", "graph"),),
         evidence="sssp-fast-h200 and workflow-h100, p2p-Gnutella30 and email-Enron: edgebf_coo launch=graph "
                  "0.30-0.67 ms, the fastest solver that accepts negative weights"),
    Rule("tiny", (NONNEGATIVE, ("m", "<=", TINY_ARCS)), "dijkstra_cpu",
         evidence="sssp-fast-h200 and workflow-h100, ring-4096: dijkstra_cpu 0.047 / 0.069 ms, every GPU solver "
                  "over 10 ms"),
    Rule("a chain", (NONNEGATIVE, ("level_width", "<=", THIN_LEVEL)), "dijkstra_cpu",
         evidence="as the row above: a GPU round settles about one vertex of a chain"),
    Rule("road-like, fits one cluster", (NONNEGATIVE, ("hop_depth", ">=", DEEP_HOPS),
                                         ("degree_spread", "<=", EVEN_SPREAD)), "deltastep_clusterasync",
         evidence="sssp-clusterasync-h200 and house-two-h200, USA-road-d.NY and BAY: 2.68 / 3.77 ms against "
                  "deltastep_cluster 3.74 / 5.67 and deltastep_gpu 5.69 / 9.18 ms; its limit (n <= 454,656, int32 "
                  "distances) passes larger graphs on"),
    Rule("large and shallow", (NONNEGATIVE, ("m", ">=", LARGE_ARCS), ("hop_depth", "<=", DEEP_HOPS - 1)),
         "deltastep_lean",
         evidence="sssp-scale-h200-solvers, calls l1 and l2: kron-22 and urand-22 8.82 / 8.65 ms distances alone, "
                  "11.23 / 11.42 with the tree, against deltastep_gpu 10.73 / 12.25 ms (distances alone) in the same "
                  "run; within the graph's arrays + 16 bytes a vertex"),
    Rule("the rest", (NONNEGATIVE,), "deltastep_gpu",
         evidence="sssp-clusterasync-h200, sssp-peers-h200, workflow-h100: p2p-Gnutella30 and email-Enron 0.20 / "
                  "0.29 ms, the fastest; sssp-scale-h200: kron, urand and delaunay of 1-16M vertices, and "
                  "grid-1024 / delaunay-20 at 11.1 / 8.6 ms against deltastep_clusters 18.9 / 14.2 (the solvers "
                  "past one cluster); sssp-fast-h200: grid-4096 (16.8M vertices)"),
    Rule("fallback: past deltastep_gpu's memory", (NONNEGATIVE,), "deltastep_lean",
         evidence="where deltastep_gpu's 36-44 bytes a vertex beside the graph do not fit the device and "
                  "deltastep_lean's 15.5 do; on road-like graphs as fast (sssp-scale-h200-solvers, call l3: "
                  "delaunay-20 8.23 against 8.51 ms, grid-1024 11.25 against 11.03)"),
    Rule("fallback: on the host", (NONNEGATIVE,), "dijkstra_cpu",
         evidence="where deltastep_gpu's memory does not fit the device: one CPU search, host memory only"),
    Rule("fallback: on the host, negative weights", (NEGATIVE,), "scipy_dijkstra",
         evidence="where edgebf_coo's memory does not fit the device"),
)


@dataclass(frozen=True)
class Pick:
    """The solver picked, its parameters, the row that picked it, the graph's features and the rows whose
    conditions held but whose solver refused the graph (name, reason)."""

    solver: str
    params: dict
    rule: Rule
    features: Features
    passed: tuple[tuple[str, str], ...] = field(default=())

    def reason(self) -> str:
        """One line: what was picked and why."""
        f = self.features
        params = "".join(f" {k}={v}" for k, v in self.params.items())
        passed = "".join(f"; passed over {name}: {why}" for name, why in self.passed)
        return (f"auto picked {self.solver}{params} by the row {self.rule.name!r} ({self.rule.conditions()}): "
                f"n={f.n} m={f.m} max out-degree {f.max_degree} (spread {f.degree_spread:.1f}), hop depth "
                f"{f.hop_depth}, weights [{f.weight_min}, {f.weight_max}]{passed}")

    def info(self) -> dict:
        """What a record keeps of the pick (JSON-ready): ``params`` resolved, ``row_params`` those the row sets."""
        return {"solver": self.solver, "params": dict(self.params), "row_params": dict(self.rule.params),
                "rule": self.rule.name, "conditions": self.rule.conditions(), "evidence": self.rule.evidence,
                "features": self.features.info(), "passed_over": [list(p) for p in self.passed]}


def pick(features: Features, free_bytes: int | None = None, candidates=None, rules=RULES) -> Pick:
    """The first row of ``rules`` whose conditions hold and whose solver accepts a graph of these ``features``
    (``free_bytes``: the device memory a GPU solver may use, None: not checked; ``candidates``: only these solver
    names, None: any). SolverError when none does."""
    passed = []
    for rule in rules:
        if not rule.holds(features) or (candidates is not None and rule.solver not in candidates):
            continue
        spec = registry.get(rule.solver)
        why = spec.why_not(features.n, features.m, negative=features.negative, itemsize=features.itemsize,
                           params=dict(rule.params), free_bytes=free_bytes if spec.device == "gpu" else None)
        if why:
            passed.append((rule.solver, why))
            continue
        return Pick(rule.solver, spec.resolve(dict(rule.params)), rule, features, tuple(passed))
    raise SolverError(f"auto: no row of the table runs on this graph (n={features.n}, m={features.m}): "
                      + "; ".join(f"{name}: {why}" for name, why in passed))


def candidate_specs(rules=RULES) -> tuple[registry.SolverSpec, ...]:
    """The registry entries of the solvers the table may pick, each once, in the order of its rows."""
    return tuple(registry.get(name) for name in dict.fromkeys(rule.solver for rule in rules))


def pick_for(graph, free_bytes: int | None = None) -> Pick:
    """:func:`pick` for a graph in memory."""
    return pick(Features.of(graph), free_bytes)


def describe() -> str:
    """The line ``gpusp solvers`` shows for auto, in the column layout of :meth:`SolverSpec.describe`."""
    return f"{AUTO:<32} {'sssp':<7} {'any':<6} {'-':<5} {SUMMARY}"


def info() -> dict:
    """auto in ``gpusp solvers --json``: what it is and the table's rows."""
    return {"name": AUTO, "problem": "sssp", "device": "any", "summary": SUMMARY,
            "rules": [{"rule": r.name, "conditions": r.conditions(), "solver": r.solver, "params": dict(r.params),
                       "evidence": r.evidence} for r in RULES]}


def check_rules(rules=RULES) -> None:
    """Every row names a registered SSSP solver of gpusp's own (no peer, no batch) with parameters it takes, and
    conditions on known features; SolverError otherwise."""
    known = set(Features(1, 0, 0, None, None, 0).info())
    for rule in rules:
        spec = registry.get(rule.solver)
        if spec.problem != "sssp" or spec.peer or spec.batched:
            raise SolverError(f"auto row {rule.name!r}: {rule.solver} is not a single-source solver of gpusp's own")
        spec.resolve(dict(rule.params))
        for key, op, _ in rule.when:
            if key not in known or op not in OPS:
                raise SolverError(f"auto row {rule.name!r}: unknown condition {key} {op}")
