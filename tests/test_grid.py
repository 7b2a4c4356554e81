import pytest
from hypothesis import given
from hypothesis import strategies as st

from irgrid.errors import ConfigError
from irgrid.grid import decode_point, encode_point, expand_grid, format_value


def test_values_are_written_canonically():
    assert format_value(1000) == "1000"
    assert format_value(1000.0) == "1000"
    assert format_value(0.9) == "0.9"
    assert format_value(0.05) == "0.05"
    assert encode_point({"b": 0.4, "k1": 0.9}, ["k1", "b"]) == "k1~0.9_b~0.4"
    assert encode_point({}, []) == "default"


# names with the separator in them (the dependence models' bigram_weight, lambda_t, max_terms) too
@given(st.dictionaries(st.sampled_from(["k1", "b", "mu", "lam", "bigram_weight", "lambda_t", "max_terms", "a_b_c"]),
                       st.floats(-1e6, 1e6, allow_nan=False), min_size=1))
def test_encoding_round_trips(point):
    order = sorted(point)
    assert decode_point(encode_point(point, order)) == {name: float(format_value(v)) for name, v in point.items()}
    assert decode_point(encode_point(point, order)) == pytest.approx(point)


def test_grid_is_the_product_without_duplicates():
    points = expand_grid({"k1": [0.9, 1.2, 1.2], "b": 0.4}, ["k1", "b"])
    assert points == [{"k1": 0.9, "b": 0.4}, {"k1": 1.2, "b": 0.4}]


def test_bad_values_are_refused():
    with pytest.raises(ConfigError):
        format_value(float("nan"))
    with pytest.raises(ConfigError, match="k1"):
        decode_point("k1~x")
    for bad in ("mu", "mu~1_", "~1", "mu~1_b"):
        with pytest.raises(ConfigError):
            decode_point(bad)
    with pytest.raises(ConfigError):
        encode_point({"k1": 1}, ["k1", "b"])
