"""A clip frame's facts panel: no scroll bar, the verdict whole (issue 32)."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint  # noqa: E402
from PySide6.QtWidgets import QLabel, QScrollArea  # noqa: E402

from solver.runfile import RunFile  # noqa: E402

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("run_name, size", [("expert_existing.h5", (1280, 720)), ("expert_existing.h5", (960, 540)),
                                            ("peripheral/central_impact_10t.h5", (1280, 720))])
def test_clip_facts_show_the_verdict_whole_without_a_scroll_bar(qtbot, run_name, size):
    from viewer.clip_render import DiagramRenderer
    run = RunFile(ROOT / "sample_runs" / run_name)
    r = DiagramRenderer(run, size)
    try:
        r.render_time(float(run.time[run.n_frames // 3]), 1.0)
        areas = [a for a in r.diagram.plots.findChildren(QScrollArea)
                 if any(lab.text() == "Verdict" for lab in a.findChildren(QLabel))]
        assert areas
        area = areas[0]
        assert not area.verticalScrollBar().isVisible()
        labels = area.widget().findChildren(QLabel)
        key = next(lab for lab in labels if lab.text() == "Verdict")
        y = key.mapTo(area.widget(), QPoint(0, 0)).y()
        verdict = next(lab for lab in labels if lab is not key and lab.isVisible()
                       and abs(lab.mapTo(area.widget(), QPoint(0, 0)).y() - y) < 3)
        assert verdict.text() not in ("", "—")
        top = verdict.mapTo(area.viewport(), QPoint(0, 0)).y()
        assert top >= 0 and top + verdict.heightForWidth(verdict.width()) <= area.viewport().height() + 1, \
            (verdict.text(), top, verdict.height(), area.viewport().height())
    finally:
        r.close()
        run.close()
