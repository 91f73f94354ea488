"""Report figures of a run drawn with matplotlib from the run file's data (not a screen grab): time plots of one or
more channels each, XY plots, the capture and T Current lines; PDF, SVG or PNG at a size in mm, in or px."""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from viewer import style

MM_PER_IN = 25.4
FORMATS = (".pdf", ".svg", ".png")
MAX_POINTS = 4000          # a curve longer than this is drawn from its min and max per bucket (peaks kept)
BASE_PT = 7.5              # tick and legend text, pt (at 160x120 mm; scaled with the figure's size)
LABEL_PT = 8.0             # axis labels
TITLE_PT = 10.0            # the figure's title
NARROW_MM = 120            # narrower figures put their XY plots under the time plots
LEGEND_ENTRY_MM = 34       # width of a legend entry at BASE_PT


class FigureError(ValueError):
    """A figure request the run cannot serve; the message names the file, the option and what exists."""


@dataclass
class FigureSpec:
    """What a report figure shows and how big it is."""
    plots: list[list[str]]                                  # time plots, each a list of channels
    xy: list[tuple[str, str]] = field(default_factory=list)  # XY plots: (x channel, y channel)
    t: tuple[float, float] | None = None                    # the interval shown (None: the whole run)
    size: tuple[float, float] = (160 / MM_PER_IN, 120 / MM_PER_IN)   # inches
    dpi: int = 300
    theme: str = "light"
    title: str | None = None
    at: float | None = None                                 # T Current line (None: none)


def parse_size(text: str, dpi: float) -> tuple[float, float]:
    """`160x120mm`, `6.3x4.7in` or `1890x1417px` (px at `dpi`) as inches."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*[xX×]\s*([0-9]*\.?[0-9]+)\s*(mm|in|px)\s*", text or "")
    if not m:
        raise FigureError(f"--size: {text!r} is not WxH with a unit mm, in or px (e.g. 160x120mm)")
    w, h, unit = float(m.group(1)), float(m.group(2)), m.group(3)
    scale = {"mm": 1 / MM_PER_IN, "in": 1.0, "px": 1 / dpi}[unit]
    w_in, h_in = w * scale, h * scale
    if not (0.8 <= w_in <= 40 and 0.8 <= h_in <= 40):
        raise FigureError(f"--size: {text!r} is {w_in * MM_PER_IN:.0f}x{h_in * MM_PER_IN:.0f} mm; each side must be "
                          f"20 to 1000 mm")
    return w_in, h_in


def parse_interval(text: str) -> tuple[float, float]:
    """`T0:T1` in seconds."""
    try:
        a, b = (float(x) for x in text.split(":"))
    except ValueError:
        raise FigureError(f"--t: {text!r} is not T0:T1 in seconds (e.g. 0:20)") from None
    if not (math.isfinite(a) and math.isfinite(b) and a < b):
        raise FigureError(f"--t: {text!r}: T0 must be a number less than T1")
    return a, b


def parse_xy(text: str) -> tuple[str, str]:
    """`CHX:CHY`."""
    parts = [p.strip() for p in text.split(":")]
    if len(parts) != 2 or not all(parts):
        raise FigureError(f"--xy: {text!r} is not CHX:CHY (e.g. Fy:Fx)")
    return parts[0], parts[1]


def _channel_list(run) -> str:
    return "; ".join(f"{g}: {', '.join(names)}" for g, names in run.groups().items())


def check_spec(run, spec: FigureSpec) -> tuple[int, int]:
    """The frames [a, b) the figure shows; FigureError naming the run file and listing what exists on a bad name,
    interval or time."""
    path = run.path
    if not spec.plots and not spec.xy:
        raise FigureError(f"{path}: nothing to draw: give at least one --plot CH[,CH...] or --xy CHX:CHY")
    for opt, names in [("--plot", n) for p in spec.plots for n in p] + [("--xy", n) for p in spec.xy for n in p]:
        if names not in run.channels:
            near = difflib.get_close_matches(names, list(run.channels), n=3)
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            raise FigureError(f"{path}: {opt}: no channel {names!r}{hint}; the run's channels: {_channel_list(run)}")
    t = np.asarray(run.time, float)
    t0, t1 = float(t[0]), float(t[-1])
    lo, hi = spec.t if spec.t is not None else (t0, t1)
    if spec.t is not None and (lo >= t1 or hi <= t0 or lo >= hi):
        raise FigureError(f"{path}: --t: {lo:g}:{hi:g} s holds no frame of the run, which spans {t0:g} to {t1:g} s")
    if spec.at is not None and not (max(lo, t0) <= spec.at <= min(hi, t1)):
        raise FigureError(f"{path}: --at: {spec.at:g} s is outside the shown interval "
                          f"{max(lo, t0):g} to {min(hi, t1):g} s")
    if spec.theme not in style.FIGURE_THEMES:
        raise FigureError(f"--theme: {spec.theme!r}: one of {', '.join(style.FIGURE_THEMES)}")
    a, b = int(np.searchsorted(t, lo, side="left")), int(np.searchsorted(t, hi, side="right"))
    if b - a < 2:
        raise FigureError(f"{path}: --t: {lo:g}:{hi:g} s holds {b - a} frame(s) of the run; a plot needs two "
                          f"(the output step is {run.meta.output_step:g} s)")
    return a, b


def peak_decimate(t: np.ndarray, y: np.ndarray, n: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most about `n` points: each bucket's min and max in time order (every peak of the curve kept)."""
    if len(t) <= n:
        return t, y
    k = n // 2
    edges = np.linspace(0, len(t), k + 1).astype(int)
    idx = []
    for a, b in zip(edges[:-1], edges[1:]):
        seg = y[a:b]
        if not len(seg):
            continue
        if not np.isfinite(seg).any():
            idx.append(a)
            continue
        i, j = a + int(np.nanargmin(seg)), a + int(np.nanargmax(seg))
        idx += sorted({i, j})
    idx = np.asarray(idx)
    return t[idx], y[idx]


