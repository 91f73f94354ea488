"""The generic mechanism type: a run file from another writer, or of a type this program does not know.

It opens with its channels, bodies and parts: no sketch, one box of bars per channel group that holds devices
(channels with a full-scale range or a place), the spacecraft readouts and the base loads."""
from __future__ import annotations

import math

from solver.mechanisms.base import BarGroup, DeviceLayout, MechanismType


def device_layout(run) -> DeviceLayout:
    """A bar box per channel group with devices; "around" where every device in it has a place."""
    if run is None:
        return DeviceLayout(None, ())
    groups: dict[str, list] = {}
    for info in run.channels.values():
        if math.isfinite(info.stroke) or math.isfinite(info.place):
            groups.setdefault(info.group, []).append(info)
    out = []
    for g, infos in groups.items():
        around = all(math.isfinite(i.place) for i in infos)
        out.append(BarGroup(g, (g.replace("_", " "),), arrangement="around" if around else "stack"))
    return DeviceLayout(None, tuple(out))


GENERIC = MechanismType(name="generic", title="docking mechanism (generic)", layout=device_layout)
