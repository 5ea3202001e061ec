"""The papers' findings (benchmarks/papers/findings.yaml -> findings.md): every scored cell resolves to committed
data, the committed findings.md is what the program writes from it, and the rule's edge cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpusp.report import findings as f
from gpusp.report.metrics import metric_values

ROOT = Path(__file__).resolve().parents[2]
RULE = f.Rule()


@pytest.fixture(scope="module")
def items():
    return f.load(ROOT)[1]


@pytest.fixture(scope="module")
def store():
    return f.Store(ROOT)


def q(values, label="x", seed=1, exact=False):
    return f.from_samples(label, values, RULE, seed, exact=exact)


def test_the_committed_findings_md_is_what_the_program_writes(tmp_path):
    out = tmp_path / "findings.md"
    assert f.main(["--root", str(ROOT), "--out", str(out)]) == 0
    committed = (ROOT / f.FINDINGS_MD).read_text()
    assert committed == out.read_text(), (
        f"{f.FINDINGS_MD} is stale or was edited by hand: regenerate it with `{f.COMMAND}`")


def test_every_scored_cell_names_exactly_one_configuration_with_samples(items, store):
    checked = 0
    for item in items:
        if item["kind"] != "measured" or "not_run" in item:
            continue
        assert "test" in item, f"{item['id']}: a measured statement needs a test or a not_run reason"
        for cell in f.expand_cells(item["test"]):
            if "not_run" in cell:
                continue
            for spec in f.cell_specs(cell):
                rows = f.config_rows(store, spec, cell.get("experiment"))
                assert len(rows) == 1, f"{item['id']} {cell['label']}: {spec} matches {len(rows)} summary rows"
                quantity = f.measure(store, spec, cell.get("experiment"), cell.get("metric", "time_ms"), RULE)
                assert quantity is not None, f"{item['id']}: {spec} has no samples"
                if cell.get("metric", "time_ms") == "time_ms" and "median_ms" in rows:
                    # the figure printed is the summary's median: the samples and the summary agree
                    scale = f._split_config(spec, cell.get("experiment"))[2]
                    assert quantity.value / scale == pytest.approx(rows["median_ms"].iloc[0], rel=1e-9), spec
                checked += 1
                for run in f.replicates_of(cell):  # a run of the same code counts where it holds the configuration
                    if len(f.config_rows(store, spec, run)):
                        assert f.measure(store, spec, run, cell.get("metric", "time_ms"), RULE) is not None, (run, spec)
    assert checked > 100


def test_every_statement_has_its_fields_and_a_unique_id(items):
    ids = [str(i["id"]) for i in items]
    assert len(ids) == len(set(ids))
    for item in items:
        assert item["kind"] in f.KINDS and item["paper"] in f.PAPERS and item["statement"].strip(), item["id"]
        if item["kind"] == "measured":
            assert "test" in item or "not_run" in item, item["id"]


def test_a_speculation_is_listed_never_scored(store):
    item = {"id": "x", "paper": "004", "section": "s", "statement": "a guess", "kind": "speculation",
            "test": {"type": "ratio", "num": ["nothing|a|b"], "den": ["nothing|c|d"]}}
    (row,) = f.judge_statement(store, item, RULE)
    assert row.verdict == f.NOT_SCORED


def test_an_unknown_kind_is_refused(store):
    with pytest.raises(f.FindingsError, match="kind"):
        f.judge_statement(store, {"id": "x", "paper": "000", "section": "s", "statement": "t", "kind": "vibe"}, RULE)


rng = np.random.default_rng(7)
FAST = 1.0 + 0.01 * rng.standard_normal(12)
SLOW = 2.0 + 0.02 * rng.standard_normal(12)


def test_same_winner_within_the_factor_holds():
    assert f.judge_ratio([q(SLOW)], [q(FAST)], {"paper": 2.5}, RULE)[0] == f.HOLDS


def test_the_opposite_winner_does_not_hold():
    assert f.judge_ratio([q(FAST)], [q(SLOW)], {"paper": 2.0}, RULE)[0] == f.NOT_HOLD
    assert f.judge_order([q(SLOW), q(FAST)], RULE)[0] == f.NOT_HOLD


def test_a_ratio_beyond_the_factor_does_not_hold():
    verdict, why = f.judge_ratio([q(SLOW)], [q(FAST)], {"paper": 10.0}, RULE)
    assert verdict == f.NOT_HOLD and "outside" in why


def test_overlapping_intervals_are_inconclusive():
    a, b = q(FAST, seed=1), q(FAST[::-1] + 0.001, seed=2)
    assert f.judge_ratio([a], [b], {"words": "faster"}, RULE)[0] == f.INCONCLUSIVE
    assert f.judge_order([a, b], RULE)[0] == f.INCONCLUSIVE
    assert f.judge_fastest(a, [b], RULE)[0] == f.INCONCLUSIVE


def test_fewer_than_five_trials_is_inconclusive_whatever_the_figures():
    verdict, why = f.judge_ratio([q(SLOW[:4])], [q(FAST)], {"paper": 2.0}, RULE)
    assert (verdict, why) == (f.INCONCLUSIVE, "4 trials")
    assert f.judge_ratio([q(FAST[:1])], [q(SLOW)], {"paper": 2.0}, RULE) == (f.INCONCLUSIVE, "1 trial")


def test_exact_counts_need_no_trials():
    assert f.judge_ratio([q([640.0], exact=True)], [q([20.0], exact=True)], {"paper": 32}, RULE)[0] == f.HOLDS


def test_a_trend_needs_its_ends_resolved_and_no_step_back():
    mid = 1.5 + 0.01 * rng.standard_normal(12)
    assert f.judge_trend([q(FAST), q(mid), q(SLOW)], RULE)[0] == f.HOLDS
    assert f.judge_trend([q(FAST), q(SLOW), q(mid)], RULE)[0] == f.INCONCLUSIVE
    assert f.judge_trend([q(SLOW), q(FAST)], RULE)[0] == f.NOT_HOLD


def test_no_one_best_everywhere_holds_on_two_resolved_winners_and_fails_on_one():
    def group(fast, label):
        points = [q(FAST if name == fast else SLOW, label=name, seed=i) for i, name in enumerate(("a", "b"))]
        return label, points

    verdict, why, shown = f.judge_winners([group("a", "B = 8"), group("b", "B = 16")], RULE)
    assert (verdict, shown) == (f.HOLDS, ["B = 8: a", "B = 16: b"])
    assert f.judge_winners([group("a", "B = 8"), group("a", "B = 16")], RULE)[0] == f.NOT_HOLD
    tied = ("B = 24", [q(FAST, label="a", seed=1), q(FAST[::-1] + 0.001, label="b", seed=2)])
    assert f.judge_winners([group("a", "B = 8"), tied], RULE)[:2] == (f.INCONCLUSIVE, "intervals overlap")
    assert f.judge_winners([group("a", "B = 8"), ("B = 32", [q(FAST[:1], label="a"), q(SLOW, label="b")])],
                           RULE)[:2] == (f.INCONCLUSIVE, "1 trial")


def test_the_word_bands_and_an_overhead_band():
    assert f.band({"words": "slight"}, RULE) == (1.0, RULE.slight)
    assert f.band({"paper": [1.03, 1.077], "excess": True}, RULE) == pytest.approx((1.015, 1.154))
    assert f.band({"paper": 0.5}, RULE) == (1.0, 1.0)  # a claimed winner never accepts the other side


def test_a_split_result_is_split_into_rows(monkeypatch, store):
    verdicts = iter([f.HOLDS, f.NOT_HOLD, f.HOLDS])
    monkeypatch.setattr(f, "judge_cell", lambda s, cell, r: f.Cell(cell["label"], next(verdicts), "", "n"))
    item = {"id": "9.9", "paper": "004", "section": "s", "statement": "t", "kind": "measured",
            "test": {"type": "ratio", "cells": [{"label": "a"}, {"label": "b"}, {"label": "c"}]}}
    rows = f.judge_statement(store, item, RULE)
    assert [(r.id, r.verdict) for r in rows] == [("9.9 (a, c)", f.HOLDS), ("9.9 (b)", f.NOT_HOLD)]


def test_a_split_rows_grid_labels_are_set_apart_by_semicolons(monkeypatch, store):
    """A grid cell's label carries commas ('n = 80, B = 8'): commas between cells would run the labels together."""
    monkeypatch.setattr(f, "judge_cell", lambda s, cell, r: f.Cell(
        cell["label"], f.NOT_HOLD if cell["label"] == "n = 80, B = 16" else f.HOLDS, "", "n"))
    item = {"id": "9.9", "paper": "002", "section": "s", "statement": "t", "kind": "measured",
            "test": {"type": "ratio", "num": ["v1=random-{n}|a|block_size-{B}"], "den": ["v2=random-{n}|b|block_size-{B}"],
                     "grid": {"n": [80, 160], "B": [8, 16]}}}
    rows = f.judge_statement(store, item, RULE)
    assert [(r.id, r.verdict) for r in rows] == [("9.9 (n = 80, B = 8; n = 160, B = 8; n = 160, B = 16)", f.HOLDS),
                                                  ("9.9 (n = 80, B = 16)", f.NOT_HOLD)]


