"""gpusp.data.download against a real HTTP server on 127.0.0.1 with scripted faults (no other address)."""

from __future__ import annotations

import gzip
import hashlib
import os
import socket
import threading

import pytest
import requests

from loopback import LoopbackServer

from gpusp.data.download import close_session, download, part_path, sha256_file
from gpusp.errors import DownloadError, GpuspError

pytestmark = pytest.mark.timeout(30)

BODY = os.urandom(256 * 1024 + 123)  # several chunks; odd size
BODY_SHA = hashlib.sha256(BODY).hexdigest()
HALF = len(BODY) // 2


# --------------------------------------------------------------------------------------------- server

class Loopback(LoopbackServer):
    """A scripted HTTP server: ``script(path, *actions)``; request k gets actions[k] (the last repeats).

    An action is ``fn(handler, body)``. Every request's path and headers are recorded in ``requests``.
    """

    def __init__(self):
        self.scripts: dict[str, list] = {}
        self.bodies: dict[str, bytes] = {}
        self.requests: list[tuple[str, dict]] = []
        self.release = threading.Event()  # wakes stalled handlers at teardown
        self._lock = threading.Lock()
        super().__init__()

    def handle(self, h):
        with self._lock:
            self.requests.append((h.path, dict(h.headers.items())))
            actions = self.scripts.get(h.path)
            if not actions:
                action = status(404)
            else:
                action = actions.pop(0) if len(actions) > 1 else actions[0]
        action(h, self.bodies.get(h.path, b""))

    def url(self, path: str) -> str:
        return self.base + path

    def script(self, path: str, body: bytes, *actions) -> str:
        self.bodies[path] = body
        self.scripts[path] = list(actions)
        return self.url(path)

    def close(self):
        self.release.set()
        super().close()

    def headers_of(self, i: int) -> dict:
        return {k.lower(): v for k, v in self.requests[i][1].items()}


def _send(h, code, headers, payload, *, drop_after=None):
    h.send_response(code)
    for k, v in headers.items():
        h.send_header(k, v)
    h.end_headers()
    if drop_after is None:
        h.wfile.write(payload)
        return
    h.wfile.write(payload[:drop_after])
    h.wfile.flush()
    h.close_connection = True
    try:
        h.connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def full(*, ranges=True, honor_range=True, etag='"v1"', extra=None):
    """200 with the body; with ``honor_range`` a ``Range: bytes=N-`` request gets 206 and the rest."""

    def action(h, body):
        headers = {"Content-Type": "application/octet-stream", **(extra or {})}
        if ranges:
            headers["Accept-Ranges"] = "bytes"
        if etag:
            headers["ETag"] = etag
        rng = h.headers.get("Range")
        if rng and honor_range and ranges:
            start = int(rng.split("=")[1].split("-")[0])
            rest = body[start:]
            headers.update({"Content-Length": str(len(rest)),
                            "Content-Range": f"bytes {start}-{len(body) - 1}/{len(body)}"})
            _send(h, 206, headers, rest)
        else:
            headers["Content-Length"] = str(len(body))
            _send(h, 200, headers, body)

    return action


def partial(n, *, ranges=True, etag='"v1"'):
    """Announce the whole body (Content-Length), send ``n`` bytes of it, drop the connection."""

    def action(h, body):
        headers = {"Content-Length": str(len(body))}
        if ranges:
            headers["Accept-Ranges"] = "bytes"
        if etag:
            headers["ETag"] = etag
        _send(h, 200, headers, body, drop_after=n)

    return action


def status(code, headers=None):
    def action(h, body):
        payload = f"error {code}\n".encode()
        _send(h, code, {"Content-Length": str(len(payload)), **(headers or {})}, payload)

    return action


def stall(seconds):
    """Say nothing for ``seconds`` (or until teardown), then hang up."""

    def action(h, body):
        h.loopback.release.wait(seconds)
        h.close_connection = True

    return action


def range_reply(payload_for_rest):
    """Answer a Range request with 206 and the given bytes as 'the rest' (e.g. from another version)."""

    def action(h, body):
        start = int(h.headers["Range"].split("=")[1].split("-")[0])
        rest = payload_for_rest[start:]
        _send(h, 206, {"Accept-Ranges": "bytes", "ETag": '"v1"', "Content-Length": str(len(rest)),
                       "Content-Range": f"bytes {start}-{len(body) - 1}/{len(body)}"}, rest)

    return action


@pytest.fixture
def server():
    before = set(threading.enumerate())
    srv = Loopback()
    yield srv
    srv.close()
    leftover = [t for t in threading.enumerate()
                if t not in before and t.is_alive() and t.name != "tqdm_monitor"]
    assert not leftover, f"threads left running: {leftover}"


@pytest.fixture
def session():
    s = requests.Session()
    s.trust_env = False  # never route loopback through a proxy from the environment
    yield s
    close_session(s)


