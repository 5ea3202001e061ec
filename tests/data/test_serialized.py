"""Binary CSR files (gpusp.data.serialized): GAPBS's .sg/.wsg and gpusp's .gcsr, round trips on awkward graphs,
the exact bytes GAPBS's writer gives, every corruption refused naming the file and byte, load_cached's .gcsr cache,
and round trips through the pinned GAPBS's own converter (built from the mirror's archive; those tests skip with the
reason when the archive or a C++ compiler with OpenMP is missing). About 60 s with the build.
"""

from __future__ import annotations

import gzip
import os
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import failing_tool, mirror_with

from gpusp.data import formats
from gpusp.data.formats import load_cached, read_graph, write_graph
from gpusp.data.graph import Graph
from gpusp.data.serialized import gapbs_generate, read_gcsr, serialized_counts
from gpusp.errors import GpuspError, GraphFormatError
from gpusp.solvers.peers import build as peers

HEADER = struct.Struct("<Bqq")


# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------
def awkward() -> Graph:
    """Parallel arcs of different weights, self-loops, a zero weight, isolated vertices (4, 6) and a sink."""
    edges = [(0, 1, 7), (0, 1, 3), (1, 1, 2), (1, 2, 4), (0, 2, 9), (2, 3, 1), (3, 0, 0), (5, 5, 5), (5, 3, 8)]
    src, dst, w = (np.array(c) for c in zip(*edges))
    return Graph.from_edges(7, src, dst, w, name="awkward")


def symmetric() -> Graph:
    """Every arc u -> v, w has its v -> u, w; two self-loops (an even count); a parallel pair."""
    edges = [(0, 1, 5), (1, 0, 5), (0, 1, 5), (1, 0, 5), (1, 2, 3), (2, 1, 3), (2, 2, 1), (3, 3, 4)]
    src, dst, w = (np.array(c) for c in zip(*edges))
    return Graph.from_edges(4, src, dst, w, name="sym")


def unit(graph: Graph) -> Graph:
    return graph.with_weights(np.ones(graph.m, dtype=np.int64), weight_kind="unit")


def random_graph(n=300, m=2500, seed=1) -> Graph:
    rng = np.random.default_rng(seed)
    return Graph.from_edges(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(0, 1000, m), name="r")


SAMPLES = {
    "one vertex": lambda: Graph.from_edges(1, [], [], [], name="one"),
    "one self-loop": lambda: Graph.from_edges(1, [0], [0], [4], name="loop"),
    "no arcs": lambda: Graph.from_edges(5, [], [], [], name="empty"),
    "awkward": awkward,
    "symmetric": symmetric,
    "random": random_graph,
}


def same_arrays(a: Graph, b: Graph):
    assert (a.n, a.m) == (b.n, b.m)
    for key in ("indptr", "indices", "weights"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key), err_msg=key)


def refused(path, *words):
    """Reading ``path`` raises GraphFormatError whose message names the file and holds ``words``."""
    with pytest.raises(GraphFormatError) as info:
        read_graph(path)
    message = str(info.value)
    assert info.value.path == str(path) and Path(path).name in message, message
    for word in words:
        assert word.lower() in message.lower(), message
    return message


def wsg_bytes(directed, n, m, offsets, pairs, in_offsets=None, in_pairs=None) -> bytes:
    """A .wsg file laid out by hand as GAPBS's writer.h writes it."""
    out = HEADER.pack(directed, m, n) + np.asarray(offsets, "<i8").tobytes() + np.asarray(pairs, "<i4").tobytes()
    if directed:
        out += np.asarray(in_offsets, "<i8").tobytes() + np.asarray(in_pairs, "<i4").tobytes()
    return out


