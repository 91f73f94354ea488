"""The self-contained HTML report of `dockmnemo validate`: plots as embedded PNG images (matplotlib, Agg), the
metrics table, the run's facts and parameters."""
from __future__ import annotations

import base64
import html
import io
from pathlib import Path

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
    doc = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dockmnemo validation: {e(Path(run_path).name)}</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:70em}} table{{border-collapse:collapse}}
td,th{{border:1px solid {style.REPORT_RULE};padding:0.2em 0.6em;text-align:right}} pre{{background:{style.REPORT_CODE_BACKGROUND};padding:0.6em;
overflow-x:auto;font-size:85%}} img{{max-width:100%}}</style></head><body>
<h1>Validation of a run against measured data</h1>
<p>run <code>{e(str(run_path))}</code><br>measured <code>{e(str(measured_path))}</code><br>
channel map <code>{e(str(map_path))}</code></p>
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
