"""Run -> Berthing (operator...): the operator's hand controllers on the keyboard for a berthing session locked to
wall time (seed 001 ch. VIII, §8.4). The session runs in the app's worker process (`berthing-operator`); the three
panes follow its run file as it grows; the real-time factor and the solver's headroom show here, in red when the
solver falls behind wall time (the run file gets an event too)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path


from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QCheckBox, QDialog, QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel, QPushButton,
                               QVBoxLayout)

from solver import mechanisms
from viewer import style

# translation controller: W/S along the probe (in/out), A/D payload y, R/F payload z;
# rotation controller: U/O roll (x), I/K pitch (y), J/L yaw (z); B: brakes
KEYS = {Qt.Key_W: (0, 1), Qt.Key_S: (0, -1), Qt.Key_A: (1, 1), Qt.Key_D: (1, -1), Qt.Key_R: (2, 1),
        Qt.Key_F: (2, -1), Qt.Key_U: (3, 1), Qt.Key_O: (3, -1), Qt.Key_I: (4, 1), Qt.Key_K: (4, -1),
        Qt.Key_J: (5, 1), Qt.Key_L: (5, -1)}
HELP = ("translation: W/S in/out along the probe, A/D left/right, R/F up/down\n"
        "rotation: U/O roll, I/K pitch, J/L yaw     B: brakes on/off\n"
        "(held keys: full deflection in the payload frame; rates in the arm's TOML [operator])\n"
        "gamepad: left stick in/out and left/right, triggers up/down, right stick pitch/yaw, shoulders roll, A brakes")
GAMEPAD_POLL_MS = 50   # the gamepad is read this often (the solver takes commands every 0.1 s)


class OperatorDialog(QDialog):
    """Start/stop an operator session and drive it from the keyboard while this dialog has the focus."""

    def __init__(self, window, scenario=None):
        super().__init__(window)
        self.setWindowTitle("Berthing — operator in the loop")
        self.window = window
        self.session = mechanisms.with_operator().operator     # the registry's type with an operator session
        self.scenario = Path(scenario or self.session.scenario)
        self.held: set[int] = set()
        self.brakes = False
        self.out: Path | None = None
        self.sent: list[str] = []
        lay = QVBoxLayout(self)
        form = QFormLayout()
        form.addRow("scenario", QLabel(self.scenario.name))
        self.length = QDoubleSpinBox(minimum=1.0, maximum=3600.0, value=120.0, suffix=" s", decimals=1)
        form.addRow("session length", self.length)
        self.brake_box = QCheckBox("brakes applied (B)")
        self.brake_box.setFocusPolicy(Qt.NoFocus)
        self.brake_box.toggled.connect(self._set_brakes)
        form.addRow("", self.brake_box)
        lay.addLayout(form)
        lay.addWidget(QLabel(HELP))
        from app.gamepad import Gamepad
        op = self.session.settings()
        self.gamepad = Gamepad(op["gamepad_dead_zone"])
        self.pad_deflection = [0.0] * 6
        self.pad_label = QLabel()
        self.pad_label.setObjectName("gamepad_status")
        lay.addWidget(self.pad_label)
        self._pad_timer = QTimer(self, interval=GAMEPAD_POLL_MS, timeout=self.poll_gamepad)
        self._pad_timer.start()
        self._show_pad()
        self.status = QLabel("not started")
        self.status.setObjectName("operator_status")
        lay.addWidget(self.status)
        row = QHBoxLayout()
        self.start_button = QPushButton("Start session")
        self.stop_button = QPushButton("End session")
        for b in (self.start_button, self.stop_button):
            b.setFocusPolicy(Qt.NoFocus)
            row.addWidget(b)
        self.start_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self.stop_button.setEnabled(False)
        lay.addLayout(row)
        window.runner.realtime.connect(self._realtime)
        window.runner.finished.connect(self._finished)

    def start(self):
        """The session's run file in the runs folder; the window follows it as it grows."""
        w = self.window
        if w.runner.running:
            self.status.setText("a run is in progress: wait for it or cancel it first")
            return
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        folder = w.runs_dir()
        folder.mkdir(parents=True, exist_ok=True)
        self.out = folder / f"{self.scenario.stem}_session_{stamp}.h5"
        w.live_path = self.out
        w.run_bar.setValue(0)
        w.run_label.setText(f"starting {self.out.name} …")
        w._show_run_widgets(True)
        w._live_t = 0.0
        w.runner.start_operator(self.scenario, self.out, self.length.value())
        self.status.setText("starting the solver …")
        self.start_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.setFocus()

    def _show_pad(self):
        g = self.gamepad
        self.pad_label.setText(f"gamepad: {g.name}" if g.present else
                               "gamepad: none found (plug one in: it is picked up)" if g.available else
                               "gamepad: needs PySDL2 and its SDL library (pip install pysdl2 pysdl2-dll)")

    def poll_gamepad(self):
        """Read the gamepad (open one plugged in meanwhile); a changed deflection or the brakes button sends."""
        g = self.gamepad
        if not g.present:
            if g.open():
                self._show_pad()
            return
        d, brakes = g.poll()
        if brakes:
            self.brake_box.setChecked(not self.brake_box.isChecked())   # (sends)
        if d != self.pad_deflection:
            self.pad_deflection = d
            self._send()

    def stop(self):
        self.window.runner.send("STOP")

    def deflection(self) -> list[float]:
        d = [0.0] * 6
        for k in self.held:
            axis, sign = KEYS[k]
            d[axis] += sign
        d = [x + p for x, p in zip(d, self.pad_deflection)]
        return [max(-1.0, min(1.0, x)) for x in d]

    def _send(self):
        line = "CMD " + " ".join(f"{x:g}" for x in self.deflection()) + f" {int(self.brakes)}"
        self.sent.append(line)
        self.window.runner.send(line)

    def _set_brakes(self, on: bool):
        self.brakes = bool(on)
        self._send()

    def keyPressEvent(self, ev):
        if ev.isAutoRepeat():
            return
        if ev.key() == Qt.Key_B:
            self.brake_box.setChecked(not self.brake_box.isChecked())
        elif ev.key() in KEYS:
            self.held.add(ev.key())
            self._send()
        else:
            super().keyPressEvent(ev)

    def keyReleaseEvent(self, ev):
        if ev.isAutoRepeat():
            return
        if ev.key() in KEYS:
            self.held.discard(ev.key())
            self._send()
        else:
            super().keyReleaseEvent(ev)

    def _realtime(self, factor: float, headroom: float, behind: bool):
        text = f"real time x{factor:.2f}   solver headroom x{headroom:.0f}"
        if behind:
            text += "   BEHIND wall time (logged in the run file)"
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {style.FAIL}; font-weight: bold" if behind else "")

    def _finished(self, path: str, code: int, message: str):
        self.start_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        self.status.setText(f"session {Path(path).name}: {message}")
