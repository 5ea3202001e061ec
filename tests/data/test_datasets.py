"""gpusp.data.datasets: the registry, verification, and fetch (mirror first, then a loopback HTTP server).

Every URL in the registry is rewritten to a server on 127.0.0.1 that the tests start; nothing else is
contacted. Tests that use real files of the offline mirror take them from the `mirror` fixture (tests/conftest.py:
the mirror, else a download, else they skip with the reason).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import logging
import os
import re
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest
import requests

from loopback import LoopbackServer

from gpusp.data import datasets
from gpusp.data.datasets import (UnknownDatasetError, check_file, fetch, get_dataset, list_datasets, parse_registry,
                            verify)
from gpusp.data.download import close_session, part_path
from gpusp.data.mirror import SITE_ENV, resolve, site_file
from gpusp.errors import DownloadError, GpuspError

pytestmark = pytest.mark.timeout(120)  # room for a host several times slower than usual

TOY_TEXT = b"c toy graph\np sp 3 2\na 1 2 5\na 2 3 7\n"
TOY_GZ = gzip.compress(TOY_TEXT, compresslevel=9, mtime=0)


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def _entry(name, filename, **kw):
    """A registry entry for tests; ``kw`` overrides any key (``name``/``filename`` included)."""
    e = {"name": name, "kind": "dimacs9", "format": "gr", "url": f"http://invalid.example/{filename}",
         "filename": filename, "nodes": 3, "edges": 2, "directed": True, "symmetric": False,
         "weights": "real", "weight_meaning": "distance", "index_base": 1, "coordinates": None,
         "sha256": None, "sha256_alternatives": [], "sha256_content": None, "sha256_content_normalized": None,
         "description": "test entry", "homepage": "http://invalid.example/"}
    e.update(kw)
    return e


# ----------------------------------------------------------------------------------- loopback server

class Loopback(LoopbackServer):
    """Serves ``files[path] = bytes`` (404 otherwise) and records every request path."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.requests: list[str] = []
        super().__init__()

    def handle(self, h):
        self.requests.append(h.path)
        body = self.files.get(h.path)
        code = 200 if body is not None else 404
        body = body if body is not None else b"not found\n"
        h.send_response(code)
        h.send_header("Content-Length", str(len(body)))
        h.send_header("Accept-Ranges", "bytes")
        h.end_headers()
        h.wfile.write(body)


@pytest.fixture
def server():
    before = set(threading.enumerate())
    srv = Loopback()
    yield srv
    srv.close()
    left = [t for t in threading.enumerate() if t not in before and t.is_alive() and t.name != "tqdm_monitor"]
    assert not left, f"threads left running: {left}"


@pytest.fixture
def session():
    s = requests.Session()
    s.trust_env = False
    yield s
    close_session(s)


@pytest.fixture
def registry(server, monkeypatch, tmp_path_factory):
    """The real registry plus toy entries, every URL pointing at the loopback server."""
    reg = {}
    for e in list_datasets():
        e["url"] = f"{server.base}/{e['filename']}"
        reg[e["name"]] = e
    toys = [
        _entry("toy-hashed", "toy-hashed.gr.gz", sha256=_sha(TOY_GZ), sha256_content=_sha(TOY_TEXT),
               sha256_content_normalized=_sha(TOY_TEXT)),
        _entry("toy-content", "toy-content.gr.gz", sha256_content=_sha(TOY_TEXT)),
        _entry("toy-nohash", "toy-nohash.gr.gz"),
    ]
    for e in toys:
        e["url"] = f"{server.base}/{e['filename']}"
        reg[e["name"]] = e
    monkeypatch.setattr(datasets, "_registry", lambda: reg)
    monkeypatch.delenv(datasets.MIRROR_ENV, raising=False)
    monkeypatch.setenv(SITE_ENV, str(tmp_path_factory.mktemp("site") / "site.yaml"))  # none of the machine's
    return reg


def _fetch(name, dest, session, **kw):
    kw.setdefault("timeout", (2.0, 2.0))
    kw.setdefault("retries", 1)
    return fetch(name, dest, session=session, sleep=lambda s: None, progress=False, **kw)


# -------------------------------------------------------------------------------------------- registry

