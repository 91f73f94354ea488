"""The error of bad input files (scenario, mechanism, campaign, criteria): names the file, the key and the problem;
the reading of an input TOML file and the message for a key no reader knows."""
from __future__ import annotations

import difflib
import tomllib
from pathlib import Path


class InputError(ValueError):
    """Bad input in a file: `path: key: problem`."""

    def __init__(self, path, key: str, problem: str):
        self.path, self.key, self.problem = str(path), key, problem
        super().__init__(f"{self.path}: {key}: {problem}")


def read_text(path, err=InputError, kind: str = "TOML file") -> str:
    """The text of an input file; `err(path, "/", problem)` when it is missing, a directory or not UTF-8 text."""
    path = Path(path)
    if path.is_dir():
        raise err(path, "/", f"is a directory, not a {kind}")
    if not path.exists():
        raise err(path, "/", "file does not exist")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise err(path, "/", f"cannot be read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise err(path, "/", f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    return text


def read_toml(path, err=InputError, kind: str = "TOML file") -> tuple[str, dict]:
    """The text and tables of an input TOML file; `err(path, "/", problem)` as read_text, or when it is not valid
    TOML (the parser's message, with line and column)."""
    text = read_text(path, err, kind)
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise err(path, "/", f"not valid TOML ({exc})") from None


def unknown(name: str, known, what: str = "key") -> str:
    """'unknown key (did you mean <nearest known>?)'; without a near one, the known names listed."""
    near = difflib.get_close_matches(name, sorted(known), n=1)
    return (f"unknown {what} (did you mean {near[0]}?)" if near else
            f"unknown {what} (known here: {', '.join(sorted(known)) or 'none'})")
