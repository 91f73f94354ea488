"""`dockmnemo figure`: report figures drawn with matplotlib from the run file (viewer/report_figure.py): the PNG's
pixel size, light and dark themes, vector PDF and SVG that other tools open, clear refusals (exit 2)."""
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from PIL import Image

from app.cli import main
from solver.runfile import RunFile
from viewer import style
from viewer.report_figure import FigureSpec, build_figure, parse_size, peak_decimate, shown_tick_labels

ROOT = Path(__file__).resolve().parent.parent
EXPERT = ROOT / "sample_runs" / "expert_existing.h5"
ISSUE_ARGS = ["figure", str(EXPERT), "--plot", "Fx,Fy", "--plot", "probe_stroke", "--xy", "probe_stroke:Fx",
              "--t", "0:20", "--size", "160x120mm", "--dpi", "300", "--theme", "light"]


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    """The issue's command to PNG, PDF and SVG (and the PNG dark), each written once."""
    d = tmp_path_factory.mktemp("fig")
    out = {}
    for suffix in ("png", "pdf", "svg"):
        out[suffix] = d / f"fig.{suffix}"
        assert main(ISSUE_ARGS + ["--at", "12", "-o", str(out[suffix])]) == 0
    out["dark"] = d / "dark.png"
    assert main(ISSUE_ARGS[:-1] + ["dark", "-o", str(out["dark"])]) == 0
    return out


def _rgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)])


def test_the_issue_command_gives_a_1890x1417_light_png(figures):
    im = np.asarray(Image.open(figures["png"]).convert("RGB")).astype(int)
    assert im.shape[:2] == (1417, 1890)
    assert (im[2, 2] == 255).all() and (im[-3, -3] == 255).all()     # paper white
    assert (im.mean(axis=2) > 245).mean() > 0.7                       # mostly white, with dark text and lines
    assert (im.sum(axis=2) < 150).sum() > 2000


def test_the_dark_theme_is_on_the_windows_background(figures):
    im = np.asarray(Image.open(figures["dark"]).convert("RGB")).astype(int)
    assert im.shape[:2] == (1417, 1890)
    assert np.abs(im[2, 2] - _rgb(style.BACKGROUND)).max() <= 1


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="needs poppler's pdftoppm")
def test_the_pdf_is_a_160x120_mm_page_poppler_draws(figures, tmp_path):
    info = subprocess.run(["pdfinfo", str(figures["pdf"])], capture_output=True, text=True, check=True).stdout
    w_pt, h_pt = (float(x) for x in info.split("Page size:")[1].split("pts")[0].split("x"))
    assert abs(w_pt / 72 * 25.4 - 160) < 0.1 and abs(h_pt / 72 * 25.4 - 120) < 0.1
    subprocess.run(["pdftoppm", "-r", "100", "-png", "-singlefile", str(figures["pdf"]), str(tmp_path / "p")],
                   check=True)
    im = np.asarray(Image.open(tmp_path / "p.png").convert("L")).astype(int)
    assert abs(im.shape[0] - 120 / 25.4 * 100) < 1.5 and abs(im.shape[1] - 160 / 25.4 * 100) < 1.5
    assert (im < 80).sum() > 500 and (im > 245).mean() > 0.7      # lines and text drawn on white


def test_the_svg_parses_with_its_size_and_vector_curves(figures):
    root = ET.parse(figures["svg"]).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("width") == "453.543307pt" and root.get("height") == "340.15748pt"
    paths = root.findall(".//{http://www.w3.org/2000/svg}path")
    assert len(paths) > 100                                        # curves, axes and text as paths
    assert "<image" not in figures["svg"].read_text()              # no raster inside


def test_axes_have_units_ticks_legends_and_the_time_lines():
    with RunFile(EXPERT) as run:
        spec = FigureSpec(plots=[["Fx", "Fy"], ["probe_stroke"]], xy=[("probe_stroke", "Fx")], t=(0, 20), at=12.0)
        fig = build_figure(run, spec)
        FigureCanvasAgg(fig).draw()
        t_axes, xy = fig.axes_time, fig.axes_xy[0]
        assert [ax.get_ylabel() for ax in t_axes] == ["Fx, Fy [N]", "probe_stroke [m]"]
        assert t_axes[-1].get_xlabel() == "time [s]" and t_axes[0].get_xlim() == (0.0, 20.0)
        for ax in t_axes + [xy]:
            lo, hi = ax.get_ylim()
            assert sum(lo <= v <= hi for v in ax.get_yticks()) >= 3    # at least 3 labelled ticks
        legend = [t.get_text() for t in t_axes[0].get_legend().get_texts()]
        assert legend == ["Fx [N]", "Fy [N]", f"capture {run.t_capture:.3f} s", "T Current 12.000 s"]
        assert (xy.get_xlabel(), xy.get_ylabel()) == ("probe_stroke [m]", "Fx [N]")
        cur = xy.get_lines()[-1]                                        # the T Current point on the loop
        k = run.frame_at(12.0)
        assert cur.get_xdata()[0] == pytest.approx(run.channel_at("probe_stroke", k))
        assert cur.get_ydata()[0] == pytest.approx(run.channel_at("Fx", k))
        fx = t_axes[0].get_lines()[0]                                   # the data as the run file holds it
        a, b = run.frame_at(0.0), run.frame_at(20.0) + 1
        assert np.array_equal(fx.get_ydata(), run.channel("Fx", a, b))
        assert "run expert_existing.h5 · existing · capture 5.982 s · T Current 12.000 s" in fig._suptitle.get_text().replace("\u00a0", " ")
        r = fig.canvas.get_renderer()                                    # legends sit above their plots' data
        for ax in t_axes + [xy]:
            assert ax.get_legend().get_window_extent(r).y0 >= ax.get_window_extent(r).y1 - 1


