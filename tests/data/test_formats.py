"""Graph file formats: round trips, gzip, SNAP quirks, the real mirrored datasets and every bad input."""

from __future__ import annotations

import csv
import gzip
import os
from pathlib import Path

import numpy as np
import pytest

import gpusp
from gpusp.data import formats
from gpusp.errors import GraphFormatError
from gpusp.data.formats import load_cached, read_coordinates, read_graph, write_graph
from gpusp.data.graph import Graph

from conftest import MIRROR


# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------
def same_graph(a: Graph, b: Graph, kind=True):
    assert a.n == b.n and a.m == b.m
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.weights, b.weights)
    if kind:
        assert a.weight_kind == b.weight_kind


def put(tmp_path, name, content) -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def expect_error(path, line, *words, reader=read_graph, **options):
    """reader(path) must raise GraphFormatError naming the file, the line and the problem."""
    with pytest.raises(GraphFormatError) as info:
        reader(path, **options)
    err = info.value
    message = str(err)
    assert Path(path).name in message
    assert err.line == line, message
    if line is not None:
        assert f"{Path(path).name}:{line}:" in message
    for word in words:
        assert word.lower() in message.lower(), message
    return err


def graph_mixed(kind="real"):
    """Duplicate edges, self-loops, zero weights and an isolated vertex (5)."""
    src = [0, 0, 0, 1, 2, 2, 3, 4, 4]
    dst = [1, 1, 0, 2, 0, 3, 3, 0, 2]
    w = [3, 3, 0, 7, 0, 12, 5, 100000, 1]
    return Graph.from_edges(7, src, dst, w, name="mixed", weight_kind=kind)


def graph_unit():
    return Graph.from_edges(6, [0, 1, 1, 2, 3, 3, 5], [1, 2, 2, 2, 0, 5, 0], name="unit")


def graph_random(seed=1, n=500, m=4000, negative=False):
    rng = np.random.default_rng(seed)
    weights = rng.integers(-50, 50, m) if negative else rng.integers(0, 10**6, m)
    return Graph.from_edges(n, rng.integers(0, n, m), rng.integers(0, n, m), weights,
                            name="random", weight_kind="generated")


SAMPLES = {
    "mixed": graph_mixed,
    "unit": graph_unit,
    "n1": lambda: Graph.from_edges(1, [], [], [], name="one", weight_kind="real"),
    "n1-loop": lambda: Graph.from_edges(1, [0, 0], [0, 0], [4, 0], name="loop", weight_kind="real"),
    "n0": lambda: Graph.from_edges(0, [], [], [], name="empty", weight_kind="real"),
    "isolated": lambda: Graph.from_edges(9, [2, 7], [7, 2], [5, 5], name="iso", weight_kind="real"),
    "random": graph_random,
}
TEXT_EXTS = [".gr", ".plain", ".txt"]


# --------------------------------------------------------------------------------------------------
# round trips
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sample", sorted(SAMPLES))
@pytest.mark.parametrize("ext", [".gr", ".plain", ".txt", ".npz", ".gr.gz", ".plain.gz", ".txt.gz", ".npz.gz"])
def test_round_trip(tmp_path, sample, ext):
    g = SAMPLES[sample]()
    path = tmp_path / f"g{ext}"
    write_graph(g, path)
    back = read_graph(path)
    # plain carries no weight kind; SNAP stores it in a comment, gr too
    same_graph(g, back, kind=".plain" not in ext)
    assert back.name == ("g" if ext != ".npz" and ext != ".npz.gz" else g.name)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary left


@pytest.mark.parametrize("ext", TEXT_EXTS + [e + ".gz" for e in TEXT_EXTS])
def test_text_rewrite_is_byte_identical(tmp_path, ext):
    g = graph_random(seed=3)
    first, second = tmp_path / f"a{ext}", tmp_path / f"b{ext}"
    write_graph(g, first)
    write_graph(read_graph(first), second)
    assert first.read_bytes() == second.read_bytes()


