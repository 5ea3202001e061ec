"""The registry of real benchmark graphs (``gpusp/data/datasets.yaml``) and fetching them.

* ``list_datasets()`` / ``get_dataset(name)`` read the registry (schema: see the YAML's header).
* ``fetch(name, dest_dir)`` returns ``dest_dir/<filename>``, a verified ``.gz``, taking it from, in order:
  the file already at that path (if it verifies), an offline mirror (``gpusp.data.mirror``: ``mirror=``, else
  ``$GPUSP_MIRROR``, else the site file; folders holding files named as the registry's ``filename``), then the
  official URL via ``gpusp.data.download``. A mirror file that does not verify is skipped with a warning (never
  copied into place); a failed fetch names every mirror option and what each held.
* ``verify(path, entry)`` says whether a file is the dataset: its ``.gz`` sha256 is ``sha256`` or one
  of ``sha256_alternatives``, or its decompressed text matches ``sha256_content`` or (line endings
  normalised) ``sha256_content_normalized``. With no hash known, the gzip stream must be complete and
  a size header, where present, must agree with ``nodes``/``edges``; its size and sha256 are then recorded beside it
  at the first download (``<file>.pin.json``) and every later check of that copy must match them.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import functools
import gzip
import hashlib
import json
import logging
import os
import re
import shutil
import time
import zlib
from importlib import resources
from pathlib import Path

import yaml

from .download import (CHUNK_SIZE, DEFAULT_BACKOFF, DEFAULT_RETRIES, DEFAULT_TIMEOUT, download, part_path,
                       sha256_file)
from ..errors import DownloadError, GpuspError
from .mirror import MIRROR_ENV, resolve

__all__ = ["MIRROR_ENV", "UnknownDatasetError", "check_file", "fetch", "get_dataset", "list_datasets",
           "verify"]

log = logging.getLogger(__name__)

KINDS = ("dimacs9", "snap")
FORMATS = ("gr", "co", "snap")
WEIGHTS = ("real", "none")
REQUIRED_KEYS = ("name", "kind", "format", "url", "filename", "nodes", "edges", "directed", "symmetric",
                 "weights", "weight_meaning", "index_base", "coordinates", "sha256", "sha256_alternatives",
                 "sha256_content", "sha256_content_normalized", "description", "homepage")
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEADER_LINES = 64  # how far into a file the size header is looked for
PIN_SUFFIX = ".pin.json"  # beside a downloaded dataset without a registered hash: its size and sha256


class UnknownDatasetError(GpuspError, LookupError):
    """No dataset of that name in the registry (the message lists the known names)."""


# --------------------------------------------------------------------------------------------- registry

def parse_registry(text: str, source: str = "datasets.yaml") -> dict[str, dict]:
    """Parse and validate registry YAML text; return ``{name: entry}`` in file order."""
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or not isinstance(data.get("datasets"), list):
        raise GpuspError(f"{source}: expected a mapping with a 'datasets' list")
    out: dict[str, dict] = {}
    filenames: dict[str, str] = {}
    for i, entry in enumerate(data["datasets"]):
        where = f"{source}: datasets[{i}]"
        if not isinstance(entry, dict):
            raise GpuspError(f"{where}: not a mapping")
        missing = [k for k in REQUIRED_KEYS if k not in entry]
        if missing:
            raise GpuspError(f"{where} ({entry.get('name')}): missing keys {missing}")
        name = entry["name"]
        if not isinstance(name, str) or not _SAFE.match(name) or ".." in name:
            raise GpuspError(f"{where}: unsafe name {name!r} (letters, digits, '.', '_', '-')")
        where = f"{source}: {name}"
        if name in out:
            raise GpuspError(f"{where}: duplicate name")
        fn = entry["filename"]
        if not isinstance(fn, str) or not _SAFE.match(fn) or ".." in fn:
            raise GpuspError(f"{where}: unsafe filename {fn!r}")
        if fn in filenames:
            raise GpuspError(f"{where}: filename {fn} also used by {filenames[fn]}")
        if entry["kind"] not in KINDS or entry["format"] not in FORMATS or entry["weights"] not in WEIGHTS:
            raise GpuspError(f"{where}: kind/format/weights must be in {KINDS}/{FORMATS}/{WEIGHTS}")
        if not str(entry["url"]).startswith(("http://", "https://")):
            raise GpuspError(f"{where}: url must be http(s)")
        for key in ("nodes", "edges"):
            v = entry[key]
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                raise GpuspError(f"{where}: {key} must be a non-negative integer or null")
        alts = entry["sha256_alternatives"]
        if not isinstance(alts, list):
            raise GpuspError(f"{where}: sha256_alternatives must be a list")
        for key, v in [(k, entry[k]) for k in ("sha256", "sha256_content", "sha256_content_normalized")] + \
                [("sha256_alternatives", a) for a in alts]:
            if v is not None and not (isinstance(v, str) and _HEX64.match(v)):
                raise GpuspError(f"{where}: {key} is not a lowercase sha256 hex digest: {v!r}")
        filenames[fn] = name
        out[name] = entry
    for name, entry in out.items():
        co = entry["coordinates"]
        if co is not None and (co not in out or out[co]["format"] != "co"):
            raise GpuspError(f"{source}: {name}: coordinates {co!r} is not a 'co' entry")
    return out


@functools.lru_cache(maxsize=1)
def _registry() -> dict[str, dict]:
    res = resources.files("gpusp").joinpath("data/datasets.yaml")
    return parse_registry(res.read_text(encoding="utf-8"), "gpusp/data/datasets.yaml")


LIST_HEADER = f"{'dataset':<24} {'kind':<7} {'fmt':<5} {'vertices':>13} {'arcs':>13}  {'here':<12} source"


def describe(row: dict, here: str = "") -> str:
    """One registry entry as a line of ``gpusp datasets list`` (under :data:`LIST_HEADER`); ``here``: where a copy
    of its file already is (:func:`where_held`)."""
    n, m = (f"{v:,}" if v is not None else "-" for v in (row["nodes"], row["edges"]))
    return f"{row['name']:<24} {row['kind']:<7} {row['format']:<5} n={n:>11} m={m:>11}  {here or '-':<12} {row['url']}"


def where_held(row: dict, downloads, mirror_folders) -> str:
    """Where a copy of the entry's file already is: 'downloaded' (in ``downloads``), 'mirror' (in one of
    ``mirror_folders``, :func:`gpusp.data.mirror.resolve`'s), both, or ''. Its name alone is looked at, not its
    checksum (a fetch verifies)."""
    places = [label for label, folders in (("downloaded", [Path(downloads)]), ("mirror", mirror_folders))
              if any((Path(f) / row["filename"]).is_file() for f in folders)]
    return "+".join(places)


def list_datasets(kind: str | None = None) -> list[dict]:
    """Every registry entry (a fresh copy, with its ``name``), in registry order; optionally one kind."""
    return [copy.deepcopy(e) for e in _registry().values() if kind is None or e["kind"] == kind]


def get_dataset(name: str) -> dict:
    """The registry entry called ``name`` (a fresh copy); ``UnknownDatasetError`` lists the names."""
    reg = _registry()
    if name not in reg:
        close = difflib.get_close_matches(str(name), reg, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UnknownDatasetError(f"unknown dataset {name!r}{hint}; known datasets: {', '.join(reg)}")
    return copy.deepcopy(reg[name])


def _entry(entry_or_name) -> dict:
    return get_dataset(entry_or_name) if isinstance(entry_or_name, str) else entry_or_name


# ------------------------------------------------------------------------------------------ verification

def _gz_hashes(entry: dict) -> list[str]:
    return [h for h in [entry.get("sha256"), *(entry.get("sha256_alternatives") or [])] if h]


def _content_hashes(path) -> tuple[str, str]:
    """sha256 of the decompressed text, and of it with CRLF -> LF and a final newline ensured."""
    raw, norm = hashlib.sha256(), hashlib.sha256()
    pending_cr = False
    last = b""
    with gzip.open(path, "rb") as fh:
        while chunk := fh.read(CHUNK_SIZE):
            raw.update(chunk)
            if pending_cr:
                chunk = b"\r" + chunk
                pending_cr = False
            if chunk.endswith(b"\r"):  # may pair with a '\n' starting the next chunk
                chunk = chunk[:-1]
                pending_cr = True
            chunk = chunk.replace(b"\r\n", b"\n")
            if chunk:
                norm.update(chunk)
                last = chunk[-1:]
    if pending_cr:
        norm.update(b"\r")
        last = b"\r"
    if last and last != b"\n":
        norm.update(b"\n")
    return raw.hexdigest(), norm.hexdigest()


def _header_problem(path, entry: dict) -> str | None:
    """Compare a size header near the top of the file (if any) with the registry's sizes."""
    with gzip.open(path, "rt", encoding="utf-8", errors="replace", newline=None) as fh:
        for _, line in zip(range(_HEADER_LINES), fh):
            parts = line.split()
            found = None
            if entry["format"] == "gr" and parts[:2] == ["p", "sp"] and len(parts) >= 4:
                found = {"nodes": parts[2], "edges": parts[3]}
            elif entry["format"] == "co" and parts[:4] == ["p", "aux", "sp", "co"] and len(parts) >= 5:
                found = {"nodes": parts[4]}
            elif entry["format"] == "snap":
                m = re.match(r"#\s*Nodes:\s*(\d+)\s+Edges:\s*(\d+)", line)
                if m:
                    found = {"nodes": m.group(1), "edges": m.group(2)}
            if found is not None:
                for key, value in found.items():
                    if entry.get(key) is not None and str(entry[key]) != value:
                        return f"header says {key}={value}, registry says {entry[key]}"
                return None
    return None


