"""Choosing the plotted variables: a searchable tree of a run's channels by group, with check boxes."""
from __future__ import annotations

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QLineEdit, QTreeWidget, QTreeWidgetItem,
                               QVBoxLayout)

from solver.runfile import RunFile


class VariableChooser(QDialog):
    """Dialog listing channels under their groups; checked channels are plotted in the bottom pane."""

    chosen = Signal(list)

    def __init__(self, run: RunFile, plotted: list[str], parent=None):
        super().__init__(parent)
        self.setWindowTitle("Plotted variables")
        self.resize(460, 560)
        self.run = run
        self._order = list(plotted)
        v = QVBoxLayout(self)
        self.search = QLineEdit(placeholderText="search channels (name, label, unit)…", clearButtonEnabled=True)
        self.search.textChanged.connect(self.filter)
        v.addWidget(self.search)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["channel", "unit", "label"])
        self.tree.setColumnWidth(0, 190)
        self.tree.setColumnWidth(1, 50)
        self.items: dict[str, QTreeWidgetItem] = {}
        for group, names in sorted(run.groups().items()):
            g = QTreeWidgetItem(self.tree, [group])
            g.setFlags(g.flags() | Qt.ItemIsAutoTristate | Qt.ItemIsUserCheckable)
            for n in sorted(names):
                info = run.channels[n]
                it = QTreeWidgetItem(g, [n, info.unit, info.label])
                it.setFlags(it.flags() | Qt.ItemIsUserCheckable)
                it.setCheckState(0, Qt.Checked if n in plotted else Qt.Unchecked)
                self.items[n] = it
            g.setExpanded(any(n in plotted for n in names))
        v.addWidget(self.tree, 1)
        bb = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        bb.accepted.connect(self.accept)
        bb.rejected.connect(self.reject)
        v.addWidget(bb)

    def filter(self, text: str):
        """Show only channels whose name, unit or label contains the text; expand groups with hits."""
        text = text.strip().lower()
        for i in range(self.tree.topLevelItemCount()):
            g = self.tree.topLevelItem(i)
            any_shown = False
            for j in range(g.childCount()):
                it = g.child(j)
                hit = not text or any(text in it.text(c).lower() for c in range(3))
                it.setHidden(not hit)
                any_shown |= hit
            g.setHidden(not any_shown)
            if text:
                g.setExpanded(any_shown)

    def set_checked(self, names):
        for n, it in self.items.items():
            it.setCheckState(0, Qt.Checked if n in names else Qt.Unchecked)

    def selected(self) -> list[str]:
        """Checked channels: those plotted before keep their order, new ones follow."""
        on = [n for n, it in self.items.items() if it.checkState(0) == Qt.Checked]
        return [n for n in self._order if n in on] + [n for n in on if n not in self._order]

    def accept(self):
        self.chosen.emit(self.selected())
        super().accept()