def test_plain_exact_bytes(tmp_path):
    g = Graph.from_edges(4, [0, 2, 0], [1, 3, 3], [7, -2, 0], name="x")
    path = tmp_path / "x.plain"
    write_graph(g, path)
    assert path.read_bytes() == b"4 3\n0 1 7\n0 3 0\n2 3 -2\n"


def test_plain_original_cpp_format(tmp_path):
    path = put(tmp_path, "cpp.plain", "5 3\n0 1 7\n1 2 3\n4 0 1")  # no final newline
    g = read_graph(path)
    assert (g.n, g.m) == (5, 3)
    assert g.coo()[0].tolist() == [0, 1, 4] and g.weights.tolist() == [7, 3, 1]
    header_only = put(tmp_path, "h.plain", "3 0")  # header without trailing newline
    g = read_graph(header_only)
    assert (g.n, g.m) == (3, 0)
    write_graph(g, tmp_path / "h2.plain")
    assert (tmp_path / "h2.plain").read_bytes() == b"3 0\n"


def test_plain_format_option_and_negative_weights(tmp_path):
    path = put(tmp_path, "edges.dat", "3 2\n0 1 -4\n1 2 5\n")
    g = read_graph(path, format="plain", weight_kind="generated", name="nm")
    assert g.weights.tolist() == [-4, 5] and g.weight_kind == "generated" and g.name == "nm"
    assert gpusp.read_graph(path, format="plain").m == 2  # the package-level API


def test_gr_layout_and_one_based_ids(tmp_path):
    g = Graph.from_edges(3, [0, 2], [2, 1], [4, 0], name="t", weight_kind="generated")
    path = tmp_path / "t.gr"
    write_graph(g, path)
    text = path.read_text().splitlines()
    assert "p sp 3 2" in text and "a 1 3 4" in text and "a 3 2 0" in text
    assert read_graph(path).weight_kind == "generated"


def test_gr_refuses_negative_weights_and_leaves_nothing(tmp_path):
    g = graph_random(negative=True)
    with pytest.raises(ValueError, match="negative"):
        write_graph(g, tmp_path / "neg.gr")
    assert list(tmp_path.iterdir()) == []


def test_snap_writer_columns(tmp_path):
    write_graph(graph_unit(), tmp_path / "u.txt")
    lines = [x for x in (tmp_path / "u.txt").read_text().splitlines() if not x.startswith("#")]
    assert lines[0] == "0\t1"
    write_graph(graph_mixed(), tmp_path / "w.txt")
    lines = [x for x in (tmp_path / "w.txt").read_text().splitlines() if not x.startswith("#")]
    assert lines[0] == "0\t1\t3"
    assert "# Nodes: 7 Edges: 9" in (tmp_path / "w.txt").read_text()


def test_snap_round_trip_keeps_original_ids(tmp_path):
    path = put(tmp_path, "sparse.txt", "# test\n100\t7\n7\t3000\n3000\t100\n")
    g = read_graph(path)
    assert g.id_map.tolist() == [7, 100, 3000]
    out = tmp_path / "again.txt"
    write_graph(g, out)
    back = read_graph(out)
    same_graph(g, back)
    assert back.id_map.tolist() == [7, 100, 3000]
    assert "100\t7" in out.read_text()


def test_npz_keeps_everything(tmp_path):
    g = Graph.from_edges(3, [0, 1], [1, 2], [5, 6], name="meta", weight_kind="generated",
                         id_map=np.array([10, 20, 30]), meta={"seed": 4, "nested": {"a": [1, 2]}})
    path = tmp_path / "m.npz"
    write_graph(g, path)
    back = read_graph(path)
    same_graph(g, back)
    assert back.name == "meta" and back.meta == g.meta and back.id_map.tolist() == [10, 20, 30]
    assert back.weights.dtype == g.weights.dtype and back.indices.dtype == g.indices.dtype
    assert back.checksum() == g.checksum()


