rule validate_answer:
    """Check a solver's distances and parent tree against SciPy on the CPU, with its own timing."""
    input:
        graph=rules.prepare_graph.output.graph,
        answer=rules.solve_graph.output.answer,
    output:
        verdict=f"{RESULTS}/runs/{{graph}}/{{solver}}/{{params}}.verdict.json",
    log:
        f"{RESULTS}/logs/validate_answer/{{graph}}/{{solver}}/{{params}}.log",
    conda:
        "../envs/gpusp.yaml"
    shell:
        "gpusp validate --graph {input.graph:q} --answer {input.answer:q} "
        "--output {output.verdict:q} > {log:q} 2>&1"
