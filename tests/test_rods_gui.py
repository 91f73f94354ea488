"""The viewer on rods runs: the rods' deflection lines (flexible parts) move per frame in the scene's three views,
for the rods type and for a file of another writer (generic type); the type's devices; screenshots mid-deployment."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from solver.runfile import ChannelInfo, FlexiblePart, RunFile, RunMeta, RunWriter
from solver.simulate import run_scenario
from tests.gui_util import main_window

SCEN = Path(__file__).resolve().parents[1] / "resources" / "rods" / "scenarios"
pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def deploy_run(tmp_path_factory):
    """Case 4.2 (reduced, 2e-4 s steps, 10 ms frames) to 3.5 s: the first clamp locked, the second not yet."""
    d = tmp_path_factory.mktemp("rods_gui")
    text = (SCEN / "deploy_rotation.toml").read_text().replace('mechanism = "../', f'mechanism = "{SCEN.parent}/')
    for k, v in (("formulation", '"reduced"'), ("step", "2.0e-4"), ("output_step", "0.01")):
        text = re.sub(rf"^{k} = .*$", f"{k} = {v}", text, flags=re.M)
    (d / "deploy.toml").write_text(text)
    return run_scenario(d / "deploy.toml", d / "deploy.h5", t_end=3.5)


def _drawn(scene, name: str) -> np.ndarray:
    """The points the scene draws for a part now (its body's frame)."""
    for rec in scene._bodies.values():
        for n, off, size in rec["flex"]:
            if n == name:
                from vtkmodules.util.numpy_support import vtk_to_numpy
                return vtk_to_numpy(rec["points"].GetData())[off:off + size].copy()
    raise KeyError(name)


def test_rods_deflect_in_the_scene_mid_deployment(qtbot, tmp_path, deploy_run, artifacts):
    w = main_window(qtbot, tmp_path / "s.ini", deploy_run, size=(1920, 1080))
    scene = w.diagram.scene
    with RunFile(deploy_run) as r:
        for t in (0.0, 2.0):
            w.playback.seek_time(t)
            qtbot.wait(30)
            i = scene.current_frame
            for part in ("rod1", "rod2"):
                assert np.allclose(_drawn(scene, part), r.flexible_points(part, i), atol=1e-6)
        assert not np.allclose(_drawn(scene, "rod2"), r.flexible_points("rod2", 0))   # moved since the start
    assert w.run.meta.mechanism_type == "rods"
    bars = w.diagram.devices.bars
    assert bars["hinge_angles"] == ["hinge0_angle", "hinge1_angle"] and bars["clamps"] == ["clamp0", "clamp1"]
    w.grab_image().save(str(artifacts / "rods_deploy_1920.png"))
    w.resize(1280, 720)
    qtbot.wait(100)
    w.playback.seek_time(2.95)
    qtbot.wait(50)
    w.grab_image().save(str(artifacts / "rods_deploy_1280.png"))


def test_a_flexible_part_of_another_writer_is_drawn_by_the_generic_type(qtbot, tmp_path):
    p = tmp_path / "other.h5"
    wr = RunWriter(p, RunMeta(variant="v1", mechanism_type="someone_elses_boom", output_step=0.1),
                   [ChannelInfo("x", "m", "x", "kinematics")], ["hub"], [], [], background=False,
                   flexible=[FlexiblePart("boom", "hub", 3, np.array([[0, 1], [1, 2]]), "cable", "boom")])
    t = np.arange(11) * 0.1
    pts = np.stack([[[0, 0, 0], [1, 0, k * 0.1], [2, 0, k * 0.2]] for k in range(11)])
    wr.append(t, t[:, None], np.zeros((11, 1, 3)), np.tile([1.0, 0, 0, 0], (11, 1, 1)), flexible={"boom": pts})
    wr.finish()
    w = main_window(qtbot, tmp_path / "s.ini", p)
    scene = w.diagram.scene
    assert scene.mtype.name == "generic"
    w.playback.seek_time(0.7)
    qtbot.wait(30)
    assert np.allclose(_drawn(scene, "boom"), pts[7])


def test_case_4_1_rods_bent_at_1s(qtbot, tmp_path, artifacts):
    """Case 4.1 at the end of its impulse: the rods visibly bent (alpha1 0.42 rad) in the scene; screenshot."""
    text = (SCEN / "impulse_table1.toml").read_text().replace('mechanism = "../', f'mechanism = "{SCEN.parent}/')
    text = re.sub(r"^output_step = .*$", "output_step = 0.01", text, flags=re.M)
    text = re.sub(r"^formulation = .*$", 'formulation = "reduced"', text, flags=re.M)
    (tmp_path / "t1.toml").write_text(text)
    run = run_scenario(tmp_path / "t1.toml", tmp_path / "t1.h5", t_end=1.2)
    w = main_window(qtbot, tmp_path / "s.ini", run, size=(1920, 1080))
    w.playback.seek_time(1.0)
    qtbot.wait(50)
    pts = _drawn(w.diagram.scene, "rod1")
    chord = pts[-1] - pts[0]
    normal = np.array([-chord[1], chord[0], 0.0]) / np.linalg.norm(chord)
    sag = (pts - pts[0]) @ normal
    assert np.abs(sag).max() > 0.05                      # metres off the chord: drawn bent, not straight
    w.grab_image().save(str(artifacts / "rods_table1_1s_1920.png"))
