"""The five papers' statements judged by one written rule from the committed H200 data (issue 39).

``benchmarks/papers/findings.yaml`` holds every statement (id, paper, section, our wording, kind, the
configurations and metric it rests on, the paper's value and the rule's parameters); :func:`judge` computes each
measured statement's verdict from the native summaries and the samples kept in
``benchmarks/archive/papers-native-h200.tar.xz``; :func:`render` writes ``benchmarks/papers/findings.md``.
The rule itself is written out in ``benchmarks/papers/README.md`` and at the top of the generated file.

    python -m gpusp.report.findings [--root DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import itertools
import json
import math
import tarfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..atomic import atomic_open
from .compare import _resampled_medians
from .findings_cells import cell_specs, combos, expand_cells, fill, label_of, named, replicates_of
from .metrics import LIST_METRIC, metric_values

FINDINGS_YAML = "benchmarks/papers/findings.yaml"
FINDINGS_MD = "benchmarks/papers/findings.md"
NATIVE = "benchmarks/papers/native"
FORMULAS = "benchmarks/papers"  # scripts whose functions compute a figure without a device (experiment 'formula')
ARCHIVES = {"native": "benchmarks/archive/papers-native-h200.tar.xz"}
DEVICE_TABLE = "papers/native/r39device/round-device.csv"  # in the native archive
HOLDS, NOT_HOLD, INCONCLUSIVE, NOT_RUN, NOT_SCORED = (
    "holds", "does not hold", "inconclusive", "not run", "not scored")
VERDICTS = (HOLDS, NOT_HOLD, INCONCLUSIVE, NOT_RUN, NOT_SCORED)
KINDS = ("measured", "design", "speculation")
EXACT_METRICS = {"iterations"}  # counts of the algorithm, the same in every run: no trial minimum (and list counters)
COUNTS = ("record", "device", "formula", "profile")  # sources other than a native experiment's samples


class FindingsError(ValueError):
    """A statement of findings.yaml that the data or the schema cannot resolve, named by its id."""


@dataclass(frozen=True)
class Rule:
    factor: float = 2.0        # a stated value v (or range lo..hi) is met by a ratio within [lo / f, hi * f]
    slight: float = 1.5        # "slightly", "a bit": a ratio in (1, slight]
    large: float = 1.5         # "far", "huge", "greatly", "dramatically", "considerable": a ratio of at least large
    same: float = 1.10         # "the same", "overlap": a ratio within [1 / same, same]
    min_trials: int = 5        # fewer timed samples of any configuration: inconclusive (n trials)
    resamples: int = 1000      # bootstrap resamples of each configuration's samples, within each source
    confidence: float = 0.95   # percentile interval
    seed: int = 39


@dataclass
class Quantity:
    """One configuration's metric (or a product ratio of several) with its bootstrap distribution."""
    label: str
    value: float
    boot: np.ndarray
    trials: int
    exact: bool = False

    def interval(self, rule: Rule) -> tuple[float, float]:
        if self.exact:  # a count: no spread (and an infinite ratio of counts stays infinite)
            return self.value, self.value
        tail = (1 - rule.confidence) / 2
        low, high = np.quantile(self.boot, [tail, 1 - tail])
        return float(low), float(high)


@dataclass
class Cell:
    label: str
    verdict: str
    why: str
    numbers: str
    trials: int | None = None


@dataclass
class Row:
    id: str
    paper: str
    section: str
    statement: str
    kind: str
    paper_value: str
    window: str
    verdict: str
    cells: list[Cell] = field(default_factory=list)
    note: str = ""
    old: dict | None = None


