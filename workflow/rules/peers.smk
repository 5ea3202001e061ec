rule build_gapbs:
    """Build the GAPBS peer (sssp, converter, and gpusp's driver gapbs_sssp_many compiled against the archive) from its
    pinned archive: mirror first, sha256 checked.

    Without a C++ compiler with OpenMP (or make), BUILD.json says why and gapbs_sssp jobs are skipped. A local
    rule: the archive comes from the mirror ($GPUSP_MIRROR) or GitHub, so it builds where snakemake runs (a login
    node with internet and the same compiler as the compute nodes) and never on a compute node. The source parameter
    names the commit and the driver's sha256, so an edited driver is rebuilt.
    """
    output:
        build=f"{peer_build_dir('gapbs')}/{peers.BUILD_INFO}",
    log:
        f"{RESULTS}/logs/build_gapbs.log",
    conda:
        "../envs/gpusp.yaml"
    resources:
        runtime=30,
    params:
        dest=lambda wc, output: os.path.dirname(output.build),
        downloads=f"{RESULTS}/downloads/peers",
        source=peers.source_key("gapbs"),
    shell:
        "gpusp peers build gapbs --dest {params.dest:q} --downloads {params.downloads:q} "
        "--unavailable-ok > {log:q} 2>&1"


rule build_gunrock:
    """Build the Gunrock peer: gpusp's driver (src/gpusp/solvers/peers/gunrock_sssp.cu) compiled by nvcc against Gunrock's pinned
    archive (mirror first, sha256 checked), for sm_90 unless $GPUSP_CUDA_ARCH says otherwise.

    Without nvcc, BUILD.json says why and gunrock_sssp jobs are skipped; the driver's compile time is in BUILD.json.
    A local rule like build_gapbs: the archive comes from the mirror or GitHub, so it builds where snakemake runs,
    which needs nvcc there (compiling for sm_90 needs no GPU). The source parameter names the commit and the
    driver's sha256, so an edited driver is rebuilt.
    """
    output:
        build=f"{peer_build_dir('gunrock')}/{peers.BUILD_INFO}",
    log:
        f"{RESULTS}/logs/build_gunrock.log",
    conda:
        "../envs/gpusp.yaml"
    resources:
        runtime=30,
    params:
        dest=lambda wc, output: os.path.dirname(output.build),
        downloads=f"{RESULTS}/downloads/peers",
        source=peers.source_key("gunrock"),
    shell:
        "gpusp peers build gunrock --dest {params.dest:q} --downloads {params.downloads:q} "
        "--unavailable-ok > {log:q} 2>&1"
