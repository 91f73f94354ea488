"""Title cards and burned-in time for exported clips, painted with QPainter into RGB arrays."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter

from viewer import style

BACKGROUND = QColor(*style.CARD_BACKGROUND)
TEXT = QColor(*style.CARD_TEXT)
ACCENT = QColor(*style.CARD_ACCENT)


def qimage_to_rgb(img: QImage) -> np.ndarray:
    """(H, W, 3) uint8 copy of a QImage."""
    img = img.convertToFormat(QImage.Format_RGB888)
    w, h, bpl = img.width(), img.height(), img.bytesPerLine()
    buf = np.frombuffer(img.constBits(), np.uint8, count=bpl * h).reshape(h, bpl)
    return buf[:, : 3 * w].reshape(h, w, 3).copy()


def rgb_to_qimage(rgb: np.ndarray) -> QImage:
    h, w = rgb.shape[:2]
    rgb = np.ascontiguousarray(rgb)
    return QImage(rgb.data, w, h, 3 * w, QImage.Format_RGB888).copy()


def title_card(size: tuple[int, int], title: str, subtitle: str = "", footer: str = "") -> np.ndarray:
    """A dark frame with a centred title (the papers' comment frames before each interval)."""
    w, h = size
    img = QImage(w, h, QImage.Format_RGB888)
    img.fill(BACKGROUND)
    p = QPainter(img)
    p.setRenderHint(QPainter.TextAntialiasing)
    f = QFont(style.CARD_FAMILY)
    f.setPixelSize(max(12, h // 16))
    p.setFont(f)
    p.setPen(TEXT)
    p.drawText(QRect(w // 12, h // 5, w - w // 6, h // 2), Qt.AlignCenter | Qt.TextWordWrap, title)
    if subtitle:
        f.setPixelSize(max(10, h // 30))
        p.setFont(f)
        p.setPen(ACCENT)
        p.drawText(QRect(w // 12, h * 3 // 5, w - w // 6, h // 6), Qt.AlignCenter | Qt.TextWordWrap, subtitle)
    if footer:
        f.setPixelSize(max(9, h // 45))
        p.setFont(f)
        p.setPen(QColor(*style.CARD_FOOTER))
        p.drawText(QRect(0, h - h // 10, w, h // 12), Qt.AlignCenter, footer)
    p.end()
    return qimage_to_rgb(img)
