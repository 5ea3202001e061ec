"""Graph file formats: strict, vectorised readers and atomic writers for DIMACS ``.gr``/``.co``, SNAP edge lists, the
papers' ``plain`` format, ``.npz`` archives and the binary CSR files of :mod:`gpusp.data.serialized` (GAPBS's
``.sg``/``.wsg``, gpusp's ``.gcsr``, the layout of :func:`load_cached`'s cache), gzip on either side. Every problem
raises ``GraphFormatError(path, line, problem)``. The formats' rules in full: docs/data.md.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import re
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np

from ..atomic import atomic_path
from ..errors import GraphFormatError, WeightOverflowError
from .graph import WEIGHT_KINDS, Graph
from .serialized import GCSR_VERSION, gcsr_chunks, json_default, read_gcsr, read_serialized, serialized_chunks
from .textblocks import read_gr_blocks
from .textlines import (Lines, check_body_count, check_body_short, check_ids, check_kinds, first_bad, parse_counts,
                        show, single_line)

__all__ = ["BINARY_FORMATS", "FORMATS", "NPZ_VERSION", "cache_path", "detect_format", "load_cached", "read_coordinates",
           "read_graph", "write_graph"]

FORMATS = ("gr", "co", "snap", "plain", "npz", "sg", "wsg", "gcsr")
BINARY_FORMATS = ("npz", "sg", "wsg", "gcsr")
NPZ_VERSION = 1
_EXTENSIONS = {".gr": "gr", ".co": "co", ".txt": "snap", ".tsv": "snap", ".edges": "snap", ".el": "snap",
               ".snap": "snap", ".plain": "plain", ".npz": "npz", ".sg": "sg", ".wsg": "wsg", ".gcsr": "gcsr"}
_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGIC = b"PK\x03\x04"
_NPZ_REQUIRED = ("n", "indptr", "indices", "weights", "header")
_NPZ_OPTIONAL = ("id_map",)
_CHUNK_ROWS = 1 << 20

_POW10 = 10 ** np.arange(19, dtype=np.int64)


# --------------------------------------------------------------------------------------------------
# format detection and raw bytes
# --------------------------------------------------------------------------------------------------
def detect_format(path, format=None) -> str:
    """The format name for ``path``: ``format`` if given, else from the extension (``.gz`` ignored)."""
    if format is not None:
        fmt = str(format).lower()
        if fmt not in FORMATS:
            raise ValueError(f"unknown graph format {format!r}; known formats: {', '.join(FORMATS)}")
        return fmt
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    ext = os.path.splitext(name)[1]
    if ext in _EXTENSIONS:
        return _EXTENSIONS[ext]
    known = ", ".join(sorted(_EXTENSIONS))
    raise GraphFormatError(path, None, f"cannot tell the graph format from the name (known extensions: {known}, "
                                       f"optionally + .gz); pass format= one of {', '.join(FORMATS)}")


def _stem(path) -> str:
    name = Path(path).name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    stem, ext = os.path.splitext(name)
    return stem if ext.lower() in _EXTENSIONS and stem else name


def _read_bytes(path) -> bytes:
    """The file's bytes, gunzipped when they start with the gzip magic."""
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw[:2] == _GZIP_MAGIC:
        try:
            return gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise GraphFormatError(path, None, f"corrupt or truncated gzip data ({exc})") from None
    if str(path).lower().endswith(".gz"):
        raise GraphFormatError(path, None, "the name ends in .gz but the file is not gzip data "
                                           "(no 1f 8b magic bytes)")
    return raw


