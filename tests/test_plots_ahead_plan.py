"""The plots' draw-ahead plan and scrolling window without Qt, from the playback model's state (frame, playing,
stride, next frame) as the pane gets it."""
import subprocess
import sys

import numpy as np
import pytest

from viewer.playback_state import EVERY_FRAME, PlaybackState
from viewer.plots.ahead_plan import CURSOR_AT, drawings_now, plan_ahead, range_at, scroll_window, span_for


def test_plan_imports_without_qt():
    code = "import sys, viewer.plots.ahead_plan; print('PySide6' in sys.modules, 'pyqtgraph' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_playback_model_gives_the_stride_and_the_next_frame():
    s = PlaybackState(np.arange(10001) * 0.001, output_step=0.001)   # 10 s at 1 kHz
    assert s.next_frame is None                      # paused: no next tick
    s.play()
    s.advance(1 / 60)                                # 1x: 1/60 s of run time per tick
    assert s.frame == 16 and s.stride == 16 and s.next_frame == 32
    s.set_speed(2.0)
    s.advance(1 / 60)
    assert s.stride == s.frame - 16 and s.next_frame == s.frame + s.stride
    s.set_speed(EVERY_FRAME)
    s.advance(1 / 60)
    assert s.stride == 1 and s.next_frame == s.frame + 1
    s.seek_frame(10000)
    assert s.next_frame is None                      # the next tick ends play (or wraps): nothing to draw ahead
    s.set_loop_range(100, 200)
    s.seek_frame(200)
    assert s.next_frame is None


def test_plan_spreads_the_next_step_over_the_frames_before_it():
    t = np.arange(30001) * 0.001                     # 30 s at 1 kHz
    window, step = 10.0, 0.1
    x = scroll_window(8.05, window, step, 0.0, 30.0)
    assert x == pytest.approx((0.0, 10.0))
    plan = plan_ahead(t, x, window, step, frame=8050, stride=17, playing=True)
    assert plan.next_range == pytest.approx((0.1, 10.1))
    due = int(np.searchsorted(t, step + CURSOR_AT * window))          # 8100: the first frame of the next step
    assert plan.frames_left == (due - 8050 - 1) // (17 + 1)
    paused = plan_ahead(t, x, window, step, frame=8050, stride=1, playing=False)
    assert paused.frames_left == due - 8050
    assert plan_ahead(t, (20.0, 30.0), window, step, frame=29000, stride=17, playing=True) is None   # run's end
    assert plan_ahead(t, x, window, 0.0, frame=8050, stride=17, playing=True) is None


def test_drawings_now_is_an_even_share_and_at_least_one():
    costs = [1.0, 1.0, 1.5, 3.5, 0.3]
    assert drawings_now(costs, 1) == 5               # the last frame before the step: everything
    assert drawings_now(costs, 100) == 1             # far ahead: one drawing a frame
    assert drawings_now(costs, 3) == 2               # 7.3 / 3 = 2.43: 1 + 1 fits, + 1.5 does not
    assert drawings_now([], 5) == 0


def test_range_and_frames_loaded():
    t = np.arange(30001) * 0.001
    assert range_at(t, 12.0, False, 10.0, 0.1) == (0.0, 30.0)
    assert span_for(t, (0.0, 30.0), False, 4096) == (0, 30001)
    assert span_for(t, (5.0, 15.0), True, 4096) == (0, 25005)      # the range's frames and as many either side
    assert span_for(t, (15.0, 25.0), True, 4096) == (4096, 30001)  # from a whole chunk