# --- the data ------------------------------------------------------------------------------------------------
class Store:
    """The committed data: native summaries (in the tree), samples and records (in the archives), read once."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._members: dict[str, dict[str, bytes]] = {}
        self._samples: dict[str, pd.DataFrame] = {}
        self._summaries: dict[str, pd.DataFrame] = {}
        self._scripts: dict[str, object] = {}
        self._profiles: dict[str, pd.DataFrame] = {}

    def member(self, archive: str, name: str) -> bytes:
        if archive not in self._members:
            with tarfile.open(self.root / ARCHIVES[archive], "r:xz") as tar:
                self._members[archive] = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
        try:
            return self._members[archive][name]
        except KeyError:
            raise FindingsError(f"{ARCHIVES[archive]} has no member {name}") from None

    def formula(self, script: str, function: str, argument: str) -> float:
        """``function(argument)`` of the committed script ``benchmarks/papers/<script>.py`` (argument read as YAML)."""
        if script not in self._scripts:
            path = self.root / FORMULAS / f"{script}.py"
            if not path.is_file():
                raise FindingsError(f"no script {path}")
            spec = importlib.util.spec_from_file_location(f"findings_formula_{script}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            self._scripts[script] = module
        if not callable(fn := getattr(self._scripts[script], function, None)):
            raise FindingsError(f"{FORMULAS}/{script}.py has no function {function}")
        return float(fn(yaml.safe_load(argument)))

    def profile(self, table: str, solver: str, graph: str, column: str) -> float:
        """``column`` of the row (solver, graph) of the profiler table ``native/<table>``
        (benchmarks/papers/ncu_traffic.py's output)."""
        path = self.root / NATIVE / table
        if table not in self._profiles:  # read once: a row's cells ask the same table
            if not path.is_file():
                raise FindingsError(f"no profile {path}")
            self._profiles[table] = pd.read_csv(path)
        frame = self._profiles[table]
        hit = frame[(frame["solver"] == solver) & (frame["graph"] == graph)]
        if len(hit) != 1 or column not in frame:
            raise FindingsError(f"{path}: {len(hit)} rows of {solver} on {graph}" if len(hit) != 1 else
                                f"{path} has no column {column}")
        return float(hit[column].iloc[0])

    def summary(self, experiment: str) -> pd.DataFrame:
        if experiment not in self._summaries:
            path = self.root / NATIVE / experiment / "summary.csv"
            if not path.exists():
                raise FindingsError(f"no summary {path}")
            self._summaries[experiment] = pd.read_csv(path, dtype={"params": str})
        return self._summaries[experiment]

    def samples(self, experiment: str) -> pd.DataFrame:
        if experiment not in self._samples:
            raw = self.member("native", f"papers/native/{experiment}/samples.csv.gz")
            frame = pd.read_csv(io.BytesIO(raw), compression="gzip", dtype={"params": str})
            self._samples[experiment] = frame[frame["status"] == "ok"]
        return self._samples[experiment]


def _split_config(spec: str, default: str | None) -> tuple[str, list[str], float]:
    """'[experiment:]graph|solver|params[ *scale]' -> (experiment, [graph, solver, params], scale)."""
    scale = 1.0
    if " *" in spec:
        spec, factor = spec.split(" *")
        scale = float(factor)
    experiment, _, rest = spec.rpartition(":") if ":" in spec.split("|")[0] else (default, None, spec)
    if not experiment:
        raise FindingsError(f"{spec}: no experiment named")
    return experiment, rest.split("|"), scale


def config_rows(store: Store, spec: str, default: str | None) -> pd.DataFrame:
    """The summary rows a configuration names (exactly one for a native experiment)."""
    experiment, keys, _ = _split_config(spec, default)
    if experiment in COUNTS:
        return pd.DataFrame([{"spec": spec}])
    summary = store.summary(experiment)
    graph, solver, params = keys
    return summary[(summary["graph"] == graph) & (summary["solver"] == solver) & (summary["params"] == params)]


def measure(store: Store, spec: str, default: str | None, metric: str, rule: Rule) -> Quantity | None:
    """The configuration's metric with its bootstrap medians; None when the configuration has no data."""
    experiment, keys, scale = _split_config(spec, default)
    configuration = "|".join([experiment, *keys])  # the label and the scale are no part of what was measured
    seed = [rule.seed, zlib.crc32(f"{configuration}\x1f{metric}".encode())]
    if experiment == "record":  # one serial CPU record of native/cpu/
        record = json.loads(store.member("native", f"papers/native/cpu/{keys[0]}"))
        values = np.array([s for run in record["runs"] for s in run["timings"]["samples_ms"]], float)
        strata = np.zeros(len(values))
    elif experiment == "device":  # device time of replayed CUDA graphs (round_floor.py --device-repeats), a row a sample
        table = pd.read_csv(io.BytesIO(store.member("native", DEVICE_TABLE)))
        solver, rounds = keys
        hit = table[(table["solver"] == solver) & (table["rounds"] == rounds) & (table["launcher"] == "native")]
        values, strata = hit["device_ms"].to_numpy(float), np.zeros(len(hit))
    elif experiment == "formula":  # arithmetic of a committed script: exact, like a count
        values, strata = np.array([store.formula(*keys)]), np.zeros(1)
    elif experiment == "profile":  # a profiler's count (bytes) of one profiled run: exact, like a count
        values, strata = np.array([store.profile(*keys)]), np.zeros(1)
    else:
        graph, solver, params = keys
        samples = store.samples(experiment)
        rows = samples[(samples["graph"] == graph) & (samples["solver"] == solver) & (samples["params"] == params)]
        try:
            values, strata, trials = metric_values(rows, metric)
        except ValueError as err:
            raise FindingsError(str(err)) from None
    if experiment in COUNTS:
        trials = len(values)
    if len(values) == 0:
        return None
    exact = metric in EXACT_METRICS or bool(LIST_METRIC.fullmatch(metric)) or experiment in ("formula", "profile")
    return from_samples(spec, values * scale, rule, seed, strata, trials, exact=exact)


def from_samples(label: str, values, rule: Rule, seed, strata=None, trials: int | None = None,
                 exact: bool = False) -> Quantity:
    """The median of ``values`` with its bootstrap medians (resampled within each stratum)."""
    values = np.asarray(values, float)
    strata = np.zeros(len(values)) if strata is None else np.asarray(strata)
    boot = (np.full(rule.resamples, float(np.median(values))) if exact or len(values) == 1 else
            _resampled_medians(values, strata, np.random.default_rng(seed), rule.resamples))
    return Quantity(label, float(np.median(values)), boot, len(values) if trials is None else trials, exact)


def ratio(num: list[Quantity], den: list[Quantity]) -> Quantity:
    with np.errstate(divide="ignore", invalid="ignore"):  # a count of 0 below: an infinite (or NaN) ratio
        value = float(np.divide(math.prod(q.value for q in num), math.prod(q.value for q in den)))
        boot = np.prod([q.boot for q in num], axis=0) / np.prod([q.boot for q in den], axis=0)
    parts = num + den
    return Quantity("/", value, boot, min(q.trials for q in parts), all(q.exact for q in parts))


# --- the rule ------------------------------------------------------------------------------------------------
def band(test: dict, rule: Rule) -> tuple[float, float]:
    """The accepted range of a ratio claim (numerator over denominator; above 1 the claim's winner is the
    denominator): from the paper's value or range, a bound, or the words' thresholds."""
    excess = bool(test.get("excess"))
    scale = (lambda v, f: 1 + (v - 1) * f) if excess else (lambda v, f: v * f)
    if "paper" in test:
        lo, hi = (test["paper"], test["paper"]) if not isinstance(test["paper"], list) else test["paper"]
        return max(1.0, scale(lo, 1 / rule.factor)), scale(hi, rule.factor)
    if "at_least" in test:
        return float(test["at_least"]), math.inf
    words = {"slight": (1.0, rule.slight), "large": (rule.large, math.inf), "same": (1 / rule.same, rule.same),
             "faster": (1.0, math.inf)}
    return words[test.get("words", "faster")]


def _resolved(a: Quantity, b: Quantity, rule: Rule) -> int:
    """-1 when a is resolved faster (a's interval wholly below b's), +1 when slower, 0 when they overlap."""
    (alo, ahi), (blo, bhi) = a.interval(rule), b.interval(rule)
    return -1 if ahi < blo else 1 if alo > bhi else 0


def _few(quantities: list[Quantity], rule: Rule) -> int | None:
    """The smallest trial count when it is below the rule's minimum (exact counts excepted), else None."""
    timed = [q.trials for q in quantities if not q.exact]
    return min(timed) if timed and min(timed) < rule.min_trials else None


def judge_ratio(num: list[Quantity], den: list[Quantity], test: dict, rule: Rule) -> tuple[str, str]:
    r = ratio(num, den)
    lo, hi = band(test, rule)
    rlo, rhi = r.interval(rule)
    winner = (_resolved(den[0], num[0], rule) if len(num) == len(den) == 1 else
              (-1 if rlo > 1 else 1 if rhi < 1 else 0))
    directional = lo >= 1
    if (few := _few(num + den, rule)) is not None:
        return INCONCLUSIVE, _trials(few)
    if directional and winner == 1:
        return NOT_HOLD, "the other side is resolved faster"
    if rhi < lo or rlo > hi:
        return NOT_HOLD, f"interval outside {_band_text(lo, hi)}"
    if lo <= rlo and rhi <= hi and (winner == -1 or not directional):
        return HOLDS, f"within {_band_text(lo, hi)}"
    return INCONCLUSIVE, "intervals overlap" if winner == 0 else f"interval straddles {_band_text(lo, hi)}"


def judge_order(points: list[Quantity], rule: Rule) -> tuple[str, str]:
    """``points`` fastest first: holds when every neighbour pair is resolved in that order."""
    if (few := _few(points, rule)) is not None:
        return INCONCLUSIVE, _trials(few)
    steps = [_resolved(a, b, rule) for a, b in itertools.pairwise(points)]
    if 1 in steps:
        return NOT_HOLD, f"step {steps.index(1) + 1} resolved the other way"
    return (HOLDS, "every step resolved") if all(s == -1 for s in steps) else (INCONCLUSIVE, "intervals overlap")


def judge_trend(points: list[Quantity], rule: Rule) -> tuple[str, str]:
    """``points`` in the order the claim says they rise: the ends decide, a resolved step back makes it
    inconclusive."""
    if (few := _few(points, rule)) is not None:
        return INCONCLUSIVE, _trials(few)
    ends = _resolved(points[0], points[-1], rule)
    if ends == 1:
        return NOT_HOLD, "the last point is resolved below the first"
    backs = sum(_resolved(a, b, rule) == 1 for a, b in itertools.pairwise(points))
    if ends == -1 and not backs:
        return HOLDS, "the ends resolved, no step back"
    return INCONCLUSIVE, f"{backs} resolved step(s) back" if backs else "the ends overlap"


def judge_fastest(target: Quantity, others: list[Quantity], rule: Rule, negate: bool = False) -> tuple[str, str]:
    """The target is resolved below every other (``negate``: some other is resolved below the target)."""
    if (few := _few([target, *others], rule)) is not None:
        return INCONCLUSIVE, _trials(few)
    sides = [_resolved(target, o, rule) for o in others]
    beaten, beats_all = 1 in sides, all(s == -1 for s in sides)
    if negate:
        beaten, beats_all = beats_all, beaten
    if beaten:
        return NOT_HOLD, "resolved the other way"
    return (HOLDS, "resolved against every other") if beats_all else (INCONCLUSIVE, "intervals overlap")


def judge_spread(points: list[Quantity], test: dict, rule: Rule) -> tuple[str, str, Quantity]:
    """max / min of the medians, resample by resample, against the claim's band."""
    boot = np.max([q.boot for q in points], axis=0) / np.min([q.boot for q in points], axis=0)
    values = [q.value for q in points]
    spread = Quantity("max/min", max(values) / min(values), boot, min(q.trials for q in points))
    lo, hi = band(test, rule)
    slo, shi = spread.interval(rule)
    if (few := _few(points, rule)) is not None:
        return INCONCLUSIVE, _trials(few), spread
    if shi < lo or slo > hi:
        return NOT_HOLD, f"interval outside {_band_text(lo, hi)}", spread
    if lo <= slo and shi <= hi:
        return HOLDS, f"within {_band_text(lo, hi)}", spread
    return INCONCLUSIVE, f"interval straddles {_band_text(lo, hi)}", spread


def judge_winners(groups: list[tuple[str, list[Quantity]]], rule: Rule) -> tuple[str, str, list[str]]:
    """A claim that no one is best everywhere: each group's winner is the point resolved below every other in it;
    holds when two groups have different resolved winners, does not hold when every group resolves the same one."""
    if (few := _few([q for _, points in groups for q in points], rule)) is not None:
        return INCONCLUSIVE, _trials(few), []
    winners = []
    for _, points in groups:
        best = [q for q in points if all(_resolved(q, o, rule) == -1 for o in points if o is not q)]
        winners.append(best[0].label if best else None)
    resolved = {w for w in winners if w is not None}
    shown = [f"{label}: {w or 'none resolved'}" for (label, _), w in zip(groups, winners)]
    if len(resolved) >= 2:
        return HOLDS, f"{len(resolved)} different resolved winners", shown
    if len(resolved) == 1 and None not in winners:
        return NOT_HOLD, f"{next(iter(resolved))} resolved fastest in every group", shown
    return INCONCLUSIVE, "intervals overlap", shown


def _trials(n: int) -> str:
    return f"{n} trial{'s' * (n != 1)}"


def _band_text(lo: float, hi: float) -> str:
    return f"[{_num(lo)}, {'∞' if math.isinf(hi) else _num(hi)}]"


def _num(x: float) -> str:
    if math.isinf(x) or math.isnan(x):
        return "∞" if x > 0 else "-∞" if x < 0 else "n/a"
    if x == 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(abs(x))))
    return f"{x:,.{digits}f}" if abs(x) < 1000 else f"{x:,.0f}"


