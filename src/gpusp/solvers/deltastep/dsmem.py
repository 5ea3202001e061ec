"""Thread-block clusters (Hopper, sm_90) for kernels that the CUDA simulator must also run, and the host side of the
cluster solvers (:class:`ClusterSSSP`).

On a GPU the primitives are inline PTX on ``.shared::cluster`` (distributed shared memory, ``mapa``, the cluster
barrier); in the simulator one block of ``C x per`` threads stands for a cluster of ``C`` ranks and each rank's shared
memory is a row of a global ``(C, words)`` array, so a kernel reads the same on both: ``store = store_of(sim_store)``,
``rank, lt, per = place(store)``, then ``load`` / ``store_word`` / ``atomic_min`` / ``atomic_add`` / ``atomic_or`` /
``exchange`` ``(store, rank, word, ...)`` (``*_own``: the calling block's own word; ``peer``: the rank of a global
block), ``cluster_sync()``, ``cluster_min``, ``total_begin`` / ``total_end``. The contract of each:
docs/solvers/deltastep.md.
"""

from __future__ import annotations

import time

import numba
from numba import cuda

from ...errors import SolverError
from .persistent import PersistentSSSP
from ..common.launch import TARGET, ClusterLaunch

FULL_MASK = 0xFFFFFFFF

if TARGET.simulator:

    @cuda.jit(device=True)
    def store_of(sim_store):
        """The ranks' shared words: a (C, words) global array in the simulator."""
        return sim_store

    @cuda.jit(device=True)
    def place(store):
        """(rank, thread within the rank, threads per rank): a block of C x per threads simulates C ranks."""
        per = cuda.blockDim.x // store.shape[0]
        t = cuda.threadIdx.x
        return t // per, t % per, per

    @cuda.jit(device=True)
    def peer(first, block):
        """The ``rank`` argument that reaches global block ``block`` of the cluster whose first block is ``first``:
        the block itself here, where every simulated block is a row of the store."""
        return block

    @cuda.jit(device=True)
    def load(store, rank, word):
        return store[rank, word]

    @cuda.jit(device=True)
    def load_own(store, rank, word):
        return store[rank, word]

    @cuda.jit(device=True)
    def store_word(store, rank, word, value):
        store[rank, word] = value

    @cuda.jit(device=True)
    def atomic_min(store, rank, word, value):
        return cuda.atomic.min(store, (rank, word), value)  # atomic: the old value says whether this won

    @cuda.jit(device=True)
    def atomic_add(store, rank, word, value):
        return cuda.atomic.add(store, (rank, word), value)  # atomic: a slot of a queue

    @cuda.jit(device=True)
    def exchange(store, rank, word, value):
        return cuda.atomic.exch(store, (rank, word), value)  # atomic: the first to mark a vertex queues it

    @cuda.jit(device=True)
    def atomic_or(store, rank, word, value):
        return cuda.atomic.or_(store, (rank, word), value)  # atomic: the first to set a bit learns it

    @cuda.jit(device=True)
    def store_own(store, rank, word, value):
        store[rank, word] = value

    @cuda.jit(device=True)
    def atomic_add_own(store, rank, word, value):
        return cuda.atomic.add(store, (rank, word), value)  # atomic: the block's threads count at once

    @cuda.jit(device=True)
    def atomic_min_own(store, rank, word, value):
        return cuda.atomic.min(store, (rank, word), value)  # atomic: the old value says whether this won

    @cuda.jit(device=True)
    def atomic_or_own(store, rank, word, value):
        return cuda.atomic.or_(store, (rank, word), value)  # atomic: the block's threads mark at once

    @cuda.jit(device=True)
    def exchange_own(store, rank, word, value):
        return cuda.atomic.exch(store, (rank, word), value)  # atomic: takes the bits set so far, none lost

    @cuda.jit(device=True)
    def low_bit(x):
        return int(x & -x).bit_length() - 1

    WARP_WIDTH = 1  # the simulator has no warp intrinsics: a thread stands for a warp (total_begin sums every rank)

    @cuda.jit(device=True)
    def pause():
        time.sleep(1e-5)  # a polling thread hands the interpreter to the simulated threads that work

    @cuda.jit(device=True)
    def cluster_sync():
        cuda.syncthreads()  # barrier: the simulated ranks share one block

    @cuda.jit(device=True)
    def total_begin(store, word, ranks):
        total = 0
        for r in range(ranks):
            total += store[r, word]
        return total

    @cuda.jit(device=True)
    def total_end(part):
        return part

