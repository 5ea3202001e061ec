"""Binary CSR graph files read by mapping them, not parsing: GAPBS's serialized graphs (``.sg`` unweighted, ``.wsg``
with int32 weights, the layout of GAPBS's writer.h and reader.h) and gpusp's own raw CSR (``.gcsr``, the layout of
``load_cached``'s cache). Readers map the file and check every part vectorised (a GraphFormatError names the file and
the byte offset); writers yield the file's parts for an atomic write. :func:`gapbs_generate` runs GAPBS's converter to
make the GAP benchmark's own kron and urand graphs. The layouts and rules: docs/data.md.
"""

from __future__ import annotations

import gzip
import json
import mmap
import os
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np

from ..atomic import atomic_path
from ..errors import GpuspError, GraphFormatError
from .csrops import split_pairs, symmetric, transpose_order
from .graph import MAX_VERTICES, WEIGHT_KINDS

__all__ = ["GAPBS_GENERATORS", "GCSR_VERSION", "gapbs_generate", "gcsr_chunks", "read_gcsr", "read_serialized",
           "serialized_chunks", "serialized_counts"]

SG_HEADER = struct.Struct("<Bqq")  # writer.h: bool directed, int64 arcs written (num_edges_directed), int64 num_nodes
GCSR_MAGIC = b"GPUSPCSR"
GCSR_VERSION = 1
GCSR_ALIGN = 64  # every array starts on a multiple of 64 bytes, so the mapped arrays are aligned
_GCSR_PREFIX = struct.Struct("<8sQ")  # magic, length of the JSON header that follows
_GCSR_REQUIRED = ("indptr", "indices", "weights")
_GCSR_OPTIONAL = ("id_map",)
_GZIP_MAGIC = b"\x1f\x8b"
_BLOCK = 1 << 22  # arcs per block when interleaving ids and weights or gathering the transpose
GAPBS_GENERATORS = {"kron": "-g", "urand": "-u"}  # converter flags: Graph500 Kronecker, uniform random
GAPBS_MAX_SCALE = 30  # GAPBS's vertex ids are int32


def _bad(path, offset, problem):
    raise GraphFormatError(path, None, problem if offset is None else f"byte {offset}: {problem}")


def _buffer(path):
    """The file's bytes for ``np.frombuffer``: a private (copy-on-write) map of the file, or the gunzipped bytes."""
    with open(path, "rb") as fh:
        if fh.read(2) == _GZIP_MAGIC:
            fh.seek(0)
            try:
                return bytearray(gzip.decompress(fh.read()))
            except (EOFError, OSError, zlib.error) as exc:
                raise GraphFormatError(path, None, f"corrupt or truncated gzip data ({exc})") from None
        if str(path).lower().endswith(".gz"):
            raise GraphFormatError(path, None, "the name ends in .gz but the file is not gzip data "
                                               "(no 1f 8b magic bytes)")
        if os.fstat(fh.fileno()).st_size == 0:
            return b""
        try:
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
        except (OSError, ValueError):  # a file system that cannot map files: read it instead
            fh.seek(0)
            return bytearray(fh.read())


# --------------------------------------------------------------------------------------------------
# GAPBS .sg / .wsg
# --------------------------------------------------------------------------------------------------
def _sg_size(directed: int, n: int, m: int, weighted: bool) -> int:
    return SG_HEADER.size + (1 + directed) * ((n + 1) * 8 + m * (8 if weighted else 4))


def _offsets(path, buf, at: int, n: int, m: int, what: str) -> np.ndarray:
    """The n + 1 int64 offsets at byte ``at``, checked: from 0 to m, never decreasing."""
    off = np.frombuffer(buf, "<i8", n + 1, at)
    if off[0] != 0:
        _bad(path, at, f"{what} start at {int(off[0])}, expected 0")
    if off[-1] != m:
        _bad(path, at + 8 * n, f"{what} end at {int(off[-1])}, expected the arc count {m} of the header")
    falls = np.flatnonzero(off[1:] < off[:-1])
    if falls.size:
        j = int(falls[0]) + 1
        _bad(path, at + 8 * j, f"{what}: entry {j} ({int(off[j])}) is below entry {j - 1} ({int(off[j - 1])}); "
                               f"offsets must not decrease")
    return off