# --- statements -> rows --------------------------------------------------------------------------------------
def _quantity(store: Store, item, cell: dict, rule: Rule) -> Quantity:
    if isinstance(item, dict):
        q = ratio([_quantity(store, s, cell, rule) for s in item["num"]],
                  [_quantity(store, s, cell, rule) for s in item["den"]])
        q.label = item.get("name", "ratio")
        return q
    name, spec = named(item)
    metric = item.partition(" @")[2] or cell.get("metric", "time_ms")  # ' @metric': this item's own metric
    q = measure(store, spec, cell.get("experiment"), metric, rule)
    if q is None:
        raise FindingsError(f"{spec} ({metric}): no samples")
    q.label = name
    return q


def _show(q: Quantity, rule: Rule, unit: str = "") -> str:
    if q.exact or q.trials < 2:
        return f"{q.label} {_num(q.value)}{unit} (n = {q.trials})" if not q.exact else f"{q.label} {_num(q.value)}"
    lo, hi = q.interval(rule)
    return f"{q.label} {_num(q.value)}{unit} [{_num(lo)}, {_num(hi)}] (n = {q.trials})"


def judge_cell(store: Store, cell: dict, rule: Rule) -> Cell:
    if "not_run" in cell:
        return Cell(cell["label"], NOT_RUN, cell["not_run"], "")
    kind = cell["type"]

    def get(items):
        return [_quantity(store, i, cell, rule) for i in items]

    unit = cell.get("unit", "" if cell.get("metric") in ("iterations", "h2d_fraction") else " ms")
    if kind == "ratio":
        num, den = get(cell["num"]), get(cell["den"])
        verdict, why = judge_ratio(num, den, cell, rule)
        r = ratio(num, den)
        lo, hi = r.interval(rule)
        shown = "; ".join(_show(q, rule, unit) for q in num + den)
        text = f"{shown}; ratio {_num(r.value)}" + ("" if r.exact or r.trials < 2 else f" [{_num(lo)}, {_num(hi)}]")
        return Cell(cell["label"], verdict, why, text, r.trials)
    if kind in ("order", "trend", "spread"):
        points = get(cell["points"])
        shown = [_show(q, rule, "" if isinstance(item, dict) else unit) for q, item in zip(points, cell["points"])]
        text = (" < " if kind == "order" else " → ").join(shown)  # a point given as num / den is a ratio: no unit
        if kind == "spread":
            verdict, why, spread = judge_spread(points, cell, rule)
            text += f"; max / min {_num(spread.value)}"
        else:
            verdict, why = (judge_order if kind == "order" else judge_trend)(points, rule)
        return Cell(cell["label"], verdict, why, text, min(q.trials for q in points))
    if kind in ("fastest", "slowest", "not_fastest"):
        target, others = get([cell["target"]])[0], get(cell["others"])
        if kind == "slowest":  # the target resolved above every other: the same test with the signs turned
            def flip(q):
                return Quantity(q.label, -q.value, -q.boot, q.trials, q.exact)

            verdict, why = judge_fastest(flip(target), [flip(o) for o in others], rule)
        else:
            verdict, why = judge_fastest(target, others, rule, negate=kind == "not_fastest")
        text = _show(target, rule, unit) + " vs " + "; ".join(_show(q, rule, unit) for q in others)
        return Cell(cell["label"], verdict, why, text, min(q.trials for q in [target, *others]))
    if kind == "winners":  # the same points in every combination of ``over`` (``divides`` as a grid's)
        groups = [(label_of(c), get(fill(cell["points"], c))) for c in combos(cell["over"], cell.get("divides"))]
        verdict, why, shown = judge_winners(groups, rule)
        return Cell(cell["label"], verdict, why, "; ".join(shown),
                    min(q.trials for _, points in groups for q in points))
    if kind == "value":  # our figure against the paper's, in the same unit: paper / factor .. paper x factor
        q = get([cell["point"]])[0]
        paper = float(cell.get("paper", cell.get("at_least", 0)))
        lo, hi = ((1 / rule.factor, rule.factor) if "paper" in cell else (1.0, math.inf))
        scaled = Quantity(q.label, q.value / paper, q.boot / paper, q.trials, q.exact)
        slo, shi = scaled.interval(rule)
        if (few := _few([q], rule)) is not None:
            verdict, why = INCONCLUSIVE, _trials(few)
        elif shi < lo or slo > hi:
            verdict, why = NOT_HOLD, f"ours / paper outside {_band_text(lo, hi)}"
        else:
            verdict, why = ((HOLDS, f"within {_band_text(lo, hi)}") if lo <= slo and shi <= hi else
                            (INCONCLUSIVE, f"interval straddles {_band_text(lo, hi)}"))
        return Cell(cell["label"], verdict, why, f"{_show(q, rule, unit)}; ours / paper {_num(scaled.value)}", q.trials)
    raise FindingsError(f"unknown test type {kind}")


