"""Calibration: fit scenario or mechanism keys so the solver's runs match a measured record (bounded least squares,
scipy.optimize.least_squares), the candidate runs evaluated in parallel on Dask with the campaign machinery.

Keys are named `section.key` (optionally `[index]` for a list element) exactly as in the scenario TOML or in the
mechanism TOML it names: the two files have no section in common, so the name says which file it is in."""
from __future__ import annotations

import copy
import difflib
import math
import os
import re
import socket
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver.campaign import dump_toml, finished_futures, get_key, local_client, set_key, split_key, use_cache_dir
from solver.errors import InputError, read_toml
from solver.measured.channel_map import MeasuredSignals
from solver.measured.compare import ChannelMetrics, compare_arrays, load_measured

FD_STEP = 0.01          # finite-difference step of the Jacobian, relative to the key's starting value


class CalibrationError(InputError):
    """Bad calibration input (a fit key, the scenario): `file: key: problem`."""


@dataclass(frozen=True)
class FitKey:
    """One fitted key: where it lives, its unit and declared range, and its value in the scenario."""
    key: str
    file: Path               # the scenario or the mechanism TOML
    in_mechanism: bool
    unit: str
    lo: float
    hi: float
    value: float


def _mechanism_path(spath: Path, sc: dict) -> Path:
    from solver.scenario import MECHANISMS
    mech = sc.get("mechanism", "")
    if not isinstance(mech, str) or not mech:
        raise CalibrationError(spath, "mechanism", "missing; name a file in resources/mechanisms")
    return (spath.parent / mech).resolve() if mech.endswith(".toml") else MECHANISMS / f"{mech}.toml"


def _read(spath: Path) -> tuple[dict, Path, dict]:
    """The scenario's tables, its mechanism's path and tables."""
    from solver.scenario import ScenarioError
    _, sc = read_toml(spath, ScenarioError, "scenario file")
    mpath = _mechanism_path(spath, sc)
    _, mt = read_toml(mpath, ScenarioError, "mechanism file")
    return sc, mpath, mt


def fit_bounds(scenario_path, key: str) -> FitKey:
    """The fit key's file, unit, declared range and current value: THE one place the calibration asks for them.

    The range and the unit are the parameter schema's (solver/schema.py); the value is the file's."""
    spath = Path(scenario_path)
    sc, mpath, mt = _read(spath)
    if not isinstance(key, str) or split_key(key) is None:
        raise CalibrationError(spath, "--fit", f"{key!r} is not a key like \"axial_damper.friction_brake_torque_in\"")
    in_mech = split_key(key)[0][0] not in sc and split_key(key)[0][0] in mt
    tables = mt if in_mech else sc
    try:
        v = get_key(tables, key)
    except KeyError:
        names = [f"{s}.{k}" for t in (sc, mt) for s, sub in t.items() if isinstance(sub, dict) for k in sub]
        near = difflib.get_close_matches(key, names, n=1)
        raise CalibrationError(spath, f"--fit {key}", f"no such key in the scenario or its mechanism {mpath.name} "
                               + (f"(did you mean {near[0]}?)" if near else
                                  "(name it section.key as in the files, e.g. axial_damper.friction_brake_torque_in)")
                               ) from None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise CalibrationError(mpath if in_mech else spath, key, f"is {v!r}, not a number to fit")
    from solver import schema
    try:
        par = schema.lookup(key.split("[")[0], file="mechanism" if in_mech else "scenario")
    except schema.UnknownKey as exc:
        raise CalibrationError(mpath if in_mech else spath, key, f"not declared in the parameter schema ({exc})") from None
    lo, hi, unit = par.lo, par.hi, par.unit
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise CalibrationError(mpath if in_mech else spath, key, "has no declared range to fit within")
    return FitKey(key, mpath if in_mech else spath, in_mech, unit, lo, hi, float(v))