def _ids(path, buf, at: int, n: int, m: int, weighted: bool, what: str):
    """(ids, weights or None) of the m neighbours at byte ``at``, the ids checked to lie in 0..n-1 (a .wsg's pairs are
    split into fresh arrays in one parallel pass; an .sg's ids stay a view of the buffer)."""
    flat = np.frombuffer(buf, "<i4", m * (2 if weighted else 1), at)
    if weighted:
        ids, weights, j = split_pairs(flat, n)
    else:
        ids, weights = flat, None
        j = int(np.flatnonzero((ids < 0) | (ids >= n))[0]) if m and (ids.min() < 0 or ids.max() >= n) else m
    if j < m:
        _bad(path, at + j * (8 if weighted else 4), f"{what} {j}: vertex id {int(ids[j])} out of range 0..{n - 1}")
    return ids, weights


def _in_degrees(ids: np.ndarray, n: int) -> np.ndarray:
    """Arcs per target, counted in blocks (bincount widens its input to intp: a block at a time, not all m)."""
    counts = np.zeros(n, dtype=np.int64)
    step = max(1 << 24, n)
    for lo in range(0, ids.size, step):
        counts += np.bincount(ids[lo:lo + step], minlength=n)
    return counts


def serialized_counts(path, weighted: bool) -> tuple[int, int, bool]:
    """(n, m, directed) from the 17-byte header of a GAPBS serialized graph, the file's size checked against it."""
    with open(path, "rb") as fh:
        head = fh.read(SG_HEADER.size)
        size = os.fstat(fh.fileno()).st_size
    return _sg_header(path, head, size, weighted)


def _sg_header(path, head: bytes, size: int, weighted: bool) -> tuple[int, int, bool]:
    kind = ".wsg" if weighted else ".sg"
    if len(head) < SG_HEADER.size:
        _bad(path, None, f"{size} bytes: too short for the 17-byte header of a GAPBS {kind} file (directed flag, "
                         f"arc count, vertex count)")
    directed, m, n = SG_HEADER.unpack_from(head, 0)
    if directed > 1:
        _bad(path, 0, f"directed flag {directed}, expected 0 or 1 (not a GAPBS serialized graph?)")
    if m < 0:
        _bad(path, 1, f"arc count {m} is negative")
    if not 0 <= n <= MAX_VERTICES:
        _bad(path, 9, f"vertex count {n} outside 0..{MAX_VERTICES} (GAPBS's vertex ids are int32)")
    expected = _sg_size(directed, n, m, weighted)
    if size != expected:
        hint = "truncated file?" if size < expected else f"{size - expected} bytes beyond the graph"
        if size == _sg_size(directed, n, m, not weighted):
            hint = f"the size of a{'n unweighted .sg' if weighted else ' weighted .wsg'} file: give it that extension"
        _bad(path, None, f"{size} bytes, but the header (directed={bool(directed)}, n={n}, m={m}) announces "
                         f"{expected} for a GAPBS {kind} file ({hint})")
    return n, m, bool(directed)


def read_serialized(path, weighted: bool):
    """(n, indptr, indices, weights, meta) of a GAPBS ``.sg`` (``weighted=False``) or ``.wsg`` file.

    The file is mapped, not parsed: its size must be exactly what the header announces, the offsets must run from
    0 to m without decreasing, every neighbour id must lie in 0..n-1; for a directed file the transpose (in-offsets
    and in-neighbours) is checked too: the same checks, in-degrees equal to the out-arcs' counts per target and, in
    a .wsg, the same total weight. The arrays come back as fresh copies (the map is let go); an .sg gives unit
    weights. Every problem is a GraphFormatError naming the file and the byte offset.
    """
    buf = _buffer(path)
    n, m, directed = _sg_header(path, bytes(buf[:SG_HEADER.size]), len(buf), weighted)
    at = SG_HEADER.size
    indptr = _offsets(path, buf, at, n, m, "offsets")
    at += 8 * (n + 1)
    ids, weights = _ids(path, buf, at, n, m, weighted, "neighbour")
    if directed:
        at += m * (8 if weighted else 4)
        in_indptr = _offsets(path, buf, at, n, m, "in-offsets (the transpose)")
        counts = _in_degrees(ids, n)
        differs = np.flatnonzero(np.diff(in_indptr) != counts)
        if differs.size:
            v = int(differs[0])
            _bad(path, at + 8 * v, f"the transpose gives vertex {v} {int(in_indptr[v + 1] - in_indptr[v])} in-arcs, "
                                   f"the out-arcs {int(counts[v])} (not the transpose of the out-arcs)")
        in_ids, in_weights = _ids(path, buf, at + 8 * (n + 1), n, m, weighted, "in-neighbour")
        if weighted and int(in_weights.sum(dtype=np.int64)) != int(weights.sum(dtype=np.int64)):
            _bad(path, None, "the transpose's weights do not sum to the out-arcs' weights (not the transpose)")
        del in_ids, in_weights
    indptr = indptr.astype(np.int64)
    indices = np.array(ids, dtype=np.int32, copy=not weighted)  # a .wsg's halves are fresh already
    weights = weights if weighted else np.ones(m, dtype=np.int32)
    return n, indptr, indices, weights, {"gapbs_directed": directed}


