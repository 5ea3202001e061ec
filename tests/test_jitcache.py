"""Processes that share Numba's cache compile a cached host function once: the others wait, then load it."""

import subprocess
import sys
import textwrap
import time

import pytest

from gpusp import jitcache

MODULE = textwrap.dedent("""
    from numba import njit

    @njit(cache=True)
    def twice(x):
        return 2 * x
""")
CALLER = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import shared
    print("imported", flush=True)
    print(shared.twice(21), shared.twice.stats.cache_hits.total(), shared.twice.stats.cache_misses.total())
""")


def test_the_entry_point_installs_the_lock():
    from numba import njit
    from numba.core.dispatcher import Dispatcher

    assert njit(lambda x: x + 1)(1) == 2  # Numba runs its extensions' entry points before its first compile
    assert getattr(Dispatcher.compile, "gpusp_locked", False), "gpusp's numba_extensions entry point did not run"


@pytest.fixture
def shared(tmp_path, monkeypatch):
    (tmp_path / "shared.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("shared", None)
    import shared

    yield shared
    sys.modules.pop("shared", None)


def test_a_second_process_waits_for_the_compile_and_loads_it(tmp_path, shared):
    path = jitcache.lock_path(shared.twice)
    assert path is not None and path.endswith(".nbi.lock")
    with jitcache.exclusive(path):  # this process compiles; the other must wait for it
        other = subprocess.Popen([sys.executable, "-c", CALLER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
        assert other.stdout.readline() == "imported\n"
        time.sleep(2)  # it now asks for the compile
        assert other.poll() is None, "the second process did not wait for the lock"
        assert shared.twice(4) == 8
        assert shared.twice.stats.cache_misses.total() == 1
    out, _ = other.communicate(timeout=120)
    assert other.returncode == 0
    assert out.split() == ["42", "1", "0"]  # loaded from the cache, not compiled again


def test_a_function_without_cache_has_no_lock():
    from numba import njit

    assert jitcache.lock_path(njit(lambda x: x)) is None
    with jitcache.exclusive(None):
        pass
