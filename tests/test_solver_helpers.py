"""Helpers for the solver tests: scenario variants written to temporary files."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCEN = ROOT / "resources" / "scenarios"


def variant(tmp_path, base: str, subs: dict[str, str], extra: str = "") -> Path:
    """Copy scenario `base` with `key = value` lines replaced (regex on the key) and extra TOML appended."""
    text = (SCEN / base).read_text()
    for key, val in subs.items():
        text, n = re.subn(rf"(?m)^{re.escape(key)}\s*=.*$", f"{key} = {val}", text)
        assert n, key
    p = tmp_path / f"{Path(base).stem}_variant.toml"
    p.write_text(text + "\n" + extra)
    return p
