"""The viewer on real solver runs of the modified mechanisms: device bars follow the variant (FrT1 + FrT2,
XLimD), the scene moves the movable limiter; screenshots saved for a person to look at."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")

from solver.runfile import RunFile  # noqa: E402
from solver.simulate import run_scenario  # noqa: E402
from tests.test_solver_helpers import variant  # noqa: E402
from tests.test_viewer_diagram import make_window  # noqa: E402


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("variants_gui")
    out = {}
    for mech in ("modified_dampers", "movable_limiter"):
        sc = variant(tmp, "central_impact_20t.toml", {"mechanism": f"\"{mech}\""})
        out[mech] = run_scenario(sc, tmp / f"{mech}.h5", t_end=2.5)
    return out


def test_modified_damper_bars_and_screenshot(runs, qtbot, tmp_path, artifacts):
    w = make_window(qtbot, tmp_path / "s.ini", runs["modified_dampers"])
    d = w.diagram
    assert "friction_brake_1" in d.devices.bars["axial_damper"] and "friction_brake" in d.devices.bars["axial_damper"]
    assert "axial_spring" not in d.devices.bars["axial_damper"] and "axial_magnetic_brake" not in d.devices.bars["axial_damper"]
    r = RunFile(runs["modified_dampers"])
    f = int(np.argmax(r.channel("friction_brake_1") > 0.1))            # FrT1 slipping
    w.playback.seek_frame(f)
    qtbot.wait(50)
    assert d.devices.value("friction_brake_1") == pytest.approx(r.channel_at("friction_brake_1", f))
    img = w.grab_image()
    path = artifacts / "variant_modified_dampers.png"
    assert img.save(str(path)) and path.stat().st_size > 5000


def test_movable_limiter_moves_in_the_scene(runs, qtbot, tmp_path, artifacts):
    w = make_window(qtbot, tmp_path / "s.ini", runs["movable_limiter"])
    d = w.diagram
    assert "XLimD" in d.devices.bars["axial_damper"]
    r = RunFile(runs["movable_limiter"])
    x = r.channel("XLimD")
    f = int(np.argmax(x))
    w.playback.seek_frame(0)
    qtbot.wait(30)
    rel0 = np.linalg.inv(d.scene.part_matrix("housing")) @ d.scene.part_matrix("limiter")
    w.playback.seek_frame(f)
    qtbot.wait(50)
    rel1 = np.linalg.inv(d.scene.part_matrix("housing")) @ d.scene.part_matrix("limiter")
    # in the housing frame the limiter slid toward the joint (+x) by XLimD
    assert rel1[0, 3] - rel0[0, 3] == pytest.approx(x[f] - x[0], rel=0.02)
    assert np.allclose(rel1[1:3, 3], rel0[1:3, 3], atol=1e-6)
    assert d.scene.part_is_red("load_pads") or d.scene.part_is_red("limiter")
    img = w.grab_image()
    path = artifacts / "variant_movable_limiter.png"
    assert img.save(str(path)) and path.stat().st_size > 5000
