"""A peripheral (IDSS-class) run in the window, in clips, compared with another and branched (issue 26): at
1280x720 and 1920x1080 nothing overlaps and no name is cut (device bars, contact lanes, events dock), the legs take
the colour of their force, a clip renders its three panes, a comparison draws the other run's ring as a ghost, and
`dockmnemo run --from` branches a peripheral run."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")

from PySide6.QtGui import QFontMetrics, QFontMetricsF  # noqa: E402

from solver.runfile import RunFile  # noqa: E402
from tests.gui_util import main_window  # noqa: E402
from tests.layout_check import painted, widget_problems  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "resources" / "peripheral" / "scenarios"
CENTRAL = SCENARIOS / "central_impact_10t.toml"
STAND = SCENARIOS / "stand_fixed_base.toml"
LEGS = [f"leg_{k}" for k in range(1, 7)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """The central impact from first contact to hard dock (run once per session, tests/peripheral_runs.py), and the
    first 3 s of the stand case."""
    from solver.simulate import run_scenario
    from tests.peripheral_runs import central_run
    d = tmp_path_factory.mktemp("peripheral_gui")
    return {"central": central_run(tmp_path_factory),
            "stand": run_scenario(STAND, d / "stand.h5", t_end=3.0)}


def cut_names(window) -> list[str]:
    """Names shortened with an ellipsis in the devices pane, the contact lanes and the events dock's pair column,
    and pair names wider than their column."""
    d = window.diagram
    out = [f"devices: {shown!r} for {full!r}" for shown, full, *_ in d.devices.label_rects() if "\u2026" in shown]
    out += [f"lane: {n!r}" for n in d.lanes.names if "\u2026" in n]
    dock = window.events_dock
    if dock.isVisible():
        fm = QFontMetrics(dock.view.font())
        for r in range(dock.proxy.rowCount()):
            text = dock.proxy.index(r, 0).data()
            if "\u2026" in text or fm.horizontalAdvance(text) > dock.view.columnWidth(0) - 6:
                out.append(f"events dock: {text!r} in {dock.view.columnWidth(0)} px")
    return out


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_peripheral_window_has_whole_names_and_nothing_overlaps(qtbot, tmp_path, runs, size, artifacts):
    from viewer.diagram import compose_grab
    w = main_window(qtbot, tmp_path / "settings.ini", runs["central"], size=size, activate=False)
    d = w.diagram
    w.playback.seek_time(0.1)          # rings pressed together, latches engaged, legs in compression
    qtbot.wait(200)
    compose_grab(w, d).save(str(artifacts / f"peripheral_layout_{size[0]}x{size[1]}.png"))
    assert w.size().toTuple() == size
    assert widget_problems(w) == []
    assert painted(d.scene) == [] and painted(d.devices) == []
    assert cut_names(w) == []
    assert d.devices.bars["leg_forces"] == [f"{n}_force" for n in LEGS]


def test_legs_take_the_colour_of_their_force(qtbot, tmp_path, runs, artifacts):
    w = main_window(qtbot, tmp_path / "settings.ini", runs["central"], activate=False)
    sc, run = w.diagram.scene, w.run
    base = sc.part_color("leg_1_rod")
    w.playback.seek_time(0.1)
    qtbot.wait(100)
    f = run.channel_at("leg_1_force", w.playback.frame)
    assert f < -0.5 * np.nanmax(np.abs(run.channel("leg_1_force")))      # well in compression here
    r, g, b = sc.part_color("leg_1_rod")
    assert b > r + 0.3 and sc.part_color("leg_1_cylinder") == (r, g, b)  # blue: compression
    assert sc.part_is_red("active_ring") and sc.part_is_red("passive_ring")   # contact stays red
    caption = [t for t, *_ in sc.label_rects() if t.startswith("legs by force")]
    assert caption and "orange +, blue \u2212" in caption[0]
    sc.grab_image().save(str(artifacts / "peripheral_scene_legs_by_force.png"))
    quiet = int(np.flatnonzero(np.abs(run.channel("leg_1_force")) < 1.0)[-1])   # about no force: its own colour
    w.playback.seek_frame(quiet)
    qtbot.wait(100)
    assert sc.part_color("leg_1_rod") == base


def test_clip_of_a_peripheral_run_has_its_three_panes_and_whole_names(qapp, runs, tmp_path, artifacts):
    import av
    out = tmp_path / "peripheral.mp4"
    p = subprocess.run([sys.executable, "-m", "app", "export", str(runs["central"]), "--clip", "0:1",
                        "--title", "Peripheral central impact", "--title-duration", "0.5", "--fps", "10",
                        "--size", "720p", "-o", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    with av.open(str(out)) as c:
        cc = c.streams.video[0].codec_context
        assert (cc.name, cc.width, cc.height) == ("h264", 1280, 720)
        frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
    assert len(frames) == 5 + 10
    from PIL import Image
    Image.fromarray(frames[-1]).save(artifacts / "peripheral_clip_last_frame.png")
    assert frames[2][5, 5].max() < 40 and frames[-1][:240].std() > 10   # title card, then the diagram
    from viewer.clip_render import DiagramRenderer     # the clip's layout: the same names as the window, whole
    with RunFile(runs["central"]) as run:
        r = DiagramRenderer(run, (1280, 720))
        try:
            r.render_time(0.1)
            d = r.diagram
            assert [s for s, *_ in d.devices.label_rects() if "\u2026" in s] == []
            assert [n for n in d.lanes.names if "\u2026" in n] == []
        finally:
            r.close()


def test_compare_the_central_impact_with_the_stand_case(qtbot, tmp_path, runs, artifacts):
    w = main_window(qtbot, tmp_path / "settings.ini", runs["central"], size=(1280, 720), activate=False)
    d = w.diagram
    d.plots.set_plotted(["Fx", "leg_1", "leg_1_force"])
    assert w.compare_with(runs["stand"], align="first_contact", diff="leg_1")
    ra, rb = w.run, d.compare_run
    tb = next(e.time for e in rb.events if e.kind == "first_contact")        # the stand's petals meet first
    assert d.compare_offset == pytest.approx(0.05 - tb, abs=0.01)
    assert len(d.plots.ghost_curves) == 3 and d.plots.diff_plot is not None
    w.playback.seek_time(1.0)
    qtbot.wait(200)
    j = rb.frame_at(w.playback.t_current - d.compare_offset + 1e-9)
    assert d.scene.ghost_frame() == j
    pos_b, _ = rb.poses(j)
    np.testing.assert_allclose(d.scene.ghost_matrix("ring")[:3, 3], pos_b[rb.bodies.index("ring")])
    i = w.playback.frame
    diff = d.plots.difference_values()
    assert diff[i] == pytest.approx(ra.channel_at("leg_1", i) - rb.channel_at("leg_1", j), abs=2e-3)
    w.grab_image().save(str(artifacts / "peripheral_compare.png"))
    assert painted(d.scene) == [] and cut_names(w) == []
    ax = d.plots.diff_plot.getAxis("left")       # the difference plot's value labels do not touch (a short row)
    lo, hi = ax.range
    h = ax.boundingRect().height()
    assert ax.tickSpacing(lo, hi, h)[0][0] * h / (hi - lo) >= QFontMetricsF(ax.style["tickFont"] or ax.font()).height()
    assert any(t.startswith("ghost: ") for t, *_ in d.scene.label_rects())


def _run_cli(*args):
    """`dockmnemo run ARGS` in this process (app.cli.main, as the command calls it; the window's runs and the clip
    are real processes): exit status, stderr; the signal handlers the command set put back."""
    import contextlib
    import io
    import signal
    from types import SimpleNamespace

    from app.cli import main
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["run", *map(str, args)])
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    return SimpleNamespace(returncode=status, stdout=out.getvalue(), stderr=err.getvalue())


def test_branch_a_peripheral_run(runs, tmp_path):
    src = runs["central"]
    out = tmp_path / "branch.h5"
    p = _run_cli(CENTRAL, "--from", src, "--at", 3.0, "--t-end", 4.0, "-o", out)
    assert p.returncode == 0, p.stderr
    with RunFile(src) as a, RunFile(out) as b:
        assert b.meta.mechanism_type == "peripheral" and b.meta.comment.startswith("branch of central.h5 frame")
        assert b.time[0] == pytest.approx(a.time[a.frame_at(3.0)]) and b.t_final == pytest.approx(4.0, abs=0.01)
        i = a.frame_at(b.time[0])
        for name in ("leg_1", "Fx", "ring_x", "retraction", "latches_engaged"):   # same parameters: the same run
            np.testing.assert_allclose(b.channel(name), a.channel(name)[i:i + b.n_frames], atol=1e-9, err_msg=name)
        assert b.t_capture == pytest.approx(a.t_capture) and b.state_at(b.n_frames - 1) is not None
    # a faster retraction: the legs' paths are planned when the retraction starts (6.4 s, the motion settled), so
    # the edited speed acts on a branch from before it (from 5 s) (issue 33: the driven retraction path)
    mech = (SCENARIOS.parent / "peripheral_idss.toml").read_text()
    assert "retraction_speed = 0.01 " in mech
    (tmp_path / "faster.toml").write_text(mech.replace("retraction_speed = 0.01 ", "retraction_speed = 0.02 "))
    edited = tmp_path / "edited.toml"
    edited.write_text(CENTRAL.read_text().replace('"../peripheral_idss.toml"', '"faster.toml"'))
    faster = tmp_path / "branch_faster.h5"
    p = _run_cli(edited, "--from", src, "--at", 5.0, "--t-end", 8.0, "-o", faster)
    assert p.returncode == 0, p.stderr
    with RunFile(src) as a, RunFile(faster) as b:
        i = a.frame_at(b.time[0])
        first = abs(b.channel("leg_1")[0] - a.channel("leg_1")[i])   # (re-simulated from the block's snapshot)
        # shorter, faster (at 8 s, 1.6 s into the path, 0.02 m/s has shortened the legs ~11 mm more than 0.01 m/s)
        assert b.channel("leg_1")[-1] < a.channel("leg_1")[i + b.n_frames - 1] - first - 0.003


def test_a_branch_needs_a_run_of_the_scenarios_type(runs, tmp_path):
    from solver.simulate import run_scenario
    probe = run_scenario(ROOT / "resources" / "scenarios" / "central_impact_20t.toml", tmp_path / "probe.h5",
                         t_end=0.2)
    p = _run_cli(CENTRAL, "--from", probe, "--at", 0.1, "-o", tmp_path / "x.h5")
    assert p.returncode == 2 and not (tmp_path / "x.h5").exists()
    assert f"{CENTRAL}: start: probe.h5 frame" in p.stderr and "is a probe_cone run" in p.stderr, p.stderr
    p = _run_cli(ROOT / "resources" / "scenarios" / "central_impact_20t.toml", "--from", runs["central"], "--at", 1.0,
                 "-o", tmp_path / "y.h5")
    assert p.returncode == 2 and "is a peripheral run, this scenario's mechanism is probe_cone" in p.stderr, p.stderr


def test_a_running_peripheral_run_is_followed_with_its_legs_coloured(qtbot, tmp_path):
    """The worker writes a peripheral run; the window follows the growing file (no leg-force maximum stored yet: the
    colour scale comes from the frames so far) and ends on the finished run."""
    w = main_window(qtbot, tmp_path / "settings.ini", activate=False)
    w.start_run(CENTRAL, tmp_path / "live.h5", 2.0)
    qtbot.waitUntil(lambda: w.run is not None and w.run.live and w.run.n_frames > 30 or not w.runner.running,
                    timeout=120000)
    sc = w.diagram.scene
    if w.run.live:
        assert sc.tint_caption.startswith("legs by force")
    qtbot.waitUntil(lambda: not w.runner.running, timeout=120000)
    assert w.last_run_message == "finished", w.last_run_message
    run = w.run
    assert run.meta.complete and run.t_final == pytest.approx(2.0)
    w.playback.seek_time(0.1)
    qtbot.wait(100)
    full = float(np.nanmax(np.abs(run.channel("leg_1_force"))))
    from viewer.numbers import force_text
    assert sc.tint_caption == f"legs by force: orange +, blue \u2212, full at {force_text(full)}"
    r, g, b = sc.part_color("leg_1_rod")
    assert b > r + 0.3


def _type(qtbot, edit, text):
    edit.selectAll()
    qtbot.keyClicks(edit, text)


def test_rerun_from_t_current_edits_the_peripheral_parameters(qtbot, tmp_path, runs):
    """Run → Re-run from T Current on a peripheral run: the dialog's pages are the peripheral type's schema (legs,
    hexapod, latches ...), an edited leg parameter goes to the branch's mechanism file, the branch runs from T."""
    from PySide6.QtCore import QSettings, Qt
    s = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    s.setValue("runs_dir", str(tmp_path / "runs"))
    s.sync()
    w = main_window(qtbot, tmp_path / "settings.ini", runs["central"], activate=False)
    w.playback.seek_time(5.0)         # before the retraction starts (6.4 s): its legs' paths are planned then
    t_branch = w.playback.t_current
    dlg = w.rerun_dialog()
    qtbot.waitExposed(dlg)
    assert {"Legs", "Hexapod", "Latches", "Guide ring"} <= set(dlg.group_boxes) and "Probe" not in dlg.group_boxes
    assert not dlg.group_boxes["Initial conditions"].isEnabled() and not dlg.mechanism_combo.isEnabled()
    assert "central_impact_10t" in dlg.scenario_combo.placeholderText()
    _type(qtbot, dlg.field("legs", "retraction_speed"), "0.02")
    _type(qtbot, dlg.t_end_edit, "8")
    qtbot.waitUntil(lambda: dlg.run_button.isEnabled(), timeout=5000)
    assert "valid: peripheral_central_impact_10t" in dlg.message.text()
    qtbot.mouseClick(dlg.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.runner.running, timeout=120000)
    assert w.last_run_message == "finished", w.last_run_message
    branch = w.run
    assert "_branch_" in branch.path.name and branch.meta.mechanism_type == "peripheral"
    assert branch.time[0] == pytest.approx(t_branch) and branch.t_final == pytest.approx(8.0, abs=0.01)
    mech = branch.path.with_name(branch.path.name.replace(".h5", ".scenario.mechanism.toml"))
    assert "retraction_speed = 0.02" in mech.read_text()
    with RunFile(runs["central"]) as src:
        assert branch.channel("leg_1")[-1] < src.channel("leg_1")[src.frame_at(8.0)] - 0.003   # faster retraction