def test_a_compared_run_is_drawn_dashed_in_its_channels_colour(tmp_path):
    out = tmp_path / "cmp.png"
    b = EXPERT.with_name("expert_modified_dampers.h5")
    assert main(["figure", str(EXPERT), "--plot", "Fx", "--t", "0:20", "--compare", str(b), "-o", str(out)]) == 0
    with RunFile(EXPERT) as run, RunFile(b) as run_b:
        fig = build_figure(run, FigureSpec(plots=[["Fx"]], t=(0, 20)), compare=(run_b, 0.0))
        a_line, b_line = fig.axes_time[0].get_lines()[:2]
        assert b_line.get_label() == "Fx (B)" and b_line.get_color() == a_line.get_color()
        assert b_line.get_linestyle() != a_line.get_linestyle()
        k = run_b.frame_at(20.0) + 1
        assert np.array_equal(b_line.get_ydata(), run_b.channel("Fx", 0, k))
        assert "dashed: B = expert_modified_dampers.h5" in fig._suptitle.get_text().replace("\u00a0", " ")


@pytest.mark.parametrize("args, words", [
    (["--plot", "Fq"], ["expert_existing.h5", "--plot", "'Fq'", "base_loads: Fx, Fy, Fz"]),
    (["--plot", "Fx", "--xy", "probe_stroke:nope"], ["--xy", "'nope'", "probe_stroke"]),
    (["--plot", "Fx", "--t", "500:600"], ["--t", "0 to 398.4 s"]),
    (["--plot", "Fx", "--t", "20:10"], ["--t", "less than T1"]),
    (["--plot", "Fx", "--t", "0:20", "--at", "30"], ["--at", "outside the shown interval 0 to 20 s"]),
    (["--plot", "Fx", "--size", "10x10cm"], ["--size", "mm, in or px"]),
    (["--plot", "Fx", "--dpi", "0"], ["--dpi"]),
    ([], ["nothing to draw", "--plot"]),
])
def test_bad_requests_exit_2_saying_what_exists(args, words, tmp_path, capsys):
    out = tmp_path / "f.png"
    assert main(["figure", str(EXPERT), *args, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(w in err for w in words), err
    assert not out.exists()


def test_an_unknown_output_kind_and_a_bad_run_file_exit_2(tmp_path, capsys):
    assert main(["figure", str(EXPERT), "--plot", "Fx", "-o", str(tmp_path / "f.jpg")]) == 2
    assert "f.jpg: -o: the file must end in .pdf, .svg, .png" in capsys.readouterr().err
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not hdf5")
    assert main(["figure", str(bad), "--plot", "Fx", "-o", str(tmp_path / "f.png")]) == 2
    assert "bad.h5" in capsys.readouterr().err


def test_sizes_in_mm_in_and_px():
    assert parse_size("160x120mm", 300) == pytest.approx((160 / 25.4, 120 / 25.4))
    assert parse_size("6.3x4.72in", 300) == pytest.approx((6.3, 4.72))
    assert parse_size("1890x1417px", 300) == pytest.approx((6.3, 1417 / 300))


def test_peak_decimation_keeps_every_extreme():
    t = np.linspace(0, 400, 400_001)
    y = np.sin(t) * 0.1
    y[123_457], y[300_001] = 9.0, -7.0                                   # one-sample spikes
    td, yd = peak_decimate(t, y)
    assert len(td) <= 4000 and yd.max() == 9.0 and yd.min() == -7.0 and np.all(np.diff(td) >= 0)


def test_the_command_line_entry_point_writes_the_figure(tmp_path):
    out = tmp_path / "f.svg"
    r = subprocess.run([sys.executable, "-m", "app", "figure", str(EXPERT), "--plot", "Fx", "-o", str(out)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and out.is_file(), r.stderr


@pytest.mark.parametrize("size_mm, plots", [((85, 90), [["Fx", "Fy"], ["probe_stroke"]]),
                                            ((120, 80), [["Fx", "Fy", "Fz"], ["probe_stroke"]]),
                                            ((160, 120), [["Fx", "Fy", "Fz"], ["probe_stroke"]]),
                                            ((300, 200), [["Fx", "Fy", "Fz"], ["probe_stroke"], ["Mx", "My"]])])
def test_texts_stay_apart_and_inside_at_any_size(size_mm, plots, recwarn):
    """From a single journal column to a slide: tick labels of one axis never touch, every text lies inside the
    figure, constrained layout applies (a comparison run, T Current and capture in the legends)."""
    with RunFile(EXPERT.with_name("central_impact_20t.h5")) as run, RunFile(EXPERT) as run_b:
        spec = FigureSpec(plots=plots, xy=[("probe_stroke", "Fx")], t=(0, 12),
                          at=6.0, size=(size_mm[0] / 25.4, size_mm[1] / 25.4), dpi=150)
        fig = build_figure(run, spec, compare=(run_b, 0.0))
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        box = fig.bbox.padded(1)
        ticks = {id(t) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis) for t in axis.get_ticklabels()}
        shown = [t for ax in fig.axes for axis in (ax.xaxis, ax.yaxis) for t in shown_tick_labels(axis)]
        texts = [t for t in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_window_extent"))
                 if t.get_visible() and t.get_text().strip() and id(t) not in ticks] + shown
        assert texts
        for t in texts:
            e = t.get_window_extent(r)
            assert box.x0 <= e.x0 and e.x1 <= box.x1 and box.y0 <= e.y0 and e.y1 <= box.y1, (t.get_text(), e)
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                boxes = [t.get_window_extent(r) for t in shown_tick_labels(axis)]
                assert len(boxes) >= 3 or (axis is ax.xaxis and ax in fig.axes_time[:-1]), (size_mm, ax.get_ylabel())
                assert not any(p.overlaps(q) for i, p in enumerate(boxes) for q in boxes[i + 1:]), size_mm
    assert not [w for w in recwarn if "constrained_layout" in str(w.message)]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("inkscape") is None, reason="needs inkscape")
def test_inkscape_draws_the_svg_and_the_pdf(figures, tmp_path):
    for kind in ("svg", "pdf"):
        out = tmp_path / f"{kind}.png"
        subprocess.run(["inkscape", str(figures[kind]), "--export-type=png", f"--export-filename={out}",
                        "--export-dpi=96"], capture_output=True, check=True, timeout=120)
        im = np.asarray(Image.open(out).convert("RGBA")).astype(int)
        assert abs(im.shape[1] - 160 / 25.4 * 96) < 3 and abs(im.shape[0] - 120 / 25.4 * 96) < 3
        ink = (im[..., 3] > 0) & (im[..., :3].sum(axis=2) < 200)        # dark lines and text drawn
        assert ink.sum() > 1000, kind


@pytest.fixture(scope="module")
def stand_record(tmp_path_factory):
    """The central impact sample's loads as a stand record (shifted 0.1374 s, noisy), written once for the module."""
    from tests.measured_truth import write_measured_csv
    return write_measured_csv(EXPERT.with_name("central_impact_20t.h5"), tmp_path_factory.mktemp("rec") / "stand.csv",
                              0.1374, end_margin=0.5)


def test_a_measured_record_is_drawn_dashed_over_its_channel(stand_record):
    from solver.measured import compare_run
    from tests.measured_truth import EXAMPLE_MAP
    run_path, record = EXPERT.with_name("central_impact_20t.h5"), stand_record
    cmp_ = compare_run(run_path, record, EXAMPLE_MAP)
    with RunFile(run_path) as run:
        fig = build_figure(run, FigureSpec(plots=[["Fx"], ["probe_stroke"]], t=(0, 5)), measured=cmp_)
        lines = {ln.get_label(): ln for ln in fig.axes_time[0].get_lines()}
        m = lines["Fx measured"]
        assert m.get_linestyle() == "--" and m.get_color() == lines["Fx [N]"].get_color()
        assert m.get_zorder() < lines["Fx [N]"].get_zorder()                # under the run's curve
        tm = np.asarray(cmp_.record_time)
        keep = (tm >= 0) & (tm <= 5)
        assert m.get_ydata().max() == pytest.approx(np.nanmax(np.asarray(cmp_.record["Fx"])[keep]))


def test_the_command_line_takes_a_measured_record_and_names_a_missing_map(tmp_path, capsys, stand_record):
    from tests.measured_truth import EXAMPLE_MAP
    run_path = EXPERT.with_name("central_impact_20t.h5")
    record = stand_record                                            # (no stand_map.toml beside it)
    out = tmp_path / "m.svg"
    assert main(["figure", str(run_path), "--plot", "Fx", "--t", "0:5", "--measured", str(record), "--map",
                 str(EXAMPLE_MAP), "-o", str(out)]) == 0
    assert out.is_file()
    assert main(["figure", str(run_path), "--plot", "Fx", "--measured", str(record), "-o", str(tmp_path / "n.png")]) == 2
    assert "stand.csv: --map: none given and no stand_map.toml next to it" in capsys.readouterr().err
    assert not (tmp_path / "n.png").exists()
