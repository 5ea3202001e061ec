"""Bad graph input never yields a wrong answer or a traceback (issue 23, graph files).

Binary graphs (``.npz`` archives and load_cached's ``.gcsr`` caches) are checked on load in one place (the archive
by ``formats._load_npz`` or ``serialized.read_gcsr``, the CSR arrays by ``Graph.__post_init__``) and get the
distance dtype a text graph gets; text readers refuse binary content before any line-level check; the vectorised
text fast path never accepts what the per-line path refuses; distances never overflow silently on the way in.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import gpusp
from gpusp import cli
from gpusp.data import formats, graph as graph_module, textlines
from gpusp.data.formats import load_cached, read_coordinates, read_graph, write_graph
from gpusp.data.graph import MAX_VERTICES, Graph, choose_dtype
from gpusp.data.serialized import gcsr_chunks, read_gcsr
from gpusp.errors import GraphFormatError, WeightOverflowError

BIG = 600_000_000  # fits int32; five of them in a row do not


# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------
def chain(n=6, weight=BIG) -> Graph:
    """A path 0 -> 1 -> ... -> n-1 plus a short arc back: the far end lies (n - 1) x weight away."""
    src = list(range(n - 1)) + [n - 1]
    dst = list(range(1, n)) + [0]
    return Graph.from_edges(n, src, dst, [weight] * (n - 1) + [1], name="chain")


def archive(graph: Graph, **changes) -> dict:
    """The arrays gpusp writes for ``graph``, with ``changes`` applied (None removes an array)."""
    with np.load(io.BytesIO(formats._npz_bytes(graph)), allow_pickle=False) as z:
        arrays = {key: z[key] for key in z.files}
    for key, value in changes.items():
        if value is None:
            arrays.pop(key, None)
        else:
            arrays[key] = value
    return arrays


def save(tmp_path, name, arrays, **options) -> Path:
    path = tmp_path / name
    with open(path, "wb") as fh:
        np.savez(fh, **arrays, **options)
    return path


def header(**changes) -> np.ndarray:
    base = {"format": "gpusp-graph", "version": 1, "name": "g", "weight_kind": "real", "meta": {}}
    base.update(changes)
    return np.array(json.dumps({k: v for k, v in base.items() if v is not ...}))


def refused(path, *words, error=GraphFormatError, reader=read_graph):
    """reader(path) raises ``error`` whose message names the file and holds ``words``."""
    with pytest.raises(error) as info:
        reader(path)
    message = str(info.value)
    assert Path(path).name in message, message
    for word in words:
        assert word.lower() in message.lower(), message
    return message


def put(tmp_path, name, content) -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def distances(graph: Graph, solver: str) -> list:
    """Distances from vertex 0, unreachable as None."""
    result = gpusp.solve(graph, solver, source=0)
    return [None if d == result.inf else int(d) for d in np.asarray(result.dist).tolist()]


# --------------------------------------------------------------------------------------------------
# npz: the distance dtype is the text graph's, never the stored one
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("solver", ["scipy_dijkstra", "dijkstra_cpu"])
def test_int32_cache_whose_paths_need_int64_gives_the_text_distances(tmp_path, solver):
    text = tmp_path / "chain.gr"
    write_graph(chain(), text)
    from_text = read_graph(text)
    assert from_text.dtype == np.int64
    path = save(tmp_path, "chain.npz", archive(from_text, weights=from_text.weights.astype(np.int32)))
    cached = read_graph(path)
    assert cached.dtype == np.int64  # widened: every weight was intact, only the sums need int64
    expected = [k * BIG for k in range(6)]
    assert distances(from_text, solver) == expected
    assert distances(cached, solver) == expected


def rewrite_cache(path, **changes) -> None:
    """Write load_cached's .gcsr cache at ``path`` again with some arrays changed, its header (the stamp) kept."""
    header, arrays = read_gcsr(path)
    arrays = {key: np.array(value) for key, value in arrays.items()}
    arrays.update(changes)
    stored = SimpleNamespace(n=header["n"], name=header["name"], weight_kind=header["weight_kind"],
                             meta=header["meta"], id_map=arrays.get("id_map"), checksum=lambda: header["checksum"],
                             **{key: arrays[key] for key in ("indptr", "indices", "weights")})
    formats._write_chunks(path, gcsr_chunks(stored, {"cache": header["cache"]}))