def test_format_rows_matches_python():
    rng = np.random.default_rng(0)
    cols = [rng.integers(-(10**18), 10**18, 300), rng.integers(0, 12, 300),
            np.array([0, 9, 10, 99, 100, -1, -10, 2**62, -(2**62), 10**18] * 30)]
    expected = "".join(f"x{a} {b} {c}\n" for a, b, c in zip(*cols)).encode()
    assert formats._format_rows(cols, prefix=b"x") == expected
    assert formats._format_rows([np.array([], dtype=np.int64)]) == b""


def test_detect_format():
    assert formats.detect_format("a/USA-road-d.NY.gr.gz") == "gr"
    assert formats.detect_format("x.TXT") == "snap" and formats.detect_format("x.edges") == "snap"
    assert formats.detect_format("x.co.gz") == "co" and formats.detect_format("g.npz") == "npz"
    assert formats.detect_format("whatever.bin", "plain") == "plain"
    with pytest.raises(GraphFormatError, match="format="):
        formats.detect_format("graph.bin")
    with pytest.raises(ValueError, match="unknown graph format"):
        formats.detect_format("graph.gr", "metis")


# --------------------------------------------------------------------------------------------------
# gzip
# --------------------------------------------------------------------------------------------------
def test_gzip_write_is_deterministic_and_plain_gzip(tmp_path):
    g = graph_random()
    a, b = tmp_path / "a.gr.gz", tmp_path / "b.gr.gz"
    write_graph(g, a)
    write_graph(g, b)
    assert a.read_bytes()[:2] == b"\x1f\x8b"
    assert a.read_bytes() == b.read_bytes()
    plain = tmp_path / "p.gr"
    write_graph(g, plain)
    assert gzip.decompress(a.read_bytes()) == plain.read_bytes()


def test_gzip_detected_by_magic_not_name(tmp_path):
    path = put(tmp_path, "hidden.gr", gzip.compress(b"p sp 2 1\na 1 2 3\n"))
    g = read_graph(path)
    assert (g.n, g.m, g.weights.tolist()) == (2, 1, [3])


def test_gzip_multi_member(tmp_path):
    path = put(tmp_path, "multi.txt.gz", gzip.compress(b"0\t1\n") + gzip.compress(b"1\t2\n"))
    assert read_graph(path).m == 2


# --------------------------------------------------------------------------------------------------
# SNAP quirks
# --------------------------------------------------------------------------------------------------
def test_snap_sparse_ids_sorted_remap(tmp_path):
    path = put(tmp_path, "s.txt", "# c\n50 7\n7 1000000000000\n50 50\n")
    g = read_graph(path)
    assert g.n == 3 and g.weight_kind == "unit" and g.weights.tolist() == [1, 1, 1]
    assert g.id_map.tolist() == [7, 50, 1000000000000]
    src, dst, _ = g.coo()
    assert sorted(zip(src.tolist(), dst.tolist())) == [(0, 2), (1, 0), (1, 1)]


def test_snap_contiguous_ids_have_no_id_map(tmp_path):
    g = read_graph(put(tmp_path, "c.txt", "1 0\n0 2\n"))
    assert g.n == 3 and g.id_map is None


def test_snap_tabs_spaces_crlf_no_final_newline(tmp_path):
    body = "# Directed graph\r\n# Nodes: 4 Edges: 4\r\n# FromNodeId\tToNodeId\r\n0\t1\r\n1 2\r\n  2 \t 3  \r\n\r\n3\t0"
    g = read_graph(put(tmp_path, "mix.txt", body))
    assert (g.n, g.m) == (4, 4)
    assert g.coo()[1].tolist() == [1, 2, 3, 0]
    assert g.meta["snap_header"] == {"nodes": 4, "edges": 4}