def _write_candidate(d: Path, sc: dict, mt: dict, mpath: Path, keys, values, tag: str) -> Path:
    """Scenario (and mechanism, if a mechanism key is set) TOML with the keys set, written into d; its path."""
    d, s, m = Path(d).resolve(), copy.deepcopy(sc), None
    for (k, in_mech), v in zip(keys, values):
        if in_mech:
            m = m if m is not None else copy.deepcopy(mt)
            set_key(m, k, float(v))
        else:
            set_key(s, k, float(v))
    if m is not None:
        mp = d / f"{tag}_{mpath.stem}.toml"
        mp.write_text(dump_toml(m), encoding="utf-8")
        s["mechanism"] = str(mp)
    else:
        s["mechanism"] = str(mpath) if str(sc.get("mechanism", "")).endswith(".toml") else sc["mechanism"]
    sp = d / f"{tag}.toml"
    sp.write_text(dump_toml(s), encoding="utf-8")
    return sp


def run_candidate(task: dict) -> dict:
    """Dask task: run one candidate scenario (texts in `task`) to t_end; the mapped channels and the time."""
    use_cache_dir(task.get("cache_dir"))
    from solver.runfile import RunFile
    from solver.simulate import run_scenario
    out = {"status": "ok", "message": "", "worker": f"{socket.gethostname()}:{os.getpid()}"}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dockmnemo-fit-") as td:
        sp, rp = Path(td) / "candidate.toml", Path(td) / "candidate.h5"
        text = task["scenario_text"]
        if task.get("mechanism_text") is not None:
            (Path(td) / "candidate_mechanism.toml").write_text(task["mechanism_text"], encoding="utf-8")
        sp.write_text(text, encoding="utf-8")
        try:
            run_scenario(sp, rp, t_end=task["t_end"])
        except Exception as exc:   # noqa: BLE001  (a diverged or refused candidate is a result, not a crash)
            out["status"], out["message"] = "error", f"{type(exc).__name__}: {exc}"
        if rp.is_file():
            try:
                with RunFile(rp) as run:
                    out["time"] = np.asarray(run.time, float)
                    out["values"] = {ch: np.asarray(run.channel(ch), float) for ch in task["channels"]}
            except Exception as exc:   # noqa: BLE001
                out["status"], out["message"] = "error", f"{type(exc).__name__}: {exc}"
    out["wall"] = time.perf_counter() - t0
    return out


class CalibrationCancelled(Exception):
    """Stopped before there was any point to keep (during the scenario's own run)."""


class _Stopped(Exception):
    """Ctrl+C (cancel) or the run budget: least_squares is left, the best point so far is kept."""


@dataclass
class Calibration:
    """What a calibration found: the keys, start and fitted values with 1-sigma uncertainties, the metrics before
    and after, the offset used, how many runs it took and how it ended."""
    keys: list[FitKey]
    x0: np.ndarray
    x: np.ndarray
    sigma: np.ndarray
    offset: float
    before: list[ChannelMetrics]
    after: list[ChannelMetrics]
    runs: int
    wall_time: float
    status: str              # "converged", "cancelled", "run budget reached", or least_squares' message
    cost0: float = math.nan
    cost: float = math.nan
    rounds: int = 0
    startup: float = math.nan    # s until the scenario's own run was back (cluster start, kernels loaded, first run)
    written: list[Path] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [f"{k.key} = {x:.6g} ± {f'{s:.2g}' if math.isfinite(s) else 'n/a'} {k.unit}".rstrip()
                + f"  (was {k.value:.6g})" for k, x, s in zip(self.keys, self.x, self.sigma)]