def _unit_text(run, names) -> str:
    units = list(dict.fromkeys(run.channels[n].unit for n in names))
    label = ", ".join(names)
    unit = ", ".join(u for u in units if u)
    if len(label) > 28:
        label = ""
    return f"{label} [{unit}]".strip() if unit else label


def _style_axes(ax, pal):
    ax.set_facecolor(pal["background"])
    for s in ax.spines.values():
        s.set_color(pal["frame"])
        s.set_linewidth(0.6)
    ax.tick_params(colors=pal["text"], labelsize=pal["base"], width=0.6, length=3)
    ax.grid(True, color=pal["grid"], linewidth=0.5)
    ax.yaxis.label.set_color(pal["text"])
    ax.xaxis.label.set_color(pal["text"])
    ax.title.set_color(pal["text"])


def _legend(ax, pal, **kw):
    kw = {"frameon": True, **kw}
    leg = ax.legend(fontsize=pal["base"], framealpha=0.85, borderpad=0.3, handlelength=1.6, labelspacing=0.25, **kw)
    leg.get_frame().set_facecolor(pal["background"])
    leg.get_frame().set_edgecolor(pal["grid"])
    for txt in leg.get_texts():
        txt.set_color(pal["text"])
    return leg


def facts_line(run, spec: FigureSpec) -> str:
    """The run named under the title: file, variant, capture and T Current."""
    m = run.meta
    cap = f"capture {run.t_capture:.3f} s" if math.isfinite(run.t_capture) else "no capture"
    parts = [f"run {run.path.name}", f"{m.variant or run.mechanism_type_name()}", cap]
    if spec.at is not None:
        parts.append(f"T Current {spec.at:.3f} s")
    return " · ".join(parts)


def build_figure(run, spec: FigureSpec, measured=None, compare=None):
    """The matplotlib Figure of `spec` over `run` (a solver.runfile.RunFile); `measured`: a solver.measured
    Comparison whose records are drawn dashed over their channels; `compare`: (run B, offset s added to B's times),
    B's channels drawn dashed in their channel's colour."""
    a, b = check_spec(run, spec)
    pal = style.FIGURE_THEMES[spec.theme]
    k = float(np.clip(min(spec.size[0] * MM_PER_IN / 160, spec.size[1] * MM_PER_IN / 120), 0.65, 1.4))
    pal = {**pal, "base": BASE_PT * k, "label": LABEL_PT * k, "title": TITLE_PT * k}   # text scales with the size
    return _build(run, spec, measured, compare, a, b, pal)


