rule solve_graph:
    """Time one solver configuration on one graph (GPU job: one solve never shares a GPU).

    CPU baselines run on the GPU partition too, so that every speed-up compares runs on one host.
    """
    input:
        graph=rules.prepare_graph.output.graph,
        sources=rules.pick_sources.output.sources,
        peer=peer_input,
    output:
        record=f"{RESULTS}/runs/{{graph}}/{{solver}}/{{params}}.json",
        answer=f"{RESULTS}/runs/{{graph}}/{{solver}}/{{params}}.answer.npz",
    log:
        f"{RESULTS}/logs/solve_graph/{{graph}}/{{solver}}/{{params}}.log",
    conda:
        "../envs/gpusp.yaml"
    threads: job_threads
    resources:
        gpu=1,
        slurm_partition=config["slurm"]["gpu_partition"],
        runtime=job_runtime,
    params:
        solver_params=job_params,
        env=solve_env(),
        peer_env=peer_env,
        trials=job_trials,
        warmup=job_warmup,
        budget=job_budget,
        seed=job_seed,
        rows=job_validate_rows,
    shell:
        "{params.env} {params.peer_env} gpusp solve --graph {input.graph:q} --solver {wildcards.solver} "
        "{params.solver_params} --sources {input.sources:q} --trials {params.trials} "
        "--warmup {params.warmup} --seed {params.seed} --validate-rows {params.rows} "
        "--time-budget {params.budget} --params-label {wildcards.params} "
        "--graph-label {wildcards.graph} --record {output.record:q} --answer {output.answer:q} "
        "> {log:q} 2>&1"
