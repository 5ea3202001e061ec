rule run_paper003:
    """Paper 003's whole flow: seeded matrix product, its two smallest cells, the shortest path between
    them on the grid of the product's entries (validated against SciPy), drawn over the matrix.
    """
    output:
        png=report(
            f"{RESULTS}/paper003/path.png",
            caption="../report/paper003.rst",
            category="Paper 003",
        ),
        record=f"{RESULTS}/paper003/flow.json",
    log:
        f"{RESULTS}/logs/run_paper003.log",
    conda:
        "../envs/gpusp.yaml"
    resources:
        gpu=1,
        runtime=30,
    params:
        env=solve_env(),
        flow=lambda wc: " ".join(
            f"--{key} {shlex.quote(str(value))}"
            for key, value in sorted(config["paper003"].items())
        ),
    shell:
        "{params.env} gpusp paper003 {params.flow} --png {output.png:q} --record {output.record:q} "
        "> {log:q} 2>&1"