def _neighbours(ids, weights, order=None):
    """The neighbour array of a serialized file in blocks: int32 ids, or {int32 id, int32 weight} pairs.

    With ``order`` (a permutation of the arcs) the blocks hold ``ids[order]`` and ``weights[order]``: given the
    arcs' sources as ``ids`` and the arcs sorted by target as ``order``, the transpose.
    """
    m = ids.size
    for lo in range(0, m, _BLOCK):
        hi = min(lo + _BLOCK, m)
        if order is None:
            block_ids, block_w = ids[lo:hi], None if weights is None else weights[lo:hi]
        else:
            arcs = order[lo:hi]
            block_ids, block_w = ids[arcs], None if weights is None else weights[arcs]
        if weights is None:
            yield np.ascontiguousarray(block_ids, dtype="<i4")
        else:
            pairs = np.empty((hi - lo, 2), dtype="<i4")
            pairs[:, 0] = block_ids
            pairs[:, 1] = block_w
            yield pairs


def serialized_chunks(graph, weighted: bool, undirected: bool = False):
    """The parts of ``graph`` as a GAPBS ``.wsg`` (``weighted``) or ``.sg`` file, in file order, for a writer.

    Directed (the default): the out-CSR, then the transpose GAPBS's kernels read for in-arcs (each target's
    in-neighbours in source order). ``undirected=True`` writes one CSR and GAPBS reads it as an undirected graph
    (its in-arcs are the out-arcs; it counts m / 2 edges): only a symmetric graph with an even arc count may be
    written so. ValueError for what the format cannot hold: weights beyond int32 in a .wsg, weights other than 1
    in an .sg (write a .wsg), an asymmetric or odd graph written undirected.
    """
    w = graph.weights
    if weighted and graph.m and (int(w.min()) < -2**31 or int(w.max()) >= 2**31):
        raise ValueError(f"{graph.name}: a .wsg holds int32 weights; this graph has weights up to "
                         f"{int(np.abs(w.astype(np.int64)).max())}")
    if not weighted and graph.m and (int(w.min()) != 1 or int(w.max()) != 1):
        raise ValueError(f"{graph.name}: an .sg holds no weights and this graph has weights other than 1 "
                         f"(write a .wsg)")
    if undirected:
        if not symmetric(graph, weighted):
            raise ValueError(f"{graph.name} is not symmetric (some arc u -> v{', w' if weighted else ''} has no "
                             f"v -> u{', w' if weighted else ''}): GAPBS would read wrong in-arcs; write it directed")
        if graph.m % 2:
            raise ValueError(f"{graph.name} has an odd arc count ({graph.m}, self-loops): GAPBS counts m / 2 "
                             f"undirected edges and would drop an arc when it writes the graph again")
    weights = w if weighted else None
    yield SG_HEADER.pack(0 if undirected else 1, graph.m, graph.n)
    yield np.ascontiguousarray(graph.indptr, dtype="<i8")
    yield from _neighbours(graph.indices, weights)
    if not undirected:
        in_indptr, order = transpose_order(graph)
        yield in_indptr.astype("<i8", copy=False)
        yield from _neighbours(graph.coo()[0], weights, order)


