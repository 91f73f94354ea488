"""Scenario dialog: pick a scenario and mechanism variant, edit initial conditions and main parameters, save, run.

Every check is the solver's own (`solver.scenario.load_model` on the edited files), so the dialog and
`dockmnemo run` accept and refuse the same input; the dialog only adds "is this text a number".
"""
from __future__ import annotations

import math
import re
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QGridLayout,
                               QGroupBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout)

from app.toml_edit import set_value
from solver.errors import read_text
from solver.scenario import MECHANISMS, ScenarioError, load_model
from viewer import style

SCENARIOS = MECHANISMS.parent / "scenarios"
OK_STYLE = f"color: {style.OK_NOTE};"
ERR_STYLE = f"color: {style.ERROR_FIELD}; font-weight: bold;"
BAD_FIELD = f"QLineEdit {{ border: 2px solid {style.ERROR_FIELD}; }}"


@dataclass(frozen=True)
class Field:
    """One edited number: where it lives (file, table, key, vector index), how it is shown."""
    file: str             # "scenario" or "mechanism"
    table: str
    key: str
    index: int | None     # component of a vector value, None for a scalar
    size: int             # vector length (1 for scalars)
    label: str
    unit: str
    lo: float
    hi: float
    group: str
    default: str = ""     # shown when the file leaves the key out

    @property
    def ident(self) -> tuple:
        return (self.file, self.table, self.key, self.index)

    def range_text(self) -> str:
        return f"range {self.lo:g} … {self.hi:g} {self.unit}".rstrip()


def _vec(file, table, key, names, label, unit, lo, hi, group, default="0"):
    return [Field(file, table, key, i, len(names), f"{label} {n}", unit, lo, hi, group, default)
            for i, n in enumerate(names)]


IC, CRAFT, AXIAL, LATERAL, FRICTION = ("Initial conditions", "Spacecraft", "Axial damper", "Lateral damper",
                                       "Contact friction")
FIELDS: list[Field] = [
    Field("scenario", "initial", "closing_speed", None, 1, "closing speed", "m/s", 0.0, 1.0, IC),
    *_vec("scenario", "initial", "lateral_velocity", "yz", "lateral velocity", "m/s", -0.3, 0.3, IC),
    *_vec("scenario", "initial", "lateral_miss", "yz", "lateral miss", "m", -0.5, 0.5, IC),
    *_vec("scenario", "initial", "angular_miss_deg", ("roll", "pitch", "yaw"), "angular miss", "deg", -15, 15, IC),
    *_vec("scenario", "initial", "angular_rate_deg_s", "xyz", "angular rate", "deg/s", -5.0, 5.0, IC),
    Field("scenario", "active_craft", "mass", None, 1, "active craft mass", "kg", 0.0, 1e7, CRAFT),
    Field("scenario", "passive_craft", "mass", None, 1, "passive craft mass", "kg", 0.0, 1e7, CRAFT),
    Field("mechanism", "axial_damper", "friction_brake_torque_in", None, 1, "friction brake, stroking in",
          "N·m", 0.0, 1e3, AXIAL),
    Field("mechanism", "axial_damper", "friction_brake_torque_out", None, 1, "friction brake, pulled out",
          "N·m", 0.0, 1e3, AXIAL),
    Field("mechanism", "axial_damper", "structural_damping", None, 1, "structural damping c_D", "N·m·s/rad",
          0.0, 1.0, AXIAL),
    Field("mechanism", "axial_damper", "spring_stiffness", None, 1, "spiral spring stiffness", "N·m/rad",
          0.0, 1e3, AXIAL),
    Field("mechanism", "axial_damper", "magnetic_brake_ratio", None, 1, "magnetic brake ratio", "",
          0.0, 1e3, AXIAL),
    Field("mechanism", "lateral_damper", "spring_damping", None, 1, "spring mechanism damping", "N·s/m",
          0.0, 1e6, LATERAL),
    Field("mechanism", "lateral_damper", "coil_stiffness", None, 1, "coil spring stiffness", "N/m",
          0.0, 1e8, LATERAL),
    Field("mechanism", "lateral_damper", "hysteresis_force", None, 1, "hysteresis slip force", "N",
          0.0, 1e5, LATERAL),
    Field("mechanism", "lateral_damper", "brake_gear_ratio", None, 1, "magnetic brake gear ratio", "",
          0.0, 1e3, LATERAL),
    Field("scenario", "overrides", "head_friction", None, 1, "head on cone / socket", "", 0.0, 1.0, FRICTION,
          "mechanism value"),
    Field("scenario", "overrides", "latch_friction", None, 1, "latch on socket stop", "", 0.0, 1.0, FRICTION,
          "mechanism value"),
    Field("scenario", "overrides", "limiter_friction", None, 1, "limiter on cone", "", 0.0, 1.0, FRICTION,
          "mechanism value"),
]