DIMACS = {"NY": (264346, 733846), "BAY": (321270, 800172), "COL": (435666, 1057066), "FLA": (1070376, 2712798),
          "NW": (1207945, 2840208), "NE": (1524453, 3897636), "CAL": (1890815, 4657742),
          "LKS": (2758119, 6885658), "E": (3598623, 8778114), "W": (6262104, 15248146),
          "CTR": (14081816, 34292496), "USA": (23947347, 58333344)}
SNAP = {"p2p-Gnutella04": (10876, 39994, True), "p2p-Gnutella08": (6301, 20777, True),
        "p2p-Gnutella25": (22687, 54705, True), "p2p-Gnutella30": (36682, 88328, True),
        "p2p-Gnutella31": (62586, 147892, True), "wiki-Vote": (7115, 103689, True),
        "email-Enron": (36692, 367662, False), "roadNet-CA": (1965206, 5533214, False),
        "roadNet-PA": (1088092, 3083796, False), "roadNet-TX": (1379917, 3843320, False),
        "com-Youtube": (1134890, 2987624, False), "com-LiveJournal": (3997962, 34681189, False),
        "com-Orkut": (3072441, 117185083, False), "com-Friendster": (65608366, 1806067135, False),
        "soc-LiveJournal1": (4847571, 68993773, True), "web-Google": (875713, 5105039, True)}


def test_registry_schema():
    entries = list_datasets()
    assert len(entries) == 3 * len(DIMACS) + len(SNAP)
    names = [e["name"] for e in entries]
    assert len(set(names)) == len(names)
    assert len({e["filename"] for e in entries}) == len(entries)
    for e in entries:
        assert set(datasets.REQUIRED_KEYS) <= set(e)
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", e["name"])
        assert e["filename"] == urlparse(e["url"]).path.rsplit("/", 1)[1]
        assert e["filename"].endswith(".gz")
        host = urlparse(e["url"]).hostname
        if e["kind"] == "dimacs9":
            assert host == "www.diag.uniroma1.it" and e["format"] in ("gr", "co") and e["index_base"] == 1
            assert e["weights"] == ("real" if e["format"] == "gr" else "none")
        else:
            assert host == "snap.stanford.edu" and e["format"] == "snap" and e["index_base"] == 0
            assert e["weights"] == "none"
        if e["coordinates"]:
            assert get_dataset(e["coordinates"])["format"] == "co"


def test_dimacs_sizes_and_urls():
    for region, (n, m) in DIMACS.items():
        for t in "dt":
            e = get_dataset(f"USA-road-{t}.{region}")
            assert (e["nodes"], e["edges"], e["directed"], e["symmetric"]) == (n, m, True, True)
            assert e["url"] == (f"http://www.diag.uniroma1.it/challenge9/data/USA-road-{t}/"
                                f"USA-road-{t}.{region}.gr.gz")
            assert e["coordinates"] == f"USA-road-d.{region}.co"
        co = get_dataset(f"USA-road-d.{region}.co")
        assert co["nodes"] == n and co["edges"] is None
        assert co["url"].endswith(f"/USA-road-d/USA-road-d.{region}.co.gz")


def test_snap_sizes_and_direction():
    for name, (n, m, directed) in SNAP.items():
        e = get_dataset(name)
        assert (e["nodes"], e["edges"], e["directed"]) == (n, m, directed), name
    assert get_dataset("com-Youtube")["url"] == \
        "https://snap.stanford.edu/data/bigdata/communities/com-youtube.ungraph.txt.gz"
    assert get_dataset("web-Google")["url"] == "https://snap.stanford.edu/data/web-Google.txt.gz"
    assert get_dataset("com-Youtube")["symmetric"] is False  # each undirected edge listed once
    assert get_dataset("roadNet-CA")["symmetric"] is True and get_dataset("email-Enron")["symmetric"] is True


