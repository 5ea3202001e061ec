"""The one table of solvers, collected from the families: every ``gpusp/solvers/<family>/spec.py`` (and
``solvers/peers/<family>/spec.py``) lists its solvers as ``SPECS``. The CLI, the workflow and the tests read this
table; it imports no Numba (a solver class is imported only by :meth:`SolverSpec.load`).

Names are ``<family>_<variant>``, the family being the folder. Papers (``../shared/seeds``): 000 Bodra, 001 Okuyama
et al., 002 Zuccato & Lena, 003 Sudhanan, 004 An.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from ..errors import SolverError
from .common.spec import PROBLEMS, Param, SolverSpec

__all__ = ["PROBLEMS", "Param", "SolverSpec", "SPECS", "REGISTRY", "FAMILIES", "get", "list_solvers"]

HERE = Path(__file__).parent
NOT_FAMILIES = {"common", "peers"}


def _families() -> list[str]:
    """Dotted names of every family package (a folder with a spec.py), in name order."""
    out = []
    for parent, prefix in ((HERE, __package__), (HERE / "peers", f"{__package__}.peers")):
        for info in pkgutil.iter_modules([str(parent)]):
            if info.ispkg and info.name not in NOT_FAMILIES and (parent / info.name / "spec.py").exists():
                out.append(f"{prefix}.{info.name}")
    return sorted(out, key=lambda name: name.rsplit(".", 1)[1])


FAMILIES: tuple[str, ...] = tuple(_families())


def _collect() -> tuple[SolverSpec, ...]:
    specs = []
    for family in FAMILIES:
        folder = family.rsplit(".", 1)[1]
        for spec in importlib.import_module(f"{family}.spec").SPECS:
            if spec.family != folder:
                raise SolverError(f"{family}.spec lists {spec.name}, whose family {spec.family!r} is not its folder")
            specs.append(spec)
    return tuple(specs)


SPECS: tuple[SolverSpec, ...] = _collect()
REGISTRY: dict[str, SolverSpec] = {s.name: s for s in SPECS}


def get(name: str) -> SolverSpec:
    """The spec of a solver, or SolverError listing the close names."""
    try:
        return REGISTRY[name]
    except KeyError:
        near = [n for n in REGISTRY if n.split("_")[0] == name.split("_")[0]] or sorted(REGISTRY)
        raise SolverError(f"unknown solver {name!r}; known: {', '.join(near)}") from None


def list_solvers(problem: str | None = None, device: str | None = None) -> list[str]:
    """Solver names, optionally only those for one problem ('sssp'/'apsp') or device ('gpu'/'cpu')."""
    if problem is not None and problem not in PROBLEMS:
        raise SolverError(f"problem must be one of {PROBLEMS}, not {problem!r}")
    return [s.name for s in SPECS if (problem is None or s.problem == problem)
            and (device is None or s.device == device)]
