"""Text graph files split into lines and parsed with vectorised checks; every problem names the file and line.

:class:`Lines` first refuses binary content (a known binary signature or UTF-16/32 text, :func:`binary_content`;
a NUL or control byte anywhere, named with its line), before any line-level check could misread it, then splits
the bytes into lines with NumPy, refuses stray carriage returns, and parses a set of data lines
(``[prefix] int int ...``) through pandas' C parser. Lines of the common shape (one space or one tab between
fields) go to pandas as they are, once a C-speed byte scan has made sure pandas cannot accept anything the format
refuses; other lines are normalised first; when pandas still finds a problem a per-line scan names the first bad
line. The helpers below check header lines and body counts for the readers of :mod:`gpusp.data.formats`.
"""

from __future__ import annotations

import csv
import io
import re
import warnings

import numpy as np

from ..errors import GraphFormatError
from .graph import WEIGHT_KINDS

# byte classes inside data lines: 0 blank (space, tab, CR, LF), 1 digit, 2 sign, 3 anything else
_CLASS = np.full(256, 3, dtype=np.uint8)
_CLASS[[9, 10, 13, 32]] = 0
_CLASS[48:58] = 1
_CLASS[[43, 45]] = 2
_BLANK = np.zeros(256, dtype=bool)
_BLANK[[9, 32]] = True
_INT_RE = re.compile(rb"[+-]?[0-9]+\Z")
_FIELD_SPLIT = re.compile(rb"[ \t]+")
_SHORT = {"tail id": "u", "head id": "v", "source id": "from", "target id": "to", "node id": "id", "weight": "w"}


# signatures of binary files that arrive under a text graph's name, with what each one is
_SIGNATURES = (
    (b"PK\x03\x04", "a zip archive (an .npz graph? give it the .npz extension)"),
    (b"PK\x05\x06", "an empty zip archive"),
    (b"\x93NUMPY", "a NumPy .npy array"),
    (b"\x1f\x8b", "gzip data inside gzip (compressed twice? gunzip it once)"),
    (b"\xfd7zXZ\x00", "xz-compressed data (gpusp reads gzip: decompress it or compress it with gzip)"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data (gpusp reads gzip: decompress it or compress it with gzip)"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-zip archive"),
    (b"\xff\xfe\x00\x00", "UTF-32 text (byte order mark ff fe 00 00; gpusp reads ASCII or UTF-8: convert it, "
                          "e.g. iconv -f UTF-32 -t UTF-8)"),
    (b"\x00\x00\xfe\xff", "UTF-32 text (byte order mark 00 00 fe ff; gpusp reads ASCII or UTF-8: convert it, "
                          "e.g. iconv -f UTF-32 -t UTF-8)"),
    (b"\xff\xfe", "UTF-16 text (byte order mark ff fe; gpusp reads ASCII or UTF-8: convert it, "
                  "e.g. iconv -f UTF-16 -t UTF-8)"),
    (b"\xfe\xff", "UTF-16 text (byte order mark fe ff; gpusp reads ASCII or UTF-8: convert it, "
                  "e.g. iconv -f UTF-16 -t UTF-8)"),
)
_BZIP2 = re.compile(rb"BZh[1-9](1AY&SY|\x17\x72\x45\x38\x50\x90)")
_CONTROL_BYTES = bytes(range(1, 9)) + b"\x0b\x0c" + bytes(range(14, 32)) + b"\x7f"  # all but tab, LF and CR
_CONTROL = re.compile(b"[" + re.escape(_CONTROL_BYTES) + b"]")
_NOT_CONTROL = bytes(b for b in range(256) if b not in _CONTROL_BYTES)


def binary_content(data: bytes) -> str | None:
    """What binary content ``data`` starts with (a known signature, or UTF-16 without a byte order mark),
    or None. NUL and control bytes further in are :func:`_binary_byte`'s, which knows their offset."""
    for magic, what in _SIGNATURES:
        if data.startswith(magic):
            return what
    if _BZIP2.match(data):
        return "bzip2-compressed data (gpusp reads gzip: decompress it or compress it with gzip)"
    head = data[:512]
    if len(head) >= 4:
        for order, (text, zeros) in (("little", (head[0::2], head[1::2])), ("big", (head[1::2], head[0::2]))):
            if zeros.count(0) == len(zeros) and text.count(0) == 0:
                return (f"UTF-16 text ({order}-endian, no byte order mark; gpusp reads ASCII or UTF-8: convert it, "
                        f"e.g. iconv -f UTF-16{'LE' if order == 'little' else 'BE'} -t UTF-8)")
    return None