class _Sleeps(list):
    def fn(self, seconds):
        self.append(seconds)


@pytest.fixture
def sleeps():
    """A recording no-op sleep for the backoff (``sleeps.fn``); compares equal to the list of waits."""
    return _Sleeps()


def _dl(url, dest, session, sleeps, **kw):
    kw.setdefault("timeout", (2.0, 2.0))
    kw.setdefault("retries", 3)
    kw.setdefault("backoff", 0.01)
    return download(url, dest, session=session, sleep=sleeps.fn, progress=False, **kw)


def _no_leftovers(dest):
    assert not dest.exists()
    assert not part_path(dest).exists()
    assert [p.name for p in dest.parent.iterdir()] == []


# ---------------------------------------------------------------------------------------------- tests

def test_normal_download_with_checksum(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, full())
    dest = tmp_path / "sub" / "f.bin"
    assert _dl(url, dest, session, sleeps, sha256=BODY_SHA) == dest
    assert dest.read_bytes() == BODY
    assert not part_path(dest).exists()
    assert len(server.requests) == 1 and sleeps == []
    h = server.headers_of(0)
    assert "range" not in h and h["accept-encoding"] == "identity"


def test_own_session_and_progress_flag(server, tmp_path, monkeypatch):
    """Without a session, download() makes and closes its own; progress=True is harmless off a tty."""
    for name in ("no_proxy", "NO_PROXY"):  # its session honours a proxy from the environment: not for loopback
        monkeypatch.setenv(name, "127.0.0.1,localhost")
    url = server.script("/f.bin", BODY, full())
    dest = download(url, tmp_path / "f.bin", sha256=BODY_SHA.upper(), progress=True, retries=0,
                    timeout=(2, 2))
    assert dest.read_bytes() == BODY


def test_gzip_content_encoding_is_stored_raw(server, session, sleeps, tmp_path):
    gz = gzip.compress(b"1 2\n2 3\n" * 1000, mtime=0)
    url = server.script("/g.txt.gz", gz, full(extra={"Content-Encoding": "gzip"}))
    dest = _dl(url, tmp_path / "g.txt.gz", session, sleeps, sha256=hashlib.sha256(gz).hexdigest())
    assert dest.read_bytes() == gz


def test_read_timeout_then_success(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, stall(3.0), full())
    dest = _dl(url, tmp_path / "f.bin", session, sleeps, sha256=BODY_SHA, timeout=(2.0, 0.3))
    assert dest.read_bytes() == BODY
    assert len(server.requests) == 2 and sleeps == [0.01]


def test_http_500_then_success_with_exponential_backoff(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, status(500), status(503), full())
    dest = _dl(url, tmp_path / "f.bin", session, sleeps, sha256=BODY_SHA, backoff=0.5)
    assert dest.read_bytes() == BODY
    assert len(server.requests) == 3
    assert sleeps == [0.5, 1.0]


def test_backoff_is_capped_and_retries_run_out(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, status(502))
    dest = tmp_path / "f.bin"
    with pytest.raises(DownloadError) as err:
        _dl(url, dest, session, sleeps, sha256=BODY_SHA, retries=4, backoff=1.0, backoff_cap=3.0)
    assert sleeps == [1.0, 2.0, 3.0, 3.0]
    assert len(server.requests) == 5
    assert url in str(err.value) and "502" in str(err.value) and "5 attempt" in str(err.value)
    _no_leftovers(dest)


def test_retry_after_header_is_honoured(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, status(503, {"Retry-After": "0.25"}), full())
    _dl(url, tmp_path / "f.bin", session, sleeps, sha256=BODY_SHA, backoff=0.01)
    assert sleeps == [0.25]


@pytest.mark.parametrize("code", [404, 403, 410])
def test_client_errors_fail_at_once(server, session, sleeps, tmp_path, code):
    url = server.script("/missing.gz", BODY, status(code))
    dest = tmp_path / "missing.gz"
    with pytest.raises(DownloadError) as err:
        _dl(url, dest, session, sleeps, sha256=BODY_SHA)
    assert isinstance(err.value, GpuspError)
    msg = str(err.value)
    assert url in msg and str(code) in msg
    assert len(server.requests) == 1 and sleeps == []
    _no_leftovers(dest)


def test_failed_download_keeps_existing_dest(server, session, sleeps, tmp_path):
    dest = tmp_path / "f.bin"
    dest.write_bytes(b"old")
    url = server.script("/f.bin", BODY, status(404))
    with pytest.raises(DownloadError):
        _dl(url, dest, session, sleeps)
    assert dest.read_bytes() == b"old"