def _build(run, spec: FigureSpec, measured, compare, a: int, b: int, pal: dict):
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator
    t = np.asarray(run.time[a:b], float)
    fig = Figure(figsize=spec.size, dpi=spec.dpi, layout="constrained", facecolor=pal["background"])
    fig.get_layout_engine().set(w_pad=0.04, h_pad=0.04, hspace=0.02, wspace=0.03)
    n_t, n_xy = len(spec.plots), len(spec.xy)
    width_mm = spec.size[0] * MM_PER_IN
    side = bool(n_t and n_xy) and width_mm >= NARROW_MM     # XY plots beside the time plots, else under them
    if side:
        gs = fig.add_gridspec(1, 2, width_ratios=[1.55, 1])
        t_cell, xy_cell, t_mm = gs[0, 0], gs[0, 1], width_mm * 0.6
    else:
        gs = fig.add_gridspec(2 if n_t and n_xy else 1, 1, height_ratios=[n_t, n_xy * 1.2] if n_t and n_xy else [1])
        t_cell, xy_cell, t_mm = gs[0, 0], gs[-1, 0], width_mm
    per_row = max(1, int(t_mm / (LEGEND_ENTRY_MM * pal["base"] / BASE_PT)))   # legend entries a row holds
    title = spec.title if spec.title else (run.meta.scenario or run.path.stem)
    facts = facts_line(run, spec) + (f" · dashed: B = {compare[0].path.name}" if compare is not None else "")
    facts = " · ".join(part.replace(" ", "\u00a0") for part in facts.split(" · "))   # lines break between facts
    import textwrap
    chars = max(int(spec.size[0] * 72 / (0.56 * (pal["title"] - 1))), 30)   # what a line of the figure's width holds
    head = "\n".join(textwrap.wrap(title, chars) + textwrap.wrap(facts, chars))
    fig.suptitle(head, fontsize=pal["title"] - 1, color=pal["text"], linespacing=1.4)
    t_cap = run.t_capture if math.isfinite(run.t_capture) and t[0] <= run.t_capture <= t[-1] else None
    axes_t, axes_xy = [], []
    if n_t:
        sub = t_cell.subgridspec(n_t, 1, hspace=0.08)
        for i, names in enumerate(spec.plots):
            ax = fig.add_subplot(sub[i, 0], sharex=axes_t[0] if axes_t else None)
            _style_axes(ax, pal)
            for k, name in enumerate(names):
                y = np.asarray(run.channel(name, a, b), float)
                colour = pal["traces"][k % len(pal["traces"])]
                unit = run.channels[name].unit
                ax.plot(*peak_decimate(t, y), color=colour, lw=0.9, label=f"{name} [{unit}]" if unit else name)
                if compare is not None and name in compare[0].channels:
                    run_b, off = compare
                    tb = np.asarray(run_b.time, float) + off
                    ka, kb = int(np.searchsorted(tb, t[0])), int(np.searchsorted(tb, t[-1], side="right"))
                    if kb - ka > 1:
                        ax.plot(*peak_decimate(tb[ka:kb], np.asarray(run_b.channel(name, ka, kb), float)),
                                color=colour, lw=0.8, ls=(0, (5, 2)), alpha=0.8,
                                label=f"{name} (B)")
                if measured is not None and name in getattr(measured, "record", {}):
                    tm, ym = np.asarray(measured.record_time, float), np.asarray(measured.record[name], float)
                    keep = (tm >= t[0]) & (tm <= t[-1])
                    ax.plot(*peak_decimate(tm[keep], ym[keep]), color=colour, lw=0.7, ls=(0, (3, 1.5)), alpha=0.7,
                            zorder=1.5, label=f"{name} measured")   # under the run's line, in its colour
            ax.set_ylabel(_unit_text(run, names), fontsize=pal["label"])
            ax.yaxis.set_major_locator(MaxNLocator(nbins=5, min_n_ticks=3))
            if i < n_t - 1:
                ax.tick_params(labelbottom=False)
            axes_t.append(ax)
        axes_t[-1].set_xlabel("time [s]", fontsize=pal["label"])
        axes_t[0].set_xlim(t[0], t[-1])
        for i, ax in enumerate(axes_t):
            if t_cap is not None:
                ax.axvline(t_cap, color=pal["capture"], lw=0.8, ls=(0, (4, 3)),
                           label=f"capture {t_cap:.3f} s" if i == 0 else None)
            if spec.at is not None:
                ax.axvline(spec.at, color=pal["cursor"], lw=1.0, label=f"T Current {spec.at:.3f} s" if i == 0 else None)
            n = len([h for h in ax.get_lines() if not h.get_label().startswith("_")])
            leg = _legend(ax, pal, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=min(n, per_row), frameon=False,
                          borderaxespad=0.1, columnspacing=1.2)   # above the plot: never over its data
            leg.set_in_layout(True)
    if n_xy:
        sub = xy_cell.subgridspec(1, n_xy) if not side else xy_cell.subgridspec(n_xy, 1)
        for i, (cx, cy) in enumerate(spec.xy):
            ax = fig.add_subplot(sub[i, 0])
            _style_axes(ax, pal)
            x, y = np.asarray(run.channel(cx, a, b), float), np.asarray(run.channel(cy, a, b), float)
            ax.plot(x, y, color=pal["traces"][0], lw=0.8)
            ax.plot(x[:1], y[:1], "o", ms=3.5, color=pal["dim"], label=f"start {t[0]:g} s")
            if spec.at is not None:
                k = int(np.clip(np.searchsorted(t, spec.at), 0, len(t) - 1))
                ax.plot(x[k:k + 1], y[k:k + 1], "o", ms=5, color=pal["cursor"], markeredgecolor=pal["text"],
                        markeredgewidth=0.5, label=f"T Current {spec.at:.3f} s")
            ax.set_xlabel(_unit_text(run, [cx]), fontsize=pal["label"])
            ax.set_ylabel(_unit_text(run, [cy]), fontsize=pal["label"])
            for axis in (ax.xaxis, ax.yaxis):
                axis.set_major_locator(MaxNLocator(nbins=5, min_n_ticks=3))
            leg = _legend(ax, pal, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=1, frameon=False,
                          borderaxespad=0.1, columnspacing=1.2, title=f"{cy} against {cx}", alignment="left",
                          title_fontproperties={"size": pal["label"]})
            leg.get_title().set_color(pal["text"])
            axes_xy.append(ax)
    fig.axes_time, fig.axes_xy = axes_t, axes_xy
    untangle_ticks(fig)
    return fig


