"""A kernel's signature, written once at the kernel, and the offline compile gate's list made from it.

``@kernel(signature, cases=...)`` sits on a ``cuda.jit`` kernel or on a factory that builds kernels from compile-time
constants; it records the signature (a template whose ``{names}`` each case fills in) and returns the object
unchanged. :func:`targets` turns a module's records into the (label, kernel, signature) triples that
:mod:`gpusp.solvers.compilecheck` compiles for sm_90. Nothing here imports Numba.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

# The distance types every kernel over distances is compiled for.
DISTANCES = ({"w": "int32"}, {"w": "int64"})
# ... and the arc-offset types of the kernels that also take graphs past 2^31 - 1 arcs ({o}: int32 or int64 indptr).
OFFSETS = tuple({**d, "o": o} for o in ("int32", "int64") for d in DISTANCES)

_RECORDS: dict[str, list["Record"]] = {}


@dataclass(frozen=True)
class Record:
    """One decorated kernel or factory: its signature template(s) and the cases the gate compiles."""

    name: str  # the kernel's or factory's name, the first part of its labels
    obj: object
    signature: str | Mapping[str, str]
    cases: Iterable[dict] | Callable[[], Iterable[dict]]
    registers: int = 0  # registers a thread at most, as the kernel's launch assumes (0: no budget)

    def targets(self):
        """(label, kernel, signature) for every case (and every kernel of a factory's mapping)."""
        cases = self.cases() if callable(self.cases) else self.cases
        factory = not hasattr(self.obj, "py_func")
        takes = set(inspect.signature(self.obj).parameters) if factory else set()
        for case in cases:
            parts = case.get("kernels")
            case = {k: v for k, v in case.items() if k != "kernels"}
            tag = ",".join(f"{k}={v}" if k != "w" else str(v) for k, v in case.items())
            built = self.obj(**{k: v for k, v in case.items() if k in takes}) if factory else self.obj
            if isinstance(self.signature, Mapping):
                for part, template in self.signature.items():
                    if parts is None or part in parts:
                        yield f"{self.name}.{part}[{tag}]", built[part], template.format(**case)
            else:
                yield f"{self.name}[{tag}]" if tag else self.name, built, self.signature.format(**case)


def kernel(signature: str | Mapping[str, str], *, cases: Iterable[dict] | Callable[[], Iterable[dict]] = ({},),
           registers: int = 0):
    """Decorator: record ``signature`` at a kernel (or at a factory of kernels) for the compile gate.

    ``signature`` is a Numba signature template, e.g. ``"void({w}[::1], int32[::1], int64)"``, or for a factory that
    returns a mapping of kernels, a mapping from their keys to templates. Each dict of ``cases`` (or of what a callable
    ``cases`` returns, evaluated only when the gate runs) fills the template's names; for a factory, the keys that
    name its parameters are also its arguments, and a key ``kernels`` names which of its kernels that case compiles
    (all of them where it is absent). ``registers``: the budget the kernel's launch assumes (its blocks per
    multiprocessor), which the gate checks on sm_90 machine code, spills included. The decorated object is returned
    unchanged."""

    module = sys._getframe(1).f_globals["__name__"]  # where the decorator is written: the kernel's module

    def record(obj):
        name = getattr(getattr(obj, "py_func", obj), "__name__", None) or obj.__name__
        _RECORDS.setdefault(module, []).append(Record(name, obj, signature, cases, registers))
        return obj

    return record


def recorded(module: str) -> list[Record]:
    """The records of ``module`` (imported by the caller)."""
    return list(_RECORDS.get(module, ()))


def targets(module: str) -> list[tuple[str, object, str]]:
    """Every (label, kernel, signature) the gate compiles for ``module``."""
    return [t for record in recorded(module) for t in record.targets()]


def budgets(module: str) -> dict[str, int]:
    """The register budget of every label of ``module`` whose kernel has one."""
    return {label: record.registers for record in recorded(module) if record.registers
            for label, _, _ in record.targets()}