def test_load_cached_widens_an_int32_cache_with_a_valid_stamp(tmp_path, monkeypatch):
    text = tmp_path / "chain.gr"
    write_graph(chain(), text)
    load_cached(text)
    cache = formats.cache_path(text)
    assert read_gcsr(cache)[1]["weights"].dtype == np.int64
    rewrite_cache(cache, weights=read_gcsr(cache)[1]["weights"].astype(np.int32))
    assert read_gcsr(cache)[1]["weights"].dtype == np.int32
    monkeypatch.setattr(formats, "read_graph", lambda *a, **k: pytest.fail("the stamped cache should be used"))
    graph = load_cached(text)
    assert graph.dtype == np.int64
    assert distances(graph, "dijkstra_cpu") == [k * BIG for k in range(6)]


def test_int64_weights_whose_paths_fit_int32_are_narrowed(tmp_path):
    small = chain(weight=7)
    assert small.dtype == np.int32
    path = save(tmp_path, "small.npz", archive(small, weights=small.weights.astype(np.int64),
                                                indices=small.indices.astype(np.int64),
                                                indptr=small.indptr.astype(np.int64)))
    graph = read_graph(path)
    assert (graph.dtype, graph.indices.dtype, graph.indptr.dtype) == (np.int32, np.int32, np.int32)
    assert graph.checksum() == small.checksum()


@pytest.mark.parametrize("dtype", [np.uint32, np.uint16, ">i4", ">i8", np.int16])
def test_other_integer_dtypes_load_as_the_canonical_ones(tmp_path, dtype):
    g = chain(weight=30_000)
    path = save(tmp_path, "w.npz", archive(g, weights=g.weights.astype(dtype), indices=g.indices.astype(dtype)))
    graph = read_graph(path)
    assert graph.weights.dtype == np.dtype(np.int32) and graph.indices.dtype == np.dtype(np.int32)
    assert graph.weights.dtype.isnative and graph.checksum() == g.checksum()


def test_uint32_weights_beyond_int32_are_kept_exactly(tmp_path):
    g = Graph.from_edges(3, [0, 1], [1, 2], [3_000_000_000, 5])
    path = save(tmp_path, "u.npz", archive(g, weights=g.weights.astype(np.uint32)))
    graph = read_graph(path)
    assert graph.dtype == np.int64 and graph.weights.tolist() == [3_000_000_000, 5]
    assert distances(graph, "dijkstra_cpu") == [0, 3_000_000_000, 3_000_000_005]


def test_uint64_weights_beyond_int64_are_refused_not_wrapped(tmp_path):
    g = chain(n=3, weight=5)
    weights = g.weights.astype(np.uint64)
    weights[0] = 2**63 + 5  # astype(int64) would make it negative
    path = save(tmp_path, "u64.npz", archive(g, weights=weights))
    refused(path, "overflow", error=WeightOverflowError)