def test_new_run_dialog_switches_its_pages_with_the_scenarios_type(qtbot, tmp_path):
    w = main_window(qtbot, tmp_path / "settings.ini", activate=False)
    dlg = w.new_run_dialog()
    qtbot.waitExposed(dlg)
    assert "Probe" in dlg.group_boxes and dlg.mechanism_combo.isEnabled()
    i = dlg.scenario_combo.findText("stand_fixed_base")
    assert i >= 0                                   # the peripheral scenarios are listed too
    dlg.load_scenario(dlg.scenario_combo.itemData(i))
    assert "Hexapod" in dlg.group_boxes and "Probe" not in dlg.group_boxes
    qtbot.waitUntil(lambda: dlg.run_button.isEnabled(), timeout=5000)
    assert "valid: peripheral_stand_fixed_base_10t" in dlg.message.text()
    _type(qtbot, dlg.field("legs", "stiffness"), "-1")          # refused by the solver's own check, field marked
    qtbot.waitUntil(lambda: "legs.stiffness: -1 is outside the allowed range" in dlg.message.text(), timeout=5000)
    assert not dlg.run_button.isEnabled() and dlg.bad_fields
    dlg.load_scenario(dlg.scenario_combo.itemData(dlg.scenario_combo.findText("central_impact_20t")))
    assert "Probe" in dlg.group_boxes and "Hexapod" not in dlg.group_boxes
    qtbot.waitUntil(lambda: dlg.run_button.isEnabled(), timeout=5000)
    dlg.reject()