_PART = re.compile(r"^# (scenario|mechanism|geometry) (\S+)\s*$")


def split_parameters(text: str) -> dict[str, tuple[str, str]]:
    """A run's stored /parameters ("# scenario NAME", "# mechanism NAME" … sections) as {kind: (name, text)}."""
    out: dict[str, tuple[str, str]] = {}
    kind, name, buf = None, "", []
    for line in text.splitlines():
        m = _PART.match(line)
        if m and (m.group(1) not in out and m.group(1) != kind):
            if kind:
                out[kind] = (name, "\n".join(buf).strip("\n") + "\n")
            kind, name, buf = m.group(1), m.group(2), []
        else:
            buf.append(line)
    if kind:
        out[kind] = (name, "\n".join(buf).strip("\n") + "\n")
    return out


def mechanism_names() -> list[str]:
    return sorted(p.stem for p in MECHANISMS.glob("*.toml"))


def _get(doc: dict, f: Field):
    v = doc.get(f.table, {}) if f.table else doc
    v = v.get(f.key) if isinstance(v, dict) else None
    if f.index is not None:
        v = v[f.index] if isinstance(v, list) and len(v) > f.index else None
    return v


def _fmt(v) -> str:
    if v is None or isinstance(v, (list, dict)):
        return ""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return f"{v:g}" if math.isfinite(v) else str(v)
    return str(v)


