"""What the report says about a batched solver's times and a solver's preprocessing (:mod:`gpusp.report.aggregate`).

A batched solver (registry ``batched=True``: every source of a job in one run, :mod:`gpusp.measure.harness`) records
per source its share of each batch sample (batch / K); work done once before the timed runs (PHAST's contraction
hierarchy) is in no sample and reported by the counters ``preprocess_s`` and ``preprocess_bytes``. The summary
carries them as columns; these pieces put them into the first page's cells, so that a share of a batch is never
read as the time of one source alone and preprocessing is never hidden.
"""

from __future__ import annotations

from .rst import missing, number

PREPROCESS_COUNTERS = ("preprocess_s", "preprocess_bytes")  # a solver's one-off preparation, outside every sample
BATCH_FIELDS = ("batch_sources", "batch_median_ms", *PREPROCESS_COUNTERS)


def batch_fields(prefix: str, row) -> dict:
    """What a summary ``row`` says about batching and preprocessing (``batch_sources``, ``batch_median_ms``,
    ``preprocess_s``, ``preprocess_bytes``), those it has, under ``prefix`` + ``_``: nothing for a solver that runs
    one source at a time without preprocessing."""
    return {f"{prefix}_{key}": row.get(key) for key in BATCH_FIELDS if not missing(row.get(key))}


def batch_note(row, prefix: str) -> str:
    """The words a first-page time cell gets for a batched configuration: whose share the median is."""
    k, batch = row.get(f"{prefix}_batch_sources"), row.get(f"{prefix}_batch_median_ms")
    if missing(k):
        return ""
    return f", per source of a batch of {number(k)} (batch {number(batch)} ms)"


def preprocess_note(row, prefix: str) -> str:
    """The words a first-page solver cell gets for a configuration with untimed preprocessing."""
    seconds, size = row.get(f"{prefix}_preprocess_s"), row.get(f"{prefix}_preprocess_bytes")
    if missing(seconds) and missing(size):
        return ""
    said = [f"{number(seconds)} s" if not missing(seconds) else None,
            _size(size) if not missing(size) else None]
    return f" + preprocessing {', '.join(s for s in said if s)} (not in the times)"


def _size(nbytes) -> str:
    """A size in bytes, kB, MB or GB (decimal), three significant digits."""
    scale = next((i for i in (3, 2, 1) if float(nbytes) >= 1000 ** i), 0)
    return f"{number(float(nbytes) / 1000 ** scale)} {('B', 'kB', 'MB', 'GB')[scale]}"


def batched_mark(row, ratio_key: str, *prefixes) -> str:
    """' (batched)' after the ratio ``ratio_key`` where it has one side (``prefixes``) that is a share of a batch."""
    batched = any(not missing(row.get(f"{p}_batch_sources")) for p in prefixes)
    return " (batched)" if batched and not missing(row.get(ratio_key)) else ""


def batch_legend(rows) -> list[str]:
    """The paragraph under the first page's tables that says what a batched time and preprocessing are; nothing
    where no row has either."""
    if rows is None or rows.empty:
        return []
    columns = [f"{p}_{key}" for p in ("gpu", "cpu", "peer") for key in BATCH_FIELDS]
    shown = [c for c in columns if c in rows and rows[c].notna().any()]
    if not shown:
        return []
    return ["Per source of a batch of K (batch T ms): a batched solver (registry ``batched=True``: "
            "``multisource_sssp``, ``phast_gpu``) solves all K sources of a job in one run; the median shown is "
            "each source's share, the batch's time over K, and T is the median time of the whole batch: a "
            "throughput figure, not how long one source alone takes. (batched): a ratio one of whose sides is such "
            "a share. + preprocessing: work done once before the timed runs (PHAST's contraction hierarchy, built "
            "on the host: its seconds and size), in no median and no ratio. summary.csv carries the same as "
            "``batch_sources``, ``batch_median_ms``, ``preprocess_s`` and ``preprocess_bytes``.", ""]
