"""The pairwise design the solver tests use instead of cross-product grids (tests/cases.py)."""

import itertools

import pytest
from cases import pairwise


@pytest.mark.parametrize("sizes", [(2,), (3, 2), (19, 4, 2, 3), (2, 2, 2, 2, 2, 2), (4, 4, 4)])
def test_every_pair_of_values_meets_in_fewer_rows_than_the_grid(sizes):
    values = {f"p{k}": [f"v{k}_{i}" for i in range(size)] for k, size in enumerate(sizes)}
    rows = pairwise(**values)
    for a, b in itertools.combinations(values, 2):
        missing = [(x, y) for x in values[a] for y in values[b] if not any(r[a] == x and r[b] == y for r in rows)]
        assert not missing, f"{a} x {b}: {missing}"
    assert all(set(r) == set(values) for r in rows)
    sizes = sorted(sizes, reverse=True)
    assert len(rows) >= sizes[0] * (sizes[1] if len(sizes) > 1 else 1)  # no design can do with fewer
    if len(sizes) > 2:
        assert len(rows) < len(list(itertools.product(*values.values())))
    assert rows == pairwise(**values)  # deterministic