class ScenarioDialog(QDialog):
    """Edit a scenario (from a file or from a run's stored parameters); Run is enabled only for valid input."""

    def __init__(self, parent=None, scenario_path=None, parameters_text: str | None = None,
                 branch_time: float | None = None, t_end: float | None = None, source_label: str = ""):
        super().__init__(parent)
        self.branch_time = branch_time
        self.setWindowTitle("Re-run from T Current" if branch_time is not None else "Run a scenario")
        self.error = ""
        self.load_error = ""   # the picked scenario or its mechanism cannot be read: nothing else is checked
        self.model = None
        self.bad_fields: list[tuple] = []
        self._tmp = tempfile.TemporaryDirectory(prefix="dockmnemo_scenario_")
        self.scenario_text = ""
        self.scenario_name = "scenario"
        self.scenario_dir = SCENARIOS
        self.mech_text = ""
        self.mech_name = ""
        self.mech_embedded = False   # the mechanism text came with the scenario (a run, or an edited copy)
        self._loaded: dict[tuple, object] = {}
        self._timer = QTimer(self, singleShot=True, interval=150, timeout=self.validate)
        self._filling = False
        self._build(source_label)
        if parameters_text is not None:
            self.load_parameters(parameters_text, source_label)
        else:
            self.load_scenario(scenario_path or SCENARIOS / "central_impact_20t.toml")
        if t_end is not None:
            self.t_end_edit.setText(f"{t_end:g}")
        self.validate()

    # ---- layout -----------------------------------------------------------------------------
    def _build(self, source_label: str):
        lay = QVBoxLayout(self)
        top = QFormLayout()
        row = QHBoxLayout()
        self.scenario_combo = QComboBox()
        for p in sorted(SCENARIOS.glob("*.toml")):
            self.scenario_combo.addItem(p.stem, str(p))
        self.scenario_combo.activated.connect(lambda i: self.load_scenario(self.scenario_combo.itemData(i)))
        row.addWidget(self.scenario_combo, 1)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row.addWidget(browse)
        top.addRow("Scenario", row)
        mrow = QHBoxLayout()
        self.mechanism_combo = QComboBox(editable=True)
        self.mechanism_combo.addItems(mechanism_names())
        self.mechanism_combo.setToolTip("mechanism variant: a file in resources/mechanisms")
        self.mechanism_combo.currentTextChanged.connect(self._mechanism_changed)
        mrow.addWidget(self.mechanism_combo, 1)
        self.variant_label = QLabel("")
        mrow.addWidget(self.variant_label)
        top.addRow("Mechanism variant", mrow)
        self.source_label = QLabel(source_label)
        self.source_label.setWordWrap(True)
        top.addRow("", self.source_label)
        lay.addLayout(top)

        self.edits: dict[tuple, QLineEdit] = {}
        self.group_boxes: dict[str, QGroupBox] = {}
        grid = QGridLayout()
        col_of = {IC: (0, 0), CRAFT: (0, 1), AXIAL: (1, 1), LATERAL: (2, 1), FRICTION: (2, 0)}   # IC: rows 0-1
        for g in (IC, CRAFT, AXIAL, LATERAL, FRICTION):
            box = self.group_boxes[g] = QGroupBox(g)
            form = QGridLayout(box)
            form.setVerticalSpacing(2)
            for r, f in enumerate(x for x in FIELDS if x.group == g):
                e = QLineEdit()
                e.setObjectName(f"{f.table}.{f.key}" + (f"[{f.index}]" if f.index is not None else ""))
                e.setToolTip(f"{f.table}.{f.key}" + (f"[{f.index}]" if f.index is not None else "")
                             + f" in the {f.file} file; {f.range_text()}")
                e.setPlaceholderText(f.default)
                e.setMaximumWidth(120)
                e.textChanged.connect(self._edited)
                self.edits[f.ident] = e
                form.addWidget(QLabel(f.label), r, 0)
                form.addWidget(e, r, 1)
                form.addWidget(QLabel(f.unit), r, 2)
                rng = QLabel(f"[{f.lo:g}, {f.hi:g}]")
                rng.setStyleSheet(f"color: {style.DISABLED_NOTE};")
                form.addWidget(rng, r, 3)
            rr, cc = col_of[g]
            grid.addWidget(box, rr, cc, 2 if g == IC else 1, 1)
        lay.addLayout(grid)
        if self.branch_time is not None:
            self.group_boxes[IC].setEnabled(False)
            self.group_boxes[IC].setTitle(f"Initial conditions: the run's state at t = {self.branch_time:.4f} s")

        trow = QHBoxLayout()
        trow.addWidget(QLabel("Run to t ="))
        self.t_end_edit = QLineEdit()
        self.t_end_edit.setMaximumWidth(100)
        self.t_end_edit.textChanged.connect(self._edited)
        trow.addWidget(self.t_end_edit)
        trow.addWidget(QLabel("s"))
        trow.addStretch(1)
        lay.addLayout(trow)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay.addWidget(self.message)
        bb = self.buttons = QDialogButtonBox()
        self.run_button = bb.addButton("Run" if self.branch_time is None else "Run from here",
                                       QDialogButtonBox.AcceptRole)
        self.save_button = bb.addButton("Save as…", QDialogButtonBox.ActionRole)
        bb.addButton(QDialogButtonBox.Cancel)
        self.save_button.clicked.connect(self.save_dialog)
        bb.accepted.connect(self.accept)
        bb.rejected.connect(self.reject)
        lay.addWidget(bb)

    # ---- loading ----------------------------------------------------------------------------
    def load_scenario(self, path):
        """Fill the dialog from a scenario file and the mechanism it names."""
        path = Path(path)
        self.scenario_name, self.scenario_dir = path.stem, path.parent
        self.load_error = ""
        try:
            self.scenario_text = read_text(path, ScenarioError, "scenario file")
        except ScenarioError as exc:
            self.scenario_text = ""
            self.load_error = str(exc)
            self._set_message(self.load_error, False)
            return
        i = self.scenario_combo.findData(str(path))
        if i < 0:
            self.scenario_combo.addItem(path.name, str(path))
            i = self.scenario_combo.count() - 1
        self.scenario_combo.setCurrentIndex(i)
        mech = self._doc(self.scenario_text).get("mechanism", "")
        mech = mech if isinstance(mech, str) else ""
        self.mech_embedded = mech.endswith(".toml")
        mpath = (path.parent / mech) if self.mech_embedded else MECHANISMS / f"{mech}.toml"
        self.mech_name = mech
        try:
            self.mech_text = read_text(mpath, ScenarioError, "mechanism file") if mech and mpath.is_file() else ""
        except ScenarioError as exc:
            self.mech_text = ""
            self.load_error = str(exc)
        self.source_label.setText(str(path))
        self._fill()

    def load_parameters(self, text: str, label: str = ""):
        """Fill the dialog from a run's stored parameters (scenario and mechanism as the run used them)."""
        parts = split_parameters(text)
        self.load_error = ""
        name, self.scenario_text = parts.get("scenario", ("scenario.toml", text))
        self.scenario_name = Path(name).stem
        mname, self.mech_text = parts.get("mechanism", ("", ""))
        self.mech_name = Path(mname).stem if mname else ""
        self.mech_embedded = bool(self.mech_text)
        self.source_label.setText(label or "the run's stored parameters")
        self._fill()

    @staticmethod
    def _doc(text: str) -> dict:
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return {}

    def _fill(self):
        self._filling = True
        sdoc, mdoc = self._doc(self.scenario_text), self._doc(self.mech_text)
        self._loaded = {}
        for f in FIELDS:
            v = _get(sdoc if f.file == "scenario" else mdoc, f)
            self._loaded[f.ident] = v
            self.edits[f.ident].setText(_fmt(v))
        dur = sdoc.get("solver", {}).get("duration") if isinstance(sdoc.get("solver"), dict) else None
        self.t_end_edit.setText(_fmt(dur))
        self.mechanism_combo.blockSignals(True)
        self.mechanism_combo.setEditText(Path(self.mech_name).stem if self.mech_name.endswith(".toml")
                                         else self.mech_name)
        self.mechanism_combo.blockSignals(False)
        self.variant_label.setText(f"variant: {mdoc.get('variant', '?')}" if mdoc else "")
        self._filling = False
        self._edited()

    def _mechanism_changed(self, name: str):
        if self._filling:
            return
        p = MECHANISMS / f"{name}.toml"
        if p.is_file():
            self.mech_name, self.mech_text, self.mech_embedded = name, p.read_text(), False
            self._filling = True
            mdoc = self._doc(self.mech_text)
            for f in FIELDS:
                if f.file == "mechanism":
                    v = _get(mdoc, f)
                    self._loaded[f.ident] = v
                    self.edits[f.ident].setText(_fmt(v))
            self.variant_label.setText(f"variant: {mdoc.get('variant', '?')}")
            self._filling = False
        else:
            self.variant_label.setText("")
        self._edited()

    def _browse(self):
        path, _ = QFileDialog.getOpenFileName(self, "Scenario", str(self.scenario_dir), "Scenarios (*.toml)")
        if path:
            self.load_scenario(path)

    # ---- composing and validating -----------------------------------------------------------
    def field(self, table: str, key: str, index: int | None = None) -> QLineEdit:
        """The edit box of one field (by table, key and vector index)."""
        for f in FIELDS:
            if (f.table, f.key, f.index) == (table, key, index):
                return self.edits[f.ident]
        raise KeyError(f"{table}.{key}[{index}]")

    def _edited(self, *_):
        if not self._filling:
            self.run_button.setEnabled(False)
            self._timer.start()

    def _values(self) -> tuple[dict, list[str], list[tuple]]:
        """Parsed values {(file, table, key): number, list or None (left out)}, messages, fields with bad text."""
        parsed: dict[tuple, float | None] = {}
        errors, bad = [], []
        for f in FIELDS:
            text = self.edits[f.ident].text().strip()
            try:
                parsed[f.ident] = float(text) if text else None
            except ValueError:
                errors.append(f"{f.label}: {text!r} is not a number ({f.unit or 'dimensionless'})")
                bad.append(f.ident)
        vals: dict[tuple, object] = {}
        keys = dict.fromkeys((f.file, f.table, f.key) for f in FIELDS)
        for k in keys:
            fs = [f for f in FIELDS if (f.file, f.table, f.key) == k]
            if any(f.ident in bad for f in fs):
                continue
            if fs[0].index is None:
                vals[k] = parsed[fs[0].ident]
                continue
            comps = [parsed[f.ident] for f in fs]
            if all(c is None for c in comps):
                vals[k] = None
            elif any(c is None for c in comps):
                for f, c in zip(fs, comps):
                    if c is None:
                        errors.append(f"{f.label}: missing ({f.table}.{f.key} needs all {f.size} components)")
                        bad.append(f.ident)
            else:
                vals[k] = comps
        return vals, errors, bad

    def _loaded_value(self, k):
        fs = [f for f in FIELDS if (f.file, f.table, f.key) == k]
        if fs[0].index is None:
            return self._loaded.get(fs[0].ident)
        comps = [self._loaded.get(f.ident) for f in fs]
        return None if all(c is None for c in comps) else comps

    @staticmethod
    def _same(a, b) -> bool:
        if isinstance(a, list) and isinstance(b, list):
            return len(a) == len(b) and all(ScenarioDialog._same(x, y) for x, y in zip(a, b))
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
            return float(a) == float(b)
        return a == b

    def compose(self, stem: str) -> tuple[str, str | None, str | None]:
        """(scenario text, mechanism file name or None, mechanism text) for files saved as `stem`…"""
        vals, _, _ = self._values()
        stext, mtext = self.scenario_text, self.mech_text
        mech_changed = False
        for k, v in vals.items():
            if self._same(v, self._loaded_value(k)):
                continue
            file, table, key = k
            if file == "scenario":
                stext = set_value(stext, table, key, v)
            else:
                mtext = set_value(mtext, table, key, v)
                mech_changed = True
        mech = self.mechanism_combo.currentText().strip()
        if (mech_changed or self.mech_embedded) and mtext and mech in (self.mech_name, Path(self.mech_name).stem):
            mname = f"{stem}.mechanism.toml"
            return set_value(stext, "", "mechanism", mname), mname, mtext
        return set_value(stext, "", "mechanism", mech), None, None

    def t_end(self) -> float:
        try:
            return float(self.t_end_edit.text())
        except ValueError:
            return math.nan

    def write(self, folder, stem: str) -> Path:
        """Write the scenario (and its edited mechanism next to it) as folder/stem.toml; returns the scenario path."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        stext, mname, mtext = self.compose(stem)
        if mname:
            (folder / mname).write_text(mtext)
        path = folder / f"{stem}.toml"
        path.write_text(stext)
        return path

    def validate(self) -> bool:
        """Check the edited input with the solver's loader; show the verdict; enable Run only if valid."""
        self._timer.stop()
        vals, errors, bad = self._values()
        if self.load_error:
            errors.insert(0, self.load_error)
        self.model = None
        tmp = Path(self._tmp.name)
        if not errors:
            spath = self.write(tmp, self.scenario_name)
            try:
                self.model = load_model(spath)
            except ScenarioError as exc:
                errors.append(self._friendly(exc, tmp))
                bad += [f.ident for f in FIELDS if f"{f.table}.{f.key}" == exc.key
                        and (Path(exc.path).name.endswith(".mechanism.toml") == (f.file == "mechanism"))]
        if not errors:
            t = self.t_end()
            t0 = self.branch_time if self.branch_time is not None else 0.0
            if not (math.isfinite(t) and t > t0):
                errors.append(f"Run to t: {self.t_end_edit.text()!r} must be a number of seconds above {t0:g}")
        for ident, e in self.edits.items():
            e.setStyleSheet(BAD_FIELD if ident in bad else "")
        self.t_end_edit.setStyleSheet(BAD_FIELD if errors and errors[-1].startswith("Run to t") else "")
        self.bad_fields = bad
        self.error = "\n".join(errors)
        if errors:
            self._set_message("✗ " + "\n✗ ".join(errors), False)
        else:
            m = self.model
            self._set_message(f"✓ valid: {m.name}, variant {m.variant}, step {m.step:g} s, "
                              f"output every {m.output_step:g} s", True)
        self.run_button.setEnabled(not errors)
        return not errors

    def _friendly(self, exc: ScenarioError, tmp: Path) -> str:
        """The loader's message with the temporary file names replaced by what the user edits."""
        p = Path(exc.path)
        if p.parent == tmp:
            where = (f"mechanism {self.mech_name or '?'} (edited)" if p.name.endswith(".mechanism.toml")
                     else f"scenario {self.scenario_name}")
        else:
            where = p.name
        return f"{where}: {exc.key}: {exc.problem}"

    def _set_message(self, text: str, ok: bool):
        self.message.setText(text)
        self.message.setStyleSheet(OK_STYLE if ok else ERR_STYLE)

    # ---- saving and accepting ---------------------------------------------------------------
    def save_dialog(self):
        path, _ = QFileDialog.getSaveFileName(self, "Save scenario as", str(self.scenario_dir / f"{self.scenario_name}_edited.toml"),
                                              "Scenarios (*.toml)")
        if path:
            return self.save_as(path)
        return None

    def save_as(self, path) -> Path | None:
        """Save the edited scenario (and mechanism, if edited) if it is valid."""
        if not self.validate():
            return None
        path = Path(path)
        return self.write(path.parent, path.stem)

    def accept(self):
        if self.validate():   # nothing starts on bad input
            super().accept()
