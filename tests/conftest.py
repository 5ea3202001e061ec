"""Test setup: GPU kernels run in Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM is set otherwise.

The variable must be set before Numba is imported. On a GPU machine, run the suite with
``NUMBA_ENABLE_CUDASIM=0`` to test the real kernels.
"""

import fcntl
import os
import sys
import tempfile
import threading
from pathlib import Path

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
sys.path.insert(0, str(Path(__file__).parent))
# Under pytest-xdist (make test) each worker process, and the workflow runs it starts, keep their own Numba cache:
# two processes that compile different signatures of one cached function at once can leave the cache's index
# naming the other's data. A cache the user chose is left alone.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER and "NUMBA_CACHE_DIR" not in os.environ:
    os.environ["NUMBA_CACHE_DIR"] = str(Path(tempfile.gettempdir()) / f"gpusp-numba-{_WORKER}")

import numba  # noqa: E402  (after the environment variable on purpose)
import pytest  # noqa: E402


def _patch_simulator_barriers():
    """Barriers by a condition variable instead of the simulator's polling (private API, numba-cuda 0.30.x).

    The simulator's block manager loops over its threads, holding the GIL, until every live thread waits at the
    barrier; on a loaded 2-core machine a barrier then costs milliseconds and the suite's time follows the host's
    timer and scheduler. Here a thread that reaches a barrier counts itself, and the last of the block's live
    threads releases the others: the same rule (a barrier opens when every live thread waits at it), one wake-up
    per barrier. A thread's first exception aborts the block and is raised, as the simulator does."""
    import numpy as np
    from numba.cuda.simulator import kernel

    class Block:
        """One thread block's barrier state, guarded by ``cond``."""

        def __init__(self, threads: int):
            self.cond = threading.Condition()
            self.live = threads
            self.waiting = 0
            self.generation = 0
            self.failed = None  # the first thread that raised, or the block when its launch was given up

        def open_when_all_wait(self):
            """With ``cond`` held: release the waiting threads once they are all the live ones."""
            if self.waiting and self.waiting == self.live:
                self.waiting = 0
                self.generation += 1
                self.cond.notify_all()

    def syncthreads(self):
        block = self._manager.block
        with block.cond:
            if block.failed is not None:
                raise RuntimeError("abort flag set on syncthreads call")
            generation = block.generation
            block.waiting += 1
            block.open_when_all_wait()
            while block.generation == generation and block.failed is None:
                block.cond.wait()
            if block.failed is not None:
                raise RuntimeError("abort flag set on syncthreads clear")

    thread_body = kernel.BlockThread.run  # runs the kernel, keeps an exception in self.exception

    def thread_run(self):
        try:
            thread_body(self)
        finally:
            block = self._manager.block
            with block.cond:
                block.live -= 1
                if self.exception and block.failed is None:
                    block.failed = self
                block.open_when_all_wait()
                block.cond.notify_all()  # the manager waits for the last thread, or the first failure

    def manager_run(self, grid_point, *args):
        self.block = block = Block(int(np.prod(self._block_dim)))
        threads = [kernel.BlockThread(lambda: self._f(*args), self, grid_point, point, self._debug)
                   for point in np.ndindex(*self._block_dim)]
        for t in threads:
            t.start()
        with block.cond:
            try:
                while block.live and block.failed is None:
                    block.cond.wait()
            except BaseException:  # a test timed out: the threads at a barrier end instead of waiting forever
                block.failed = block
                block.cond.notify_all()
                raise
        if block.failed is not None:
            raise block.failed.exception[0].with_traceback(block.failed.exception[1])

    kernel.BlockThread.syncthreads = syncthreads
    kernel.BlockThread.run = thread_run
    kernel.BlockManager.run = manager_run


if numba.config.ENABLE_CUDASIM:
    _patch_simulator_barriers()

REPO = Path(__file__).resolve().parents[1]


# --- the offline mirror: tests that need it run against it, else download, else skip with the reason -----------
def _mirror() -> Path:
    """The first folder of $GPUSP_MIRROR (.ci/run sets it), else ../shared/data beside the checkout."""
    first = next((p for p in os.environ.get("GPUSP_MIRROR", "").split(os.pathsep) if p), None)
    return Path(first).expanduser() if first else REPO.parent / "shared" / "data"


MIRROR = _mirror()
# Set (to anything but 0) where the mirror must be there, as in CI: a test that needs a file the mirror lacks then
# fails instead of skipping, and nothing is downloaded, so a missing mirror cannot turn CI green by skipping.
REQUIRE_MIRROR = os.environ.get("GPUSP_REQUIRE_MIRROR", "0") not in ("", "0")
_UNAVAILABLE: dict[str, str] = {}  # name -> why neither the mirror nor the network gave it (tried once per session)
_MIRROR_KEY = pytest.StashKey[Path]()


def fallback_folder() -> Path:
    """Where datasets and peers the mirror lacks are downloaded: kept across runs ($GPUSP_CACHE, else ~/.cache/gpusp),
    so a machine without the mirror downloads each file once (a kept file is verified again before use)."""
    from gpusp.solvers.peers import build as peers

    return peers.cache_dir() / "test-mirror"


def _where(name: str) -> tuple[str, str | None]:
    """(path in a mirror folder, kind) of a marker argument: a dataset or peer name, else a plain mirror file."""
    from gpusp.data import datasets
    from gpusp.solvers.peers import build as peers

    if name in peers.names():
        return f"peers/{peers.get_peer(name)['filename']}", "peer"
    try:
        return datasets.get_dataset(name)["filename"], "dataset"
    except datasets.UnknownDatasetError:
        return name, None


