"""Paper 003's picture: the shortest path between the product's two smallest cells, over the matrix."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..atomic import atomic_open, atomic_path  # noqa: E402


def draw_flow(result, png) -> None:
    """The product as an image, the path as a line, the source (smallest cell) and target marked."""
    n = result.size
    fig, ax = plt.subplots(figsize=(7, 6.2))
    im = ax.imshow(result.product, cmap="viridis", interpolation="nearest")
    fig.colorbar(im, ax=ax, label="product entry (cost of entering the cell)")
    rows, cols = np.divmod(np.asarray(result.path, dtype=np.int64), n)
    ax.plot(cols, rows, color="w", lw=2, marker="." if len(result.path) < 200 else None)
    for (value, r, c), colour, label in zip(result.smallest, ("#2ca02c", "#d62728"), ("source", "target")):
        ax.plot(c, r, marker="o", ms=10, mfc=colour, mec="k", ls="", label=f"{label}: ({r}, {c}) = {value}")
    ax.legend(loc="upper right", fontsize=8, framealpha=0.9)
    simulated = " [SIMULATED]" if result.to_dict()["mode"] == "sim" else ""
    ax.set_title(f"Paper 003: {n}x{n} product (seed {result.seed}), path cost {result.cost}, "
                 f"{len(result.path)} cells{simulated}", fontsize=9)
    with atomic_path(png, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")
    plt.close(fig)


def write_flow(result, png, record) -> None:
    """The picture and the JSON summary, each written atomically."""
    draw_flow(result, png)
    with atomic_open(record) as fh:
        json.dump(result.to_dict(), fh, indent=1, default=str)