def shown_tick_labels(axis) -> list:
    """The tick labels an axis draws: its major ticks inside the view limits, with text."""
    lo, hi = sorted(axis.get_view_interval())
    eps = (hi - lo) * 1e-9
    return [t.label1 for t in axis.get_major_ticks()
            if lo - eps <= t.get_loc() <= hi + eps and t.label1.get_visible() and t.label1.get_text()]


def untangle_ticks(fig, tries: int = 3):
    """Fewer ticks on an axis whose tick labels touch (a narrow plot), down to 3."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.ticker import MaxNLocator
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    for _ in range(tries):
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        crowded = []
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                boxes = [t.get_window_extent(r).expanded(1.15, 1.1) for t in shown_tick_labels(axis)]
                if any(p.overlaps(q) for i, p in enumerate(boxes) for q in boxes[i + 1:]):
                    crowded.append((axis, len(boxes)))
        if not crowded:
            return
        for axis, n in crowded:
            axis.set_major_locator(MaxNLocator(nbins=max(n - 2, 2), min_n_ticks=3))


def save_figure(run, spec: FigureSpec, out, measured=None, compare=None) -> Path:
    """Write the figure to `out` (.pdf, .svg or .png; a PNG has round(size x dpi) pixels); returns the path."""
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in FORMATS:
        raise FigureError(f"{out}: -o: the file must end in {', '.join(FORMATS)}")
    if not (10 <= spec.dpi <= 2400):
        raise FigureError(f"--dpi: {spec.dpi}: must be 10 to 2400")
    import matplotlib
    matplotlib.use("Agg", force=False)
    rc = {"pdf.fonttype": 42, "svg.fonttype": "path", "font.family": "DejaVu Sans"}
    with matplotlib.rc_context(rc):
        fig = build_figure(run, spec, measured, compare)
        if suffix == ".png":   # Agg truncates size x dpi: give it the rounded pixel count (+ a hair)
            w_px, h_px = (round(s * spec.dpi) for s in spec.size)
            fig.set_size_inches((w_px + 1e-3) / spec.dpi, (h_px + 1e-3) / spec.dpi)
        meta = {"Title": fig._suptitle.get_text()} if suffix in (".pdf", ".svg") else {}
        fig.savefig(out, dpi=spec.dpi, facecolor=fig.get_facecolor(), metadata=meta or None)
    if not out.is_file():
        raise OSError(f"{out}: matplotlib wrote nothing")
    return out
