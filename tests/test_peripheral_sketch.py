"""The peripheral type's middle-pane sketch (a pure function, no Qt): the legs' numbered marks never overlap one
another and stay inside their view's box, at the sizes the devices pane gives it from 1280x720 up."""
from __future__ import annotations

import itertools

import pytest

from solver.mechanisms.base import Mark
from solver.mechanisms.peripheral.sketch import LEGS, SKETCH

STROKES = [dict.fromkeys(LEGS, 0.0),                                             # neutral
           dict(zip(LEGS, (-0.0068, -0.0036, 0.0010, 0.0002, -0.0072, -0.0138))),   # envelope case at contact
           dict(zip(LEGS, (-0.12, 0.08, -0.05, 0.0, 0.03, -0.1)))]             # far apart
MARK_R = 7.0


class Facts:
    def __init__(self, strokes):
        self.s = strokes

    def has(self, name):
        return name in self.s

    def stroke(self, name):
        return 0.12

    def abs_max(self, name):
        return abs(self.s.get(name, 0.0))


@pytest.mark.parametrize("box", [(10, 40, 172, 70), (10, 40, 267, 60), (10, 40, 200, 40), (10, 40, 330, 120)])
@pytest.mark.parametrize("values", STROKES, ids=("neutral", "envelope", "apart"))
def test_leg_numbers_apart_and_inside_the_view(box, values):
    scale = SKETCH.prepare(Facts(values), box[2], box[3])
    for view in SKETCH.views:
        marks = [s for s in SKETCH.draw(view.key, values, box, scale) if isinstance(s, Mark)]
        assert sorted(m.label for m in marks) == ["1", "2", "3", "4", "5", "6"]
        for a, b in itertools.combinations(marks, 2):
            assert max(abs(a.at[0] - b.at[0]), abs(a.at[1] - b.at[1])) >= 2 * MARK_R, (view.key, a, b)
        assert all(m.at[0] + MARK_R <= box[0] + box[2] for m in marks), (view.key, marks)