def _binary_byte(data: bytes):
    """(offset, what) of the first NUL or control byte (other than tab, CR and LF), or None."""
    nul = data.find(b"\x00")
    control = None
    if data.translate(None, _NOT_CONTROL):  # one C-speed pass; the search below runs only for binary data
        control = _CONTROL.search(data).start()
    if nul < 0 and control is None:
        return None
    if control is None or 0 <= nul < control:
        return nul, "NUL byte"
    return control, f"control byte 0x{data[control]:02x}"


# --------------------------------------------------------------------------------------------------
def show(raw: bytes, limit: int = 60) -> str:
    text = raw.decode("latin-1")
    return ascii(text if len(text) <= limit else text[:limit] + "...")


class Lines:
    """A text file split into lines: ``starts``/``ends`` (end excludes LF and one trailing CR) and
    ``kind``, the first non-blank byte of each line (0 for blank lines)."""

    def __init__(self, path, data: bytes):
        self.path = path
        if not data:
            raise GraphFormatError(path, None, "empty file")
        reason = binary_content(data)
        if reason:
            raise GraphFormatError(path, None, f"{reason}, not a text graph file")
        if data.startswith(b"\xef\xbb\xbf"):  # UTF-8 byte order mark
            data = data[3:]
        self.data = data
        a = np.frombuffer(data, dtype=np.uint8)
        self.a = a
        ends = np.flatnonzero(a == 10)
        if not data.endswith(b"\n"):
            ends = np.append(ends, a.size)
        starts = np.empty_like(ends)
        starts[0] = 0
        starts[1:] = ends[:-1] + 1
        self.starts = starts
        binary = _binary_byte(data)
        if binary is not None:  # before any line-level check: a binary file is not misread as bad lines
            self.fail(self.line_of(binary[0]), f"{binary[1]}: binary data, not a text graph file")
        if b"\r" in data:
            cr = (ends > starts) & (a[np.maximum(ends - 1, 0)] == 13)
            if int(cr.sum()) != data.count(b"\r"):
                stray = np.flatnonzero(a == 13)
                stray = stray[~np.isin(stray, ends[cr] - 1)][0]
                self.fail(self.line_of(stray), "stray carriage return (\\r) inside a line")
            ends = ends - cr
        self.ends = ends
        pos = starts.copy()
        open_ = np.flatnonzero(pos < ends)
        open_ = open_[_BLANK[a[pos[open_]]]]
        while open_.size:  # skip leading blanks (rare): one step per leading blank byte
            pos[open_] += 1
            open_ = open_[pos[open_] < ends[open_]]
            open_ = open_[_BLANK[a[pos[open_]]]]
        self.first = pos
        nonblank = pos < ends
        kind = np.zeros(starts.size, dtype=np.uint8)
        kind[nonblank] = a[pos[nonblank]]
        self.kind = kind
        if not nonblank.any():
            raise GraphFormatError(path, None, "empty file (only blank lines)")

    def __len__(self):
        return int(self.starts.size)

    def line_of(self, offset: int) -> int:
        """0-based index of the line holding a byte offset."""
        return int(np.searchsorted(self.starts, offset, side="right")) - 1

    def raw(self, i) -> bytes:
        return self.data[int(self.starts[i]):int(self.ends[i])]

    def fields(self, i) -> list[bytes]:
        raw = self.raw(i).strip(b" \t")
        return _FIELD_SPLIT.split(raw) if raw else []

    def fail(self, line, problem):
        """Raise GraphFormatError; ``line`` is a 0-based line index (int/np.integer) or None."""
        raise GraphFormatError(self.path, None if line is None else int(line) + 1, problem)

    # records --------------------------------------------------------------------------------------
    def records(self, idx: np.ndarray, names: tuple, prefix: bytes = b"", what: str = "lines") -> list:
        """Parse lines ``idx`` (sorted 0-based line indices), each ``[prefix] int int ...`` with exactly
        ``len(names)`` integer fields; returns one int64 array per field."""
        if idx.size == 0:
            return [np.empty(0, dtype=np.int64) for _ in names]
        columns = self._simple_records(idx, len(names), prefix)
        return columns if columns is not None else self._normalised_records(idx, names, prefix, what)

    def _simple_records(self, idx: np.ndarray, k: int, prefix: bytes):
        """The common shape in one pandas call on the bytes as they are, or None for any other shape.

        The shape: the lines are contiguous, each is ``[prefix sep] field (sep field)*`` with one byte
        ``sep`` (space or tab) between fields and nothing before or after, and the bytes are digits,
        signs, ``sep``, line ends and the prefix alone. pandas would also accept ``1.0``, ``1e3``, extra
        or trailing fields; one byte scan rules those out: deleting the allowed bytes but ``sep`` must
        leave exactly k - 1 separators per line (after the prefix's). No line can have fewer (a column
        would come out empty, which pandas refuses as an integer), so none has more.
        """
        first, last = int(idx[0]), int(idx[-1])
        if last - first + 1 != idx.size:
            return None
        lo, hi = int(self.starts[first]), int(self.ends[last])
        text = self.data[lo:hi]
        sep = b"\t" if b"\t" in self.raw(first) else b" "
        separators = text.translate(None, b"0123456789+-\r\n" + prefix)  # what is left must be sep alone
        if len(separators) != idx.size * (k - 1 + bool(prefix)) or separators.count(sep) != len(separators):
            return None
        if prefix:  # every line starts with the prefix and one separator
            heads = self.starts[idx]
            if hi - int(heads[-1]) <= len(prefix):
                return None
            for j, byte in enumerate(prefix + sep):
                if (self.a[heads + j] != byte).any():
                    return None
        used = list(range(int(bool(prefix)), k + int(bool(prefix))))
        import pandas as pd  # imported where text is parsed: the commands that read none skip its second of import

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                df = pd.read_csv(io.BytesIO(text), sep=sep.decode(), header=None, usecols=used, dtype=np.int64,
                                 engine="c", quoting=csv.QUOTE_NONE, na_filter=False, skip_blank_lines=False)
        except (ValueError, OverflowError, TypeError, pd.errors.ParserError):
            return None
        if len(df) != idx.size:
            return None
        return [df[j].to_numpy(dtype=np.int64) for j in used]

    def _normalised_records(self, idx: np.ndarray, names: tuple, prefix: bytes, what: str) -> list:
        """Any accepted shape (blanks around and between fields, other lines in between): the other lines
        and the prefix are blanked in a copy, the bytes classed, the fields counted, then pandas parses."""
        k = len(names)
        first, last = int(idx[0]), int(idx[-1])
        lo, hi = int(self.starts[first]), int(self.ends[last])
        region = np.frombuffer(bytearray(self.data[lo:hi]), dtype=np.uint8)
        if last - first + 1 != idx.size:  # other lines in between: turn them into blank lines
            sel = np.zeros(last - first + 1, dtype=bool)
            sel[idx - first] = True
            other = np.flatnonzero(~sel) + first
            lengths = self.ends[other] - self.starts[other]
            total = int(lengths.sum())
            if total:
                base = np.repeat(self.starts[other] - lo - np.cumsum(lengths) + lengths, lengths)
                region[base + np.arange(total)] = 32
        if prefix:
            p = self.first[idx]
            after = p + len(prefix)
            ok = after < self.ends[idx]
            ok[ok] = _BLANK[self.a[after[ok]]]
            if not ok.all():
                self._diagnose(idx, names, prefix, what, None)
            for j in range(len(prefix)):
                region[p - lo + j] = 32
        cls = _CLASS[region]
        if (cls == 3).any():
            self._diagnose(idx, names, prefix, what, None)
        filled = cls != 0
        ntok = int(np.count_nonzero(filled[1:] & ~filled[:-1])) + int(filled[0])
        if ntok != k * idx.size:
            self._diagnose(idx, names, prefix, what, None)
        import pandas as pd

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                df = pd.read_csv(io.BytesIO(region), sep=r"\s+", header=None, names=list(range(k)),
                                 dtype=np.int64, engine="c", quoting=csv.QUOTE_NONE, na_filter=False,
                                 index_col=False, skip_blank_lines=True)
        except (ValueError, OverflowError, TypeError, pd.errors.ParserError) as exc:
            self._diagnose(idx, names, prefix, what, exc)
        if len(df) != idx.size:
            self._diagnose(idx, names, prefix, what, f"{len(df)} rows for {idx.size} lines")
        return [df[j].to_numpy(dtype=np.int64) for j in range(k)]

    def _diagnose(self, idx, names, prefix, what, exc):
        """Slow path: find and report the first bad line among ``idx``."""
        k = len(names)
        spec = " ".join(([prefix.decode()] if prefix else []) + [_SHORT.get(n, n) for n in names])
        truncated = not self.data.endswith(b"\n")
        last_line = len(self) - 1
        for i in idx.tolist():
            hint = " (truncated file?)" if truncated and i == last_line else ""
            raw = self.raw(i).strip(b" \t")
            if prefix:
                if not raw.startswith(prefix) or raw[len(prefix):len(prefix) + 1] not in (b" ", b"\t"):
                    self.fail(i, f"expected a line '{spec}', found {show(raw)}{hint}")
                raw = raw[len(prefix):].strip(b" \t")
            fields = _FIELD_SPLIT.split(raw) if raw else []
            if len(fields) != k:
                self.fail(i, f"expected {k} fields '{spec}', found {len(fields)}: {show(raw)}{hint}")
            for name, field in zip(names, fields):
                if not _INT_RE.match(field):
                    self.fail(i, f"{name} {show(field)} is not an integer{hint}")
                if not -(2**63) <= int(field) < 2**63:
                    self.fail(i, f"{name} {field.decode()} does not fit in 64 bits")
        raise GraphFormatError(self.path, None, f"could not parse the {what} ({exc})")

    def gpusp_weight_kind(self, comment_char: int):
        """weight_kind recorded by a gpusp writer in a leading comment line, or None."""
        for i in np.flatnonzero(self.kind == comment_char)[:100].tolist():
            m = re.search(rb"gpusp.*weight_kind=(\w+)", self.raw(i))
            if m and m.group(1).decode() in WEIGHT_KINDS:
                return m.group(1).decode()
        return None


