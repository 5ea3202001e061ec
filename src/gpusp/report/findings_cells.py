"""The cells of a test in ``benchmarks/papers/findings.yaml``: a grid of variables or explicit cells expanded into
complete tests, the experiment each cell reads (``experiment_at``, a second run of the same code as a
``replicate``) and the configurations it names. Pure functions of the YAML's dicts; :mod:`gpusp.report.findings`
judges the cells."""

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


def experiment_at(test: dict, combo: dict) -> str | None:
    """The experiment a combination of variables reads when it is not the test's own: that of the first entry
    of ``experiment_at: [{experiment: name, variable: [values], ...}, ...]`` whose every variable holds one of
    its values."""
    for entry in test.get("experiment_at", []):
        if all(combo.get(k) in values for k, values in entry.items() if k != "experiment"):
            return entry["experiment"]
    return None


def expand_cells(test: dict) -> list[dict]:
    """The test's cells, each a complete test: explicit ``cells`` (each overriding fields and naming ``vars``)
    or a ``grid`` of variables (``divides: [a, b]`` keeps the combinations where a divides b); a cell whose
    variables ``experiment_at`` names reads that experiment."""
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
        if (experiment := experiment_at(test, names)) is not None:
            merged["experiment"] = experiment
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
    if "over" in cell:  # a winners cell: its points in every combination, each named with its own experiment
        return [f"{experiment}:{spec}" if (experiment := experiment_at(cell, c)) else spec
                for c in combos(cell["over"], cell.get("divides"))
                for spec in cell_specs({"points": fill(cell["points"], c)})]
    specs = []
    for key in ("num", "den", "points", "others"):
        for item in cell.get(key, []):
            specs += (item.get("num", []) + item.get("den", [])) if isinstance(item, dict) else [item]
    specs += [cell[key] for key in ("target", "point") if key in cell]
    return [named(s)[1] for s in specs]


def replicate_of(cell: dict) -> str | None:
    """The other run a cell is judged on as well: ``replicate: {experiment: name, solvers: [...]}`` names a second
    run of the same code, which counts for a cell whose every configuration is one of those solvers' and is read
    from the cell's own experiment (not one ``experiment_at`` or a spec's prefix names)."""
    replicate = cell.get("replicate")
    if not replicate or cell.get("experiment") == replicate["experiment"]:
        return None
    specs = cell_specs(cell)
    if any(":" in spec.split("|")[0] or spec.split("|")[1] not in replicate["solvers"] for spec in specs):
        return None
    return replicate["experiment"]