# --------------------------------------------------------------------------------------------------
# readers
# --------------------------------------------------------------------------------------------------
def _read_gr(path, data):
    lines = Lines(path, data)
    check_kinds(lines, b"cpa", "a .gr line starts with 'c', 'p' or 'a'")
    p = single_line(lines, b"p", "p sp N M")
    n, m = parse_counts(lines, p, lines.fields(p), [b"p", b"sp"], 2, "p sp N M")
    arcs = np.flatnonzero(lines.kind == ord("a"))
    if arcs.size and arcs[0] < p:
        lines.fail(arcs[0], f"arc line before the problem line (line {p + 1})")
    check_body_count(lines, arcs, m, p, "arc ('a')")
    u, v, w = lines.records(arcs, ("tail id", "head id", "weight"), prefix=b"a", what="arc lines")
    check_body_short(lines, arcs, m, p, "arc ('a')")
    for ids in (u, v):
        check_ids(lines, arcs, ids, 1, n, lambda j, ids=ids: f"node id {ids[j]} out of range 1..{n}"
                  + (" (DIMACS ids start at 1)" if ids[j] == 0 else ""))
    check_ids(lines, arcs, w, 0, np.iinfo(np.int64).max,
              lambda j: f"negative weight {w[j]} (.gr weights must be >= 0)")
    return n, u - 1, v - 1, w, None, lines.gpusp_weight_kind(ord("c")) or "real", {}


def read_coordinates(path) -> np.ndarray:
    """DIMACS ``.co`` coordinates as an ``(N, 2)`` int64 array; row ``i`` is DIMACS vertex ``i + 1``."""
    lines = Lines(path, _read_bytes(path))
    check_kinds(lines, b"cpv", "a .co line starts with 'c', 'p' or 'v'")
    p = single_line(lines, b"p", "p aux sp co N")
    (n,) = parse_counts(lines, p, lines.fields(p), [b"p", b"aux", b"sp", b"co"], 1, "p aux sp co N")
    body = np.flatnonzero(lines.kind == ord("v"))
    if body.size and body[0] < p:
        lines.fail(body[0], f"coordinate line before the problem line (line {p + 1})")
    check_body_count(lines, body, n, p, "coordinate ('v')")
    ids, x, y = lines.records(body, ("node id", "x", "y"), prefix=b"v", what="coordinate lines")
    check_body_short(lines, body, n, p, "coordinate ('v')")
    check_ids(lines, body, ids, 1, n, lambda j: f"node id {ids[j]} out of range 1..{n}"
              + (" (DIMACS ids start at 1)" if ids[j] == 0 else ""))
    order = np.argsort(ids, kind="stable")
    dup = np.zeros(ids.size, dtype=bool)
    dup[order[1:]] = ids[order[1:]] == ids[order[:-1]]
    first_bad(lines, body, dup, lambda j: f"node id {ids[j]} listed twice")
    out = np.empty((n, 2), dtype=np.int64)
    out[ids - 1, 0] = x
    out[ids - 1, 1] = y
    return out


_SNAP_HEADER = re.compile(rb"Nodes:\s*([0-9]+)\s+Edges:\s*([0-9]+)")


def _read_snap(path, data, check_header=True):
    lines = Lines(path, data)
    comments = np.flatnonzero(lines.kind == ord("#"))
    header_nodes = header_edges = header_line = None
    for i in comments[:100].tolist():
        hit = _SNAP_HEADER.search(lines.raw(i))
        if hit:
            header_nodes, header_edges, header_line = int(hit.group(1)), int(hit.group(2)), i
            break
    body = np.flatnonzero((lines.kind != 0) & (lines.kind != ord("#")))
    k = 2
    if body.size:
        k = len(lines.fields(body[0]))
        if k not in (2, 3):
            lines.fail(body[0], f"expected 'from to' or 'from to weight', found {k} fields: "
                                f"{show(lines.raw(body[0]))}")
    cols = lines.records(body, ("source id", "target id", "weight")[:k], what="edge lines")
    src, dst = cols[0], cols[1]
    meta = {}
    if check_header and header_line is not None:
        meta["snap_header"] = {"nodes": header_nodes, "edges": header_edges}
        if header_edges != body.size:
            lines.fail(header_line, f"header says Edges: {header_edges} but the file has {body.size} edge "
                                    f"lines (header counts disagree with the body"
                                    + ("; truncated file?)" if body.size < header_edges else ")"))
    for ids in (src, dst):
        first_bad(lines, body, ids < 0, lambda j, ids=ids: f"node id {ids[j]} is negative "
                                                            f"(SNAP ids must be >= 0)")
    id_map = None
    top = max(int(src.max()), int(dst.max())) if body.size else -1
    if check_header and header_nodes is not None and top < header_nodes:
        n = header_nodes
    else:
        uniq = np.unique(np.concatenate([src, dst]))
        n = int(uniq.size)
        if check_header and header_nodes is not None and n > header_nodes:
            lines.fail(header_line, f"header says Nodes: {header_nodes} but the edges use {n} distinct ids "
                                    f"(header counts disagree with the body)")
        if n and int(uniq[-1]) != n - 1:
            src = np.searchsorted(uniq, src)
            dst = np.searchsorted(uniq, dst)
            id_map = uniq
    weights = cols[2] if k == 3 else None
    kind = lines.gpusp_weight_kind(ord("#")) if k == 3 or not body.size else None
    kind = kind or ("real" if k == 3 else "unit")
    return n, src, dst, weights, id_map, kind, meta


