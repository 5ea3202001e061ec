"""Peer baselines built from pinned, verified source archives: the list (``peers.yaml`` beside this module), and
:func:`build` (fetch the archive like a dataset, extract it safely, probe the tools, make the targets and compile
gpusp's own driver against the archive, into a build folder that is complete or absent, with its ``BUILD.json``) and
:func:`locate` (the build a solve uses: ``$GPUSP_<NAME>``, else the cache folder, built on first use). Design:
docs/peers.md.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import json
import logging
import os
import shlex
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
from importlib import resources
from pathlib import Path, PurePosixPath

import yaml

from ...atomic import atomic_open
from . import cudabuild
from .logged import failure, run_logged
from ...data.download import download, part_path, sha256_file
from ...data.mirror import resolve as resolve_mirror
from ...errors import BuildError, DownloadError, GpuspError, SolverUnavailable
from ...stopping import StopOnSignals

log = logging.getLogger(__name__)

PINNED = "peers.yaml"  # beside this module: every peer's pinned archive and how it is built
CACHE_ENV = "GPUSP_CACHE"
BUILD_INFO = "BUILD.json"
DEFAULT_CXX = "g++"
CXX_FLAGS = ("-std=c++11", "-O3", "-Wall", "-fopenmp")  # the archive's Makefile: its CXX_FLAGS and PAR_FLAG
PROBE = "#include <omp.h>\nint main() { return omp_get_max_threads() > 0 ? 0 : 1; }\n"
REQUIRED_KEYS = ("name", "commit", "url", "filename", "prefix", "sha256", "sha256_content", "targets")


# --------------------------------------------------------------------------------------------- registry

@functools.lru_cache(maxsize=1)
def _registry() -> dict[str, dict]:
    text = resources.files(__package__).joinpath(PINNED).read_text(encoding="utf-8")
    entries = (yaml.safe_load(text) or {}).get("peers") or []
    out = {}
    for i, entry in enumerate(entries):
        missing = [k for k in REQUIRED_KEYS if k not in entry]
        if missing:
            raise GpuspError(f"gpusp/solvers/peers/{PINNED}: peers[{i}] ({entry.get('name')}): missing keys {missing}")
        out[entry["name"]] = entry
    return out


def names() -> list[str]:
    """Names of the pinned peers, in file order."""
    return list(_registry())


def get_peer(name: str) -> dict:
    """The pinned entry of peer ``name`` (a fresh copy)."""
    reg = _registry()
    if name not in reg:
        raise GpuspError(f"unknown peer {name!r}; known peers: {', '.join(reg)}")
    return dict(reg[name])


def env_var(name: str) -> str:
    """The environment variable that names a build folder of peer ``name`` (``GPUSP_GAPBS``)."""
    return f"GPUSP_{name.upper()}"


def folder_name(name: str) -> str:
    """Name of a build folder of the pinned version: ``gapbs-<commit>``."""
    return f"{name}-{get_peer(name)['commit']}"


def cache_dir() -> Path:
    """``$GPUSP_CACHE``, else ``$XDG_CACHE_HOME/gpusp``, else ``~/.cache/gpusp``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpusp"


# ---------------------------------------------------------------------------------------------- fetch

def _archive_problem(path: Path, entry: dict) -> str | None:
    """None when ``path`` is the pinned archive (its sha256, or that of its decompressed tar)."""
    import gzip
    import hashlib

    if sha256_file(path) == entry["sha256"]:
        return None
    h = hashlib.sha256()
    try:
        with gzip.open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    except (OSError, EOFError) as exc:
        return f"{path}: not a complete gzip file ({exc})"
    if h.hexdigest() == entry["sha256_content"]:
        return None
    return (f"{path}: sha256 is not {entry['sha256']} and its tar content sha256 {h.hexdigest()} is not "
            f"{entry['sha256_content']}")


def _copy_from_mirror(entry: dict, dest: Path, folders) -> bool:
    """Copy a verifying archive from a mirror folder (``peers/`` below it, or its top) onto ``dest``."""
    for folder in folders:
        for candidate in (folder / "peers" / entry["filename"], folder / entry["filename"]):
            if not candidate.is_file():
                continue
            tmp = part_path(dest)
            try:
                shutil.copyfile(candidate, tmp)
                problem = _archive_problem(tmp, entry)
                if problem is None:
                    os.replace(tmp, dest)
                    log.info("%s: copied from mirror %s", entry["name"], candidate)
                    return True
                log.warning("mirror file %s rejected: %s", candidate, problem)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
    return False


