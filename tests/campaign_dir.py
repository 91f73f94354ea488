"""A small REAL campaign directory for the envelope-map tests: 4 solver runs (2x2 grid, 6 s each) on Dask.

Slow closing (0.05 m/s) and fast closing at small yaw are not captured in 6 s (failures: full runs kept);
fast closing (0.16 m/s) at 3.066 deg yaw is captured with the verdict PASS (kept only in the summary, so a
click on it re-runs it). Run index = 2 * closing-speed level + yaw level (grid, first parameter slowest).
"""
from __future__ import annotations

from pathlib import Path

CAMPAIGN = """\
name = "envmap_test"
comment = "2x2 grid for the envelope-map tests (run 3 = demo_small's run 12, which passes)"
base_scenario = "{base}"
mechanism = "existing"
t_end = 6.0
sampling = "grid"
count = {count}
keep = "failures"

[[parameter]]
name = "closing_speed"
key = "initial.closing_speed"
label = "closing speed"
values = {speeds}

[[parameter]]
name = "lateral_miss_y"
key = "initial.lateral_miss[0]"
label = "lateral miss y"
values = [0.01]

[[parameter]]
name = "yaw_deg"
key = "initial.angular_miss_deg[2]"
label = "yaw misalignment"
values = {yaws}
"""


def make(directory: Path, speeds=(0.05, 0.16), yaws=(0.47, 3.066)) -> Path:
    """Run the campaign (4 runs by default) into `directory` on an in-process Dask cluster (one worker thread)."""
    from distributed import Client

    from solver.campaign import SCENARIOS, run_campaign
    directory = Path(directory)
    toml = directory.parent / f"{directory.name}.toml"
    text = CAMPAIGN.format(base=(SCENARIOS / "nominal_existing.toml").as_posix(), count=len(speeds) * len(yaws),
                           speeds=list(speeds), yaws=list(yaws))
    toml.write_text(text, encoding="utf-8")
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        run_campaign(toml, directory, client=client)
    return directory
