"""Edit values in a TOML text in place, keeping its comments and layout (no TOML writer is needed)."""
from __future__ import annotations

import re

from solver.toml_text import toml_value

_HEADER = re.compile(r"^\s*\[([^\[\]]+)\]\s*(#.*)?$")


def _split_comment(rest: str) -> tuple[str, str]:
    """Value text and trailing comment of `key = value  # comment` (quotes respected)."""
    q = None
    for i, c in enumerate(rest):
        if q:
            if c == q:
                q = None
        elif c in "\"'":
            q = c
        elif c == "#":
            return rest[:i], rest[i:]
    return rest, ""


def _find(lines: list[str], table: str, key: str):
    """(start, stop) line span of `key` in `[table]` ("" = top level), or (insert_at, None) if absent."""
    cur = ""
    table_end = None
    table_seen = table == ""
    kre = re.compile(rf"^\s*{re.escape(key)}\s*=")
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if m:
            if cur == table and table_seen and table_end is None:
                table_end = i
            cur = m.group(1).strip()
            if cur == table:
                table_seen = True
                table_end = None
            continue
        if cur == table and kre.match(line):
            stop = i + 1
            depth = line.split("#")[0].count("[") - line.split("#")[0].count("]")
            while depth > 0 and stop < len(lines):        # a list spread over several lines
                depth += lines[stop].split("#")[0].count("[") - lines[stop].split("#")[0].count("]")
                stop += 1
            return i, stop
    if not table_seen:
        return None, None
    if table_end is None:
        table_end = len(lines)
    while table_end > 0 and not lines[table_end - 1].strip():
        table_end -= 1
    return table_end, None


def set_value(text: str, table: str, key: str, value) -> str:
    """Set `table.key` to `value` (None removes the key); adds the key or the table if missing."""
    lines = text.splitlines()
    start, stop = _find(lines, table, key)
    if stop is not None:
        if value is None:
            del lines[start:stop]
        else:
            first = lines[start]
            eq = first.index("=")
            _, comment = _split_comment(first[eq + 1:]) if stop == start + 1 else ("", "")
            new = f"{first[:eq + 1]} {toml_value(value)}"
            if comment:  # keep the comment in its column
                col = len(first) - len(comment)
                new = new.ljust(col) if len(new) < col - 1 else new + "  "
                new += comment
            lines[start:stop] = [new]
    elif value is not None:
        if start is None:  # no such table
            lines += ["", f"[{table}]", f"{key} = {toml_value(value)}"]
        else:
            lines.insert(start, f"{key} = {toml_value(value)}")
    return "\n".join(lines) + "\n"
