"""Download one file over HTTP(S), robustly: stream into ``<dest>.part``, retry with backoff, resume with ranges,
verify size and sha256, then rename onto ``dest`` (absent or whole and checked, never half-written). The policy in
full (what is retried, resumed, kept or removed): docs/data.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import requests
import urllib3
from tqdm import tqdm

from ..errors import DownloadError

__all__ = ["DEFAULT_BACKOFF", "DEFAULT_BACKOFF_CAP", "DEFAULT_RETRIES", "DEFAULT_TIMEOUT", "close_session",
           "download", "part_path", "sha256_file"]

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT: tuple[float, float] = (10.0, 60.0)  # (connect, read) seconds; read = max silence
DEFAULT_RETRIES = 5
DEFAULT_BACKOFF = 1.0
DEFAULT_BACKOFF_CAP = 60.0
# retries when the host cannot be reached at all (its name does not resolve, the connection is refused or does not
# open) and it has not answered yet in this download: offline, more waiting does not help
UNREACHABLE_RETRIES = 1
CHUNK_SIZE = 1 << 20
USER_AGENT = f"gpusp-download/1 python-requests/{requests.__version__}"

_RETRY_STATUS = frozenset({408, 429})
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_CONTENT_RANGE = re.compile(r"^\s*bytes\s+(?:(\d+)-(\d+)|\*)/(\d+|\*)\s*$", re.IGNORECASE)


class _Retryable(Exception):
    """A transient failure: try again after a backoff."""

    def __init__(self, reason: str, retry_after: float | None = None, unreachable: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.unreachable = unreachable


class _Fatal(Exception):
    """A failure that another attempt would not fix."""


@dataclass
class _State:
    """What this call learned about the server and the ``.part`` file across attempts."""

    accept_ranges: bool | None = None  # None: not known yet (no 200/206 seen)
    validator: str | None = None  # strong ETag or Last-Modified of the resource
    pieces: int = 0  # transfers that wrote into the current .part
    answered: bool = False  # the server has sent a response in this download


def part_path(dest) -> Path:
    """The temporary file a download to ``dest`` streams into."""
    dest = Path(dest)
    return dest.with_name(dest.name + ".part")


def sha256_file(path, chunk_size: int = CHUNK_SIZE) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(chunk_size):
            h.update(chunk)
    return h.hexdigest()


def _normalise_hashes(sha256: str | None, alternatives: Iterable[str]) -> list[str]:
    known = []
    for value in ([sha256] if sha256 else []) + list(alternatives or ()):
        v = str(value).strip().lower()
        if not _HEX64.match(v):
            raise ValueError(f"not a sha256 hex digest: {value!r}")
        if v not in known:
            known.append(v)
    return known


def _isatty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _retry_after(resp: requests.Response) -> float | None:
    value = resp.headers.get("Retry-After", "").strip()
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:  # an HTTP date: ignore, the backoff applies
        return None


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


class _LogBar:
    """Progress for a log file (a workflow job's): one line on stderr per tenth of the body, or per 256 MiB when its
    length is unknown."""

    def __init__(self, total=None, initial=0, desc=""):
        self.total, self.done, self.desc = total, initial, desc
        self.step = max(total // 10, 1) if total else 256 * 2**20
        self.next = initial + self.step

    def update(self, n):
        self.done += n
        if self.done >= self.next:
            share = f" of {self.total / 2**20:,.0f} MiB ({100 * self.done / self.total:.0f} %)" if self.total else ""
            print(f"{self.desc}: {self.done / 2**20:,.0f} MiB{share}", file=sys.stderr, flush=True)
            self.next = self.done + self.step

    def close(self):
        pass


def _progress_bar(progress: bool, **kw):
    """A tqdm byte counter on stderr when wanted and stderr is a terminal; lines in a log otherwise."""
    if not progress:
        return _NoBar()
    if not _isatty():
        return _LogBar(**{k: v for k, v in kw.items() if k in ("total", "initial", "desc")})
    return tqdm(unit="B", unit_scale=True, unit_divisor=1024, leave=False, **kw)


def _truncate(path: Path) -> None:
    with open(path, "wb"):
        pass


def _one_transfer(session: requests.Session, url: str, part: Path, state: _State,
                  timeout, progress: bool, label: str) -> None:
    """One HTTP request; on success ``part`` holds the whole body. Raises _Retryable or _Fatal."""
    have = part.stat().st_size if part.exists() else 0
    use_range = have > 0 and state.accept_ranges is not False
    if have > 0 and not use_range:
        _truncate(part)
        state.pieces = 0
        have = 0
    headers = {"Accept-Encoding": "identity"}
    if use_range:
        headers["Range"] = f"bytes={have}-"
        if state.validator:
            headers["If-Range"] = state.validator

    try:
        resp = session.get(url, headers=headers, stream=True, timeout=timeout, allow_redirects=True)
    except (requests.Timeout, requests.ConnectionError) as exc:
        raise _Retryable(f"{type(exc).__name__}: {exc}", unreachable=_unreachable(exc)) from exc
    except requests.RequestException as exc:  # invalid URL, schema, too many redirects, ...
        raise _Fatal(f"{url}: {type(exc).__name__}: {exc}") from exc

    state.answered = True
    with resp:
        status = resp.status_code
        if status in (200, 206):
            state.accept_ranges = "bytes" in resp.headers.get("Accept-Ranges", "").lower() or status == 206
            etag = resp.headers.get("ETag")
            state.validator = etag if etag and not etag.startswith("W/") else resp.headers.get("Last-Modified")

        if status == 416 and use_range:
            m = _CONTENT_RANGE.match(resp.headers.get("Content-Range", ""))
            if m and m.group(3) != "*" and int(m.group(3)) == have:
                state.pieces += 1  # the .part already holds the whole file (a resume: see the policy)
                return
            _truncate(part)
            state.pieces = 0
            raise _Retryable(f"HTTP 416 for Range bytes={have}- ; restarting from zero")
        if status == 206:
            m = _CONTENT_RANGE.match(resp.headers.get("Content-Range", ""))
            if not use_range or not m or m.group(1) is None or int(m.group(1)) != have:
                _truncate(part)
                state.pieces = 0
                raise _Retryable(f"HTTP 206 with unusable Content-Range {resp.headers.get('Content-Range')!r} "
                                 f"for Range bytes={have}- ; restarting from zero")
            total = None if m.group(3) == "*" else int(m.group(3))
            mode, start = "ab", have
        elif status == 200:
            if use_range:
                log.info("%s: server ignored the Range request (HTTP 200); restarting from zero", url)
            state.pieces = 0
            mode, start, total = "wb", 0, None
        elif status >= 500 or status in _RETRY_STATUS:
            raise _Retryable(f"HTTP {status} {resp.reason or ''}".rstrip(), _retry_after(resp))
        else:
            raise _Fatal(f"{url}: HTTP {status} {resp.reason or ''}".rstrip())

        length_header = resp.headers.get("Content-Length")
        try:
            length = int(length_header) if length_header is not None else None
        except ValueError:
            length = None
        if total is None and length is not None:
            total = start + length

        got = 0
        bar = _progress_bar(progress, total=total, initial=start, desc=label)
        try:
            with open(part, mode) as fh:
                state.pieces += 1
                try:
                    for chunk in resp.raw.stream(CHUNK_SIZE, decode_content=False):
                        fh.write(chunk)
                        got += len(chunk)
                        bar.update(len(chunk))
                except (urllib3.exceptions.HTTPError, requests.RequestException) as exc:
                    raise _Retryable(f"transfer interrupted after {start + got} bytes"
                                     f"{f' of {total}' if total else ''}: {type(exc).__name__}: {exc}") from exc
                fh.flush()
                os.fsync(fh.fileno())
        finally:
            bar.close()
        if length is not None and got != length:
            raise _Retryable(f"truncated body: got {got} of {length} bytes (Content-Length)")
        size = part.stat().st_size
        if total is not None and size != total:
            _truncate(part)
            state.pieces = 0
            raise _Retryable(f"assembled {size} bytes but the server announced {total}; restarting from zero")


def _unreachable(exc: requests.RequestException) -> bool:
    """Whether no connection could be opened: a name that does not resolve, a refused or timed-out connect (urllib3's
    NewConnectionError, NameResolutionError among them, is a ConnectTimeoutError), not a failure of an open one."""
    if isinstance(exc, requests.ConnectTimeout):
        return True
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(reason, urllib3.exceptions.ConnectTimeoutError)


def _problem(part: Path, url: str, known: list[str], expected_size: int | None,
             accept: Callable[[Path], bool] | None) -> str | None:
    """None when the completed ``part`` passes verification, else why not."""
    if expected_size is not None:
        size = part.stat().st_size
        if size != expected_size:
            return f"{url}: size mismatch: expected {expected_size} bytes, got {size}"
    if known:
        actual = sha256_file(part)
        if actual in known:
            return None
        if accept is not None and accept(part):
            return None
        expected = known[0] if len(known) == 1 else "one of " + ", ".join(known)
        also = " (and the content check also failed)" if accept is not None else ""
        return f"{url}: sha256 mismatch: expected {expected}, got {actual}{also}"
    if accept is not None and not accept(part):
        return f"{url}: downloaded file failed verification"
    return None


def download(url: str, dest, *, sha256: str | None = None, sha256_alternatives: Iterable[str] = (),
             expected_size: int | None = None, accept: Callable[[Path], bool] | None = None,
             timeout: float | tuple[float, float] = DEFAULT_TIMEOUT, retries: int = DEFAULT_RETRIES,
             backoff: float = DEFAULT_BACKOFF, backoff_cap: float = DEFAULT_BACKOFF_CAP,
             sleep: Callable[[float], object] = time.sleep, session: requests.Session | None = None,
             progress: bool = True) -> Path:
    """Download ``url`` to ``dest`` (see the module docstring); return ``dest`` as a Path.

    Raises ``DownloadError`` (naming the URL) when the file cannot be fetched or does not verify,
    ``ValueError`` for a malformed ``sha256``/alternative.
    """
    dest = Path(dest)
    part = part_path(dest)
    known = _normalise_hashes(sha256, sha256_alternatives)
    verifiable = bool(known) or accept is not None or expected_size is not None
    if retries < 0:
        raise ValueError("retries must be >= 0")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if part.exists() and not verifiable:
        part.unlink()  # a stale prefix of unknown origin: nothing could catch it

    own_session = session is None
    if own_session:
        session = requests.Session()
        session.headers["User-Agent"] = USER_AGENT
    keep_part = verifiable
    try:
        restarted = False
        while True:
            state = _State(pieces=1 if part.exists() and part.stat().st_size > 0 else 0)
            _transfer_with_retries(session, url, part, state, timeout=timeout, retries=retries,
                                   backoff=backoff, backoff_cap=backoff_cap, sleep=sleep, progress=progress,
                                   label=dest.name)
            problem = _problem(part, url, known, expected_size, accept)
            if problem is None:
                break
            part.unlink(missing_ok=True)
            if state.pieces > 1 and not restarted:
                log.warning("%s; the file was resumed, so downloading it once more from zero", problem)
                restarted = True
                continue
            keep_part = False
            raise DownloadError(problem)
        os.replace(part, dest)
        _fsync_dir(dest.parent)
        log.info("downloaded %s -> %s", url, dest)
        return dest
    except _Fatal as exc:
        keep_part = False
        raise DownloadError(str(exc)) from exc
    except OSError as exc:  # local file trouble (disk full, permissions): not a network problem
        raise DownloadError(f"{url}: cannot write {part}: {exc}") from exc
    finally:
        if not keep_part:
            with contextlib.suppress(FileNotFoundError):
                part.unlink()
        if own_session:
            close_session(session)


def _transfer_with_retries(session, url, part, state, *, timeout, retries, backoff, backoff_cap, sleep,
                           progress, label) -> None:
    attempt = 0
    while True:
        try:
            _one_transfer(session, url, part, state, timeout, progress, label)
            return
        except _Retryable as exc:
            attempt += 1
            offline = exc.unreachable and not state.answered
            allowed = min(retries, UNREACHABLE_RETRIES) if offline else retries
            if attempt > allowed:
                why = " (the host cannot be reached: no network, a name that does not resolve, or a refused " \
                      "connection)" if offline else ""
                raise DownloadError(f"{url}: giving up after {attempt} attempt(s){why}: {exc.reason}") from exc
            delay = min(backoff_cap, backoff * 2 ** (attempt - 1))
            if exc.retry_after is not None:
                delay = min(backoff_cap, max(delay, exc.retry_after))
            log.warning("%s: %s; retry %d/%d in %.3g s", url, exc.reason, attempt, allowed, delay)
            sleep(delay)


def close_session(session: requests.Session) -> None:
    """Close a session and its idle pooled sockets now.

    ``Session.close()`` alone leaves idle keep-alive sockets to the garbage collector with recent
    urllib3 (its ``PoolManager.clear()`` no longer closes the pools), so close each pool first.
    """
    for adapter in list(session.adapters.values()):
        pools = getattr(getattr(adapter, "poolmanager", None), "pools", None)
        with contextlib.suppress(Exception):
            for key in list(pools.keys()):
                pool = pools.get(key)
                if pool is not None:
                    pool.close()
    session.close()


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
