"""reStructuredText pieces shared by the report's generated pages, and the numbers they print."""

from __future__ import annotations

import math

_SPECIAL = str.maketrans({c: "\\" + c for c in "\\*`|_[]<>"})


def list_table(title: str, head: list, body: list) -> list[str]:
    """A titled ``list-table`` (header row ``head``, then ``body`` rows) as lines, ending with a blank."""
    out = [title, "-" * len(title), "", ".. list-table::", "   :header-rows: 1", ""]
    for cells in [head] + body:
        out += [f"   {'* -' if j == 0 else '  -'} {cell}" for j, cell in enumerate(cells)]
    return out + [""]


def text(value) -> str:
    """``value`` as inline text that reStructuredText prints as written (a GPU name, a path, a version)."""
    return " ".join(str(value).split()).translate(_SPECIAL)


def field_list(fields: list[tuple[str, str]]) -> list[str]:
    """``:name: value`` lines (values already reStructuredText), ending with a blank; empty values left out."""
    return [f":{text(name)}: {value}" for name, value in fields if value not in (None, "")] + [""]


def missing(x) -> bool:
    """None, NaN or pandas' NA: a cell with nothing measured."""
    try:
        return x is None or bool(x != x)
    except (TypeError, ValueError):  # pandas.NA compares to NA, which has no truth value
        return True


def number(x, digits: int = 3, trim: bool = True) -> str:
    """``digits`` significant digits written out, never in exponent form, thousands grouped: 11,349;
    5.03; 0.000087 ('n/a' when nothing was measured); ``trim`` drops trailing zeros (5, not 5.00)."""
    if missing(x):
        return "n/a"
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    out = f"{x:,.{decimals}f}"
    if trim and "." in out:
        out = out.rstrip("0").rstrip(".")
    return out


def ratio(x) -> str:
    """A speed-up or a ratio of times to three significant digits, zeros kept (1.00x is not 1.004x rounded
    away): 10.0x, 0.850x; below 0.01 as how many times slower (281,000x slower, not 0.00000356x)."""
    if missing(x):
        return "n/a"
    if 0 < float(x) < 0.01:
        return f"{number(1 / float(x))}x slower"
    return f"{number(x, trim=False)}x"
