"""Mechanism types (solver.mechanisms): a run opens as its type says, a made-up second type shows its own bars,
sketch and readouts with no viewer edit, a run of an unknown type opens generically, and viewer/ and app/ name
no probe-cone channel."""
from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from solver import mechanisms
from solver.mechanisms.base import (BarGroup, DeviceLayout, Mark, MechanismType, Pen, Polyline, Readouts, SceneSpec,
                                    Sketch, SketchView)
from solver.runfile import ChannelInfo, ContactPairInfo, PartGeometry, RunFile, RunFileError, RunMeta, RunWriter
from tests.gui_util import base_loads_line, label_texts, main_window

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_runs"
MAGENTA = (255, 0, 255)      # the made-up type's sketch pen and petal colour: found in the screenshots
LEGS = tuple(f"leg_{k}" for k in range(1, 7))


# ---- a made-up second type: a ring on six legs ---------------------------------------------------------------------
def _ring_draw(view, values, box, scale):
    left, top, width, height = box
    tilt = values.get("ring_tilt", math.nan)
    a = math.radians(tilt if math.isfinite(tilt) else 0.0)
    x0, y0, r = left + 20, top + height / 2, 0.6 * width
    end = (x0 + r * math.cos(a), y0 - r * math.sin(a))
    return [Polyline(((x0, y0), end), "ring"), Mark(end, "R", "ring")]


RING_SKETCH = Sketch(titles=("guide ring (side)",), channels=("ring_tilt",), numbers=(("ring tilt", "ring_tilt"),),
                     views=(SketchView("side", ("side view", "side")),),
                     pens={"ring": Pen(MAGENTA, 3)}, prepare=lambda facts, w, h: {}, background=lambda *a: [],
                     draw=_ring_draw)
RING_DEMO = MechanismType(
    name="ring_demo", title="made-up ring on six legs (tests)", variants=("demo",), run_variants=("demo",),
    part_colors={"petal": (1.0, 0.0, 1.0)},
    scene=SceneSpec("ring plane (test)", None, ("ring",)),
    layout=DeviceLayout(RING_SKETCH, (BarGroup("legs", ("six legs",), channels=LEGS),
                                      BarGroup("hooks", ("structural hooks",), channels=("hooks_closed",)))),
    readouts_before=Readouts("RING rel. RING", ("ring_x", "ring_y", "ring_z"), ("ring_tilt",)),
    default_plots=("Fx", "leg_1"))


@pytest.fixture
def ring_type():
    mechanisms.register(RING_DEMO)
    yield RING_DEMO
    mechanisms.unregister(RING_DEMO.name)


def _ring_run(path: Path, mechanism_type="ring_demo", variant="demo") -> Path:
    """A hand-made run of the ring type: the ring closes in, tilts, six legs stroke, the hooks close."""
    chans = [ChannelInfo(n, "m", f"leg {n[-1]} stroke", "mechanism", 0.1) for n in LEGS]
    chans += [ChannelInfo("hooks_closed", "", "structural hooks closed", "mechanism", 12.0),
              ChannelInfo("ring_tilt", "deg", "ring tilt", "kinematics"),
              *(ChannelInfo(f"ring_{a}", "m", f"ring {a}", "kinematics") for a in "xyz"),
              *(ChannelInfo(n, u, n, "base_loads") for n, u in (("Fx", "N"), ("Fy", "N"), ("Fz", "N")))]
    ring = np.array([[0.0, np.cos(a), np.sin(a)] for a in np.linspace(0, 2 * np.pi, 25)]) * [1, 0.4, 0.4]
    lines = np.array([[k, k + 1] for k in range(24)])
    petal = np.array([[0.0, 0.0, 0.4], [0.15, 0.0, 0.3], [0.0, 0.0, 0.2]])
    parts = [PartGeometry("passive_ring", "passive_craft", ring, lines, "ring"),
             PartGeometry("active_ring", "ring", ring, lines, "ring"),
             PartGeometry("petal_1", "ring", petal, np.array([[0, 1], [1, 2]]), "petal")]
    pairs = [ContactPairInfo("petal_ring", "petal_1", "passive_ring", "petal on ring")]
    w = RunWriter(path, RunMeta(comment="made-up ring type", variant=variant, mechanism_type=mechanism_type,
                                output_step=0.01, scenario="ring_demo"),
                  chans, ["passive_craft", "ring"], pairs, parts)
    n = 200
    t = np.arange(n) * 0.01
    x = 0.5 - 0.4 * t / t[-1]
    legs = [0.05 * np.sin(t + k) for k in range(6)]
    cols = [*legs, np.floor(12 * t / t[-1]), 3.0 * np.sin(3 * t), x, 0 * t, 0 * t, 100 * t, 0 * t, 0 * t]
    pos = np.zeros((n, 2, 3))
    pos[:, 1, 0] = x
    q = np.tile([1.0, 0, 0, 0], (n, 2, 1))
    touch = (t > 1.0)[:, None]
    w.append(t, np.stack(cols, 1), pos, q, touch, touch[:, :, None] * [[[-50.0, 0.0, 10.0]]],
             np.tile([0.0, 0.0, 0.4], (n, 1, 1)))
    w.finish(t_capture=math.nan)
    return path