def agree(cell: Cell, others: list[tuple[str, Cell]]) -> Cell:
    """One cell judged on several runs (``others``: each other run's name and its judged cell): the verdict every
    run gives, else inconclusive (the runs disagree)."""
    numbers = cell.numbers + "".join(f" ({name}: {again.numbers})" for name, again in others)
    trials = min((t for t in (cell.trials, *(again.trials for _, again in others)) if t is not None), default=None)
    if all(again.verdict == cell.verdict for _, again in others):
        likewise = f"; likewise in {', '.join(name for name, _ in others)}" if others else ""
        return Cell(cell.label, cell.verdict, cell.why + likewise, numbers, trials)
    there = ", ".join(f"{again.verdict} in {name}" for name, again in others)
    return Cell(cell.label, INCONCLUSIVE, f"the runs disagree: {cell.verdict} here, {there}", numbers, trials)


def judge_replicated(store: Store, cell: dict, rule: Rule) -> Cell:
    """A cell judged on its run and on each replicate that holds all of its configurations."""
    judged, specs = judge_cell(store, cell, rule), cell_specs(cell)
    others = [(run, judge_cell(store, {**cell, "experiment": run}, rule)) for run in replicates_of(cell)
              if all(len(config_rows(store, spec, run)) for spec in specs)]
    return agree(judged, others)