def _read_plain(path, data):
    lines = Lines(path, data)
    useful = np.flatnonzero((lines.kind != 0) & (lines.kind != ord("#")))
    if useful.size == 0:
        lines.fail(None, "no header line 'N M'")
    h = int(useful[0])
    n, m = parse_counts(lines, h, lines.fields(h), [], 2, "N M (vertex and edge counts)")
    body = useful[1:]
    check_body_count(lines, body, m, h, "edge")
    u, v, w = lines.records(body, ("tail id", "head id", "weight"), what="edge lines")
    check_body_short(lines, body, m, h, "edge")
    for ids in (u, v):
        check_ids(lines, body, ids, 0, n - 1, lambda j, ids=ids: f"node id {ids[j]} out of range 0..{n - 1}")
    return n, u, v, w, None, "real", {}


def _symmetrize(n, src, dst, w):
    """Add (v, u, w) for every edge (u, v, w), u != v, whose reverse with that weight is missing."""
    m = src.size
    if m == 0:
        return src, dst, w
    w0 = np.zeros(m, dtype=np.int64) if w is None else np.asarray(w, dtype=np.int64)
    nl = np.flatnonzero(src != dst)
    n64 = np.int64(max(n, 1))
    keys = np.concatenate([src.astype(np.int64) * n64 + dst, dst[nl].astype(np.int64) * n64 + src[nl]])
    wts = np.concatenate([w0, w0[nl]])
    tag = np.concatenate([np.zeros(m, dtype=np.int8), np.ones(nl.size, dtype=np.int8)])
    order = np.lexsort((tag, wts, keys))
    ks, ws, tg = keys[order], wts[order], tag[order]
    new = np.ones(order.size, dtype=bool)
    new[1:] = (ks[1:] != ks[:-1]) | (ws[1:] != ws[:-1])
    group = np.cumsum(new) - 1
    has_forward = np.zeros(int(group[-1]) + 1, dtype=bool)
    has_forward[group[tg == 0]] = True
    add = np.sort(order[(tg == 1) & ~has_forward[group]] - m)
    rev = nl[add]
    src2 = np.concatenate([src, dst[rev]])
    dst2 = np.concatenate([dst, src[rev]])
    w2 = None if w is None else np.concatenate([w, w[rev]])
    return src2, dst2, w2


def _read_binary(path, fmt) -> Graph:
    """A graph from a binary file: an .npz archive, a GAPBS .sg/.wsg (named after the file, unit or 'real'
    weights) or a .gcsr (with the name, weight kind and meta it stores)."""
    if fmt == "npz":
        return _load_npz(path, _read_bytes(path))[0]
    if fmt == "gcsr":
        return _load_gcsr(path)[0]
    n, indptr, indices, weights, meta = read_serialized(path, weighted=fmt == "wsg")
    meta = {"source_format": fmt, "source": Path(path).name, **meta}
    with _graph_errors(path):
        return Graph(n, indptr, indices, weights, name=_stem(path), weight_kind="real" if fmt == "wsg" else "unit",
                     meta=meta)


