"""blockedfw_dist's layout and round schedule, without Numba: tile row I of the r x r tiles lives on rank I mod P as
its local tile row I // P (1-D block-cyclic, one tile per block), so every rank updates the same number of tiles each
round and the pivot row's owner changes every round; a rank keeps one more tile row, the slot the round's pivot
row is broadcast into. :func:`round_steps` is the schedule every rank runs (the tests check it covers each tile once
per round); design and floor: docs/solvers/blockedfw.md, "blockedfw_dist".
"""

from __future__ import annotations

from typing import NamedTuple


def local_rows(r: int, size: int, rank: int) -> int:
    """Tile rows of rank ``rank`` out of ``r``: those I with I mod size == rank."""
    return max(0, -(-(r - rank) // size))


def global_row(L: int, size: int, rank: int) -> int:
    """The global tile row of rank ``rank``'s local tile row L."""
    return L * size + rank


def global_vertex(row, T: int, size: int, rank: int):
    """The global vertex of rank ``rank``'s local matrix row (an int or an array of them)."""
    return global_row(row // T, size, rank) * T + row % T


class Step(NamedTuple):
    """One launch of a round on one rank: ``kind`` 'pivot' (phase 1, tile (tp, t)), 'row' (phase 2, tiles (tp, J),
    J != t), 'column' (phase 2, tiles (I, t)) or 'rest' (phase 3, tiles (I, J), J != t), local rows I in [lo, hi)
    except ``skip``; or 'bcast' (the pivot row from rank ``root``'s local tile row ``tp`` into every other rank's slot
    ``tp``)."""

    kind: str
    t: int
    tp: int
    lo: int = 0
    hi: int = 0
    skip: int = -1
    root: int = -1


def round_steps(t: int, r: int, size: int, rank: int) -> list[Step]:
    """Rank ``rank``'s launches and collectives of round t (pivots of tile t): its owner closes the pivot tile and
    the pivot row, the row goes to every rank, then each rank updates its column tiles and the rest."""
    owner = t % size
    rows = local_rows(r, size, rank)
    steps = []
    if rank == owner:
        tp = skip = t // size
        steps += [Step("pivot", t, tp), Step("row", t, tp)]
    else:
        tp, skip = rows, -1  # the slot after the local rows
    if size > 1:
        steps.append(Step("bcast", t, tp, root=owner))
    steps += [Step("column", t, tp, 0, rows, skip), Step("rest", t, tp, 0, rows, skip)]
    return steps


def tiles_of(step: Step, r: int) -> list[tuple[int, int]]:
    """The (local row, column) tiles a launch updates, in its blocks' order (the kernels' enumeration)."""
    if step.kind == "pivot":
        return [(step.tp, step.t)]
    if step.kind == "row":
        return [(step.tp, J) for J in range(r) if J != step.t]
    rows = [I for I in range(step.lo, step.hi) if I != step.skip]
    if step.kind == "column":
        return [(I, step.t) for I in rows]
    if step.kind == "rest":
        return [(I, J) for I in rows for J in range(r) if J != step.t]
    return []


def tile_count(step: Step, r: int) -> int:
    """len(tiles_of(step, r)) without listing them (the host loop asks every round)."""
    if step.kind == "pivot":
        return 1
    if step.kind == "row":
        return r - 1
    rows = step.hi - step.lo - (1 if step.lo <= step.skip < step.hi else 0)
    return {"column": rows, "rest": rows * (r - 1)}.get(step.kind, 0)


def band_shape(n_pad: int, T: int, size: int, rank: int) -> tuple[int, int]:
    """A rank's array: its local tile rows and the broadcast slot, by n_pad columns."""
    return ((local_rows(n_pad // T, size, rank) + 1) * T, n_pad)
