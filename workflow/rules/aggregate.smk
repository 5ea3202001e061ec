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
    """Every record and verdict into tidy tables (refuses mixed code versions of one solver)."""
    input:
        records=record_paths(),
        verdicts=verdict_paths(),
        skipped=rules.write_skipped.output.skipped,
        intro=os.path.join(workflow.current_basedir, "../report/workflow.rst"),
    output:
        samples=f"{RESULTS}/tables/samples.csv",
        parquet=f"{RESULTS}/tables/samples.parquet",
        summary=report(
            f"{RESULTS}/tables/summary.csv",
            caption="../report/summary.rst",
            category="Tables",
        ),
        landing=f"{RESULTS}/tables/landing.rst",
    log:
        f"{RESULTS}/logs/aggregate_records.log",
    conda:
        "../envs/gpusp.yaml"
    params:
        out_dir=lambda wc, output: os.path.dirname(output.summary),
        allow_mixed="--allow-mixed" if config["allow_mixed_code_versions"] else "",
        ceiling=(
            f"--ceiling {config['gpu_peak_relaxations_per_s']}"
            if config.get("gpu_peak_relaxations_per_s")
            else ""
        ),
    shell:
        "gpusp aggregate {input.records:q} --skipped {input.skipped:q} "
        "--out-dir {params.out_dir:q} {params.allow_mixed} {params.ceiling} --intro {input.intro:q} "
        "> {log:q} 2>&1"


rule plot_results:
    """Seaborn figures of the sweep (labelled SIMULATED when the simulator stood in for a GPU)."""
    input:
        samples=rules.aggregate_records.output.parquet,
        summary=rules.aggregate_records.output.summary,
    output:
        **{
            name: report(
                f"{RESULTS}/plots/{name}.png",
                caption=f"../report/{name}.rst",
                category="Figures",
            )
            for name in FIGURES
        },
    log:
        f"{RESULTS}/logs/plot_results.log",
    conda:
        "../envs/gpusp.yaml"
    params:
        out_dir=lambda wc, output: os.path.dirname(output[0]),
        peak=(
            f"--peak {config['gpu_peak_relaxations_per_s']}"
            if config.get("gpu_peak_relaxations_per_s")
            else ""
        ),
    shell:
        "gpusp plot --samples {input.samples:q} --summary {input.summary:q} "
        "--out-dir {params.out_dir:q} {params.peak} > {log:q} 2>&1"
