rule write_skipped:
    """Combinations that cannot run, each with its reason (they appear in the report)."""
    output:
        skipped=f"{RESULTS}/tables/skipped.json",
    log:
        f"{RESULTS}/logs/write_skipped.log",
    params:
        skipped=json.dumps(SKIPPED, sort_keys=True),
    run:
        write_skipped_json(output.skipped, json.loads(params.skipped), log[0])


rule aggregate_records:
    """Every record and verdict into tidy tables, the run's environment and an archive of the records (refuses
    mixed code versions of one solver, and mixed hardware unless allow_mixed_hardware). On a cluster one job
    with plot_results (group "report"). The tables are update() outputs: Snakemake keeps a copy of the earlier
    ones and puts it back when aggregation fails, so a refused aggregation never destroys the last good tables.
    """
    input:
        records=record_paths(),
        verdicts=verdict_paths(),
        skipped=rules.write_skipped.output.skipped,
        intro=os.path.join(workflow.current_basedir, "../report/workflow.rst"),
    output:
        samples=report(
            update(f"{RESULTS}/tables/samples.csv"),
            caption="../report/samples.rst",
            category="Data",
        ),
        parquet=update(f"{RESULTS}/tables/samples.parquet"),
        summary=report(
            update(f"{RESULTS}/tables/summary.csv"),
            caption="../report/summary.rst",
            category="Tables",
        ),
        gpu_scaling=report(
            update(f"{RESULTS}/tables/gpu_scaling.csv"),
            caption="../report/gpu_scaling.rst",
            category="Tables",
        ),
        environment=report(
            update(f"{RESULTS}/tables/environment.csv"),
            caption="../report/environment.rst",
            category="Provenance",
        ),
        graphs=report(
            update(f"{RESULTS}/tables/graphs.csv"),
            caption="../report/graphs.rst",
            category="Provenance",
        ),
        environment_rst=update(f"{RESULTS}/tables/environment.rst"),
        records=report(
            update(f"{RESULTS}/tables/records.tar.gz"),
            caption="../report/records.rst",
            category="Data",
        ),
        landing=update(f"{RESULTS}/tables/landing.rst"),
    log:
        f"{RESULTS}/logs/aggregate_records.log",
    group:
        "report"
    conda:
        "../envs/gpusp.yaml"
    params:
        out_dir=lambda wc, output: os.path.dirname(output.summary),
        allow_mixed="--allow-mixed" if config["allow_mixed_code_versions"] else "",
        allow_mixed_hardware=(
            "--allow-mixed-hardware" if config["allow_mixed_hardware"] else ""
        ),
        ceiling=(
            f"--ceiling {config['gpu_peak_relaxations_per_s']}"
            if config.get("gpu_peak_relaxations_per_s")
            else ""
        ),
    shell:
        "gpusp aggregate {input.records:q} --skipped {input.skipped:q} --out-dir {params.out_dir:q} "
        "{params.allow_mixed} {params.allow_mixed_hardware} {params.ceiling} --intro {input.intro:q} "
        "> {log:q} 2>&1"


rule plot_results:
    """Seaborn figures of the sweep, each only when the sweep has data for it (labelled SIMULATED when the
    simulator stood in for a GPU), and the papers' figures redrawn from it (papers/<paper>/<figure>.png: those whose
    variants the sweep measured, e.g. paper 002's for config/experiments/paper002-fig4.yaml; none for the default
    config), under "Papers" in the report, a subcategory per paper."""
    input:
        samples=rules.aggregate_records.output.parquet,
        summary=rules.aggregate_records.output.summary,
    output:
        plots=report(
            directory(f"{RESULTS}/plots"),
            patterns=["{name}.png"],
            caption="../report/figures.rst",
            category="Figures",
        ),
        papers=report(
            directory(f"{RESULTS}/papers"),
            patterns=["{paper}/{name}.png"],
            caption="../report/papers.rst",
            category="Papers",
            subcategory="Paper {paper}",
        ),
    log:
        f"{RESULTS}/logs/plot_results.log",
    group:
        "report"
    conda:
        "../envs/gpusp.yaml"
    params:
        peak=(
            f"--peak {config['gpu_peak_relaxations_per_s']}"
            if config.get("gpu_peak_relaxations_per_s")
            else ""
        ),
    shell:
        "gpusp plot --samples {input.samples:q} --summary {input.summary:q} "
        "--out-dir {output.plots:q} --papers-dir {output.papers:q} {params.peak} > {log:q} 2>&1"


rule compare_results:
    """This run (B) against the run named by compare_with (A): per configuration the ratio of medians with a bootstrap
    interval and a verdict, as a table and a figure in the report (only when compare_with is set).
    """
    input:
        samples=rules.aggregate_records.output.samples,
    output:
        table=report(
            f"{RESULTS}/compare/compare.csv",
            caption="../report/compare.rst",
            category="Comparison",
        ),
        text=f"{RESULTS}/compare/compare.rst",
        figure=report(
            f"{RESULTS}/compare/compare.png",
            caption="../report/compare.rst",
            category="Comparison",
        ),
    log:
        f"{RESULTS}/logs/compare_results.log",
    group:
        "report"
    conda:
        "../envs/gpusp.yaml"
    params:
        other=config["compare_with"] or "",
        out_dir=lambda wc, output: os.path.dirname(output.table),
    shell:
        "gpusp compare {params.other:q} {input.samples:q} --out-dir {params.out_dir:q} > {log:q} 2>&1"