def _colour_pixels(img, rgb) -> int:
    from PySide6.QtGui import QColor
    target = QColor(*rgb).rgb()
    return sum(img.pixel(x, y) == target for x in range(0, img.width(), 2) for y in range(0, img.height(), 2))


def _texts(pane) -> set[str]:
    return {shown for shown, *_ in pane.label_rects()}


def test_a_second_type_opens_with_its_own_sketch_bars_and_readouts(qtbot, tmp_path, ring_type, artifacts):
    """No viewer edit: the registered type alone says what the middle pane draws and the scene reads out."""
    path = _ring_run(tmp_path / "ring.h5")
    w = main_window(qtbot, tmp_path / "s.ini", path)
    d = w.diagram
    w.playback.seek_time(1.0)
    qtbot.wait(50)
    dv = d.devices
    assert dv.bars == {"legs": list(LEGS), "hooks": ["hooks_closed"]}
    assert dv.shown_channels() == ["ring_tilt", *LEGS, "hooks_closed"]
    texts = _texts(dv)
    assert {"guide ring (side)", "six legs", "structural hooks", "ring tilt", "side view"} <= texts
    assert not any("probe" in t or "damper" in t for t in texts)
    for name in LEGS:   # each leg bar filled as |stroke| / 0.1 m
        assert dv.value(name) == pytest.approx(w.run.channel_at(name, w.playback.frame))
    img = dv.grab().toImage()
    assert _colour_pixels(img, MAGENTA) > 20          # the sketch's ring line, drawn with the type's pen
    text = "\n".join(label_texts(d.scene))
    assert "RING rel. RING" in text and "ring_tilt" in text and "HEAD rel. CONE" not in text
    assert "ring plane (test)" in _texts(d.scene)
    assert base_loads_line(d.scene).startswith("base: Fx")
    scene = d.scene.grab_image()
    assert _colour_pixels(scene, MAGENTA) > 3         # the petal in the type's colour for its kind
    dv.grab().save(str(artifacts / "mechanism_type_ring_devices.png"))
    w.grab_image().save(str(artifacts / "mechanism_type_ring_window.png"))


def _unknown_type_run(small_run: Path, path: Path, **attrs) -> Path:
    path.write_bytes(small_run.read_bytes())
    with h5py.File(path, "r+") as f:
        for k, v in attrs.items():
            f.attrs[k] = v
    return path


