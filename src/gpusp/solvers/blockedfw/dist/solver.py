"""blockedfw_dist's solver class: the matrix's tile rows spread over ``gpus`` GPUs of this host (:mod:`.layout`),
rank 0 in this process and one worker process for each other rank (:class:`gpusp.ranks.Ranks`), collectives over
NCCL; in the CUDA simulator every rank runs in this process in lockstep (:class:`.rank.Lockstep`).
"""

from __future__ import annotations

import time

import numpy as np

from ....errors import NegativeCycleError, SolverError
from ....ranks import Ranks, keep_multicast_off, require_gpus
from ...common.base import Solver
from ...common.dense import apsp_tight_parents, undo_tiebreak
from ...common.launch import TARGET
from .rank import Band, Lockstep


class DistSolver(Solver):
    """blockedfw_dist: blockedfw_fast's kernels on a 1-D block-cyclic split of the matrix over ``gpus`` GPUs
    (docs/solvers/blockedfw.md, "blockedfw_dist"); distances only (paths are derived on the host at download)."""

    device = "gpu"

    def __init__(self, graph, *, gpus, tile, regblock, arith, p12, inner, unroll, stage, phase2):
        params = dict(tile=tile, regblock=regblock, arith=arith, p12=p12, inner=inner, unroll=unroll, stage=stage,
                      phase2=phase2)
        super().__init__(graph, gpus=gpus, **params)
        self.size = int(gpus)
        self.sim = not TARGET.gpu
        # in the simulator every rank lives here; on GPUs rank 0 does, the others in workers started at upload
        self.bands = [Band(q, self.size, graph, params) for q in (range(self.size) if self.sim else range(1))]
        self.band = self.bands[0]
        self.ranks = None
        self.uploaded: list[dict] = []
        self.gpu_ids: list[str] = []

    def upload(self):
        if self.graph.n == 0:
            return
        keep_multicast_off()
        self.gpu_ids = require_gpus(self.size, f"blockedfw_dist with gpus={self.size}")
        if self.sim or self.size == 1:
            self.uploaded = [b.upload() for b in self.bands]
            return
        from cupy.cuda import nccl

        self.ranks = Ranks(self.size, Band, self.graph, self.band_params(), first=1,
                           what=f"blockedfw_dist with gpus={self.size}")
        self.ranks.send("upload")
        mine = self.band.upload()
        self.uploaded = [mine, *self.ranks.gather("upload")]
        uid = nccl.get_unique_id()
        self.ranks.send("connect", uid)
        self.band.connect(uid)
        self.ranks.gather("connect")

    def band_params(self) -> dict:
        return {k: v for k, v in self.params.items() if k != "gpus"}

    def run(self, source=None):
        cfg = self.band.cfg
        counters = {"gpus": self.size, "iterations": cfg.r, "relaxations": cfg.n_pad ** 2 * cfg.r * cfg.T,
                    "tile": cfg.T, "regblock": cfg.R, "arith": cfg.kind, "phase2": cfg.phase2, **cfg.variant,
                    "matrix_dtype": str(np.dtype(cfg.device_dtype())), "hop_tiebreak": bool(cfg.scale),
                    "bcast_bytes": (cfg.r if self.size > 1 else 0) * cfg.T * cfg.n_pad * self.band.dtype.itemsize,
                    "gpu_ids": list(self.gpu_ids), "compile_s": max(
                        [u["compile_s"] for u in self.uploaded], default=0.0)}
        if self.graph.n == 0:
            return counters
        if self.sim:
            ranks = [Lockstep().run(self.bands)] if self.size > 1 else [run_alone(self.band)]
            negative = any(b.negative_cycle() for b in self.bands)
        elif self.ranks is None:
            ranks = [self.band.run()]
            negative = ranks[0]["negative_cycle"]
        else:
            self.ranks.send("run")
            ranks = [self.band.run(), *self.ranks.gather("run")]
            negative = any(x["negative_cycle"] for x in ranks)
        if negative:
            raise NegativeCycleError("blockedfw_dist: a negative cycle (a negative diagonal entry after the last "
                                     "round)")
        counters["rank_ms"] = [x["rank_ms"] for x in ranks]
        return counters

    def raw_rows(self, vertices) -> np.ndarray:
        """The device's values (int64; float32 INF as the tie-break's INF) of the rows of ``vertices``, from
        whichever rank holds each, without gathering the matrix."""
        vertices = [int(v) for v in np.asarray(vertices, dtype=np.int64).reshape(-1)]
        found = {}
        for b in self.bands:
            found.update(b.rows_of(vertices))
        if self.ranks is not None:
            for part in self.ranks.call("rows_of", vertices):
                found.update(part)
        raw = np.array([found[v] for v in vertices]).reshape(len(vertices), self.graph.n)
        cfg = self.band.cfg
        if cfg.kind == "float32":
            return np.where(np.isinf(raw), cfg.inf, np.where(np.isinf(raw), 0, raw).astype(np.int64))
        return raw.astype(np.int64)

    def rows(self, vertices) -> np.ndarray:
        """Distance rows of ``vertices`` in the graph's values (its INF for unreachable)."""
        return undo_tiebreak(self.raw_rows(vertices), self.band.cfg.tie, self.graph)

    def write_rows(self, folder) -> list[str]:
        """The answer written where it is, never gathered: every rank saves its own tile rows (``tilerow-I.npy``: the
        device's values, the band's INF for unreachable, the hop tie-break not undone) under ``folder``; the file
        names in tile-row order."""
        names = [name for b in self.bands for name in b.write_rows(str(folder))]
        if self.ranks is not None:
            names += [name for part in self.ranks.call("write_rows", str(folder)) for name in part]
        return sorted(names, key=lambda name: int(name[len("tilerow-"):-len(".npy")]))

    def checksum(self) -> dict:
        """Reachable pairs and the sum of their distances (device values, tie-break included) over every rank."""
        parts = [b.checksum() for b in self.bands] + (self.ranks.call("checksum") if self.ranks else [])
        return {k: sum(p[k] for p in parts) for k in ("reachable", "sum")}

    def download(self):
        """The whole matrix gathered on the host, for validation on graphs whose n x n answer fits there; parents
        derived from tight arcs (no paths on the device)."""
        n = self.graph.n
        if n == 0:
            return np.zeros((0, 0), dtype=self.graph.dtype), np.zeros((0, 0), dtype=np.int32)
        cfg = self.band.cfg
        undivided = self.raw_rows(np.arange(n))
        return (undo_tiebreak(undivided, cfg.tie, self.graph),
                apsp_tight_parents(self.graph, undivided, cfg.inf, cfg.scale))

    def close(self):
        if self.ranks is not None:
            self.ranks.close()
            self.ranks = None

    def __del__(self):
        self.close()


def run_alone(band: Band) -> dict:
    """A single rank's program in the simulator (wall clock): one rank has no collective but its own max."""
    t0 = time.perf_counter()
    for op, _, _ in band.program():
        if op == "bcast":
            raise SolverError("a single rank's schedule asked for a broadcast")
    return {"rank_ms": (time.perf_counter() - t0) * 1e3}
