"""The viewer's number format (viewer/numbers.py): decimals by magnitude, the unit after, a dash for no value."""
import math

from viewer.numbers import GAUGE, force_text, value_text


def test_readout_decimals_by_magnitude():
    assert value_text(1234.567, "N") == "1234.6 N"
    assert value_text(-12.3456, "N") == "-12.35 N"
    assert value_text(0.012345, "m") == "0.0123 m"
    assert value_text(3.0) == "3.0000"
    assert value_text(math.nan, "N") == "—" and value_text(math.inf) == "—"


def test_gauge_steps_are_the_devices_bars():
    assert value_text(-1234.0, "rpm", GAUGE, signed=True) == "-1234 rpm"
    assert value_text(2.5, "deg", GAUGE, signed=True) == "+2.50 deg"
    assert value_text(0.25, "N", GAUGE, signed=True) == "+0.250 N"


def test_force_text():
    assert force_text(850.0) == "850 N" and force_text(1234.0) == "1.23 kN"


def test_a_value_that_rounds_to_zero_has_no_minus():
    from viewer.devices_pane import format_value
    assert format_value(-0.00001, "m") == "+0.0 mm"
    assert value_text(-0.00001, "N") == "0.0000 N" and value_text(-0.0004, "deg", GAUGE, signed=True) == "+0.000 deg"
    assert force_text(-0.3) == "0 N" and value_text(-0.0006, "N", GAUGE, signed=True) == "-0.001 N"
    from viewer.numbers import length_text
    assert length_text(-4e-5) == "0.0 mm"
