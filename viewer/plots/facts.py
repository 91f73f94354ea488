"""The plots pane's left panel: the run's facts (GraphStep, Run Date, comment, T capture, T Final, verdict) and the
T Current readout box with the plotted channels' values."""
from __future__ import annotations

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDoubleSpinBox, QFrame, QGridLayout, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from solver.runfile import RunFile
from viewer import style
from viewer.numbers import value_text
from viewer.run_facts import capture_text, t_final_text
from viewer.steady_label import SteadyLabel


def panel_style() -> str:
    """The panel's stylesheet in the theme in use."""
    return (f"QWidget#facts {{ background: {style.BACKGROUND}; }} QLabel {{ color: {style.TEXT}; }} "
            f"QLabel[role=key] {{ color: {style.KEY_TEXT}; }} QFrame#readout {{ border: 1px solid {style.FRAME}; }}")


FACTS = ("Run Date", "Comment", "T capture", "T Final", "Verdict")
PANEL_W = 270   # px
BOX_SHARE = 0.5   # of the panel's height the T Current box may take to show every row without scrolling


def scroll_area(content: QWidget, background: str) -> QScrollArea:
    """`content` filling a frameless vertical scroll area on `background` (a scroll bar only if it does not fit)."""
    area = QScrollArea(widgetResizable=True, frameShape=QFrame.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
    area.setWidget(content)
    area.setStyleSheet(f"QScrollArea, QScrollArea > QWidget {{ background: {background}; }}")
    area.setProperty("ground", "BACKGROUND" if background == style.BACKGROUND else "")
    return area


def restyle_scroll_areas(widget: QWidget) -> None:
    """The scroll areas under `widget` made on the panes' BACKGROUND: on the theme's BACKGROUND again."""
    for area in widget.findChildren(QScrollArea):
        if area.property("ground") == "BACKGROUND":
            area.setStyleSheet(f"QScrollArea, QScrollArea > QWidget {{ background: {style.BACKGROUND}; }}")


class FactsPanel(QWidget):
    """Facts form above the readout box; GraphStep typed here is announced (`graphStepEdited`)."""

    graphStepEdited = Signal(float)

    def __init__(self, graph_step: float, parent=None):
        super().__init__(parent, objectName="facts")
        self.setAttribute(Qt.WA_StyledBackground)
        self.setStyleSheet(panel_style())
        self.setFixedWidth(PANEL_W)
        v = QVBoxLayout(self)
        v.setContentsMargins(8, 6, 8, 6)
        form_box = QWidget(objectName="facts")
        form = QGridLayout(form_box)   # (a QFormLayout gives a wrapped value less height than it asks for)
        form.setContentsMargins(0, 0, 0, 0)
        form.setVerticalSpacing(2)
        form.setColumnStretch(1, 1)

        def add_row(name: QLabel, value: QWidget):
            r = form.rowCount()
            form.addWidget(name, r, 0, Qt.AlignLeft | Qt.AlignTop)
            form.addWidget(value, r, 1)
        self.graph_step_box = QDoubleSpinBox(decimals=3, minimum=0.001, maximum=60.0, singleStep=0.05, suffix=" s")
        self.graph_step_box.setValue(graph_step)
        self.graph_step_box.setKeyboardTracking(False)
        self.graph_step_box.setFocusPolicy(Qt.ClickFocus)
        self.graph_step_box.valueChanged.connect(self.graphStepEdited.emit)
        self.labels: dict[str, QLabel] = {}

        def key(text):
            lab = QLabel(text)
            lab.setProperty("role", "key")
            return lab

        add_row(key("GraphStep"), self.graph_step_box)
        for k in FACTS:
            lab = self.labels[k] = QLabel("—")
            lab.setWordWrap(True)
            lab.setTextInteractionFlags(Qt.TextSelectableByMouse)
            add_row(key(k), lab)
        self.measure_key = key("Cursors")   # the measuring cursors' Δt, ΔY and slope (scrolls with the facts)
        self.measure = QLabel("")
        self.measure.setWordWrap(True)
        self.measure.setTextFormat(Qt.RichText)
        self.measure.setTextInteractionFlags(Qt.TextSelectableByMouse)
        add_row(self.measure_key, self.measure)
        for w in (self.measure_key, self.measure):
            w.setVisible(False)
        form.setRowStretch(form.rowCount(), 1)
        v.addWidget(scroll_area(form_box, style.BACKGROUND), 1)   # a long comment or verdict scrolls; the box stays
        box = QFrame(objectName="readout")
        bl = QVBoxLayout(box)
        bl.setContentsMargins(6, 4, 6, 4)
        self.t_label = QLabel("T Current  —")
        self.t_label.setFont(style.mono_font(style.T_CURRENT_PT, bold=True))
        self.t_label.setStyleSheet(f"color: {style.CURSOR};")
        self._verdict: tuple = ("", None, "")
        self.readout = QLabel("")
        self.readout.setFont(style.mono_font(style.READOUT_PT))
        self.readout.setTextFormat(Qt.RichText)
        self.readout.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        self.readout.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Ignored)
        self.t_label, self.readout = SteadyLabel(self.t_label), SteadyLabel(self.readout)   # new text each frame
        bl.addWidget(self.t_label)
        self.readout.setObjectName("facts")                  # (the panel's background under the scroll area)
        self.readout.setAttribute(Qt.WA_StyledBackground)
        self.readout_area = scroll_area(self.readout, style.BACKGROUND)   # many rows (measured, Δ) scroll on a small
        bl.addWidget(self.readout_area, 1)                                 # screen
        self._rows_px = 0                   # px the readout's rows need (fit_rows)
        v.addWidget(box)

    def set_graph_step(self, seconds: float):
        """Show GraphStep (not announced again)."""
        if abs(self.graph_step_box.value() - seconds) > 1e-9:
            self.graph_step_box.blockSignals(True)
            self.graph_step_box.setValue(seconds)
            self.graph_step_box.blockSignals(False)

    def set_run(self, run: RunFile | None):
        """The run's facts (— without a run)."""
        if run is None:
            for k in self.labels.values():
                k.setText("—")
            return
        m = run.meta
        self.labels["Run Date"].setText(m.run_date.replace("T", " ") or "—")
        self.labels["Comment"].setText(m.comment or "—")
        self.labels["T capture"].setText(capture_text(run))
        self.labels["T Final"].setText(t_final_text(run))

    def set_running(self, run: RunFile):
        """A run still being written: its T Final so far and T capture once the solver has it."""
        self.labels["T Final"].setText(f"{run.t_final:.3f} s (running)")
        self.labels["T capture"].setText(capture_text(run))

    def set_verdict(self, line: str, passed: bool | None, report: str = ""):
        """The capture verdict line (PASS green, FAIL red; None: could not be evaluated)."""
        self._verdict = (line, passed, report)
        lab = self.labels["Verdict"]
        color = {True: style.PASS, False: style.FAIL, None: style.KEY_TEXT}[passed]
        lab.setText(line or "—")
        lab.setStyleSheet(f"color: {color};" + (" font-weight: bold;" if passed is False else ""))
        lab.setToolTip(f"<pre>{report}</pre>" if report else "")

    def apply_theme(self):
        """View → Theme: the panel's, T Current's and the verdict's colours again (the values: with the next frame)."""
        self.setStyleSheet(panel_style())
        restyle_scroll_areas(self)
        self.t_label.label.setStyleSheet(f"color: {style.CURSOR};")
        if self._verdict[0]:
            self.set_verdict(*self._verdict)

    def show_values(self, t: float | None, rows: list[tuple], colors: list[str] | None = None):
        """T Current and each plotted channel's (name, value, unit[, measured value or None]) in its trace colour
        (`colors`, default: TRACE_COLORS in order); with a measured value, a line for it and one for measured −
        run under the channel's; t None: no run."""
        if t is None:
            self.t_label.setText("T Current  —")
            self.readout.setText("")
            return
        self.t_label.setText(f"T Current  {t:10.4f} s")
        out = []

        def line(color, left, right):   # (&nbsp; in texts, not tags)
            left, right = f"{left:<14}", f" {right:>14}"
            return f"<span style='color:{color}'>{left.replace(' ', '&nbsp;')}</span>{right.replace(' ', '&nbsp;')}"
        for i, (n, v, unit, *more) in enumerate(rows):
            col = colors[i] if colors is not None else style.TRACE_COLORS[i % len(style.TRACE_COLORS)]
            out.append(line(col, n, value_text(v, unit)))
            m = more[0] if more else None
            if m is not None:
                out.append(line(style.MEASURED, "  measured", value_text(m, unit)))
                out.append(line(style.DIFFERENCE, "  Δ meas−run", value_text(m - v, unit, signed=True)))
        self.readout.setText("<br>".join(out))

    def show_measure(self, lines: list[str]):
        """The measuring cursors' readout (Δt, ΔY, slope) under the values; hidden when empty."""
        text = "<br>".join(f"<span style='color:{style.TEXT}'>{x}</span>" for x in lines)
        if text != self.measure.text():
            self.measure.setText(text)
            for w in (self.measure_key, self.measure):
                w.setVisible(bool(lines))

    def fit_rows(self, lines: int):
        """Room in the readout box for `lines` values: as tall as they need up to half the panel (more scroll)."""
        self._rows_px = lines * self.readout.label.fontMetrics().lineSpacing() + 2 if lines else 0
        self.readout.setMinimumHeight(self._rows_px)
        self._fit_box()

    def _fit_box(self):
        room = max(int(self.height() * BOX_SHARE) - self.t_label.sizeHint().height(), 0)
        want = min(self._rows_px, room)
        if self.readout_area.minimumHeight() != want:
            self.readout_area.setMinimumHeight(want)

    def resizeEvent(self, e):
        super().resizeEvent(e)
        self._fit_box()
