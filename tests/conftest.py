"""Test setup: GPU kernels run in Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM is set otherwise.

The variable must be set before Numba is imported. On a GPU machine, run the suite with
``NUMBA_ENABLE_CUDASIM=0`` to test the real kernels.
"""

import fcntl
import os
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
sys.path.insert(0, str(Path(__file__).parent))

import numba  # noqa: E402  (after the environment variable on purpose)
import pytest  # noqa: E402


def _patch_simulator_threads():
    """Barriers by a condition variable and simulated threads from a pool (private API, numba-cuda 0.30.x).

    The simulator starts one OS thread per CUDA thread of every block, and its block manager loops over them, holding
    the GIL, until every live thread waits at a barrier. On a loaded 2-core machine both cost milliseconds (starting
    a thread there takes about 1.5 ms), and the suite's time follows the host's scheduler. Here a block's threads come
    from a pool of threads that serve block after block, and a thread that reaches a barrier counts itself: the last
    of the block's live threads releases the others. The rules are the simulator's: a barrier opens when every live
    thread waits at it, a thread's first exception aborts the block and is raised; ``threading.current_thread()``
    answers the simulated thread's indices, as the simulator's kernel API expects."""
    import queue

    import numpy as np
    from numba.cuda.simulator import kernel

    class Block:
        """One thread block's barrier state, guarded by ``cond``."""

        def __init__(self, threads: int):
            self.cond = threading.Condition()
            self.live = threads
            self.waiting = 0
            self.generation = 0
            self.failed = None  # the first (exception, traceback) a thread raised, or the block when given up

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
            self.paused.set()
            block.open_when_all_wait()
            while block.generation == generation and block.failed is None:
                block.cond.wait()
            if block.failed is not None:
                raise RuntimeError("abort flag set on syncthreads clear")

    START_WAIT_S = 0.2
    thread_body = kernel.BlockThread.run  # runs the kernel, keeps an exception in self.exception
    idle: list["PooledThread"] = []  # threads whose last kernel returned, ready for another block
    idle_lock = threading.Lock()

    class PooledThread(kernel.BlockThread):
        """A simulated CUDA thread that runs one block's kernel after another (its indices set for each)."""

        def __init__(self):
            threading.Thread.__init__(self, daemon=True)
            self.jobs = queue.SimpleQueue()
            self.paused = threading.Event()  # set when its kernel waits at a barrier, sleeps or returns
            self.start()

        def serve(self, manager, f, block_point, thread_point):
            self._manager = manager
            self.blockIdx, self.threadIdx = kernel.Dim3(*block_point), kernel.Dim3(*thread_point)
            (x, y, z), (dx, dy, _) = thread_point, manager._block_dim  # the simulator's dimensions are 3-tuples
            self.thread_id = x + dx * (y + dy * z)
            self.exception, self.abort, self.debug = None, False, manager._debug
            self._target, self._args, self._kwargs = f, (), {}
            self.paused.clear()
            self.jobs.put(manager.block)

        def run(self):
            while True:
                block = self.jobs.get()
                thread_body(self)
                with block.cond:
                    block.live -= 1
                    if self.exception and block.failed is None:
                        block.failed = self.exception
                    block.open_when_all_wait()
                    block.cond.notify_all()  # the manager waits for the last thread, or the first failure
                self.paused.set()
                with idle_lock:
                    idle.append(self)  # ready for a later block

    def manager_run(self, grid_point, *args):
        points = list(np.ndindex(*self._block_dim))
        self.block = block = Block(len(points))
        with idle_lock:
            taken = [idle.pop() for _ in range(min(len(points), len(idle)))]
        taken += [PooledThread() for _ in range(len(points) - len(taken))]
        # One thread at a time up to its first barrier, poll (sleep) or return, in thread order, as the simulator's
        # threads start: the answers and counters of a launch do not depend on the host's scheduler. A thread that
        # spins without sleeping is let go after START_WAIT_S.
        run_kernel = lambda: self._f(*args)  # noqa: E731
        for thread, point in zip(taken, points):
            thread.serve(self, run_kernel, grid_point, point)
            thread.paused.wait(START_WAIT_S)
        with block.cond:
            try:
                while block.live and block.failed is None:
                    block.cond.wait()
            except BaseException:  # a test timed out: the threads at a barrier end instead of waiting forever
                block.failed = block
                block.cond.notify_all()
                raise
        if block.failed is not None:
            raise block.failed[0].with_traceback(block.failed[1])

    def sleep(seconds):
        thread = threading.current_thread()
        paused = getattr(thread, "paused", None)
        if paused is not None:
            paused.set()  # a simulated thread that polls (sleeps) lets the next one start
            if thread._manager.block.failed is not None:
                # its launch failed or timed out: a thread polling for a flag the others will never set ends here
                # instead of spinning on, and writing into state the next launch reuses
                raise RuntimeError("abort flag set while polling")
        real_sleep(seconds)

    real_sleep = time.sleep
    time.sleep = sleep

    def barrier_wait(self, timeout=None):
        paused = getattr(threading.current_thread(), "paused", None)
        if paused is not None:
            paused.set()  # a simulated thread at a warp's barrier (the simulated shuffles) lets the next one start
        return real_barrier_wait(self, timeout)

    real_barrier_wait = threading.Barrier.wait
    threading.Barrier.wait = barrier_wait
    kernel.BlockThread.syncthreads = syncthreads
    kernel.BlockManager.run = manager_run


if numba.config.ENABLE_CUDASIM:
    _patch_simulator_threads()

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
# records) are made once, in one worker; the compile gate's kernels are units of their own, so that its ~210 compiles
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
