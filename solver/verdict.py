"""Capture verdict: configurable criteria (resources/capture_criteria.toml) evaluated on a run (no Qt).

Each mechanism type names its criteria file (solver.mechanisms); used by the bottom pane's facts, `dockmnemo info` and campaign summaries (viewer.capture_verdict re-exports it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver.errors import InputError, read_toml

DEFAULT_CRITERIA = Path(__file__).resolve().parent.parent / "resources" / "capture_criteria.toml"
PASS, FAIL, NA = "pass", "fail", "n/a"


class CriteriaError(InputError):
    """A criteria file that cannot be used: names the file, the key and what is wrong."""


@dataclass
class Criteria:
    """Limits a successful capture must respect."""
    by_time: float = math.inf                                          # s
    base_loads: dict[str, float] = field(default_factory=dict)         # channel -> peak |value| limit
    interface_loads: dict[str, float] = field(default_factory=dict)    # channel -> peak |value| limit (interface)
    strokes: dict[str, tuple[float, float]] = field(default_factory=dict)  # channel -> (min, max)
    release_channel: str = ""                                          # a count that must not drop after capture
    release_drop: float = 0.5
    final: dict[str, float] = field(default_factory=dict)              # channel -> least value at the run's end
    titles: dict[str, str] = field(default_factory=dict)               # the checks' words ([titles]; see TITLES)
    type_titles: dict[str, str] = field(default_factory=dict)          # the words of the type's section names
    sections: dict[str, str] = field(default_factory=dict)             # generic section -> its name in the file
    path: str = ""

    def title(self, check: str) -> str:
        """The words a report uses for a check: the file's [titles], else the type's, else the generic ones."""
        return self.titles.get(check, self.type_titles.get(check, TITLES[check]))


SECTIONS = ("capture", "base_loads", "interface_loads", "strokes", "release", "final", "titles")
TITLES = {"base_loads": "base loads", "interface_loads": "interface loads", "strokes": "strokes", "release": "release"}
"""The checks a criteria file's [titles] may name, with their generic words (a type's file gives its own)."""


def section_aliases() -> dict[str, tuple[str, str]]:
    """Section names the mechanism types' criteria files may use for a generic one: name -> (generic, words)."""
    from solver import mechanisms
    out = {}
    for name in mechanisms.names():
        out.update(mechanisms.mechanism_type(name).criteria_sections)
    return out


def release_titles(criteria: Criteria | None = None) -> list[str]:
    """The words a verdict line may use for the release check: the criteria's, else every type's and the generic."""
    if criteria is not None:
        return [criteria.title("release")]
    return list(dict.fromkeys([TITLES["release"], *(w for g, w in section_aliases().values() if g == "release")]))


