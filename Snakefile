"""gpusp: download -> preprocess -> solve -> validate -> aggregate -> report.

Run `snakemake --cores 2` (the embedded default config/config.yaml) or `snakemake --profile slurm`
on a cluster. `--configfile X` REPLACES the default config (it is not merged into it: a sweep runs
exactly the graphs and solvers X names); `--config key=value` then overrides single keys.
Logic lives in the gpusp package; the rules only call the `gpusp` command line.
"""

import os

from snakemake.utils import min_version

min_version("9.0")


if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


# common.smk checks the config (workflow/schemas/config.schema.yaml, defaults filled in, then what the
# schema cannot say) and plans its jobs before any rule exists; a bad config stops here in one line.
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


localrules:
    all,
    write_skipped,


rule all:
    default_target: True
    input:
        tables=rules.aggregate_records.output,
        plots=rules.plot_results.output,
        paper003=rules.run_paper003.output if config.get("paper003") is not None else [],
