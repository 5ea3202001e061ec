"""Offline (no GPU) SASS census of blockedfw_fast's phase-3 kernel for sm_90: registers, spills and the
instructions per relaxation in the unrolled inner loop, for every shipped (tile, regblock) and arith.

usage: NUMBA_ENABLE_CUDASIM=0 python benchmarks/fastfw_sass.py [--dump DIR]
       [--shapes 64x4 ...] [--arith dpx ...] [--paths 1 0] [--inner scalar vec4] [--unroll 1 8] [--stage single double]
Without variant options: every shipped (tile, regblock) x arith (+ gen32) x paths at the default variant; with
any of --inner / --unroll / --stage / --shapes / --arith / --paths: their cartesian product (defaults T 64 R 4,
dpx, paths on and off). Needs numba-cuda[cu13] and nvdisasm (pip install "cuda-toolkit[nvdisasm]==13.*"). The
hot loop is the k3 kernel's loop (backward branch) or run between two BAR.SYNCs with the most add-mins (the
most LDS for the general kernels): LDS loads (any width), the add-min instructions (VIADDMNMX,
IADD/IMNMX, ISETP/SEL, FADD/FMNMX) and everything else, divided by the relaxations in it (one VIADDMNMX or FMNMX
each; for the general kernels R^2 per 2R loaded 32-bit words).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

os.environ["NUMBA_ENABLE_CUDASIM"] = "0"


def nvdisasm():
    exe = shutil.which("nvdisasm")
    if exe:
        return exe
    import nvidia.cu13  # the cuda-toolkit[nvdisasm] wheel

    for root in nvidia.cu13.__path__:
        cand = os.path.join(root, "bin", "nvdisasm")
        if os.path.exists(cand):
            return cand
    raise SystemExit("nvdisasm not found")


def cubin_and_log(kernel, sig, launch_bounds=None):
    from numba import cuda

    from gpusp.solvers.compilecheck import link

    ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=(9, 0), launch_bounds=launch_bounds)
    return link(ptx)


ADDMIN = ("VIADDMNMX", "IMNMX", "FMNMX", "FADD", "IADD3", "ISETP", "SEL", "VIMNMX", "IADD")


def census(sass: str, KC: int, R: int):
    """Opcode counts of the hot loop: of the backward branches' bodies (label .. BRA) and the runs between
    BAR.SYNCs, the one holding the most add-mins (general kernels: the most LDS)."""
    ops, labels, branches = [], {}, []
    for ln in sass.splitlines():
        lab = re.match(r"\s*(\.L_x_\d+):", ln)
        if lab:
            labels[lab.group(1)] = len(ops)
            continue
        if not re.search(r"/\*[0-9a-f]{4,}\*/", ln):
            continue
        m = re.search(r"\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", ln)
        if m:
            t = re.search(r"BRA\s+`\((\.L_x_\d+)\)", ln)
            if t:
                branches.append((len(ops), t.group(1)))
            ops.append(m.group(1))
    bodies = [ops[labels[lab]:i + 1] for i, lab in branches if lab in labels and labels[lab] <= i]
    bars = [i for i, op in enumerate(ops) if op.startswith("BAR")]
    bodies += [ops[x + 1:y] for x, y in zip(bars, bars[1:])]
    def key(body):  # the most add-mins; for the general kernels (ISETP / SEL) the most shared loads
        ops_ = [op.split(".")[0] for op in body]
        return ops_.count("VIADDMNMX") + ops_.count("FMNMX"), ops_.count("LDS"), -len(body)

    best = max(bodies, key=key) if bodies else []
    cnt = collections.Counter(op.split(".")[0] for op in best)
    widths = collections.Counter(op for op in best if op.startswith("LDS"))
    words = sum(c * (4 if ".128" in op else 2 if ".64" in op else 1) for op, c in widths.items())
    relax = cnt["VIADDMNMX"] or cnt["FMNMX"] or max(1, words // (2 * R)) * R * R  # 2R words per R^2 (general)
    addmin = sum(cnt[k] for k in ADDMIN)
    return cnt, relax, len(best), addmin, widths


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", default=None)
    ap.add_argument("--shapes", nargs="*", default=None, help="TxR pairs, e.g. 64x4")
    ap.add_argument("--arith", nargs="*", default=None)
    ap.add_argument("--paths", nargs="*", type=int, default=None)
    ap.add_argument("--inner", nargs="*", default=None)
    ap.add_argument("--unroll", nargs="*", type=int, default=None)
    ap.add_argument("--stage", nargs="*", default=None)
    args = ap.parse_args()
    from gpusp.solvers.compilecheck import patch_current_device
    from gpusp.solvers.blockedfw.fast.kernels import kernel_sigs, kernels
    from gpusp.solvers.blockedfw.fast.variants import ARITHS, SHIPPED

    patch_current_device()
    dis = nvdisasm()
    custom = any(x is not None for x in (args.shapes, args.arith, args.paths, args.inner, args.unroll, args.stage))
    shapes = [tuple(map(int, x.split("x"))) for x in args.shapes] if args.shapes else (
        [(64, 4)] if custom else list(SHIPPED))
    ariths = args.arith or (["dpx"] if custom else list(ARITHS) + ["gen32"])
    paths_list = [bool(x) for x in args.paths] if args.paths is not None else [True, False]
    combos = [(i, u, st) for i in (args.inner or ["scalar"]) for u in (args.unroll or [1])
              for st in (args.stage or ["single"])]
    print("| tile | regblock | arith | paths | inner | unroll | stage | regs | spill stores/loads | KC | "
          "instr in loop body | relax in body | instr / relax | add-min instr / relax | LDS / relax | LDS widths | "
          "top opcodes |")
    print("|---:|---:|---|---|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|")
    for T, R in shapes:
        for kind in ariths:
            for paths in paths_list:
                for inner, unroll, stage in combos:
                    try:
                        ks = kernels(T, R, kind, paths, inner=inner, unroll=unroll, stage=stage)
                    except Exception as exc:
                        print(f"| {T} | {R} | {kind} | {paths} | {inner} | {unroll} | {stage} | {exc} |")
                        continue
                    sig = kernel_sigs(kind)["k3"]
                    code, log = cubin_and_log(ks["k3"], sig, ks.get("k3_bounds"))
                    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
                        f.write(code)
                    sass = subprocess.run([dis, "-c", f.name], capture_output=True, text=True).stdout
                    os.unlink(f.name)
                    if args.dump:
                        os.makedirs(args.dump, exist_ok=True)
                        name = f"k3_T{T}_R{R}_{kind}_p{int(paths)}_{inner}_u{unroll}_{stage}.sass"
                        with open(os.path.join(args.dump, name), "w") as f:
                            f.write(sass)
                    regs = re.search(r"Used (\d+) registers", log)
                    spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
                    cnt, relax, body, addmin, widths = census(sass, ks["KC"], R)
                    top = ", ".join(f"{k} {v}" for k, v in cnt.most_common(5))
                    lds = " ".join(f"{k} {v}" for k, v in sorted(widths.items()))
                    print(f"| {T} | {R} | {kind} | {paths} | {inner} | {unroll} | {stage} | "
                          f"{regs.group(1) if regs else '?'} | "
                          f"{spill.group(1) + '/' + spill.group(2) if spill else '?'} | {ks['KC']} | {body} | {relax} | "
                          f"{body / relax:.2f} | {addmin / relax:.2f} | {cnt['LDS'] / relax:.3f} | {lds} | {top} |",
                          flush=True)


if __name__ == "__main__":
    sys.exit(main())
