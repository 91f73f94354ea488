"""Playback arithmetic without Qt: stepping, GraphStep, speed ladder, real-time advance, looping."""
import subprocess
import sys

import numpy as np
import pytest

from viewer.playback_state import (EVERY_FRAME, SPEED_LADDER, PlaybackState, default_graph_step,
                                   speed_label)


def state(n=1001, dt=0.01):
    return PlaybackState(np.arange(n) * dt, output_step=dt)


def test_model_imports_without_qt():
    code = "import sys, viewer.playback_state; print('PySide6' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_seek_and_clamp():
    s = state()
    s.seek_frame(5000)
    assert s.frame == 1000 and s.t_current == pytest.approx(10.0)
    s.seek_frame(-3)
    assert s.frame == 0
    s.seek_time(2.345)
    assert s.frame == 234  # last frame at or before t
    s.seek_time(99)
    assert s.frame == 1000


def test_step_pauses_and_clamps():
    s = state()
    s.play()
    s.step(1)
    assert not s.playing and s.frame == 1
    s.step(-5)
    assert s.frame == 0
    s.end()
    s.step(3)
    assert s.frame == 1000


def test_graph_step_default_and_stepping():
    assert default_graph_step(0.002) == pytest.approx(0.1)
    assert default_graph_step(0.001) == pytest.approx(0.1)
    assert default_graph_step(0.3) == pytest.approx(0.3)  # at least one output step
    s = state(dt=0.002, n=5001)
    assert s.graph_step == pytest.approx(0.1)
    s.seek_frame(100)
    s.step_graph(1)
    assert s.frame == 150
    s.step_graph(-3)
    assert s.frame == 0
    s.set_graph_step(0.5)
    s.step_graph(2)
    assert s.t_current == pytest.approx(1.0)
    with pytest.raises(ValueError):
        s.set_graph_step(0)


def test_graph_step_smaller_than_a_frame_still_moves():
    s = state(dt=0.01)
    s.set_graph_step(0.001)
    s.seek_frame(10)
    s.step_graph(1)
    assert s.frame == 11
    s.step_graph(-1)
    assert s.frame == 10


def test_speed_ladder():
    s = state()
    assert s.speed == 1.0
    for _ in range(20):
        s.faster()
    assert s.speed == 16.0
    for _ in range(20):
        s.slower()
    assert s.speed == 1 / 16
    s.set_speed(EVERY_FRAME)
    s.faster()
    assert s.speed == 1.0
    with pytest.raises(ValueError):
        s.set_speed(3.0)
    assert [speed_label(x) for x in (EVERY_FRAME, 1 / 16, 0.5, 1.0, 16.0)] == \
        ["every frame", "1/16x", "1/2x", "1x", "16x"]
    assert len(SPEED_LADDER) == 9


def test_real_time_advance_skips_frames():
    s = state(dt=0.001, n=10001)
    s.play()
    s.advance(0.016)          # one display tick at 1x covers 16 saved frames
    assert s.frame == 16
    s.set_speed(4.0)
    s.advance(0.016)
    assert s.frame == 16 + 64
    s.set_speed(1 / 16)
    f = s.frame
    for _ in range(16):       # slow motion: sub-frame time accumulates, no frame lost or repeated
        s.advance(0.001)
    assert s.frame == f + 1


def test_every_frame_mode_advances_one_frame_per_tick():
    s = state()
    s.set_speed(EVERY_FRAME)
    s.play()
    s.advance(5.0)
    assert s.frame == 1
    s.advance(0.0)
    assert s.frame == 2


def test_stops_at_end_without_loop_and_restarts_on_play():
    s = state()
    s.seek_frame(990)
    s.play()
    s.advance(0.5)
    assert s.frame == 1000 and not s.playing
    s.play()
    assert s.frame == 0 and s.playing


def test_loop_whole_run_wraps():
    s = state()
    s.set_loop(True)
    s.seek_frame(995)
    s.play()
    s.advance(0.08)           # 9.95 + 0.08 = 10.03 -> wraps to 0.03
    assert s.playing and s.frame == 3


def test_loop_range_wraps_and_play_starts_inside():
    s = state()
    s.set_loop_range(200, 300)
    s.set_loop(True)
    s.seek_frame(10)
    s.play()
    assert s.frame == 200
    s.advance(0.5)            # stalls longer than MAX_TICK_S are cut; 0.5 s is allowed
    assert s.frame == 250
    s.advance(0.45)           # 2.95
    s.advance(0.1)            # 3.05 -> wraps to 2.05
    assert s.playing and s.frame == 205
    s.set_loop(False)
    s.advance(0.5)
    s.advance(0.5)            # 3.05 -> stops at the range end
    assert s.frame == 300 and not s.playing


def test_mark_in_out_and_clear():
    s = state()
    s.seek_frame(100)
    s.mark_in()
    assert s.loop_range == (100, 1000)
    s.seek_frame(400)
    s.mark_out()
    assert s.loop_range == (100, 400)
    s.set_loop_range(None, None)
    assert s.loop_range is None and s.bounds() == (0, 1000)
    with pytest.raises(ValueError):
        s.set_loop_range(5, 5)
    s.set_loop_range(700, 600)
    assert s.loop_range == (600, 700)


def test_long_stall_does_not_jump():
    s = state()
    s.play()
    s.advance(30.0)
    assert s.t_current == pytest.approx(0.5)


def test_next_and_previous_contact_event():
    s = state()
    s.set_event_frames([500, 120, 120, 900, 5000, -1])          # unsorted, repeated, out of the run
    assert s.event_frames.tolist() == [120, 500, 900]
    walked = []
    for _ in range(5):
        s.next_event()
        walked.append(s.frame)
    assert walked == [120, 500, 900, 900, 900]                  # stays at the last one
    s.seek_frame(600)                                           # between events
    s.prev_event()
    assert s.frame == 500
    s.prev_event()
    s.prev_event()
    assert s.frame == 120
    s.seek_frame(700)
    s.next_event()
    assert s.frame == 900
    s.play()
    s.prev_event()
    assert s.frame == 500 and s.playing                         # jumping keeps playing, like a seek
    s.set_time(np.arange(10) * 0.1)
    assert len(s.event_frames) == 0                             # a new run forgets the old events
    s.next_event()
    assert s.frame == 0
