"""gpusp: download -> preprocess -> solve -> validate -> aggregate -> report.

Run `snakemake --cores 2` (embedded default config) or `snakemake --profile slurm` on a cluster.
Logic lives in the gpusp package; the rules only call the `gpusp` command line.
"""

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/preprocess.smk"
include: "workflow/rules/solve.smk"
include: "workflow/rules/validate.smk"
include: "workflow/rules/aggregate.smk"


rule all:
    input:
        rules.aggregate_records.output,
        rules.plot_results.output,
    default_target: True
