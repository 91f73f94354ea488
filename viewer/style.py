"""The viewer's palette and fonts: every colour and font the panes, dialogs and the app draw with, named once.

Qt colours are `#rrggbb` strings (stylesheets, pyqtgraph pens, `QColor(name)`); the VTK scene's are RGB floats
0..1 as VTK takes them. A test (tests/test_style.py) refuses a hex colour literal in any other module.
"""
from __future__ import annotations

import weakref

# ---- panes (Qt, pyqtgraph) ---------------------------------------------------------------------
BACKGROUND = "#0c101c"        # the panes' dark background (plots, devices, facts, envelope map)
TRANSPORT_BACKGROUND = "#1a2030"
SPLITTER = "#2a3248"          # the handles between the panes
FRAME = "#5a6482"             # box outlines, the difference plot's zero line, axis lines
TEXT = "#e1e4eb"              # values and plain labels
KEY_TEXT = "#8c94aa"          # names of facts, legends, dim notes
AXIS_TEXT = "#c8cdd8"         # envelope map's tick labels
LANE_TEXT = "#c8cede"         # contact lanes' pair names
NO_VALUE = "#7a8194"          # envelope map: a run without a value
CURSOR = "#ffd700"            # T Current: the yellow time line, its readout, the open run's ring
CAPTURE = "#ffffff"           # the dashed capture line, difference curves, kept-run rims
MEASURED = "#f472d0"          # a measured record's dashed trace and its measured − run difference plot
TRACE_COLORS = ("#4fc3f7", "#81c784", "#ff8a65", "#ba68c8", "#f06292", "#aed581", "#ffb74d", "#90a4ae")
"""The plotted channels' colours, in plotting order (the readout box names them alike)."""
PASS = "#66dd77"              # verdict PASS
FAIL = "#ff5a4a"              # verdict FAIL
APPROX = "#ffb347"            # a note over statistics recomputed from frames
OK_NOTE = "#73c976"           # dialogs: an input that is fine
ERROR_NOTE = "#ff7043"        # dialogs: what is wrong with an output
ERROR_FIELD = "#f26b5b"       # dialogs: a refused field and its message
DISABLED_NOTE = "#9097a8"     # dialogs: a range hint
OUTCOME_PASS, OUTCOME_FAIL, OUTCOME_MISSED, OUTCOME_ERROR = "#66bb6a", "#ffa726", "#ef5350", "#e040fb"
ERROR_RIM = "#f3b6ff"         # envelope map: a run that ended in an error

LOOP_RANGE_FILL, LOOP_RANGE_EDGE = (255, 255, 255, 22), (255, 255, 255, 60)   # the plots' loop range (RGBA)
CURRENT_ROW = (90, 76, 10)    # events dock: the event at T Current

# ---- plots: overlays, cursors, axes (added for issue 32) -------------------------------------------
DIFFERENCE = "#4db6ac"        # a difference curve (A − B, measured − run): not a trace's, not the measured pink
NOISE_BAND = (77, 182, 172, 40)   # a difference plot's noise level ± (RGBA, the difference colour faint)
HOVER = "#b0bec5"             # the hover cursor's dashed line and its readout's frame
CURSOR_A, CURSOR_B = "#00e5ff", "#ff9100"   # the two measuring cursors
READOUT_BACKGROUND = (12, 16, 28, 220)      # the hover readout's box (RGBA)
TICK_PT = 8.0                 # the plots' tick labels

# ---- clips (QColor RGB) ------------------------------------------------------------------------
CARD_BACKGROUND = (12, 16, 24)
CARD_TEXT = (235, 235, 235)
CARD_ACCENT = (250, 210, 60)  # a title card's subtitle, the clip's burned-in time
CARD_FOOTER = (150, 150, 150)
CAPTION_BACKGROUND = (26, 32, 48)

# ---- devices pane (QColor RGB) -------------------------------------------------------------------
POSITIVE = (220, 40, 40)
NEGATIVE = (50, 110, 235)
BAR_BACKGROUND = (30, 36, 54)
FULL_SCALE = (255, 220, 0)    # outline of a bar at or beyond its full scale
NO_RANGE_HATCH = (58, 66, 92)
STATE_FILL = (40, 150, 120)    # a count's bar (latches engaged): a state, not an alarm
FORCE_SCALE = [(70, 140, 255), (60, 220, 170), (255, 215, 0), (255, 40, 30)]   # lanes: low .. high peak force

