"""Reading a measured record (stand or flight test): CSV, HDF5 (a dataset per column), MATLAB .mat v5 and v7.3."""
from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np

from solver.errors import InputError

CSV_SUFFIXES = (".csv", ".txt", ".tsv", ".dat")
HDF5_SUFFIXES = (".h5", ".hdf5", ".hdf")
MAT_SUFFIXES = (".mat",)
_DELIMITERS = ",;\t| "


class MeasuredError(InputError):
    """Bad measured file or channel map: `file: key: problem`."""


@dataclass
class MeasuredRecord:
    """The numeric columns of a measured file, by name, as stored (no units applied); `others`: what the file holds
    that is not a column (a 2-D dataset, text), by name, and why."""
    path: Path
    columns: Mapping[str, np.ndarray]
    others: dict[str, str] = field(default_factory=dict)

    def column(self, name: str, where: str, map_path) -> np.ndarray:
        """A column named in the map at `where`; MeasuredError naming the map key if the file has no such column."""
        if name not in self.columns:
            if name in self.others:
                raise MeasuredError(map_path, where, f"{name!r} in {self.path} is {self.others[name]}, not a column "
                                                     "(a column is one-dimensional: one dataset per column)")
            from solver.errors import unknown
            raise MeasuredError(map_path, where, f"{name!r}: {unknown(name, self.columns, 'column')} in {self.path}")
        return self.columns[name]


def read_record(path) -> MeasuredRecord:
    """Read a measured file by its suffix; MeasuredError(file, column or "/", problem) when it cannot be read."""
    path = Path(path)
    if path.is_dir():
        raise MeasuredError(path, "/", "is a directory, not a measured file")
    if not path.is_file():
        raise MeasuredError(path, "/", "file does not exist")
    suffix = path.suffix.lower()
    others: dict[str, str] = {}
    if suffix in CSV_SUFFIXES:
        cols = _read_csv(path)
    elif suffix in HDF5_SUFFIXES:
        cols = _read_hdf5(path, others)
    elif suffix in MAT_SUFFIXES:
        cols = _read_mat(path, others)
    else:
        raise MeasuredError(path, "/", f"unknown file type {suffix or '(no suffix)'!r}: expected "
                            f"{', '.join(CSV_SUFFIXES + HDF5_SUFFIXES + MAT_SUFFIXES)}")
    if not cols:
        raise MeasuredError(path, "/", "holds no numeric column" + (
            f" ({'; '.join(f'{k}: {v}' for k, v in list(others.items())[:5])})" if others else ""))
    return MeasuredRecord(path, cols, others)


HEAD_LINES = 50   # lines the delimiter is sniffed from


