"""Step-halving study of a scenario: the same run at the scenario's step and at other factors of it, compared by
peak base force (whole run and before the drive starts) and moment, energy balance (|total - initial| / initial kinetic energy), capture and hard-dock time.
    python bench/step_study.py resources/scenarios/expert_existing.toml [--factors 2 1 0.5] [--t-end SECONDS]
        [--output-step S] [--keep DIR] [--unchecked]
--unchecked skips the loader's step check and a stiff contact's substeps (study only: steps beyond omega*h <= 1 or
decay*h <= 2, plain steps where a contact would take substeps).
Also counts latch releases and contact begin/end events; a diverged run is reported with its diagnostic.
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def scenario_with_step(src: Path, factor: float, out_dir: Path) -> tuple[Path, float]:
    """A copy of scenario `src` with its [solver] step multiplied by `factor` (mechanism named as in the original)."""
    from solver.scenario import load_model
    h = load_model(src).step * factor
    text, n = re.subn(r"(?m)^step\s*=\s*[0-9.eE+-]+", f"step = {h!r}", src.read_text(), count=1)
    if n != 1:
        raise SystemExit(f"{src}: no 'step = ...' line under [solver]")
    dst = out_dir / f"{src.stem}_x{factor:g}.toml"
    dst.write_text(text)
    return dst, h


def stats(path) -> dict:
    """Peak |F| and |M| on the mechanism base, energy balance, capture and hard-dock times of a run file."""
    from solver.runfile import RunFile
    with RunFile(path) as r:
        F = np.sqrt(sum(r.channel(c) ** 2 for c in ("Fx", "Fy", "Fz")))
        M = np.sqrt(sum(r.channel(c) ** 2 for c in ("Mx", "My", "Mz")))
        E, KE = r.channel("total_energy"), r.channel("kinetic_energy")
        ev = {e.kind: e.time for e in r.events if e.kind in ("capture", "hard_dock")}
        pre = r.channel("cyclogram_phase") < 2 if "cyclogram_phase" in r.channels else np.ones(len(F), bool)
        # latch releases are sensor events (the drive's phase event says "stop clutches released")
        releases = sum(1 for e in r.events if e.kind == "sensor" and "released" in e.text)
        contacts = sum(1 for e in r.events if e.kind.startswith("contact"))
        return dict(releases=releases, contacts=contacts, F=float(F.max()), t_F=float(r.time[int(F.argmax())]),
                    F_pre=float(F[pre].max()), t_F_pre=float(r.time[pre][int(F[pre].argmax())]), M=float(M.max()),
                    E=float(np.abs(E - E[0]).max() / KE[0]), capture=ev.get("capture", np.nan),
                    hard_dock=ev.get("hard_dock", np.nan), t_end=float(r.time[-1]))


def main(argv=None):
    from solver.simulate import ScenarioError, SolverDiverged, run_scenario
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--factors", type=float, nargs="+", default=[2.0, 1.0, 0.5])
    ap.add_argument("--t-end", type=float, default=None)
    ap.add_argument("--output-step", type=float, default=None, help="frame step (s) of the compared runs")
    ap.add_argument("--keep", type=Path, default=None, help="write the runs into this directory and keep them")
    ap.add_argument("--unchecked", action="store_true", help="skip the loader's step check and substeps (study only)")
    a = ap.parse_args(argv)
    if a.unchecked:
        import solver.mechanisms.probe_cone.model as probe_cone_model
        probe_cone_model._step_rates = lambda P, cgeo, step: (0.0, 0.0, np.ones(len(cgeo.pair_groups)))
    rows = {}
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        out_dir = a.keep or d
        out_dir.mkdir(parents=True, exist_ok=True)
        mech = a.scenario.parent
        for f in a.factors:
            scen, h = scenario_with_step(a.scenario, f, mech if _local_mechanism(a.scenario) else d)
            try:
                t0 = time.perf_counter()
                run_scenario(scen, out_dir / f"{scen.stem}.h5", t_end=a.t_end, output_step=a.output_step)
                rows[f] = (h, stats(out_dir / f"{scen.stem}.h5"), time.perf_counter() - t0)
            except ScenarioError as e:
                print(f"  step x{f:g}: refused: {e}")
            except SolverDiverged as e:
                print(f"  step x{f:g} ({h * 1e3:g} ms): diverged: {e}")
            finally:
                if scen.parent == mech:
                    scen.unlink()
    if not rows:
        return
    ref = rows.get(1.0, next(iter(rows.values())))[1]
    print(f"{a.scenario.name}: step study (differences relative to the scenario's own step)")
    for f, (h, s, w) in rows.items():
        print(f"  step {h * 1e3:7.4f} ms: peak |F| {s['F']:9.1f} N at {s['t_F']:7.3f} s ({(s['F'] / ref['F'] - 1) * 100:+6.2f} %)"
              f", before the drive {s['F_pre']:9.1f} N at {s['t_F_pre']:7.3f} s ({(s['F_pre'] / ref['F_pre'] - 1) * 100:+6.2f} %)"
              f", peak |M| {s['M']:7.1f} N*m ({(s['M'] / ref['M'] - 1) * 100:+6.2f} %), energy balance {s['E'] * 100:.4f} %"
              f" of KE0, capture {s['capture']:.4f} s, hard dock {s['hard_dock']:.2f} s, end {s['t_end']:.2f} s"
              f", {s['releases']} latch releases, {s['contacts']} contact events"
              f" ({w:.0f} s wall)")


def _local_mechanism(scen: Path) -> bool:
    """True when the scenario names a mechanism file next to itself (the copy must sit beside it)."""
    import tomllib
    return str(tomllib.loads(scen.read_text()).get("mechanism", "")).endswith(".toml")


if __name__ == "__main__":
    main()
