"""gpusp: download -> preprocess -> solve -> validate -> aggregate -> report.

Run `snakemake --cores 2` (the embedded default config/config.yaml) or `snakemake --profile slurm` on a
cluster. A `--configfile X` that names graphs or solvers REPLACES the default (a sweep runs exactly the graphs
and solvers X names); one that names neither (a site file: results, mirror, trials, ...) is laid over the
default. `--config key=value` then overrides single keys (nested values typed as YAML). Logic lives in the
gpusp package; the rules only call the `gpusp` command line. `gpusp bench --config X --out DIR` runs this workflow
in its own process through Snakemake's API, one job at a time (gpusp.bench).
"""

import os

from snakemake.utils import min_version

min_version("9.0")

# This workflow's own folder (also when it is used as a module from another one): the default config and its
# graph files are found from here, not from the working directory.
WORKFLOW_DIR = str(workflow.current_basedir)
# with --sdm conda, workflow/envs/gpusp.post-deploy.sh installs gpusp into the rules' environment from here (set
# through update(): `snakemake --lint` takes every os.environ[...] for a variable the workflow reads)
os.environ.update(GPUSP_WORKFLOW_DIR=WORKFLOW_DIR)


# common.smk reads the config (the default, the command line's files and overrides), checks it (the schema,
# defaults filled in, then what the schema cannot say) and plans its jobs before any rule exists; a bad config
# stops here in one line.
include: "workflow/rules/common.smk"


# The report opens on the results: once aggregate_records has written the landing page (the workflow's
# description above the fastest solver per graph), `snakemake --report` shows it; before, the description.
LANDING = os.path.abspath(f"{RESULTS}/tables/landing.rst")


report: LANDING if os.path.exists(LANDING) else "workflow/report/workflow.rst"


include: "workflow/rules/download.smk"
include: "workflow/rules/preprocess.smk"
include: "workflow/rules/peers.smk"
include: "workflow/rules/solve.smk"
include: "workflow/rules/validate.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/paper003.smk"


# Run where snakemake runs, never as cluster jobs: the downloads and the peer builds need the internet, which
# compute nodes often lack; the others take a second.
localrules:
    all,
    write_skipped,
    fetch_dataset,
    build_gapbs,
    build_gunrock,
    pick_sources,


rule all:
    default_target: True
    input:
        tables=rules.aggregate_records.output,
        plots=rules.plot_results.output,
        paper003=rules.run_paper003.output if config.get("paper003") is not None else [],
        compare=rules.compare_results.output if config["compare_with"] else [],
