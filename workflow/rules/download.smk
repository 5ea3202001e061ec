rule fetch_dataset:
    """Download a registered dataset (or copy it from the offline mirror, $GPUSP_MIRROR) and verify its checksum.

    A local rule: it runs where snakemake runs (a login node with internet), never on a compute node.
    """
    output:
        download=directory(f"{RESULTS}/downloads/{{dataset}}"),
    log:
        f"{RESULTS}/logs/fetch_dataset/{{dataset}}.log",
    conda:
        "../envs/gpusp.yaml"
    resources:
        runtime=60,
    shell:
        "gpusp datasets fetch {wildcards.dataset:q} --dest {output.download:q} --no-progress > {log:q} 2>&1"
