rule solve_graph:
    """Time one solver configuration on one graph (GPU job: one solve never shares a GPU)."""
    input:
        graph=rules.prepare_graph.output.graph,
        sources=rules.pick_sources.output.sources,
    output:
        record=f"{RESULTS}/runs/{{graph}}/{{solver}}/{{params}}.json",
        answer=f"{RESULTS}/runs/{{graph}}/{{solver}}/{{params}}.answer.npz",
    log:
        f"{RESULTS}/logs/solve_graph/{{graph}}/{{solver}}/{{params}}.log",
    params:
        solver_params=job_params,
        env=solve_env(),
        trials=config.get("trials", 5),
        warmup=config.get("warmup", 1),
        budget=config.get("time_budget_s", 600),
        rows=config.get("validate", {}).get("apsp_rows", 16),
    resources:
        gpu=1,
        slurm_partition=config.get("slurm", {}).get("gpu_partition", "gpu"),
        runtime=lambda wc, attempt: 10 + int(config.get("time_budget_s", 600) / 60) * attempt,
    shell:
        "{params.env} gpusp solve --graph {input.graph:q} --solver {wildcards.solver} "
        "{params.solver_params} --sources {input.sources:q} --trials {params.trials} "
        "--warmup {params.warmup} --validate-rows {params.rows} --time-budget {params.budget} "
        "--params-label {wildcards.params} --graph-label {wildcards.graph} "
        "--record {output.record:q} --answer {output.answer:q} > {log:q} 2>&1"