# ---- scene (VTK, RGB 0..1) -----------------------------------------------------------------------
SCENE_BACKGROUND = (0.035, 0.045, 0.075)   # the scene pane's ground around its views (readouts, camera buttons)
FORCE_LABEL_BOX = (0.035, 0.045, 0.075, 0.6)   # the box behind a force label, over a view (RGBA)
VIEW_BACKGROUND = (0.06, 0.075, 0.12)
CONTACT_RED = (1.0, 0.16, 0.12)
FORCE_COLOR = (1.0, 0.78, 0.15)
SCENE_TEXT = (0.86, 0.90, 0.86)
SCENE_HEADER = (1.0, 0.85, 0.35)
VIEW_TITLE = (0.55, 0.62, 0.72)
GHOST_COLOR = (0.62, 0.45, 1.0)
TINT_POSITIVE = (1.0, 0.58, 0.10)   # a part coloured by its channel (e.g. a leg by its force): + orange
TINT_NEGATIVE = (0.25, 0.62, 1.0)   # - blue (red stays for contact)

# ---- the validation report (matplotlib and HTML, on white) ----------------------------------------
REPORT_RUN = "#1f5fbf"
REPORT_MEASURED = "#d0542c"
REPORT_DIFFERENCE = "#555555"
REPORT_RULE = "#bbb"
REPORT_CODE_BACKGROUND = "#f4f4f4"
REPORT_WARNING = "#d08a00"    # the rule beside the map's warnings (e.g. radians declared degrees)

# ---- fonts ---------------------------------------------------------------------------------------
MONO = "monospace"            # readouts whose digits must not move
LABEL_FAMILY = "Arial"        # the scene's titles and force labels
READOUT_PT = 9.0              # the plots' readout box
T_CURRENT_PT = 10.0           # its T Current line (bold)
PANE_PT = 9.0                 # the devices pane's names and values
SMALL_PT = 7.5                # contact lanes' names and legend
PLOT_TITLE = "8pt"            # a plot's channel name (pyqtgraph label size)
LEGEND_SIZE = "7pt"
MAP_TITLE_SIZE = "10pt"       # the envelope map's title
MAP_GLYPH_PT = 12             # its legend's outcome glyphs
CARD_FAMILY = "DejaVu Sans"   # clips: title cards
CAPTION_FAMILY = "DejaVu Sans Mono"   # clips: the burned-in caption


def mono_font(point_size: float, bold: bool = False):
    """A fixed-width QFont of this size (the readouts)."""
    from PySide6.QtGui import QFont
    f = QFont(MONO)
    f.setStyleHint(QFont.Monospace)
    f.setPointSizeF(point_size)
    f.setBold(bold)
    return f



# ---- report figures (matplotlib: viewer/report_figure.py), one palette per theme ----------------------
FIGURE_THEMES = {
    "light": dict(background="#ffffff", text="#1a1a1a", dim="#555555", grid="#d9d9d9", frame="#444444",
                  cursor="#c98a00", capture="#333333",
                  traces=("#1f5fbf", "#d62728", "#2e8b3a", "#8e44ad", "#e67e00", "#17a2b8", "#8c564b", "#7f7f7f")),
    "dark": dict(background=BACKGROUND, text=TEXT, dim=KEY_TEXT, grid=SPLITTER, frame=FRAME, cursor=CURSOR,
                 capture=CAPTURE, traces=TRACE_COLORS),
}
"""Colours of a report figure: paper-white `light` (the default) and the window's `dark`."""


