"""Berthing in the viewer and the app (issue 36): the 3D camera riding on the end effector, a short scripted run
shared by the module's tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.gui_util import main_window

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


@pytest.mark.gui
def test_new_run_dialog_lists_and_runs_a_scripted_berthing_scenario(qtbot, tmp_path, artifacts):
    """Run -> New run… lists berthing's scenarios (no parameter schema): its files read-only, where its keys are
    described, and Run runs it in the worker into a berthing run the window opens (this crashed on berthing)."""
    from solver.runfile import RunFile
    w = main_window(qtbot, tmp_path / "settings.ini", activate=False)
    w.settings.setValue("runs_dir", str(tmp_path / "runs"))
    dlg = w.new_run_dialog()
    qtbot.waitExposed(dlg)
    names = [dlg.scenario_combo.itemText(i) for i in range(dlg.scenario_combo.count())]
    assert {"mrm1_scripted", "mrm1_scripted_lateral_2mm", "central_impact_20t"} <= set(names), names
    i = names.index("mrm1_scripted")
    dlg.scenario_combo.setCurrentIndex(i)
    dlg.scenario_combo.activated.emit(i)
    assert dlg.mechanism_type == "berthing" and dlg.fields == []
    assert dlg.read_only_text.isReadOnly() and "rates = [0.02, 0, 0, 0, 0, 0]" in dlg.read_only_text.toPlainText()
    assert 'mechanism_type = "berthing"' in dlg.read_only_text.toPlainText()
    assert "docs/berthing.md" in dlg.read_only_note.text()
    qtbot.waitUntil(dlg.run_button.isEnabled, timeout=10000)
    assert "valid: mrm1_scripted" in dlg.message.text() and dlg.t_end_edit.text() == "48"
    dlg.t_end_edit.setText("0.6")
    qtbot.waitUntil(dlg.run_button.isEnabled, timeout=10000)
    dlg.grab().save(str(artifacts / "berthing_new_run_dialog.png"))
    dlg.run_button.click()
    assert w.runner.running
    qtbot.waitUntil(lambda: not w.runner.running, timeout=120000)
    assert w.run is not None and not w.run.live, w.last_run_message
    with RunFile(w.run.path) as r:
        assert r.meta.mechanism_type == "berthing" and r.time[-1] == pytest.approx(0.6)
    scene = w.diagram.scene                                  # the window's 3D view riding on the end effector
    scene.preset_buttons["ride"].click()
    for size in ((1280, 720), (1920, 1080)):
        w.resize(*size)
        qtbot.wait(200)
        assert w.grab_image().save(str(artifacts / f"berthing_ride_window_{size[0]}x{size[1]}.png"))
    assert scene.camera_preset == "ride"
    dlg = w.new_run_dialog()                                 # back to a type with a schema: its pages again
    qtbot.waitExposed(dlg)
    names = [dlg.scenario_combo.itemText(i) for i in range(dlg.scenario_combo.count())]
    dlg.scenario_combo.activated.emit(names.index("mrm1_scripted"))
    dlg.scenario_combo.activated.emit(names.index("central_impact_20t"))
    assert dlg.mechanism_type == "probe_cone" and dlg.field("initial", "closing_speed") is not None
    dlg.reject()


def test_a_berthing_verdict_speaks_of_contact_force_joint_torques_and_brake_slip(short_run, capsys):
    """`dockmnemo info` on a berthing run: the checks' words from the type's criteria file, no docking words."""
    from app.cli import main
    assert main(["info", str(short_run)]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("capture verdict"))
    assert "peak contact force and joint torques within limits" in line, line
    assert "brake slip within range" in line, line
    for docking in ("base loads", "damper strokes", "latch release"):
        assert docking not in out, docking
    assert "peak |tau_4|" in out and "brake_slip" in out
    from solver.campaign import failure_reasons
    assert failure_reasons("ok", "", line.split("capture verdict", 1)[1].strip()) == ["not captured", "insertion below 0.15 at the end"], line


def test_a_failing_berthing_campaign_row_says_why_in_the_types_words(short_run, tmp_path):
    """A campaign's failure reasons name the berthing checks as its criteria file words them, no "base load" or
    "stroke" (the docking words)."""
    from solver import verdict
    from solver.campaign import failure_reasons
    from solver.runfile import RunFile
    text = (RES / "criteria.toml").read_text().replace("tau_1 = 2500.0", "tau_1 = 1.0") \
        .replace("brake_slip = [-0.0001, 0.0001]", "brake_slip = [0.001, 0.002]")
    (tmp_path / "criteria.toml").write_text(text)
    crit = verdict.load_criteria(tmp_path / "criteria.toml")
    with RunFile(short_run) as r:
        line = verdict.evaluate(r, crit).line()
    why = failure_reasons("ok", "", line, crit)
    assert "tau_1 over limit (contact force and joint torques)" in why, (line, why)
    assert "brake_slip out of range (brake slip)" in why, (line, why)
    assert not any(w.startswith(("base load", "stroke")) for w in why), why


def test_verdict_titles_are_checked_in_the_criteria_file(tmp_path):
    from solver.verdict import CriteriaError, load_criteria
    bad = tmp_path / "c.toml"
    bad.write_text('[titles]\nbase_load = "x"\n')
    with pytest.raises(CriteriaError, match=r"c\.toml.*titles\.base_load.*unknown check"):
        load_criteria(bad)
    bad.write_text('[titles]\nstrokes = 3\n')
    with pytest.raises(CriteriaError, match=r"titles\.strokes.*expected the check's words"):
        load_criteria(bad)
    ok = load_criteria(RES / "criteria.toml")
    assert ok.title("strokes") == "brake slip" and not ok.release_channel       # no latches: no release check


@pytest.mark.gui
def test_a_gamepad_drives_the_operator_dialog(qtbot, tmp_path):
    """Run -> Berthing (operator…) reads a game controller through SDL (here SDL's own virtual controller, plugged in
    after the dialog opened): sticks, triggers and shoulders become the hand controllers' deflections, A the brakes."""
    import warnings

    from PySide6.QtCore import QSettings

    from app.main_window import MainWindow
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import sdl2
    s = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    s.setValue("runs_dir", str(tmp_path / "runs"))
    w = MainWindow(s)
    qtbot.addWidget(w)
    dlg = w.operator_dialog()
    assert dlg.gamepad.available
    i = sdl2.SDL_JoystickAttachVirtual(sdl2.SDL_JOYSTICK_TYPE_GAMECONTROLLER, 6, 15, 0)
    assert i >= 0, sdl2.SDL_GetError()
    try:
        qtbot.waitUntil(lambda: dlg.gamepad.present, timeout=3000)
        assert "Virtual Controller" in dlg.pad_label.text()
        j = sdl2.SDL_GameControllerGetJoystick(dlg.gamepad.pad)
        sdl2.SDL_JoystickSetVirtualAxis(j, sdl2.SDL_CONTROLLER_AXIS_LEFTY, -32767)           # stick pushed: in
        sdl2.SDL_JoystickSetVirtualAxis(j, sdl2.SDL_CONTROLLER_AXIS_RIGHTX, 16384)           # half right: yaw -
        sdl2.SDL_JoystickSetVirtualAxis(j, sdl2.SDL_CONTROLLER_AXIS_TRIGGERLEFT, 32767)      # down
        qtbot.waitUntil(lambda: bool(dlg.sent) and dlg.sent[-1].startswith("CMD 1 0 -1 0 0 -0.4"), timeout=3000)
        assert dlg.deflection()[5] == pytest.approx(-(16384 / 32767 - 0.1) / 0.9)
        sdl2.SDL_JoystickSetVirtualAxis(j, sdl2.SDL_CONTROLLER_AXIS_RIGHTX, 2000)            # in the dead zone
        sdl2.SDL_JoystickSetVirtualButton(j, sdl2.SDL_CONTROLLER_BUTTON_A, 1)                # brakes
        qtbot.waitUntil(lambda: dlg.sent[-1] == "CMD 1 0 -1 0 0 0 1", timeout=3000)
        assert dlg.brake_box.isChecked()
        qtbot.keyPress(dlg, "a")                                                              # keys add up
        assert dlg.sent[-1] == "CMD 1 1 -1 0 0 0 1"
        qtbot.keyRelease(dlg, "a")
    finally:
        sdl2.SDL_JoystickDetachVirtual(i)
    dlg.close()
