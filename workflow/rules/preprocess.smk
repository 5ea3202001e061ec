rule prepare_graph:
    """Parse, weight (seeded) and convert one configured graph to the binary CSR every later job maps (.gcsr)."""
    input:
        unpack(dataset_input),
    output:
        graph=f"{RESULTS}/graphs/{{graph}}.gcsr",
    log:
        f"{RESULTS}/logs/prepare_graph/{{graph}}.log",
    conda:
        "../envs/gpusp.yaml"
    resources:
        mem_mb=graph_memory,
        runtime=graph_runtime,
    params:
        spec=lambda wc: graph_spec_json(config, wc.graph),
        downloads=lambda wc, input: input.get("download", f"{RESULTS}/downloads"),
    shell:
        "gpusp prepare --spec {params.spec:q} --output {output.graph:q} "
        "--downloads {params.downloads:q} > {log:q} 2>&1"


rule pick_sources:
    """Seeded SSSP sources among vertices with out-degree > 0, shared by solver and verifier (a local rule: a
    second's work)."""
    input:
        graph=rules.prepare_graph.output.graph,
    output:
        sources=f"{RESULTS}/graphs/{{graph}}.sources.txt",
    log:
        f"{RESULTS}/logs/pick_sources/{{graph}}.log",
    conda:
        "../envs/gpusp.yaml"
    params:
        n_sources=lambda wc: graph_sources(wc.graph)[0],
        seed=lambda wc: graph_sources(wc.graph)[1],
    shell:
        "gpusp sources {input.graph:q} {output.sources:q} --count {params.n_sources} "
        "--seed {params.seed} > {log:q} 2>&1"