else:
    from llvmlite import ir
    from numba import types
    from numba.cuda.extending import intrinsic

    def _asm(builder, ret, args, text, constraints):
        fnty = ir.FunctionType(ret, [a.type for a in args])
        return builder.call(ir.InlineAsm(fnty, text, constraints, side_effect=True), args)

    @intrinsic
    def _ctarank(typingctx):
        def codegen(context, builder, sig, args):
            return _asm(builder, ir.IntType(32), [], "mov.u32 $0, %cluster_ctarank;", "=r")

        return types.uint32(), codegen

    @intrinsic
    def _barrier(typingctx):
        def codegen(context, builder, sig, args):
            _asm(builder, ir.VoidType(), [], "barrier.cluster.arrive;\n\tbarrier.cluster.wait;", "~{memory}")
            return context.get_dummy_value()

        return types.void(), codegen

    @intrinsic
    def _shared_base(typingctx, arr):
        """The shared::cta address (32 bits) of ``arr``'s first element; ``arr`` must live in shared memory."""

        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            ptr = builder.ptrtoint(ary.data, ir.IntType(64))
            return _asm(builder, ir.IntType(32), [ptr],
                        "{\n\t.reg .u64 t;\n\tcvta.to.shared.u64 t, $1;\n\tcvt.u32.u64 $0, t;\n\t}", "=r,l")

        return types.uint32(arr), codegen

    @intrinsic
    def _mapa(typingctx, addr, rank):
        """The shared::cluster address of the word at shared::cta ``addr`` in block ``rank`` of the cluster."""

        def codegen(context, builder, sig, args):
            return _asm(builder, ir.IntType(32), list(args), "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r")

        return types.uint32(types.uint32, types.uint32), codegen

    def _dsm_op(text):
        @intrinsic
        def op(typingctx, addr, value):
            def codegen(context, builder, sig, args):
                return _asm(builder, ir.IntType(32), list(args), text, "=r,r,r,~{memory}")

            return types.int32(types.uint32, types.int32), codegen

        return op

    _amin = _dsm_op("atom.shared::cluster.min.s32 $0, [$1], $2;")
    _aadd = _dsm_op("atom.shared::cluster.add.u32 $0, [$1], $2;")
    _exch = _dsm_op("atom.shared::cluster.exch.b32 $0, [$1], $2;")
    _aor = _dsm_op("atom.shared::cluster.or.b32 $0, [$1], $2;")
    _add_cta = _dsm_op("atom.shared.add.u32 $0, [$1], $2;")
    _min_cta = _dsm_op("atom.shared.min.s32 $0, [$1], $2;")
    _or_cta = _dsm_op("atom.shared.or.b32 $0, [$1], $2;")
    _exch_cta = _dsm_op("atom.shared.exch.b32 $0, [$1], $2;")

    @intrinsic
    def _ld(typingctx, addr):
        def codegen(context, builder, sig, args):
            return _asm(builder, ir.IntType(32), list(args), "ld.shared::cluster.u32 $0, [$1];", "=r,r,~{memory}")

        return types.int32(types.uint32), codegen

    @intrinsic
    def _ld_cta(typingctx, addr):
        def codegen(context, builder, sig, args):
            return _asm(builder, ir.IntType(32), list(args), "ld.shared.u32 $0, [$1];", "=r,r,~{memory}")

        return types.int32(types.uint32), codegen

    def _store_op(text):
        @intrinsic
        def op(typingctx, addr, value):
            def codegen(context, builder, sig, args):
                _asm(builder, ir.VoidType(), list(args), text, "r,r,~{memory}")
                return context.get_dummy_value()

            return types.void(types.uint32, types.int32), codegen

        return op

    _st = _store_op("st.shared::cluster.u32 [$0], $1;")
    _st_cta = _store_op("st.shared.u32 [$0], $1;")

    @cuda.jit(device=True, inline="always")
    def _own(store, word):
        """The shared::cta address of the calling block's ``word``."""
        return numba.uint32(store + numba.uint32(word) * numba.uint32(4))

    @cuda.jit(device=True, inline="always")
    def _word(store, rank, word):
        """The shared::cluster address of ``word`` in block ``rank``."""
        return _mapa(_own(store, word), numba.uint32(rank))

    @cuda.jit(device=True)
    def store_of(sim_store):
        """The rank's shared words: the address of the block's dynamic shared memory (the argument is unused)."""
        return _shared_base(cuda.shared.array(0, dtype=numba.int32))

    @cuda.jit(device=True)
    def place(store):
        """(rank in the cluster, thread in the block, threads per block)."""
        return numba.int64(_ctarank()), numba.int64(cuda.threadIdx.x), numba.int64(cuda.blockDim.x)

    @cuda.jit(device=True, inline="always")
    def peer(first, block):
        """The ``rank`` argument that reaches global block ``block`` of the cluster whose first block is ``first``
        (clusters of consecutive blocks along x): its rank in the cluster."""
        return block - first

    @cuda.jit(device=True, inline="always")
    def load(store, rank, word):
        return _ld(_word(store, rank, word))

    @cuda.jit(device=True, inline="always")
    def load_own(store, rank, word):
        """A word of the calling block's own shared memory (``rank`` is its own): a plain shared load, no mapping."""
        return _ld_cta(_own(store, word))

    @cuda.jit(device=True, inline="always")
    def store_word(store, rank, word, value):
        _st(_word(store, rank, word), numba.int32(value))

    @cuda.jit(device=True, inline="always")
    def atomic_min(store, rank, word, value):
        return _amin(_word(store, rank, word), numba.int32(value))  # atomic: the old value says whether this won

    @cuda.jit(device=True, inline="always")
    def atomic_add(store, rank, word, value):
        return _aadd(_word(store, rank, word), numba.int32(value))  # atomic: a slot of a queue

    @cuda.jit(device=True, inline="always")
    def exchange(store, rank, word, value):
        return _exch(_word(store, rank, word), numba.int32(value))  # atomic: the first to mark a vertex queues it

    @cuda.jit(device=True, inline="always")
    def atomic_or(store, rank, word, value):
        return _aor(_word(store, rank, word), numba.int32(value))  # atomic: the first to set a bit learns it

    @cuda.jit(device=True, inline="always")
    def store_own(store, rank, word, value):
        _st_cta(_own(store, word), numba.int32(value))

    @cuda.jit(device=True, inline="always")
    def atomic_add_own(store, rank, word, value):
        return _add_cta(_own(store, word), numba.int32(value))  # atomic: the block's threads count at once

    @cuda.jit(device=True, inline="always")
    def atomic_min_own(store, rank, word, value):
        return _min_cta(_own(store, word), numba.int32(value))  # atomic: the old value says whether this won

    @cuda.jit(device=True, inline="always")
    def atomic_or_own(store, rank, word, value):
        return _or_cta(_own(store, word), numba.int32(value))  # atomic: the block's threads mark at once

    @cuda.jit(device=True, inline="always")
    def exchange_own(store, rank, word, value):
        return _exch_cta(_own(store, word), numba.int32(value))  # atomic: takes the bits set so far, none lost

    @cuda.jit(device=True, inline="always")
    def low_bit(x):
        """The index of the lowest set bit of x (x > 0)."""
        return cuda.popc(numba.int64((x & -x) - 1))

    WARP_WIDTH = 32

    @cuda.jit(device=True, inline="always")
    def pause():
        """Nothing on a GPU: a polling warp keeps its multiprocessor's scheduler, its latency is the point."""

    @cuda.jit(device=True)
    def cluster_sync():
        _barrier()  # barrier: arrive (release) and wait (acquire) across the cluster's blocks

    @cuda.jit(device=True)
    def total_begin(store, word, ranks):
        """Lane r of the calling warp starts reading rank r's ``word`` (0 past ``ranks``, at most 32 ranks). Only
        :func:`total_end` needs the value, so the loads' latency hides behind what the warp does in between."""
        v = numba.int32(0)
        if cuda.laneid < ranks:
            v = load(store, cuda.laneid, word)
        return v

    @cuda.jit(device=True)
    def total_end(part):
        """The sum of the warp's :func:`total_begin` parts, in every lane (a butterfly of shuffles; whole warps)."""
        v = numba.int32(part)
        for d in (16, 8, 4, 2, 1):
            v = numba.int32(v + cuda.shfl_xor_sync(FULL_MASK, v, d))  # exchange with the lane d apart
        return v


