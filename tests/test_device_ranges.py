"""Device bars are scaled to the device: every device channel a solver run writes carries its physical range from
the mechanism TOML, a bar fills |value| / range, and a channel without a range (another writer's file) shows its
value and "no range", never a fill scaled to the run."""
from __future__ import annotations

import math
import tomllib

import h5py
import numpy as np
import pytest

pytest.importorskip("PySide6")

from solver.runfile import RunFile  # noqa: E402
from solver.simulate import run_scenario  # noqa: E402
from tests.test_solver_helpers import ROOT, SCEN  # noqa: E402
from viewer.channel_blocks import ChannelBlocks  # noqa: E402
from viewer.devices_pane import BAR_BACKGROUND, NEGATIVE, POSITIVE, DevicesPane  # noqa: E402

BARS = ("axial_damper", "lateral_damper")      # the groups the devices pane draws as bars


def expected_ranges(mechanism: str) -> dict[str, float]:
    """Each device channel's full scale as the mechanism TOML states it (strokes to the stops, rated rates)."""
    m = tomllib.loads((ROOT / "resources" / "mechanisms" / f"{mechanism}.toml").read_text())
    ad, ld = m["axial_damper"], m["lateral_damper"]
    per_turn = ad["screw_pitch"] / ad["friction_chain_ratio"]            # probe metres per turn of the chain
    spring, first = ad["spring_stroke_turns"] * per_turn, ad.get("first_brake_stroke_turns", 0.0) * per_turn
    out = {"axial_spring": spring, "friction_brake_1": first,
           "friction_brake": m["probe"]["stroke_max"] - spring - first,
           "axial_magnetic_brake": ad["magnetic_brake_rpm_max"], "nut_rate": ad["nut_rpm_max"],
           "head_axial_force": ad["head_force_max"], "XLimD": m.get("movable_limiter", {}).get("stroke", math.nan)}
    for k in (1, 2):
        out[f"spring_mechanism_{k}"] = ld["coil_stroke"] + ld["belleville_stroke"]
        out[f"magnetic_brake_{k}"] = ld["brake_rpm_max"]
        out[f"crank_angle_{k}"] = ld["crank_limit_deg"]
    return out


@pytest.fixture(scope="module")
def solver_runs(tmp_path_factory) -> dict[str, RunFile]:
    """One second of the central impact with each mechanism, and of the lateral miss (lateral dampers at work)."""
    d = tmp_path_factory.mktemp("ranges")
    names = ["central_impact_20t", "central_impact_20t_modified_dampers", "central_impact_20t_movable_limiter",
             "lateral_miss_7t"]
    runs = {n: RunFile(run_scenario(SCEN / f"{n}.toml", d / f"{n}.h5", t_end=1.0)) for n in names}
    yield runs
    for r in runs.values():
        r.close()


def test_every_bar_channel_of_a_solver_run_has_the_mechanism_range(solver_runs):
    for name, run in solver_runs.items():
        mech = tomllib.loads((SCEN / f"{name}.toml").read_text())["mechanism"]
        want = expected_ranges(mech)
        bars = [n for g in BARS for n in run.groups().get(g, [])]
        assert len(bars) >= 10, (name, bars)
        for n in bars:
            s = run.channels[n].stroke
            assert n in want, f"{name}: {n}: a device channel the test does not know"
            assert math.isfinite(s) and s > 0 and s == pytest.approx(want[n], rel=1e-12), (name, n, s, want[n])


def _fill_px(img, r) -> int:
    """Red or blue pixels on a row near the top of bar rect r (above the value text)."""
    y = int(r.top()) + 2
    pos, neg = POSITIVE.rgb(), NEGATIVE.rgb()
    return sum(img.pixel(x, y) in (pos, neg) for x in range(int(r.left()), int(r.right()) + 1))


def _shown(qtbot, run, size=(1280, 300)) -> DevicesPane:
    w = DevicesPane()
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    w.set_run(run, ChannelBlocks(run))
    return w


@pytest.mark.gui
@pytest.mark.parametrize("name", ["central_impact_20t", "lateral_miss_7t"])
def test_bar_fill_is_value_over_the_device_range(qtbot, solver_runs, name):
    run = solver_runs[name]
    rng = expected_ranges(tomllib.loads((SCEN / f"{name}.toml").read_text())["mechanism"])
    w = _shown(qtbot, run)
    filled = 0
    for t in (0.6, 0.9):
        f = run.frame_at(t)
        w.show_frame(f)
        img = w.grab().toImage()
        for n in w.bar_names():
            v, r = run.channel_at(n, f), w.bar_rects[n]
            frac = min(abs(v) / rng[n], 1.0)
            assert _fill_px(img, r) == pytest.approx(frac * r.width(), abs=1.5), (t, n, v, frac)
            filled += frac * r.width() >= 3
    assert filled >= 3          # the check saw real fills, not only empty bars


@pytest.mark.gui
def test_a_channel_without_a_range_shows_no_range_and_no_fill(qtbot, solver_runs, tmp_path, artifacts):
    src = solver_runs["lateral_miss_7t"].path
    p = tmp_path / "other_writer.h5"
    p.write_bytes(open(src, "rb").read())
    with h5py.File(p, "r+") as f:                    # as a writer that gives these channels no range
        for n in ("crank_angle_1", "nut_rate"):
            f[f"channels/{n}"].attrs["stroke"] = math.nan
    run = RunFile(p)
    w = _shown(qtbot, run, (1600, 300))      # (a bar too narrow for "no range" beside its value is hatched only)
    f = run.frame_at(0.9)
    w.show_frame(f)
    img = w.grab().toImage()
    img.save(str(artifacts / "devices_no_range.png"))
    assert w.scales["nut_rate"] != w.scales["nut_rate"]           # NaN: no range
    for n in ("crank_angle_1", "nut_rate"):
        assert abs(run.channel_at(n, f)) > 1e-6, n                  # a value that a run-scaled bar would show
        r = w.bar_rects[n]
        assert _fill_px(img, r) == 0, n
        # "no range" written at the bar's left (grey text on the bar's background), the value at its right
        left = {img.pixel(x, y) for x in range(int(r.left()) + 2, int(r.left()) + 60)
                for y in range(int(r.top()) + 2, int(r.bottom()) - 1)}
        grey = [c for c in left if c != BAR_BACKGROUND.rgb() and 90 < (c >> 8 & 0xFF) < 200]
        assert len(grey) >= 5, n
    assert _fill_px(img, w.bar_rects["crank_angle_2"]) >= 0       # the others keep their ranges
    assert math.isfinite(w.scales["crank_angle_2"]) and math.isfinite(w.scales["head_axial_force"])
    np.testing.assert_equal(sorted(w.bars["axial_damper"]), sorted(run.groups()["axial_damper"]))
    run.close()