def _number(path, key, v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise CriteriaError(path, key, f"expected a finite number, found {v!r}")
    return float(v)


def load_criteria(path=DEFAULT_CRITERIA) -> Criteria:
    """Read and check a criteria TOML; raises CriteriaError with the file and key on bad input."""
    path = Path(path)
    _, cfg = read_toml(path, CriteriaError, "criteria file")
    aliases = section_aliases()
    c = Criteria(path=str(path))
    body = {}
    for k, v in cfg.items():
        generic, words = aliases.get(k, (k, ""))
        if generic not in SECTIONS:
            raise CriteriaError(path, k, f"unknown section (expected {', '.join(SECTIONS)}, or a type's name "
                                         f"for one: {', '.join(sorted(aliases))})")
        if not isinstance(v, dict):
            raise CriteriaError(path, k, "expected a table [section]")
        if generic in c.sections:
            raise CriteriaError(path, k, f"give [{c.sections[generic]}] or [{k}], not both")
        c.sections[generic] = k
        body[generic] = v
        if words:
            c.type_titles[generic] = words
    sec = c.sections.get
    cap = body.get("capture", {})
    if "by_time" in cap:
        c.by_time = _number(path, f"{sec('capture')}.by_time", cap["by_time"])
        if c.by_time <= 0:
            raise CriteriaError(path, f"{sec('capture')}.by_time", f"must be a positive time, found {c.by_time}")
    for s in ("base_loads", "interface_loads"):
        for name, v in body.get(s, {}).items():
            lim = _number(path, f"{sec(s)}.{name}", v)
            if lim <= 0:
                raise CriteriaError(path, f"{sec(s)}.{name}", f"limit must be positive, found {lim}")
            getattr(c, s)[name] = lim
    for name, v in body.get("strokes", {}).items():
        key = f"{sec('strokes')}.{name}"
        if not isinstance(v, list) or len(v) != 2:
            raise CriteriaError(path, key, f"expected [min, max], found {v!r}")
        lo, hi = _number(path, key, v[0]), _number(path, key, v[1])
        if lo >= hi:
            raise CriteriaError(path, key, f"min {lo} is not below max {hi}")
        c.strokes[name] = (lo, hi)
    for name, v in body.get("final", {}).items():
        c.final[name] = _number(path, f"{sec('final')}.{name}", v)
    for name, v in body.get("titles", {}).items():
        check = aliases.get(name, (name, ""))[0]
        if check not in TITLES:
            raise CriteriaError(path, f"titles.{name}", f"unknown check (expected {', '.join(TITLES)})")
        if not isinstance(v, str) or (not v.strip() and check not in ("strokes", "release")):   # "": no such check
            raise CriteriaError(path, f"titles.{name}", f"expected the check's words, found {v!r}")
        c.titles[check] = v.strip()
    rel = body.get("release", {})
    for k in rel:
        if k not in ("channel", "release_drop"):
            raise CriteriaError(path, f"{sec('release')}.{k}", "unknown key (expected channel, release_drop)")
    ch = rel.get("channel", "")
    if not isinstance(ch, str):
        raise CriteriaError(path, f"{sec('release')}.channel", f"expected a channel name, found {ch!r}")
    c.release_channel = ch
    if "release_drop" in rel:
        c.release_drop = _number(path, f"{sec('release')}.release_drop", rel["release_drop"])
        if c.release_drop <= 0:
            raise CriteriaError(path, f"{sec('release')}.release_drop", f"must be positive, found {c.release_drop}")
    return c


@dataclass
class Check:
    """One criterion's outcome; `items` are (quantity, value, limit text, status) lines for the report."""
    name: str
    status: str
    summary: str
    items: list[tuple[str, str, str, str]] = field(default_factory=list)


@dataclass
class Verdict:
    checks: list[Check]
    criteria_path: str = ""
    peaks_from: str = "solver steps"       # where peaks and ranges were read: "solver steps" or "frames"

    @property
    def passed(self) -> bool:
        """True when no criterion fails (criteria the run has no channel for are n/a)."""
        return all(c.status != FAIL for c in self.checks)

    def line(self) -> str:
        """One line: PASS or FAIL and each criterion in a few words (failures first)."""
        order = sorted(self.checks, key=lambda c: {FAIL: 0, PASS: 1, NA: 2}[c.status])
        return ("PASS" if self.passed else "FAIL") + ": " + "; ".join(c.summary for c in order)

    def report(self) -> str:
        """Multi-line report: the line, then every quantity checked with its value and limit."""
        out = [f"capture verdict  {self.line()}", f"  criteria       {self.criteria_path}",
               f"  peaks from     {self.peaks_from}"]
        for c in self.checks:
            for q, v, lim, st in c.items:
                out.append(f"  {st.upper():<5} {q:<20} {v:<28} {lim}")
        return "\n".join(out)


def _fmt(v: float, unit: str) -> str:
    if not math.isfinite(v):
        return "—"
    if unit in ("N", "N*m") and abs(v) >= 1000:
        return f"{v / 1000:.2f} k{unit}"
    return f"{v:.4g} {unit}".rstrip()


def _check_capture(run, c: Criteria) -> Check:
    tc = run.t_capture
    limit = f"by {c.by_time:g} s" if math.isfinite(c.by_time) else "any time"
    if not math.isfinite(tc):
        return Check("capture", FAIL, "no capture", [("T capture", "none", limit, FAIL)])
    t_rel = tc - float(run.time[0])
    ok = t_rel <= c.by_time
    summ = f"captured at {tc:.3f} s" + ("" if ok else f" > {c.by_time:g} s")
    return Check("capture", PASS if ok else FAIL, summ, [("T capture", f"{tc:.3f} s", limit, PASS if ok else FAIL)])


def solver_rate(run) -> bool:
    """True when the run file holds its channels' extrema over every solver step (/extrema): peaks are read there,
    else from the stored frames (older files, runs cut short; the report says so)."""
    ext = getattr(run, "extrema_step", None)
    return ext is not None and math.isfinite(ext())


def channel_range(run, name: str) -> tuple[float, float, float, float]:
    """(min, time of min, max, time of max) of a channel: at the solver's rate where the file has them, else over
    its frames (NaN where it has no finite value)."""
    e = run.extrema(name) if solver_rate(run) else None
    if e is not None:
        return e
    v = run.channel(name)
    if not np.isfinite(v).any():
        return math.nan, math.nan, math.nan, math.nan
    i, j = int(np.nanargmin(v)), int(np.nanargmax(v))
    return float(v[i]), float(run.time[i]), float(v[j]), float(run.time[j])


def _abs_peak(run, name: str) -> tuple[float, float]:
    lo, tlo, hi, thi = channel_range(run, name)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return math.nan, math.nan
    return (lo, tlo) if abs(lo) > abs(hi) else (hi, thi)


def _check_loads(run, c: Criteria, section: str = "base_loads") -> Check:
    items, fails = [], []
    for name, lim in getattr(c, section).items():
        if name not in run.channels:
            items.append((f"peak |{name}|", "no channel", f"<= {lim:g}", NA))
            continue
        unit = run.channels[name].unit
        v, t = _abs_peak(run, name)
        ok = not (abs(v) > lim)
        items.append((f"peak |{name}|", f"{_fmt(abs(v), unit)} at {t:.3f} s", f"<= {_fmt(lim, unit)}",
                      PASS if ok else FAIL))
        if not ok:
            fails.append(f"peak |{name}| {_fmt(abs(v), unit)} > {_fmt(lim, unit)} at {t:.3f} s")
    title = c.title(section)
    return _summarise(section, items, fails, f"{title} n/a", f"peak {title} within limits")


def _check_strokes(run, c: Criteria) -> Check:
    items, fails = [], []
    for name, (lo, hi) in c.strokes.items():
        if name not in run.channels:
            items.append((name, "no channel", f"[{lo:g}, {hi:g}]", NA))
            continue
        unit = run.channels[name].unit
        vmin, tmin, vmax, tmax = channel_range(run, name)
        if not (math.isfinite(vmin) and math.isfinite(vmax)):
            items.append((name, "all NaN", f"[{lo:g}, {hi:g}]", NA))
            continue
        ok = lo <= vmin and vmax <= hi
        items.append((name, f"{vmin:.4g} .. {vmax:.4g} {unit}".rstrip(), f"within [{lo:g}, {hi:g}] {unit}".rstrip(),
                      PASS if ok else FAIL))
        if not ok:
            out = []
            if vmax > hi:
                out.append(f"{vmax:.4g} > {hi:g} {unit} at {tmax:.3f} s")
            if vmin < lo:
                out.append(f"{vmin:.4g} < {lo:g} {unit} at {tmin:.3f} s")
            fails.append(f"{name} " + " and ".join(out).replace("  ", " "))
    title = c.title("strokes")
    return _summarise("strokes", items, fails, f"{title} n/a", f"{title} within range")


def _summarise(name: str, items, fails: list[str], na_text: str, pass_text: str) -> Check:
    """One check from its item rows: n/a if no item could be checked, else FAIL listing the failures, else PASS."""
    if not any(st != NA for *_, st in items):
        return Check(name, NA, na_text, items)
    if fails:
        return Check(name, FAIL, ", ".join(fails), items)
    return Check(name, PASS, pass_text, items)


def _check_release(run, c: Criteria) -> Check:
    """A count channel (e.g. how many capture devices are engaged) that must not drop by release_drop after capture."""
    name, title = c.release_channel, c.title("release")
    if name not in run.channels:
        return Check("release", NA, f"{title} n/a", [(title, "no channel", name, NA)])
    tc = run.t_capture
    if not math.isfinite(tc):
        return Check("release", NA, f"{title} n/a (no capture)", [(title, "no capture", name, NA)])
    i0 = min(int(np.searchsorted(run.time, tc - 1e-9)), run.n_frames - 1)   # the first frame at or after capture
    v = run.channel(name, i0)
    v0 = float(v[0])
    drop = np.flatnonzero(v < v0 - c.release_drop)
    if len(drop):
        t = float(run.time[i0 + int(drop[0])])
        return Check("release", FAIL, f"{title} at {t:.3f} s ({name} {v0:g} -> {float(v[drop[0]]):g})",
                     [(title, f"at {t:.3f} s", f"{name} stays >= {v0 - c.release_drop:g}", FAIL)])
    return Check("release", PASS, f"no {title}", [(title, "none", f"{name} stays >= {v0 - c.release_drop:g}", PASS)])


def _check_final(run, c: Criteria) -> Check:
    """Channels that must end at or above a value (e.g. the hooks closed at the end of the run)."""
    items, fails = [], []
    for name, least in c.final.items():
        if name not in run.channels:
            items.append((f"{name} at the end", "no channel", f">= {least:g}", NA))
            continue
        v = float(run.channel(name)[-1])
        ok = v >= least
        items.append((f"{name} at the end", f"{v:g}", f">= {least:g}", PASS if ok else FAIL))
        if not ok:
            fails.append(f"{name} {v:g} < {least:g} at the end")
    return _summarise("final", items, fails, "final state n/a", "final state reached")


def criteria_file_for(run) -> Path:
    """The capture criteria of the run's mechanism type (DEFAULT_CRITERIA where the type names none)."""
    from solver import mechanisms
    return mechanisms.for_run(run).criteria_file or DEFAULT_CRITERIA


def evaluate(run, criteria: Criteria | None = None) -> Verdict:
    """Evaluate the criteria on a RunFile (None: its mechanism type's criteria file)."""
    c = criteria if criteria is not None else load_criteria(criteria_file_for(run))
    checks = [_check_capture(run, c)]
    if c.interface_loads:
        checks.append(_check_loads(run, c, "interface_loads"))
    if c.base_loads or not c.interface_loads:
        checks.append(_check_loads(run, c))
    if c.strokes and c.title("strokes"):                    # (criteria without strokes: no such check at all)
        checks.append(_check_strokes(run, c))
    if c.release_channel and c.title("release"):
        checks.append(_check_release(run, c))
    if c.final:
        checks.append(_check_final(run, c))
    how = (f"solver steps ({run.extrema_step() * 1e3:g} ms)" if solver_rate(run) else
           "frames (the file has no solver-rate extrema: a peak between frames is missed)")
    return Verdict(checks, c.path, how)