def test_utf8_bom_ignored(tmp_path):
    g = read_graph(put(tmp_path, "bom.txt", b"\xef\xbb\xbf# Nodes: 2 Edges: 1\n0\t1\n"))
    assert (g.n, g.m) == (2, 1)


def test_package_level_api(tmp_path):
    path = tmp_path / "api.plain"
    gpusp.write_graph(graph_mixed(), path)
    same_graph(gpusp.read_graph(path), graph_mixed(), kind=False)


def test_snap_comment_lines_between_edges(tmp_path):
    g = read_graph(put(tmp_path, "cm.txt", "0 1\n# middle comment 9 9\n1 2\n\n# end\n"))
    assert (g.n, g.m) == (3, 2)


def test_snap_weight_column(tmp_path):
    g = read_graph(put(tmp_path, "w.txt", "0\t1\t5\n1\t2\t-3\n2\t0\t0\n"))
    assert g.weight_kind == "real" and g.weights.tolist() == [5, -3, 0]


def test_snap_header_nodes_keep_isolated_vertices(tmp_path):
    g = read_graph(put(tmp_path, "iso.txt", "# Nodes: 10 Edges: 2\n0\t3\n3\t9\n"))
    assert g.n == 10 and g.id_map is None
    g = read_graph(put(tmp_path, "iso2.txt", "# Nodes: 10 Edges: 2\n0\t3\n3\t9\n"), check_header=False)
    assert g.n == 3 and g.id_map.tolist() == [0, 3, 9]


def test_snap_symmetrize(tmp_path):
    path = put(tmp_path, "u.txt", "0 1\n1 0\n1 2\n2 2\n3 1\n3 1\n")
    g = read_graph(path, symmetrize=True)
    pairs = sorted(zip(*[x.tolist() for x in g.coo()[:2]]))
    # 0-1 already both ways; 1->2 gains 2->1; self-loop not doubled; duplicate 3->1 gets two reverses
    assert pairs == [(0, 1), (1, 0), (1, 2), (1, 3), (1, 3), (2, 1), (2, 2), (3, 1), (3, 1)]
    assert g.meta["symmetrized"] is True
    weighted = read_graph(put(tmp_path, "w.txt", "0 1 5\n1 0 6\n"), symmetrize=True)
    assert sorted(zip(*[x.tolist() for x in weighted.coo()])) == [(0, 1, 5), (0, 1, 6), (1, 0, 5), (1, 0, 6)]


def test_snap_header_edges_mismatch(tmp_path):
    path = put(tmp_path, "short.txt", "# x\n# Nodes: 3 Edges: 5\n0\t1\n1\t2\n")
    expect_error(path, 2, "Edges: 5", "2 edge lines", "truncated")
    assert read_graph(path, check_header=False).m == 2


def test_snap_header_nodes_too_few(tmp_path):
    expect_error(put(tmp_path, "few.txt", "# Nodes: 2 Edges: 2\n0\t10\n10\t20\n"), 1, "Nodes: 2", "3 distinct")


def test_snap_inconsistent_columns(tmp_path):
    expect_error(put(tmp_path, "cols.txt", "0 1\n1 2\n2 3 4\n"), 3, "expected 2 fields", "found 3")
    expect_error(put(tmp_path, "cols3.txt", "0 1 1\n1 2\n"), 2, "expected 3 fields", "found 2")
    expect_error(put(tmp_path, "cols1.txt", "# x\n0\n"), 2, "found 1 fields")


def test_snap_negative_id_and_non_integer_weight(tmp_path):
    expect_error(put(tmp_path, "neg.txt", "0 1\n-1 2\n"), 2, "-1", "negative")
    expect_error(put(tmp_path, "fw.txt", "0 1 2\n1 2 2.5\n"), 2, "weight", "'2.5'", "not an integer")