@cuda.jit(device=True)
def cluster_min(store, rank, lt, value, block_word, cluster_word, empty):
    """The smallest ``value`` over every thread of the cluster (``empty`` where none is smaller), through the block's
    ``block_word`` and block 0's ``cluster_word``, both holding ``empty`` beforehand. Called by every thread: it takes
    a block barrier and a cluster barrier."""
    if value < empty:
        atomic_min(store, rank, block_word, value)
    cuda.syncthreads()  # barrier: the block's minimum is complete
    if lt == 0:
        b = load_own(store, rank, block_word)
        if b < empty:
            atomic_min(store, 0, cluster_word, b)
    cluster_sync()  # barrier: every block's minimum is in block 0
    return load(store, 0, cluster_word)


class ClusterSSSP(PersistentSSSP):
    """Host side of an SSSP solver whose kernel is one thread-block cluster (``self.kernel`` over ``self.args``, with
    ``ranks``, ``per``, ``block`` and ``shared_bytes`` set): the launch through the driver on a GPU (one block of
    ``ranks x per`` threads in the simulator), one trial per source, and its counters from :meth:`read_counters`."""

    label = "a cluster kernel"  # the solver's name in messages
    launcher = None

    def read_counters(self, ctl) -> dict:
        """The trial's counters from the kernel's control words ``ctl`` (host copy)."""
        raise NotImplementedError

    def launch(self):
        if TARGET.simulator:
            self.kernel[1, self.ranks * self.per](*self.args)
            return
        if self.launcher is None:
            self.launcher = self.make_launcher()
            self.launcher.prepare(*self.args)
        self.launcher()

    def make_launcher(self):
        """The GPU's launch of ``self.kernel``: one cluster of ``ranks`` blocks."""
        cc = tuple(cuda.get_current_device().compute_capability)
        if cc < (9, 0):
            raise SolverError(f"{self.label} needs thread-block clusters (compute capability 9.0 or newer); this "
                              f"GPU has {cc[0]}.{cc[1]}")
        return ClusterLaunch(self.kernel, clusters=1, cluster=self.ranks, block=self.block,
                             sharedmem=self.shared_bytes)

    def run(self, source):
        self.put_source(source)
        self.launch()
        self.launched()
        launches = 1 + self.host_tree(source, 256)

        def counters():
            # after the trial's clock: the counters are not its work
            return {**self.read_counters(self.d_ctl.copy_to_host()), "launches": launches}

        return counters
