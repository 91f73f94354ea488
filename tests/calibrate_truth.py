"""Synthetic truths for the calibration tests and bench: the solver run with mechanism or scenario keys scaled, written
as a MATLAB v5 stand record (kN, kN*m, ms; the sensor turned 90 deg about x and offset 0.25 m; 500 Hz; 2 % noise;
shifted 0.137 s) with its channel map."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.io
import tomlkit

from solver.runfile import RunFile

ROOT = Path(__file__).resolve().parent.parent
CENTRAL = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"
MECHANISMS = ROOT / "resources" / "mechanisms"
SHIFT = 0.137                  # s, t_measured = t_run + SHIFT
RATE = 500.0                   # Hz
NOISE = 0.02                   # of the largest |F| (forces) and |M| (moments)
ORIGIN = np.array([0.0, 0.25, 0.0])              # m, the sensor origin in the base frame
R_SENSOR = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])   # 90 deg about x (columns: sensor axes)

MAP_TEXT = """# synthetic stand record (tests/calibrate_truth.py): kN, kN*m in a sensor frame turned 90 deg about x
[time]
column = "t_ms"
unit = "ms"

[align]
channel = "Fx"
threshold = 300.0
window = [-0.05, 0.3]
max_shift = 0.05

[[sensor]]
columns = ["F1", "F2", "F3", "M1", "M2", "M3"]
force_unit = "kN"
moment_unit = "kN*m"
euler_deg = [90.0, 0.0, 0.0]
euler_sequence = "xyz"
origin = [0.0, 0.25, 0.0]
"""


def _set(doc, key: str, factor: float):
    sec, _, name = key.partition(".")
    idx = None
    if name.endswith("]"):
        name, idx = name[:-1].split("[")
        doc[sec][name][int(idx)] = float(doc[sec][name][int(idx)]) * factor
    else:
        doc[sec][name] = float(doc[sec][name]) * factor


def truth_scenario(d: Path, factors: dict[str, float], scenario: Path = CENTRAL, name: str = "truth") -> Path:
    """A copy of `scenario` (and of its mechanism) in d with each key multiplied by its factor; the scenario's path."""
    d = Path(d)
    sc = tomlkit.parse(Path(scenario).read_text())
    mech = tomlkit.parse((MECHANISMS / f"{sc['mechanism']}.toml").read_text())
    for key, f in factors.items():
        _set(sc if key.split(".")[0] in sc else mech, key, f)
    (d / f"{name}_mechanism.toml").write_text(tomlkit.dumps(mech))
    sc["mechanism"] = f"{name}_mechanism.toml"
    (d / f"{name}.toml").write_text(tomlkit.dumps(sc))
    return d / f"{name}.toml"


def write_record(run_path, out_path, seed: int = 1, shift: float = SHIFT, rate: float = RATE, noise: float = NOISE,
                 end_margin: float = 0.0) -> Path:
    """The run's base loads as the stand records them (MATLAB v5, kN, kN*m, ms, sensor frame), with Gaussian noise of
    `noise` times the largest |F| and |M|; returns the path. The map is MAP_TEXT (write_map)."""
    with RunFile(run_path) as run:
        t = np.asarray(run.time, float)
        F = np.column_stack([run.channel(n) for n in ("Fx", "Fy", "Fz")])
        M = np.column_stack([run.channel(n) for n in ("Mx", "My", "Mz")])
    tm = np.arange(0.0, t[-1] + shift - end_margin, 1.0 / rate)
    tr = np.clip(tm - shift, t[0], t[-1])          # before the run's start: its first sample (no contact yet)
    F = np.column_stack([np.interp(tr, t, F[:, k]) for k in range(3)])
    M = np.column_stack([np.interp(tr, t, M[:, k]) for k in range(3)])
    Fs, Ms = F @ R_SENSOR, (M - np.cross(ORIGIN, F)) @ R_SENSOR        # base -> sensor frame, moments about its origin
    rng = np.random.default_rng(seed)
    Fs = Fs + rng.normal(0.0, noise * np.abs(F).max(), Fs.shape)
    Ms = Ms + rng.normal(0.0, noise * np.abs(Ms).max(), Ms.shape)
    cols = {"t_ms": tm * 1e3, **{f"F{k + 1}": Fs[:, k] / 1e3 for k in range(3)},
            **{f"M{k + 1}": Ms[:, k] / 1e3 for k in range(3)}}
    scipy.io.savemat(out_path, {k: v[:, None] for k, v in cols.items()}, format="5")
    return Path(out_path)


def write_map(path) -> Path:
    Path(path).write_text(MAP_TEXT)
    return Path(path)