# --------------------------------------------------------------------------------------------------
# round trips, ours both ways
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sample", sorted(SAMPLES))
@pytest.mark.parametrize("ext", [".wsg", ".sg", ".gcsr", ".wsg.gz", ".gcsr.gz"])
def test_round_trip_gives_identical_arrays(tmp_path, sample, ext):
    g = SAMPLES[sample]()
    if ext == ".sg":
        g = unit(g)
    path = tmp_path / f"g{ext}"
    write_graph(g, path)
    back = read_graph(path)
    same_arrays(g, back)
    if ext.startswith(".gcsr"):
        assert (back.name, back.weight_kind, back.meta) == (g.name, g.weight_kind, g.meta)
    else:
        assert back.name == "g" and back.weight_kind == ("unit" if ext == ".sg" else "real")
        assert back.meta == {"source_format": ext[1:].removesuffix(".gz"), "source": path.name,
                             "gapbs_directed": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary left


@pytest.mark.parametrize("ext", [".wsg", ".sg"])
def test_symmetric_graph_written_undirected(tmp_path, ext):
    g = symmetric() if ext == ".wsg" else unit(symmetric())
    path = tmp_path / f"u{ext}"
    write_graph(g, path, undirected=True)
    data = path.read_bytes()
    assert HEADER.unpack_from(data) == (0, g.m, g.n)  # one CSR, GAPBS's undirected layout
    assert len(data) == 17 + 8 * (g.n + 1) + g.m * (8 if ext == ".wsg" else 4)
    assert serialized_counts(path, weighted=ext == ".wsg") == (g.n, g.m, False)
    back = read_graph(path)
    same_arrays(g, back)
    assert back.meta["gapbs_directed"] is False


def test_exact_bytes_of_a_directed_wsg(tmp_path):
    g = Graph.from_edges(3, [0, 0, 2, 2], [2, 1, 0, 1], [5, 6, 7, 8], name="t")
    path = tmp_path / "t.wsg"
    write_graph(g, path)
    # out-CSR in CSR order; the transpose lists each target's sources in source order, with the arc's weight
    assert path.read_bytes() == wsg_bytes(1, 3, 4, [0, 2, 2, 4], [2, 5, 1, 6, 0, 7, 1, 8],
                                          [0, 1, 3, 4], [2, 7, 0, 6, 2, 8, 0, 5])


def test_what_the_formats_cannot_hold_is_refused_and_nothing_is_left(tmp_path):
    with pytest.raises(ValueError, match="weights other than 1"):
        write_graph(awkward(), tmp_path / "a.sg")
    big = Graph.from_edges(2, [0], [1], [2**31], name="big")
    with pytest.raises(ValueError, match="int32 weights"):
        write_graph(big, tmp_path / "b.wsg")
    with pytest.raises(ValueError, match="not symmetric"):
        write_graph(awkward(), tmp_path / "c.wsg", undirected=True)
    odd = Graph.from_edges(2, [0, 1, 1], [1, 0, 1], [3, 3, 2], name="odd")
    with pytest.raises(ValueError, match="odd arc count"):
        write_graph(odd, tmp_path / "d.wsg", undirected=True)
    asymmetric_weights = Graph.from_edges(2, [0, 1], [1, 0], [3, 4], name="w")
    with pytest.raises(ValueError, match="not symmetric"):
        write_graph(asymmetric_weights, tmp_path / "e.wsg", undirected=True)
    write_graph(unit(asymmetric_weights), tmp_path / "f.sg", undirected=True)  # an .sg has no weights to differ
    with pytest.raises(ValueError, match="undirected applies"):
        write_graph(symmetric(), tmp_path / "g.gr", undirected=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.sg"]


def test_format_option_and_symmetrize(tmp_path):
    path = tmp_path / "graph.bin"
    write_graph(awkward(), path, format="wsg")
    g = read_graph(path, format="wsg", name="named", weight_kind="generated", symmetrize=True)
    assert (g.name, g.weight_kind, g.meta["symmetrized"]) == ("named", "generated", True)
    assert g.m == awkward().m + 7  # the reverse of each of the 7 arcs that are not loops (none has one)


def test_gcsr_keeps_id_map_and_maps_aligned_writeable_arrays(tmp_path):
    g = Graph.from_edges(3, [0, 2], [1, 0], [4, 5], name="ids", weight_kind="generated",
                         id_map=np.array([10, 40, 7]), meta={"source": "x", "k": [1, 2]})
    path = tmp_path / "ids.gcsr"
    write_graph(g, path)
    back = read_graph(path)
    np.testing.assert_array_equal(back.id_map, [10, 40, 7])
    assert back.meta == {"source": "x", "k": [1, 2]}
    header = read_gcsr(path)[0]
    assert all(spec["offset"] % 64 == 0 for spec in header["arrays"].values())
    for arr in (back.indptr, back.indices, back.weights):
        assert arr.flags.aligned and arr.flags.writeable and arr.flags.c_contiguous
    back.weights[0] = 9  # a private map: the file is untouched
    assert read_graph(path).weights[0] == 4


# --------------------------------------------------------------------------------------------------
# corrupt files: each refused, naming the file and where
# --------------------------------------------------------------------------------------------------
GOOD = {"directed": 1, "n": 3, "m": 4, "offsets": [0, 2, 2, 4], "pairs": [2, 5, 1, 6, 0, 7, 1, 8],
        "in_offsets": [0, 1, 3, 4], "in_pairs": [2, 7, 0, 6, 2, 8, 0, 5]}
CORRUPT = {  # changes to GOOD -> words of the message
    "directed flag": ({"directed": 2}, ["byte 0", "directed flag 2"]),
    "negative m": ({"m": -1}, ["byte 1", "arc count -1"]),
    "negative n": ({"n": -3}, ["byte 9", "vertex count -3"]),
    "offsets from 1": ({"offsets": [1, 2, 2, 4]}, ["byte 17", "start at 1"]),
    "offsets short of m": ({"offsets": [0, 2, 2, 3]}, ["byte 41", "end at 3", "arc count 4"]),
    "offsets fall": ({"offsets": [0, 3, 2, 4]}, ["byte 33", "entry 2 (2) is below entry 1 (3)"]),
    "id too large": ({"pairs": [2, 5, 3, 6, 0, 7, 1, 8]}, ["byte 57", "neighbour 1", "vertex id 3", "0..2"]),
    "id negative": ({"pairs": [2, 5, 1, 6, -1, 7, 1, 8]}, ["byte 65", "vertex id -1"]),
    "in-offsets fall": ({"in_offsets": [0, 2, 1, 4]}, ["in-offsets", "below"]),
    "not the transpose": ({"in_offsets": [0, 2, 3, 4]}, ["transpose gives vertex 0 2 in-arcs", "out-arcs 1"]),
    "in-id out of range": ({"in_pairs": [2, 7, 0, 6, 5, 8, 0, 5]}, ["in-neighbour 2", "vertex id 5"]),
    "transpose weights": ({"in_pairs": [2, 7, 0, 6, 2, 8, 0, 9]}, ["weights do not sum"]),
}


def test_the_hand_made_file_is_valid(tmp_path):
    path = tmp_path / "good.wsg"
    path.write_bytes(wsg_bytes(**GOOD))
    g = read_graph(path)
    assert g.indices.tolist() == [2, 1, 0, 1] and g.weights.tolist() == [5, 6, 7, 8]


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_corrupt_wsg_is_refused_naming_file_and_byte(tmp_path, case):
    changes, words = CORRUPT[case]
    spec = {**GOOD, **changes}
    data = wsg_bytes(**spec)
    if changes.keys() & {"m", "n"}:  # a header that lies: keep the body of the good file
        data = HEADER.pack(spec["directed"], spec["m"], spec["n"]) + wsg_bytes(**GOOD)[17:]
    path = tmp_path / "bad.wsg"
    path.write_bytes(data)
    refused(path, *words)


@pytest.mark.parametrize("cut", [0, 5, 17, 40, 60, 100, -1])
def test_truncated_or_padded_files_are_refused(tmp_path, cut):
    data = wsg_bytes(**GOOD)
    path = tmp_path / "cut.wsg"
    path.write_bytes(data[:cut] if cut >= 0 else data + b"\x00")
    words = ["17-byte header"] if 0 <= cut < 17 else ["announces 145", "truncated" if cut >= 0 else "1 bytes beyond"]
    refused(path, *words)


def test_an_sg_named_wsg_and_a_fake_gzip_are_refused_with_a_hint(tmp_path):
    g = unit(awkward())
    write_graph(g, tmp_path / "a.sg")
    os.replace(tmp_path / "a.sg", tmp_path / "a.wsg")
    refused(tmp_path / "a.wsg", "unweighted .sg", "give it that extension")
    write_graph(awkward(), tmp_path / "b.wsg")
    os.replace(tmp_path / "b.wsg", tmp_path / "b.sg")
    refused(tmp_path / "b.sg", "weighted .wsg")
    (tmp_path / "c.wsg.gz").write_bytes(wsg_bytes(**GOOD))
    refused(tmp_path / "c.wsg.gz", "not gzip")
    (tmp_path / "d.wsg.gz").write_bytes(gzip.compress(wsg_bytes(**GOOD))[:-9])
    refused(tmp_path / "d.wsg.gz", "corrupt or truncated gzip")


def test_vertex_count_beyond_int32_is_refused(tmp_path):
    path = tmp_path / "huge.sg"
    path.write_bytes(HEADER.pack(1, 0, 2**31))
    refused(path, "byte 9", "int32")


def json_edit(old: str, new: str):
    """An edit of the .gcsr's JSON header that keeps its length (so every array stays where it was)."""
    def edit(data, layout):
        at = data.index(old.encode())
        data[at:at + len(old)] = new.ljust(len(old)).encode()
    return edit


def set_bytes(where, value: bytes):
    """An edit that writes ``value`` at ``where(data, layout)``."""
    def edit(data, layout):
        at = where(data, layout)
        data[at:at + len(value)] = value
    return edit


GCSR_CORRUPT = {  # edit(data, layout) -> words of the message
    "magic": (set_bytes(lambda d, lay: 0, b"NOTACSR!"), ["no GPUSPCSR magic"]),
    "header length": (set_bytes(lambda d, lay: 8, struct.pack("<Q", 10**9)), ["byte 8", "runs past"]),
    "not json": (json_edit('{"arrays"', "[[[[[[[[["), ["not JSON"]),
    "newer version": (json_edit('"version": 1', '"version": 9'), ["version 9"]),
    "bad kind": (json_edit('"weight_kind": "real"', '"weight_kind": "odd"'), ["weight_kind 'odd'"]),
    "float weights": (json_edit('"dtype": "<i4", "offset": 512', '"dtype": "<f4", "offset": 512'),
                      ["weights: dtype float32"]),
    "misaligned": (json_edit('"offset": 512', '"offset": 449'), ["not on a 64-byte boundary"]),
    "overlap": (json_edit('"offset": 512', '"offset": 448'), ["overlaps"]),
    "extra array": (json_edit('"indptr"', '"extras"'), ["indptr missing"]),
    "truncated": (lambda d, lay: d.__delitem__(slice(len(d) - 3, len(d))), ["past the end of the file"]),
    "trailing": (lambda d, lay: d.extend(b"\x00" * 5), ["5 bytes after the last array"]),
    "index out of range": (set_bytes(lambda d, lay: lay["indices"]["offset"], struct.pack("<i", 99)),
                           ["indices: vertex id 99"]),
    "bad checksum": (set_bytes(lambda d, lay: d.index(b'"checksum": "') + 13, b"zz"), ["checksum 'zz", "sha256"]),
    "offsets fall": (set_bytes(lambda d, lay: lay["indptr"]["offset"] + 4, struct.pack("<i", 8)), ["decreases"]),
}


@pytest.mark.parametrize("case", sorted(GCSR_CORRUPT))
def test_corrupt_gcsr_is_refused_naming_the_file(tmp_path, case):
    edit, words = GCSR_CORRUPT[case]
    path = tmp_path / "g.gcsr"
    write_graph(awkward(), path)
    layout = read_gcsr(path)[0]["arrays"]
    assert (layout["indptr"]["offset"], layout["indices"]["offset"], layout["weights"]["offset"]) == (384, 448, 512)
    data = bytearray(path.read_bytes())
    edit(data, layout)
    path.write_bytes(bytes(data))
    refused(path, "not a valid gpusp .gcsr graph", *words)


def test_gcsr_carries_the_checksum_of_its_arrays(tmp_path):
    import hashlib

    graph = awkward()
    path = tmp_path / "g.gcsr"
    write_graph(graph, path)
    # the checksum's bytes: n, then the arrays as int64 offsets, int32 ids, int64 weights
    want = hashlib.sha256(np.int64(graph.n).tobytes() + graph.indptr.astype(np.int64).tobytes()
                          + graph.indices.astype(np.int32).tobytes() + graph.weights.astype(np.int64).tobytes())
    assert read_gcsr(path)[0]["checksum"] == graph.checksum() == want.hexdigest()
    back = read_graph(path)
    assert back._checksum == want.hexdigest() and back.checksum() == want.hexdigest()  # the header's, no new pass
    again = Graph(back.n, back.indptr, back.indices, back.weights)  # computed afresh: the same
    assert again.checksum() == want.hexdigest()


# --------------------------------------------------------------------------------------------------
# load_cached's cache
# --------------------------------------------------------------------------------------------------
def test_load_cached_keeps_a_gcsr_beside_the_text_and_rebuilds_a_bad_one(tmp_path, monkeypatch):
    text = tmp_path / "a.gr"
    write_graph(awkward(), text)
    first = load_cached(text)
    cache = tmp_path / "a.gr.gcsr"
    header, _ = read_gcsr(cache)
    assert header["cache"]["size"] == text.stat().st_size and header["cache"]["options"] == {}
    same_arrays(first, load_cached(text))
    cache.write_bytes(cache.read_bytes()[:-1])  # fails its checks: rebuilt from the text
    same_arrays(first, load_cached(text))
    assert read_gcsr(cache)[0]["cache"] == header["cache"]
    monkeypatch.setattr(formats, "read_graph", lambda *a, **k: pytest.fail("the stamped cache should be used"))
    same_arrays(first, load_cached(text))
    monkeypatch.undo()
    write_graph(awkward(), tmp_path / "b.wsg")
    same_arrays(first, load_cached(tmp_path / "b.wsg"))  # a binary source is read as it is, never cached
    assert not (tmp_path / "b.wsg.gcsr").exists()


# --------------------------------------------------------------------------------------------------
# GAPBS's converter
# --------------------------------------------------------------------------------------------------
def test_gapbs_generate_checks_its_arguments_and_the_converter(tmp_path):
    for kwargs, words in (({"kind": "rmat"}, "kind"), ({"scale": 0}, "scale"), ({"scale": 31}, "scale"),
                          ({"degree": 0}, "degree"), ({"path": tmp_path / "x.gr"}, ".sg")):
        args = {"path": tmp_path / "x.wsg", "kind": "kron", "scale": 4, "degree": 4, **kwargs}
        with pytest.raises(ValueError, match=words):
            gapbs_generate("unused", **args)
    with pytest.raises(GpuspError, match="exited 1.*no OpenMP"):
        gapbs_generate(failing_tool(tmp_path, "conv", "no OpenMP here"), tmp_path / "x.wsg", "kron", 4)
    writes_junk = tmp_path / "junk"
    writes_junk.write_text('#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = -b ] && printf xx > "$2"; shift; done\n')
    writes_junk.chmod(0o755)
    with pytest.raises(GpuspError, match="does not check.*17-byte header"):
        gapbs_generate(writes_junk, tmp_path / "x.wsg", "urand", 4)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conv", "junk"]


@pytest.fixture(scope="module")
def converter(tmp_path_factory) -> Path:
    """The pinned GAPBS's converter, built once for this module (skips with the reason when it cannot be)."""
    reason = peers.probe(peers.compiler())
    if reason:
        pytest.skip(reason)
    mirror = mirror_with("gapbs")
    root = tmp_path_factory.mktemp("gapbs")
    folder = peers.build("gapbs", root / "build", downloads=root / "downloads", mirror=str(mirror), offline=True)
    return folder / "converter"


def gapbs(converter, *args) -> str:
    proc = subprocess.run([str(converter), *map(str, args)], capture_output=True, text=True, check=True)
    return proc.stdout


def edge_list(path) -> np.ndarray:
    """GAPBS's edge list (``converter -e``): rows ``u v`` or ``u v w``."""
    return np.loadtxt(path, dtype=np.int64, ndmin=2)


@pytest.mark.parametrize("kind", ["kron", "urand"])
def test_gapbs_graphs_read_as_gapbs_lists_them_and_write_back_byte_identical(tmp_path, converter, kind):
    wsg = gapbs_generate(converter, tmp_path / f"{kind}.wsg", kind, 9, 6, threads=2)
    g = read_graph(wsg)
    assert g.meta["gapbs_directed"] is False and g.n == 2**9
    assert 1 <= int(g.weights.min()) and int(g.weights.max()) <= 255
    assert g.stats()["self_loops"] == 0 and g.stats()["duplicate_edges"] == 0
    gapbs(converter, "-f", wsg, "-w", "-e", tmp_path / "out.wel")
    listed = edge_list(tmp_path / "out.wel")
    src, dst, w = g.coo()
    np.testing.assert_array_equal(listed, np.column_stack([src, dst, w]))
    write_graph(g, tmp_path / "ours.wsg", undirected=True)
    assert (tmp_path / "ours.wsg").read_bytes() == wsg.read_bytes()
    again = gapbs_generate(converter, tmp_path / "again.wsg", kind, 9, 6, threads=1)
    assert again.read_bytes() == wsg.read_bytes()  # GAPBS's generator is seeded: the same graph every time
    sg = gapbs_generate(converter, tmp_path / f"{kind}.sg", kind, 9, 6)
    topology = read_graph(sg)
    np.testing.assert_array_equal(topology.indptr, g.indptr)
    np.testing.assert_array_equal(topology.indices, g.indices)


def test_ours_from_a_gr_read_by_gapbs_and_gapbs_from_the_gr_read_by_ours(tmp_path, converter):
    src, dst, w = awkward().coo()  # and an arc out of the last vertex: GAPBS's n is the largest id + 1
    g = Graph.from_edges(7, np.append(src, 6), np.append(dst, 4), np.append(w, 2), name="a")
    gr = tmp_path / "a.gr"
    write_graph(g, gr)
    # ours, written from the .gr graph: GAPBS reads it and writes it back byte for byte, and lists its arcs
    ours = tmp_path / "ours.wsg"
    write_graph(read_graph(gr), ours)
    out = gapbs(converter, "-f", ours, "-w", "-b", tmp_path / "back.wsg")
    assert "Graph has 7 nodes and 10 directed edges" in out
    assert (tmp_path / "back.wsg").read_bytes() == ours.read_bytes()
    gapbs(converter, "-f", ours, "-w", "-e", tmp_path / "ours.wel")
    src, dst, w = g.coo()
    np.testing.assert_array_equal(edge_list(tmp_path / "ours.wel"), np.column_stack([src, dst, w]))
    write_graph(unit(g), tmp_path / "ours.sg")
    gapbs(converter, "-f", tmp_path / "ours.sg", "-e", tmp_path / "ours.el")
    np.testing.assert_array_equal(edge_list(tmp_path / "ours.el"), np.column_stack([src, dst]))
    # GAPBS's own .wsg of the .gr (its builder makes the graph simple): ours reads its simple graph, and writes
    # the same bytes, transpose included
    gapbs(converter, "-f", gr, "-w", "-b", tmp_path / "gapbs.wsg")
    theirs = read_graph(tmp_path / "gapbs.wsg")
    same_arrays(g.simple(), theirs)
    write_graph(theirs, tmp_path / "rewritten.wsg")
    assert (tmp_path / "rewritten.wsg").read_bytes() == (tmp_path / "gapbs.wsg").read_bytes()


def test_planning_reads_the_counts_from_the_header(tmp_path):
    from gpusp.data.prepare import graph_size, has_weights

    write_graph(awkward(), tmp_path / "a.wsg")
    write_graph(unit(symmetric()), tmp_path / "s.sg", undirected=True)
    assert graph_size("a", {"file": str(tmp_path / "a.wsg")}) == (7, 9, False)
    assert graph_size("s", {"file": str(tmp_path / "s.sg")}) == (4, 8, False)
    assert has_weights({"file": "x.wsg"}) and not has_weights({"file": "x.sg"})