def test_a_replicate_counts_only_for_cells_of_its_solvers_read_from_the_cells_own_run():
    replicate = [{"experiment": "old", "solvers": ["a", "b"]}, {"experiment": "same", "solvers": ["a", "b", "c"]}]
    cell = {"type": "ratio", "experiment": "new", "replicate": replicate, "num": ["g|a|x"], "den": ["g|b|x"]}
    assert f.replicates_of(cell) == ["old", "same"]
    assert f.replicates_of({**cell, "den": ["g|c|x"]}) == ["same"]  # c's code changed after old ran
    assert f.replicates_of({**cell, "experiment": "old"}) == ["same"]  # the cell reads old itself
    assert f.replicates_of({**cell, "den": ["other:g|b|x"]}) == []
    assert f.replicates_of({k: v for k, v in cell.items() if k != "replicate"}) == []


@pytest.mark.parametrize("verdicts, verdict", [
    ([f.HOLDS], f.HOLDS), ([f.HOLDS, f.HOLDS], f.HOLDS), ([f.NOT_HOLD] * 3, f.NOT_HOLD),
    ([f.HOLDS, f.NOT_HOLD], f.INCONCLUSIVE), ([f.NOT_HOLD, f.INCONCLUSIVE], f.INCONCLUSIVE),
    ([f.INCONCLUSIVE, f.HOLDS], f.INCONCLUSIVE), ([f.HOLDS, f.HOLDS, f.NOT_HOLD], f.INCONCLUSIVE)])