def _load_gcsr(path):
    """(Graph, header) of a .gcsr file: the layout checked by :func:`read_gcsr`, the arrays by :class:`Graph`."""
    header, arrays = read_gcsr(path)
    with _graph_errors(path, "not a valid gpusp .gcsr graph: "):
        graph = Graph(header["n"], arrays["indptr"], arrays["indices"], arrays["weights"], name=header["name"],
                      weight_kind=header["weight_kind"], id_map=arrays.get("id_map"), meta=header["meta"])
    graph._checksum = header.get("checksum")  # the writer's, of these very arrays (older files: computed on demand)
    return graph, header


def read_graph(path, format=None, *, name=None, weight_kind=None, symmetrize=False, check_header=True) -> Graph:
    """Read a graph file into a :class:`Graph` (see the module docstring for the formats).

    ``name`` defaults to the file name without ``.gz`` and the format extension; ``weight_kind``
    overrides the kind the file implies ('real', or 'unit' for 2-column SNAP, or what a gpusp writer
    recorded); ``symmetrize`` adds missing reverse edges; ``check_header=False`` ignores SNAP's
    ``# Nodes: N Edges: M`` header. Raises :class:`GraphFormatError` for malformed files.
    """
    fmt = detect_format(path, format)
    if fmt == "co":
        raise GraphFormatError(path, None, "a .co file holds coordinates, not a graph; use read_coordinates()")
    if weight_kind is not None and weight_kind not in WEIGHT_KINDS:
        raise ValueError(f"weight_kind must be one of {WEIGHT_KINDS}")
    if fmt in BINARY_FORMATS:
        graph = _read_binary(path, fmt)
        if name is not None or weight_kind is not None:
            graph.name = name or graph.name
            graph.weight_kind = weight_kind or graph.weight_kind
        if symmetrize:
            src, dst, w = graph.coo()
            src, dst, w = _symmetrize(graph.n, src, dst, w)
            with _graph_errors(path):
                graph = Graph.from_edges(graph.n, src, dst, w, name=graph.name, weight_kind=graph.weight_kind,
                                         id_map=graph.id_map, meta={**graph.meta, "symmetrized": True})
        return graph
    fast = read_gr_blocks(path) if fmt == "gr" else None
    if fast is not None:
        n, src, dst, w, kind = fast
        id_map, kind, meta = None, kind or "real", {}
    elif fmt == "gr":
        n, src, dst, w, id_map, kind, meta = _read_gr(path, _read_bytes(path))
    elif fmt == "snap":
        n, src, dst, w, id_map, kind, meta = _read_snap(path, _read_bytes(path), check_header=check_header)
    else:
        n, src, dst, w, id_map, kind, meta = _read_plain(path, _read_bytes(path))
    if symmetrize:
        src, dst, w = _symmetrize(n, src, dst, w)
        meta["symmetrized"] = True
    meta = {"source_format": fmt, "source": Path(path).name, **meta}
    with _graph_errors(path):
        return Graph.from_edges(n, src, dst, w, name=name or _stem(path), weight_kind=weight_kind or kind,
                                id_map=id_map, meta=meta)


# --------------------------------------------------------------------------------------------------
# writers
# --------------------------------------------------------------------------------------------------
def _format_rows(columns, sep: bytes = b" ", prefix: bytes = b"", end: bytes = b"\n") -> bytes:
    """ASCII lines ``prefix c0 sep c1 ... end`` for integer columns, built with NumPy (no per-row loop)."""
    cols = [np.asarray(c, dtype=np.int64) for c in columns]
    rows = cols[0].size
    if rows == 0:
        return b""
    negs = [c < 0 for c in cols]
    mags = [np.abs(c) for c in cols]
    digits = [np.maximum(np.searchsorted(_POW10, x, side="right"), 1) for x in mags]
    rowlen = np.full(rows, len(prefix) + len(end) + len(sep) * (len(cols) - 1), dtype=np.int64)
    for d, ng in zip(digits, negs):
        rowlen += d + ng
    offsets = np.zeros(rows, dtype=np.int64)
    np.cumsum(rowlen[:-1], out=offsets[1:])
    out = np.empty(int(offsets[-1] + rowlen[-1]), dtype=np.uint8)
    cur = offsets
    for j, byte in enumerate(prefix):
        out[cur + j] = byte
    cur = cur + len(prefix)
    for i, (x, d, ng) in enumerate(zip(mags, digits, negs)):
        if ng.any():
            out[cur[ng]] = ord("-")
        last = cur + ng + d - 1
        cur = last + 1
        pos, val, left = last, x, d
        for k in range(int(d.max())):
            if k:
                keep = left > k
                pos, val, left = pos[keep], val[keep], left[keep]
            out[pos - k] = val % 10 + 48
            val = val // 10
        tail = sep if i < len(cols) - 1 else end
        for j, byte in enumerate(tail):
            out[cur + j] = byte
        cur = cur + len(tail)
    return out.tobytes()


