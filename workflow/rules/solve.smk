rule solve_graph:
    """Time one solver configuration on one graph (GPU job: one solve never shares a GPU).

    A solve asks for its solver's GPUs (gpu: 1, or a multi-GPU solver's gpus parameter). CPU baselines run on the
    GPU nodes too, so that every speed-up compares runs on one host. On a cluster the 1-GPU solves and their
    validations travel together in group jobs of the group "gpu" (the SLURM profile sets how many per job), where
    they run one after the other on the job's one GPU; a solve taking g > 1 GPUs goes with its validation in a group
    "gpus<g>" of its own. The solver's code hash is a parameter: editing a solver reruns exactly its jobs.
    """
    input:
        graph=rules.prepare_graph.output.graph,
        sources=sources_input,
        peer=peer_input,
    output:
        record=f"{RESULTS}/runs/{{graph}}/{{solver}}/{{params}}.json",
        answer=f"{RESULTS}/runs/{{graph}}/{{solver}}/{{params}}.answer.npz",
    log:
        f"{RESULTS}/logs/solve_graph/{{graph}}/{{solver}}/{{params}}.log",
    group:
        gpu_group
    conda:
        "../envs/gpusp.yaml"
    threads: job_threads
    resources:
        gpu=job_gpus,
        gpu_turn=1,
        mem_mb=job_memory,
        runtime=job_runtime,
    params:
        solver_params=job_params,
        sources=sources_flag,
        answer=answer_flag,
        settings=job_settings,
        code=job_code,
        env=solve_env(),
        peer_env=peer_env,
    shell:
        "{params.env} {params.peer_env} gpusp solve --graph {input.graph:q} --solver {wildcards.solver} "
        "{params.solver_params} {params.sources} {params.settings} "
        "--params-label {wildcards.params} --graph-label {wildcards.graph} "
        "--record {output.record:q} {params.answer} {output.answer:q} > {log:q} 2>&1"