def test_a_host_that_cannot_be_reached_is_retried_once_then_fails(session, sleeps, tmp_path):
    """Offline (a refused connection, a name that does not resolve) more waiting does not help: one retry, not the
    whole backoff of a transient failure, and the error says why."""
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/f.bin"
    with pytest.raises(DownloadError) as err:
        _dl(url, tmp_path / "f.bin", session, sleeps, retries=5)
    assert url in str(err.value) and "giving up after 2 attempt(s) (the host cannot be reached" in str(err.value)
    assert sleeps == [0.01]
    with pytest.raises(DownloadError, match="after 1 attempt"):
        _dl(url, tmp_path / "f.bin", session, sleeps, retries=0)
    _no_leftovers(tmp_path / "f.bin")


def test_a_host_that_answered_once_gets_every_retry(server, session, sleeps, tmp_path):
    """A server that has answered in this download and then refuses is a transient failure: the usual backoff."""
    def answer_then_hang_up(h, body):
        status(503)(h, body)
        h.close_connection = True

    url = server.script("/f.bin", BODY, answer_then_hang_up)

    def close_then_wait(seconds):  # the server goes away after its one answer: every later attempt is refused
        server.close()
        sleeps.fn(seconds)

    with pytest.raises(DownloadError) as err:
        download(url, tmp_path / "f.bin", session=session, sleep=close_then_wait, progress=False, retries=3,
                 backoff=0.01, timeout=(2.0, 2.0))
    assert "giving up after 4 attempt(s): ConnectionError" in str(err.value) and sleeps == [0.01, 0.02, 0.04]
    assert len(server.requests) == 1


def test_truncated_body_then_success(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, partial(1000, ranges=False), full(ranges=False))
    dest = _dl(url, tmp_path / "f.bin", session, sleeps, sha256=BODY_SHA)
    assert dest.read_bytes() == BODY
    assert len(server.requests) == 2 and sleeps == [0.01]
    assert "range" not in server.headers_of(1)


def test_truncated_every_time_fails_without_final_file(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, partial(10, ranges=False))
    dest = tmp_path / "f.bin"
    with pytest.raises(DownloadError) as err:
        _dl(url, dest, session, sleeps, retries=1)  # no checksum: the prefix cannot be kept
    assert "interrupted" in str(err.value) or "truncated" in str(err.value)
    _no_leftovers(dest)


def test_wrong_checksum_removes_everything(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, full())
    dest = tmp_path / "f.bin"
    wrong = "0" * 64
    with pytest.raises(DownloadError) as err:
        _dl(url, dest, session, sleeps, sha256=wrong)
    msg = str(err.value)
    assert wrong in msg and BODY_SHA in msg and url in msg
    assert len(server.requests) == 1  # one uninterrupted transfer: a mismatch is not retried
    _no_leftovers(dest)


def test_alternative_checksum_is_accepted(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, full())
    dest = _dl(url, tmp_path / "f.bin", session, sleeps, sha256="1" * 64, sha256_alternatives=[BODY_SHA])
    assert dest.read_bytes() == BODY


def test_accept_callable_can_accept_a_hash_mismatch(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, full())
    seen = []
    dest = _dl(url, tmp_path / "f.bin", session, sleeps, sha256="1" * 64,
               accept=lambda p: seen.append(p.name) or p.read_bytes() == BODY)
    assert dest.read_bytes() == BODY and seen == ["f.bin.part"]
    with pytest.raises(DownloadError, match="content check also failed"):
        _dl(url, tmp_path / "g.bin", session, sleeps, sha256="1" * 64, accept=lambda p: False)
    assert not (tmp_path / "g.bin").exists() and not (tmp_path / "g.bin.part").exists()


def test_expected_size_mismatch(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, full())
    with pytest.raises(DownloadError, match="size mismatch"):
        _dl(url, tmp_path / "f.bin", session, sleeps, expected_size=len(BODY) + 1)
    _no_leftovers(tmp_path / "f.bin")


def test_bad_hash_argument():
    with pytest.raises(ValueError):
        download("http://127.0.0.1:9/x", "unused", sha256="xyz")


def test_interrupted_transfer_is_resumed_with_range(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, partial(HALF), full())
    dest = _dl(url, tmp_path / "f.bin", session, sleeps, sha256=BODY_SHA)
    assert dest.read_bytes() == BODY
    assert len(server.requests) == 2
    second = server.headers_of(1)
    assert second["range"] == f"bytes={HALF}-"
    assert second["if-range"] == '"v1"'
    assert not part_path(dest).exists()


def test_server_ignoring_range_restarts_from_zero(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, partial(HALF), full(honor_range=False))
    dest = _dl(url, tmp_path / "f.bin", session, sleeps, sha256=BODY_SHA)
    assert dest.read_bytes() == BODY
    assert server.headers_of(1)["range"] == f"bytes={HALF}-"  # asked, got a 200: whole body again


