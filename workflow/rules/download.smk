rule fetch_dataset:
    """Download a registered dataset (or copy it from the offline mirror) and verify its checksum."""
    output:
        directory(f"{RESULTS}/downloads/{{dataset}}"),
    log:
        f"{RESULTS}/logs/fetch_dataset/{{dataset}}.log",
    params:
        mirror=f"--mirror {MIRROR}" if MIRROR else "",
    resources:
        runtime=60,
    shell:
        "gpusp datasets fetch {wildcards.dataset:q} --dest {output:q} {params.mirror} --no-progress > {log:q} 2>&1"
