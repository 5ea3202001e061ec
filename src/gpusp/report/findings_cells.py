"""The cells of a test in ``benchmarks/papers/findings.yaml``: a grid of variables or explicit cells expanded into
complete tests, the configurations each names and the other runs of the same code (``replicate``) it counts for.
Pure functions of the YAML's dicts; :mod:`gpusp.report.findings` judges the cells."""

from __future__ import annotations

import itertools


def fill(value, names: dict):
    """``value`` with ``{variable}`` filled in from ``names``, through lists and dicts."""
    if isinstance(value, str):
        return value.format(**names) if names else value
    if isinstance(value, list):
        return [fill(v, names) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, names) for k, v in value.items()}
    return value


def combos(grid: dict, divides: list | None) -> list[dict]:
    """Every combination of the grid's variables (``divides: [a, b]`` keeps those where a divides b)."""
    every = [dict(zip(grid, c)) for c in itertools.product(*grid.values())]
    if divides:
        a, b = divides
        every = [c for c in every if c[b] % c[a] == 0]
    return every


def label_of(combo: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in combo.items())


def expand_cells(test: dict) -> list[dict]:
    """The test's cells, each a complete test: explicit ``cells`` (each overriding fields and naming ``vars``)
    or a ``grid`` of variables (``divides: [a, b]`` keeps the combinations where a divides b)."""
    grid_keys = ("cells", "grid", "divides") if "grid" in test else ("cells",)  # a winners test keeps its divides
    base = {k: v for k, v in test.items() if k not in grid_keys}
    if "grid" in test:
        cells = [{"label": label_of(c), "vars": c} for c in combos(test["grid"], test.get("divides"))]
    else:
        cells = test.get("cells") or [{"label": ""}]
    out = []
    for cell in cells:
        names = cell.get("vars", {})
        merged = {**base, **{k: v for k, v in cell.items() if k != "vars"}}
        out.append(fill(merged, names) | {"label": str(cell.get("label", ""))})
    return out


def named(spec: str) -> tuple[str, str]:
    """'name=spec[ @metric]' -> (name, spec): the name (else the solver) and the configuration alone."""
    spec = spec.partition(" @")[0]
    head, bar, tail = spec.partition("|")
    if "=" in head:  # 'name=spec': the name may hold '=' itself, the configuration never does
        name, _, rest = head.rpartition("=")
        return name, rest + bar + tail
    return spec.split("|")[1] if "|" in spec else spec, spec


def cell_specs(cell: dict) -> list[str]:
    """Every configuration a cell names (for the resolution test)."""
    if "over" in cell:  # a winners cell: its points in every combination
        return [spec for c in combos(cell["over"], cell.get("divides"))
                for spec in cell_specs({"points": fill(cell["points"], c)})]
    specs = []
    for key in ("num", "den", "points", "others"):
        for item in cell.get(key, []):
            specs += (item.get("num", []) + item.get("den", [])) if isinstance(item, dict) else [item]
    specs += [cell[key] for key in ("target", "point") if key in cell]
    return [named(s)[1] for s in specs]


def replicates_of(cell: dict) -> list[str]:
    """The other runs a cell is judged on as well: ``replicate: [{experiment: name, solvers: [...]}, ...]`` names
    runs of the same code, each counting for a cell whose every configuration is one of its solvers' and is read
    from the cell's own experiment (not one a spec's prefix names)."""
    specs = cell_specs(cell)
    if any(":" in spec.split("|")[0] for spec in specs):
        return []
    solvers = {spec.split("|")[1] for spec in specs}
    return [entry["experiment"] for entry in cell.get("replicate", [])
            if entry["experiment"] != cell.get("experiment") and solvers <= set(entry["solvers"])]