def _text_lines(path: Path):
    """(line number, line) of a UTF-8 text file, streamed (a BOM at the start dropped); MeasuredError naming the
    offset of the first byte that is not UTF-8."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            for n, line in enumerate(fh, 1):
                yield n, line.rstrip("\r\n")
    except UnicodeDecodeError:
        raise MeasuredError(path, "/", _not_utf8(path)) from None
    except OSError as exc:
        raise MeasuredError(path, "/", f"cannot be read ({exc.strerror or exc})") from None


def _not_utf8(path: Path) -> str:
    """Where a file stops being UTF-8 (read in blocks: bounded memory)."""
    import codecs
    dec, off = codecs.getincrementaldecoder("utf-8")(), 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            try:
                dec.decode(block)
            except UnicodeDecodeError as exc:
                at = max(off + exc.start - len(exc.object) + len(block), off)
                with open(path, "rb") as g:
                    g.seek(at)
                    return f"not UTF-8 text (byte 0x{g.read(1)[0]:02x} at offset {at})"
            off += len(block)
    return "not UTF-8 text"


def _data_lines(path: Path, limit: int | None = None):
    """(line number, line) of the lines that are neither empty nor comments (#), streamed."""
    k = 0
    for n, ln in _text_lines(path):
        if ln.strip() and not ln.lstrip().startswith("#"):
            yield n, ln
            k += 1
            if limit is not None and k >= limit:
                return


def _cells(line: str, delim: str) -> list[str]:
    return [c for c in next(csv.reader([line], delimiter=delim, skipinitialspace=True)) if c.strip() or delim != " "]


def _read_csv(path: Path) -> dict[str, np.ndarray]:
    """A delimited text file with a header row (delimiter found by csv.Sniffer); lines starting with # are skipped.
    The numbers are parsed by numpy.loadtxt, streamed (memory ~ the array); on a bad line the file is read again
    line by line to name it."""
    lines = list(_data_lines(path, HEAD_LINES))
    if len(lines) < 2:
        raise MeasuredError(path, "/", "needs a header row and at least one row of numbers")
    try:
        delim = csv.Sniffer().sniff("\n".join(ln for _, ln in lines), delimiters=_DELIMITERS).delimiter
    except csv.Error:    # rows of uneven length: the delimiter the header uses most (the rows are checked below)
        counts = {d: lines[0][1].strip().count(d) for d in _DELIMITERS}
        delim = max(counts, key=counts.get)
        if counts[delim] == 0:
            raise MeasuredError(path, f"line {lines[0][0]}", "cannot tell the delimiter (expected one of , ; tab | "
                                "space between the column names)") from None
    head_n = lines[0][0]
    header = [h.strip().lstrip("\ufeff").strip() for h in _cells(lines[0][1], delim)]
    if all(_is_number(h) for h in header):
        raise MeasuredError(path, "line 1", "no header row: the first line must name the columns")
    for k, h in enumerate(header):
        if not h:
            raise MeasuredError(path, f"line {head_n}", f"column {k + 1} has no name")
        if header.count(h) > 1:
            raise MeasuredError(path, f"line {head_n}", f"column name {h!r} is used twice")
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            data = np.loadtxt(fh, delimiter=None if delim == " " else delim, comments="#", skiprows=head_n,
                              ndmin=2, dtype=float, quotechar='"')
        if data.shape[1] != len(header):
            raise ValueError("columns")
    except UnicodeDecodeError:
        raise MeasuredError(path, "/", _not_utf8(path)) from None
    except ValueError:   # a line that numpy cannot parse: find and name it (else parse as Python does)
        data = _parse_rows(path, header, delim, head_n)
    return {h: data[:, k] for k, h in enumerate(header)}


def _parse_rows(path: Path, header: list[str], delim: str, head_n: int) -> np.ndarray:
    """The rows after the header, line by line (csv + float); MeasuredError naming the first bad line and column."""
    from array import array
    values = array("d")
    for n, ln in _data_lines(path):
        if n <= head_n:
            continue
        cells = _cells(ln, delim)
        if len(cells) != len(header):
            raise MeasuredError(path, f"line {n}", f"{len(cells)} values, the header names {len(header)} columns")
        try:
            values.extend(float(c) for c in cells)
        except ValueError:
            bad = next(k for k, c in enumerate(cells) if not _is_number(c))
            raise MeasuredError(path, f"line {n}, column {header[bad]}", f"not a number: {cells[bad].strip()!r}") \
                from None
    if not values:
        raise MeasuredError(path, "/", "needs a header row and at least one row of numbers")
    return np.frombuffer(values, float).reshape(-1, len(header)).copy()


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _vector(a) -> np.ndarray | None:
    """A 1-D float array from a numeric array of shape (n,), (n, 1) or (1, n); None for anything else."""
    a = np.asarray(a)
    if a.dtype.kind not in "iuf" or a.size < 1:
        return None
    if a.ndim == 2 and 1 in a.shape:
        a = a.ravel()
    return a.astype(float) if a.ndim == 1 else None


# A dataset may declare at most this many times the bytes it stores (deflate cannot expand more than ~1032:1), plus
# SIZE_SLACK: a corrupt or hostile shape (a 7 TiB dataset in a small file) is refused before anything is allocated.
DEFLATE_MAX_RATIO = 1032
SIZE_SLACK = 1 << 20


class _H5Columns(Mapping):
    """The 1-D numeric datasets of an HDF5 file by name, each read when first asked for (a record's other columns
    are never loaded: memory ~ the columns the map uses)."""

    def __init__(self, path: Path, names: dict[str, str]):
        self.path, self._names, self._cache = path, names, {}

    def __getitem__(self, name: str) -> np.ndarray:
        v = self._cache.get(name)
        if v is None:
            ds = self._names[name]
            try:
                with h5py.File(self.path, "r") as f:
                    v = _vector(f[ds][()])
            except (OSError, RuntimeError, ValueError, TypeError, KeyError) as exc:
                raise MeasuredError(self.path, ds, f"cannot be read ({exc})") from None
            except MemoryError:
                raise MeasuredError(self.path, ds, "too large to read into memory") from None
            self._cache[name] = v
        return v

    def __iter__(self):
        return iter(self._names)

    def __len__(self):
        return len(self._names)


def _h5_columns(f: h5py.File, path: Path, others: dict[str, str]) -> _H5Columns:
    """Every 1-D numeric dataset (or (n, 1), (1, n)) by its path (without the leading /); a name unique in the file
    also by itself. Declared sizes are checked first; `others` gets the datasets that are not columns, and why."""
    names: dict[str, str] = {}
    size = path.stat().st_size

    def visit(name, obj):
        if not isinstance(obj, h5py.Dataset) or name.startswith("#refs#") or obj.shape is None:
            return
        shape, kind = tuple(obj.shape), obj.dtype.kind
        if kind not in "iuf":
            others[name] = f"a dataset of dtype {obj.dtype} (not numbers)"
            return
        declared = math.prod(shape) * obj.dtype.itemsize
        stored = obj.id.get_storage_size()
        if declared > DEFLATE_MAX_RATIO * min(stored, size) + SIZE_SLACK:
            raise MeasuredError(path, name, f"declares shape {shape} ({declared:,} bytes) but stores {stored:,} bytes "
                                            f"in a {size:,}-byte file: more than compression can expand (corrupt)")
        if len(shape) == 1 or len(shape) == 2 and 1 in shape:
            if math.prod(shape) >= 1:
                names[name] = name
                return
            others[name] = "an empty dataset"
        else:
            others[name] = f"a {len(shape)}-D dataset of shape {shape}"
    try:
        f.visititems(visit)
    except MeasuredError:
        raise
    except (RuntimeError, KeyError, ValueError) as exc:
        raise MeasuredError(path, "/", f"not a readable HDF5 file ({exc})") from None
    short: dict[str, list[str]] = {}
    for name in list(names) + list(others):
        short.setdefault(name.rsplit("/", 1)[-1], []).append(name)
    for s, full in short.items():
        if len(full) == 1 and s not in names and s not in others:
            if full[0] in names:
                names[s] = full[0]
            else:
                others[s] = others[full[0]]
    return _H5Columns(path, names)


def _read_hdf5(path: Path, others: dict[str, str]) -> Mapping[str, np.ndarray]:
    try:
        with h5py.File(path, "r") as f:
            return _h5_columns(f, path, others)
    except OSError as exc:
        raise MeasuredError(path, "/", f"not a readable HDF5 file ({exc})") from None


def _read_mat(path: Path, others: dict[str, str]) -> Mapping[str, np.ndarray]:
    """MATLAB v5 (scipy.io.loadmat) or v7.3 (an HDF5 file: h5py); every numeric vector variable."""
    import scipy.io
    if h5py.is_hdf5(path):               # v7.3 is HDF5 behind a 512-byte MATLAB header
        return _read_hdf5(path, others)
    try:
        data = scipy.io.loadmat(path, squeeze_me=True)
    except NotImplementedError:          # v7.3: scipy says "use HDF reader for matlab v7.3 files"
        return _read_hdf5(path, others)
    except (ValueError, TypeError, OSError) as exc:
        raise MeasuredError(path, "/", f"not a readable MATLAB file ({exc})") from None
    except MemoryError:
        raise MeasuredError(path, "/", "too large to read into memory") from None
    out = {}
    for k, v in data.items():
        if k.startswith("__"):
            continue
        if (vec := _vector(np.atleast_1d(v))) is not None:
            out[k] = vec
        elif isinstance(v, np.ndarray) and v.ndim >= 2:
            others[k] = f"a {v.ndim}-D variable of shape {v.shape}"
    return out