def fetch_archive(name: str, dest_dir, *, mirror=None, offline: bool = False, progress: bool = False,
                  **download_options) -> Path:
    """Make ``dest_dir/<filename>`` a verified copy of peer ``name``'s pinned archive; return its path.

    Order, as for datasets: a verifying file already there, the mirror, then the URL (unless
    ``offline``). Raises DownloadError naming the file and the hashes when nothing verifies.
    """
    entry = get_peer(name)
    dest = Path(dest_dir) / entry["filename"]
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        problem = _archive_problem(dest, entry)
        if problem is None:
            return dest
        log.warning("%s; removing it and fetching again", problem)
        dest.unlink()
    found = resolve_mirror(mirror)
    if _copy_from_mirror(entry, dest, found.folders):
        return dest
    if offline:
        raise DownloadError(f"{name}: no verified {entry['filename']} in a mirror, and offline is set; "
                            f"{found.options()}")
    try:
        return download(entry["url"], dest, sha256=entry["sha256"],
                        accept=lambda p: _archive_problem(Path(p), entry) is None, progress=progress,
                        **download_options)
    except DownloadError as exc:
        raise DownloadError(f"{name}: no verified {entry['filename']} in a mirror, and the download failed: "
                            f"{exc}; {found.options()}") from exc


# -------------------------------------------------------------------------------------------- extract

def _checked_members(tar: tarfile.TarFile, prefix: str, archive) -> list[tarfile.TarInfo]:
    """Every member, after refusing links, devices, absolute paths, '..' and names outside ``prefix``."""
    members = []
    for member in tar.getmembers():
        path = PurePosixPath(member.name)
        if path.is_absolute() or ".." in path.parts or not path.parts or path.parts[0] != prefix:
            raise BuildError(f"{archive}: unsafe member {member.name!r} (outside {prefix}/)")
        if not (member.isfile() or member.isdir()):
            raise BuildError(f"{archive}: member {member.name!r} is not a regular file or folder")
        members.append(member)
    return members


def extract(archive, into, prefix: str) -> Path:
    """Extract ``archive`` (.tar.gz) into the folder ``into`` safely; return ``into/prefix``."""
    into = Path(into)
    with tarfile.open(archive, "r:gz") as tar:
        members = _checked_members(tar, prefix, archive)
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, members=members, filter="data")
        else:  # Python < 3.11.4: the checks above already refuse what the filter would
            tar.extractall(into, members=members)
    return into / prefix


# -------------------------------------------------------------------------------------------- compile

def compiler(cxx: str | None = None) -> str:
    """The C++ compiler command: ``cxx``, else ``$CXX``, else g++."""
    return cxx or os.environ.get("CXX") or DEFAULT_CXX