# --------------------------------------------------------------------------------------------------
# the real datasets of the offline mirror
# --------------------------------------------------------------------------------------------------
def manifest_rows():
    """One case per graph the mirror's MANIFEST.tsv lists; without a manifest one case that skips saying so."""
    path = MIRROR / "MANIFEST.tsv"
    if not path.exists():
        return [pytest.param(None, id="MANIFEST.tsv", marks=pytest.mark.needs_mirror("MANIFEST.tsv"))]
    with open(path, newline="") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if not r["file"].endswith(".co.gz")]
    return [pytest.param(r, id=r["file"], marks=pytest.mark.needs_mirror(r["file"])) for r in rows]


@pytest.mark.parametrize("row", manifest_rows())
def test_mirror_graph_counts(row, mirror):
    g = read_graph(mirror / row["file"])
    assert (g.n, g.m) == (int(row["nodes"]), int(row["edges"]))
    if row["source_kind"] == "dimacs9":
        assert g.weight_kind == "real" and int(g.weights.min()) >= 1
    else:
        assert g.weight_kind == "unit"


@pytest.mark.needs_mirror("USA-road-d.NY", "USA-road-d.BAY")
def test_mirror_known_sizes(mirror):
    ny, bay = mirror / "USA-road-d.NY.gr.gz", mirror / "USA-road-d.BAY.gr.gz"
    g = read_graph(ny)
    assert (g.n, g.m) == (264346, 733846)
    assert g.name == "USA-road-d.NY"
    src, dst, w = g.coo()
    assert (int(src[0]), int(dst[0]), int(w[0])) == (0, 1, 803)  # "a 1 2 803"
    assert (read_graph(bay).n, read_graph(bay).m) == (321270, 800172)


@pytest.mark.needs_mirror("USA-road-d.NY.co")
def test_mirror_coordinates(mirror):
    xy = read_coordinates(mirror / "USA-road-d.NY.co.gz")
    assert xy.shape == (264346, 2) and xy.dtype == np.int64
    assert xy[0].tolist() == [-73530767, 41085396]


@pytest.mark.needs_mirror("USA-road-d.NY")
def test_mirror_cache_round_trip(tmp_path, mirror):
    path = mirror / "USA-road-d.NY.gr.gz"
    g = load_cached(path, cache_dir=tmp_path)
    again = load_cached(path, cache_dir=tmp_path)
    same_graph(g, again)
    assert again.checksum() == g.checksum()


# --------------------------------------------------------------------------------------------------
# DIMACS coordinates
# --------------------------------------------------------------------------------------------------
def test_coordinates_small(tmp_path):
    path = put(tmp_path, "s.co", "c x\np aux sp co 3\nv 2 -5 6\nv 1 1 2\nv 3 0 0\n")
    assert read_coordinates(path).tolist() == [[1, 2], [-5, 6], [0, 0]]
    with pytest.raises(GraphFormatError, match="read_coordinates"):
        read_graph(path)


def test_coordinates_errors(tmp_path):
    expect_error(put(tmp_path, "d.co", "p aux sp co 2\nv 1 0 0\nv 1 3 3\n"), 3, "listed twice",
                 reader=read_coordinates)
    expect_error(put(tmp_path, "r.co", "p aux sp co 2\nv 1 0 0\nv 3 3 3\n"), 3, "out of range",
                 reader=read_coordinates)
    expect_error(put(tmp_path, "f.co", "p aux sp co 3\nv 1 0 0\nv 2 3 3\n"), 1, "only 2",
                 reader=read_coordinates)
    expect_error(put(tmp_path, "p.co", "p sp 3 3\nv 1 0 0\n"), 1, "p aux sp co N", reader=read_coordinates)


# --------------------------------------------------------------------------------------------------
# bad input: each case names the file, the line and the problem
# --------------------------------------------------------------------------------------------------
GR_OK = "c comment\np sp 3 3\na 1 2 5\na 2 3 0\na 3 1 7\n"


def test_gr_ok_baseline(tmp_path):
    g = read_graph(put(tmp_path, "ok.gr", GR_OK))
    assert (g.n, g.m) == (3, 3) and g.weights.tolist() == [5, 0, 7]


