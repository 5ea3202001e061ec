rule fetch_dataset:
    """Download a registered dataset (or copy it from the offline mirror) and verify its checksum."""
    output:
        download=directory(f"{RESULTS}/downloads/{{dataset}}"),
    log:
        f"{RESULTS}/logs/fetch_dataset/{{dataset}}.log",
    conda:
        "../envs/gpusp.yaml"
    resources:
        runtime=60,
    params:
        mirror=mirror_flag(),
    shell:
        "gpusp datasets fetch {wildcards.dataset:q} --dest {output.download:q} {params.mirror} "
        "--no-progress > {log:q} 2>&1"