def test_run_of_an_unknown_type_opens_generically(qtbot, tmp_path, small_run, artifacts):
    """A run from another writer naming a type this program does not know: its channels and device bars, no
    sketch, the spacecraft readouts."""
    path = _unknown_type_run(small_run, tmp_path / "apas.h5", mechanism_type="apas_89")
    with RunFile(path) as r:
        assert mechanisms.for_run(r).name == "generic" and r.mechanism_type_name() == "generic"
    w = main_window(qtbot, tmp_path / "s.ini", path)
    d = w.diagram
    w.playback.seek_time(0.2)    # before capture
    qtbot.wait(50)
    texts = _texts(d.devices)
    assert not any(t.startswith("probe and") or "plane x-" in t for t in texts)   # no sketch
    assert {"axial damper", "lateral damper"} <= texts               # the groups holding devices, named by group
    assert "axial_spring" in d.devices.bar_names() and d.devices.shown_channels() == d.devices.bar_names()
    labels = label_texts(d.scene)
    assert "ACTIVE rel. PASSIVE" in labels                           # the readout columns' head
    assert not any("HEAD rel. CONE" in t for t in labels)
    w.grab_image().save(str(artifacts / "mechanism_type_generic_window.png"))


def test_old_files_infer_their_type_and_bad_variants_are_refused(tmp_path, small_run):
    """Files without the attribute: probe_cone for its variants, generic for any other; a file naming the
    probe_cone type with a variant it does not have is refused, naming the attribute."""
    for p in sorted(SAMPLES.glob("*.h5")):     # the sample runs, the attribute taken out (regenerated ones have it)
        old = tmp_path / p.name
        shutil.copyfile(p, old)
        with h5py.File(old, "r+") as f:
            f.attrs.pop("mechanism_type", None)
        with RunFile(old) as r:
            assert r.meta.mechanism_type == "" and mechanisms.for_run(r).name == "probe_cone", p
    other = _unknown_type_run(small_run, tmp_path / "other.h5", variant="apas")
    with h5py.File(other, "r+") as f:
        del f.attrs["mechanism_type"]
    with RunFile(other) as r:     # main refused it: "/@variant: unknown mechanism variant 'apas'"
        assert mechanisms.for_run(r).name == "generic"
    bad = _unknown_type_run(small_run, tmp_path / "bad.h5", variant="apas")
    with pytest.raises(RunFileError) as ei:
        RunFile(bad)
    assert str(ei.value) == (f"{bad}: /@variant: unknown mechanism variant 'apas' of mechanism type probe_cone "
                             f"(one of existing, modified_dampers, movable_limiter, synthetic)")


def test_the_solver_names_the_type_and_the_type_names_what_its_runs_hold(tmp_path):
    from solver.simulate import run_scenario
    pc = mechanisms.mechanism_type("probe_cone")
    scen = pc.scenarios_dir / "central_impact_20t.toml"
    out = run_scenario(scen, tmp_path / "ci.h5", t_end=0.01)
    model = pc.build_model(scen)
    with RunFile(out) as r:
        assert r.meta.mechanism_type == "probe_cone" and mechanisms.for_run(r) is pc
        assert {c.name: (c.unit, c.group) for c in pc.channels(model)} == {
            n: (c.unit, c.group) for n, c in r.channels.items()}
        assert "mechanism     probe_cone" in r.summary()
    with RunFile(SAMPLES / "expert_movable_limiter.h5") as r:   # what the type names, a run of it has
        lay = pc.device_layout(r)
        named = (list(pc.readout_channels()) + list(pc.default_plots) + list(lay.sketch.channels)
                 + [n for _, n in lay.sketch.numbers])
        assert [n for n in named if n not in r.channels] == []
        assert {g.group for g in lay.groups} <= set(r.groups())
        assert {g.kind for g in r.geometry.values()} <= set(pc.part_colors)
        assert set(pc.scene.ld_bodies) <= set(r.bodies)
    assert pc.criteria_file.is_file() and pc.variants == ("existing", "modified_dampers", "movable_limiter")
    with pytest.raises(KeyError, match="unknown mechanism type 'hexapod'"):
        mechanisms.mechanism_type("hexapod")


