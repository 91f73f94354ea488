"""Reading a measured record (stand or flight test): CSV, HDF5 (a dataset per column), MATLAB .mat v5 and v7.3."""
from __future__ import annotations

import csv
from dataclasses import dataclass
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
    """The numeric columns of a measured file, by name, as stored (no units applied)."""
    path: Path
    columns: dict[str, np.ndarray]

    def column(self, name: str, where: str, map_path) -> np.ndarray:
        """A column named in the map at `where`; MeasuredError naming the map key if the file has no such column."""
        if name not in self.columns:
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
    if suffix in CSV_SUFFIXES:
        cols = _read_csv(path)
    elif suffix in HDF5_SUFFIXES:
        cols = _read_hdf5(path)
    elif suffix in MAT_SUFFIXES:
        cols = _read_mat(path)
    else:
        raise MeasuredError(path, "/", f"unknown file type {suffix or '(no suffix)'!r}: expected "
                            f"{', '.join(CSV_SUFFIXES + HDF5_SUFFIXES + MAT_SUFFIXES)}")
    if not cols:
        raise MeasuredError(path, "/", "holds no numeric column")
    return MeasuredRecord(path, cols)


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


def _h5_columns(f: h5py.File) -> dict[str, np.ndarray]:
    """Every 1-D numeric dataset by its path (without the leading /); a name unique in the file also by itself."""
    out: dict[str, np.ndarray] = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and not name.startswith("#refs#") and obj.shape is not None:
            v = _vector(obj[()]) if obj.ndim in (1, 2) else None
            if v is not None:
                out[name] = v
    f.visititems(visit)
    short: dict[str, list[str]] = {}
    for name in out:
        short.setdefault(name.rsplit("/", 1)[-1], []).append(name)
    for s, names in short.items():
        if len(names) == 1 and s not in out:
            out[s] = out[names[0]]
    return out


def _read_hdf5(path: Path) -> dict[str, np.ndarray]:
    try:
        with h5py.File(path, "r") as f:
            return _h5_columns(f)
    except OSError as exc:
        raise MeasuredError(path, "/", f"not a readable HDF5 file ({exc})") from None


def _read_mat(path: Path) -> dict[str, np.ndarray]:
    """MATLAB v5 (scipy.io.loadmat) or v7.3 (an HDF5 file: h5py); every numeric vector variable."""
    import scipy.io
    if h5py.is_hdf5(path):               # v7.3 is HDF5 behind a 512-byte MATLAB header
        return _read_hdf5(path)
    try:
        data = scipy.io.loadmat(path, squeeze_me=True)
    except NotImplementedError:          # v7.3: scipy says "use HDF reader for matlab v7.3 files"
        return _read_hdf5(path)
    except (ValueError, TypeError, OSError) as exc:
        raise MeasuredError(path, "/", f"not a readable MATLAB file ({exc})") from None
    out = {}
    for k, v in data.items():
        if not k.startswith("__") and (vec := _vector(np.atleast_1d(v))) is not None:
            out[k] = vec
    return out
