"""The fast path of the .gr reader (gpusp.data.textblocks): canonical files in many small blocks over threads give
the general reader's graph, anything else falls back to it, and it never accepts what the general reader refuses
(mutated files: the same graph or the same error, line and all).
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from gpusp.data import formats, textblocks
from gpusp.data.formats import read_graph, write_graph
from gpusp.data.graph import Graph
from gpusp.errors import GraphFormatError


def random_graph(n=60, m=400, seed=2, wmax=10**6) -> Graph:
    rng = np.random.default_rng(seed)
    return Graph.from_edges(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(0, wmax, m), name="r")


def general(path, **options):
    """What the general reader alone gives: the graph, or the error's message."""
    original = formats.read_gr_blocks
    formats.read_gr_blocks = lambda path: None
    try:
        return read_graph(path, **options)
    except GraphFormatError as exc:
        return str(exc)
    finally:
        formats.read_gr_blocks = original


def outcome(path):
    try:
        return read_graph(path)
    except GraphFormatError as exc:
        return str(exc)


def same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    assert (a.n, a.m, a.weight_kind) == (b.n, b.m, b.weight_kind)
    for key in ("indptr", "indices", "weights"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key))


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 64 bytes: every file is many blocks, parsed by the pool of threads."""
    monkeypatch.setattr(textblocks, "BLOCK_BYTES", 64)


@pytest.fixture
def fast_only(monkeypatch):
    """The general reader fails the test: the file must be read by the fast path."""
    monkeypatch.setattr(formats, "_read_gr", lambda *a: pytest.fail("the general reader was used"))


@pytest.mark.parametrize("ext", [".gr", ".gr.gz"])
def test_canonical_files_take_the_fast_path_in_many_blocks(tmp_path, small_blocks, fast_only, ext):
    g = random_graph()
    path = tmp_path / f"g{ext}"
    write_graph(g, path)
    same(read_graph(path), g)


def test_no_final_newline_and_a_long_header_still_take_the_fast_path(tmp_path, small_blocks, fast_only):
    comments = "".join(f"c comment line {i}\n" for i in range(40))
    path = tmp_path / "h.gr"
    path.write_text(comments + "p sp 3 2\na 1 2 5\na 3 1 0")
    g = read_graph(path)
    assert g.coo()[0].tolist() == [0, 2] and g.indices.tolist() == [1, 0] and g.weights.tolist() == [5, 0]


@pytest.mark.parametrize("body", [
    "a 1 2 5\r\na 2 3 1\r\n",  # CRLF
    "a\t1\t2\t5\na 2 3 1\n",  # tabs
    "a 1  2 5\na 2 3 1\n",  # two spaces
    " a 1 2 5\na 2 3 1\n",  # a leading blank
    "a 1 2 5\nc between\na 2 3 1\n",  # a comment between arcs
    "a 1 2 5\n\na 2 3 1\n",  # a blank line
    "a 1 2 +5\na 2 3 1\n",  # a sign
    "a 1 2 5 \na 2 3 1\n",  # a trailing blank
])
def test_other_shapes_fall_back_to_the_general_reader(tmp_path, small_blocks, body):
    path = tmp_path / "o.gr"
    path.write_text("p sp 3 2\n" + body)
    assert textblocks.read_gr_blocks(path) is None
    g = read_graph(path)
    assert g.weights.tolist() == [5, 1]


@pytest.mark.parametrize("body, line, words", [  # after two header lines: the second arc is line 4
    ("a 1 2 5\na 2 9 1\n", 4, ["node id 9 out of range"]),
    ("a 1 2 5\na 0 3 1\n", 4, ["DIMACS ids start at 1"]),
    ("a 1 2 5\n", 2, ["announces 2", "only 1"]),
    ("a 1 2 5\na 2 3 1\na 3 1 1\n", 5, ["more arc"]),
    ("a 1 2 5\na 2 3 99999999999999999999\n", 4, ["does not fit in 64 bits"]),
    ("a 1 2 5\n5a 2 3 1\n", 4, ["unexpected line"]),
    ("a 1 2 5\na5 2 3 1\n", 4, ["expected a line"]),
    ("a 1 2 5\na 2 3\n", 4, ["expected 3 fields"]),
])
def test_errors_are_named_by_the_general_reader(tmp_path, small_blocks, body, line, words):
    path = tmp_path / "e.gr"
    path.write_text("c x\np sp 3 2\n" + body)
    with pytest.raises(GraphFormatError) as info:
        read_graph(path)
    assert info.value.line == line and str(info.value).startswith(f"{path}:{line}:"), str(info.value)
    for word in words:
        assert word in str(info.value)


def test_a_gzip_file_of_several_members_takes_the_fast_path(tmp_path, small_blocks, fast_only):
    g = random_graph()
    text = tmp_path / "g.gr"
    write_graph(g, text)
    data = text.read_bytes()
    path = tmp_path / "m.gr.gz"
    path.write_bytes(b"".join(gzip.compress(data[i:i + 500]) for i in range(0, len(data), 500)))
    same(read_graph(path), g)


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_corrupt_gzip_after_the_header_is_named_by_the_general_reader(tmp_path, small_blocks, damage):
    path = tmp_path / "z.gr.gz"
    write_graph(random_graph(), path)
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        del data[len(data) // 2:]
    else:
        data[-6] ^= 0xFF  # the CRC-32 of the trailer
    path.write_bytes(bytes(data))
    assert textblocks.read_gr_blocks(path) is None
    with pytest.raises(GraphFormatError, match="corrupt or truncated gzip"):
        read_graph(path)


def test_an_announced_count_the_file_cannot_hold_is_not_allocated(tmp_path):
    path = tmp_path / "big.gr"
    path.write_text("p sp 3 999999999999\na 1 2 5\n")
    assert textblocks.read_gr_blocks(path) is None
    with pytest.raises(GraphFormatError, match="announces 999999999999"):
        read_graph(path)


@pytest.mark.parametrize("seed", range(40))
def test_mutated_files_give_what_the_general_reader_gives(tmp_path, small_blocks, seed):
    """One to three bytes replaced, inserted or deleted: the same graph or the same error."""
    rng = np.random.default_rng(seed)
    path = tmp_path / "m.gr"
    write_graph(random_graph(n=20, m=30, seed=seed, wmax=100), path)
    data = bytearray(path.read_bytes())
    alphabet = b"a 0123456789\n\t\r-+cp.x\x00"
    for _ in range(rng.integers(1, 4)):
        at = int(rng.integers(60, len(data)))  # past the header comment, mostly in the arcs
        action = rng.integers(3)
        byte = alphabet[int(rng.integers(len(alphabet)))]
        if action == 0:
            data[at] = byte
        elif action == 1:
            data.insert(at, byte)
        else:
            del data[at]
    path.write_bytes(bytes(data))
    same(outcome(path), general(path))
    gz = tmp_path / "m.gr.gz"
    gz.write_bytes(gzip.compress(bytes(data)))
    same(outcome(gz), general(gz))