def _row_chunks(graph: Graph, head: bytes, cols_of, **fmt):
    """``head`` then the edges in CSR order, ``_CHUNK_ROWS`` per chunk; cols_of(src, dst, w) -> columns."""
    yield head
    src, dst, w = graph.coo()
    for lo in range(0, graph.m, _CHUNK_ROWS):
        hi = lo + _CHUNK_ROWS
        yield _format_rows(cols_of(src[lo:hi], dst[lo:hi], w[lo:hi]), **fmt)


def _npz_bytes(graph: Graph, extra: dict | None = None) -> bytes:
    header = {"format": "gpusp-graph", "version": NPZ_VERSION, "name": graph.name,
              "weight_kind": graph.weight_kind, "meta": graph.meta, **(extra or {})}
    arrays = {"n": np.int64(graph.n), "indptr": graph.indptr, "indices": graph.indices, "weights": graph.weights,
              "header": np.array(json.dumps(header, sort_keys=True, default=json_default))}
    if graph.id_map is not None:
        id_map = np.asarray(graph.id_map)
        arrays["id_map"] = id_map.astype(str) if id_map.dtype == object else id_map
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _load_npz(path, data: bytes):
    """(Graph, header dict) from the bytes of a gpusp .npz archive: the one check of such an archive.

    The archive must hold the arrays gpusp writes and no others, each readable without pickle; the
    header must be a JSON object of format ``gpusp-graph`` with a version this reader knows, a name,
    a weight kind and a meta dict; ``n`` an integer scalar. The CSR arrays are then checked (dtypes,
    shapes, ranges) and given their canonical dtypes by :class:`Graph`, the one place that decides
    what a graph is: weights stored as int32 whose paths need int64 are widened, as the text file of
    the same graph would give (each weight is intact; only the sums need the wider dtype), and int64
    weights whose paths fit int32 are narrowed. Every problem is a GraphFormatError naming the file.
    """
    if data[:4] != _ZIP_MAGIC:
        looks_like_text = data[:64].isascii() and b"\x00" not in data[:64] and data[:1].strip()
        hint = (f"; it starts like text, {show(data[:40])}: give it its text format's extension, "
                f".gr, .txt or .plain" if looks_like_text else "")
        raise GraphFormatError(path, None, f"not an .npz archive (no zip magic bytes{hint})")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            arrays = _npz_arrays(path, archive)
    except GraphFormatError:
        raise
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, NotImplementedError) as exc:
        raise GraphFormatError(path, None, f"not a valid gpusp .npz graph: corrupt or truncated archive ({exc})") \
            from None
    header = _npz_header(path, arrays["header"])
    n = arrays["n"]
    if n.shape != () or n.dtype.kind not in "iu":
        raise GraphFormatError(path, None, f"not a valid gpusp .npz graph: n must be an integer scalar, found "
                                           f"dtype {n.dtype} and shape {n.shape}")
    with _graph_errors(path, "not a valid gpusp .npz graph: "):
        graph = Graph(int(n), arrays["indptr"], arrays["indices"], arrays["weights"], name=header["name"],
                      weight_kind=header["weight_kind"], id_map=arrays.get("id_map"), meta=header["meta"])
    return graph, header