class _Runs:
    """Candidate runs on a Dask client, cached by parameter vector; the best (lowest cost) point so far."""

    def __init__(self, client, spath, sc, mt, mpath, fits, channels, cache_dir, cancel, progress, max_runs):
        self.client, self.spath, self.sc, self.mt, self.mpath = client, spath, sc, mt, mpath
        self.fits, self.channels, self.cache_dir = fits, channels, cache_dir
        self.cancel, self.progress, self.max_runs = cancel, progress, max_runs
        self.cache: dict[tuple, dict] = {}
        self.done = 0
        self.rounds = 0          # batches of runs started together (the wall time on enough workers)

    def task(self, x, t_end) -> dict:
        with tempfile.TemporaryDirectory(prefix="dockmnemo-fit-") as td:
            sp = _write_candidate(Path(td), self.sc, self.mt, self.mpath, [(f.key, f.in_mechanism) for f in self.fits],
                                  x, "candidate")
            text = sp.read_text(encoding="utf-8")
            mtext = None
            mp = Path(td) / f"candidate_{self.mpath.stem}.toml"
            if mp.is_file():
                mtext = mp.read_text(encoding="utf-8")
                text = text.replace(str(mp), "candidate_mechanism.toml")
        return {"scenario_text": text, "mechanism_text": mtext, "t_end": t_end, "channels": self.channels,
                "cache_dir": str(self.cache_dir) if self.cache_dir else None}

    def get(self, xs, t_end) -> list[dict]:
        """Results for parameter vectors xs (run in parallel those not cached)."""
        keys = [tuple(np.round(np.asarray(x, float), 12)) for x in xs]   # a run to a later t_end serves any earlier
        todo = list(dict.fromkeys(k for k in keys if k not in self.cache))
        if todo:
            if self.cancel is not None and self.cancel():   # also between rounds: a round may end within one wait
                raise _Stopped("cancelled")
            if self.done + len(todo) > self.max_runs:
                raise _Stopped("run budget reached")
            self.rounds += 1
            futs = {self.client.submit(run_candidate, self.task(np.array(k), t_end), pure=False): k for k in todo}
            for done, pending in finished_futures(futs, 0.2):
                for f in done:
                    try:
                        self.cache[futs[f]] = f.result()
                    except Exception as exc:   # noqa: BLE001  (a lost worker)
                        self.cache[futs[f]] = {"status": "error", "message": f"task failed: {exc}"}
                    self.done += 1
                    if self.progress:
                        self.progress(self.done, self.max_runs)
                if pending and self.cancel is not None and self.cancel():
                    self.client.cancel(list(pending))
                    raise _Stopped("cancelled")
        return [self.cache[k] for k in keys]


def _residual_of(sig: MeasuredSignals, channels: list[str], weights: dict[str, float], q: np.ndarray):
    """residual(result) -> (run - measured) * weight / scale over the record's span, channels end to end. `q`: the
    run's time grid in record time (t + offset). Channels of one unit share one scale, the largest RMS among them
    (a channel holding only noise weighs little); a failed or short candidate gets a large residual."""
    inside = (q >= sig.time[0]) & (q <= sig.time[-1])
    n = len(q)
    meas = {ch: np.interp(q[inside], sig.time, sig.values[ch]) for ch in channels}
    unit_rms: dict[str, float] = {}
    for ch in channels:
        unit_rms[sig.units[ch]] = max(unit_rms.get(sig.units[ch], 0.0), float(np.sqrt(np.mean(meas[ch] ** 2))))
    norm = {ch: weights.get(ch, 1.0) / max(unit_rms[sig.units[ch]], 1e-12) for ch in channels}

    def residual(res: dict) -> np.ndarray:
        out = []
        for ch in channels:
            v = res.get("values", {}).get(ch)
            run_v = np.full(n, np.nan) if v is None else np.concatenate([v[:n], np.full(max(0, n - len(v)), np.nan)])
            r = (run_v[inside] - meas[ch]) * norm[ch]
            out.append(np.where(np.isfinite(r), r, 10.0))
        return np.concatenate(out)
    return residual


def _sigma(J, r: np.ndarray, k: int) -> np.ndarray:
    """1-sigma of the k fitted (scaled) values from the Jacobian at the solution: diag((J^T J)^-1) * sum(r^2)/(m - k);
    NaN without a Jacobian or with a singular one."""
    if J is None or len(r) <= k:
        return np.full(k, math.nan)
    try:
        return np.sqrt(np.diag(np.linalg.inv(J.T @ J)) * float(r @ r) / (len(r) - k))
    except np.linalg.LinAlgError:
        return np.full(k, math.nan)