# --------------------------------------------------------------------------------------------------
# npz: every malformed array, header and archive is a GraphFormatError naming the file
# --------------------------------------------------------------------------------------------------
G = chain(n=4, weight=3)
BAD_ARRAYS = {
    "float weights": ({"weights": G.weights.astype(np.float64)}, "weights", "float64"),
    "float indices": ({"indices": G.indices.astype(np.float32)}, "indices", "float32"),
    "float indptr": ({"indptr": G.indptr.astype(np.float64)}, "indptr", "float64"),
    "bool weights": ({"weights": np.ones(G.m, dtype=bool)}, "weights", "bool"),
    "complex weights": ({"weights": G.weights.astype(np.complex128)}, "weights", "complex"),
    "text weights": ({"weights": G.weights.astype(str)}, "weights", "<U"),
    "2-D weights": ({"weights": G.weights.reshape(1, -1)}, "weights", "1-D"),
    "short weights": ({"weights": G.weights[:-1]}, "weights", "one per arc"),
    "short indptr": ({"indptr": G.indptr[:-1]}, "indptr", "n + 1"),
    "indptr from 1": ({"indptr": G.indptr + 1}, "indptr", "expected 0 to m"),
    "indptr past m": ({"indptr": np.r_[G.indptr[:-1], G.m + 1]}, "indptr", "expected 0 to m"),
    "indptr falls": ({"indptr": np.array([0, 3, 1, 3, 4])}, "indptr", "decreases"),
    "negative index": ({"indices": np.r_[G.indices[:-1], -1]}, "indices", "vertex id -1"),
    "index n": ({"indices": np.r_[G.indices[:-1], G.n]}, "indices", f"vertex id {G.n}"),
    "index far out": ({"indices": np.r_[G.indices[:-1].astype(np.int64), 2**40]}, "indices", "out of range"),
    "negative n": ({"n": np.int64(-1)}, "n = -1"),
    "float n": ({"n": np.float64(4)}, "n must be an integer"),
    "n as a vector": ({"n": np.array([4])}, "n must be an integer"),
    "n too large": ({"n": np.int64(MAX_VERTICES + 1)}, "vertex count"),
    "id_map too short": ({"id_map": np.arange(2)}, "id_map"),
    "missing weights": ({"weights": None}, "missing weights"),
    "missing header": ({"header": None}, "missing header"),
    "extra array": ({"extra": np.arange(3)}, "unexpected extra"),
    "header not text": ({"header": np.arange(3)}, "header", "json text"),
    "header not json": ({"header": np.array("{not json")}, "header", "not valid json"),
    "header a list": ({"header": np.array("[1, 2]")}, "header", "gpusp-graph"),
    "foreign format": ({"header": header(format="other")}, "header", "gpusp-graph"),
    "no version": ({"header": header(version=...)}, "version none"),
    "version 0": ({"header": header(version=0)}, "version 0"),
    "version text": ({"header": header(version="1")}, "version '1'"),
    "version true": ({"header": header(version=True)}, "version true"),
    "newer version": ({"header": header(version=formats.NPZ_VERSION + 1)}, "newer gpusp"),
    "name a number": ({"header": header(name=5)}, "name 5"),
    "unknown weight kind": ({"header": header(weight_kind="heavy")}, "weight_kind 'heavy'"),
    "meta a list": ({"header": header(meta=[1])}, "meta"),
}


@pytest.mark.parametrize("case", sorted(BAD_ARRAYS))
def test_malformed_npz_is_refused_naming_the_file(tmp_path, case):
    changes, *words = BAD_ARRAYS[case]
    path = save(tmp_path, "bad.npz", archive(G, **changes))
    refused(path, "not a valid gpusp .npz graph", *words)


def test_text_named_npz_is_said_to_look_like_text(tmp_path):
    refused(put(tmp_path, "t.npz", "p sp 3 1\na 1 2 5\n"), "no zip magic", "starts like text", "'p sp 3 1")
    refused(put(tmp_path, "e.npz", b""), "no zip magic")


def test_object_arrays_are_refused_without_unpickling(tmp_path):
    path = save(tmp_path, "obj.npz", archive(G, weights=np.array([3, 3, 3, None], dtype=object)),
                allow_pickle=True)
    refused(path, "weights", "cannot be read")


@pytest.mark.parametrize("cut", [0.3, 0.7, 0.97])
def test_truncated_npz_is_refused(tmp_path, cut):
    data = formats._npz_bytes(G)
    refused(put(tmp_path, "cut.npz", data[: int(len(data) * cut)]), "not a valid gpusp .npz graph")


def test_corrupt_npz_member_is_refused(tmp_path):
    data = bytearray(formats._npz_bytes(chain(n=50, weight=3)))
    start = data.index(b"weights.npy") + 200  # inside the stored member: its CRC no longer matches
    data[start:start + 8] = b"\xff" * 8
    refused(put(tmp_path, "flip.npz", bytes(data)), "not a valid gpusp .npz graph")


def test_compressed_npz_and_gzipped_npz_load(tmp_path):
    arrays = archive(G)
    path = tmp_path / "c.npz"
    np.savez_compressed(path, **arrays)
    assert read_graph(path).checksum() == G.checksum()
    gz = put(tmp_path, "g.npz.gz", gzip.compress(formats._npz_bytes(G)))
    assert read_graph(gz).checksum() == G.checksum()