def test_several_runs_keep_only_a_verdict_all_give(verdicts, verdict):
    here, *there = verdicts
    others = [(f"run{i}", f.Cell("n = 80", v, "w", f"{i + 2} ms", 6 + i)) for i, v in enumerate(there)]
    cell = f.agree(f.Cell("n = 80", here, "w", "1 ms", 5), others)
    assert (cell.verdict, cell.trials) == (verdict, 5)
    assert cell.numbers == "1 ms" + "".join(f" (run{i}: {i + 2} ms)" for i in range(len(there)))
    assert ("disagree" in cell.why) == (len(set(verdicts)) > 1)


def test_a_replicated_cell_is_judged_on_every_run_that_holds_its_configurations(monkeypatch, store):
    seen = []

    def judge(s, cell, r):
        seen.append(cell["experiment"])
        return f.Cell(cell["label"], f.HOLDS if cell["experiment"] == "new" else f.NOT_HOLD, "", "n")

    monkeypatch.setattr(f, "judge_cell", judge)
    monkeypatch.setattr(f, "config_rows", lambda s, spec, run: [] if run == "partial" else [spec])
    replicate = [{"experiment": "partial", "solvers": ["a"]}, {"experiment": "old", "solvers": ["a"]}]
    item = {"id": "9.9", "paper": "002", "section": "s", "statement": "t", "kind": "measured",
            "test": {"type": "ratio", "experiment": "new", "replicate": replicate, "num": ["g|a|x"], "den": ["g|a|y"]}}
    rows = f.judge_statement(store, item, RULE)
    assert seen == ["new", "old"] and [r.verdict for r in rows] == [f.INCONCLUSIVE]


