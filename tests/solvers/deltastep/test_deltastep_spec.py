"""The deltastep family's rules (its spec.py), without a kernel."""

from gpusp.solvers.deltastep import spec


def test_automatic_settings():
    """The rules behind deltastep's automatic lanes, split and ring settings."""
    assert spec.nearfar_lanes(0, 256) == spec.NEARFAR_LANES and spec.nearfar_lanes(64, 32) == 32
    # the grid stand-in (16.8 M vertices, hop depth about 8,190) gets 4 lanes; USA-road-d.NY (264 K, depth in the
    # hundreds) and shallow SNAP graphs a warp
    assert spec.nearfar_lanes(0, 256, 4096 * 4096, 8190) == spec.NEARFAR_WIDE_LANES == 4
    assert spec.nearfar_lanes(0, 256, 264_346, 1_100) == spec.nearfar_lanes(0, 256, 36_692, 12) == 32
    assert spec.nearfar_lanes(8, 256, 4096 * 4096, 8190) == 8
    # kron-22 (128 M arcs, hop depth 6): 8 lanes; the same depth on 2^26 - 1 arcs: a warp
    assert spec.nearfar_lanes(0, 256, 1 << 22, 6, 128_305_846) == spec.NEARFAR_NARROW_LANES == 8
    assert spec.nearfar_lanes(0, 256, 1 << 22, 6, (1 << 26) - 1) == 32
    assert spec.nearfar_lanes(0, 4, 1 << 22, 6, 1 << 26) == 4  # at most the block
    assert spec.nearfar_split(-1, 32, 1383, False) == 64  # a hub of 1,383 arcs: chunks of 2 x lanes
    assert spec.nearfar_split(-1, 32, 54, False) == 0  # no hub: whole vertices
    assert spec.nearfar_split(-1, 32, 1383, True) == 0  # fusion holds whole vertices
    assert spec.nearfar_split(2, 32, 1000, False) == 2  # 500 entries: within MAX_CHUNKS
    assert spec.nearfar_split(2, 32, 5000, False) == 5  # at most MAX_CHUNKS (1,024) entries per vertex
    # kron at scale 26 (67 M vertices, a hub of about a million arcs) is split too: chunks of 977 arcs
    assert spec.nearfar_split(-1, 32, 1_000_000, False, 31.4) == 977
    # urand at scale 26 with 8 lanes: a largest out-degree of 80 is over 8 x lanes but not over 8 x the mean of 32
    assert spec.nearfar_split(-1, 8, 80, False, 32.0) == 0 and spec.nearfar_split(-1, 8, 80, False, 9.0) == 16
    assert spec.ring_capacity(100) == 1024 and spec.ring_capacity(10_000) == 4096
    assert spec.ring_delta(1, 1000, 8, 2) == 167


class _Shape:
    """What nearfar_delta reads of a graph: arcs, weights, hop depth and Davidson's width."""

    def __init__(self, m, depth, weights):
        self.m, self.depth, self.weights = m, depth, weights

    def hop_landmarks(self):
        return self.depth, None, None

    def default_delta(self, width):
        return width * int(self.weights.mean()) // 32


def test_the_bucket_width_is_narrow_on_large_shallow_graphs_only():
    """delta 0: Davidson's rule x 4 where rounds bound (small or deep graphs), 1/32 of (largest weight + 1) on graphs
    of >= 2^26 arcs and hop depth < 64 (kron and urand at scale 22 and 26: 8 on weights 1..255 was the fastest width
    measured); an explicit delta is kept."""
    import numpy as np

    weights = np.random.default_rng(1).integers(1, 256, 1 << 21)
    assert spec.nearfar_delta(0, _Shape(1 << 27, 7, weights)) == 8
    assert spec.nearfar_delta(0, _Shape(1 << 27, 7, weights * 4)) == 1021 // 32  # it follows the weights' scale
    davidson = spec.NEARFAR_DELTA_WIDTH * int(weights.mean()) // 32
    assert spec.nearfar_delta(0, _Shape((1 << 26) - 1, 7, weights)) == davidson  # too small: rounds bound
    assert spec.nearfar_delta(0, _Shape(1 << 27, 64, weights)) == davidson  # too deep: rounds bound
    assert spec.nearfar_delta(5, _Shape(1 << 27, 7, weights)) == 5
    assert spec.nearfar_delta(0, _Shape(1 << 27, 7, np.ones(8, np.int64))) == 1
