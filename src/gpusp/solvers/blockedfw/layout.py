"""Blocked Floyd-Warshall without Numba: block sizes and padding, the bank-conflict rule, the pieces and DAGs.

Everything here is plain Python, so the registry can build its choices and memory bound from it and the tests can
check the rule and the dependency graphs without a device.

* :func:`column_conflict` / :func:`conflict_plan`: paper 002's lcm rule (sec. 2.4.2) for version 2.1, which
  decides per B whether the shared arrays read by column are stored transposed and the phase-1 pivot padded.
* :data:`PIECES`, :func:`piece_ranges`, :func:`piece_access`: versions 3.0 / 4.x cut phase 2 into four pieces
  (column blocks above / below the pivot, row blocks left / right of it) and phase 3 into the four quadrants
  around the pivot cross; :data:`LANES` puts each on one of four streams.
* :func:`dependency_dag`: the pieces of all rounds with their dependencies (round barrier for 3.0 / 4.0, the
  paper's relaxed inter-round dependencies for 4.1); :func:`adversarial_order` runs them latest round first
  (the simulator's stand-in for a graph launch); :func:`wire_dag` issues them into a graph under capture.
"""

from __future__ import annotations

import functools
import math

from ...errors import SolverError

BANKS = 32
BLOCK_SIZES = (4, 8, 16, 24, 32)  # the blocking factors B the kernels are built and compile-checked for