def test_the_interface_is_qt_free_and_the_sketch_a_pure_function():
    code = ("import sys, solver.mechanisms, solver.mechanisms.probe_cone.sketch; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'vtkmodules')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"
    sk = mechanisms.mechanism_type("probe_cone").device_layout().sketch
    box, scale = (10.0, 20.0, 200.0, 80.0), {"gain": 2.0, "stroke_full": 0.4, "max_angle": 1.0}
    flat = sk.draw("y", {}, box, scale)    # no values: a straight probe along the band's middle line
    lines = [s for s in flat if isinstance(s, Polyline)]
    assert {y for s in lines for _, y in s.points} == {60.0}
    marks = {s.label: s.at for s in flat if isinstance(s, Mark)}
    assert marks["3"] == (24.0, 60.0) and marks["1"][0] > marks["2"][0] > marks["3"][0]
    up = sk.draw("y", {"housing_angle_y": 5.0, "probe_stroke": 0.4}, box, scale)
    m_up = {s.label: s.at for s in up if isinstance(s, Mark)}
    assert m_up["2"][1] < 60.0                                   # the housing swung up (angle x gain)
    assert m_up["1"][0] - m_up["2"][0] < marks["1"][0] - marks["2"][0]   # full stroke: a shorter free probe
    assert sk.draw("y", {"housing_angle_y": 5.0, "probe_stroke": 0.4}, box, scale) == up   # no state
    with pytest.raises(ValueError, match="bar group legs: arrangement 'grid': one of stack, around"):
        BarGroup("legs", ("legs",), arrangement="grid")
    with pytest.raises(ValueError, match="pen dash 'dash-dot'"):
        Pen((0, 0, 0), 1.0, "dash-dot")


def _probe_cone_names() -> set[str]:
    """What a probe-cone run names: its mechanism channels, bodies, parts, pairs (and their lanes)."""
    names = {"axial_damper", "lateral_damper"}
    for p in sorted(SAMPLES.glob("*.h5")):
        with RunFile(p) as r:
            names |= {n for n, c in r.channels.items()
                      if c.group in ("kinematics", "axial_damper", "lateral_damper", "mechanism")}
            names |= (set(r.bodies) - {"active_craft", "passive_craft"}) | set(r.geometry) | set(r.contact_pairs)
            names |= {re.sub(r"_\d+$", "", n) for n in r.contact_pairs}
    return names


NOT_YET: set[str] = set()   # files allowed to name probe-cone channels for now: none


def test_viewer_and_app_name_no_probe_cone_channel():
    """A name with an underscore (or capitals) anywhere in code or comments; a one-word name (probe, housing,
    socket) as a string literal."""
    names = _probe_cone_names()
    assert {"probe_stroke", "head_offset_y", "housing_angle_z", "latch_slot", "axial_damper", "probe"} <= names
    compound = sorted((n for n in names if "_" in n or n != n.lower()), key=len, reverse=True)
    word = sorted(n for n in names if n not in compound)
    pat = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, compound)) + r")(?![A-Za-z0-9_])"
                     r"|[\"'](" + "|".join(map(re.escape, word)) + r")[\"']")
    found = []
    for folder in ("viewer", "app"):
        for f in sorted((ROOT / folder).rglob("*.py")):
            rel = f.relative_to(ROOT).as_posix()
            if rel in NOT_YET:
                continue
            for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
                found += [f"{rel}:{i}: {m.group(0)}" for m in pat.finditer(line)]
    assert found == []


def test_viewer_and_app_import_no_mechanism_types_package():
    """The app and the viewer reach a type through the registry (solver.mechanisms, its base): no file imports a type's
    own package (its resources, model or runner), e.g. the operator dialog takes its session from the registry."""
    from solver import mechanisms
    types = [n.replace("-", "_") for n in mechanisms.names()]
    assert "berthing" in types
    pat = re.compile(r"solver\.mechanisms\.(" + "|".join(map(re.escape, types)) + r")\b"
                     r"|from solver\.mechanisms import .*\b(" + "|".join(map(re.escape, types)) + r")\b")
    found = [f"{f.relative_to(ROOT).as_posix()}:{i}: {line.strip()}"
             for folder in ("viewer", "app") for f in sorted((ROOT / folder).rglob("*.py"))
             for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if pat.search(line)]
    assert found == []
