"""The self-contained HTML reports of `dockmnemo validate` (plots as embedded PNG images, matplotlib Agg; the metrics
table, the run's facts and parameters) and of `dockmnemo calibrate` (cost profiles, before/after overlays)."""
from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import numpy as np

from solver.measured import Comparison
from viewer import style

RUN_STYLE = dict(color=style.REPORT_RUN, lw=1.2, label="run")
MEASURED_STYLE = dict(color=style.REPORT_MEASURED, lw=0.9, alpha=0.85, label="measured")


def channel_png(cmp_: Comparison, channel: str, dpi: int = 90) -> bytes:
    """PNG of one channel: run and measured over the run's time, and below, measured - run."""
    import matplotlib
    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    fig = Figure(figsize=(9.0, 4.2), dpi=dpi, layout="constrained")
    ax, ad = fig.subplots(2, 1, sharex=True, height_ratios=[2, 1])
    unit = cmp_.units.get(channel, "")
    ax.plot(cmp_.time, cmp_.run[channel], **RUN_STYLE)
    ax.plot(cmp_.time, cmp_.measured[channel], **MEASURED_STYLE)
    ax.set_ylabel(f"{channel}, {unit}")
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    ad.plot(cmp_.time, cmp_.difference(channel), color=style.REPORT_DIFFERENCE, lw=0.8)
    ad.set_ylabel(f"meas. - run, {unit}")
    ad.set_xlabel("run time, s")
    ad.grid(alpha=0.3)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def write_report(path, cmp_: Comparison, run_path, measured_path, map_path, facts: str, parameters: str) -> Path:
    """Write the HTML report (no external files: images inline as data: URIs)."""
    e = html.escape
    how = "automatic (threshold crossing + cross-correlation)" if cmp_.auto else "given"
    rows = "".join(f"<tr><td>{e(m.channel)}</td><td>{e(m.unit)}</td><td>{m.rms:.4g}</td><td>{m.peak:.4g}</td>"
                   f"<td>{m.t_peak:.4f}</td><td>{m.r:.4f}</td><td>{m.samples}</td></tr>" for m in cmp_.metrics)
    imgs = "".join(f"<h3>{e(m.channel)}</h3><img alt='{e(m.channel)}: run, measured and their difference' "
                   f"src='data:image/png;base64,{base64.b64encode(channel_png(cmp_, m.channel)).decode()}'>"
                   for m in cmp_.metrics)
    warns = "".join(f"<li>{e(w)}</li>" for w in cmp_.warnings)   # what looks wrong in the map (the numbers may be too)
    warns = f"<div class='warnings'><b>Warnings</b><ul>{warns}</ul></div>" if warns else ""
    doc = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dockmnemo validation: {e(Path(run_path).name)}</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:70em}} table{{border-collapse:collapse}}
td,th{{border:1px solid {style.REPORT_RULE};padding:0.2em 0.6em;text-align:right}} pre{{background:{style.REPORT_CODE_BACKGROUND};padding:0.6em;
overflow-x:auto;font-size:85%}} img{{max-width:100%}} .warnings{{border-left:4px solid {style.REPORT_WARNING};
padding:0.2em 0.8em}}</style></head><body>
<h1>Validation of a run against measured data</h1>
<p>run <code>{e(str(run_path))}</code><br>measured <code>{e(str(measured_path))}</code><br>
channel map <code>{e(str(map_path))}</code></p>{warns}
<p><b>time offset: {cmp_.offset:.6f} s</b> ({how}; t_measured = t_run + offset)</p>
<h2>Metrics (measured - run)</h2>
<table><tr><th>channel</th><th>unit</th><th>RMS error</th><th>peak error</th><th>time of peak, s</th>
<th>correlation r</th><th>samples</th></tr>{rows}</table>
<h2>Channels</h2>{imgs}
<h2>The run's facts</h2><pre>{e(facts)}</pre>
<h2>The run's parameters</h2><pre>{e(parameters)}</pre>
</body></html>
"""
    from solver.atomic import write_text
    return write_text(path, doc)   # whole or not at all: a failed write leaves no truncated report


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode()


def profile_png(key: str, unit: str, values, costs, fitted: float, half_width: float, start: float, noise_cost: float,
                points=None, dpi: int = 90) -> str:
    """Base64 PNG of one key's cost profile: the cost along the key through the fit (others held), the global phase's
    candidates (a one-key fit), the fit with its 95 % interval, the start, and the record's noise level."""
    import matplotlib
    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    fig = Figure(figsize=(6.0, 3.4), dpi=dpi, layout="constrained")
    ax = fig.subplots()
    if points is not None and len(points):
        ax.plot(points[:, 0], points[:, 1], ".", color=style.REPORT_MEASURED, ms=4, alpha=0.6, label="every run")
    ax.plot(values, costs, "o-", color=style.REPORT_RUN, ms=4, lw=1.2, label="profile through the fit")
    ax.axvline(fitted, color=style.REPORT_DIFFERENCE, lw=1.0, label="fit")
    if np.isfinite(half_width):
        ax.axvspan(fitted - half_width, fitted + half_width, color=style.REPORT_DIFFERENCE, alpha=0.15,
                   label="95 % interval")
    ax.axvline(start, color=style.REPORT_RULE, lw=1.0, ls="--", label="start")
    if noise_cost > 0:
        ax.axhline(noise_cost, color=style.REPORT_RULE, lw=0.8, ls=":", label="record's noise")
    ax.set_xlabel(f"{key}, {unit}" if unit else key)
    ax.set_ylabel("cost (sum of squared scaled residuals)")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=7)
    return _png(fig)


