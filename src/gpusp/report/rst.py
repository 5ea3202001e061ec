"""reStructuredText pieces shared by the report's generated pages."""

from __future__ import annotations


def list_table(title: str, head: list, body: list) -> list[str]:
    """A titled ``list-table`` (header row ``head``, then ``body`` rows) as lines, ending with a blank."""
    out = [title, "-" * len(title), "", ".. list-table::", "   :header-rows: 1", ""]
    for cells in [head] + body:
        out += [f"   {'* -' if j == 0 else '  -'} {cell}" for j, cell in enumerate(cells)]
    return out + [""]