def probe(cxx: str) -> str | None:
    """None when ``cxx`` builds an OpenMP program with -fopenmp and make exists, else the reason."""
    if shutil.which("make") is None:
        return "make not found on PATH (needed to build GAPBS)"
    argv = shlex.split(cxx)
    if not argv or shutil.which(argv[0]) is None:
        return f"no C++ compiler: {cxx!r} not found on PATH (set CXX to one with OpenMP)"
    with tempfile.TemporaryDirectory(prefix="gpusp-omp-probe-") as workdir:
        src = Path(workdir) / "omp_probe.cc"
        src.write_text(PROBE)
        try:
            proc = subprocess.run([*argv, "-fopenmp", str(src), "-o", str(src.with_suffix(""))],
                                  capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"C++ compiler {cxx!r} could not be run: {exc}"
    if proc.returncode != 0:
        tail = (proc.stderr.strip() or proc.stdout.strip() or f"exit {proc.returncode}").splitlines()[-1]
        return f"C++ compiler {cxx!r} cannot build an OpenMP program with -fopenmp: {tail}"
    return None


def compiler_version(cxx: str) -> str:
    """First line of ``cxx --version`` (empty if it says nothing)."""
    try:
        out = subprocess.run([*shlex.split(cxx), "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (out.strip().splitlines() or [""])[0]


def _make(tree: Path, cxx: str, targets, log_path: Path) -> None:
    """Run the archive's Makefile for ``targets``; BuildError with the log's tail when it fails."""
    env = {k: v for k, v in os.environ.items() if k not in ("SERIAL", "CXX_FLAGS", "MAKEFLAGS")}
    cmd = ["make", "-C", str(tree), "-j2", f"CXX={cxx}", *targets]
    with open(log_path, "w") as fh:
        fh.write("$ " + shlex.join(cmd) + "\n")
        fh.flush()
        try:
            code = run_logged(cmd, fh, env=env)
        except subprocess.TimeoutExpired:
            raise BuildError(f"make did not finish {', '.join(targets)} in 1800 s (log {log_path})") from None
    if code != 0:
        raise BuildError(f"`{shlex.join(cmd)}` exited {code} (log {log_path}): {failure(log_path, 5)}")


def _driver_target(entry: dict) -> str | None:
    """The target that is gpusp's own driver of a make peer (its file's stem: ``gapbs_sssp_many``), or None."""
    return Path(entry["driver"]).stem if entry.get("driver") else None


def _compile_cxx_driver(tree: Path, staging: Path, entry: dict, cxx: str, log_path: Path) -> dict:
    """Compile gpusp's C++ driver of a make peer (its source copied beside the binary) against the extracted archive
    ``tree`` (its ``src/`` headers and kernels) with the archive's own flags; what BUILD.json records of it.
    Raises BuildError with the log's tail when the compiler fails."""
    target = _driver_target(entry)
    source = staging / entry["driver"]
    source.write_bytes(cudabuild.driver_text(entry["driver"]))
    cmd = [*shlex.split(cxx), *CXX_FLAGS, "-I", str(tree / "src"), "-o", str(staging / target), str(source)]
    with open(log_path, "a") as fh:
        fh.write("$ " + shlex.join(cmd) + "\n")
        fh.flush()
        t0 = time.perf_counter()
        try:
            code = run_logged(cmd, fh)
        except subprocess.TimeoutExpired:
            raise BuildError(f"{cxx} did not finish the {target} driver in 1800 s (log {log_path})") from None
        compile_s = time.perf_counter() - t0
    if code != 0:
        raise BuildError(f"`{shlex.join(cmd)}` exited {code} (log {log_path}): {failure(log_path, 8)}")
    return {"driver": entry["driver"], "driver_sha256": cudabuild.driver_sha256(entry["driver"]),
            "driver_flags": shlex.join(CXX_FLAGS), "compile_s": round(compile_s, 2), "binaries": {target: target}}


# ---------------------------------------------------------------------------------------------- build

def read_build(folder) -> dict | None:
    """The ``BUILD.json`` of a build folder, or None when there is none."""
    path = Path(folder) / BUILD_INFO
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except ValueError as exc:
        raise GpuspError(f"{path}: not valid JSON ({exc})") from None


def _write_info(folder: Path, info: dict) -> None:
    with atomic_open(folder / BUILD_INFO) as fh:
        json.dump(info, fh, indent=1, sort_keys=True)
        fh.write("\n")


def _builder(entry: dict) -> str:
    """How a peer is built: ``make`` (the archive's Makefile, the default; then gpusp's C++ driver, where the entry
    names one, compiled against the archive) or ``nvcc`` (gpusp's CUDA driver alone)."""
    return entry.get("builder", "make")


def _tools(entry: dict, *, cxx=None, nvcc=None, arch=None, device_fix: bool = True) -> dict:
    """What builds ``entry``, resolved: the C++ compiler for make, else nvcc, the architecture and the fix."""
    if _builder(entry) == "nvcc":
        return {"nvcc": cudabuild.nvcc_command(nvcc), "arch": cudabuild.arch_of(arch), "device_fix": bool(device_fix)}
    if not device_fix:
        raise GpuspError(f"{entry['name']} has no device-pass fix to leave out (that is Gunrock's driver)")
    return {"cxx": compiler(cxx)}


def _identity(entry: dict) -> dict:
    """What a build must have been built from to be used: the pinned commit and, for a driver, its source."""
    if entry.get("driver"):
        return {"commit": entry["commit"], "driver_sha256": cudabuild.driver_sha256(entry["driver"])}
    return {"commit": entry["commit"]}


def source_key(name: str) -> str:
    """One line naming what a build of peer ``name`` is made from (the pinned commit, and gpusp's driver where it
    has one): the workflow's build rules rebuild when it changes."""
    return " ".join(f"{key}={value}" for key, value in _identity(get_peer(name)).items())


def _wanted(entry: dict, tools: dict) -> dict:
    """What a build must match to be kept by :func:`build`: its identity and, for a driver, the architecture and
    the fix asked for."""
    extra = {k: tools[k] for k in ("arch", "device_fix") if k in tools}
    return {**_identity(entry), **extra}


def _base_info(entry: dict, tools: dict) -> dict:
    return {"peer": entry["name"], "commit": entry["commit"], "url": entry["url"], "archive_sha256": entry["sha256"],
            **tools, **_identity(entry), "built": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}


def _unavailable(entry: dict, tools: dict) -> str | None:
    """Why ``entry`` cannot be built with ``tools`` here (a compiler, make, nvcc or the architecture missing), or
    None."""
    nvcc = _builder(entry) == "nvcc"
    reason = cudabuild.probe(tools["nvcc"], tools["arch"]) if nvcc else probe(tools["cxx"])
    return f"{entry['name']} unavailable: {reason}" if reason else None


def _keep_log(message: str, staging: Path, dest: Path) -> str:
    """``message`` with the staging folder's build log (removed with the folder) moved beside ``dest`` and named."""
    log = staging / "build.log"
    if not log.is_file():
        return message
    kept = dest.parent / f"{dest.name}.failed-build.log"
    shutil.copyfile(log, kept)
    return message.replace(str(log), str(kept))


def _stage(entry: dict, staging: Path, tools: dict, archive: Path) -> dict:
    """Fill ``staging`` with a build of ``entry`` from ``archive`` (the tools probed already); return BUILD.json."""
    nvcc = _builder(entry) == "nvcc"
    tree = extract(archive, staging, entry["prefix"])
    if nvcc:
        return {**_base_info(entry, tools), "ok": True,
                **cudabuild.compile_driver(tree, staging, entry, nvcc=tools["nvcc"], arch=tools["arch"],
                                           device_fix=tools["device_fix"])}
    driver = _driver_target(entry)
    made = [target for target in entry["targets"] if target != driver]
    _make(tree, tools["cxx"], made, staging / "build.log")
    binaries = {}
    for target in made:
        os.replace(tree / target, staging / target)
        binaries[target] = target
    compiled = _compile_cxx_driver(tree, staging, entry, tools["cxx"], staging / "build.log") if driver else {}
    binaries.update(compiled.pop("binaries", {}))
    return {**_base_info(entry, tools), "ok": True, "cxx_version": compiler_version(tools["cxx"]),
            "cxx_flags": f"{shlex.join(CXX_FLAGS)} (the archive's Makefile)", "binaries": binaries,
            "sources": entry["prefix"], **compiled}


def _copy_build(source: Path, dest: Path, wanted: dict) -> Path:
    """A copy of the complete build ``source`` at ``dest``, put in place as a build is (staged, then renamed)."""
    with _staging(dest, ".copy") as staging:
        shutil.copytree(source, staging, dirs_exist_ok=True, symlinks=True)
        _install(staging, dest, replace=not _complete(dest, wanted))
    return dest


@contextlib.contextmanager
def _staging(dest: Path, suffix: str):
    """A fresh folder beside ``dest`` to fill and rename onto it (:func:`_install`), removed after whatever
    happened."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=suffix, dir=dest.parent))
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _install(staging: Path, dest: Path, replace: bool) -> None:
    """Rename ``staging`` onto ``dest``, what ``dest`` held removed first when ``replace``; if another process won,
    keep its."""
    if replace and dest.exists():
        shutil.rmtree(dest) if any(dest.iterdir()) else dest.rmdir()
    try:
        os.rename(staging, dest)
    except OSError:
        if not _complete(dest):
            raise
        shutil.rmtree(staging, ignore_errors=True)


def _complete(folder: Path, wanted: dict | None = None) -> bool:
    """Whether ``folder`` holds a build (available or not) whose BUILD.json has every value of ``wanted``."""
    info = read_build(folder) if folder.is_dir() else None
    return bool(info) and all(info.get(key) == value for key, value in (wanted or {}).items())


def build(name: str = "gapbs", dest=None, *, cxx: str | None = None, nvcc: str | None = None, arch=None,
          device_fix: bool = True, downloads=None, mirror=None, offline: bool = False, unavailable_ok: bool = False,
          force: bool = False) -> Path:
    """Build peer ``name`` into ``dest`` (default: the cache folder) atomically; return ``dest``.

    ``cxx`` builds a make peer (GAPBS); ``nvcc``, ``arch`` (compute capability x 10) and ``device_fix`` (off only
    to show what Gunrock computes without it) build a driver (Gunrock). An existing complete build of the pinned
    commit (and of the same driver, architecture and fix) is kept unless ``force``; a working one in the cache folder
    made with the same tools is copied to ``dest`` rather than built again, and a build made elsewhere is copied
    there. Raises SolverUnavailable when a tool is missing (with ``unavailable_ok``, writes a ``BUILD.json`` saying
    so instead and returns), BuildError
    when the build fails, DownloadError when the archive cannot be had.
    """
    entry = get_peer(name)
    shared = cache_dir() / "peers" / folder_name(name)
    dest = Path(dest) if dest is not None else shared
    tools = _tools(entry, cxx=cxx, nvcc=nvcc, arch=arch, device_fix=device_fix)
    wanted = _wanted(entry, tools)
    if not force and _complete(dest, wanted):
        return dest
    if not force and dest.resolve() != shared.resolve() and _complete(shared, {**wanted, **tools, "ok": True}):
        # every results folder of the workflow has a build folder: a working build in the cache is copied, not redone
        return _copy_build(shared, dest, wanted)
    reason = _unavailable(entry, tools)  # before the archive: a machine without the tools needs no download
    if reason and not unavailable_ok:
        raise SolverUnavailable(reason)
    archive = None if reason else fetch_archive(name, downloads or cache_dir() / "downloads", mirror=mirror,
                                                offline=offline)
    with _staging(dest, ".build") as staging:
        with StopOnSignals(signal.SIGTERM, signal.SIGHUP):  # a stopped build removes its staging folder
            try:
                info = _stage(entry, staging, tools, archive) if archive else \
                    {**_base_info(entry, tools), "ok": False, "reason": reason}
            except BuildError as exc:
                raise BuildError(_keep_log(str(exc), staging, dest)) from None
        _write_info(staging, info)
        umask = os.umask(0)
        os.umask(umask)
        staging.chmod(0o777 & ~umask)  # mkdtemp makes 0700; give the build folder the usual permissions
        _install(staging, dest, replace=force or not _complete(dest, wanted))
    if info.get("ok") and dest.resolve() != shared.resolve() and not _complete(shared, wanted):
        _copy_build(dest, shared, wanted)  # the next results folder copies it
    return dest


def locate(name: str = "gapbs", *, build_missing: bool = True) -> dict:
    """The BUILD.json of the build to use, with ``folder`` added (absolute).

    ``$GPUSP_<NAME>`` names the folder (it must hold a build; nothing is built there); otherwise the
    cache folder, built on first use (and again when it is of another commit or driver). Raises
    SolverUnavailable when that build says the peer is unavailable (or cannot be built here), GpuspError
    for a folder that is not a build of the pinned commit (or of this version of gpusp's driver).
    """
    entry = get_peer(name)
    var = env_var(name)
    if os.environ.get(var):
        folder = Path(os.environ[var]).expanduser().resolve()
        info = read_build(folder)
        if info is None:
            raise GpuspError(f"{var}={folder}: no {BUILD_INFO} there; build one with "
                             f"`gpusp peers build {name} --dest {folder}`")
    else:
        folder = (cache_dir() / "peers" / folder_name(name)).resolve()
        if build_missing and not _complete(folder, _identity(entry)):
            build(name, folder)
        info = read_build(folder)
        if info is None:
            raise SolverUnavailable(f"{name} is not built in {folder} (run `gpusp peers build {name}`)")
    for key, value in _identity(entry).items():
        if info.get(key) != value:
            what = "commit" if key == "commit" else f"sha256 of gpusp's driver {entry.get('driver')}"
            raise GpuspError(f"{folder / BUILD_INFO}: {what} {info.get(key)}, expected {value} (rebuild with "
                             f"`gpusp peers build {name} --dest {folder} --force`)")
    if not info.get("ok"):
        raise SolverUnavailable(info.get("reason") or f"{name} unavailable (see {folder / BUILD_INFO})")
    return {**info, "folder": str(folder)}


def describe_build(name: str, dest: Path) -> str:
    """One line on a build folder: what was built with which compiler, or why the peer is unavailable."""
    info = read_build(dest)
    if not info.get("ok"):
        return f"{name}: unavailable, recorded in {dest / BUILD_INFO}: {info['reason']}"
    if "nvcc" in info:
        fix = "" if info["device_fix"] else ", WITHOUT the device-pass fix: its distances are wrong"
        return (f"{name}: built {', '.join(info['binaries'])} in {dest} for sm_{info['arch']} "
                f"({info['nvcc_version'] or info['nvcc']}; driver compiled in {info['compile_s']:.1f} s{fix})")
    return f"{name}: built {', '.join(info['binaries'])} in {dest} ({info['cxx_version'] or info['cxx']})"


def binary(info: dict, target: str) -> Path:
    """Path of one built binary of a :func:`locate` result; GpuspError when it is missing."""
    path = Path(info["folder"]) / info["binaries"].get(target, target)
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise GpuspError(f"{path}: missing or not executable (rebuild with `gpusp peers build {info['peer']} --force`)")
    return path