def overlay_png(before: Comparison, after: Comparison, channel: str, dpi: int = 90) -> str:
    """Base64 PNG of one channel: the record, the scenario's own run and the fitted run; below, record - run of each."""
    import matplotlib
    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    fig = Figure(figsize=(9.0, 4.2), dpi=dpi, layout="constrained")
    ax, ad = fig.subplots(2, 1, sharex=True, height_ratios=[2, 1])
    unit = before.units.get(channel, "")
    ax.plot(after.record_time, after.record[channel], color=style.REPORT_MEASURED, lw=0.8, alpha=0.8, label="measured")
    ax.plot(before.time, before.run[channel], color=style.REPORT_RULE, lw=1.0, ls="--", label="before (start)")
    ax.plot(after.time, after.run[channel], color=style.REPORT_RUN, lw=1.2, label="after (fit)")
    ax.set_ylabel(f"{channel}, {unit}")
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    ad.plot(before.time, before.difference(channel), color=style.REPORT_RULE, lw=0.7, label="before")
    ad.plot(after.time, after.difference(channel), color=style.REPORT_DIFFERENCE, lw=0.8, label="after")
    ad.set_ylabel(f"meas. - run, {unit}")
    ad.set_xlabel("run time, s")
    ad.legend(loc="best", fontsize=7)
    ad.grid(alpha=0.3)
    return _png(fig)


def write_calibration_report(path, cal, scenario_path, measured_path, map_path) -> Path:
    """The self-contained HTML report of `dockmnemo calibrate`: verdict, keys with intervals and correlation, each
    key's cost profile, the before/after overlays and metrics. Written atomically."""
    from solver.atomic import write_text
    e = html.escape
    before, after = cal.comparisons
    keys = "".join(f"<tr><td>{e(k.key)}</td><td>{k.value:.6g}</td><td>{x:.6g}</td><td>{s:.2g}</td><td>{e(k.unit)}</td>"
                   f"<td>{k.search_lo:.6g} .. {k.search_hi:.6g}</td></tr>"
                   for k, x, s in zip(cal.keys, cal.x, cal.sigma))
    corr = "".join(f"<li>{e(line)}</li>" for line in cal.correlation_lines())
    reasons = "".join(f"<li>{e(r)}</li>" for r in cal.reasons)
    pts = None
    if len(cal.keys) == 1 and cal.points:
        pts = np.array(sorted((float(x[0]), c) for x, c in cal.points if c < 50 * max(cal.cost, 1e-300)))
    profiles = "".join(
        f"<h3>{e(k.key)}</h3><img alt='cost profile of {e(k.key)}' src='data:image/png;base64,"
        f"{profile_png(k.key, k.unit, *cal.profiles[k.key], x, s, k.value, cal.noise_cost, pts)}'>"
        for k, x, s in zip(cal.keys, cal.x, cal.sigma) if k.key in cal.profiles)
    rows = "".join(f"<tr><td>{e(b.channel)}</td><td>{e(b.unit)}</td><td>{b.rms:.4g}</td><td>{a.rms:.4g}</td>"
                   f"<td>{b.peak:.4g}</td><td>{a.peak:.4g}</td><td>{b.r:.4f}</td><td>{a.r:.4f}</td></tr>"
                   for b, a in zip(cal.before, cal.after))
    overlays = "".join(f"<h3>{e(m.channel)}</h3><img alt='{e(m.channel)}: measured, before and after' "
                       f"src='data:image/png;base64,{overlay_png(before, after, m.channel)}'>" for m in cal.after)
    doc = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dockmnemo calibration: {e(Path(scenario_path).name)}</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:70em}} table{{border-collapse:collapse}}
td,th{{border:1px solid {style.REPORT_RULE};padding:0.2em 0.6em;text-align:right}} img{{max-width:100%}}</style>
</head><body>
<h1>Calibration of a scenario against measured data</h1>
<p>scenario <code>{e(str(scenario_path))}</code><br>measured <code>{e(str(measured_path))}</code><br>
channel map <code>{e(str(map_path))}</code></p>
<p><b>{e(cal.status)}</b>{f'<ul>{reasons}</ul>' if reasons else ''}</p>
<p>time offset {cal.offset:.6f} s; {cal.runs} runs in {cal.rounds} rounds, {cal.wall_time:.1f} s; cost
{cal.cost0:.6g} at the start, {cal.cost:.6g} at the fit, {cal.noise_cost:.6g} from the record's noise alone;
bootstrap blocks of {cal.block} samples</p>
{f'<p>{e(cal.left_out_line())}</p>' if cal.left_out else ''}
<h2>Fitted keys (± half-width of the 95 % interval)</h2>
<table><tr><th>key</th><th>start</th><th>fit</th><th>±</th><th>unit</th><th>searched</th></tr>{keys}</table>
{f'<ul>{corr}</ul>' if corr else ''}
<h2>Cost profiles</h2>{profiles or '<p>none (the fit was cancelled)</p>'}
<h2>Metrics (measured - run), before and after</h2>
<table><tr><th>channel</th><th>unit</th><th>RMS before</th><th>RMS after</th><th>peak before</th><th>peak after</th>
<th>r before</th><th>r after</th></tr>{rows}</table>
<h2>Channels: measured, before and after</h2>{overlays}
</body></html>
"""
    return write_text(path, doc)
