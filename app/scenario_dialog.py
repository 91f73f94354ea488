"""Scenario dialog: pick a scenario and mechanism variant, edit any key of the scenario, its mechanism and its
geometry (one page per schema group, built from the parameter schema: units, ranges, doc and source shown), save, run.

Every check is the solver's own (`solver.scenario.load_model` on the edited files), so the dialog and
`dockmnemo run` accept and refuse the same input; the dialog only adds "is this text a number".
"""
from __future__ import annotations

import math
import re
import tempfile
import tomllib
from dataclasses import dataclass

import tomlkit
from pathlib import Path

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QGridLayout,
                               QGroupBox, QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem, QPushButton,
                               QPlainTextEdit, QScrollArea, QStackedWidget, QVBoxLayout, QWidget)

from app.toml_edit import set_value
from solver import mechanisms, schema
from solver.errors import read_text
from solver.scenario import GEOMETRY, MECHANISMS, ScenarioError, load_model
from solver.schema import Param
from viewer import style

SCENARIOS = MECHANISMS.parent / "scenarios"


def _ok_style() -> str:
    return f"color: {style.OK_NOTE};"


def _err_style() -> str:
    return f"color: {style.ERROR_FIELD}; font-weight: bold;"


def _bad_field() -> str:
    return f"QLineEdit {{ border: 2px solid {style.ERROR_FIELD}; }}"


@dataclass(frozen=True)
class Field:
    """One edited value: a schema Param (a vector's component when `index` is set), where it lives, how it is shown."""
    param: Param
    index: int | None = None     # component of a vector value, None for the whole value

    @property
    def file(self) -> str:
        return self.param.file

    @property
    def table(self) -> str:
        return self.param.section

    @property
    def key(self) -> str:
        return self.param.name

    @property
    def label(self) -> str:
        return self.param.component_label(self.index)

    @property
    def unit(self) -> str:
        return self.param.unit.replace("*", "·")

    @property
    def group(self) -> str:
        return self.param.group

    @property
    def size(self) -> int:
        return self.param.size

    @property
    def literal(self) -> bool:
        """Edited as a TOML value (a list, a table, a 3x3 tensor, true/false) rather than one number or a text."""
        return self.param.kind in ("table", "inertia", "bool") or (self.param.kind == "vector" and self.index is None)

    @property
    def text_kind(self) -> bool:
        return self.param.kind in ("string", "choice")

    @property
    def ident(self) -> tuple:
        return (self.file, self.table, self.key, self.index)

    @property
    def name(self) -> str:
        return f"{self.param.key}" + (f"[{self.index}]" if self.index is not None else "")

    def range_text(self) -> str:
        return self.param.range_text()

    def placeholder(self) -> str:
        if self.file == "geometry":
            return "geometry file"
        if self.param.default is None and not self.param.required:
            return "mechanism value" if self.table == "overrides" else "left out"
        d = self.param.default
        if isinstance(d, list) and self.index is not None:
            return f"{d[self.index]:g}"
        return self.param.default_text() if d is not None else ""

    def tooltip(self) -> str:
        p = self.param
        where = (f"{self.name} in the {self.file} file" if self.file != "geometry" else
                 f"{self.name} in the geometry file; an edit goes to the mechanism's [geometry_changes]")
        rng = self.range_text()
        return "\n".join(x for x in (where, p.doc, f"range {rng} {p.unit}".rstrip() if rng else "",
                                      f"check: {p.check}" if p.check else "", f"default: {p.default_text()}",
                                      f"source: {p.source}") if x)


def schema_fields(mechanism_type: str = "probe_cone") -> list[Field]:
    """Every key of a scenario, its mechanism and geometry as dialog fields (vectors of known length by component);
    the scenario's `mechanism` is the mechanism combo box, [geometry_changes] the geometry fields."""
    out = []
    for p in schema.params(None, mechanism_type):
        if p.key == "mechanism" and p.file == "scenario" or p.kind == "changes":
            continue
        if p.kind == "vector" and p.size:
            out += [Field(p, i) for i in range(p.size)]
        else:
            out.append(Field(p))
    return out


FIELDS: list[Field] = schema_fields()
IC = "Initial conditions"


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


def scenario_files() -> list[Path]:
    """The bundled scenarios: the probe-cone's, then each other mechanism type's (those without a parameter schema
    are shown read-only and run as they are)."""
    dirs = [SCENARIOS] + [d for d in (mechanisms.mechanism_type(n).scenarios_dir for n in mechanisms.names())
                          if d is not None and Path(d) != SCENARIOS]
    return [p for d in dict.fromkeys(dirs) for p in sorted(Path(d).glob("*.toml"))]


