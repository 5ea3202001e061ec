"""Numba's on-disk cache of host functions, shared safely by processes: one compiles a function, the others load it.

Numba keeps a cached function's machine code in data files named by an index file (signature -> data file). Two
processes that compile new signatures of one function at once both read the index, can pick the same data-file name,
and leave the index naming the other's code; two that need the same signature both compile it (the PHAST
contraction's parallel functions take minutes on a small machine). Workflow jobs and pytest-xdist workers share one
cache, so here each cached function's load-or-compile runs under an exclusive lock on a file beside its index: the
first process compiles and saves, the others wait and then load what it saved.

Installed through Numba's ``numba_extensions`` entry point (pyproject.toml), which Numba runs before its first
compile, so every process with gpusp installed has it; :func:`install` is idempotent. CUDA kernels
(numba-cuda's own dispatcher) keep Numba's unlocked cache.
"""

from __future__ import annotations

import fcntl
import functools
import os
from contextlib import contextmanager

_HELD: set[str] = set()  # lock files this process holds: a compile that compiles its own function again nests


def lock_path(dispatcher) -> str | None:
    """The lock file of a dispatcher's cache (beside its index), or None when it does not cache."""
    index = getattr(getattr(getattr(dispatcher, "_cache", None), "_cache_file", None), "_index_path", None)
    return None if index is None else f"{index}.lock"


@contextmanager
def exclusive(path: str | None):
    """Hold an exclusive lock on ``path`` (created when missing) across processes; nothing when ``path`` is None,
    already held by this process, or cannot be opened or locked (a cache folder Numba cannot write to either, a
    file system without locks)."""
    fd = _locked_fd(path) if path is not None and path not in _HELD else None
    if fd is None:
        yield
        return
    _HELD.add(path)
    try:
        yield
    finally:
        _HELD.discard(path)
        os.close(fd)  # releases the lock


def _locked_fd(path: str) -> int | None:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        os.close(fd)
        return None
    return fd


def install() -> None:
    """Make Numba's CPU dispatcher load or compile a cached function under its lock file (once a process)."""
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.dispatcher import Dispatcher

    if getattr(Dispatcher.compile, "gpusp_locked", False):
        return
    unlocked = Dispatcher.compile

    # Numba's compiler lock first: one thread of a process compiles at a time, so the file lock is never waited on
    # by two threads of one process (which would deadlock when one of them holds the compiler lock).
    @functools.wraps(unlocked)
    def compile(self, sig):
        with global_compiler_lock, exclusive(lock_path(self)):
            return unlocked(self, sig)

    compile.gpusp_locked = True
    Dispatcher.compile = compile
