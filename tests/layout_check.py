"""Layout checks for a shown widget tree: no two visible siblings overlap, no label, button or group-box title is
cut; and the same for texts a pane paints itself (its `label_rects()`)."""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QTextDocument
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QAbstractButton, QCheckBox, QGroupBox, QLabel, QRadioButton, QTableView,
                               QToolButton, QWidget)

TOLERANCE = 1.0   # px: rounding of text metrics


def _shown_children(w: QWidget) -> list[QWidget]:
    return [c for c in w.findChildren(QWidget, options=Qt.FindDirectChildrenOnly)
            if c.isVisible() and not c.isWindow() and c.width() > 0 and c.height() > 0]


def overlaps(root: QWidget, allowed=lambda a, b: False) -> list[str]:
    """Pairs of visible sibling widgets whose geometries intersect in their parent (`allowed(a, b)`: an intended
    overlay, e.g. a 1-px corner widget)."""
    out = []
    todo = [root]
    while todo:
        w = todo.pop()
        kids = _shown_children(w)
        for i, a in enumerate(kids):
            for b in kids[i + 1:]:
                if a.geometry().intersects(b.geometry()) and not (allowed(a, b) or allowed(b, a)):
                    out.append(f"{_name(a)} {a.geometry().getRect()} overlaps {_name(b)} {b.geometry().getRect()} "
                               f"in {_name(w)}")
        todo += _shown_children(w)
    return out


def _name(w: QWidget) -> str:
    text = ""
    if isinstance(w, (QLabel, QAbstractButton)):
        text = w.text()
    elif isinstance(w, QGroupBox):
        text = w.title()
    text = f" {text[:40]!r}" if text else ""
    return f"{type(w).__name__}{('#' + w.objectName()) if w.objectName() else ''}{text}"


def text_size(w: QLabel) -> tuple[float, float]:
    """The room a label's text needs at the label's width (wrapped labels) or on one line per line."""
    r = w.contentsRect()
    m = w.margin()
    width = r.width() - 2 * m - max(w.indent(), 0)
    rich = w.textFormat() == Qt.RichText or (w.textFormat() == Qt.AutoText and GuiQt.mightBeRichText(w.text()))
    if rich:
        doc = QTextDocument()
        doc.setDefaultFont(w.font())
        doc.setDocumentMargin(0)
        doc.setHtml(w.text())
        if w.wordWrap():
            doc.setTextWidth(width)
            return 0.0, doc.size().height()
        return doc.idealWidth(), doc.size().height()
    fm = QFontMetricsF(w.font())
    if w.wordWrap():
        return 0.0, fm.boundingRect(QRectF(0, 0, width, 1e6), int(Qt.TextWordWrap), w.text()).height()
    lines = w.text().split("\n")
    return max(fm.horizontalAdvance(s) for s in lines), fm.height() * len(lines)


def cut_texts(root: QWidget) -> list[str]:
    """Visible labels, buttons and group-box titles whose text does not fit their widget."""
    out = []
    widgets = [root] + root.findChildren(QWidget)
    for w in widgets:
        if not w.isVisible() or w.isWindow() and w is not root:
            continue
        if isinstance(w, QLabel) and w.text() and not w.pixmap():
            need_w, need_h = text_size(w)
            r = w.contentsRect().adjusted(w.margin(), w.margin(), -w.margin(), -w.margin())
            if need_w > r.width() + TOLERANCE or need_h > r.height() + TOLERANCE:
                out.append(f"{_name(w)} needs {need_w:.0f}x{need_h:.0f}, has {r.width()}x{r.height()}")
        elif isinstance(w, (QCheckBox, QRadioButton)) and w.text():
            if w.sizeHint().width() > w.width() + TOLERANCE:
                out.append(f"{_name(w)} needs {w.sizeHint().width()} wide, has {w.width()}")
        elif isinstance(w, QAbstractButton) and w.text():
            if isinstance(w, QToolButton) and w.toolButtonStyle() == Qt.ToolButtonIconOnly:
                continue
            need = QFontMetricsF(w.font()).horizontalAdvance(w.text().replace("&", ""))
            need += (w.iconSize().width() + 4) if not w.icon().isNull() else 0
            if need > w.contentsRect().width() + TOLERANCE:
                out.append(f"{_name(w)} needs {need:.0f} wide, has {w.contentsRect().width()}")
        elif isinstance(w, QGroupBox) and w.title():
            need = QFontMetricsF(w.font()).horizontalAdvance(w.title())
            if need > w.contentsRect().width() + TOLERANCE:
                out.append(f"{_name(w)} title needs {need:.0f} wide, has {w.contentsRect().width()}")
    return out