def test_load_cached_rebuilds_a_cache_with_foreign_dtypes(tmp_path):
    text = tmp_path / "g.gr"
    write_graph(G, text)
    load_cached(text)
    cache = formats.cache_path(text)
    rewrite_cache(cache, weights=read_gcsr(cache)[1]["weights"].astype(np.float64))
    graph = load_cached(text)
    assert graph.checksum() == G.checksum()
    assert read_gcsr(cache)[1]["weights"].dtype == G.weights.dtype  # rewritten from the source


# --------------------------------------------------------------------------------------------------
# the command line: one line naming the file, no traceback
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["float weights", "float indices", "index n", "header not json"])
@pytest.mark.parametrize("command", [["info"], ["solve", "--solver", "dijkstra_cpu", "--graph"]])
def test_cli_refuses_a_bad_npz_in_one_line(tmp_path, capsys, case, command):
    changes, *_ = BAD_ARRAYS[case]
    path = save(tmp_path, "bad.npz", archive(G, **changes))
    code = cli.main([*command, str(path)])
    out, err = capsys.readouterr()
    assert code == 1, (out, err)
    assert len(err.splitlines()) == 1 and err.startswith("gpusp: error: ") and "bad.npz" in err, err


def test_cli_solves_a_widened_int32_cache_correctly(tmp_path, capsys):
    g = chain()
    path = save(tmp_path, "chain.npz", archive(g, weights=g.weights.astype(np.int32)))
    assert cli.main(["solve", "--graph", str(path), "--solver", "dijkstra_cpu", "--source", "0",
                     "--output", "print", "--validate"]) == 0
    out = capsys.readouterr().out
    assert str(5 * BIG) in out, out


# --------------------------------------------------------------------------------------------------
# distances never overflow silently on the way in (text files too)
# --------------------------------------------------------------------------------------------------
def test_one_vertex_self_loop_keeps_a_weight_beyond_int32(tmp_path):
    path = put(tmp_path, "loop.plain", "1 1\n0 0 2147483653\n")
    graph = read_graph(path)
    assert graph.weights.tolist() == [2147483653]  # int32 would wrap it to a negative loop
    assert graph.dtype == np.int64


def test_the_cheap_bounds_decide_the_distance_dtype_as_the_exact_bound_does(monkeypatch):
    """choose_dtype tries bounds that cost no segmented pass first; they must decide as the exact bound would.
    Weights are drawn so that the per-vertex bound lands near INF32 (or 2**29 with negative weights)."""
    exact_calls = []
    exact = graph_module._path_bound
    monkeypatch.setattr(graph_module, "_path_bound", lambda *a: exact_calls.append(1) or exact(*a))
    rng = np.random.default_rng(5)
    outcomes = set()
    for _ in range(300):
        n, m = int(rng.integers(2, 400)), int(rng.integers(1, 3000))
        negative = bool(rng.random() < 0.3)
        limit = 2**29 if negative else int(graph_module.INF32)
        wmax = max(1, int(limit / n * 10 ** rng.uniform(-0.5, 0.8)))
        weights = rng.integers(-wmax if negative else 0, wmax + 1, m)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rng.integers(0, n, m), minlength=n), out=indptr[1:])
        largest = int(np.abs(weights).max())
        bound = max(exact(n, weights, indptr, int(weights.min()), int(weights.max())), largest)
        expected = np.int32 if bound < limit else np.int64
        assert choose_dtype(n, weights, indptr) == expected, (n, m, wmax, negative)
        outcomes.add(np.dtype(expected).name)
    assert outcomes == {"int32", "int64"}
    assert 0 < len(exact_calls) < 300  # the cheap bounds decided some graphs, the exact pass the others


def test_path_bound_sum_beyond_int64_is_refused_not_wrapped(tmp_path):
    n = 8  # eight arcs of 2**60: the per-vertex sum is 2**63, which int64 wraps to a negative bound
    text = "".join(f"{u} {(u + 1) % n} {2**60}\n" for u in range(n))
    message = refused(put(tmp_path, "ring.plain", f"{n} {n}\n{text}"), "overflow", error=WeightOverflowError)
    assert "ring.plain" in message
    with pytest.raises(WeightOverflowError):
        choose_dtype(n, np.full(n, 2**60, dtype=np.int64), np.arange(n + 1))


