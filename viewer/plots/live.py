"""Loading the plotted channels' frames into their curves: on a scroll past what is loaded, and step by step
while a run is still being written (live refresh)."""
from __future__ import annotations


def load_curves(run, names: list[str], curves: list, blocks, span: tuple[int, int]):
    """Give each curve its channel's frames [a, b) (a generator: one curve per step, so a live refresh can spread
    the work over event-loop turns)."""
    a, b = span
    t = run.time[a:b]
    for name, curve in zip(names, curves):
        curve.setData(t, blocks.window(name, a, b))
        yield