def calibrate(scenario_path, measured_path, map_path, keys: list[str], offset: float | None = None,
              workers: int | None = None, scheduler: str | None = None, client=None, cache_dir=None,
              max_runs: int = 40, progress=None, cancel=None, out_path=None) -> Calibration:
    """Fit `keys` of the scenario (or its mechanism) to a measured record; write the fitted TOML to `out_path` if
    given (also when cancelled: the best point so far). Raises CalibrationError / MeasuredError / ScenarioError."""
    from scipy.optimize import least_squares

    from solver.scenario import load_model
    t_wall = time.perf_counter()
    spath = Path(scenario_path)
    model = load_model(spath)           # the scenario as it stands must load
    sc, mpath, mt = _read(spath)
    if not keys:
        raise CalibrationError(spath, "--fit", "no key to fit")
    if len(set(keys)) != len(keys):
        raise CalibrationError(spath, "--fit", "a key is named twice")
    fits = [fit_bounds(spath, k) for k in keys]
    from solver.mechanisms.probe_cone.simulate import channel_infos
    run_units = {c.name: c.unit for c in channel_infos(model)}
    cmap, sig = load_measured(measured_path, map_path, run_units)
    weights = cmap.weights()
    if not any(weights.get(ch, 1.0) > 0 for ch in cmap.run_channels):
        raise CalibrationError(cmap.path, "weight", "every channel has weight 0: nothing to fit")
    if out_path is not None:   # before any run: a fit whose result cannot be written is not started
        try:
            Path(out_path).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CalibrationError(out_path, "/", f"cannot be written ({exc.strerror or exc})") from None
        if Path(out_path).is_dir():
            raise CalibrationError(out_path, "/", "is a directory; name the fitted scenario TOML to write")
    x0 = np.array([f.value for f in fits])
    scale = np.array([abs(f.value) if f.value != 0 else (f.hi - f.lo if math.isfinite(f.hi - f.lo) else 1.0)
                      for f in fits])
    own = client is None
    if own:
        if scheduler:
            from distributed import Client
            try:
                client = Client(scheduler, timeout=10)
            except (OSError, TimeoutError) as exc:
                raise CalibrationError(scheduler, "--scheduler", f"cannot connect ({exc})") from None
        else:
            client = local_client(workers, cache_dir)
    try:
        runs = _Runs(client, spath, sc, mt, mpath, fits, cmap.run_channels, cache_dir, cancel, progress, max_runs)
        parallel = sum(client.nthreads().values()) > 1
        lo_u = np.array([f.lo for f in fits]) / scale
        hi_u = np.array([f.hi for f in fits]) / scale
        span = hi_u - lo_u
        lo_u, hi_u = lo_u + 1e-9 * np.minimum(span, 1.0), hi_u - 1e-9 * np.minimum(span, 1.0)

        def steps(u):
            return [FD_STEP if u[i] + FD_STEP <= hi_u[i] else -FD_STEP for i in range(len(u))]

        def probes(u):
            return [u + h * np.eye(len(u))[i] for i, h in enumerate(steps(u))]
        u0 = np.clip(x0 / scale, lo_u, hi_u)
        best = {"u": u0, "cost": math.inf}
        # the scenario's own run: the alignment (kept for every candidate) and the metrics before
        off_guess = offset if offset is not None else cmap.align.offset
        out_step = model.output_step
        t_end0 = min(model.duration, sig.time[-1] - (off_guess if off_guess is not None else min(sig.time[0], 0.0))
                     + out_step)
        first = [u0 * scale] + ([p * scale for p in probes(u0)] if parallel else [])
        try:   # with idle workers, the first Jacobian's runs start with it (each worker loads the kernels at once)
            nominal = runs.get(first, t_end0)[0]
        except _Stopped as exc:
            raise CalibrationCancelled(f"calibration {exc} before the scenario's own run finished: nothing to keep") \
                from None
        startup = time.perf_counter() - t_wall
        if nominal["status"] != "ok" and "time" not in nominal:
            raise CalibrationError(spath, "/", f"the scenario's own run failed: {nominal['message']}")
        before = compare_arrays(nominal["time"], nominal["values"], sig, cmap, offset, spath)
        off = before.offset
        t_end = min(model.duration, sig.time[-1] - off + out_step)
        n = int(math.floor(t_end / out_step + 1e-9)) + 1
        t = nominal["time"][:n] if len(nominal["time"]) >= n else None
        if t is None:   # the record reaches past the first run: run the scenario again to the record's end
            runs.cache.clear()
            nominal = runs.get([u0 * scale], t_end)[0]
            t = nominal["time"][:n]
        if len(t) < n and nominal["status"] != "ok":
            raise CalibrationError(spath, "/", f"the scenario's own run stops at {t[-1]:g} s, before the record's "
                                   f"end (run time {t_end:g} s): {nominal['message']}")
        residual = _residual_of(sig, [ch for ch in cmap.run_channels if weights.get(ch, 1.0) > 0], weights, t + off)

        def fun(u):
            xs = [u] + (probes(u) if parallel else [])   # the Jacobian's runs alongside, when workers are idle
            r = residual(runs.get([x * scale for x in xs], t_end)[0])
            c = 0.5 * float(r @ r)
            if c < best["cost"]:
                best.update(u=np.array(u, float), cost=c)
            return r

        def jac(u):
            rs = [residual(res) for res in runs.get([x * scale for x in [u, *probes(u)]], t_end)]
            return np.column_stack([(rs[i + 1] - rs[0]) / h for i, h in enumerate(steps(u))])
        r0 = residual(runs.get([u0 * scale], t_end)[0])
        cost0 = 0.5 * float(r0 @ r0)
        status, J = "", None
        try:
            sol = least_squares(fun, u0, jac=jac, bounds=(lo_u, hi_u), method="trf", x_scale=1.0,
                                xtol=1e-4, ftol=1e-8, gtol=1e-10, max_nfev=max_runs)
            status = "converged" if sol.status > 0 else sol.message
            if sol.cost <= best["cost"]:
                best.update(u=sol.x, cost=float(sol.cost))
                J = sol.jac
        except _Stopped as exc:
            status = str(exc)
        u_best = best["u"]
        r_best = residual(runs.get([u_best * scale], t_end)[0]) if math.isfinite(best["cost"]) else r0
        if J is None and status != "cancelled":
            try:
                runs.max_runs += len(fits)       # the uncertainty's Jacobian is worth its runs
                J = jac(u_best)
            except _Stopped:
                J = None
        sigma = _sigma(J, r_best, len(fits)) * scale
        best_res = runs.get([u_best * scale], t_end)[0]
        after = compare_arrays(best_res["time"], best_res["values"], sig, cmap, off, spath) \
            if "time" in best_res else before
        cal = Calibration(fits, x0, u_best * scale, sigma, off, before.metrics, after.metrics, runs.done,
                          time.perf_counter() - t_wall, status, cost0, 0.5 * float(r_best @ r_best), runs.rounds,
                          startup)
    finally:
        if own:
            cluster = getattr(client, "cluster", None)
            client.close()
            if cluster is not None and not scheduler:
                cluster.close()
    if out_path is not None:
        try:
            cal.written = write_fitted(spath, cal, out_path, measured_path)
        except OSError as exc:
            raise CalibrationError(out_path, "/", f"cannot be written ({exc.strerror or exc})") from None
    return cal


