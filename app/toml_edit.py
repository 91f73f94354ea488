"""Edit values in a TOML text in place, keeping its comments and layout (tomlkit)."""
from __future__ import annotations

import tomlkit


def set_value(text: str, table: str, key: str, value) -> str:
    """Set `table.key` to `value` ("" = top level, "a.b" = a nested table; None removes the key); adds the key or
    the table if missing."""
    doc = tomlkit.parse(text)
    t = doc
    for part in table.split(".") if table else []:
        if part not in t:
            if value is None:
                return tomlkit.dumps(doc)
            t[part] = tomlkit.table()
        t = t[part]
    if value is None:
        t.pop(key, None)
    else:
        t[key] = value
    return tomlkit.dumps(doc)