def test_weight_overflow_in_a_text_file_names_the_file(tmp_path):
    path = put(tmp_path, "heavy.gr", f"p sp 3 2\na 1 2 {2**62}\na 2 3 {2**62}\n")
    refused(path, "heavy.gr", "overflow", error=WeightOverflowError)


def test_float_weights_beyond_int64_are_refused_not_wrapped():
    with pytest.raises(WeightOverflowError):
        Graph.from_edges(2, [0], [1], np.array([1e19]))
    with pytest.raises(ValueError, match="integers"):
        Graph.from_edges(2, [0], [1], np.array([np.nan]))


def test_vertex_count_beyond_int32_ids_is_refused(tmp_path):
    refused(put(tmp_path, "wide.gr", f"p sp {MAX_VERTICES + 1} 1\na 1 2 3\n"), "vertex count")


def test_vertex_count_beyond_memory_is_refused_before_allocating(tmp_path, monkeypatch):
    """A header announcing more vertices than memory holds is refused, not met by the kernel's OOM killer."""
    real = graph_module.os.sysconf
    monkeypatch.setattr(graph_module.os, "sysconf",
                        lambda name: 1 if name == "SC_PAGE_SIZE" else 2**20 if name == "SC_PHYS_PAGES" else real(name))
    refused(put(tmp_path, "huge.gr", "p sp 1000000 1\na 1 2 3\n"), "n = 1,000,000", "memory")
    assert read_graph(put(tmp_path, "fits.gr", "p sp 1000 1\na 1 2 3\n")).n == 1000


@pytest.mark.parametrize("n", [2.0, "3", True, None])
def test_vertex_count_must_be_an_integer(n):
    with pytest.raises(ValueError, match="n"):
        Graph.from_edges(n, [0], [1], [1])


# --------------------------------------------------------------------------------------------------
# text readers: binary content is refused before any line-level check
# --------------------------------------------------------------------------------------------------
TEXT_NAMES = ["g.gr", "g.txt", "g.plain", "g.co"]


def read_any(path):
    return read_coordinates(path) if formats.detect_format(path) == "co" else read_graph(path)


@pytest.mark.parametrize("name", TEXT_NAMES)
def test_npz_renamed_as_text_is_a_zip_archive(tmp_path, name):
    refused(put(tmp_path, name, formats._npz_bytes(G)), "zip archive", ".npz", reader=read_any)


@pytest.mark.parametrize("name", TEXT_NAMES)
def test_random_bytes_with_an_early_carriage_return_are_binary(tmp_path, name):
    junk = np.random.default_rng(3).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    data = b"p sp 3\r1 " + junk.replace(b"\x1f\x8b", b"xx")
    message = refused(put(tmp_path, name, data), "binary data", reader=read_any)
    assert "carriage return" not in message


@pytest.mark.parametrize("name", TEXT_NAMES)
def test_gzip_of_binary_data_is_binary(tmp_path, name):
    junk = b"c ok\r\n" + bytes(range(256)) * 4
    refused(put(tmp_path, name + ".gz", gzip.compress(junk)), "NUL byte", "binary", reader=read_any)
    refused(put(tmp_path, "z" + name + ".gz", gzip.compress(formats._npz_bytes(G))), "zip archive",
            reader=read_any)


@pytest.mark.parametrize("encoding, words", [("utf-16", "UTF-16"), ("utf-16-le", "UTF-16 text (little"),
                                             ("utf-16-be", "UTF-16 text (big"), ("utf-32", "UTF-32")])
def test_utf16_and_utf32_text_is_named(tmp_path, encoding, words):
    text = "p sp 3 2\r\na 1 2 5\r\na 2 3 7\r\n"
    message = refused(put(tmp_path, "wide.gr", text.encode(encoding)), words, "iconv")
    assert "carriage return" not in message


@pytest.mark.parametrize("compress, words", [(bz2.compress, "bzip2"), (lzma.compress, "xz"),
                                             (gzip.compress, "compressed twice")])
def test_other_compressions_are_named(tmp_path, compress, words):
    text = b"p sp 3 1\na 1 2 5\n"
    data = compress(gzip.compress(text)) if compress is gzip.compress else compress(text)
    refused(put(tmp_path, "packed.gr", data), words)