def _npz_arrays(path, archive) -> dict:
    """Every array of an open archive by name, after checking that the names are exactly gpusp's."""
    def refuse(problem):
        raise GraphFormatError(path, None, f"not a valid gpusp .npz graph: {problem}")

    names = set(archive.files)
    missing = [key for key in _NPZ_REQUIRED if key not in names]
    if missing:
        refuse(f"missing {', '.join(missing)} (the archive holds {', '.join(sorted(names)) or 'nothing'})")
    unexpected = sorted(names - set(_NPZ_REQUIRED) - set(_NPZ_OPTIONAL))
    if unexpected:
        refuse(f"unexpected {', '.join(unexpected)} (gpusp writes {', '.join(_NPZ_REQUIRED + _NPZ_OPTIONAL)})")
    arrays = {}
    for key in sorted(names):
        try:
            arrays[key] = archive[key]
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, NotImplementedError) as exc:
            refuse(f"{key} cannot be read ({exc})")
    return arrays


def _npz_header(path, stored: np.ndarray) -> dict:
    """The archive's JSON header, checked: format, version, name, weight kind and meta."""
    def refuse(problem):
        raise GraphFormatError(path, None, f"not a valid gpusp .npz graph: header {problem}")

    if stored.shape != () or stored.dtype.kind != "U":
        refuse(f"must be a JSON text scalar, found dtype {stored.dtype} and shape {stored.shape}")
    try:
        header = json.loads(str(stored[()]))
    except json.JSONDecodeError as exc:
        refuse(f"is not valid JSON ({exc})")
    if not isinstance(header, dict) or header.get("format") != "gpusp-graph":
        refuse("does not say format 'gpusp-graph'")
    version = header.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        refuse(f"version {version!r} is not an archive version")
    if version > NPZ_VERSION:
        refuse(f"version {version}: written by a newer gpusp (this reader knows version {NPZ_VERSION})")
    if not isinstance(header.get("name"), str):
        refuse(f"name {header.get('name')!r} is not a string")
    if header.get("weight_kind") not in WEIGHT_KINDS:
        refuse(f"weight_kind {header.get('weight_kind')!r} is not one of {', '.join(WEIGHT_KINDS)}")
    meta = header.get("meta")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        refuse(f"meta must be a JSON object, found {type(meta).__name__}")
    header["meta"] = meta
    return header


@contextlib.contextmanager
def _graph_errors(path, prefix: str = ""):
    """Raise the errors of :class:`Graph`'s checks again with the file named.

    Graph decides what a graph is and names the array at fault; a reader knows the file: a ValueError
    becomes a GraphFormatError, a WeightOverflowError keeps its type and gains the file.
    """
    try:
        yield
    except GraphFormatError:
        raise
    except WeightOverflowError as exc:
        raise WeightOverflowError(f"{path}: {prefix}{exc}") from None
    except ValueError as exc:
        raise GraphFormatError(path, None, f"{prefix}{exc}") from None


def write_graph(graph: Graph, path, format=None, *, compresslevel: int = 6, undirected: bool = False) -> None:
    """Write ``graph`` atomically in the format of the extension or ``format=`` (gzip if ``.gz``).

    gr and plain write vertex ids 0..n-1 (gr: 1..n) and drop ``id_map``; snap writes the original ids
    from ``id_map`` (cannot hold isolated vertices when an id_map is present) and 2 columns only for
    unit weights; npz and gcsr keep everything; sg and wsg keep the arcs (and wsg the int32 weights) only,
    directed (with the transpose) unless ``undirected`` (a symmetric graph, GAPBS's undirected layout).
    gr refuses negative weights, sg weights other than 1, wsg weights beyond int32 (ValueError).
    """
    fmt = detect_format(path, format)
    if fmt == "co":
        raise ValueError("gpusp does not write .co coordinate files")
    if undirected and fmt not in ("sg", "wsg"):
        raise ValueError(f"undirected applies to GAPBS's .sg and .wsg files, not to {fmt}")
    src_w = graph.weights
    if fmt == "gr":
        if graph.has_negative_weights:
            raise ValueError(f"{graph.name} has negative weights, which .gr cannot hold; use plain, snap or npz")
        head = f"c written by gpusp: weight_kind={graph.weight_kind}\np sp {graph.n} {graph.m}\n".encode()
        chunks = _row_chunks(graph, head, lambda s, d, w: (s.astype(np.int64) + 1, d.astype(np.int64) + 1, w),
                             prefix=b"a ")
    elif fmt == "plain":
        chunks = _row_chunks(graph, f"{graph.n} {graph.m}\n".encode(), lambda s, d, w: (s, d, w))
    elif fmt == "snap":
        weighted = graph.weight_kind != "unit" or bool(graph.m and (src_w.min() != 1 or src_w.max() != 1))
        ids = None
        if graph.id_map is not None:
            ids = np.asarray(graph.id_map)
            if ids.shape != (graph.n,) or not np.issubdtype(ids.dtype, np.integer):
                raise ValueError("snap output needs an integer id_map with one entry per vertex")
        head = ("# gpusp edge list\n"
                f"# gpusp: weight_kind={graph.weight_kind if weighted else 'unit'}\n"
                f"# Nodes: {graph.n} Edges: {graph.m}\n"
                f"# FromNodeId\tToNodeId{chr(9) + 'Weight' if weighted else ''}\n").encode()

        def cols_of(s, d, w):
            if ids is not None:
                s, d = ids[s], ids[d]
            return (s, d, w) if weighted else (s, d)

        chunks = _row_chunks(graph, head, cols_of, sep=b"\t")
    elif fmt in ("sg", "wsg"):
        chunks = serialized_chunks(graph, weighted=fmt == "wsg", undirected=undirected)
    elif fmt == "gcsr":
        chunks = gcsr_chunks(graph)
    else:
        chunks = iter([_npz_bytes(graph)])
    _write_chunks(path, chunks, compresslevel)


