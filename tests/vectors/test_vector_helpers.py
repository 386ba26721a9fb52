"""domain.vectors.finite: the one-pass sum must agree with the element-wise check everywhere,
including sums that overflow while every number is finite."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memoryd.domain.vectors import finite


def _elementwise(values: list[float]) -> bool:
    return all(math.isfinite(v) for v in values)


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=50))
def test_finite_agrees_with_the_elementwise_check(values):
    assert finite(values) == _elementwise(values)


def test_sums_that_overflow_or_cancel():
    assert finite([1e308, 1e308]) and finite([-1e308, -1e308, 5.0])  # the sum is inf, the numbers are finite
    assert not finite([1e308, 1e308, math.inf])
    assert not finite([math.inf, -math.inf])  # the sum is NaN
    assert not finite([0.5, math.nan])
    assert finite([]) and finite(np.zeros(384, dtype=np.float32).tolist())