def judge_statement(store: Store, item: dict, rule: Rule) -> list[Row]:
    """One row, or one row per group of cells with the same verdict (a split result is split)."""
    base = Row(str(item["id"]), str(item["paper"]), item["section"], item["statement"].strip(), item["kind"],
               str(item.get("paper_value", "")), item.get("window", ""), NOT_SCORED,
               note=item.get("note", "").strip(), old=item.get("old"))
    if item["kind"] not in KINDS:
        raise FindingsError(f"{base.id}: kind {item['kind']!r} is none of {KINDS}")
    if item["kind"] != "measured":
        base.cells = [Cell("", NOT_SCORED, item["kind"], "")]
        return [base]
    if "not_run" in item:
        base.verdict, base.cells = NOT_RUN, [Cell("", NOT_RUN, item["not_run"], "")]
        return [base]
    try:
        cells = [judge_replicated(store, cell, rule) for cell in expand_cells(item["test"])]
    except (FindingsError, KeyError) as err:
        raise FindingsError(f"finding {base.id}: {err}") from err
    groups: dict[str, list[Cell]] = {}
    for cell in cells:
        groups.setdefault(cell.verdict, []).append(cell)
    rows = []
    for verdict, members in groups.items():
        # a grid cell's label ('n = 80, B = 8') holds commas: such labels are set apart by semicolons
        sep = "; " if any("," in c.label for c in members) else ", "
        label = "" if len(groups) == 1 else " (" + sep.join(c.label for c in members) + ")"
        rows.append(Row(**{**base.__dict__, "id": base.id + label, "verdict": verdict, "cells": members}))
    return rows


