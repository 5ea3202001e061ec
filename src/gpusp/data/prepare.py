"""A graph's config entry (a file, a registered dataset or a generator, then symmetrized and weighted) as a graph.

:func:`prepare_graph` builds the binary graph an entry describes (``gpusp prepare``, the workflow's prepare rule);
:func:`graph_size` says what planning may know of it before it exists: n, m and whether weights may be negative,
from the dataset registry, the generator's own rules or a cheap look at the file's header
(:func:`file_size_hint`).
"""

from __future__ import annotations

import gzip
import json
import zipfile
import zlib
from pathlib import Path

from ..errors import GpuspError


def read_spec(text: str, what: str) -> dict:
    """A graph's config entry given as JSON text; errors name ``what`` (where the text came from)."""
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GpuspError(f"{what}: not valid JSON: {exc}") from None
    if not isinstance(spec, dict):
        raise GpuspError(f"{what}: a graph's config entry is a JSON object, not {type(spec).__name__}")
    return spec


def prepare_graph(spec: dict, output, downloads: str = "results/downloads", mirror=None):
    """Build the binary graph a config entry describes: a file, a dataset or a generator, then weights."""
    from .formats import write_graph

    graph = build_graph(spec, downloads, mirror)
    write_graph(graph, output)
    return graph


def build_graph(spec: dict, downloads: str = "results/downloads", mirror=None):
    """The graph a config entry describes, in memory: a file, a dataset (fetched) or a generator, then weights."""
    from .formats import read_graph
    from .weights import add_weights, replace_weights, symmetrize

    if "file" in spec:
        graph = read_graph(spec["file"], format=spec.get("format"))
    elif "dataset" in spec:
        from .datasets import fetch, get_dataset

        entry = get_dataset(spec["dataset"])
        path = fetch(spec["dataset"], downloads, mirror=mirror)  # progress lines in the job's log
        graph = read_graph(path, format=entry.get("format"))
        graph.name = spec["dataset"]
        graph.meta["dataset"] = spec["dataset"]  # the report joins sizes of one collection (graph_family)
    elif "generate" in spec:
        from .generate import generate

        graph = generate(spec["generate"], seed=spec.get("seed", 0), **spec.get("params", {}))
    else:
        raise GpuspError("a graph needs one of: file, dataset, generate")
    if spec.get("symmetrize"):
        graph = symmetrize(graph)
    w = spec.get("weights")
    if w:
        action = w.get("action", "add" if graph.weight_kind == "unit" else "replace")
        if action != "keep":
            fn = add_weights if action == "add" else replace_weights
            graph = fn(graph, int(w.get("min", 1)), int(w.get("max", 100)), int(w.get("seed", 0)))
    if spec.get("name"):
        graph.name = spec["name"]
    return graph


def file_size_hint(spec: dict) -> tuple[int | None, int | None, bool | None]:
    """(n, m, negative) of a graph file read cheaply: the ``p sp`` line of DIMACS, the ``N M`` header of plain
    files, the arrays of an npz archive, the 17-byte header of GAPBS's .sg/.wsg. Anything else, or a file it
    cannot read: unknown (None)."""
    path = Path(spec["file"])
    fmt = spec.get("format")
    name = path.name.removesuffix(".gz")
    if fmt is None:
        fmt = {".gr": "gr", ".plain": "plain", ".npz": "npz", ".sg": "sg", ".wsg": "wsg"}.get(Path(name).suffix)
    try:
        if fmt in ("sg", "wsg"):
            from .serialized import serialized_counts

            n, m, _ = serialized_counts(path, weighted=fmt == "wsg")
            return n, m, False if fmt == "sg" else None
        if fmt == "npz":
            import numpy as np

            with np.load(path, allow_pickle=False) as z:
                weights = z["weights"]
                return int(z["n"]), int(z["indices"].size), bool(weights.size and weights.min() < 0)
        if fmt not in ("gr", "plain"):
            return None, None, None
        with open(path, "rb") as raw:
            gz = raw.read(2) == b"\x1f\x8b"
        with (gzip.open(path, "rt") if gz else open(path)) as fh:
            for i, line in enumerate(fh):
                if i > 10000:
                    break
                parts = line.split()
                if not parts or parts[0] in ("c", "#"):
                    continue
                if fmt == "gr" and parts[0] == "p" and len(parts) >= 4:
                    return int(parts[2]), int(parts[3]), False  # DIMACS weights are >= 0
                if fmt == "plain" and len(parts) == 2:
                    return int(parts[0]), int(parts[1]), None
                if fmt == "plain":
                    break
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error):
        pass  # a missing or broken file fails in prepare_graph with a proper message
    return None, None, None


def graph_size(name: str, spec: dict) -> tuple[int | None, int | None, bool]:
    """(n, m, may_have_negative_weights) of a config entry known before the graph exists (planning's skip
    decisions); ``name`` is the graph's name in the config."""
    w = spec.get("weights") or {}
    replaced = bool(w) and w.get("action", "add") != "keep"
    negative = replaced and int(w.get("min", 1)) < 0
    if "file" in spec:
        n, m, neg = file_size_hint(spec)
        if replaced:
            neg = negative
        if n is not None and spec.get("symmetrize"):
            m = None if m is None else 2 * m
        return n, m, bool(neg)
    if "dataset" in spec:
        from .datasets import get_dataset

        entry = get_dataset(spec["dataset"])
        factor = 2 if spec.get("symmetrize") else 1
        return int(entry["nodes"]), int(entry["edges"]) * factor, negative
    if "generate" in spec:
        params, n, m = generator_params(spec)
        return n, m, negative if replaced else params.get("wmin", 0) < 0  # delaunay: lengths, never negative
    return None, None, negative


def generator_params(spec: dict) -> tuple[dict, int, int]:
    """(parameters, n, m) of a generated graph's config entry, checked by the generator's own rules; the
    generator's seed is the entry's ``seed`` key."""
    from .generate import check_params

    params = spec.get("params") or {}
    if "seed" in params:
        raise GpuspError("params: seed: a generated graph's seed is its `seed` key, not a generator parameter")
    _, checked, n, m = check_params(spec["generate"], {**params, "seed": spec.get("seed", 0)})
    return checked, n, m


def has_weights(spec: dict) -> bool:
    """Whether a graph comes with weights before its `weights` entry applies: generators, weighted datasets,
    DIMACS and GAPBS .wsg files do (other files are not read here: their preparation decides)."""
    if "generate" in spec:
        return True
    if "dataset" in spec:
        from .datasets import get_dataset

        return get_dataset(spec["dataset"]).get("weights") != "none"
    return (spec.get("format") or Path(spec["file"]).name.removesuffix(".gz").rpartition(".")[2]) in ("gr", "wsg")
