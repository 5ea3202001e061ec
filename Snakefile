"""gpusp: download -> preprocess -> solve -> validate -> aggregate -> report.

Run `snakemake --cores 2` (the embedded default config/config.yaml) or `snakemake --profile slurm`
on a cluster. `--configfile X` REPLACES the default config (it is not merged into it: a sweep runs
exactly the graphs and solvers X names); `--config key=value` then overrides single keys.
Logic lives in the gpusp package; the rules only call the `gpusp` command line.
"""

from snakemake.utils import min_version, validate

min_version("9.0")


if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


# Names end up in file paths and shell commands: the schema refuses unsafe ones before any job runs.
validate(config, "workflow/schemas/config.schema.yaml", set_default=True)


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/preprocess.smk"
include: "workflow/rules/peers.smk"
include: "workflow/rules/solve.smk"
include: "workflow/rules/validate.smk"
include: "workflow/rules/aggregate.smk"


localrules:
    all,
    write_skipped,


rule all:
    default_target: True
    input:
        tables=rules.aggregate_records.output,
        plots=rules.plot_results.output,