def test_gr_truncated_fewer_arcs(tmp_path):
    expect_error(put(tmp_path, "trunc.gr", "c x\np sp 3 3\na 1 2 5\na 2 3 0\n"), 2, "announces 3", "only 2",
                 "truncated")


def test_gr_truncated_mid_line(tmp_path):
    expect_error(put(tmp_path, "cut.gr", "p sp 3 3\na 1 2 5\na 2 3 0\na 3 1"), 4, "expected 3 fields",
                 "truncated")


def test_gr_more_arcs_than_header(tmp_path):
    expect_error(put(tmp_path, "more.gr", "p sp 3 2\na 1 2 5\na 2 3 0\na 3 1 7\n"), 4, "more arc", "2 announced",
                 "disagree")


def test_gr_node_id_out_of_range(tmp_path):
    expect_error(put(tmp_path, "range.gr", "p sp 3 3\na 1 2 5\na 2 4 0\na 3 1 7\n"), 3, "node id 4",
                 "out of range 1..3")


def test_gr_node_id_zero(tmp_path):
    expect_error(put(tmp_path, "zero.gr", "p sp 3 3\na 1 2 5\na 2 3 0\na 0 1 7\n"), 4, "node id 0",
                 "start at 1")


def test_gr_non_numeric_field(tmp_path):
    expect_error(put(tmp_path, "alpha.gr", "p sp 3 3\na 1 2 5\na 2 x 0\na 3 1 7\n"), 3, "head id", "'x'",
                 "not an integer")


def test_gr_negative_weight(tmp_path):
    expect_error(put(tmp_path, "negw.gr", "p sp 3 3\na 1 2 5\na 2 3 -4\na 3 1 7\n"), 3, "negative weight -4")


@pytest.mark.parametrize("weight", ["1.5", "1.0", "1e3", "0x10", "NaN", "7,5"])
def test_gr_non_integer_weight(tmp_path, weight):
    expect_error(put(tmp_path, "fw.gr", f"p sp 3 3\na 1 2 5\na 2 3 {weight}\na 3 1 7\n"), 3, "weight",
                 "not an integer")


def test_plain_non_integer_weight(tmp_path):
    expect_error(put(tmp_path, "fw.plain", "3 2\n0 1 1\n1 2 0.5\n"), 3, "weight", "'0.5'", "not an integer")


def test_gr_weight_too_large_for_int64(tmp_path):
    expect_error(put(tmp_path, "huge.gr", "p sp 2 1\na 1 2 99999999999999999999\n"), 2, "64 bits")


def test_gr_missing_p_line(tmp_path):
    expect_error(put(tmp_path, "nop.gr", "c x\na 1 2 5\n"), None, "missing problem line", "p sp N M")


def test_gr_duplicate_p_line(tmp_path):
    expect_error(put(tmp_path, "twop.gr", "p sp 3 1\nc x\np sp 3 1\na 1 2 5\n"), 3, "duplicate problem line",
                 "line 1")


def test_gr_malformed_p_line(tmp_path):
    expect_error(put(tmp_path, "badp.gr", "c\np sp 3\na 1 2 5\n"), 2, "malformed", "p sp N M")
    expect_error(put(tmp_path, "badp2.gr", "p max 3 1\na 1 2 5\n"), 1, "malformed")


def test_gr_arc_before_p_line(tmp_path):
    expect_error(put(tmp_path, "early.gr", "a 1 2 5\np sp 3 1\n"), 1, "before the problem line")


def test_gr_unexpected_line_kind(tmp_path):
    expect_error(put(tmp_path, "kind.gr", "p sp 3 1\nx 1 2 5\n"), 2, "unexpected line")
    expect_error(put(tmp_path, "glued.gr", "p sp 3 1\na1 2 5\n"), 2, "expected a line 'a")


