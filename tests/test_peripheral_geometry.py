"""resources/peripheral/peripheral_idss.toml: every value names a public source or is marked assumed, and the
IDSS figures match the ones quoted in the project's sources (the interface definition document's envelope)."""
import math
import re
import tomllib
from pathlib import Path

TOML = Path(__file__).resolve().parents[1] / "resources" / "peripheral" / "peripheral_idss.toml"
SOURCES = ("[IDD]", "[NDS]", "[APAS]", "[001]", "[003]")


def test_every_value_names_a_source_or_is_marked_assumed():
    bare = []
    for n, line in enumerate(TOML.read_text().splitlines(), 1):
        if re.match(r"\s*[A-Za-z_]+\s*=", line):
            comment = line.split("#", 1)[1] if "#" in line else ""
            if "assumed" not in comment and not any(s in comment for s in SOURCES):
                bare.append(f"{TOML.name}:{n}: {line.strip()}")
    assert not bare, "values with neither a source nor 'assumed':\n" + "\n".join(bare)


def test_idss_figures_as_quoted():
    cfg = tomllib.loads(TOML.read_text())
    ic, lim = cfg["initial_conditions"], cfg["limits"]
    assert (ic["closing_speed_min"], ic["closing_speed_max"], ic["lateral_rate"]) == (0.05, 0.10, 0.04)
    assert (ic["angular_rate"], ic["lateral_misalignment"], ic["angular_misalignment"]) == (0.20, 0.10, 4.0)
    assert (lim["soft_capture_tension"], lim["soft_capture_bending"]) == (3900.0, 2800.0)
    assert (cfg["interface"]["passage_diameter"], cfg["mass"]["active_unit"]) == (0.685, 340.0)
    assert cfg["interface"]["hook_pairs"] == cfg["hooks"]["count"] == 12
    assert cfg["guide_petals"]["count"] == cfg["latches"]["count"] == 3
    gr, gp = cfg["guide_ring"], cfg["guide_petals"]
    assert gr["face_inner_radius"] < gr["face_outer_radius"]
    # the petal tips' inner surface sits on the passage with petals (the lean is chosen so)
    tip = gp["root_radius"] - gp["height"] * math.tan(math.radians(gp["lean"]))
    assert abs(2 * tip - cfg["interface"]["passage_diameter"]) < 0.005