def table_problems(root: QWidget, rows: int = 200) -> list[str]:
    """Visible tables with a horizontal scroll bar, a column past the viewport's right edge, or a header or cell
    text (its first `rows` rows) wider than its column."""
    out = []
    for t in root.findChildren(QTableView):
        if not t.isVisible() or t.visibleRegion().isEmpty() or t.model() is None:
            continue
        m, hh = t.model(), t.horizontalHeader()
        if t.horizontalScrollBar().maximum() > 0:
            out.append(f"{_name(t)}: a horizontal scroll bar (columns {hh.length()} px, viewport "
                       f"{t.viewport().width()} px)")
        hfm = QFontMetricsF(hh.font())
        for c in range(m.columnCount()):
            if t.isColumnHidden(c):
                continue
            x, wc = hh.sectionViewportPosition(c), t.columnWidth(c)
            head = str(m.headerData(c, Qt.Horizontal) or "")
            if x + wc > t.viewport().width() + TOLERANCE:
                out.append(f"{_name(t)}: column {head!r} ends at {x + wc} px, past the viewport's {t.viewport().width()}")
            need = max(hfm.horizontalAdvance(s) for s in head.split("\n")) + 4 if head else 0
            if t.isSortingEnabled() and hh.isSortIndicatorShown() and hh.sortIndicatorSection() == c:
                need += 24                                  # the sort indicator beside the centred text
            if need > wc + TOLERANCE:
                out.append(f"{_name(t)}: header {head!r} needs {need:.0f} px, column {wc}")
            for r in range(min(m.rowCount(), rows)):
                ix = m.index(r, c)
                text = ix.data()
                if text is None or text == "":
                    continue
                f = ix.data(Qt.FontRole)
                fm = QFontMetricsF(f if isinstance(f, QFont) else t.font())
                need = fm.horizontalAdvance(str(text)) + 6            # the cell's text margins
                if need > wc + TOLERANCE:
                    out.append(f"{_name(t)}: cell {text!r} ({head!r}) needs {need:.0f} px, column {wc}")
                    break
    return out


def painted_problems(items) -> list[str]:
    """Problems of painted texts: `items` are (shown text, full text, rect, font, flags, area, full text reachable);
    each shown text fits its rect and lies in its area, none intersect, a cut one has its full text reachable."""
    out = []
    for text, full, rect, font, flags, area, reachable in items:
        need = QFontMetricsF(font).boundingRect(QRectF(rect.left(), rect.top(), rect.width(), 1e6), flags, text)
        if need.width() > rect.width() + TOLERANCE or need.height() > rect.height() + TOLERANCE:
            out.append(f"{text!r} needs {need.width():.0f}x{need.height():.0f}, has "
                       f"{rect.width():.0f}x{rect.height():.0f}")
        if area is not None and not area.adjusted(-TOLERANCE, -TOLERANCE, TOLERANCE, TOLERANCE).contains(rect):
            out.append(f"{text!r} at {rect.getRect()} is outside {area.getRect()}")
        if text != full and not reachable:
            out.append(f"{text!r} is cut from {full!r} and the full text is nowhere to be seen")
        if "…" in text and text == full:
            out.append(f"{text!r} holds an ellipsis")
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            if a[2].intersects(b[2]):
                out.append(f"{a[0]!r} {a[2].getRect()} overlaps {b[0]!r} {b[2].getRect()}")
    return out


def stacking_marker(a: QWidget, b: QWidget) -> bool:
    """The scene's 1-px transparent sibling over the VTK view's corner (viewer/vtk_view.py: it keeps the view
    painted in stacking order); it shows nothing and takes no mouse events."""
    return (b.testAttribute(Qt.WA_TransparentForMouseEvents) and b.width() == 1 and b.height() == 1
            and a.geometry().contains(b.geometry()))


def widget_problems(w: QWidget) -> list[str]:
    return overlaps(w, stacking_marker) + cut_texts(w) + table_problems(w)


def painted(pane) -> list[str]:
    """Problems of the texts a pane paints itself (its label_rects); a shortened one must have its whole text as the
    tooltip at its place (full_text_at) where the pane has tooltips."""
    reach = getattr(pane, "full_text_at", None)
    items = [t + (bool(reach and reach(t[2].center()) == t[1]),) for t in pane.label_rects()]
    assert items, f"{type(pane).__name__} reports no painted texts"
    return painted_problems(items)
