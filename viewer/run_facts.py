"""The run's facts (Run Date, comment, T capture, T Final, channels, pairs, events) as a panel."""
from __future__ import annotations


from PySide6.QtWidgets import QFormLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from solver.runfile import RunFile
from viewer import style


def capture_text(run: RunFile) -> str:
    """T capture as the facts show it (`RunFile.capture_text`)."""
    return run.capture_text()


def t_final_text(run: RunFile) -> str:
    """T Final as the facts show it: `12.345 s`, `(incomplete)` for a run that ended early."""
    return f"{run.t_final:.3f} s" + ("" if run.meta.complete or run.live else " (incomplete)")


class RunFactsPanel(QWidget):
    """Shows a run's root facts and its summary text."""

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.labels: dict[str, QLabel] = {}
        for key in ("Run file", "Variant", "Comment", "Run Date", "T capture", "T Final", "Frames"):
            lab = self.labels[key] = QLabel("—")
            lab.setWordWrap(True)
            form.addRow(f"{key}:", lab)
        lay.addLayout(form)
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setStyleSheet(f"font-family: {style.MONO};")
        lay.addWidget(self.text, 1)

    def set_run(self, run: RunFile):
        m = run.meta
        v = {
            "Run file": str(run.path), "Variant": m.variant, "Comment": m.comment, "Run Date": m.run_date,
            "T capture": capture_text(run),
            "T Final": t_final_text(run),
            "Frames": f"{run.n_frames} (step {m.output_step:g} s)",
        }
        for k, s in v.items():
            self.labels[k].setText(s)
        self.text.setPlainText(run.summary())
