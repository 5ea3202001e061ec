"""Phase 3 of blockedfw_fast (and phase 2 as a min-plus product): a tile updated through the staged pivot-column and
pivot-row tiles, R x R cells per thread in registers, on packed (distance, pivot) keys or guarded general values.

Two layouts (docs/solvers/blockedfw.md): :func:`phase3_fn`, the reference, with a thread's cells strided T/R apart
and the pivot-column chunk transposed; :func:`phase3x_fn`, R consecutive rows and columns per thread, V-wide shared
loads, U pivots per k-loop iteration and one or two chunk buffers. Their k loops are the hot loops of the solver:
written out here as they are measured. Device functions only: :mod:`.kernels` launches them.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .consts import Consts


def pack_fn(cs: Consts):
    """Device function ``pack(x, low)``: a distance as a phase-3 key."""
    DT, INF, MUL = cs.DT, cs.INF, cs.MUL

    @cuda.jit(device=True)
    def pack(x, low):
        """x as a phase-3 key: x * 2^S + low (INF stays INF)."""
        if x == INF:
            return INF
        return DT(x * MUL + low)

    return pack


def write_back_fn(cs: Consts, pack):
    """Device function ``write_back(d, p, tp, I, i0, j0, step, acc, kb)``: the improved cells of a phase-3 style
    update written to the matrices (tp: the tile row of the array holding the round's pivot row)."""
    T, R, DT, NEG, S, gen, FLOAT, PATHS = cs.T, cs.R, cs.DT, cs.NEG, cs.S, cs.GEN, cs.FLOAT, cs.PATHS
    LOW = (1 << S) - 1

    @cuda.jit(device=True)
    def settle_paths(p, tp, I, i0, j0, step, kb):
        """Write the predecessors a phase-3 style update gathered into kb (-1: cell not improved; cell (a, b) at row
        i0 + a step, column j0 + b step). A tile on the pivot row (I == tp, phase 2 as a product) gathered them from
        its own rows, so every gather must precede every write: a block barrier (I is the same for the whole block)."""
        if gen or not PATHS:
            return
        if I == tp:
            cuda.syncthreads()  # every old predecessor of the tile read before any is overwritten
        for a in range(R):
            for b in range(R):
                if kb[a, b] >= 0:
                    p[i0 + a * step, j0 + b * step] = kb[a, b]

    @cuda.jit(device=True)
    def write_back(d, p, tp, I, i0, j0, step, acc, kb):
        """Cell (a, b) at row i0 + a step, column j0 + b step: its accumulated key ``acc[a, b]`` written back when
        it beats the cell (general kernels: when a pivot improved it, kb[a, b] >= 0), with its predecessor
        p[i][j] = p[tp T + k][j] for the winning pivot k (the pivot row of p: final in phase 3, this tile's own in
        phase 2, so gathered first and written by settle_paths)."""
        base = tp * T
        for a in range(R):
            for b in range(R):
                i = i0 + a * step
                j = j0 + b * step
                m = acc[a, b]
                if gen:
                    if kb[a, b] >= 0:
                        if m < NEG:
                            m = NEG
                        d[i, j] = m
                        if PATHS:
                            p[i, j] = p[base + kb[a, b], j]
                elif m < pack(d[i, j], 0):
                    if FLOAT:
                        q = numba.int32(m)
                        d[i, j] = DT(q >> S)
                        low = q & LOW
                    else:
                        d[i, j] = m >> S
                        low = m & LOW
                    if PATHS:
                        kb[a, b] = p[base + low, j]  # pivot row of p: final in phase 3, this tile's own in phase 2
        settle_paths(p, tp, I, i0, j0, step, kb)

    return write_back


def phase3_fn(cs: Consts, pack, write_back):
    """Device function ``phase3(d, p, t, tp, I, J)``: the reference layout."""
    T, R, TR, NT, KC, DT, NPDT, INF = cs.T, cs.R, cs.TR, cs.NT, cs.KC, cs.DT, cs.NPDT, cs.INF
    gen, DPX, FLOAT = cs.GEN, cs.DPX, cs.FLOAT
    TP = T + 1  # row stride of the transposed operand: its staging writes hit 32 banks
    STAGE = KC * T // NT  # staged cells per thread per operand and chunk
    KEYED = 1 if cs.S else 0  # the pivot index rides in the keys only with paths

    @cuda.jit(device=True)
    def phase3(d, p, t, tp, I, J):
        """Tile (I, J) off the pivot cross: operands staged KC pivots at a time, an R x R register block; the pivots
        are the vertices of column tile t, their row in the array is tile row tp."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        tid = ty * TR + tx
        base = t * T
        rbase = tp * T
        i0 = I * T + ty
        j0 = J * T + tx
        As = cuda.shared.array((KC, TP), NPDT)  # As[k][i] = key of d[I*T + i][base + k] (transposed)
        Bs = cuda.shared.array((KC, T), NPDT)  # Bs[k][j] = key of d[rbase + k][J*T + j]
        acc = cuda.local.array((R, R), NPDT)
        kb = cuda.local.array((R, R), np.int32)
        av = cuda.local.array(R, NPDT)
        bv = cuda.local.array(R, NPDT)
        for a in range(R):
            for b in range(R):
                acc[a, b] = pack(d[i0 + a * TR, j0 + b * TR], 0)
                kb[a, b] = -1
        for kc in range(0, T, KC):
            for s in range(STAGE):
                e = tid + s * NT
                kk = e % KC
                i = e // KC
                As[kk, i] = pack(d[I * T + i, base + kc + kk], (kc + kk) * KEYED)
                kk = e // T
                j = e % T
                Bs[kk, j] = pack(d[rbase + kc + kk, J * T + j], 0)
            cuda.syncthreads()  # chunk of both operand tiles staged
            for kk in range(KC):
                for a in range(R):
                    av[a] = As[kk, ty + a * TR]
                for b in range(R):
                    bv[b] = Bs[kk, tx + b * TR]
                for a in range(R):
                    for b in range(R):
                        if gen:
                            x = av[a]
                            y = bv[b]
                            if x != INF and y != INF:
                                s = DT(x + y)
                                if s < acc[a, b]:
                                    acc[a, b] = s
                                    kb[a, b] = kc + kk
                        elif DPX:
                            acc[a, b] = min(DT(av[a] + bv[b]), acc[a, b])
                        elif FLOAT:
                            acc[a, b] = min(DT(av[a] + bv[b]), acc[a, b])
                        else:
                            s = DT(av[a] + bv[b])
                            if s < acc[a, b]:
                                acc[a, b] = s
            cuda.syncthreads()  # chunk consumed before the next one overwrites it
        write_back(d, p, tp, I, i0, j0, TR, acc, kb)

    return phase3


def staging_fns(cs: Consts, pack):
    """Device functions ``load_chunk(d, t, tp, I, J, kc, ra, rb)`` and ``store_chunk(As, Bs, buf, ra, rb)`` of phase3x:
    a chunk's operand keys from global memory into registers, and from registers into a shared buffer."""
    T, TR, NT, KCX = cs.T, cs.TR, cs.NT, cs.KCX
    STAGEX = KCX * T // NT  # staged cells per thread per operand and chunk
    KEYED = 1 if cs.S else 0
    u32 = numba.uint32

    @cuda.jit(device=True)
    def load_chunk(d, t, tp, I, J, kc, ra, rb):
        """Keys of pivots kc .. kc+KC-1 of the pivot-column tile (I, t) and pivot-row tile (tp, J) into ra, rb."""
        tid = u32(cuda.threadIdx.y * TR + cuda.threadIdx.x)
        base = t * T
        rbase = tp * T
        for s in range(STAGEX):
            e = tid + u32(s * NT)  # unsigned: divisions by the power-of-two KC and T become shifts and masks
            kk = e % u32(KCX)
            ra[s] = pack(d[I * T + e // u32(KCX), base + kc + kk], (kc + kk) * KEYED)
            rb[s] = pack(d[rbase + kc + e // u32(T), J * T + e % u32(T)], 0)

    @cuda.jit(device=True)
    def store_chunk(As, Bs, buf, ra, rb):
        """ra, rb into buffer buf: As[buf][i][k] (rows of the pivot-column chunk), Bs[buf][k][j]."""
        tid = u32(cuda.threadIdx.y * TR + cuda.threadIdx.x)
        for s in range(STAGEX):
            e = tid + u32(s * NT)
            As[buf, e // u32(KCX), e % u32(KCX)] = ra[s]
            Bs[buf, e // u32(T), e % u32(T)] = rb[s]

    return load_chunk, store_chunk


def group_fn(cs: Consts):
    """Device function ``group(As, Bs, buf, row, col, k, kc, acc, kb, av, bv)``: phase3x's V pivots."""
    R, V, DT, INF, gen, DPX, FLOAT = cs.R, cs.V, cs.DT, cs.INF, cs.GEN, cs.DPX, cs.FLOAT
    u32 = numba.uint32

    @cuda.jit(device=True)
    def group(As, Bs, buf, row, col, k, kc, acc, kb, av, bv):
        """Pivots k .. k+V-1 of the chunk in buffer buf: V-wide loads of A's R rows, then per pivot R B values."""
        for a in range(R):
            for v in range(V):
                av[a, v] = As[buf, row + u32(a), k + u32(v)]
        for v in range(V):
            for b in range(R):
                bv[b] = Bs[buf, k + u32(v), col + u32(b)]
            for a in range(R):
                for b in range(R):
                    if gen:
                        x = av[a, v]
                        y = bv[b]
                        if x != INF and y != INF:
                            s = DT(x + y)
                            if s < acc[a, b]:
                                acc[a, b] = s
                                kb[a, b] = kc + k + v
                    elif DPX or FLOAT:
                        acc[a, b] = min(DT(av[a, v] + bv[b]), acc[a, b])
                    else:
                        s = DT(av[a, v] + bv[b])
                        if s < acc[a, b]:
                            acc[a, b] = s

    return group


def phase3x_fn(cs: Consts, pack, write_back):
    """Device function ``phase3x(d, p, t, tp, I, J)``: the consecutive layout."""
    T, R, NPDT, V, U, NBUF, KCX, ALIGN = cs.T, cs.R, cs.NPDT, cs.V, cs.U, cs.NBUF, cs.KCX, cs.ALIGN
    G = U // V  # groups of V pivots per k-loop iteration
    NCH = T // KCX
    STAGEX = KCX * T // cs.NT
    SA = KCX + 4  # row stride of the A chunk: rows R apart start in other banks, rows stay 16-byte aligned
    u32 = numba.uint32
    load_chunk, store_chunk = staging_fns(cs, pack)
    group = group_fn(cs)

    @cuda.jit(device=True)
    def phase3x(d, p, t, tp, I, J):
        """Phase 3 with R consecutive rows and columns per thread, V-wide loads, U k steps per iteration."""
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        i0 = I * T + ty * R
        j0 = J * T + tx * R
        row = u32(ty * R)
        col = u32(tx * R)
        As = cuda.shared.array((NBUF, T, SA), NPDT, alignment=ALIGN)  # As[buf][i][k]: key of d[I*T+i][t*T+kc+k]
        Bs = cuda.shared.array((NBUF, KCX, T), NPDT, alignment=ALIGN)  # Bs[buf][k][j]: key of d[tp*T+kc+k][J*T+j]
        ra = cuda.local.array(STAGEX, NPDT)
        rb = cuda.local.array(STAGEX, NPDT)
        acc = cuda.local.array((R, R), NPDT)
        kb = cuda.local.array((R, R), np.int32)
        av = cuda.local.array((R, V), NPDT)
        bv = cuda.local.array(R, NPDT)
        for a in range(R):
            for b in range(R):
                acc[a, b] = pack(d[i0 + a, j0 + b], 0)
                kb[a, b] = -1
        load_chunk(d, t, tp, I, J, 0, ra, rb)
        store_chunk(As, Bs, 0, ra, rb)
        cuda.syncthreads()  # chunk 0 staged
        for c in range(NCH):
            buf = u32(c % NBUF)
            if NBUF == 2 and c + 1 < NCH:
                load_chunk(d, t, tp, I, J, (c + 1) * KCX, ra, rb)  # in flight during this chunk's compute
            for q in range(KCX // U):
                k = u32(q * U)
                kc = c * KCX
                group(As, Bs, buf, row, col, k, kc, acc, kb, av, bv)  # U / V groups written out: LLVM
                if G >= 2:  # leaves a loop over groups this large rolled, so unroll by hand
                    group(As, Bs, buf, row, col, k + u32(V), kc, acc, kb, av, bv)
                if G >= 4:
                    group(As, Bs, buf, row, col, k + u32(2 * V), kc, acc, kb, av, bv)
                    group(As, Bs, buf, row, col, k + u32(3 * V), kc, acc, kb, av, bv)
                if G >= 8:
                    group(As, Bs, buf, row, col, k + u32(4 * V), kc, acc, kb, av, bv)
                    group(As, Bs, buf, row, col, k + u32(5 * V), kc, acc, kb, av, bv)
                    group(As, Bs, buf, row, col, k + u32(6 * V), kc, acc, kb, av, bv)
                    group(As, Bs, buf, row, col, k + u32(7 * V), kc, acc, kb, av, bv)
            if c + 1 < NCH:
                if NBUF == 1:
                    cuda.syncthreads()  # chunk consumed before the next one overwrites it
                    load_chunk(d, t, tp, I, J, (c + 1) * KCX, ra, rb)
                store_chunk(As, Bs, (c + 1) % NBUF, ra, rb)
                cuda.syncthreads()  # chunk c+1 staged (double: and buffer c%2 free only after the next one)
        cuda.syncthreads()  # last chunk consumed before this block's next tile (stride loop) restages
        write_back(d, p, tp, I, i0, j0, 1, acc, kb)

    return phase3x


def update_tile_fn(cs: Consts):
    """Device function ``update_tile(d, p, t, tp, I, J)``: phase 3 (or phase 2 as a product) on tile (I, J) through
    the pivots of column tile t, whose row is tile row tp of the array (t itself on one GPU; elsewhere on a rank of
    the distributed solver)."""
    TUNED = cs.TUNED
    pack = pack_fn(cs)
    write_back = write_back_fn(cs, pack)
    phase3 = phase3_fn(cs, pack, write_back)
    phase3x = phase3x_fn(cs, pack, write_back)

    @cuda.jit(device=True)
    def update_tile(d, p, t, tp, I, J):
        """Phase 3 on tile (I, J): the reference kernel or the tuned one as inner / unroll / stage say."""
        if TUNED:
            phase3x(d, p, t, tp, I, J)
        else:
            phase3(d, p, t, tp, I, J)

    return update_tile