def _set_in_doc(doc, key: str, value: float):
    parts, idx = split_key(key)
    cur = doc
    for p in parts[:-1]:
        cur = cur[p]
    if idx is None:
        cur[parts[-1]] = value
    else:
        cur[parts[-1]][idx] = value


def write_fitted(scenario_path, cal: Calibration, out_path, measured_path) -> list[Path]:
    """The scenario (and, if a mechanism key was fitted, the mechanism, next to it as <mechanism>_fitted.toml) with
    the fitted values, comments and layout kept (tomlkit); a comment at the top says what was fitted to what."""
    import tomlkit
    spath, out = Path(scenario_path), Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    sc, mpath, _ = _read(spath)
    head = [f"# fitted by dockmnemo calibrate to {Path(measured_path).name} ({cal.status}, time offset "
            f"{cal.offset:.6f} s):"] + [f"#   {line}" for line in cal.lines()]
    sdoc = tomlkit.parse(spath.read_text(encoding="utf-8"))
    written = []
    mech_fits = [(k, x) for k, x in zip(cal.keys, cal.x) if k.in_mechanism]
    if mech_fits:
        mdoc = tomlkit.parse(mpath.read_text(encoding="utf-8"))
        for k, x in mech_fits:
            _set_in_doc(mdoc, k.key, float(x))
        mout = out.parent / f"{mpath.stem}_fitted.toml"
        mout.write_text("\n".join(head) + "\n" + tomlkit.dumps(mdoc), encoding="utf-8")
        written.append(mout)
        sdoc["mechanism"] = mout.name
    elif str(sc.get("mechanism", "")).endswith(".toml") and out.parent.resolve() != spath.parent.resolve():
        sdoc["mechanism"] = str(mpath)
    for k, x in zip(cal.keys, cal.x):
        if not k.in_mechanism:
            _set_in_doc(sdoc, k.key, float(x))
    out.write_text("\n".join(head) + "\n" + tomlkit.dumps(sdoc), encoding="utf-8")
    return [out, *written]