def padded(n: int, B: int) -> int:
    """n_pad: n rounded up to a multiple of B."""
    return -(-int(n) // int(B)) * int(B)


# --- the paper's bank-conflict rule (version 2.1) ------------------------------------------------------------------
def column_conflict(B: int, stride: int | None = None, banks: int = BANKS) -> bool:
    """True when a column read of a B-row shared array with row ``stride`` surely hits one bank twice.

    Rows 0 and lcm(stride, banks) / stride share a bank for every column; that row exists when
    lcm(stride, banks) <= (B - 1) * stride (paper 002, sec. 2.4.2, with stride = B).
    """
    stride = B if stride is None else int(stride)
    return math.lcm(stride, banks) <= (B - 1) * stride


def conflict_plan(B: int, banks: int = BANKS) -> dict:
    """The v21 layout for blocking factor B: transpose column-read arrays and pad the pivot of phase 1
    only when :func:`column_conflict` predicts a conflict (and padding to stride B + 1 removes it)."""
    conflict = column_conflict(B, banks=banks)
    return {"conflict": conflict, "transpose": conflict,
            "pad": bool(conflict and not column_conflict(B, B + 1, banks))}


# --- the pieces of versions 3.0 / 4.x and their dependency DAGs ----------------------------------------------------
PIECES = ("p1", "up", "down", "left", "right", "ul", "ur", "dl", "dr")
LANES = {"p1": 0, "up": 0, "ul": 0, "down": 1, "dr": 1, "left": 2, "dl": 2, "right": 3, "ur": 3}  # piece -> stream


def piece_ranges(kind: str, t: int, r: int):
    """Block-row range [i0, i1) and block-column range [j0, j1) that piece ``kind`` of round t writes."""
    lo, hi = (0, t), (t + 1, r)
    piv = (t, t + 1)
    return {"p1": (piv, piv), "up": (lo, piv), "down": (hi, piv), "left": (piv, lo), "right": (piv, hi),
            "ul": (lo, lo), "ur": (lo, hi), "dl": (hi, lo), "dr": (hi, hi)}[kind]


def piece_access(kind: str, t: int, r: int):
    """(reads, writes): the sets of blocks (I, J) a piece reads and writes (same for d and p)."""
    (i0, i1), (j0, j1) = piece_ranges(kind, t, r)
    writes = {(I, J) for I in range(i0, i1) for J in range(j0, j1)}
    reads = set(writes) | {(t, t)}
    if kind in ("ul", "ur", "dl", "dr"):
        reads = set(writes) | {(I, t) for I in range(i0, i1)} | {(t, J) for J in range(j0, j1)}
    return reads, writes


def _wanted(r: int, relaxed: bool) -> dict:
    """(kind, t) -> the (kind, t) it depends on, empty pieces included."""
    want = {}
    for t in range(r):
        if relaxed:
            want[("p1", t)] = [("dr", t - 1)] if t else [("start", -1)]
        else:
            want[("p1", t)] = [(k, t - 1) for k in PIECES] if t else [("start", -1)]
        for k in ("up", "down", "left", "right"):
            want[(k, t)] = [("p1", t)]
        if relaxed and t:
            want[("up", t)].append(("ur", t - 1))
            want[("left", t)].append(("dl", t - 1))
        want[("ul", t)] = [("up", t), ("left", t)] + ([("ul", t - 1)] if relaxed and t else [])
        want[("ur", t)] = [("up", t), ("right", t)]
        want[("dl", t)] = [("down", t), ("left", t)]
        want[("dr", t)] = [("down", t), ("right", t)]
    return want


def _reduce(deps: list) -> list:
    """The transitive reduction of a DAG given as dependency lists of earlier nodes."""
    reach = []  # reach[v]: bitset of the nodes v depends on, directly or not
    for ds in deps:
        bits = 0
        for u in ds:
            bits |= (1 << u) | reach[u]
        reach.append(bits)
    return [[u for u in ds if not any(w != u and (reach[w] >> u) & 1 for w in ds)] for ds in deps]


def dependency_dag(r: int, relaxed: bool = False):
    """The pieces of all r rounds in program order, with their dependencies.

    Returns a list of nodes ``(name, kind, t, deps)``: node 0 is ``("start", "start", -1, [])`` (the
    matrix reset), the last is ``("end", "end", r, [...])`` (the negative-cycle check), and in between
    every non-empty piece, ``name = f"{kind}{t}"``, ``deps`` indices of earlier nodes (transitively
    reduced). ``relaxed=False`` is v30 / v40 (a piece's round waits for the whole previous round),
    ``relaxed=True`` v41 (paper 4.1's inter-round dependencies).
    """
    want = _wanted(r, relaxed)

    def empty(key):
        kind, t = key
        if kind == "start":
            return False
        (i0, i1), (j0, j1) = piece_ranges(kind, t, r)
        return i0 >= i1 or j0 >= j1

    @functools.cache
    def real(key):
        """The non-empty nodes standing for ``key`` (itself, or what an empty piece depends on)."""
        if not empty(key):
            return frozenset([key])
        out = set()
        for dep in want[key]:
            out |= real(dep)
        return frozenset(out)

    order = [("start", -1)] + [(k, t) for t in range(r) for k in PIECES if not empty((k, t))]
    index = {key: i for i, key in enumerate(order)}
    deps = [[]]
    for key in order[1:]:
        ds = set()
        for dep in want[key]:
            ds |= real(dep)
        deps.append(sorted(index[x] for x in ds))
    # the check waits for every sink
    used = {u for ds in deps for u in ds}
    deps.append([v for v in range(len(order)) if v not in used])
    order.append(("end", r))
    reduced = _reduce(deps)
    return [(("start" if k == "start" else "end" if k == "end" else f"{k}{t}"), k, t, reduced[v])
            for v, (k, t) in enumerate(order)]


def _users(dag) -> list:
    """Per node, the nodes that depend on it."""
    users = [[] for _ in dag]
    for v, node in enumerate(dag):
        for u in node[3]:
            users[u].append(v)
    return users


def adversarial_order(dag):
    """A topological order of ``dag`` that runs the latest-round ready piece first (for the simulator)."""
    indeg = [len(node[3]) for node in dag]
    users = _users(dag)
    ready = [v for v in range(len(dag)) if indeg[v] == 0]
    out = []
    while ready:
        ready.sort(key=lambda v: (dag[v][2], v))
        v = ready.pop()
        out.append(v)
        for w in users[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    return out


def wire_dag(dag, root, join, launch):
    """Issue ``dag`` into a graph under capture: ``launch(v, builder)`` per node, in program order.

    A node with one dependency continues that dependency's builder; with several, ``join`` merges
    their builders; a node with several users ``split`` s its builder, one branch per user, so every
    edge of the DAG (and no other ordering) becomes a dependency in the graph. Returns the builder of
    the last node, which is ``root`` again when the DAG has one sink (join keeps the primary builder).
    """
    users = _users(dag)
    edge = {}  # (u, v) -> the builder carrying u's completion to v
    final = None
    for v, node in enumerate(dag):
        deps = node[3]
        if not deps:
            b = root
        elif len(deps) == 1:
            b = edge.pop((deps[0], v))
        else:
            b = join(*[edge.pop((u, v)) for u in deps])
        launch(v, b)
        outs = users[v]
        if not outs:
            final = b
        elif len(outs) == 1:
            edge[(v, outs[0])] = b
        else:
            for w, bw in zip(outs, b.split(len(outs))):
                edge[(v, w)] = bw
    if edge:
        raise SolverError(f"graph wiring left {len(edge)} dependencies unconsumed")
    return final
