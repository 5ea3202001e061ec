"""The published experiments (config/experiments/*.yaml) and the papers' figures they reproduce
(src/gpusp/data/published.yaml): every config validates, expands into jobs with only the expected skips,
dry-runs under Snakemake and opens with a header naming the paper, its table or figure and its hardware;
every published value points at a job of its experiment and is copied as printed.

The Snakemake dry runs (a few seconds each) run concurrently once per session, from the repository root
with ``--config results=<tmp>`` (tests/test_workflow.py's helper), so nothing is written into the tree.
"""

from __future__ import annotations

import copy
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
import yaml

from gpusp.data.prepare import graph_size
from gpusp.plan import expand_jobs, load_config
from gpusp.solvers import registry
from test_workflow import _schema_errors, job_counts, snakemake

REPO = Path(__file__).resolve().parents[1]
EXPERIMENTS = REPO / "config" / "experiments"
CONFIGS = sorted(EXPERIMENTS.glob("*.yaml"))
PUBLISHED = REPO / "src" / "gpusp" / "data" / "published.yaml"
SEEDS = REPO.parent / "shared" / "seeds"  # the papers as text (absent outside this workspace: those tests skip)

pytestmark = pytest.mark.timeout(600)  # room for a host several times slower than usual

# the paper each config reproduces names its hardware with these words (copied from the papers' texts)
HARDWARE = {"000": "GeForce", "001": "8800 GTS", "002": "K80", "004": "GTX 750 Ti"}
# skips a config is meant to have: config stem -> reasons (substrings); any other skip fails the test
EXPECTED_SKIPS = {"paper001-fig10": ["by max_apsp_n"]}
FIELDS = {"paper", "source", "experiment", "graph", "solver", "params", "value", "unit", "hardware", "note"}
OPTIONAL = {"note"}


def ids(paths):
    return [p.stem for p in paths]


_LOADED: dict[Path, dict] = {}


def load(path: Path) -> dict:
    """The config as the workflow sees it: validated, the schema's defaults filled in (read and validated once per
    file, a few seconds for the large ones; each caller gets its own copy)."""
    if path not in _LOADED:
        _LOADED[path] = load_config(path)
    return copy.deepcopy(_LOADED[path])


def header(path: Path) -> dict[str, str]:
    """The leading comment block as {key: text}: '# Key: text' lines, continuation lines ('#   ...') joined."""
    fields, key = {}, None
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        match = re.match(r"#\s?([A-Z][A-Za-z ()]*):\s*(.*)", line)
        if match and not line.startswith("#  "):
            key = match.group(1)
            fields[key] = match.group(2)
        elif key:
            fields[key] += " " + line.lstrip("# ").strip()
    return fields


def published() -> list[dict]:
    return list((yaml.safe_load(PUBLISHED.read_text()) or {}).get("figures") or [])


def matching_jobs(jobs, fig: dict) -> list:
    """Jobs of the figure's graph and solver whose resolved parameters include the figure's."""
    spec = registry.get(fig["solver"])
    wanted = spec.resolve(fig.get("params") or {})
    keys = set(fig.get("params") or {})
    return [j for j in jobs if j.graph == fig["graph"] and j.solver == fig["solver"]
            and all(spec.resolve(j.params)[k] == wanted[k] for k in keys)]


def test_there_are_experiments_for_papers_000_001_002_004():
    papers = {p.stem[5:8] for p in CONFIGS}
    assert {"000", "001", "002", "004"} <= papers, papers  # 003's flow is the main config's paper003 key
    assert {"paper000-table1", "paper000-table2", "paper000-table3"} <= {p.stem for p in CONFIGS}
    assert all(re.fullmatch(r"paper00[0-4]-[a-z0-9.\-]+", p.stem) for p in CONFIGS), ids(CONFIGS)


# --- (a) schema and job matrix ----------------------------------------------------------------------
@pytest.mark.parametrize("path", CONFIGS, ids=ids(CONFIGS))
def test_config_validates_and_expands(path):
    assert _schema_errors(yaml.safe_load(path.read_text())) is None
    config = load(path)
    jobs, skipped = expand_jobs(config)
    assert jobs, "no job"
    for job in jobs:  # registered solver, known parameters with allowed values
        registry.get(job.solver).resolve(job.params)
    assert {j.graph for j in jobs} == set(config["graphs"]), "a graph that no job uses"
    expected = EXPECTED_SKIPS.get(path.stem, [])
    for skip in skipped:
        assert skip["reason"], skip
        assert any(r in skip["reason"] for r in expected), f"unexpected skip: {skip}"
    if path.stem == "paper001-fig10":  # APSP stops at max_apsp_n, the SSSP side runs on every size
        limit = config["max_apsp_n"]
        big = {g for g, spec in config["graphs"].items() if graph_size(g, spec)[0] > limit}
        assert big and {s["graph"] for s in skipped} == big
        assert all(s["problem"] == "apsp" for s in skipped)
        assert len(skipped) == len(big) * len({(j.solver, j.label) for j in jobs if j.problem == "apsp"})


def test_paper002_runs_every_version_and_blocking_factor_on_every_size():
    jobs, _ = expand_jobs(load(EXPERIMENTS / "paper002-fig4.yaml"))
    versions = {s.name for s in registry.SPECS if s.paper == "002"}
    sizes = [80, 160, 240, 320, 480, 640, 720, 1200]
    have = {(j.solver, int(j.params["block_size"]), graph) for j in jobs if j.solver in versions
            for graph in [j.graph]}
    want = {(v, b, f"random-{n}") for v in versions for b in (8, 16, 24, 32) for n in sizes}
    assert have == want
    assert any(n % b for n in sizes for b in (8, 16, 24, 32))  # padded pairs are part of it


