"""Synthetic "measured" records for the measured-data tests: a run's base loads and stroke written as a stand would
record them (resources/measured/example_map.toml: lbf and lbf*in in a turned and offset sensor frame, mm, ms),
shifted in time and with noise."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from solver.runfile import RunFile

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_MAP = ROOT / "resources" / "measured" / "example_map.toml"
LBF = 4.4482216152605          # N
LBF_IN = LBF * 0.0254          # N*m
R_SENSOR = Rotation.from_euler("ZYX", [30.0, -15.0, 90.0], degrees=True).as_matrix()   # as in example_map.toml
ORIGIN = np.array([0.120, 0.040, -0.060])                                               # m


def sensor_frame(F: np.ndarray, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Base-frame loads (n, 3) as the sensor sees them: F_s = R^T F, M_s = R^T (M - r x F) (N, N*m)."""
    return F @ R_SENSOR, (M - np.cross(ORIGIN, F)) @ R_SENSOR


def write_measured_csv(run_path, out_path, shift: float, noise_N: float = 10.0, rate: float = 1000.0,
                       seed: int = 7, delimiter: str = ",", end_margin: float = 0.05) -> Path:
    """Write run_path's base loads and probe stroke as a stand record: t_measured = t_run + shift, at `rate` Hz,
    Gaussian noise of `noise_N` newtons on the forces (and noise_N * 0.05 m on the moments) before the unit change."""
    with RunFile(run_path) as run:
        t = np.asarray(run.time, float)
        F = np.column_stack([run.channel(n) for n in ("Fx", "Fy", "Fz")])
        M = np.column_stack([run.channel(n) for n in ("Mx", "My", "Mz")])
        stroke = np.asarray(run.channel("probe_stroke"), float)
    tm = np.arange(0.0, t[-1] + shift - end_margin, 1.0 / rate)
    tr = tm - shift                                      # the run's time of each measured sample
    F = np.column_stack([np.interp(tr, t, F[:, k]) for k in range(3)])
    M = np.column_stack([np.interp(tr, t, M[:, k]) for k in range(3)])
    s = np.interp(tr, t, stroke)
    rng = np.random.default_rng(seed)
    F = F + rng.normal(0.0, noise_N, F.shape)
    M = M + rng.normal(0.0, noise_N * 0.05, M.shape)
    s = s + rng.normal(0.0, 2e-4, s.shape)
    Fs, Ms = sensor_frame(F, M)
    out_path = Path(out_path)
    with open(out_path, "w", newline="") as fh:
        w = csv.writer(fh, delimiter=delimiter)
        w.writerow(["time_ms", "LC_Fx", "LC_Fy", "LC_Fz", "LC_Mx", "LC_My", "LC_Mz", "stroke_mm"])
        for k in range(len(tm)):
            w.writerow([f"{tm[k] * 1e3:.4f}", *(f"{x / LBF:.5f}" for x in Fs[k]), *(f"{x / LBF_IN:.4f}" for x in Ms[k]),
                        f"{s[k] * 1e3:.4f}"])
    return out_path
