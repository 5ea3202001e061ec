"""The fast path of the ``.gr`` reader: a body of arc lines in the canonical shape ``a u v w`` (one space between
fields, ``\\n`` line ends, digits only), read block by block from the file (gunzipped as it streams), each block
checked byte-wise and parsed by pandas' C parser in a pool of threads. Anything else (another shape, comments between
arcs, a count that disagrees with the header, an id out of range, corrupt gzip) makes it give up, and the general
reader of :mod:`gpusp.data.textlines` reads the file again and names the problem's line. It holds the parsed arrays
and a few blocks, never the whole text.
"""

from __future__ import annotations

import collections
import concurrent.futures
import csv
import io
import os
import sys
import time
import zlib

import numpy as np

from ..errors import GraphFormatError
from .textlines import Lines, check_kinds, parse_counts, single_line

BLOCK_BYTES = 1 << 24
HEADER_LIMIT = 1 << 20  # comment and problem lines before the first arc; a longer header takes the general path
_GZIP_MAGIC = b"\x1f\x8b"
_DIGITS = b"0123456789"
_ARC_SKELETON = b"a   \n"  # an arc line with its digits deleted
_MIN_ARC_LINE = 8  # "a 1 1 0\n"
_MAX_GZIP_RATIO = 64  # text bytes per gzip byte beyond which an announced arc count is not believed up front


class _NotCanonical(Exception):
    """The file is not of the shape this path reads: the general reader takes over."""


def _gunzipped(fh):
    """The decompressed bytes of a gzip file (every member), in pieces of at most BLOCK_BYTES.

    zlib checks each member's CRC-32 and length itself (``wbits=31``); any problem raises zlib.error.
    """
    inflate = zlib.decompressobj(31)
    pending = b""
    while True:
        if not pending:
            pending = fh.read(1 << 20)
            if not pending:
                if not inflate.eof:
                    raise zlib.error("truncated gzip data")
                return
        if inflate.eof:  # another member follows
            inflate = zlib.decompressobj(31)
        piece = inflate.decompress(pending, BLOCK_BYTES)
        pending = inflate.unused_data if inflate.eof else inflate.unconsumed_tail
        if piece:
            yield piece