def _write_chunks(path, chunks, compresslevel: int = 6) -> None:
    """Write the byte chunks (bytes or contiguous arrays) atomically, gzipped when ``path`` ends in ``.gz``."""
    gz = str(path).lower().endswith(".gz")
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        if gz:
            with gzip.GzipFile(filename="", mode="wb", fileobj=fh, compresslevel=compresslevel, mtime=0) as out:
                for chunk in chunks:
                    out.write(chunk)
        else:
            for chunk in chunks:
                fh.write(chunk)


# --------------------------------------------------------------------------------------------------
# the binary cache
# --------------------------------------------------------------------------------------------------
def cache_path(path, cache_dir=None, **options) -> Path:
    """Where :func:`load_cached` keeps the cache of ``path``: ``<name>.gcsr`` beside it or in
    ``cache_dir``; non-default read options add a short hash, ``<name>.<hash>.gcsr``."""
    path = Path(path)
    folder = Path(cache_dir) if cache_dir is not None else path.parent
    if options:
        digest = hashlib.sha256(json.dumps(options, sort_keys=True, default=str).encode()).hexdigest()[:10]
        return folder / f"{path.name}.{digest}.gcsr"
    return folder / f"{path.name}.gcsr"


def load_cached(path, cache_dir=None, **options) -> Graph:
    """``read_graph(path, **options)`` through a ``.gcsr`` cache (see :func:`cache_path`), which loads by
    mapping the file: its arrays are not parsed, only checked.

    The cache is used only when it records this source (resolved path), its size and mtime (ns), the
    same options and the current layout version; otherwise the source is read and the cache
    rewritten atomically. A cache that fails the layout's or the graph's checks is rebuilt. Binary
    sources (npz, sg, wsg, gcsr) are read directly. If the cache cannot be written (read-only folder)
    a warning is issued and the graph returned.
    """
    path = Path(path)
    if detect_format(path, options.get("format")) in BINARY_FORMATS:
        return read_graph(path, **options)
    st = path.stat()
    stamp = json.loads(json.dumps({"source": str(path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
                                   "options": options, "version": GCSR_VERSION}, sort_keys=True, default=str))
    cache = cache_path(path, cache_dir, **options)
    if cache.exists():
        try:
            graph, header = _load_gcsr(cache)
            if header.get("cache") == stamp:
                return graph
        except (GraphFormatError, WeightOverflowError):
            pass  # a cache that does not pass the checks is rebuilt from its source
    graph = read_graph(path, **options)
    try:
        _write_chunks(cache, gcsr_chunks(graph, {"cache": stamp}))
    except OSError as exc:
        warnings.warn(f"could not write the graph cache {cache}: {exc}", RuntimeWarning, stacklevel=2)
    return graph