# ---- window themes -----------------------------------------------------------------------------------
LIGHT = dict(
    BACKGROUND="#f7f8fa", TRANSPORT_BACKGROUND="#e3e6ed", SPLITTER="#b9c0cf", FRAME="#8790a6", TEXT="#1b2030",
    KEY_TEXT="#5b6377", AXIS_TEXT="#2c3345", LANE_TEXT="#2e3548", NO_VALUE="#9aa1b0", CURSOR="#d08a00",
    CAPTURE="#30343c", MEASURED="#c2185b", PASS="#1e8e3e", FAIL="#d32f2f", APPROX="#b26a00",
    TRACE_COLORS=("#1f5fbf", "#2e8b3a", "#d84315", "#8e44ad", "#ad1457", "#558b2f", "#e67e00", "#546e7a"),
    LOOP_RANGE_FILL=(0, 0, 0, 16), LOOP_RANGE_EDGE=(0, 0, 0, 60), CURRENT_ROW=(255, 236, 150),
    BAR_BACKGROUND=(224, 228, 237), NO_RANGE_HATCH=(186, 193, 208), FULL_SCALE=(215, 150, 0),
    SCENE_BACKGROUND=(0.969, 0.973, 0.980), SCENE_TEXT=(0.106, 0.125, 0.188), SCENE_HEADER=(0.62, 0.38, 0.0),
    WINDOW="#e9ecf2", SELECTION="#b3cdf5", SELECTED_TEXT="#1b2030", BUTTON="#e3e6ed", BUTTON_TEXT="#1b2030",
    DIFFERENCE="#00796b", HOVER="#546e7a",
    CURSOR_A="#0091ea", CURSOR_B="#e65100", NOISE_BAND=(0, 121, 107, 40), READOUT_BACKGROUND=(247, 248, 250, 225),
    OK_NOTE="#2e7d32", ERROR_NOTE="#d84315", ERROR_FIELD="#c62828", DISABLED_NOTE="#808080",
)
"""The light window theme: the Qt panes' colours on a light ground, the scene pane's readouts, the docks and the
dialogs (the application's palette, qt_palette) included. The scene's three views keep their dark ground (as CAD
viewports do; the parts' colours are drawn for it) and clips their dark cards, so those colours are not in it."""
WINDOW = "#141a28"            # the docks', menus' and tables' window ground (the Qt palette, see qt_palette)
SELECTION = "#2c4f86"         # a selected row or text
SELECTED_TEXT = "#f4f6fb"
BUTTON, BUTTON_TEXT = "#cdd2dc", "#161b29"   # buttons and combo boxes: light faces (Qt's standard icons are dark)
DARK = {k: globals()[k] for k in LIGHT}
THEMES = {"dark": DARK, "light": LIGHT}
_theme = "dark"
_observers: list = []


def observe(callback) -> None:
    """Call `callback()` after each theme change (View → Theme applies at once). A bound method is held weakly: a
    pane that is gone drops out; a module function (a module's colour cache) is held for good."""
    _observers.append(weakref.WeakMethod(callback) if hasattr(callback, "__self__") else (lambda: callback))


def unobserve(window) -> None:
    """Stop telling `window` (a QWidget being closed) and the widgets inside it about theme changes."""
    def inside(cb) -> bool:
        owner = getattr(cb, "__self__", None)
        try:
            return owner is window or (hasattr(owner, "isWidgetType") and owner.isWidgetType()
                                       and window.isAncestorOf(owner))
        except RuntimeError:                    # (a Qt object deleted meanwhile)
            return True
    _observers[:] = [ref for ref in _observers if (cb := ref()) is not None and not inside(cb)]


def set_theme(name: str) -> None:
    """Make `name` (dark or light) the palette and tell every observer (panes, docks, module colour caches)."""
    if name not in THEMES:
        raise ValueError(f"theme {name!r}: one of {', '.join(THEMES)}")
    global _theme
    globals().update(THEMES[name])
    _theme = name
    for ref in list(_observers):
        cb = ref()
        try:
            if cb is not None:
                cb()
                continue
        except RuntimeError as exc:             # a widget whose Qt object was deleted meanwhile
            if "deleted" not in str(exc):
                raise
        _observers.remove(ref)


def qt_palette():
    """The application's QPalette in this theme: docks, tables, menus, dialogs and fields read it (a widget under a
    stylesheet takes the application's palette, not its parent's)."""
    from PySide6.QtGui import QColor, QPalette
    pal = QPalette()
    roles = {QPalette.Window: WINDOW, QPalette.WindowText: TEXT, QPalette.Base: BACKGROUND,
             QPalette.AlternateBase: TRANSPORT_BACKGROUND, QPalette.Text: TEXT, QPalette.Button: BUTTON,
             QPalette.ButtonText: BUTTON_TEXT, QPalette.Highlight: SELECTION, QPalette.HighlightedText: SELECTED_TEXT,
             QPalette.ToolTipBase: WINDOW, QPalette.ToolTipText: TEXT, QPalette.PlaceholderText: KEY_TEXT,
             QPalette.BrightText: FAIL, QPalette.Light: FRAME, QPalette.Midlight: SPLITTER, QPalette.Mid: SPLITTER,
             QPalette.Dark: SPLITTER, QPalette.Shadow: BACKGROUND, QPalette.Link: CURSOR_A}
    for role, colour in roles.items():
        pal.setColor(role, QColor(colour))
    for role in (QPalette.WindowText, QPalette.Text, QPalette.ButtonText):
        pal.setColor(QPalette.Disabled, role, QColor(NO_VALUE))
    return pal



def theme() -> str:
    """The palette in use: dark or light."""
    return _theme
