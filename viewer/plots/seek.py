"""Click-to-seek: the run time under a click in a plot (the pane asks the playback model to go there)."""
from __future__ import annotations


def clicked_time(scene_pos, plots: list) -> float | None:
    """Run time at `scene_pos` in the first of `plots` whose view box holds it; None outside them all."""
    for plot in plots:
        vb = plot.getViewBox()
        if vb.sceneBoundingRect().contains(scene_pos):
            return float(vb.mapSceneToView(scene_pos).x())
    return None
