"""One palette: colours are named in viewer/style.py and nowhere else in viewer/ and app/."""
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEX = re.compile(r"(?<![&\w])#(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b")


def test_no_hex_colour_literal_outside_the_style_module():
    found = []
    for path in sorted(list((ROOT / "viewer").rglob("*.py")) + list((ROOT / "app").rglob("*.py"))):
        if path == ROOT / "viewer" / "style.py":
            continue
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
            if tok.type == tokenize.STRING and HEX.search(tok.string):
                found.append(f"{path.relative_to(ROOT)}:{tok.start[0]}: {HEX.search(tok.string).group()}")
    assert not found, "colour literals outside viewer/style.py (name them there):\n" + "\n".join(found)


def test_no_rgb_colour_literal_outside_the_style_module():
    rgb = re.compile(r"\b(QColor|mkColor|mkBrush|mkPen)\(\s*\d|QColor\.fromRgbF?\(\s*\d")
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
             for p in sorted(list((ROOT / "viewer").rglob("*.py")) + list((ROOT / "app").rglob("*.py")))
             if p != ROOT / "viewer" / "style.py"
             for n, line in enumerate(p.read_text().splitlines(), 1) if rgb.search(line)]
    assert not found, "RGB colour literals outside viewer/style.py:\n" + "\n".join(found)


def test_the_palette_names_each_colour_once():
    import viewer.style as style
    colours = [(k, v.lower()) for k, v in vars(style).items() if isinstance(v, str) and HEX.fullmatch(v)]
    colours += [(f"TRACE_COLORS[{i}]", c.lower()) for i, c in enumerate(style.TRACE_COLORS)]
    seen: dict = {}
    for k, v in colours:
        seen.setdefault(v, []).append(k)
    assert not [v for v in seen.values() if len(v) > 1], {c: v for c, v in seen.items() if len(v) > 1}
