"""Berthing in the viewer and the app (issue 36): the 3D camera riding on the end effector, a short scripted run
shared by the module's tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

RES = Path(__file__).resolve().parent.parent / "resources" / "berthing"


@pytest.fixture(scope="module")
def short_run(tmp_path_factory):
    """3 s of the scripted MRM-1 scenario with the shoulder turning at 2 deg/s (the end effector moves ~0.3 m/s)."""
    from solver.simulate import run_scenario
    d = tmp_path_factory.mktemp("berthing_views")
    text = (RES / "scenarios" / "mrm1_scripted.toml").read_text()
    text = text.replace('mechanism = "../ssrms_mrm1.toml"', f'mechanism = "{(RES / "ssrms_mrm1.toml").as_posix()}"')
    text = text.replace("duration = 48.0", "duration = 3.0")
    text = text.split("[[profile]]")[0] + ('[[profile]]\nt = 0.0\nframe = "joint"\nrates = [2, 0, 0, 0, 0, 0, 0]\n'
                                           'ramp = 0.5\nbrakes = false\n')
    scen = d / "short.toml"
    scen.write_text(text)
    return run_scenario(scen, d / "short.h5")


@pytest.mark.gui
def test_the_3d_camera_rides_on_the_end_effector(qtbot, short_run, artifacts):
    from PySide6.QtCore import QPoint

    from viewer.scene_pane import ScenePane
    from solver.runfile import RunFile
    from viewer.scene_geometry import pose_matrices
    run = RunFile(short_run)
    p = ScenePane()
    qtbot.addWidget(p)
    p.resize(1280, 420)
    p.show()
    qtbot.waitExposed(p)
    p.render_async = False
    p.set_run(run)
    assert p.preset_buttons["ride"].isVisible()
    p.preset_buttons["ride"].click()
    assert p.camera_preset == "ride"
    cam = p.views["3d"].camera
    last = run.n_frames - 1
    seen = {}
    for fr in (0, last):
        p.show_frame(fr)
        p.vtk_widget.settle()
        pos, quat = run.poses(fr)
        m = pose_matrices(pos, quat)[run.bodies.index("link_7")]
        rc = p.mtype.scene.ride_camera
        np.testing.assert_allclose(cam.GetPosition(), m[:3, :3] @ rc.eye + m[:3, 3], atol=1e-9)
        np.testing.assert_allclose(cam.GetFocalPoint(), m[:3, :3] @ rc.target + m[:3, 3], atol=1e-9)
        seen[fr] = (np.array(cam.GetPosition()), m[:3, 3].copy())
        if fr == 0:
            p.resize(1920, 540)
            p.show_frame(0)
            p.vtk_widget.settle()
            p.grab().save(str(artifacts / "berthing_ride_camera_start_1920.png"))
            p.resize(1280, 420)
    moved = np.linalg.norm(seen[last][0] - seen[0][0])
    assert moved > 0.1, moved
    fit = p.preset_buttons["fit"]
    right = fit.mapTo(p._columns[1], QPoint(fit.width(), 0)).x()
    assert right <= p._columns[1].width(), right               # six buttons fit the column                              # the camera went with the body ...
    assert np.linalg.norm(seen[last][1] - seen[0][1]) > 0.1
    p.grab().save(str(artifacts / "berthing_ride_camera.png"))
    p.set_camera_preset("iso")                             # the other presets still work, and back again
    assert abs(np.array(cam.GetPosition()) - seen[last][0]).max() > 0.1
    p.set_camera_preset("ride")
    np.testing.assert_allclose(cam.GetPosition(), seen[last][0], atol=1e-9)
    p.set_run(None)
    assert not p.preset_buttons["ride"].isVisible() and p.camera_preset == "iso"
    with pytest.raises(ValueError, match="camera preset 'ride'"):
        p.set_camera_preset("ride")
    run.close()