def load(root: Path) -> tuple[Rule, list[dict]]:
    data = yaml.safe_load((Path(root) / FINDINGS_YAML).read_text())
    return Rule(**data.get("rule", {})), data["findings"]


def judge(root: Path) -> tuple[Rule, list[Row]]:
    rule, items = load(root)
    ids = [str(i["id"]) for i in items]
    if len(set(ids)) != len(ids):
        raise FindingsError(f"duplicate ids in {FINDINGS_YAML}: {sorted({i for i in ids if ids.count(i) > 1})}")
    store = Store(root)
    return rule, [row for item in items for row in judge_statement(store, item, rule)]


# --- findings.md ---------------------------------------------------------------------------------------------
PAPERS = {"000": "Bodra", "001": "Okuyama, Ino, Hagihara", "002": "Zuccato & Lena", "003": "Sudhanan", "004": "An"}
COMMAND = "PYTHONPATH=src python -m gpusp.report.findings"


def rule_text(rule: Rule) -> str:
    return f"""\
Every **measured** statement is judged by one rule; **design** and **speculation** statements are listed, not
scored. A configuration's figure is the median of its timed samples; its interval is the {rule.confidence:.0%}
percentile interval of {rule.resamples} bootstrap medians, resampled with replacement within each source, seeded
per configuration ({rule.seed} and a CRC-32 of its experiment, graph, solver, parameters and metric), so a row never
depends on the others and two rows naming one configuration share its interval. A ratio's interval
comes from the same resamples, numerator over denominator.

* **Fewer than {rule.min_trials} trials** (timed samples; for an upload time, distinct uploads) in any
  configuration of a row: **inconclusive (n trials)**, whatever the figures. Counts (rounds, launches, a
  profiler's bytes) and figures computed by a committed script of `{FORMULAS}/` (no device) are exact and need no
  trials.
* **Ratio** ("A is x times B", "A is faster than B"): the accepted band is the paper's value v (or range lo..hi)
  widened by a factor {rule.factor:g}, [max(1, lo / {rule.factor:g}), hi x {rule.factor:g}]; for an overhead the
  factor applies to the excess (1 + (v - 1) / {rule.factor:g} ...); a bound "at least b" is [b, ∞); words without a
  number: "slightly", "a bit" (1, {rule.slight:g}]; "far", "huge", "greatly", "dramatically", "considerable"
  [{rule.large:g}, ∞); "the same", "overlap" [1 / {rule.same:g}, {rule.same:g}]. **Holds**: the claimed winner's
  interval lies wholly below the other's and the ratio's interval lies inside the band. **Does not hold**: the other
  side is resolved faster, or the ratio's interval lies wholly outside the band. Otherwise **inconclusive**.
* **Order** (fastest first) holds when every neighbouring pair is resolved in that order and does not hold when one
  pair is resolved the other way; **fastest / slowest** the same against every other; **trend** (rises along a
  parameter): the first and last points decide, a resolved step back leaves it inconclusive; **spread** (worst over
  best of a set) is a ratio with the band above; a **value** (ours against the paper's figure, one unit) holds when
  ours / paper lies within [1 / {rule.factor:g}, {rule.factor:g}] (a bound "at least b": ours / b at least 1);
  **winners** ("no one is best everywhere", over groups of settings): a group's winner is the point resolved below
  every other in it; holds when two groups resolve different winners, does not hold when every group resolves the
  same one.
* Overlapping intervals: **inconclusive**. A statement whose cells (graphs, sizes) get different verdicts is split
  into one row per verdict. **Not run**: no data, with the reason.
* **Several runs of the same code** (a row's `replicate`): a cell is judged on each run that holds its
  configurations; it keeps a verdict every run gives and is **inconclusive** (the runs disagree) otherwise, since
  the resampling within one run does not see the drift between runs."""


