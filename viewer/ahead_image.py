"""Drawings made ahead as images: a plot item draws what the next scroll step will show into an image during the
frames before it, and that step's paint only blends the image. The pixels are the ones a direct drawing gives:
the same transform (up to whole pixels) and clip, and content whose pixels are each drawn once or opaque."""
from __future__ import annotations

from collections import OrderedDict
from typing import Callable

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import QPoint, QRectF
from PySide6.QtGui import QGuiApplication, QImage, QPainter, QTransform


def whole_px_shift(a: QTransform, b: QTransform) -> QPoint | None:
    """The whole-pixel translation taking transform a to b (within float noise), None if they differ otherwise."""
    la = (a.m11(), a.m12(), a.m21(), a.m22(), a.m13(), a.m23(), a.m33())
    lb = (b.m11(), b.m12(), b.m21(), b.m22(), b.m13(), b.m23(), b.m33())
    if any(abs(x - y) > 1e-12 * max(1.0, abs(x)) for x, y in zip(la, lb)):
        return None
    dx, dy = b.dx() - a.dx(), b.dy() - a.dy()
    if abs(dx - round(dx)) > 1e-7 or abs(dy - round(dy)) > 1e-7:
        return None
    return QPoint(round(dx), round(dy))


class AheadImages:
    """Images of an item's content (a path, a picture) drawn ahead for a painter transform, the last few kept."""

    def __init__(self, keep: int = 3):
        self.keep = keep
        self._images: OrderedDict = OrderedDict()   # id(content) -> (content, transform, top-left, image)

    def clear(self):
        self._images.clear()

    def has(self, content, transform: QTransform) -> bool:
        got = self._images.get(id(content))
        return got is not None and got[0] is content and whole_px_shift(got[1], transform) == QPoint(0, 0)

    def holds_id(self, key: int) -> bool:
        """Whether an image is kept for the content of this id."""
        return key in self._images

    def holds(self, content) -> bool:
        """Whether an image of `content` is kept (for any transform)."""
        got = self._images.get(id(content))
        return got is not None and got[0] is content

    def make(self, content, transform: QTransform, area: QRectF, draw: Callable[[QPainter], None],
             clip: QRectF | None = None) -> bool:
        """Draw `content` with `draw(painter)` under the item-to-viewport `transform`, clipped to `clip` (viewport
        coordinates: e.g. the view box, which clips its items) into an image of `area`; True if drawn now."""
        if self.has(content, transform):
            return False
        rect = area.toAlignedRect().adjusted(-2, -2, 2, 2)
        if rect.isEmpty():
            return False
        img = None
        if len(self._images) >= self.keep:     # the oldest goes: its buffer is reused when of the same size
            old = self._images.popitem(last=False)[1][3]
            img = old if old.size() == rect.size() else None
        if img is None:
            img = QImage(rect.size(), QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(0)
        screen = QGuiApplication.primaryScreen()
        if screen is not None:   # (text in points: drawn at the screen's dpi, as on the view; a QImage has 72)
            img.setDotsPerMeterX(round(screen.logicalDotsPerInchX() / 0.0254))
            img.setDotsPerMeterY(round(screen.logicalDotsPerInchY() / 0.0254))
        q = QPainter(img)
        try:
            q.translate(-rect.x(), -rect.y())
            if clip is not None:
                q.setClipRect(clip)
            q.setTransform(transform * QTransform.fromTranslate(-rect.x(), -rect.y()))
            draw(q)
        finally:
            q.end()
        self._images[id(content)] = (content, QTransform(transform), rect.topLeft(), img)
        self._images.move_to_end(id(content))
        while len(self._images) > self.keep:
            self._images.popitem(last=False)
        return True

    def show(self, p: QPainter, content) -> bool:
        """Paint the image of `content` if one was drawn for p's transform (or one shifted by whole pixels, as an
        item cache paints); False (nothing painted) otherwise."""
        got = self._images.get(id(content))
        at = whole_px_shift(got[1], p.worldTransform()) if got is not None and got[0] is content else None
        if at is None:
            return False
        p.save()
        p.resetTransform()
        p.drawImage(got[2] + at, got[3])
        p.restore()
        return True


def sole_view(item):
    """The one QGraphicsView showing `item`'s scene (None without a scene or with several views)."""
    scene = item.scene()
    views = scene.views() if scene is not None else []
    return views[0] if len(views) == 1 else None


def view_box_transform(item, vb, x_range, y_range, view) -> tuple[QTransform, QRectF] | None:
    """(item-to-viewport transform, view box in the viewport) once `vb` shows x_range and y_range (None: the y
    range it has): pyqtgraph's ViewBox.updateMatrix for that range."""
    if vb is None or vb.state["xInverted"] or vb.width() <= 0:
        return None
    x0, x1 = x_range
    y0, y1 = vb.viewRange()[1] if y_range is None else y_range
    vr = QRectF(x0, y0, x1 - x0, y1 - y0)
    bounds = vb.rect()
    if vr.width() == 0 or vr.height() == 0:
        return None
    m = QTransform()
    m.translate(bounds.center().x(), bounds.center().y())
    m.scale(bounds.width() / vr.width(), bounds.height() / vr.height() * (1 if vb.state["yInverted"] else -1))
    m.translate(-vr.center().x(), -vr.center().y())
    inner, ok = item.itemTransform(vb.childGroup)
    if not ok:
        return None
    vt = view.viewportTransform()
    return inner * m * vb.sceneTransform() * vt, vt.mapRect(vb.sceneBoundingRect())