def test_gr_wrong_field_count(tmp_path):
    expect_error(put(tmp_path, "extra.gr", "p sp 3 2\na 1 2 5 9\na 2 3 1\n"), 2, "expected 3 fields", "found 4")
    expect_error(put(tmp_path, "extra_all.gr", "p sp 3 2\na 1 2 5 9\na 2 3 1 9\n"), 2, "found 4")


@pytest.mark.parametrize("ext", [".gr", ".txt", ".plain"])
def test_empty_file(tmp_path, ext):
    expect_error(put(tmp_path, f"empty{ext}", b""), None, "empty file")
    expect_error(put(tmp_path, f"blank{ext}", b"\n  \n\t\r\n"), None, "empty")


@pytest.mark.parametrize("ext", [".gr", ".txt", ".plain"])
def test_binary_junk_random_bytes(tmp_path, ext):
    junk = np.random.default_rng(7).integers(1, 256, 4096, dtype=np.uint8).tobytes()  # no NUL
    junk = junk.replace(b"\x1f\x8b", b"xx").replace(b"\n", b"\x07")
    path = put(tmp_path, f"junk{ext}", b"\x07" + junk)
    expect_error(path, 1, "binary")


@pytest.mark.parametrize("ext", [".gr", ".txt", ".plain"])
def test_nul_bytes(tmp_path, ext):
    path = put(tmp_path, f"nul{ext}", b"p sp 2 1\n" + b"\x00" * 64 + b"\n")
    expect_error(path, 2, "NUL byte", "binary")


def test_not_gzip_despite_name(tmp_path):
    expect_error(put(tmp_path, "fake.gr.gz", GR_OK), None, "not gzip")