def _content_problem(path, entry: dict) -> str | None:
    """None when the decompressed content matches the entry (or, with no hash, looks complete)."""
    want = [entry.get("sha256_content"), entry.get("sha256_content_normalized")]
    try:
        if any(want):
            raw, norm = _content_hashes(path)
            if raw == entry.get("sha256_content") or norm == entry.get("sha256_content_normalized"):
                return None
            return (f"content sha256 {raw} (normalised {norm}) does not match "
                    f"{entry.get('sha256_content')} (normalised {entry.get('sha256_content_normalized')})")
        if _gz_hashes(entry):
            return "no content hash to compare with"
        with gzip.open(path, "rb") as fh:  # read to the end: gzip checks its CRC and length
            while fh.read(CHUNK_SIZE):
                pass
        return _header_problem(path, entry)
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        return f"not a complete gzip file ({type(exc).__name__}: {exc})"


def pin_path(path) -> Path:
    """Where the size and sha256 of a dataset without a registered hash are recorded at its first download."""
    path = Path(path)
    return path.with_name(path.name + PIN_SUFFIX)


def write_pin(path, entry: dict) -> dict:
    """Record ``path``'s size and sha256 beside it (atomically): later copies of the dataset must match them."""
    from ..atomic import atomic_open

    pin = {"name": entry["name"], "url": entry["url"], "size": Path(path).stat().st_size, "sha256": sha256_file(path)}
    with atomic_open(pin_path(path)) as fh:
        json.dump(pin, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return pin


def _pin_problem(path: Path, entry: dict) -> str | None:
    """Why ``path`` is not the copy whose size and sha256 were recorded at the first download (None: it is, or none
    was recorded)."""
    pin_file = pin_path(path)
    if _gz_hashes(entry) or not pin_file.is_file():
        return None
    try:
        pin = json.loads(pin_file.read_text())
        size, digest = int(pin["size"]), str(pin["sha256"])
    except (ValueError, KeyError, TypeError) as exc:
        return f"{pin_file} is not a readable record of the first download ({exc})"
    actual = path.stat().st_size
    if actual != size:
        return f"{actual} bytes, but its first download recorded {size} ({pin_file})"
    if sha256_file(path) != digest:
        return f"sha256 differs from the one its first download recorded ({pin_file})"
    return None


def check_file(path, entry) -> str | None:
    """None when ``path`` is the dataset ``entry`` (a dict or a name), else the reason it is not. A dataset without a
    registered hash must also match the size and sha256 recorded at its first download, where there is a record."""
    entry = _entry(entry)
    path = Path(path)
    if not path.is_file():
        return f"{path}: no such file"
    pinned = _pin_problem(path, entry)
    if pinned:
        return f"{path}: {pinned}"
    known = _gz_hashes(entry)
    actual = sha256_file(path) if known else None
    if actual in known:
        return None
    problem = _content_problem(path, entry)
    if problem is None:
        return None
    if known:
        problem = f".gz sha256 {actual} is not {' / '.join(known)}; {problem}"
    return f"{path}: {problem}"


def verify(path, entry) -> bool:
    """True when the file at ``path`` is the dataset ``entry`` (a registry dict or a name)."""
    return check_file(path, entry) is None


# -------------------------------------------------------------------------------------------- fetching

class _Rejected(Exception):
    pass


def _from_mirror(entry: dict, dest: Path, folders: list[Path]) -> bool:
    for folder in folders:
        candidate = folder / entry["filename"]
        if not candidate.is_file():
            continue
        tmp = part_path(dest)  # a plain new file, so it gets the usual permissions (umask)
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(candidate, tmp)
            problem = check_file(tmp, entry)
            if problem is not None:
                raise _Rejected(problem)
            os.replace(tmp, dest)
        except _Rejected as exc:
            log.warning("mirror file %s rejected: it does not verify (%s)", candidate, exc)
            continue
        except OSError as exc:
            raise DownloadError(f"{entry['name']}: cannot copy {candidate} to {dest}: {exc}") from exc
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        log.info("%s: copied from mirror %s", entry["name"], candidate)
        return True
    return False


def fetch(name: str, dest_dir, *, mirror=None, session=None, retries: int = DEFAULT_RETRIES,
          timeout=DEFAULT_TIMEOUT, backoff: float = DEFAULT_BACKOFF, sleep=time.sleep, progress: bool = True,
          offline: bool = False) -> Path:
    """Make ``dest_dir/<filename>`` a verified copy of dataset ``name`` and return its path.

    Order: an existing verified file there (kept; one that does not verify is deleted), the offline
    mirror (``mirror``: folder path or list of them; ``None``: ``$GPUSP_MIRROR``, else the site file's; ``False``
    none: :func:`gpusp.data.mirror.resolve`), then the official URL (unless ``offline``). Raises
    ``UnknownDatasetError`` or ``DownloadError``, whose one line names the mirror options when nothing gave the file.
    """
    entry = get_dataset(name)
    dest = Path(dest_dir) / entry["filename"]
    if dest.exists():
        problem = check_file(dest, entry)
        if problem is None:
            return dest
        log.warning("%s exists but does not verify (%s); removing it and fetching again", dest, problem)
        try:
            dest.unlink()
        except OSError as exc:
            raise DownloadError(f"{dest} does not verify and cannot be removed: {exc}") from exc
    found = resolve(mirror)
    if _from_mirror(entry, dest, found.folders):
        return dest
    if offline:
        raise DownloadError(f"{name}: no verified {entry['filename']} in a mirror, and offline is set; "
                            f"{found.options()}")
    known = _gz_hashes(entry)
    try:
        got = download(entry["url"], dest, sha256=known[0] if known else None, sha256_alternatives=known[1:],
                       accept=lambda p: _content_problem(p, entry) is None, timeout=timeout, retries=retries,
                       backoff=backoff, sleep=sleep, session=session, progress=progress)
    except DownloadError as exc:
        raise DownloadError(f"{name}: no verified {entry['filename']} in a mirror, and the download failed: {exc}; "
                            f"{found.options()}") from exc
    changed = _pin_problem(got, entry)
    if changed:
        got.unlink()
        raise DownloadError(f"{name}: the copy downloaded from {entry['url']} is not the one first downloaded here: "
                            f"{changed}; remove {pin_path(got)} to accept the new one")
    if not known and not pin_path(got).exists():
        pin = write_pin(got, entry)
        log.info("%s: no hash registered; recorded its size (%d bytes) and sha256 %s in %s", name, pin["size"],
                 pin["sha256"], pin_path(got))
    return got
