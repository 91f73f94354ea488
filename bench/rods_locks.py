"""Why Tables 2-3 differ at the second lock: each hypothesis (which state the table prints, the clamp's stiffness and
damping, a plastic lock, the text's band rule) run on cases 4.2 and 4.3 by both formulations, side by side with the
paper (docs/rods.md holds this script's output).

    python -m bench.rods_locks
"""
from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from bench.rods_tables import CLAMPS, TABLE2, TABLE3, fmt, ok, variant
from solver.mechanisms.rods.simulate import TABLE_STATE, lock_states
from solver.runfile import RunFile
from solver.simulate import SolverDiverged, run_scenario

SHOW = ("Omega", "v_Cy", "theta_C", "phi1", "alpha1", "beta1")
COL = {n: TABLE_STATE.index(n) for n in SHOW}
HYPOTHESES = (   # (label, scenario key substitutions, which state: "lock" instant or the "frame" after it)
    ("first output frame after the lock (1 ms grid; the old bench)", {}, "frame"),
    ("state at the lock instant (before the clamp acts)", {}, "lock"),
    ("clamp damping 0 (lock instant)", {"damping": "0.0"}, "lock"),
    ("clamp damping 100 N*m*s (lock instant)", {"damping": "100.0"}, "lock"),
    ("clamp stiffness 1e6 N*m (lock instant)", {"stiffness": "1.0e6"}, "lock"),
    ("clamp stiffness 1e8 N*m (lock instant)", {"stiffness": "1.0e8", "step": "1.0e-5"}, "lock"),
    ("plastic lock: the hinge rate absorbed, momentum kept (lock instant)",
     {"rule": '"crossing"\nlock = "plastic"'}, "lock"),
    ("the text's rule |angle| < 0.01 (lock instant)", {"rule": '"band"'}, "lock"),
    ("crossing checked at the 1 ms frames only (its state at the lock)", {"rule": '"frames"'}, "lock1ms"),
    ("RK4 step 1e-5 s (lock instant)", {"step": "1.0e-5"}, "lock"),
    ("RK4 step 5e-5 s (lock instant)", {"step": "5.0e-5"}, "lock"),
)


def run(case: str, form: str, subs: dict, d: Path, out_step: str) -> tuple[list, list]:
    """(lock times, [state dict per lock]) of one variant: at the lock instant, or the first frame after it."""
    p = variant(case, form, d)
    text = p.read_text()
    for k, v in {"output_step": out_step, **subs}.items():
        text, n = re.subn(rf"^{k} = .*$", f"{k} = {v}", text, count=1, flags=re.M)
        assert n == 1, k
    p = p.with_name(f"{p.stem}_{abs(hash(text))}.toml")
    p.write_text(text)
    with RunFile(run_scenario(p, p.with_suffix(".h5"))) as r:
        if out_step != "1.0e-3":
            ls = lock_states(r)
            return [t for t, _ in ls], [s for _, s in ls]
        times = [e.time for e in r.events if e.kind == "phase" and e.text.startswith("clamp ")]
        states = []
        for t in times:
            i = r.frame_at(t + 1e-9)
            i += r.time[i] < t - 1e-9
            states.append({n: r.channel_at(n, i) * (3.141592653589793 / 180 if r.channels[n].unit.startswith("deg")
                                                    else 1.0) for n in SHOW})
        return times, states


def main() -> int:
    out = []
    with tempfile.TemporaryDirectory() as td:
        d = Path(td)
        for case, table, title in (("deploy_rotation", TABLE2, "Case 4.2 (Table 2)"),
                                   ("deploy_thrust", TABLE3, "Case 4.3 (Table 3)")):
            for fi, form in enumerate(("general", "reduced")):
                paper = ", ".join(f"{n} {fmt(table[1][fi][COL[n]])}" for n in SHOW)
                out.append(f"\n**{title}, {form}: the second lock** (paper: clamps at "
                           f"{', '.join(f'{t:.3f}' for t in CLAMPS[case][fi])} s; {paper})\n")
                out.append("| hypothesis | locks, s | " + " | ".join(SHOW) + " |")
                out.append("|---|---|" + "---|" * len(SHOW))
                for label, subs, which in HYPOTHESES:
                    try:
                        times, states = run(case, form, subs, d, {"frame": "1.0e-3", "lock1ms": "1.00e-3"}.get(
                            which, "1.0e-4"))
                    except SolverDiverged as exc:
                        out.append(f"| {label} | diverged ({exc}) |" + " |" * len(SHOW))
                        continue
                    cells = []
                    for n in SHOW:
                        if len(states) < 2:
                            cells.append("-")
                            continue
                        v, paper = states[1][n], table[1][fi][COL[n]]
                        cells.append(f"{fmt(v)}{ok(v, paper)} ({100 * (v - paper) / abs(paper):+.1f} %)")
                    out.append(f"| {label} | {', '.join(f'{t:.4f}' for t in times)} | " + " | ".join(cells) + " |")
                    print(out[-1], file=sys.stderr, flush=True)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