def test_a_configuration_has_one_interval_however_a_row_spells_or_scales_it(store):
    """The bootstrap is seeded by what was measured (experiment, graph, solver, parameters, metric), so two rows
    naming one configuration, one through its cell's experiment and one with its own, or scaled, print the same
    interval."""
    spec = "complete-16384|edgebf_dense|transfer-pinned"
    a = f.measure(store, spec, "r39transferbig", "h2d_ms", RULE)
    b = f.measure(store, f"r39transferbig:{spec} *2", "r39transfer", "h2d_ms", RULE)
    assert np.allclose(a.boot * 2, b.boot)


def test_a_point_given_as_a_ratio_is_printed_without_a_unit(store):
    cell = {"label": "n", "type": "trend", "experiment": "r39transfer", "metric": "h2d_ms", "points": [
        {"name": f"n {n}", "num": [f"complete-{n}|edgebf_dense|transfer-pageable"],
         "den": [f"complete-{n}|edgebf_dense|transfer-pinned"]} for n in (256, 1024)]}
    text = f.judge_cell(store, cell, RULE).numbers
    assert text.startswith("n 256 ") and " ms" not in text
    cell["points"] = [f"n {n}=complete-{n}|edgebf_dense|transfer-pinned" for n in (256, 1024)]
    assert f.judge_cell(store, cell, RULE).numbers.count(" ms") == 2


def test_the_transfer_figure_draws_the_numbers_rows_4_1_to_4_3_judge(store):
    """Paper 004's transfer figure and the findings read one function (gpusp.report.metrics): the same values."""
    from gpusp.report import paperfigs
    from gpusp.report.paperfigs.core import PALETTE

    experiment = "r39transfer"
    fig = paperfigs.figure("004", "transfer", store.samples(experiment), store.summary(experiment))
    upload, share, total = fig.axes[:3]
    checked = 0
    for params, colour, ax, metric, scale in (("transfer-pageable", 0, share, "h2d_fraction", 100.0),  # row 4.1
                                              ("transfer-pinned", 1, upload, "h2d_ms", 1.0),  # row 4.2a
                                              ("transfer-pinned", 1, total, "h2d_plus_time", 1.0),  # row 4.3a
                                              ("chunks-2+transfer-streams", 2, total, "h2d_plus_time", 1.0)):
        drawn = {round(float(line.get_xdata()[0])): float(line.get_ydata()[0]) for line in ax.get_lines()
                 if len(line.get_xdata()) == 1 and line.get_marker() == "o" and line.get_color() == PALETTE[colour]}
        for n in (256, 1024, 2048, 4096, 8192):
            judged = f.measure(store, f"complete-{n}|edgebf_dense|{params}", experiment, metric, RULE)
            assert drawn[n] == pytest.approx(judged.value * scale, rel=1e-12), (params, metric, n)
            checked += 1
    assert checked == 20


