"""Work spread over the GPUs of one host: one worker process per GPU (a *rank*), each seeing only its own GPU, with
NVLink multicast kept off in everything it starts (:data:`SAFE_ENV`). :class:`Ranks` starts the workers, builds one
object per rank in them and calls its methods on every rank at once (``send`` then ``gather``, so the parent can do
rank 0's share in between). Design and the multi-GPU solvers: docs/multigpu.md.
"""

from __future__ import annotations

import multiprocessing
import os
import traceback

from .errors import SolverError

# NVLink multicast can put a host's shared GPUs out of service: off in NCCL, PyTorch and NVSHMEM for every rank
SAFE_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def keep_multicast_off() -> None:
    """Set :data:`SAFE_ENV` in this process (inherited by what it starts), overriding a contrary setting."""
    os.environ.update(SAFE_ENV)


def gpu_ids() -> list[str]:
    """The GPUs this process may use, as CUDA_VISIBLE_DEVICES names them (its order), else by index; one stand-in
    in the CUDA simulator; none without a GPU."""
    from .device import mode

    if mode() == "sim":
        return ["sim"]
    if mode() == "none":
        return []
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed:
        return [g.strip() for g in listed.split(",") if g.strip()]
    from numba import cuda

    return [str(i) for i in range(len(cuda.gpus))]


def require_gpus(count: int, what: str) -> list[str]:
    """The first ``count`` usable GPUs; a clear error naming what asked when the host has fewer (the simulator
    stands in for any number: its ranks share the CPU)."""
    ids = gpu_ids()
    if ids == ["sim"]:
        return ["sim"] * count
    if len(ids) < count:
        raise SolverError(f"{what} takes {count} GPUs; this host offers {len(ids)} "
                          f"({', '.join(ids) or 'none'}): ask the scheduler for {count} (resources gpu={count})")
    return ids[:count]


def gpu_names(ids) -> list[str | None]:
    """The model of each GPU in ``ids`` (as CUDA_VISIBLE_DEVICES names them, :func:`gpu_ids`):
    'simulated' in the CUDA simulator, None for one this process cannot see or without a GPU."""
    from .device import mode

    ids = [str(i) for i in ids]
    if mode() == "sim":
        return ["simulated"] * len(ids)
    if mode() != "gpu":
        return [None] * len(ids)
    from numba import cuda

    visible, devices = gpu_ids(), cuda.list_devices()  # the i-th visible GPU is Numba's device i
    names = []
    for gpu in ids:
        index = visible.index(gpu) if gpu in visible else None
        name = devices[index].name if index is not None and index < len(devices) else None
        names.append(name.decode() if isinstance(name, bytes) else name)
    return names


def _serve(rank: int, size: int, gpu: str, conn, factory, args) -> None:
    """A worker's life: see only GPU ``gpu``, build ``factory(rank, size, *args)`` and answer method calls until
    told to stop (a ``None`` name); an exception goes back as its traceback."""
    keep_multicast_off()
    if gpu != "sim":
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu  # before this process first touches CUDA
    try:
        obj = factory(rank, size, *args)
        conn.send(("ok", None))
    except BaseException:  # noqa: BLE001 - reported to the parent, which raises it
        conn.send(("error", traceback.format_exc()))
        return
    while True:
        name, a, kw = conn.recv()
        if name is None:
            break
        try:
            conn.send(("ok", getattr(obj, name)(*a, **kw)))
        except BaseException:  # noqa: BLE001
            conn.send(("error", traceback.format_exc()))


class Ranks:
    """Workers for ranks ``first`` .. ``size - 1`` (``first=1``: the parent plays rank 0 on the first GPU), each
    building ``factory(rank, size, *args)``; ``factory`` and ``args`` must pickle (spawned processes)."""

    def __init__(self, size: int, factory, *args, first: int = 0, what: str = "this run"):
        keep_multicast_off()
        self.gpus = require_gpus(size, what)
        self.size = size
        ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no CUDA state inherited
        self.conns, self.procs = [], []
        for rank in range(first, size):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(rank, size, self.gpus[rank], child, factory, args), daemon=True)
            proc.start()
            child.close()
            self.conns.append((rank, parent))
            self.procs.append(proc)
        try:
            self._collect("start")
        except SolverError:
            self.close()
            raise

    def send(self, name: str, *args, **kwargs) -> None:
        """Call method ``name`` on every worker's object, not waiting for the answers."""
        for _, conn in self.conns:
            conn.send((name, args, kwargs))

    def gather(self, what: str = "call") -> list:
        """The answers of the last ``send``, in rank order; a worker's exception is raised here with its traceback."""
        return self._collect(what)

    def call(self, name: str, *args, **kwargs) -> list:
        self.send(name, *args, **kwargs)
        return self.gather(name)

    def _collect(self, what: str) -> list:
        out, failed = [], []
        for rank, conn in self.conns:
            try:
                status, value = conn.recv()
            except EOFError:
                status, value = "error", "the worker died (no answer)"
            if status == "error":
                failed.append(f"rank {rank}: {value}")
            out.append(value)
        if failed:
            raise SolverError(f"{what} failed on {len(failed)} of {len(self.conns)} ranks:\n" + "\n".join(failed))
        return out

    def close(self) -> None:
        for _, conn in self.conns:
            try:
                conn.send((None, (), {}))
            except (BrokenPipeError, OSError):
                pass
        for proc in self.procs:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.kill()
        self.conns, self.procs = [], []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
