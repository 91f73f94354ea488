"""Devices pane texts and states at small window sizes: names never cut in the middle, the axis symbol clear of the
devices' names, counts as whole numbers in a state colour (issue 32)."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

import viewer.devices_pane as dp  # noqa: E402
from tests.gui_util import main_window  # noqa: E402
from tests.layout_check import painted  # noqa: E402

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parent.parent
EXPERT = ROOT / "sample_runs" / "expert_existing.h5"
PERIPHERAL = ROOT / "sample_runs" / "peripheral" / "central_impact_10t.h5"


def _words_kept(shown: str, full: str) -> bool:
    """Every "_"-word of `shown` starts the matching word of `full` (abbreviated, never cut inside)."""
    sw, fw = shown.split("_"), full.split(" ")[0].split("_")
    return len(sw) <= len(fw) and all(f.startswith(s) and s for s, f in zip(sw, fw))


def test_abbreviations_keep_word_starts_and_numbers():
    forms = dp.abbreviations("spring_mechanism_2")
    assert forms[0] == "spring_mechanis_2" and "spring_mecha_2" in forms and "spri_mech_2" in forms
    assert forms[-1] == "s_m_2" and len(forms) == len(set(forms))
    assert all(f.endswith("_2") for f in forms)


@pytest.mark.parametrize("size", [(1280, 720), (1366, 768)])
def test_device_names_never_cut_in_the_middle_and_clear_of_the_axis_symbol(qtbot, tmp_path, size):
    w = main_window(qtbot, tmp_path / "s.ini", EXPERT, size=size)
    dv = w.diagram.devices
    w.playback.seek_time(24.7)
    qtbot.wait(50)
    placed = dv.label_rects()
    shortened = [(shown, full) for shown, full, *_ in placed if shown != full]
    for shown, full in shortened:
        assert "…" not in shown, (shown, full)
        assert _words_kept(shown.replace("\n", "").split(" ")[0], full), (shown, full)
    lateral = {full.split(" ")[0]: shown for shown, full, *_ in placed if full.split(" ")[0] in dv.bars["lateral_damper"]}
    assert set(lateral) == set(dv.bars["lateral_damper"])
    for name, shown in lateral.items():   # whole words (on two lines where one is too narrow): no "spring_mecha_2"
        assert shown.replace("\n", "").split(" ")[0] == name, (shown, name)
    assert painted(dv) == []                 # each fits its rect, inside its box, none overlapping
    axes = dv.axes_symbols["lateral_damper"]
    for shown, _, rect, *_ in placed:
        if shown not in ("+y", "+z"):
            assert not rect.intersects(axes), (shown, rect, axes)
    for name, r in dv.bar_rects.items():
        assert not r.intersects(axes), (name, r, axes)


def test_counts_are_whole_numbers_in_a_state_colour(qtbot, tmp_path):
    w = main_window(qtbot, tmp_path / "s.ini", PERIPHERAL, size=(1280, 720))
    dv = w.diagram.devices
    w.playback.seek_time(0.5)
    qtbot.wait(50)
    img = dv.grab().toImage()
    assert w.run.channel_at("latches_engaged", w.playback.frame) == 3.0
    assert dv.value_texts["latches_engaged"] == "3" and dv.value_texts["hooks_closed"] == "0"
    r = dv.bar_rects["latches_engaged"]
    colours = {img.pixel(x, y) for x in range(int(r.left()) + 2, int(r.right()) - 2, 3)
               for y in range(int(r.top()) + 2, int(r.bottom()) - 2, 2)}
    assert dp.STATE.rgb() in colours and dp.POSITIVE.rgb() not in colours     # a state, not the alarm red
    edge = {img.pixel(int(r.center().x()), int(r.top()))}
    assert dp.FULL.rgb() not in edge                                        # no full-scale outline on a count
    right = "\n".join(lab.text() for lab in w.diagram.scene.findChildren(type(w.diagram.scene._right.label)))
    assert "+3.0000" not in right and "+0.0000" not in right.split("hooks_closed")[-1].split("\n")[0]
    line = next(t for t in right.split("\n") if t.startswith("latches_engaged"))
    assert line.split()[-1] == "3", line


def test_a_state_of_the_newer_types_reads_as_a_whole_number():
    """Berthing's brakes and command mode are 0/1 states: with the range 1 they read "0", not "+0.0000" (old main:
    no range, shown as a signed decimal in the scene's readouts)."""
    from solver.mechanisms.berthing.simulate import channel_infos
    from solver.scenario import load_model
    from viewer.numbers import count_text, is_count
    m = load_model(ROOT / "resources" / "berthing" / "scenarios" / "mrm1_scripted.toml")
    info = {c.name: c for c in channel_infos(m)}
    for name in ("brakes", "cmd_mode"):
        assert is_count(info[name].unit, info[name].stroke), name
    assert count_text(1.0).strip() == "1" and count_text(0.0).strip() == "0"
