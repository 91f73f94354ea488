"""Choosing the plotted variables: a searchable tree of a run's channels by group, with check boxes, the plot each
checked channel is drawn in (channels given the same plot number share a plot), and channels dragged from the tree
onto a plot."""
from __future__ import annotations

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QDialogButtonBox, QLabel, QLineEdit, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout)

from solver.runfile import RunFile


CHANNEL_MIME = "application/x-dockmnemo-channel"   # (viewer.plots.pane accepts it dropped on a plot)
PLOT_COLUMN = 3


class ChannelTree(QTreeWidget):
    """The channel tree; a dragged channel carries its name (CHANNEL_MIME and plain text)."""

    def mimeData(self, items):
        names = [it.text(0) for it in items if it.parent() is not None]
        md = QMimeData()
        if names:
            md.setData(CHANNEL_MIME, names[0].encode())
            md.setText(names[0])
        return md


class VariableChooser(QDialog):
    """Dialog listing channels under their groups; checked channels are plotted in the bottom pane, those with the
    same number in the "plot" column in one plot."""

    chosen = Signal(list)         # the checked channels
    chosenGroups = Signal(list)   # ... as plots: [[channel, …], …]

    def __init__(self, run: RunFile, plotted: list[str], parent=None, groups: list[list[str]] | None = None):
        super().__init__(parent)
        self.setWindowTitle("Plotted variables")
        self.resize(520, 560)
        self.run = run
        self._order = list(plotted)
        plot_of = {n: k + 1 for k, g in enumerate(groups or [[n] for n in plotted]) for n in g}
        v = QVBoxLayout(self)
        self.search = QLineEdit(placeholderText="search channels (name, label, unit)…", clearButtonEnabled=True)
        self.search.textChanged.connect(self.filter)
        v.addWidget(self.search)
        v.addWidget(QLabel("Same number in \"plot\": one plot, one legend. Or drag a channel onto a plot."))
        self.tree = ChannelTree()
        self.tree.setHeaderLabels(["channel", "unit", "label", "plot"])
        self.tree.setColumnWidth(0, 190)
        self.tree.setColumnWidth(1, 50)
        self.tree.setColumnWidth(2, 180)
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QAbstractItemView.DragOnly)
        self.tree.setEditTriggers(QAbstractItemView.DoubleClicked | QAbstractItemView.EditKeyPressed)
        self.tree.itemDoubleClicked.connect(self._edit_plot)
        self.items: dict[str, QTreeWidgetItem] = {}
        for group, names in sorted(run.groups().items()):
            g = QTreeWidgetItem(self.tree, [group])
            g.setFlags(g.flags() | Qt.ItemIsAutoTristate | Qt.ItemIsUserCheckable)
            for n in sorted(names):
                info = run.channels[n]
                it = QTreeWidgetItem(g, [n, info.unit, info.label, str(plot_of.get(n, ""))])
                it.setFlags(it.flags() | Qt.ItemIsUserCheckable | Qt.ItemIsDragEnabled)
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

    def _edit_plot(self, item: QTreeWidgetItem, column: int):
        if column == PLOT_COLUMN and item.parent() is not None:
            item.setFlags(item.flags() | Qt.ItemIsEditable)
            self.tree.editItem(item, PLOT_COLUMN)
            item.setFlags(item.flags() & ~Qt.ItemIsEditable)

    def set_plot(self, name: str, number: int | None):
        """Put a channel in plot `number` (1, 2, …; None: a plot of its own)."""
        self.items[name].setText(PLOT_COLUMN, "" if number is None else str(number))

    def selected_groups(self) -> list[list[str]]:
        """The checked channels as plots: those with the same plot number together (in plot number order), one
        plot for each channel without a number (where it comes in `selected`)."""
        keyed: dict = {}
        for k, n in enumerate(self.selected()):
            text = self.items[n].text(PLOT_COLUMN).strip()
            key = (int(text), 0) if text.isdigit() else (None, k)
            keyed.setdefault(key, []).append(n)
        first = {key: self.selected().index(names[0]) for key, names in keyed.items()}
        order = sorted(keyed, key=lambda key: (key[0] if key[0] is not None else 1e9 + first[key], first[key]))
        return [keyed[key] for key in order]

    def accept(self):
        self.chosen.emit(self.selected())
        self.chosenGroups.emit(self.selected_groups())
        super().accept()
