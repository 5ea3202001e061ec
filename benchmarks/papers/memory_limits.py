"""Paper 001's memory limit on its 512 MB card (finding 1.23), computed without a device: the largest |V| of the
Fig. 10 graphs (|E| = 4|V|, 4-byte words) whose arrays fit in 512 MiB, by the paper's own count ((3N + 1)|V| + 2|E|
words: N = 32 for the proposed method, N = 1 for Harish's) and by our registry's bound for nsssp_global (which adds
the inverted graph and the parent staging), beside the sizes where the paper's runs stopped (1.2M and 10.7M).
Run from the repository root: `PYTHONPATH=src python benchmarks/papers/memory_limits.py`; findings.yaml's row 1.23
calls :func:`paper_limit` (gpusp.report.findings, experiment 'formula').
"""

from __future__ import annotations

CARD = 512 * 2**20  # the GeForce 8800 GTS's 512 MB
PAPER_STOP = {32: 1.2e6, 1: 10.7e6}  # where the paper's runs ran out (section 6.1)


def largest(fits) -> int:
    """The largest n with fits(n), by bisection (fits is monotone)."""
    lo, hi = 1, 1 << 40
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo


def paper_words(n: int, N: int) -> int:
    return (3 * N + 1) * n + 2 * (4 * n)


def paper_limit(N: int) -> int:
    """The largest |V| whose arrays, by the paper's own word count with N sources a launch, fit in the card."""
    return largest(lambda n: 4 * paper_words(n, N) <= CARD)


def main() -> list[dict]:
    from gpusp.solvers import registry

    spec = registry.get("nsssp_global")
    rows = []
    for N in (32, 1):
        params = spec.resolve({"sources_per_launch": N, "groups_per_block": 4 if N == 32 else 32, "paths": False})
        ours = largest(lambda n, p=params: spec.memory(n, 4 * n, p, 4) <= CARD)
        paper = paper_limit(N)
        rows.append({"N": N, "paper_formula_max_n": paper, "registry_max_n": ours, "paper_stopped_at": PAPER_STOP[N],
                     "formula_over_paper": paper / PAPER_STOP[N]})
        print(f"N = {N:2d}: the paper's count fits |V| <= {paper:,}, our registry's bound |V| <= {ours:,}; "
              f"the paper stopped at {PAPER_STOP[N]:,.0f} (count / paper {paper / PAPER_STOP[N]:.3f})")
    return rows


if __name__ == "__main__":
    main()
