"""gpusp.plan: configs validated against the workflow's schema by Snakemake's own validate() (its defaults filled
in), refused in one line naming the config and the key, and jobs that carry every resolved value, so that no
consumer restates a default."""

from __future__ import annotations

import copy
from importlib import resources
from pathlib import Path

import pytest
import yaml

from gpusp.data.prepare import graph_size
from gpusp.errors import GpuspError
from gpusp.plan import (SCHEMA, ConfigError, config_source, expand_jobs, load_config, source_settings,
                        validate_config)
from gpusp.solvers import registry

REPO = Path(__file__).resolve().parents[1]
WORKFLOW_SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
CONFIGS = sorted([*REPO.glob("config/*.yaml"), *REPO.glob("config/experiments/*.yaml"),
                  *REPO.glob("config/sweeps/*.yaml"), *REPO.glob("config/experiments/*/*.yaml")])
RING = {"generate": "ring", "params": {"n": 8}}


def schema_default(*path):
    """A default as the workflow's schema file writes it (read here independently of gpusp.plan)."""
    node = yaml.safe_load(WORKFLOW_SCHEMA.read_text())
    for key in path:
        node = node["properties"][key]
    return node["default"]


def write(tmp_path, config, name="c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def test_the_package_reads_the_workflows_schema_file():
    """One definition: the packaged schema resolves to workflow/schemas/config.schema.yaml itself."""
    packaged = Path(str(resources.files("gpusp").joinpath(SCHEMA)))
    assert packaged.resolve() == WORKFLOW_SCHEMA.resolve()


def test_every_config_of_the_repository_is_found():
    folders = {p.relative_to(REPO).parent.as_posix() for p in CONFIGS}
    assert folders == {"config", "config/sweeps"} | {f"config/experiments{sub}" for sub in ("", "/trimmed", "/native")}


@pytest.mark.parametrize("path", CONFIGS, ids=[p.relative_to(REPO).as_posix() for p in CONFIGS])
def test_every_config_loads_and_fills_defaults_like_snakemake(path):
    from snakemake.utils import validate

    config = load_config(path)
    by_snakemake = yaml.safe_load(path.read_text())
    validate(by_snakemake, str(WORKFLOW_SCHEMA), set_default=True)
    assert config == by_snakemake
    assert expand_jobs(config)[0], "no job"


def test_defaults_are_filled_in_nested_objects_without_touching_the_input():
    raw = {"sources": {"count": 3}, "graphs": {"g": {**RING, "weights": {"action": "replace", "max": 9}},
                                               "u": {"file": "edges.txt.gz", "format": "snap", "weights": {"max": 5}}},
           "solvers": [{"name": "scipy_dijkstra"}]}
    before = copy.deepcopy(raw)
    config = validate_config(raw)
    assert raw == before
    assert config["sources"] == {"count": 3, "seed": schema_default("sources", "seed")}
    assert config["validate"] == schema_default("validate")
    assert config["graphs"]["g"]["weights"] == {"action": "replace", "min": 1, "max": 9, "seed": 0}
    assert config["graphs"]["u"]["weights"] == {"action": "add", "min": 1, "max": 5, "seed": 0}
    assert config["trials"] == schema_default("trials") and config["results"] == schema_default("results")
    # the schema's default objects are copied, never shared between configs
    config["validate"]["apsp_rows"] = 999
    assert validate_config(raw)["validate"] == schema_default("validate")


def test_jobs_carry_the_top_level_defaults_and_the_per_solver_overrides():
    config = validate_config({"graphs": {"g": RING}, "solvers": [
        {"name": "scipy_dijkstra"},
        {"name": "bellmanford_naive", "trials": 2, "warmup": 0, "time_budget_s": 30}]})
    jobs = {j.solver: j for j in expand_jobs(config)[0]}
    plain, tuned = jobs["scipy_dijkstra"], jobs["bellmanford_naive"]
    assert plain.trials == schema_default("trials")
    assert plain.warmup == schema_default("warmup")
    assert plain.budget == float(schema_default("time_budget_s")) and isinstance(plain.budget, float)
    assert (tuned.trials, tuned.warmup, tuned.budget) == (2, 0, 30.0)  # warmup 0 is an override, not "unset"
    for job in jobs.values():
        assert job.validate_rows == schema_default("validate")["apsp_rows"]
        assert job.seed == schema_default("sources")["seed"]
        assert job.spec is registry.get(job.solver) and job.problem == "sssp"


def test_jobs_carry_the_configs_own_top_level_values():
    config = validate_config({"trials": 7, "warmup": 3, "time_budget_s": 45, "sources": {"count": 1, "seed": 5},
                              "validate": {"apsp_rows": 4}, "graphs": {"g": RING},
                              "solvers": [{"name": "scipy_apsp"}, {"name": "scipy_dijkstra", "warmup": 0}]})
    jobs = {j.solver: j for j in expand_jobs(config)[0]}
    assert (jobs["scipy_apsp"].trials, jobs["scipy_apsp"].warmup, jobs["scipy_apsp"].budget) == (7, 3, 45.0)
    assert (jobs["scipy_dijkstra"].trials, jobs["scipy_dijkstra"].warmup) == (7, 0)
    assert {(j.seed, j.validate_rows) for j in jobs.values()} == {(5, 4)}
    assert jobs["scipy_apsp"].problem == "apsp"


def test_end_to_end_runs_as_many_as_trials_where_a_solver_asks_and_only_there_reach_the_settings():
    config = validate_config({"trials": 4, "graphs": {"g": RING}, "solvers": [
        {"name": "scipy_dijkstra"}, {"name": "dijkstra_cpu", "end_to_end": True},
        {"name": "bellmanford_naive", "trials": 2, "end_to_end": True}]})
    assert config["solvers"][0]["end_to_end"] is False  # the schema's default: off
    jobs = {j.solver: j for j in expand_jobs(config)[0]}
    assert {name: j.end_to_end for name, j in jobs.items()} == {"scipy_dijkstra": 0, "dijkstra_cpu": 4,
                                                                "bellmanford_naive": 2}
    assert "end-to-end" not in jobs["scipy_dijkstra"].settings  # a config without it reruns nothing
    assert jobs["dijkstra_cpu"].settings["end-to-end"] == 4 and jobs["bellmanford_naive"].settings["end-to-end"] == 2
    with pytest.raises(GpuspError, match="end_to_end"):
        validate_config({"graphs": {"g": RING}, "solvers": [{"name": "scipy_dijkstra", "end_to_end": 3}]})


def test_an_unvalidated_config_is_refused_by_expand_jobs():
    with pytest.raises(GpuspError, match="no 'gpu_memory_gb'.*validated config"):
        expand_jobs({"graphs": {"g": RING}, "solvers": [{"name": "scipy_dijkstra"}]})


def test_source_settings_take_the_graphs_own_values_else_the_top_level_ones():
    config = validate_config({"sources": {"count": 4, "seed": 2},
                              "graphs": {"a": RING, "b": {**RING, "sources": {"count": 1}},
                                         "c": {**RING, "sources": {"seed": 9}}},
                              "solvers": [{"name": "scipy_dijkstra"}]})
    assert [source_settings(config, g) for g in "abc"] == [(4, 2), (1, 2), (4, 9)]
    plain = validate_config({"graphs": {"a": RING}, "solvers": [{"name": "scipy_dijkstra"}]})
    assert source_settings(plain, "a") == (schema_default("sources")["count"], schema_default("sources")["seed"])


@pytest.mark.parametrize("change, where, words", [
    ({"trails": 3}, "top level", "'trails' was unexpected"),
    ({"trials": "five"}, "key trials", "not of type 'integer'"),
    ({"validate": {"apsp_rows": 0}}, "key validate/apsp_rows", "less than the minimum of 1"),
    ({"solvers": [{"name": "scipy_dijkstra", "warmpu": 1}]}, "key solvers/0", "'warmpu' was unexpected"),
    ({"graphs": {"g": {**RING, "seed": "x"}}}, "key graphs/g/seed", "not of type 'integer'"),
    ({"sources": 3}, "key sources", "not of type 'object'"),
    ({"graphs": {"g": {"params": {"n": 5}}}}, "key graphs/g",
     "needs exactly one of the keys file, dataset, generate; it has none of them"),
    ({"graphs": {"g": {**RING, "file": "a.gr"}}}, "key graphs/g", "it has file and generate"),
], ids=["misspelled-key", "wrong-type", "nested-minimum", "solver-key", "graph-type", "object-type", "graph-kind",
        "graph-two-kinds"])
def test_schema_violations_name_the_file_and_the_key(tmp_path, change, where, words):
    path = write(tmp_path, {"graphs": {"g": RING}, "solvers": [{"name": "scipy_dijkstra"}], **change})
    with pytest.raises(GpuspError) as caught:
        load_config(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: {where}: ") and words in message, message


def test_only_graphs_plans_the_jobs_and_skips_of_those_graphs_alone():
    raw = {"graphs": {"g": RING, "h": {**RING, "params": {"n": 4}}}, "max_apsp_n": 6,
           "solvers": [{"name": "scipy_dijkstra"}, {"name": "scipy_apsp"}]}
    everything = expand_jobs(validate_config(raw))
    assert validate_config(raw)["only_graphs"] is None  # the schema's default: every graph
    assert [(s["graph"], s["solver"]) for s in everything[1]] == [("g", "scipy_apsp")] and len(everything[0]) == 3
    jobs, skipped = expand_jobs(validate_config({**raw, "only_graphs": ["g"]}))
    assert [(j.graph, j.solver) for j in jobs] == [("g", "scipy_dijkstra")]
    assert [(s["graph"], s["solver"]) for s in skipped] == [("g", "scipy_apsp")]
    jobs, skipped = expand_jobs(validate_config({**raw, "only_graphs": ["h"]}))
    assert sorted((j.graph, j.solver) for j in jobs) == [("h", "scipy_apsp"), ("h", "scipy_dijkstra")]
    assert skipped == []
    with pytest.raises(ConfigError) as caught:
        validate_config({**raw, "only_graphs": ["hh"]}, "c.yaml")
    assert (caught.value.source, caught.value.detail) == (
        "c.yaml", "key only_graphs: 'hh' is not a graph of the config (did you mean 'h'?); its graphs: g, h")
    for wrong in ([], "h"):  # a list of one name or more, or null
        with pytest.raises(ConfigError, match=r"^config: key only_graphs: .* is not valid under any of the given"):
            validate_config({**raw, "only_graphs": wrong})


def test_in_process_jobs_run_without_a_time_budget():
    """in_process: the solve runs in its own `gpusp solve` process: no --time-budget (which would start a child
    that is killed at the budget) reaches its settings; the budget still sizes a cluster job's runtime."""
    raw = {"time_budget_s": 30, "graphs": {"g": RING}, "solvers": [{"name": "scipy_dijkstra"}]}
    budgeted, = expand_jobs(validate_config(raw))[0]
    inline, = expand_jobs(validate_config({**raw, "in_process": True}))[0]
    assert budgeted.settings["time-budget"] == 30.0 and not budgeted.in_process
    assert "time-budget" not in inline.settings and inline.in_process and inline.budget == 30.0
    assert {k: v for k, v in budgeted.settings.items() if k != "time-budget"} == inline.settings


def test_overrides_are_applied_before_validation(tmp_path):
    path = write(tmp_path, {"graphs": {"g": RING}, "solvers": [{"name": "scipy_dijkstra"}]})
    config = load_config(path, ["trials=2", "time-budget-s=12.5", "in_process=true"])
    assert (config["trials"], config["time_budget_s"], config["in_process"]) == (2, 12.5, True)
    assert expand_jobs(config)[0][0].trials == 2
    with pytest.raises(GpuspError, match=r"key trials: 0 is less than the minimum"):
        load_config(path, ["trials=0"])
    with pytest.raises(GpuspError, match="'trails' was unexpected"):
        load_config(path, ["trails=2"])


@pytest.mark.parametrize("text, words", [("graphs: [\n", "not valid YAML"), ("", "a config is a YAML mapping"),
                                         ("- a\n", "a config is a YAML mapping")])
def test_unreadable_configs_name_the_file(tmp_path, text, words):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(GpuspError, match=words) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: ") and "\n" not in str(caught.value)
    with pytest.raises(GpuspError, match="cannot read the config"):
        load_config(tmp_path / "missing.yaml")


# --- what the schema cannot say: refused at planning, in one line naming the file and the key --------------------
TINY_GR = str(REPO / "src" / "gpusp" / "data" / "tiny.gr")  # n = 21 in its header
BASE = {"graphs": {"g": RING}, "solvers": [{"name": "scipy_dijkstra"}]}
REFUSED = {
    # a parameter NAME the solver does not have: was a silent drop of the solver (dry run exit 0, zero jobs)
    "param-name": ({"solvers": [{"name": "bellmanford_naive", "params": {"blok": 32}}]},
                   "key solvers/0/params", "bellmanford_naive has no parameter 'blok' (did you mean 'block'?)"),
    "param-name-in-one-entry-of-several": (
        {"solvers": [{"name": "scipy_dijkstra"}, {"name": "bellmanford_naive", "params": {"block": [32, 64]}},
                     {"name": "edgebf_coo", "params": {"edges_per_thread": 4, "edges_per_thraed": 8}}]},
        "key solvers/2/params", "no parameter 'edges_per_thraed'"),
    "param-name-of-a-list": ({"solvers": [{"name": "bellmanford_naive", "params": {"roundz": ["early", "fixed"]}}]},
                             "key solvers/0/params", "'roundz' (did you mean 'rounds'?); it takes block, rounds"),
    # a parameter VALUE the solver does not allow: was planned, then every row of it "skipped" deep in a reason line
    "param-value-choice": ({"solvers": [{"name": "edgebf_coo", "params": {"launch": ["host", "persist"]}}]},
                           "key solvers/0/params/launch", ("edgebf_coo: parameter launch='persist': allowed values "
                                                           "are ['host', 'graph', 'persistent'] (did you mean "
                                                           "'persistent'?)")),
    "param-value-number-choice": ({"solvers": [{"name": "bellmanford_naive", "params": {"block": [32, 33]}}]},
                                  "key solvers/0/params/block", ("bellmanford_naive: parameter block=33: "
                                                                 "allowed values are [32, 64, 128, 256, 512, 1024]")),
    "param-value-type": ({"solvers": [{"name": "bellmanford_naive", "params": {"block": "wide"}}]},
                         "key solvers/0/params/block", "bellmanford_naive: parameter block='wide': expected int"),
    "param-value-no-path": ({"solvers": [{"name": "bellmanford_naive", "params": {"block": float("inf")}}]},
                            "key solvers/0/params/block", "cannot be part of a path label"),
    "solver-name": ({"solvers": [{"name": "bellmanford_naiv"}]}, "key solvers/0/name",
                    "unknown solver 'bellmanford_naiv' (did you mean 'bellmanford_naive'"),
    "no-solvers": ({"solvers": []}, "key solvers", "names no solver"),
    "no-graphs": ({"graphs": {}}, "key graphs", "names no graph"),
    "solver-graph-unknown": ({"solvers": [{"name": "scipy_dijkstra", "graphs": ["h"]}]}, "key solvers/0/graphs",
                             "names graph 'h', which is not in `graphs` (g)"),
    "solver-graph-typo": ({"graphs": {"ring8": RING}, "solvers": [{"name": "scipy_dijkstra", "graphs": ["ring9"]}]},
                          "key solvers/0/graphs", "'ring9' (did you mean 'ring8'?)"),
    "solver-graphs-empty": ({"solvers": [{"name": "scipy_dijkstra", "graphs": []}]}, "key solvers/0/graphs",
                            "an empty list runs scipy_dijkstra on no graph"),
    "graph-unused": ({"graphs": {"g": RING, "h": RING}, "solvers": [{"name": "scipy_dijkstra", "graphs": ["g"]}]},
                     "key graphs/h", "no solver runs on this graph"),
    # generator parameters, checked by the generator's own rules: were a KeyError / ValueError traceback at
    # planning, or a failure of the prepare job after the workflow had started
    "generator-param-name": ({"graphs": {"g": {"generate": "ring", "params": {"nn": 8}}}}, "key graphs/g",
                             "ring: unknown parameter(s) nn"),
    "generator-missing": ({"graphs": {"g": {"generate": "rmat", "params": {"edge_factor": 4}}}}, "key graphs/g",
                          "rmat: missing required parameter(s) scale"),
    "generator-type": ({"graphs": {"g": {"generate": "ring", "params": {"n": "eight"}}}}, "key graphs/g",
                       "n must be an integer, not 'eight'"),
    "generator-value": ({"graphs": {"g": {"generate": "random", "params": {"n": 10, "k": 10}}}}, "key graphs/g",
                        "k must be <= n - 1 = 9"),
    "generator-seed-param": ({"graphs": {"g": {"generate": "ring", "params": {"n": 8, "seed": 3}}}},
                             "key graphs/g", "seed is its `seed` key"),
    "generator-negative-seed": ({"graphs": {"g": {**RING, "seed": -1}}}, "key graphs/g", "seed must be >= 0"),
    "weights-range": ({"graphs": {"g": {**RING, "weights": {"action": "replace", "min": 10, "max": 1}}}},
                      "key graphs/g", "weights/min (10) must be <= weights/max (1)"),
    "weights-add-on-weights": ({"graphs": {"g": {**RING, "weights": {"max": 9}}}}, "key graphs/g",
                               "weights/action: add weights an unweighted graph"),
    "weights-add-on-dataset": ({"graphs": {"g": {"dataset": "USA-road-d.NY", "weights": {"action": "add"}}}},
                               "key graphs/g", "weights/action"),
    "weights-add-on-dimacs": ({"graphs": {"g": {"file": TINY_GR, "weights": {"min": 1, "max": 5}}}}, "key graphs/g",
                              "weights/action: add weights an unweighted graph, and this one has weights"),
    "dataset-typo": ({"graphs": {"g": {"dataset": "USA-road-d.NX"}}}, "key graphs/g",
                     "unknown dataset 'USA-road-d.NX' (did you mean USA-road-d.NY"),
    # more sources than a graph known at planning time has: the pick_sources job would refuse it later
    "sources-top-level": ({"sources": {"count": 9}}, "key graphs/g",
                          "9 sources asked for (by the top-level sources: {count: 9}), but the graph has n = 8"),
    "sources-own": ({"graphs": {"g": {**RING, "sources": {"count": 9}}}}, "key graphs/g", "by its own sources"),
    "sources-file-header": ({"sources": {"count": 22}, "graphs": {"t": {"file": TINY_GR}}}, "key graphs/t",
                            "n = 21"),
    "sources-seed": ({"sources": {"seed": -1}}, "key graphs/g", "sources/seed: must be >= 0"),
    "gpu-memory": ({"gpu_memory_gb": 0}, "key gpu_memory_gb", "must be > 0"),
    "max-apsp-n": ({"max_apsp_n": 0}, "key max_apsp_n", "must be >= 1 or null"),
    "max-cpu-arcs": ({"max_cpu_arcs": -1}, "key max_cpu_arcs", "must be >= 0 or null"),
}


@pytest.mark.parametrize("change, where, words", REFUSED.values(), ids=REFUSED.keys())
def test_configs_the_schema_lets_through_are_refused_at_planning(tmp_path, change, where, words):
    path = write(tmp_path, {**BASE, **change})
    with pytest.raises(GpuspError) as caught:
        load_config(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: {where}: ") and words in message, message


def test_a_solves_slurm_minutes_follow_its_work_under_its_budget():
    from gpusp.plan import ARCS_PER_S, RUNTIME_MARGIN, START_MINUTES, expected_minutes

    # 4 sources x 3 runs of 2^27 arcs on a GPU: 1.6e9 arcs, 4 x 16 s: a minute and two
    assert expected_minutes("sssp", 2**23, 2**27, "gpu", 4, 3) == START_MINUTES + 2
    assert expected_minutes("sssp", 8, 20, "sim", 2, 3) == START_MINUTES + 1  # a tiny graph: a minute of work at most
    apsp = expected_minutes("apsp", 1000, 8000, "cpu", 99, 2)  # one run from every vertex; sources do not count
    assert apsp == START_MINUTES + -(-RUNTIME_MARGIN * 2 * 8000 * 1000 // (ARCS_PER_S["cpu"] * 60))
    config = validate_config({"graphs": {"big": {"generate": "kron", "params": {"scale": 20}}, "g": RING},
                              "time_budget_s": 600, "solvers": [{"name": "deltastep_gpu"}]})
    jobs = {j.graph: j for j in expand_jobs(config)[0]}
    assert jobs["g"].runtime_minutes(2, simulated=True) == START_MINUTES + 1
    assert jobs["big"].runtime_minutes(2, simulated=False) < 2 + 10  # the GPU's expected minutes, under the budget's
    assert jobs["big"].runtime_minutes(2, simulated=True) == 2 + 10  # the simulator on 33M arcs: the budget caps it


def test_compare_with_this_runs_own_results_is_refused(tmp_path):
    results = tmp_path / "res"
    (results / "tables").mkdir(parents=True)
    for own in (results, results / "tables", tmp_path / "." / "res"):
        path = write(tmp_path, {**BASE, "results": str(results), "compare_with": str(own)})
        with pytest.raises(GpuspError, match="key compare_with: .* is this run's own results"):
            load_config(path)
    other = tmp_path / "other"
    other.mkdir()
    load_config(write(tmp_path, {**BASE, "results": str(results), "compare_with": str(other)}))


@pytest.mark.parametrize("change, where, words", REFUSED.values(), ids=REFUSED.keys())
def test_expand_jobs_refuses_them_too(change, where, words):
    """A config that passed the schema alone (Snakemake's validate, defaults filled in) or was changed after
    its validation is checked again, so no job is planned from it."""
    from snakemake.utils import validate

    config = copy.deepcopy({**BASE, **change})
    validate(config, str(WORKFLOW_SCHEMA), set_default=True)
    with pytest.raises(GpuspError) as caught:
        expand_jobs(config, source="mine.yaml")
    assert str(caught.value).startswith(f"mine.yaml: {where}: ") and words in str(caught.value)


def test_a_misspelt_value_in_a_matrix_is_refused_though_the_other_values_are_valid():
    """One bad value of a solver's list refuses the config (a misspelling never quietly turns into skipped rows);
    valid values in the same list that cannot run on a graph stay skips with their reason."""
    with pytest.raises(ConfigError, match=r"key solvers/0/params/launch: .*'persist'.*did you mean 'persistent'"):
        validate_config({**BASE, "solvers": [{"name": "edgebf_coo", "params": {"launch": ["host", "persist"]}}]})
    jobs, skipped = expand_jobs(validate_config({**BASE, "gpu_memory_gb": 1e-9, "solvers": [
        {"name": "scipy_dijkstra"}, {"name": "edgebf_coo", "params": {"launch": ["host", "persistent"]}}]}))
    assert [j.solver for j in jobs] == ["scipy_dijkstra"]
    assert [(s["params"], "device memory" in s["reason"]) for s in skipped] == [("launch-host", True),
                                                                               ("launch-persistent", True)]


def test_cpu_solvers_are_skipped_past_max_cpu_arcs_with_the_reason():
    """A config states the largest graph gpusp's one-thread CPU solvers and SciPy run on; GPU solvers and peers (GAPBS
    takes every core) still run there."""
    config = {**BASE, "solvers": [{"name": "scipy_dijkstra"}, {"name": "dijkstra_cpu"}, {"name": "deltastep_gpu"},
                                  {"name": "gapbs_sssp"}]}
    every, none = expand_jobs(validate_config(config))
    assert len(every) == 4 and none == []
    m = expand_jobs(validate_config(config))[0][0].m
    jobs, skipped = expand_jobs(validate_config({**config, "max_cpu_arcs": m - 1}))
    assert sorted(j.solver for j in jobs) == ["deltastep_gpu", "gapbs_sssp"]
    assert sorted(s["solver"] for s in skipped) == ["dijkstra_cpu", "scipy_dijkstra"]
    assert all(f"more than {m - 1} arcs by max_cpu_arcs (m = {m})" in s["reason"] for s in skipped)
    assert len(expand_jobs(validate_config({**config, "max_cpu_arcs": m}))[0]) == 4


def test_the_error_names_the_overrides_laid_over_the_file(tmp_path):
    path = write(tmp_path, BASE)
    with pytest.raises(GpuspError) as caught:
        load_config(path, ["solvers=[]"])
    assert str(caught.value).startswith(f"{path} (with --set solvers): key solvers: ")
    assert config_source(["a.yaml", "b.yaml"], {"trials": 1, "results": "x"}) == \
        "a.yaml + b.yaml (with --config results, trials)"
    assert config_source([]) == "the config"


def test_every_graph_a_solver_names_is_run_and_others_are_allowed_when_some_solver_runs_everywhere():
    config = validate_config({"graphs": {"g": RING, "h": RING},
                              "solvers": [{"name": "scipy_dijkstra", "graphs": ["g"]}, {"name": "dijkstra_cpu"}]})
    assert sorted((j.graph, j.solver) for j in expand_jobs(config)[0]) == [
        ("g", "dijkstra_cpu"), ("g", "scipy_dijkstra"), ("h", "dijkstra_cpu")]


@pytest.mark.parametrize("content", [b"PK\x03\x04" + bytes(range(256)) * 4, b"\x93NUMPY", b"\x1f\x8b\x08junk", b""],
                         ids=["foreign-zip", "bare-npy-magic", "broken-gzip", "empty"])
@pytest.mark.parametrize("suffix", [".npz", ".gr", ".gr.gz", ".plain"])
def test_a_broken_graph_file_is_left_to_its_prepare_job(tmp_path, content, suffix):
    """The size read at planning time is a hint: a file it cannot read (was: a BadZipFile traceback while
    planning) plans with unknown size, and the job that reads it reports the file."""
    path = tmp_path / f"g{suffix}"
    path.write_bytes(content)
    spec = {"file": str(path)}
    assert graph_size("g", spec) == (None, None, False)
    jobs, skipped = expand_jobs(validate_config({"graphs": {"g": spec}, "solvers": [{"name": "scipy_dijkstra"}]}))
    assert [j.graph for j in jobs] == ["g"] and skipped == []