def test_an_upload_time_counts_the_first_upload_and_every_end_to_end_upload():
    """h2d_ms: the job's upload (on its first sample row) plus each end-to-end run's (end_to_end_h2d_ms), so that
    a configuration with 5 end-to-end runs has 6 upload samples; rows without the column keep the one upload."""
    import pandas as pd

    rows = pd.DataFrame({"time_ms": [1.0, 1.1, 1.2], "source": [3, 3, 3], "h2d_ms": [5.0, 5.0, 5.0],
                         "end_to_end_h2d_ms": [4.0, 6.0, np.nan]})
    values, strata, n = metric_values(rows, "h2d_ms")
    assert sorted(values) == [4.0, 5.0, 6.0] and n == 3 and len(strata) == 3
    values, _, n = metric_values(rows.drop(columns="end_to_end_h2d_ms"), "h2d_ms")
    assert list(values) == [5.0] and n == 1
    share, _, n = metric_values(rows, "h2d_fraction")
    assert n == 3 and share == pytest.approx([5 / 6, 5 / 6.1, 5 / 6.2])


def test_a_formula_is_the_committed_scripts_arithmetic_and_exact(store):
    """Row 1.23: benchmarks/papers/memory_limits.py's paper_limit(N), (3N + 1) + 8 four-byte words a vertex in
    512 MiB, read as an exact figure; a missing script or function is named."""
    for sources, words in ((32, 3 * 32 + 1 + 8), (1, 3 + 1 + 8)):
        q = f.measure(store, f"memory_limits|paper_limit|{sources}", "formula", "time_ms", RULE)
        assert q.exact and q.value == 512 * 2**20 // (4 * words) and f._few([q], RULE) is None
    with pytest.raises(f.FindingsError, match="no function no_such"):
        f.measure(store, "memory_limits|no_such|1", "formula", "time_ms", RULE)
    with pytest.raises(f.FindingsError, match="no script"):
        f.measure(store, "no_such_script|paper_limit|1", "formula", "time_ms", RULE)


def _ready(items, ident: str) -> dict:
    """A measured statement with its test as the program judges it once its data exist (a 'not run' line, which
    a statement carries until its device step lands, left out)."""
    (item,) = [i for i in items if str(i["id"]) == ident]
    assert item["kind"] == "measured" and "test" in item
    return {k: v for k, v in item.items() if k != "not_run"}


@pytest.mark.parametrize("pieces,verdict", [("255 0", f.HOLDS), ("0 255", f.NOT_HOLD), ("200 180", f.NOT_HOLD)])
def test_row_4_3b_judges_the_pieces_improvements_once_r39pieces_has_them(items, pieces, verdict):
    """Row 4.3b's test on synthetic samples of the configuration it names (the counters as samples.csv carries them,
    a list separated by spaces): the first piece's improving relaxations over the second's, exact counts, at least
    1.5 ('far less'); a second piece without improvements gives an infinite ratio, which holds."""
    import pandas as pd

    store = f.Store(ROOT)
    frame = pd.DataFrame([{"graph": f"complete-{n}", "solver": "edgebf_dense", "params": "chunks-2+transfer-streams",
                           "source": 7, "time_ms": 1.0, "status": "ok", "piece_relaxations": "256 0",
                           "piece_improvements": pieces.replace("255", str(n - 1))}
                          for n in (256, 1024, 2048, 4096) for _ in range(5)])
    store._samples["r39pieces"] = frame
    (row,) = f.judge_statement(store, _ready(items, "4.3b"), RULE)
    assert row.verdict == verdict and len(row.cells) == 4
    assert "first piece" in row.cells[0].numbers and " ms" not in row.cells[0].numbers