def test_npy_and_zstd_signatures_are_named(tmp_path):
    buf = io.BytesIO()
    np.save(buf, np.arange(5))
    refused(put(tmp_path, "a.txt", buf.getvalue()), ".npy")
    refused(put(tmp_path, "b.txt", b"\x28\xb5\x2f\xfd" + b"0 1\n" * 4), "zstd")


def test_a_control_byte_deep_in_a_comment_is_binary(tmp_path):
    body = "".join(f"a {i} {i + 1} 1\n" for i in range(1, 20_000))
    text = f"p sp 20000 19999\n{body}c trailing \x07 junk\n"
    refused(put(tmp_path, "late.gr", text), "control byte 0x07", "binary")


def test_a_stray_carriage_return_in_text_is_still_named(tmp_path):
    refused(put(tmp_path, "cr.gr", "p sp 3 1\na 1 2\r5\n"), "carriage return")


# --------------------------------------------------------------------------------------------------
# the vectorised fast path accepts nothing the per-line path refuses
# --------------------------------------------------------------------------------------------------
FUZZ_BYTES = b"0123456789 \t\r\n+-.eEaxv#,_\x0b"


def parse_both(path, monkeypatch):
    """(result or error message) with the fast path, and without it."""
    outcomes = []
    for fast in (True, False):
        with monkeypatch.context() as patch:
            if not fast:
                patch.setattr(textlines.Lines, "_simple_records", lambda *args: None)
            try:
                g = read_any(path)
                outcomes.append(g.tolist() if isinstance(g, np.ndarray) else
                                (g.n, g.indptr.tolist(), g.indices.tolist(), g.weights.tolist()))
            except GraphFormatError as exc:
                outcomes.append(str(exc))
    return outcomes


@pytest.mark.parametrize("name, text", [
    ("f.gr", "c x\np sp 5 4\na 1 2 5\na 2 3 7\na 3 4 11\na 4 5 13\n"),
    ("f.txt", "# Nodes: 5 Edges: 4\n0\t1\t5\n1\t2\t7\n2\t3\t11\n3\t4\t13\n"),
    ("f.plain", "5 4\n0 1 5\n1 2 -7\n2 3 11\n3 4 13\n"),
    ("f.co", "p aux sp co 3\nv 1 10 -20\nv 2 30 40\nv 3 -50 60\n"),
])
def test_fast_path_agrees_with_the_line_path_under_mutation(tmp_path, monkeypatch, name, text):
    rng = np.random.default_rng(23)
    data = text.encode()
    path = tmp_path / name
    for _ in range(150):
        mutated = bytearray(data)
        for _ in range(int(rng.integers(1, 3))):
            where = int(rng.integers(len(mutated)))
            byte = FUZZ_BYTES[int(rng.integers(len(FUZZ_BYTES)))]
            if rng.random() < 0.5:
                mutated[where] = byte
            else:
                mutated.insert(where, byte)
        path.write_bytes(bytes(mutated))
        fast, line = parse_both(path, monkeypatch)
        assert fast == line, (bytes(mutated), fast, line)


ACCEPTED = {"a 1 2 5 ", "a 1 2\t5", "a 1  2 5"}  # blanks after or between fields: the format allows them


@pytest.mark.parametrize("line", ["a 1 2 1.0", "a 1 2 1e3", "a 1 2 1.", "a 1 2 5 9", "a1 2 3 4", "a 1 2 +-5",
                                  "a 1 2 0x10", "a 1 2 \x0b5", "a 1 2 5-"] + sorted(ACCEPTED))
def test_shapes_pandas_alone_would_accept_are_not_misread(tmp_path, monkeypatch, line):
    """pandas reads 1.0 and 1e3 as integers and drops extra fields; neither path may."""
    path = put(tmp_path, "s.gr", f"p sp 3 3\na 1 2 5\n{line}\na 3 1 7\n")
    fast, slow = parse_both(path, monkeypatch)
    assert fast == slow
    if line in ACCEPTED:
        assert fast[3] == [5, 5, 7]
    else:
        assert "s.gr:3:" in fast, fast
