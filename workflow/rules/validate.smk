rule validate_answer:
    """Check a solver's distances and parent tree on the CPU (SciPy's reference or the certificate, as the config's
    validate.method says), with its own timing (on a cluster in the group job of its solve, on
    the same node)."""
    input:
        graph=rules.prepare_graph.output.graph,
        answer=rules.solve_graph.output.answer,
    output:
        verdict=f"{RESULTS}/runs/{{graph}}/{{solver}}/{{params}}.verdict.json",
    log:
        f"{RESULTS}/logs/validate_answer/{{graph}}/{{solver}}/{{params}}.log",
    group:
        gpu_group
    conda:
        "../envs/gpusp.yaml"
    resources:
        # a GPU and the turn too, though it computes on the CPU: a validation then never runs beside a timed solve
        # (on a workstation with --resources gpu=1, and inside a group job, whose jobs the profile's gpu_turn=1 puts
        # in series), so a CPU baseline is timed on a quiet host and a group job asks for one job's cores
        gpu=1,
        gpu_turn=1,
        mem_mb=job_memory,
        runtime=lambda wc, attempt: 5 * attempt,
    params:
        # a peer's wrong answer is recorded and shown as failed; one of ours stops the run
        failure_ok=lambda wc: "--failure-ok" if peer_of(wc) else "",
        # the config's validate.method and reference_max_work: a change reruns the validations, never the solves
        validation=(
            f"--validation-method {config['validate']['method']} "
            f"--reference-max-work {config['validate']['reference_max_work']}"
        ),
    shell:
        "gpusp validate --graph {input.graph:q} --answer {input.answer:q} "
        "--output {output.verdict:q} {params.validation} {params.failure_ok} > {log:q} 2>&1"
