"""Whether a type's runner loads or compiles its listed kernel units (solver.warmup) before its kernels start: a run in
a fresh process with a spy on the kernels class's constructor."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CODE = """
import importlib, sys
from solver.scenario import load_model
S = importlib.import_module(sys.argv[1])
m = load_model(sys.argv[3])
units = S.kernel_units(m)
seen = []
K = getattr(S, sys.argv[2])
init = K.__init__
def spy(self, *a, **k):
    seen.append(all(tuple(sig) in d.overloads for _, d, sig in units))
    init(self, *a, **k)
K.__init__ = spy
getattr(S, sys.argv[4])(m, sys.argv[3], sys.argv[5], t_end=float(sys.argv[6]))
print(seen, all([tuple(s) for s in d.overloads] == [tuple(sig)] for _, d, sig in units))
"""


def compiled_before_kernels(module: str, kernels: str, runner: str, scenario, out, t_end: float) -> list[str]:
    """What the spy saw: ["[True]", "True"] when every unit was in its dispatcher as `kernels` was made and the run
    needed no other overload."""
    p = subprocess.run([sys.executable, "-c", CODE, module, kernels, str(scenario), runner, str(out), str(t_end)],
                       capture_output=True, text=True, cwd=ROOT, timeout=900)
    return p.stdout.split() or [p.stderr[-2000:]]