@pytest.mark.needs_mirror("MANIFEST.tsv")
def test_registry_hashes_match_manifest(mirror):
    with open(mirror / "MANIFEST.tsv", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert rows
    by_file = {e["filename"]: e for e in list_datasets()}
    for row in rows:
        e = by_file[row["file"]]
        assert e["url"] == row["official_url"] and e["kind"] == row["source_kind"]
        assert e["sha256"] == row["sha256_gz"] and e["sha256_content"] == row["sha256_content"]
        assert e["nodes"] == int(row["nodes"])
        assert e["edges"] == (None if row["edges"] == "NA" else int(row["edges"]))
        originals = re.findall(r"sha256 ([0-9a-f]{64})", row["notes"])
        assert e["sha256_alternatives"] == originals  # the DIMACS archives as first published
    assert get_dataset("web-Google")["sha256"] is None  # no checked copy: no hash invented


def test_get_dataset_unknown_name_lists_names():
    with pytest.raises(UnknownDatasetError) as err:
        get_dataset("p2p-gnutella08")
    assert isinstance(err.value, GpuspError) and isinstance(err.value, LookupError)
    msg = str(err.value)
    assert "did you mean p2p-Gnutella08" in msg and "USA-road-d.NY" in msg and "web-Google" in msg


def test_registry_entries_are_copies():
    e = get_dataset("wiki-Vote")
    e["nodes"] = -1
    e["sha256_alternatives"].append("x")
    assert get_dataset("wiki-Vote")["nodes"] == 7115
    assert get_dataset("wiki-Vote")["sha256_alternatives"] == []
    assert [e["name"] for e in list_datasets("snap")] == list(SNAP)


@pytest.mark.parametrize("change, problem", [
    ({"name": "../evil"}, "unsafe name"),
    ({"filename": "a/b.gz"}, "unsafe filename"),
    ({"sha256": "ABC"}, "sha256"),
    ({"sha256_alternatives": ["0" * 63]}, "sha256_alternatives"),
    ({"kind": "other"}, "kind/format/weights"),
    ({"nodes": "many"}, "nodes"),
    ({"coordinates": "nope"}, "coordinates"),
    ({"url": "ftp://x/y.gz"}, "url"),
])
def test_parse_registry_rejects_bad_entries(change, problem):
    import yaml

    entry = _entry("ok", "ok.gr.gz")
    entry.update(change)
    text = yaml.safe_dump({"schema_version": 1, "datasets": [entry]})
    with pytest.raises(GpuspError, match=re.escape(problem)):
        parse_registry(text)


def test_parse_registry_rejects_duplicates_and_missing_keys():
    import yaml

    dup = yaml.safe_dump({"datasets": [_entry("a", "a.gz"), _entry("a", "b.gz")]})
    with pytest.raises(GpuspError, match="duplicate"):
        parse_registry(dup)
    entry = _entry("a", "a.gz")
    del entry["sha256"]
    with pytest.raises(GpuspError, match="missing keys"):
        parse_registry(yaml.safe_dump({"datasets": [entry]}))


# ------------------------------------------------------------------------------------------ verification

@pytest.mark.needs_mirror("p2p-Gnutella08", "wiki-Vote")
def test_verify_mirror_files_and_variants(tmp_path, mirror):
    src = mirror / "p2p-Gnutella08.txt.gz"
    assert verify(src, "p2p-Gnutella08") and verify(src, get_dataset("p2p-Gnutella08"))
    text = gzip.decompress(src.read_bytes())

    other_gz = tmp_path / "p2p-Gnutella08.txt.gz"  # same text, other compressor settings (as SNAP serves)
    other_gz.write_bytes(gzip.compress(text, compresslevel=1, mtime=1_030_000_000))
    assert verify(other_gz, "p2p-Gnutella08")

    other_gz.write_bytes(gzip.compress(text.replace(b"0\t1\n", b"0\t2\n", 1)))  # one edge changed
    problem = check_file(other_gz, "p2p-Gnutella08")
    assert problem and get_dataset("p2p-Gnutella08")["sha256"] in problem

    wiki = gzip.decompress((mirror / "wiki-Vote.txt.gz").read_bytes())
    lf_text = wiki.replace(b"\r\n", b"\n").rstrip(b"\n") + b"\n"
    crlf_text = lf_text.rstrip(b"\n").replace(b"\n", b"\r\n")  # SNAP's original: CRLF, no final newline
    assert _sha(crlf_text) == get_dataset("wiki-Vote")["sha256_content"]
    for variant, text in (("crlf", crlf_text), ("lf", lf_text)):  # LF line endings and a final newline: same data
        path = tmp_path / variant / "wiki-Vote.txt.gz"
        path.parent.mkdir()
        path.write_bytes(gzip.compress(text))
        assert verify(path, "wiki-Vote"), variant


@pytest.mark.needs_mirror("p2p-Gnutella08")
def test_verify_rejects_corrupted_and_truncated(tmp_path, mirror):
    raw = (mirror / "p2p-Gnutella08.txt.gz").read_bytes()
    bad = tmp_path / "p2p-Gnutella08.txt.gz"
    bad.write_bytes(raw[:1000] + bytes([raw[1000] ^ 0x55]) + raw[1001:])
    assert not verify(bad, "p2p-Gnutella08")
    bad.write_bytes(raw[: len(raw) // 2])
    assert not verify(bad, "p2p-Gnutella08")
    assert not verify(tmp_path / "absent.gz", "p2p-Gnutella08")


def test_verify_without_hashes_checks_gzip_and_header(tmp_path, registry):
    p = tmp_path / "toy.gr.gz"
    p.write_bytes(TOY_GZ)
    assert verify(p, "toy-nohash")
    p.write_bytes(gzip.compress(TOY_TEXT.replace(b"p sp 3 2", b"p sp 4 2")))
    assert "header says nodes=4" in check_file(p, "toy-nohash")
    p.write_bytes(TOY_GZ[:-6])  # lost the gzip trailer
    assert "not a complete gzip file" in check_file(p, "toy-nohash")
    p.write_bytes(b"plain text, not gzip")
    assert not verify(p, "toy-nohash")


def test_verify_by_content_hash_only(tmp_path, registry):
    p = tmp_path / "toy.gr.gz"
    p.write_bytes(gzip.compress(TOY_TEXT, compresslevel=1))
    assert verify(p, "toy-content")
    p.write_bytes(gzip.compress(TOY_TEXT + b"a 3 1 1\n"))
    assert not verify(p, "toy-content")


# --------------------------------------------------------------------------------------------- fetching

@pytest.mark.needs_mirror("p2p-Gnutella08")
def test_fetch_uses_mirror_before_network(server, session, registry, tmp_path, monkeypatch, mirror):
    monkeypatch.setenv("GPUSP_MIRROR", str(mirror))
    got = _fetch("p2p-Gnutella08", tmp_path / "data", session)
    assert got == tmp_path / "data" / "p2p-Gnutella08.txt.gz"
    assert got.read_bytes() == (mirror / got.name).read_bytes() and verify(got, "p2p-Gnutella08")
    assert server.requests == []
    assert [p.name for p in got.parent.iterdir()] == [got.name]  # no temp files left


@pytest.mark.needs_mirror("email-Enron")
def test_fetch_real_entry_from_network_accepts_same_content(server, session, registry, tmp_path, mirror):
    """A fresh SNAP download differs in gzip bytes (and maybe line endings): content decides."""
    text = gzip.decompress((mirror / "email-Enron.txt.gz").read_bytes())
    served = gzip.compress(text.replace(b"\r\n", b"\n"), mtime=1_234_567_890)
    server.files["/email-Enron.txt.gz"] = served
    got = _fetch("email-Enron", tmp_path, session, mirror=False)
    assert got.read_bytes() == served and server.requests == ["/email-Enron.txt.gz"]


def test_fetch_from_mirror_argument(server, session, registry, tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "toy-hashed.gr.gz").write_bytes(TOY_GZ)
    monkeypatch.setenv("GPUSP_MIRROR", str(tmp_path / "elsewhere"))  # the argument wins
    got = _fetch("toy-hashed", tmp_path / "out", session, mirror=mirror)
    assert got.read_bytes() == TOY_GZ and server.requests == []
    assert (mirror / "toy-hashed.gr.gz").exists()  # the mirror is copied, never moved
    plain = tmp_path / "plain"
    plain.write_bytes(b"")
    assert got.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777  # usual permissions, not 0600


def test_corrupted_mirror_file_is_rejected(server, session, registry, tmp_path, monkeypatch, caplog):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "toy-hashed.gr.gz").write_bytes(gzip.compress(TOY_TEXT.replace(b"7", b"8")))
    monkeypatch.setenv("GPUSP_MIRROR", str(mirror))
    out = tmp_path / "out"
    with pytest.raises(DownloadError, match="offline"):
        _fetch("toy-hashed", out, session, offline=True)
    assert not (out / "toy-hashed.gr.gz").exists()

    server.files["/toy-hashed.gr.gz"] = TOY_GZ
    with caplog.at_level(logging.WARNING, logger="gpusp.data.datasets"):
        got = _fetch("toy-hashed", out, session)
    assert got.read_bytes() == TOY_GZ
    assert server.requests == ["/toy-hashed.gr.gz"]
    assert any("rejected" in r.getMessage() for r in caplog.records)
    assert sorted(p.name for p in out.iterdir()) == ["toy-hashed.gr.gz"]


@pytest.mark.needs_mirror("p2p-Gnutella08")
def test_corrupted_copy_of_real_mirror_file_is_rejected(server, session, registry, tmp_path, mirror):
    raw = (mirror / "p2p-Gnutella08.txt.gz").read_bytes()
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "p2p-Gnutella08.txt.gz").write_bytes(raw[:-100])
    with pytest.raises(DownloadError):
        _fetch("p2p-Gnutella08", tmp_path / "out", session, mirror=str(mirror), offline=True)
    server.files["/p2p-Gnutella08.txt.gz"] = raw
    got = _fetch("p2p-Gnutella08", tmp_path / "out", session, mirror=str(mirror))
    assert got.read_bytes() == raw and len(server.requests) == 1


def test_fetch_existing_file_is_kept_or_replaced(server, session, registry, tmp_path):
    dest = tmp_path / "toy-hashed.gr.gz"
    dest.write_bytes(TOY_GZ)
    assert _fetch("toy-hashed", tmp_path, session) == dest and server.requests == []
    dest.write_bytes(b"garbage")
    server.files["/toy-hashed.gr.gz"] = TOY_GZ
    assert _fetch("toy-hashed", tmp_path, session).read_bytes() == TOY_GZ
    assert server.requests == ["/toy-hashed.gr.gz"]


def test_fetch_wrong_content_from_network_fails_cleanly(server, session, registry, tmp_path):
    server.files["/toy-hashed.gr.gz"] = gzip.compress(b"p sp 1 0\n")
    with pytest.raises(DownloadError) as err:
        _fetch("toy-hashed", tmp_path, session)
    assert _sha(TOY_GZ) in str(err.value) and "/toy-hashed.gr.gz" in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_fetch_content_match_and_no_hash_entries(server, session, registry, tmp_path):
    server.files["/toy-content.gr.gz"] = gzip.compress(TOY_TEXT, mtime=7)
    assert verify(_fetch("toy-content", tmp_path, session), "toy-content")
    server.files["/toy-nohash.gr.gz"] = TOY_GZ[:-6]  # a truncated archive must not land
    with pytest.raises(DownloadError):
        _fetch("toy-nohash", tmp_path / "b", session)
    assert not (tmp_path / "b" / "toy-nohash.gr.gz").exists()
    assert not part_path(tmp_path / "b" / "toy-nohash.gr.gz").exists()
    server.files["/toy-nohash.gr.gz"] = TOY_GZ
    assert _fetch("toy-nohash", tmp_path / "b", session).read_bytes() == TOY_GZ


def test_fetch_missing_upstream_file_is_not_retried(server, session, registry, tmp_path):
    with pytest.raises(DownloadError, match="404"):
        _fetch("toy-hashed", tmp_path, session, retries=3)
    assert server.requests == ["/toy-hashed.gr.gz"]


def test_fetch_unknown_dataset(registry, tmp_path):
    with pytest.raises(UnknownDatasetError):
        fetch("no-such-graph", tmp_path)


def test_mirror_env_may_list_several_folders(server, session, registry, tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (b / "toy-hashed.gr.gz").write_bytes(TOY_GZ)
    monkeypatch.setenv("GPUSP_MIRROR", os.pathsep.join([str(a), str(b)]))
    assert _fetch("toy-hashed", tmp_path / "out", session).read_bytes() == TOY_GZ
    assert server.requests == []


# ------------------------------------------------- where the mirror comes from, and what a failed fetch says of it

def _mirror_with_toy(folder):
    folder.mkdir(parents=True)
    (folder / "toy-hashed.gr.gz").write_bytes(TOY_GZ)
    return folder


def test_the_mirror_comes_from_the_argument_then_the_environment_then_the_site_file(registry, tmp_path,
                                                                                    monkeypatch):
    site = tmp_path / "etc" / "site.yaml"
    monkeypatch.setenv(SITE_ENV, str(site))
    assert site_file() == site
    none = resolve()
    assert none.folders == () and none.origin is None
    assert none.options() == ("mirror options, the first set wins: --mirror / config key `mirror`: not given; "
                              f"$GPUSP_MIRROR: not set; site file (GPUSP_SITE): {site}: no such file (docs/data.md)")
    site.parent.mkdir()
    site.write_text("results: elsewhere\n")
    assert resolve().folders == () and f"{site}: no `mirror:` key" in resolve().options()
    site.write_text("mirror: data\n")  # relative: read from the site file's folder, not the working directory
    got = resolve()
    assert got.folders == (tmp_path / "etc" / "data",) and got.origin == "site file (GPUSP_SITE)"
    assert f"site file (GPUSP_SITE): {site}: data (searched; no folder {tmp_path / 'etc' / 'data'})" in got.options()
    monkeypatch.setenv("GPUSP_MIRROR", os.pathsep.join(["/e1", "/e2"]))
    got = resolve()
    assert got.folders == (Path("/e1"), Path("/e2")) and got.origin == "$GPUSP_MIRROR"
    assert f"site file (GPUSP_SITE): {site}: not read" in got.options()
    got = resolve(tmp_path / "arg")
    assert got.folders == (tmp_path / "arg",) and got.origin == "--mirror / config key `mirror`"
    assert f"$GPUSP_MIRROR: /e1{os.pathsep}/e2;" in got.options()  # set, but the argument comes first
    assert resolve(False).folders == () and "`mirror`: off (no mirror)" in resolve(False).options()
    site.write_text("mirror: [a, b]\n")
    monkeypatch.delenv("GPUSP_MIRROR")
    with pytest.raises(GpuspError, match=f"^{re.escape(str(site))}: `mirror:` is a folder"):
        resolve()
    site.write_text("mirror: [a\n")
    with pytest.raises(GpuspError, match=f"^{re.escape(str(site))}: the gpusp site file cannot be read"):
        resolve()


def test_the_site_file_defaults_to_the_users_config_folder(monkeypatch, tmp_path):
    monkeypatch.delenv(SITE_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert site_file() == tmp_path / "gpusp" / "site.yaml"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert site_file() == tmp_path / "home" / ".config" / "gpusp" / "site.yaml"


def test_fetch_reads_the_mirror_from_the_site_file(server, session, registry, tmp_path, monkeypatch):
    _mirror_with_toy(tmp_path / "site-mirror")
    site = tmp_path / "site.yaml"
    site.write_text(f"mirror: {tmp_path / 'site-mirror'}\n")
    monkeypatch.setenv(SITE_ENV, str(site))
    assert _fetch("toy-hashed", tmp_path / "out", session).read_bytes() == TOY_GZ and server.requests == []


def test_a_failed_fetch_names_the_mirror_options_in_one_line(server, session, registry, tmp_path, monkeypatch):
    """Offline, with no mirror, or with a mirror that lacks the file: the error says which options exist and what
    each held, so that the user knows where to put the mirror."""
    with pytest.raises(DownloadError) as caught:
        _fetch("toy-hashed", tmp_path / "out", session, offline=True)
    message = str(caught.value)
    assert "\n" not in message and message.startswith("toy-hashed: no verified toy-hashed.gr.gz in a mirror, and "
                                                      "offline is set; mirror options, the first set wins: ")
    assert "$GPUSP_MIRROR: not set" in message and "site file (GPUSP_SITE)" in message
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("GPUSP_MIRROR", str(empty))
    with pytest.raises(DownloadError) as caught:  # the network answers 404
        _fetch("toy-hashed", tmp_path / "out", session)
    message = str(caught.value)
    assert "\n" not in message and "the download failed: " in message and "404" in message
    assert f"$GPUSP_MIRROR: {empty} (searched)" in message
    assert not (tmp_path / "out" / "toy-hashed.gr.gz").exists()


def test_a_peer_archive_fetch_names_the_mirror_options_too(tmp_path, monkeypatch):
    from gpusp.solvers.peers import build

    monkeypatch.setenv(SITE_ENV, str(tmp_path / "no-site.yaml"))
    monkeypatch.setenv("GPUSP_MIRROR", str(tmp_path / "nowhere"))
    with pytest.raises(DownloadError, match=r"^gapbs: no verified .* in a mirror, and offline is set; mirror options, "
                                            rf"the first set wins: .*\$GPUSP_MIRROR: {re.escape(str(tmp_path))}"):
        build.fetch_archive("gapbs", tmp_path / "downloads", offline=True)


# ------------------------------------------------- the test suite's own mirror: mirror, else download, else skip

def test_tests_read_the_mirror_else_download_once_else_skip_with_reason(server, registry, tmp_path, monkeypatch):
    """tests/conftest.py's needs_mirror: what decides whether a mirror test runs on a fresh machine or in CI."""
    import conftest

    mirror, fallback = tmp_path / "mirror", tmp_path / "fallback"
    mirror.mkdir()
    (mirror / "toy-content.gr.gz").write_bytes(TOY_GZ)
    for name, value in [("MIRROR", mirror), ("fallback_folder", lambda: fallback), ("_UNAVAILABLE", {}),
                        ("REQUIRE_MIRROR", False)]:
        monkeypatch.setattr(conftest, name, value)
    for name in ("no_proxy", "NO_PROXY"):  # the download's own session honours a proxy from the environment
        monkeypatch.setenv(name, "127.0.0.1,localhost")
    assert conftest.mirror_with("toy-content") == mirror and server.requests == []

    server.files["/toy-hashed.gr.gz"] = TOY_GZ
    assert conftest.mirror_with("toy-hashed", "toy-content") == fallback
    got = fallback / "toy-hashed.gr.gz"
    assert got.read_bytes() == TOY_GZ and verify(got, "toy-hashed")
    assert (fallback / "toy-content.gr.gz").read_bytes() == TOY_GZ  # what the mirror has is copied, not downloaded
    monkeypatch.setattr(conftest, "_UNAVAILABLE", {})  # a later session: the kept, verified copy is used
    assert conftest.mirror_with("toy-hashed") == fallback and server.requests == ["/toy-hashed.gr.gz"]

    with pytest.raises(pytest.skip.Exception, match=r"lacks toy-nohash\.gr\.gz and downloading it failed \(.*404"):
        conftest.mirror_with("toy-nohash")
    with pytest.raises(pytest.skip.Exception, match="lacks toy-nohash"):  # tried once per session, not per test
        conftest.mirror_with("toy-nohash", "toy-hashed")
    assert server.requests == ["/toy-hashed.gr.gz", "/toy-nohash.gr.gz"]
    with pytest.raises(pytest.skip.Exception, match=r"lacks MANIFEST\.tsv \(only a mirror has it\)"):
        conftest.mirror_with()
    assert not (fallback / "toy-nohash.gr.gz").exists() and not (fallback / "MANIFEST.tsv").exists()
    (mirror / "MANIFEST.tsv").write_text("file\n")
    monkeypatch.setattr(conftest, "_UNAVAILABLE", {})
    assert conftest.mirror_with("MANIFEST.tsv", "toy-hashed") == fallback
    assert (fallback / "MANIFEST.tsv").resolve() == mirror / "MANIFEST.tsv"  # a plain mirror file is linked

    monkeypatch.setattr(conftest, "REQUIRE_MIRROR", True)  # CI: a missing mirror file fails, nothing is downloaded
    with pytest.raises(pytest.fail.Exception, match=f"GPUSP_REQUIRE_MIRROR is set and the offline mirror {mirror} "
                                                    "lacks toy-hashed.gr.gz"):
        conftest.mirror_with("toy-hashed")
    assert conftest.mirror_with("toy-content") == mirror and len(server.requests) == 2


def test_a_dataset_without_a_hash_is_pinned_at_its_first_download(server, session, registry, tmp_path):
    """Its size and sha256 are recorded beside it; a later copy that differs (the file changed on the server, or on
    disk) is refused, naming the record."""
    server.files["/toy-nohash.gr.gz"] = TOY_GZ
    got = _fetch("toy-nohash", tmp_path, session)
    pin = json.loads(datasets.pin_path(got).read_text())
    assert pin == {"name": "toy-nohash", "url": registry["toy-nohash"]["url"], "size": len(TOY_GZ),
                   "sha256": _sha(TOY_GZ)}
    assert datasets.check_file(got, registry["toy-nohash"]) is None
    other = gzip.compress(TOY_TEXT.replace(b"a 2 3 7", b"a 2 3 8"), mtime=0)
    got.write_bytes(other)  # changed on disk: the record refuses it, and fetch downloads it again
    assert "first download recorded" in datasets.check_file(got, registry["toy-nohash"]) or \
        "differs from the one its first download" in datasets.check_file(got, registry["toy-nohash"])
    server.files["/toy-nohash.gr.gz"] = other  # changed on the server: refused, nothing left under the name
    with pytest.raises(DownloadError, match="not the one first downloaded here"):
        _fetch("toy-nohash", tmp_path, session)
    assert not got.exists()
    server.files["/toy-nohash.gr.gz"] = TOY_GZ
    assert _fetch("toy-nohash", tmp_path, session).read_bytes() == TOY_GZ