# --- (b) Snakemake dry runs ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory):
    """Every config's `snakemake -n`, run concurrently: {stem: (CompletedProcess, results folder)}."""
    base = tmp_path_factory.mktemp("dry")  # mktemp itself is not thread-safe: one call, before the threads

    def one(path):
        results = base / path.stem / "results"
        return path.stem, (snakemake("-n", "--quiet", "rules", "--configfile", path, "--config",
                                     f"results={results}", timeout=240), results)

    with ThreadPoolExecutor(max_workers=8) as pool:
        return dict(pool.map(one, CONFIGS))


@pytest.mark.parametrize("path", CONFIGS, ids=ids(CONFIGS))
def test_dry_run(path, dry_runs):
    proc, results = dry_runs[path.stem]
    assert proc.returncode == 0, proc.stdout[-5000:]
    config = load(path)
    jobs, _ = expand_jobs(config)
    counts = job_counts(proc.stdout)
    assert counts.get("solve_graph") == len(jobs) and counts.get("validate_answer") == len(jobs), counts
    assert counts.get("prepare_graph") == len(config["graphs"]), counts
    datasets = {spec["dataset"] for spec in config["graphs"].values() if "dataset" in spec}
    assert counts.get("fetch_dataset", 0) <= len(datasets)
    assert not results.exists()


# --- (c) headers ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", CONFIGS, ids=ids(CONFIGS))
def test_header_names_paper_source_hardware_and_differences(path):
    fields = header(path)
    paper = path.stem[5:8]
    assert re.match(rf"{paper} - \S", fields.get("Paper", "")), fields.get("Paper")
    assert re.search(r"\b(Table|Figures?|Section) [0-9IVX]", fields.get("Reproduces", "")), fields.get("Reproduces")
    assert HARDWARE.get(paper, "") in fields.get("Hardware (paper)", "") and len(fields["Hardware (paper)"]) > 20
    assert len(fields.get("Differs here", "")) > 40
    assert fields.get("Published")


def test_every_experiment_is_published_or_says_why_not():
    counts = {}
    for fig in published():
        counts[fig["experiment"]] = counts.get(fig["experiment"], 0) + 1
    for path in CONFIGS:
        text = header(path)["Published"]
        if path.stem in counts:
            match = re.match(r"(\d+) values? in src/gpusp/data/published\.yaml", text)
            assert match and int(match.group(1)) == counts[path.stem], (path.stem, text, counts[path.stem])
        else:
            match = re.match(r"none - (.+)", text)
            assert match and len(match.group(1)) > 30, (path.stem, text)
    assert set(counts) <= {p.stem for p in CONFIGS}


# --- published figures ---------------------------------------------------------------------------------
def test_published_entries_are_well_formed():
    figures = published()
    assert figures
    seen = set()
    for fig in figures:
        assert set(fig) - OPTIONAL <= FIELDS and FIELDS - OPTIONAL <= set(fig), fig
        assert isinstance(fig["paper"], str) and re.fullmatch(r"00[0-4]", fig["paper"]), fig
        assert fig["experiment"].startswith(f"paper{fig['paper']}-"), fig
        assert re.fullmatch(r"(Table|Figure) \d+(\.\d+)?", fig["source"]), fig
        assert fig["unit"] in ("ms", "s") and isinstance(fig["value"], (int, float)) and fig["value"] > 0, fig
        assert fig["hardware"].strip(), fig
        key = (fig["experiment"], fig["graph"], fig["solver"], tuple(sorted((fig["params"] or {}).items())))
        assert key not in seen, f"duplicate {key}"
        seen.add(key)


def test_published_figures_are_jobs_of_their_experiment():
    configs = {}
    for fig in published():
        path = EXPERIMENTS / f"{fig['experiment']}.yaml"
        assert path.is_file(), fig["experiment"]
        if path not in configs:
            configs[path] = expand_jobs(load(path))[0]
        assert fig["source"] in header(path)["Reproduces"], (fig["source"], path.stem)
        found = matching_jobs(configs[path], fig)
        assert len(found) == 1, (fig, [j.label for j in found])


def test_published_figures_meet_their_jobs_in_the_report():
    """gpusp.report.papers finds every published value (the package resource) beside a summary row of its job."""
    from gpusp.report.papers import compare, load_published

    figures = published()
    assert load_published() == figures
    rows, jobs = [], {}
    for fig in figures:
        if fig["experiment"] not in jobs:  # each experiment's jobs once (a few seconds each for the large ones)
            jobs[fig["experiment"]] = expand_jobs(load(EXPERIMENTS / f"{fig['experiment']}.yaml"))[0]
        job = matching_jobs(jobs[fig["experiment"]], fig)[0]
        rows.append({"graph": job.graph, "solver": job.solver, "params": job.label, "median_ms": 1.0,
                     "gpu": "test", "mode": "gpu", "validated": True})
    table = compare(pd.DataFrame(rows).drop_duplicates(), figures)
    assert len(table) == len(figures)


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the papers' text (../shared/seeds) is not here")
def test_published_values_are_copied_as_printed():
    raw = yaml.load(PUBLISHED.read_text(), Loader=yaml.BaseLoader)["figures"]  # every scalar as written
    texts = {p.name[:3]: p.read_text() for p in SEEDS.glob("00?_*.txt")}
    for fig in raw:
        text = texts[fig["paper"]]
        assert re.search(rf"(?<![\d.]){re.escape(fig['value'])}(?![\d.])", text), fig
        assert fig["source"] in text, fig
