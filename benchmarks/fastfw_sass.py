"""Offline (no GPU) SASS census of blockedfw_fast's phase-3 kernel for sm_90: registers, spills and the
instructions per relaxation in the unrolled inner loop, for every shipped (tile, regblock) and arith.

usage: NUMBA_ENABLE_CUDASIM=0 python benchmarks/fastfw_sass.py [--dump DIR]
Needs numba-cuda[cu13] and nvdisasm (pip install "cuda-toolkit[nvdisasm]==13.*"). The k-loop body is
counted between the kernel's two BAR.SYNCs of a chunk: LDS loads, the add-min instructions (VIADDMNMX,
IADD/IMNMX, ISETP/SEL, FADD/FMNMX) and everything else, divided by the KC x R^2 relaxations of a chunk.
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


def cubin_and_log(kernel, sig):
    from cuda.core import Linker, LinkerOptions, ObjectCode
    from numba import cuda

    ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=(9, 0))
    linker = Linker(ObjectCode.from_ptx(ptx.encode()), options=LinkerOptions(arch="sm_90", verbose=True))
    cubin = linker.link("cubin")
    log = linker.get_info_log() if hasattr(linker, "get_info_log") else ""
    return cubin.code, log


def census(sass: str, KC: int, R: int):
    """Instruction counts between consecutive BAR.SYNC pairs (the chunk loop body); the largest body wins."""
    lines = [ln for ln in sass.splitlines() if re.search(r"/\*[0-9a-f]{4,}\*/", ln)]
    ops = []
    for ln in lines:
        m = re.search(r"\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", ln)
        if m:
            ops.append(m.group(1))
    bars = [i for i, op in enumerate(ops) if op.startswith("BAR")]
    best = None
    for a, b in zip(bars, bars[1:]):
        body = ops[a + 1:b]
        if best is None or len(body) > len(best):
            best = body
    cnt = collections.Counter(op.split(".")[0] for op in (best or []))
    relax = max(1, cnt["LDS"] // (2 * R)) * R * R  # each k step loads R + R operands (scalar LDS)
    addmin = sum(cnt[k] for k in ("VIADDMNMX", "IMNMX", "FMNMX", "FADD", "IADD3", "ISETP", "SEL", "VIMNMX", "IADD"))
    return cnt, relax, len(best or []), addmin


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", default=None)
    args = ap.parse_args()
    from gpusp.solvers.compilecheck import _patch_current_device
    from gpusp.solvers import fastfw

    _patch_current_device()
    dis = nvdisasm()
    print("| tile | regblock | arith | paths | regs | spill stores/loads | KC | instr in loop body | "
          "relax in body | instr / relax | add-min instr / relax | LDS / relax | top opcodes |")
    print("|---:|---:|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for T, R in fastfw.SHIPPED:
        for kind in fastfw.ARITHS + ("gen32",):
            for paths in (True, False):
                ks = fastfw.kernels(T, R, kind, paths)
                sig = fastfw.kernel_sigs(kind)["k3"]
                code, log = cubin_and_log(ks["k3"], sig)
                with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
                    f.write(code)
                sass = subprocess.run([dis, "-c", f.name], capture_output=True, text=True).stdout
                os.unlink(f.name)
                if args.dump:
                    os.makedirs(args.dump, exist_ok=True)
                    with open(os.path.join(args.dump, f"k3_T{T}_R{R}_{kind}_p{int(paths)}.sass"), "w") as f:
                        f.write(sass)
                regs = re.search(r"Used (\d+) registers", log)
                spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
                cnt, relax, body, addmin = census(sass, ks["KC"], R)
                top = ", ".join(f"{k} {v}" for k, v in cnt.most_common(5))
                print(f"| {T} | {R} | {kind} | {paths} | {regs.group(1) if regs else '?'} | "
                      f"{spill.group(1) + '/' + spill.group(2) if spill else '?'} | {ks['KC']} | {body} | {relax} | "
                      f"{body / relax:.2f} | {addmin / relax:.2f} | {cnt['LDS'] / relax:.3f} | {top} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