def test_row_1_5b_judges_the_profiled_bytes_once_r39traffic_has_them(items, tmp_path):
    """Row 1.5b's test on a synthetic profile table (benchmarks/papers/ncu_traffic.py's columns): the unshared
    kernel's bytes over the shared one's against 1 / (1 - 0.16), its excess widened by the factor; DRAM bytes 19 %
    above hold, equal L2 bytes do not; a missing table or row is named."""
    import pandas as pd

    table = tmp_path / f.NATIVE / "r39traffic" / "traffic.csv"
    table.parent.mkdir(parents=True)
    rows = [{"solver": s, "graph": f"random-n{n}-k4-w{n}", "launches": 60, "dram_bytes": 1.19e6 if s == "nsssp_global"
             else 1e6, "l2_bytes": 5e6} for n in (4096, 16384) for s in ("nsssp_global", "nsssp_shared")]
    pd.DataFrame(rows).to_csv(table, index=False)
    judged = f.judge_statement(f.Store(tmp_path), _ready(items, "1.5b"), RULE)
    cells = "1.5b (n = 4096, bytes = {b}; n = 16384, bytes = {b})"
    assert {r.id: r.verdict for r in judged} == {cells.format(b="dram_bytes"): f.HOLDS,
                                                 cells.format(b="l2_bytes"): f.NOT_HOLD}
    pd.DataFrame(rows[:3]).to_csv(table, index=False)
    with pytest.raises(f.FindingsError, match="0 rows of nsssp_shared on random-n16384"):
        f.judge_statement(f.Store(tmp_path), _ready(items, "1.5b"), RULE)
    with pytest.raises(f.FindingsError, match="no profile"):
        f.judge_statement(f.Store(tmp_path / "elsewhere"), _ready(items, "1.5b"), RULE)


def test_rows_0_7_and_0_8_judge_r39fwloop_once_it_has_run(items):
    """The r39fwloop cells of rows 0.7 and 0.8 (judged since the device step landed) name exactly the configurations
    config/experiments/native/r39fwloop.yaml runs, and judge each loop on its own samples: on synthetic ones where
    super naive loses with our row skip and wins with the paper's loop, the verdicts part the same way."""
    import pandas as pd

    from gpusp.plan import expand_jobs, load_config

    jobs = expand_jobs(load_config(ROOT / "config/experiments/native/r39fwloop.yaml"))[0]
    assert {(j.trials, j.warmup, j.validate_rows > 0) for j in jobs} == {(5, 1, True)}
    planned = {(j.graph, j.solver, j.label) for j in jobs}
    cells = [(i["id"], c) for i in items if str(i["id"]) in ("0.7", "0.8") for c in f.expand_cells(i["test"])
             if c.get("experiment") == "r39fwloop"]
    assert cells and not any("not_run" in c for _, c in cells)  # landed: judged on the committed samples
    named = {tuple(s.split("|")) for _, c in cells for s in f.cell_specs(c) if ":" not in s.split("|")[0]}  # not r39t3a's naive
    assert named == planned and {p.split("row_skip-")[1].split("+")[0] for _, _, p in named} == {"true", "false"}
    ms = {("floydwarshall_supernaive", "true"): 5000, ("floydwarshall_supernaiveshared", "true"): 4000,
          ("floydwarshall_supernaive", "false"): 6000, ("floydwarshall_supernaiveshared", "false"): 9000}
    store = f.Store(ROOT)
    store._samples["r39fwloop"] = pd.DataFrame(
        [{"graph": g, "solver": s, "params": p, "source": 0, "status": "ok",
          "time_ms": ms[s, "true" if "row_skip-true" in p else "false"] * (1 + 0.01 * t)}
         for g, s, p in planned for t in range(5)])
    verdicts = {(i, c["label"]): f.judge_cell(store, {k: v for k, v in c.items() if k != "not_run"}, RULE).verdict
                for i, c in cells}
    assert verdicts == {(i, label): verdict for i in ("0.7", "0.8")
                        for label, verdict in (("G04, our loop", f.NOT_HOLD), ("G04, paper's loop", f.HOLDS))}


def test_every_row_of_a_findings_md_table_has_the_headers_columns():
    """A split row's id carries its cells' labels, such as '|V| = 1K': escaped, so no row gains a column."""
    import re

    columns = None
    for line in (ROOT / f.FINDINGS_MD).read_text().splitlines():
        if not line.startswith("|"):
            columns = None
            continue
        cells = len(re.split(r"(?<!\\)\|", line)) - 2
        columns = columns or cells
        assert cells == columns, line[:100]