def parse_counts(lines: Lines, i, fields, expect: list, counts: int, usage: str) -> list[int]:
    """Check a header line: the leading words ``expect`` then ``counts`` non-negative integers."""
    ok = len(fields) == len(expect) + counts and [f.lower() for f in fields[:len(expect)]] == expect
    ok = ok and all(f.isdigit() for f in fields[len(expect):])
    if not ok:
        lines.fail(i, f"malformed header line {show(lines.raw(i))}, expected '{usage}'")
    return [int(f) for f in fields[len(expect):]]


def single_line(lines: Lines, char: bytes, usage: str) -> int:
    where = np.flatnonzero(lines.kind == ord(char))
    if where.size == 0:
        lines.fail(None, f"missing problem line '{usage}'")
    if where.size > 1:
        lines.fail(where[1], f"duplicate problem line (the first is line {int(where[0]) + 1})")
    return int(where[0])


def check_kinds(lines: Lines, allowed: bytes, what: str):
    ok = np.isin(lines.kind, np.frombuffer(allowed + b"\x00", dtype=np.uint8))
    if not ok.all():
        i = int(np.argmin(ok))
        lines.fail(i, f"unexpected line {show(lines.raw(i))} ({what})")


def check_body_count(lines: Lines, body, count: int, header: int, noun: str):
    """More body lines than the header announces: fail at the first surplus line."""
    if body.size > count:
        lines.fail(body[count], f"more {noun} lines than the {count} announced on line {header + 1} "
                                f"(header counts disagree with the body)")


def check_body_short(lines: Lines, body, count: int, header: int, noun: str):
    if body.size < count:
        lines.fail(header, f"header announces {count} {noun} lines but the file has only {body.size} "
                           f"(truncated file? header counts disagree with the body)")


def first_bad(lines: Lines, body, bad: np.ndarray, message):
    if bad.any():
        j = int(np.argmax(bad))
        lines.fail(body[j], message(j))


def check_ids(lines: Lines, body, ids: np.ndarray, low: int, high: int, message):
    """Fail at the first line whose id lies outside low..high (min and max first: the mask only on failure)."""
    if ids.size and (int(ids.min()) < low or int(ids.max()) > high):
        first_bad(lines, body, (ids < low) | (ids > high), message)