def has_schema(mechanism_type: str) -> bool:
    """Whether the dialog can edit a type's keys one by one (its parameter schema, solver.schema)."""
    return mechanism_type in mechanisms.BUILT_IN_TYPES


READ_ONLY = "keys (read-only)"   # the one page of a type without a parameter schema


def mechanism_names() -> list[str]:
    return sorted(p.stem for p in MECHANISMS.glob("*.toml"))


def _get(doc: dict, f: Field):
    v = doc
    for part in f.table.split(".") if f.table else []:
        v = v.get(part, {}) if isinstance(v, dict) else {}
    v = v.get(f.key) if isinstance(v, dict) else None
    if f.index is not None:
        v = v[f.index] if isinstance(v, list) and len(v) > f.index else None
    return v


def _fmt(v, literal: bool = False) -> str:
    if v is None:
        return ""
    if literal:
        return tomlkit.item(v).as_string() if not isinstance(v, float) else _fmt(v)
    if isinstance(v, (list, dict)):
        return ""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return f"{v:g}" if math.isfinite(v) else str(v)
    return str(v)


T_END_KEY = "new_run/t_end"   # QSettings: the "Run to t" the user typed last (a new run keeps it)

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
        self.mechanism_type = "probe_cone"     # the pages' schema: the loaded scenario's mechanism type
        self.fields: list[Field] = FIELDS
        self._timer = QTimer(self, singleShot=True, interval=150, timeout=self.validate)
        self._filling = False
        self.settings = getattr(parent, "settings", None)   # the window's QSettings: the last "Run to t" typed
        self._t_end_typed = ""    # a "Run to t" the user typed (or typed last time): kept over a change of scenario
        if t_end is None and branch_time is None and self.settings is not None:
            self._t_end_typed = str(self.settings.value(T_END_KEY, "") or "")
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
        for p in scenario_files():
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

        self.group_list = QListWidget()
        self.group_list.setObjectName("groups")
        self.pages = QStackedWidget()
        self.group_list.currentItemChanged.connect(
            lambda item, _=None: item is not None and item.data(Qt.UserRole) and self.show_group(item.data(Qt.UserRole)))
        mid = QHBoxLayout()
        mid.addWidget(self.group_list)
        mid.addWidget(self.pages, 1)
        lay.addLayout(mid, 1)
        self._build_pages()
        trow = QHBoxLayout()
        trow.addWidget(QLabel("Run to t ="))
        self.t_end_edit = QLineEdit()
        self.t_end_edit.setMaximumWidth(100)
        self.t_end_edit.textChanged.connect(self._edited)
        self.t_end_edit.textEdited.connect(self._t_end_edited)
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

    def _build_pages(self):
        """One page per schema group of `self.fields`, listed under a heading per file (the old pages removed)."""
        self.group_list.blockSignals(True)
        self.group_list.clear()
        while self.pages.count():
            w = self.pages.widget(0)
            self.pages.removeWidget(w)
            w.deleteLater()
        self.edits: dict[tuple, QLineEdit] = {}
        self.group_boxes: dict[str, QGroupBox] = {}
        self._page_of: dict[str, int] = {}
        file_of_group = {}
        for f in self.fields:
            file_of_group.setdefault(f.group, f.file)
        last_file = None
        for g in dict.fromkeys(f.group for f in self.fields):
            file = file_of_group[g]
            if file != last_file:                      # a heading per file: scenario, mechanism, geometry
                head = QListWidgetItem(f"{file} file")
                head.setFlags(Qt.NoItemFlags)
                font = head.font()
                font.setBold(True)
                head.setFont(font)
                self.group_list.addItem(head)
                last_file = file
            item = QListWidgetItem("  " + g)
            item.setData(Qt.UserRole, g)
            self.group_list.addItem(item)
            box = self.group_boxes[g] = QGroupBox(g)
            form = QGridLayout(box)
            form.setVerticalSpacing(2)
            fields = [x for x in self.fields if x.group == g]
            for r, f in enumerate(fields):
                e = QLineEdit()
                e.setObjectName(f.name)
                e.setToolTip(f.tooltip())
                e.setPlaceholderText(f.placeholder())
                e.setMinimumWidth(340 if f.literal or f.text_kind else 110)
                e.setMaximumWidth(560 if f.literal or f.text_kind else 130)
                e.textChanged.connect(self._edited)
                self.edits[f.ident] = e
                lab = QLabel(f.label)
                lab.setToolTip(f.tooltip())
                form.addWidget(lab, r, 0)
                form.addWidget(e, r, 1)
                form.addWidget(QLabel(f.unit), r, 2)
                rng = QLabel(f.range_text())
                rng.setStyleSheet(f"color: {style.DISABLED_NOTE};")
                form.addWidget(rng, r, 3)
            form.setColumnStretch(4, 1)
            form.setRowStretch(len(fields), 1)
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setWidget(box)
            self._page_of[g] = self.pages.addWidget(scroll)
        if not has_schema(self.mechanism_type):
            self._read_only_page()
        self.group_list.setFixedWidth(self.group_list.sizeHintForColumn(0) + 2 * self.group_list.frameWidth() + 24)
        self.group_list.blockSignals(False)
        self.show_group(IC if IC in self._page_of else next(iter(self._page_of)))
        if self.branch_time is not None:
            self.group_boxes[IC].setEnabled(False)
            self.group_boxes[IC].setTitle(f"Initial conditions: the run's state at t = {self.branch_time:.4f} s")

    def _read_only_page(self):
        """A type without a parameter schema: its scenario and mechanism text shown read-only, and where its keys
        are described (the Run button runs the files as they are)."""
        item = QListWidgetItem("  " + READ_ONLY)
        item.setData(Qt.UserRole, READ_ONLY)
        self.group_list.addItem(item)
        page = QWidget()
        lay = QVBoxLayout(page)
        doc = Path(__file__).resolve().parents[1] / "docs" / f"{self.mechanism_type}.md"
        where = f"docs/{doc.name}" if doc.is_file() else "the type's docs"
        self.read_only_note = QLabel(f"Mechanism type {self.mechanism_type!r} has no parameter schema: its keys are "
                                     f"described in {where}. The files are shown read-only and run as they are; "
                                     "to change a key, edit a copy of the scenario and open it with Browse….")
        self.read_only_note.setWordWrap(True)
        lay.addWidget(self.read_only_note)
        self.read_only_text = QPlainTextEdit()
        self.read_only_text.setReadOnly(True)
        self.read_only_text.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.read_only_text.setObjectName("read_only_text")
        lay.addWidget(self.read_only_text, 1)
        self._page_of[READ_ONLY] = self.pages.addWidget(page)

    def _set_mechanism_type(self, name: str):
        """Pages for the schema of mechanism type `name` (rebuilt when it is not the shown one)."""
        name = name if name in mechanisms.names() else "probe_cone"
        self.mechanism_combo.setEnabled(name == "probe_cone")   # (its variants are the probe-cone's)
        if name == self.mechanism_type:
            return
        self.mechanism_type, self.fields = name, schema_fields(name) if has_schema(name) else []
        self._build_pages()

    def _loaded_type(self) -> str:
        """The mechanism type the loaded mechanism text declares (none: the probe-cone)."""
        t = self._doc(self.mech_text).get("mechanism_type", "probe_cone")
        return t if isinstance(t, str) else "probe_cone"

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
        self._set_mechanism_type(self._loaded_type())
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
        self.scenario_combo.setCurrentIndex(-1)     # (no bundled file: the run's own copy)
        self.scenario_combo.setPlaceholderText(f"{self.scenario_name} (as the run stored it)")
        self._set_mechanism_type(self._loaded_type())
        self._fill()

    @staticmethod
    def _doc(text: str) -> dict:
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return {}

    def _geometry_doc(self, mdoc: dict) -> dict:
        """The geometry the mechanism names, with the mechanism's [geometry_changes] applied (as the loader does)."""
        name = mdoc.get("geometry")
        path = GEOMETRY / f"{name}.toml" if isinstance(name, str) and name else None
        gdoc = self._doc(path.read_text(encoding="utf-8")) if path is not None and path.is_file() else {}

        def apply(ch, g):
            for k, v in ch.items():
                if isinstance(v, dict) and isinstance(g.get(k), dict):
                    apply(v, g[k])
                elif not isinstance(v, dict):
                    g[k] = v
        ch = mdoc.get("geometry_changes")
        if isinstance(ch, dict):
            apply(ch, gdoc)
        return gdoc

    def _fill_fields(self, files, docs: dict):
        for f in self.fields:
            if f.file in files:
                v = _get(docs[f.file], f)
                self._loaded[f.ident] = v
                self.edits[f.ident].setText(_fmt(v, f.literal))

    def _fill(self):
        self._filling = True
        sdoc, mdoc = self._doc(self.scenario_text), self._doc(self.mech_text)
        self._loaded = {}
        self._fill_fields(("scenario", "mechanism", "geometry"), {"scenario": sdoc, "mechanism": mdoc, "geometry": self._geometry_doc(mdoc)})
        dur = sdoc.get("solver", {}).get("duration") if isinstance(sdoc.get("solver"), dict) else None
        if not has_schema(self.mechanism_type):
            dur = sdoc.get("duration") if dur is None else dur      # (such types keep it at the top level)
            self.read_only_text.setPlainText(f"# scenario {self.scenario_name}\n{self.scenario_text}\n"
                                             f"# mechanism {self.mech_name}\n{self.mech_text}")
        self.t_end_edit.setText(self._t_end_typed or _fmt(dur))   # the user's choice stays; else the scenario's
        self.mechanism_combo.blockSignals(True)
        self.mechanism_combo.setEditText(Path(self.mech_name).stem if self.mech_name.endswith(".toml")
                                         else self.mech_name)
        self.mechanism_combo.blockSignals(False)
        self.variant_label.setText(f"variant: {mdoc['variant']}" if "variant" in mdoc else
                                   f"type: {self.mechanism_type}" if mdoc else "")
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
            self._fill_fields(("mechanism", "geometry"), {"mechanism": mdoc, "geometry": self._geometry_doc(mdoc)})
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
    def show_group(self, group: str):
        """Show one group's page and select it in the list."""
        self.pages.setCurrentIndex(self._page_of[group])
        for i in range(self.group_list.count()):
            if self.group_list.item(i).data(Qt.UserRole) == group:
                self.group_list.blockSignals(True)
                self.group_list.setCurrentRow(i)
                self.group_list.blockSignals(False)

    def field(self, table: str, key: str, index: int | None = None, file: str | None = None) -> QLineEdit:
        """The edit box of one field (by table, key and vector index; `file` where both have it), its page shown."""
        for f in self.fields:
            if (f.table, f.key, f.index) == (table, key, index) and file in (None, f.file):
                self.show_group(f.group)
                return self.edits[f.ident]
        raise KeyError(f"{table}.{key}[{index}]")

    def _t_end_edited(self, text: str):
        self._t_end_typed = text.strip()

    def _edited(self, *_):
        if not self._filling:
            self.run_button.setEnabled(False)
            self._timer.start()

    def _values(self) -> tuple[dict, list[str], list[tuple]]:
        """Parsed values {(file, table, key): number, list or None (left out)}, messages, fields with bad text."""
        parsed: dict[tuple, float | None] = {}
        errors, bad = [], []
        for f in self.fields:
            text = self.edits[f.ident].text().strip()
            if not text or f.text_kind:
                parsed[f.ident] = text or None
                continue
            try:
                parsed[f.ident] = tomllib.loads(f"v = {text}")["v"] if f.literal else float(text)
            except (ValueError, tomllib.TOMLDecodeError):
                what = "a TOML value (a list [..], true or false)" if f.literal else \
                    f"a number ({f.unit or 'dimensionless'})"
                errors.append(f"{f.label}: {text!r} is not {what}")
                bad.append(f.ident)
        vals: dict[tuple, object] = {}
        keys = dict.fromkeys((f.file, f.table, f.key) for f in self.fields)
        for k in keys:
            fs = [f for f in self.fields if (f.file, f.table, f.key) == k]
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
        fs = [f for f in self.fields if (f.file, f.table, f.key) == k]
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
            elif file == "mechanism":
                mtext = set_value(mtext, table, key, v)
                mech_changed = True
            elif v is not None:             # a geometry value: the mechanism changes it ([geometry_changes])
                mtext = set_value(mtext, f"geometry_changes.{table}", key, v)
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
                bad += [f.ident for f in self.fields if f.param.key == exc.key and f.file == self._file_of(exc, tmp)]
        if not errors:
            t = self.t_end()
            t0 = self.branch_time if self.branch_time is not None else 0.0
            if not (math.isfinite(t) and t > t0):
                errors.append(f"Run to t: {self.t_end_edit.text()!r} must be a number of seconds above {t0:g}")
        for ident, e in self.edits.items():
            e.setStyleSheet(_bad_field() if ident in bad else "")
        self.t_end_edit.setStyleSheet(_bad_field() if errors and errors[-1].startswith("Run to t") else "")
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

    @staticmethod
    def _file_of(exc: ScenarioError, tmp: Path) -> str:
        """Which edited file a loader error names: scenario, mechanism or geometry."""
        p = Path(exc.path)
        if p.parent != tmp:
            return "mechanism" if p.parent == MECHANISMS else "geometry" if p.parent == GEOMETRY else "scenario"
        return "mechanism" if p.name.endswith(".mechanism.toml") else "scenario"

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
        self.message.setStyleSheet(_ok_style() if ok else _err_style())

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
            if self.settings is not None and self.branch_time is None and self._t_end_typed:
                self.settings.setValue(T_END_KEY, self._t_end_typed)   # the next new run starts from it
            super().accept()