def test_truncated_gzip(tmp_path):
    data = gzip.compress(GR_OK.encode() * 50)
    expect_error(put(tmp_path, "cut.gr.gz", data[: len(data) // 2]), None, "gzip")


def test_stray_carriage_return(tmp_path):
    expect_error(put(tmp_path, "cr.gr", "p sp 3 1\na 1 2\r5\n"), 2, "carriage return")


def test_crlf_gr_accepted(tmp_path):
    g = read_graph(put(tmp_path, "crlf.gr", GR_OK.replace("\n", "\r\n")))
    assert g.weights.tolist() == [5, 0, 7]


def test_gr_comments_between_arcs_and_blank_lines(tmp_path):
    g = read_graph(put(tmp_path, "cm.gr", "p sp 3 3\na 1 2 5\nc mid a 9 9 9\n\na 2 3 0\n  a 3 1 7  \nc end"))
    assert g.weights.tolist() == [5, 0, 7]


def test_error_line_numbers_count_comments(tmp_path):
    text = "c a\nc b\np sp 3 3\nc c\na 1 2 5\nc d\na 2 3 z\na 3 1 7\n"
    expect_error(put(tmp_path, "lines.gr", text), 7, "'z'")


def test_plain_errors(tmp_path):
    expect_error(put(tmp_path, "h.plain", "3\n0 1 1\n"), 1, "N M")
    expect_error(put(tmp_path, "r.plain", "3 2\n0 1 1\n1 3 1\n"), 3, "node id 3", "out of range 0..2")
    expect_error(put(tmp_path, "s.plain", "3 3\n0 1 1\n1 2 1\n"), 1, "only 2", "truncated")
    expect_error(put(tmp_path, "l.plain", "3 1\n0 1 1\n1 2 1\n"), 3, "more edge lines")


def test_npz_errors(tmp_path):
    expect_error(put(tmp_path, "bad.npz", b"not a zip at all"), None, "npz")
    np.savez(tmp_path / "other.npz", a=np.arange(3))
    expect_error(tmp_path / "other.npz", None, "not a valid gpusp")


# --------------------------------------------------------------------------------------------------
# atomic writes
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ext", [".gr", ".plain", ".txt", ".gr.gz", ".npz"])
def test_failed_write_leaves_nothing(tmp_path, monkeypatch, ext):
    calls = {"n": 0}
    real_rows, real_npz = formats._format_rows, formats._npz_bytes

    def boom_rows(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 1:
            raise RuntimeError("disk on fire")
        return real_rows(*args, **kwargs)

    def boom_npz(*args, **kwargs):
        real_npz(*args, **kwargs)
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(formats, "_format_rows", boom_rows)
    monkeypatch.setattr(formats, "_npz_bytes", boom_npz)
    monkeypatch.setattr(formats, "_CHUNK_ROWS", 100)  # several chunks: fail after the first was written
    path = tmp_path / f"g{ext}"
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_graph(graph_random(), path)
    assert list(tmp_path.iterdir()) == []


def test_failed_write_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "keep.plain"
    write_graph(graph_mixed(), path)
    before = path.read_bytes()
    monkeypatch.setattr(formats, "_format_rows", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("x")))
    with pytest.raises(RuntimeError):
        write_graph(graph_random(), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["keep.plain"]


def test_chunked_write_equals_single_chunk(tmp_path, monkeypatch):
    g = graph_random()
    write_graph(g, tmp_path / "one.gr")
    monkeypatch.setattr(formats, "_CHUNK_ROWS", 37)
    write_graph(g, tmp_path / "many.gr")
    assert (tmp_path / "one.gr").read_bytes() == (tmp_path / "many.gr").read_bytes()


# --------------------------------------------------------------------------------------------------
# the binary (.gcsr) cache
# --------------------------------------------------------------------------------------------------
def test_load_cached_creates_and_reuses(tmp_path, monkeypatch):
    src = tmp_path / "g.gr"
    write_graph(graph_mixed(), src)
    g = load_cached(src)
    cache = formats.cache_path(src)
    assert cache == tmp_path / "g.gr.gcsr" and cache.exists()
    monkeypatch.setattr(formats, "read_graph", lambda *a, **k: pytest.fail("cache not used"))
    again = load_cached(src)
    same_graph(g, again)
    assert again.name == g.name and again.meta == g.meta


def test_load_cached_notices_a_changed_source(tmp_path):
    src = tmp_path / "g.plain"
    write_graph(graph_mixed(), src)
    assert load_cached(src).m == 9
    write_graph(graph_random(), src)
    st = src.stat()
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert load_cached(src).m == graph_random().m


def test_load_cached_options_and_cache_dir(tmp_path):
    src = put(tmp_path, "u.txt", "0 1\n1 2\n")
    cache_dir = tmp_path / "cache"
    plain = load_cached(src, cache_dir=cache_dir)
    sym = load_cached(src, cache_dir=cache_dir, symmetrize=True)
    assert (plain.m, sym.m) == (2, 4)
    assert load_cached(src, cache_dir=cache_dir, symmetrize=True).m == 4
    assert len(list(cache_dir.glob("*.gcsr"))) == 2
    assert not list(tmp_path.glob("*.gcsr"))


def test_load_cached_rebuilds_a_corrupt_cache(tmp_path):
    src = tmp_path / "g.gr"
    write_graph(graph_mixed(), src)
    formats.cache_path(src).write_bytes(b"garbage")
    assert load_cached(src).m == 9
    assert formats.cache_path(src).read_bytes()[:8] == b"GPUSPCSR"


def test_relabel_renames_every_arc_and_refuses_non_permutations():
    g = Graph.from_edges(4, np.array([0, 0, 2, 3, 3]), np.array([1, 2, 2, 0, 0]), np.array([5, 1, 7, 2, 9]))
    new_id = np.array([2, 0, 3, 1])
    r = g.relabel(new_id)
    dense, rdense = g.to_dense(np.int64), r.to_dense(np.int64)
    assert np.array_equal(rdense[np.ix_(new_id, new_id)], dense) and r.m == g.m
    with pytest.raises(ValueError, match="permutation"):
        g.relabel(np.array([0, 0, 1, 2]))