# --------------------------------------------------------------------------------------------------
# gpusp .gcsr
# --------------------------------------------------------------------------------------------------
def json_default(obj):
    """JSON for what graph metadata may hold beyond JSON's own types (NumPy scalars and arrays, paths, sets)."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (Path, set, tuple)):
        return str(obj) if isinstance(obj, Path) else list(obj)
    return str(obj)


def _aligned(offset: int) -> int:
    return -(-offset // GCSR_ALIGN) * GCSR_ALIGN


def gcsr_chunks(graph, extra: dict | None = None):
    """The parts of ``graph`` as a ``.gcsr`` file: magic, JSON header length, the JSON header (format, version,
    name, weight_kind, meta, n, the graph's checksum, ``extra`` and where each array lies), then the arrays, each on
    a 64-byte boundary. The checksum saves every reader of the file a pass over its arrays."""
    arrays = {"indptr": graph.indptr, "indices": graph.indices, "weights": graph.weights}
    if graph.id_map is not None:
        id_map = np.asarray(graph.id_map)
        arrays["id_map"] = id_map.astype(str) if id_map.dtype == object else id_map
    arrays = {k: np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")) for k, a in arrays.items()}
    start = GCSR_ALIGN
    while True:  # the header holds the offsets, which follow the header: grow it until both agree
        layout, pos = {}, start
        for key, arr in arrays.items():
            layout[key] = {"dtype": arr.dtype.str, "count": int(arr.size), "offset": pos}
            pos = _aligned(pos + arr.nbytes)
        header = {"format": "gpusp-csr", "version": GCSR_VERSION, "name": graph.name,
                  "weight_kind": graph.weight_kind, "meta": graph.meta, "n": graph.n, "checksum": graph.checksum(),
                  **(extra or {}), "arrays": layout}
        text = json.dumps(header, sort_keys=True, default=json_default).encode()
        if _aligned(_GCSR_PREFIX.size + len(text)) <= start:
            break
        start = _aligned(_GCSR_PREFIX.size + len(text))
    yield _GCSR_PREFIX.pack(GCSR_MAGIC, len(text)) + text + bytes(start - _GCSR_PREFIX.size - len(text))
    pos = start
    for key, arr in arrays.items():
        gap = layout[key]["offset"] - pos
        if gap:
            yield bytes(gap)
        yield arr
        pos = layout[key]["offset"] + arr.nbytes


def read_gcsr(path):
    """(header, arrays) of a ``.gcsr`` file: the JSON header checked, each array a view of the mapped file.

    The file must start with the magic and a JSON header of format ``gpusp-csr`` with a version this reader knows,
    a name, a weight kind, a meta dict, n and the arrays gpusp writes (and no others), each with an integer dtype
    (text for id_map), a count and a 64-byte aligned offset inside the file, none overlapping another, the last
    ending where the file ends. The CSR arrays are checked by :class:`~gpusp.data.graph.Graph` when the caller
    builds one. Every problem is a GraphFormatError naming the file.
    """
    buf = _buffer(path)
    size = len(buf)

    def refuse(problem, offset=None):
        _bad(path, offset, f"not a valid gpusp .gcsr graph: {problem}")

    if size < _GCSR_PREFIX.size or bytes(buf[:8]) != GCSR_MAGIC:
        refuse(f"no {GCSR_MAGIC.decode()} magic bytes at its start ({size} bytes)")
    _, length = _GCSR_PREFIX.unpack_from(buf, 0)
    if _GCSR_PREFIX.size + length > size:
        refuse(f"the header length {length} runs past the end of the file ({size} bytes; truncated?)", 8)
    try:
        header = json.loads(bytes(buf[_GCSR_PREFIX.size:_GCSR_PREFIX.size + length]).decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        refuse(f"the header is not JSON text ({exc})", _GCSR_PREFIX.size)
    _check_gcsr_header(header, refuse)
    spans, arrays = [], {}
    end_of_header = _GCSR_PREFIX.size + length
    for key, spec in sorted(header["arrays"].items(), key=lambda item: item[1]["offset"]):
        dtype, count, offset = spec["dtype"], spec["count"], spec["offset"]
        stop = offset + count * dtype.itemsize
        if offset % GCSR_ALIGN or offset < end_of_header:
            refuse(f"{key} starts at byte {offset}, not on a {GCSR_ALIGN}-byte boundary after the header")
        if spans and offset < spans[-1][1]:
            refuse(f"{key} (from byte {offset}) overlaps {spans[-1][0]} (to byte {spans[-1][1]})")
        if stop > size:
            refuse(f"{key} ends at byte {stop}, past the end of the file ({size} bytes; truncated?)")
        spans.append((key, stop))
        arrays[key] = np.frombuffer(buf, dtype, count, offset)
    if spans[-1][1] != size:
        refuse(f"{size - spans[-1][1]} bytes after the last array ({spans[-1][0]}, which ends at byte "
               f"{spans[-1][1]})")
    return header, arrays


def _check_gcsr_header(header, refuse) -> None:
    """Check a decoded .gcsr header in place: its fields, and each array's dtype (made a np.dtype), count, offset."""
    if not isinstance(header, dict) or header.get("format") != "gpusp-csr":
        refuse("the header does not say format 'gpusp-csr'")
    version = header.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= GCSR_VERSION:
        refuse(f"version {version!r}: this reader knows versions 1..{GCSR_VERSION} (a newer gpusp wrote it?)")
    if not isinstance(header.get("name"), str):
        refuse(f"name {header.get('name')!r} is not a string")
    if header.get("weight_kind") not in WEIGHT_KINDS:
        refuse(f"weight_kind {header.get('weight_kind')!r} is not one of {', '.join(WEIGHT_KINDS)}")
    if not isinstance(header.get("meta"), dict):
        refuse(f"meta must be a JSON object, found {type(header.get('meta')).__name__}")
    checksum = header.get("checksum")
    if checksum is not None and not (isinstance(checksum, str) and len(checksum) == 64
                                     and all(c in "0123456789abcdef" for c in checksum)):
        refuse(f"checksum {checksum!r} is not a sha256 in hexadecimal")
    n = header.get("n")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        refuse(f"n {n!r} is not a vertex count")
    layout = header.get("arrays")
    if not isinstance(layout, dict):
        refuse("the header has no arrays object")
    missing = [key for key in _GCSR_REQUIRED if key not in layout]
    unexpected = sorted(set(layout) - set(_GCSR_REQUIRED) - set(_GCSR_OPTIONAL))
    if missing or unexpected:
        refuse(f"arrays {', '.join(missing)} missing" if missing else f"unexpected arrays {', '.join(unexpected)}")
    for key, spec in layout.items():
        if not isinstance(spec, dict) or not all(isinstance(spec.get(f), int) and not isinstance(spec.get(f), bool)
                                                 and spec.get(f) >= 0 for f in ("count", "offset")):
            refuse(f"{key}: expected a dtype, a count and an offset, found {spec!r}")
        try:
            dtype = np.dtype(spec.get("dtype"))
        except (TypeError, ValueError):
            refuse(f"{key}: dtype {spec.get('dtype')!r} is not a NumPy dtype")
        if dtype.kind not in ("iuU" if key == "id_map" else "iu") or dtype.itemsize == 0:
            refuse(f"{key}: dtype {dtype} (gpusp writes integers{', or text for id_map' if key == 'id_map' else ''})")
        spec["dtype"] = dtype


# --------------------------------------------------------------------------------------------------
# GAPBS's converter as a source of the GAP benchmark's graphs
# --------------------------------------------------------------------------------------------------
def gapbs_generate(converter, path, kind: str, scale: int, degree: int = 16, *, threads: int | None = None,
                   timeout: float | None = None) -> Path:
    """Make one of GAPBS's synthetic graphs with its own ``converter`` and write it at ``path`` atomically.

    ``kind``: ``kron`` (``-g scale``, the Graph500 Kronecker generator) or ``urand`` (``-u scale``, uniform random);
    ``2**scale`` vertices and ``degree * 2**scale`` generated edges (``-k degree``), which GAPBS symmetrizes and
    makes simple (no self-loops, one arc per ordered pair: fewer than ``2 * degree * 2**scale`` arcs). ``path``
    ending ``.wsg`` asks for weights (``-w``: GAPBS's uniform 1..255), ``.sg`` for none. GAPBS seeds its generator
    with a constant, so the same kind, scale and degree give the same file: the graphs of GAPBS's published runs
    (kron and urand at scale 27, degree 16). ``converter`` is the binary of the pinned GAPBS,
    ``gpusp.solvers.peers.build.binary(gpusp.solvers.peers.build.locate("gapbs"), "converter")``; ``threads`` sets
    OMP_NUM_THREADS. Returns ``path``; GpuspError when the converter fails or writes a file that does not check.
    """
    path = Path(path)
    if kind not in GAPBS_GENERATORS:
        raise ValueError(f"kind must be one of {', '.join(GAPBS_GENERATORS)}, not {kind!r}")
    for name, value, low, high in (("scale", scale, 1, GAPBS_MAX_SCALE), ("degree", degree, 1, 2**20)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
            raise ValueError(f"{name} must be an integer in {low}..{high}, not {value!r}")
    suffix = path.suffix.lower()
    if suffix not in (".sg", ".wsg"):
        raise ValueError(f"{path}: GAPBS's converter writes .sg (unweighted) or .wsg (weighted) files")
    env = {**os.environ, **({"OMP_NUM_THREADS": str(int(threads))} if threads else {})}
    with atomic_path(path, suffix=suffix) as tmp:
        cmd = [str(converter), GAPBS_GENERATORS[kind], str(int(scale)), "-k", str(int(degree)),
               *(["-w"] if suffix == ".wsg" else []), "-b", str(tmp)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GpuspError(f"`{' '.join(cmd)}` could not be run: {exc}") from None
        if proc.returncode != 0:
            tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
            raise GpuspError(f"`{' '.join(cmd)}` exited {proc.returncode}: {tail}")
        try:
            serialized_counts(tmp, weighted=suffix == ".wsg")
        except GraphFormatError as exc:
            raise GpuspError(f"`{' '.join(cmd)}` wrote a file that does not check: {exc.problem}") from None
    return path
