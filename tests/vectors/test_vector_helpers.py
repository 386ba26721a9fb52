"""The vector path's hot helpers against their plain definitions: domain.vectors' finite (the
one-pass sum must agree with the element-wise check everywhere, including sums that overflow
while every number is finite) and point ids (uuid5, computed without UUID objects), and the
Qdrant Edge operation log's vector encoding."""

from __future__ import annotations

import math
import uuid

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memoryd.domain.vectors import KEYWORD_NAMESPACE, POINT_NAMESPACE, finite, keyword_point_id, point_id


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


@given(st.text(), st.text(), st.text(), st.integers(min_value=0, max_value=2**62), st.one_of(st.none(), st.text()))
def test_point_ids_are_the_uuid5_of_their_source(tenant, session, message_id, timestamp, model_id):
    source = f"id:{message_id}" if message_id else f"ts:{timestamp}"
    assert point_id(tenant, session, message_id, timestamp, model_id) == str(
        uuid.uuid5(POINT_NAMESPACE, "\x1f".join((tenant, session, source, model_id or "")))
    )
    assert keyword_point_id(tenant, session, message_id, timestamp) == str(
        uuid.uuid5(KEYWORD_NAMESPACE, "\x1f".join((tenant, session, source)))
    )


@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=400))
def test_the_operation_log_packs_vectors_as_array_f_does(values):
    """edge_engine's vector encoding (one struct per dimension) against its plain definition:
    the float32 bytes of array("f"), read back as the same float32 values."""
    from array import array

    from memoryd.storage.qdrant import edge_engine

    encoded = edge_engine._encode(values)
    assert encoded == array("f", values).tobytes()
    assert edge_engine._decode(encoded) == array("f", values).tolist()