def tally(rows: list[Row]) -> dict[str, int]:
    return {v: sum(r.verdict == v for r in rows) for v in VERDICTS}


def _cell_text(cell: Cell) -> str:
    label = f"**{cell.label}**: " if cell.label else ""
    return f"{label}{cell.numbers}".strip()


def _verdict_text(row: Row) -> str:
    reasons = sorted({c.why for c in row.cells if c.why})
    if row.verdict == NOT_SCORED:
        return f"not scored ({row.kind})"
    return f"**{row.verdict}** ({'; '.join(reasons)})" if reasons else f"**{row.verdict}**"


def _escape(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def raw_data_line(root: Path) -> str:
    """The write-up's first line after its title: the archive of the samples it reads, with its checksum."""
    name = Path(ARCHIVES["native"]).name
    sums = dict(line.split()[::-1] for line in (Path(root) / "benchmarks/archive/SHA256SUMS").read_text().splitlines()
                if line.strip())
    return (f"**Raw data**: [`../archive/{name}`](../archive/{name}) (sha256 `{sums[name]}`, as in "
            f"`../archive/SHA256SUMS`) holds the native re-run's samples and serial CPU records; the summaries stay "
            f"in the tree.")


def render(rule: Rule, rows: list[Row], root: Path = Path(".")) -> str:
    out = ["# The papers' findings against our measurements (issue 39)", "", raw_data_line(root), "",
           f"**Generated** by `{COMMAND}` from `{FINDINGS_YAML}` (every statement of the five reports) and the",
           "committed data; do not edit it by hand: `tests/report/test_findings.py` fails when it differs from a",
           "fresh run. Every figure is an H200's (`benchmarks/papers/native/README.md`): the summaries in",
           f"`{NATIVE}/<experiment>/summary.csv`, the samples in `{ARCHIVES['native']}`, with device time of",
           f"replayed CUDA graphs (`{DEVICE_TABLE}`) and serial CPU records;",
           f"figures of experiment `formula` are arithmetic without a device, by a script of `{FORMULAS}/`.",
           "Figures are in ms unless a row says otherwise; [a, b] is the interval; n the trials.", "",
           "## The rule", "", rule_text(rule), "", "## Tally", "",
           "| paper | statements | rows | " + " | ".join(VERDICTS) + " |",
           "|---|---:|---:|" + "---:|" * len(VERDICTS)]
    for paper in [*PAPERS, None]:
        mine = [r for r in rows if paper is None or r.paper == paper]
        statements = len({r.id.split(" (")[0] for r in mine})
        name = f"{paper} {PAPERS[paper]}" if paper else "**all**"
        counts = tally(mine)
        out.append(f"| {name} | {statements} | {len(mine)} | " + " | ".join(str(counts[v]) for v in VERDICTS) + " |")
    for paper, author in PAPERS.items():
        out += ["", f"## Paper {paper}: {author}", "",
                "| id | statement (our words) | kind | paper | window, metric | ours | verdict |",
                "|---|---|---|---|---|---|---|"]
        for r in (r for r in rows if r.paper == paper):
            ours = "<br>".join(_escape(_cell_text(c)) for c in r.cells if c.numbers)
            note = f"<br>*{_escape(r.note)}*" if r.note else ""
            out.append(f"| {_escape(r.id)} | {_escape(r.statement)} | {r.kind} | {_escape(r.paper_value)} | "
                       f"{_escape(r.window)} | {ours}{note} | {_escape(_verdict_text(r))} |")
    out += ["", "## Verdicts changed from the hand-written table (62 rows: 29 hold, 20 do not, 13 cannot be tested)",
            "", "| id | was | now | why |", "|---|---|---|---|"]
    for r in rows:
        if r.old and r.old.get("verdict") != r.verdict:
            reasons = "; ".join(sorted({c.why for c in r.cells if c.why})) or r.kind
            out.append(f"| {_escape(r.id)} | {r.old.get('id', '')}: {r.old['verdict']} | {r.verdict} | "
                       f"{_escape(reasons)} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpusp.report.findings",
                                     description="Judge the papers' findings and write findings.md.")
    parser.add_argument("--root", type=Path, default=Path("."), help="the repository root (default: .)")
    parser.add_argument("--out", type=Path, help=f"the file to write (default: ROOT/{FINDINGS_MD})")
    args = parser.parse_args(argv)
    rule, rows = judge(args.root)
    out = args.out or args.root / FINDINGS_MD
    with atomic_open(out) as fh:
        fh.write(render(rule, rows, args.root))
    counts = tally(rows)
    print(f"{out}: {len(rows)} rows; " + ", ".join(f"{counts[v]} {v}" for v in VERDICTS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