def _fetch(name: str, kind: str, folder: Path) -> None:
    """gpusp's own fetch into ``folder``: a verified copy kept there, the mirror, then one quick try at the URL (no
    retries: an offline machine fails at once); checksums verified."""
    from gpusp.data import datasets
    from gpusp.solvers.peers import build as peers

    mirror = str(MIRROR) if MIRROR.is_dir() else False
    if kind == "peer":
        peers.fetch_archive(name, folder / "peers", mirror=mirror, retries=0, timeout=(5, 60))
    else:
        datasets.fetch(name, folder, mirror=mirror, retries=0, timeout=(5, 60), progress=False)


def failing_tool(folder: Path, name: str, message: str) -> str:
    """An executable ``folder/name`` that prints ``message`` to stderr and exits 1: a compiler that cannot build what
    a peer needs."""
    script = folder / name
    script.write_text(f"#!/bin/sh\necho '{message}' >&2\nexit 1\n")
    script.chmod(0o755)
    return str(script)


def mirror_with(*names: str) -> Path:
    """A mirror folder holding every one of ``names`` (datasets, peers by name; other names are files of the mirror).

    The offline mirror when it holds them all; else the download folder (:func:`fallback_folder`), which gets them
    as gpusp fetches (mirror first, then the URL, checksums verified) and links to the mirror's plain files. Skips
    the calling test with the reason when neither the mirror nor the network has one; under GPUSP_REQUIRE_MIRROR
    fails it instead, without downloading.
    """
    names = names or ("MANIFEST.tsv",)
    places = {name: _where(name) for name in names}
    lacking = [name for name, (path, _) in places.items() if not (MIRROR / path).is_file()]
    if not lacking:
        return MIRROR
    if REQUIRE_MIRROR:
        pytest.fail(f"GPUSP_REQUIRE_MIRROR is set and the offline mirror {MIRROR} lacks "
                    + ", ".join(places[n][0] for n in lacking), pytrace=False)
    from gpusp.errors import DownloadError

    folder = fallback_folder()
    folder.mkdir(parents=True, exist_ok=True)
    # one pytest process at a time (pytest-xdist runs several): two downloads into one partial file would mix
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for name, (path, kind) in places.items():
            if name in _UNAVAILABLE:
                continue
            if kind is None and name in lacking:
                _UNAVAILABLE[name] = f"the offline mirror {MIRROR} lacks {path} (only a mirror has it)"
            elif kind is None:
                link = folder / path
                link.parent.mkdir(parents=True, exist_ok=True)
                link.unlink(missing_ok=True)
                link.symlink_to(MIRROR / path)
            else:
                try:
                    _fetch(name, kind, folder)
                except DownloadError as exc:
                    why = str(exc) if len(str(exc)) <= 160 else str(exc)[:160] + "..."
                    _UNAVAILABLE[name] = f"the offline mirror {MIRROR} lacks {path} and downloading it failed ({why})"
    missing = [_UNAVAILABLE[name] for name in names if name in _UNAVAILABLE]
    if missing:
        pytest.skip("; ".join(missing) + " (set GPUSP_MIRROR to a mirror folder)")
    return folder


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_mirror(*names): the test reads these datasets, peers (by name) or "
                            "files of the offline mirror (default MANIFEST.tsv) from the `mirror` fixture's folder; "
                            "downloaded when the mirror lacks them, skipped with the reason when that fails too")


# --- pytest-xdist (make test: -n auto --dist loadfile) ---------------------------------------------------------------
# A test file is one unit of work, so that its module-scoped fixtures (a workflow run, a peer build, a sweep of
# records) are made once, in one worker; the compile gate's kernels are units of their own, so that its ~800 compiles
# spread over the workers. test_report.py reads the workflow run of test_workflow.py (a session's, made by whichever
# needs it first): one unit. Grouping never changes what a test checks, only where it runs.
ONE_UNIT_PER_TEST = {"test_compile_gate.py"}
SAME_UNIT_AS = {"test_report.py": "test_workflow.py"}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` as above (other --dist modes are xdist's own)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FilesAndKernels(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            name = Path(path).name
            if name in ONE_UNIT_PER_TEST:
                return nodeid
            return str(Path(path).with_name(SAME_UNIT_AS[name])) if name in SAME_UNIT_AS else path

    return FilesAndKernels(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before any fixture (so before a test's monkeypatches of the downloader): find or fetch what it needs."""
    marks = list(item.iter_markers("needs_mirror"))
    if marks:
        item.stash[_MIRROR_KEY] = mirror_with(*(name for mark in marks for name in (mark.args or ("MANIFEST.tsv",))))


@pytest.fixture
def mirror(request) -> Path:
    """The folder holding what the test's needs_mirror marks name (the offline mirror whenever it has them)."""
    assert _MIRROR_KEY in request.node.stash, "the `mirror` fixture needs a needs_mirror mark on the test"
    return request.node.stash[_MIRROR_KEY]


def pytest_report_header(config):
    found = (MIRROR / "MANIFEST.tsv").is_file()
    state = "found" if found else "absent: tests that need it download what they read or skip with the reason"
    return f"gpusp offline mirror: {MIRROR} ({state}{', required' if REQUIRE_MIRROR else ''})"
