"""The new-run dialog keeps the "Run to t" the user typed: over a change of scenario and at its next opening
(issue 32: it reset to the scenario's 30 s)."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from app.scenario_dialog import ScenarioDialog  # noqa: E402
from tests.gui_util import main_window  # noqa: E402

pytestmark = pytest.mark.gui
SCEN = Path(__file__).resolve().parent.parent / "resources" / "scenarios"


def _type(qtbot, edit, text):
    edit.selectAll()
    qtbot.keyClicks(edit, text)


def test_run_to_t_is_kept_over_a_scenario_change_and_the_next_opening(qtbot, tmp_path):
    w = main_window(qtbot, tmp_path / "s.ini", activate=False)
    dlg = ScenarioDialog(w, scenario_path=SCEN / "central_impact_20t.toml")
    qtbot.addWidget(dlg)
    scenario_t = dlg.t_end_edit.text()
    _type(qtbot, dlg.t_end_edit, "12.5")
    dlg.load_scenario(SCEN / "expert_existing.toml")          # another scenario: the typed time stays
    assert dlg.t_end_edit.text() == "12.5" and dlg.t_end() == 12.5
    qtbot.waitUntil(dlg.run_button.isEnabled, timeout=5000)
    dlg.accept()
    again = ScenarioDialog(w, scenario_path=SCEN / "central_impact_20t.toml")
    qtbot.addWidget(again)
    assert again.t_end_edit.text() == "12.5" != scenario_t
    rerun = ScenarioDialog(w, scenario_path=SCEN / "central_impact_20t.toml", branch_time=1.0, t_end=3.0)
    qtbot.addWidget(rerun)
    assert rerun.t_end_edit.text() == "3"                      # a re-run goes to its run's end, as before


def test_without_a_typed_time_the_scenario_duration_fills_it(qtbot, tmp_path):
    w = main_window(qtbot, tmp_path / "s.ini", activate=False)
    dlg = ScenarioDialog(w, scenario_path=SCEN / "central_impact_20t.toml")
    qtbot.addWidget(dlg)
    first = dlg.t_end_edit.text()
    assert first and float(first) > 0