def _blocks(path):
    """(block, limit): the file's (gunzipped) bytes in blocks of about BLOCK_BYTES, and the most text the file could
    hold; _NotCanonical on bad gzip."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        gz = fh.read(2) == _GZIP_MAGIC
        fh.seek(0)
        if not gz and str(path).lower().endswith(".gz"):
            raise _NotCanonical
        pieces = _gunzipped(fh) if gz else iter(lambda: fh.read(BLOCK_BYTES), b"")
        limit = size * (_MAX_GZIP_RATIO if gz else 1)
        block = []
        try:
            for piece in pieces:
                block.append(piece)
                if sum(map(len, block)) >= BLOCK_BYTES:
                    yield b"".join(block), limit
                    block = []
        except zlib.error:
            raise _NotCanonical from None
        if block:
            yield b"".join(block), limit


def _parse_arcs(chunk: bytes, n: int):
    """(u - 1, v - 1, w) of a block of whole arc lines in the canonical shape, ids checked to lie in 1..n and
    weights to be >= 0; _NotCanonical for anything else.

    Deleting the digits must leave ``a   \\n`` per line, and every line must start ``a `` (after the previous
    line's ``\\n``): then each line is ``a`` and three space-separated runs of digits, and pandas refuses a run that
    is empty or too long for int64.
    """
    skeleton = chunk.translate(None, _DIGITS)
    lines = len(skeleton) // len(_ARC_SKELETON)
    if skeleton != _ARC_SKELETON * lines or not chunk.startswith(b"a ") or chunk.count(b"\na ") != lines - 1:
        raise _NotCanonical
    import pandas as pd  # imported where text is parsed (as in textlines)

    try:
        df = pd.read_csv(io.BytesIO(chunk), sep=" ", header=None, usecols=[1, 2, 3], dtype=np.int64, engine="c",
                         quoting=csv.QUOTE_NONE, na_filter=False)
    except (ValueError, OverflowError, TypeError, pd.errors.ParserError):
        raise _NotCanonical from None
    u, v, w = (df[j].to_numpy(dtype=np.int64) for j in (1, 2, 3))
    if len(u) != lines or (lines and (min(int(u.min()), int(v.min())) < 1 or max(int(u.max()), int(v.max())) > n
                                      or int(w.min()) < 0)):
        raise _NotCanonical
    return (u - 1).astype(np.int32), (v - 1).astype(np.int32), w


def _header(path, head: bytes):
    """(n, m, weight kind) from the comment and problem lines before the first arc; _NotCanonical when they have
    any problem (the general reader names it)."""
    try:
        lines = Lines(path, head)
        check_kinds(lines, b"cp", "")
        p = single_line(lines, b"p", "p sp N M")
        n, m = parse_counts(lines, p, lines.fields(p), [b"p", b"sp"], 2, "p sp N M")
    except GraphFormatError:
        raise _NotCanonical from None
    return n, m, lines.gpusp_weight_kind(ord("c"))


def _workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def read_gr_blocks(path):
    """(n, src, dst, weights, kind) of a ``.gr`` file whose arcs are in the canonical shape, or None: then the
    general reader must read it (it is of another shape, or has a problem the general reader names)."""
    try:
        return _read_gr_blocks(path)
    except _NotCanonical:
        return None


PROGRESS_ARCS = 1 << 24  # a file of this many arcs and more (seconds of parsing) says how far it got on stderr


class _Progress:
    """``said(arcs)``: a line on stderr at each tenth of a large file's ``m`` arcs and at the last, with the seconds
    so far."""

    def __init__(self, path, m: int):
        self.path, self.m, self.t0 = path, m, time.perf_counter()
        self.step = m // 10 if m >= PROGRESS_ARCS else 0
        self.next = self.step

    def __call__(self, arcs: int) -> None:
        if self.step and (arcs >= self.next or arcs == self.m):
            print(f"gpusp: parsing {self.path}: {arcs:,} of {self.m:,} arcs ({100 * arcs // self.m} %, "
                  f"{time.perf_counter() - self.t0:.1f} s)", file=sys.stderr, flush=True)
            self.next = arcs + self.step


def _read_gr_blocks(path):
    blocks = _blocks(path)
    text, limit = b"", 0
    for block, limit in blocks:  # the header: up to the first line that starts with "a "
        text += block
        start = 0 if text.startswith(b"a ") else text.find(b"\na ") + 1
        if start > 0 or text.startswith(b"a "):
            break
        if len(text) > HEADER_LIMIT:
            raise _NotCanonical
    else:
        raise _NotCanonical  # no arc line: nothing worth a fast path
    if start == 0 or start > HEADER_LIMIT:
        raise _NotCanonical
    n, m, kind = _header(path, text[:start])
    if m * _MIN_ARC_LINE > limit:
        raise _NotCanonical  # more arcs than the file could hold: the general reader says so
    try:
        src, dst, weights = np.empty(m, np.int32), np.empty(m, np.int32), np.empty(m, np.int64)
    except MemoryError:
        raise _NotCanonical from None  # the general reader says what the header's count asks
    filled = 0
    workers = _workers()
    said = _Progress(path, m)
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        pending = collections.deque()

        def collect():
            nonlocal filled
            u, v, w = pending.popleft().result()
            if filled + len(u) > m:
                raise _NotCanonical
            src[filled:filled + len(u)], dst[filled:filled + len(u)], weights[filled:filled + len(u)] = u, v, w
            filled += len(u)
            said(filled)

        def submit(chunk):
            pending.append(pool.submit(_parse_arcs, chunk, n))
            while len(pending) > 2 * workers:
                collect()

        carry = text[start:]
        try:
            for block, _ in blocks:
                carry += block
                cut = carry.rfind(b"\n") + 1
                if cut:
                    submit(carry[:cut])
                    carry = carry[cut:]
            if carry:
                submit(carry if carry.endswith(b"\n") else carry + b"\n")
            while pending:
                collect()
        finally:
            for future in pending:
                future.cancel()
    if filled != m:
        raise _NotCanonical
    return n, src, dst, weights, kind
