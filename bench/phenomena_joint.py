"""Phenomenon V4 (docs/phenomena.md): the modified dampers' expert run for 40 s with the joint moved further toward
the base (a mechanism file copy per shift d; the limiter, lever pivots and housing exit stay in place in space, as
modified_dampers.toml's [geometry_changes] do for its 0.10 m): the limiter strikes after capture.
    python bench/phenomena_joint.py OUT_DIR 0.10 0.15 0.20 0.25
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from phenomena import LIMITER, limiter_series  # noqa: E402
from solver.runfile import RunFile  # noqa: E402
from solver.simulate import run_scenario  # noqa: E402

R = ROOT / "resources"
D = Path(sys.argv[1])
D.mkdir(parents=True, exist_ok=True)
mech = (R / "mechanisms" / "modified_dampers.toml").read_text()
scen = (R / "scenarios" / "expert_modified_dampers.toml").read_text()
for d in [float(x) for x in sys.argv[2:]]:
    m = mech
    for key, base, sign in (("housing.gimbal_offset", 0.05, 1), ("housing.length", 0.35, 1),
                            ("limiter.back_rim_x_in_housing", -0.2175, -1), ("alignment_lever.pivot_x", 0.0, -1)):
        m, n = re.subn(rf"(?m)^{re.escape(key)}\s*=\s*[-0-9.eE]+", f"{key} = {base + sign * d!r}", m)
        assert n == 1, key
    tag = f"d{int(round(d * 100)):02d}"
    (D / f"md_{tag}.mechanism.toml").write_text(m)
    s, n = re.subn(r'(?m)^mechanism\s*=\s*"modified_dampers"', f'mechanism = "md_{tag}.mechanism.toml"', scen)
    assert n == 1
    s = re.sub(r"(?m)^output_step\s*=\s*[0-9.eE+-]+", "output_step = 0.002", s)
    sp = D / f"expert_md_{tag}.toml"
    sp.write_text(s)
    out = D / f"expert_md_{tag}.h5"
    run_scenario(sp, out, t_end=40.0)
    with RunFile(out) as r:
        tc = r.meta.t_capture
        a, b = limiter_series(r, tc, tc + 10), limiter_series(r, tc + 10, r.time[-1])
        nb = sum(1 for e in r.events if e.kind == "contact_begin" and e.pair in LIMITER)
        print(f"joint moved {d:.2f} m: capture {tc:.3f} s, first limiter touch {a['first_touch']:.2f} s, peaks > 1 kN in "
              f"capture..+10 s {a['peaks']} (max {a['peak']:.0f} N), later {b['peaks']} (max {b['peak']:.0f} N), "
              f"limiter contact begins {nb}", flush=True)