def test_server_without_range_support_gets_no_range(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, partial(HALF, ranges=False), full(ranges=False))
    dest = _dl(url, tmp_path / "f.bin", session, sleeps, sha256=BODY_SHA)
    assert dest.read_bytes() == BODY
    assert "range" not in server.headers_of(1)


def test_resumed_file_with_bad_checksum_is_fetched_once_more_from_zero(server, session, sleeps, tmp_path):
    other = bytes(b ^ 0xFF for b in BODY)  # "another version" of the file for the second half
    url = server.script("/f.bin", BODY, partial(HALF), range_reply(other), full())
    dest = _dl(url, tmp_path / "f.bin", session, sleeps, sha256=BODY_SHA)
    assert dest.read_bytes() == BODY
    assert len(server.requests) == 3
    assert "range" in server.headers_of(1) and "range" not in server.headers_of(2)


def test_resumed_file_with_bad_checksum_twice_fails(server, session, sleeps, tmp_path):
    url = server.script("/f.bin", BODY, partial(HALF), full(), partial(HALF), full())
    dest = tmp_path / "f.bin"
    with pytest.raises(DownloadError, match="sha256 mismatch"):
        _dl(url, dest, session, sleeps, sha256="2" * 64)
    assert len(server.requests) == 4  # resumed, restarted once from zero (resumed again), then gave up
    _no_leftovers(dest)


def test_part_file_from_an_earlier_run_is_resumed(server, session, sleeps, tmp_path):
    dest = tmp_path / "f.bin"
    part_path(dest).write_bytes(BODY[:HALF])
    url = server.script("/f.bin", BODY, full())
    _dl(url, dest, session, sleeps, sha256=BODY_SHA)
    assert dest.read_bytes() == BODY
    assert server.headers_of(0)["range"] == f"bytes={HALF}-"
    assert "if-range" not in server.headers_of(0)  # no validator known yet


def test_part_file_is_discarded_when_nothing_could_verify_it(server, session, sleeps, tmp_path):
    dest = tmp_path / "f.bin"
    part_path(dest).write_bytes(b"stale junk")
    url = server.script("/f.bin", BODY, full())
    _dl(url, dest, session, sleeps)
    assert dest.read_bytes() == BODY
    assert "range" not in server.headers_of(0)


def test_complete_part_file_and_416(server, session, sleeps, tmp_path):
    dest = tmp_path / "f.bin"
    part_path(dest).write_bytes(BODY)
    url = server.script("/f.bin", BODY, status(416, {"Content-Range": f"bytes */{len(BODY)}"}))
    _dl(url, dest, session, sleeps, sha256=BODY_SHA)
    assert dest.read_bytes() == BODY and len(server.requests) == 1


def test_network_failure_keeps_verifiable_part_for_later(server, session, sleeps, tmp_path):
    dest = tmp_path / "f.bin"
    url = server.script("/f.bin", BODY, partial(HALF), status(500))
    with pytest.raises(DownloadError):
        _dl(url, dest, session, sleeps, sha256=BODY_SHA, retries=1)
    assert not dest.exists()
    assert part_path(dest).read_bytes() == BODY[:HALF]
    server.scripts["/f.bin"] = [full()]
    _dl(url, dest, session, sleeps, sha256=BODY_SHA)  # a later run resumes it
    assert dest.read_bytes() == BODY
    assert server.headers_of(-1)["range"] == f"bytes={HALF}-"


def test_sha256_file(tmp_path):
    p = tmp_path / "x"
    p.write_bytes(BODY)
    assert sha256_file(p) == BODY_SHA


def test_stale_whole_part_of_another_version_is_refetched_from_zero(server, session, sleeps, tmp_path):
    dest = tmp_path / "f.bin"
    part_path(dest).write_bytes(bytes(len(BODY)))  # right length, wrong bytes
    url = server.script("/f.bin", BODY, status(416, {"Content-Range": f"bytes */{len(BODY)}"}), full())
    _dl(url, dest, session, sleeps, sha256=BODY_SHA)
    assert dest.read_bytes() == BODY
    assert len(server.requests) == 2 and "range" not in server.headers_of(1)


def test_progress_goes_to_a_log_as_lines_where_there_is_no_terminal(capsys):
    """A workflow job's log gets one line per tenth of a body of known length (per 256 MiB otherwise)."""
    from gpusp.data.download import _progress_bar

    bar = _progress_bar(True, total=1000 * 2**20, initial=0, desc="x.gz")
    for _ in range(100):
        bar.update(10 * 2**20)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 10 and lines[0] == "x.gz: 100 MiB of 1,000 MiB (10 %)" and lines[-1].endswith("(100 %)")
    unknown = _progress_bar(True, total=None, desc="y.gz")
    unknown.update(300 * 2**20)
    assert capsys.readouterr().err == "y.gz: 300 MiB\n"
    _progress_bar(False, total=10).update(10)
    assert capsys.readouterr().err == ""
