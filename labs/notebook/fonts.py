"""A font for the Chinese text on the course's figures, or English labels if there is none.

Matplotlib's own fonts have no CJK glyphs: Chinese drawn with them comes out as empty boxes.
:func:`setup` registers Noto Sans CJK SC (SIL Open Font License) with matplotlib and puts it
after DejaVu Sans, so Latin text and digits keep matplotlib's usual look and each Chinese
character falls back to Noto. The font comes from, first that exists:

1. the PyPI package ``mplfonts`` (pinned in requirements.txt; its font file is read, the
   package is not imported);
2. a system font named "Noto Sans CJK SC" (Debian/Ubuntu ``fonts-noto-cjk``, Homebrew
   ``font-noto-sans-cjk``).

Without either, :func:`plot_language` is English, so figures use their English labels, and a
one-line notice says how to get the font. Figures never show boxes instead of characters.

Owns: finding and registering the CJK font, once per process, and the one notice when there is none.
Must not: draw a figure, import labs.notebook.plots, or print anything but that notice.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from labs.messages import language, text

__all__ = ["FAMILY", "font_file", "setup", "has_cjk_font", "plot_language", "notice"]

FAMILY = "Noto Sans CJK SC"
_PACKAGE_FONT = ("mplfonts", "fonts/NotoSansCJKsc-Regular.otf")
_state: dict = {"done": False, "file": None, "noticed": False}


def font_file() -> Path | None:
    """The Noto Sans CJK SC file this machine has, or None."""
    package, relative = _PACKAGE_FONT
    spec = importlib.util.find_spec(package)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / relative
        if candidate.is_file():
            return candidate
    from matplotlib import font_manager

    for entry in font_manager.fontManager.ttflist:
        if entry.name == FAMILY:
            return Path(entry.fname)
    return None


def setup() -> bool:
    """Register the CJK font with matplotlib (once); True when figures can show Chinese."""
    if _state["done"]:
        return _state["file"] is not None
    import matplotlib as mpl
    from matplotlib import font_manager

    path = font_file()
    if path is not None:
        try:
            font_manager.fontManager.addfont(str(path))
            name = font_manager.FontProperties(fname=str(path)).get_name()
        except (OSError, RuntimeError, ValueError):
            path, name = None, None
    if path is not None:
        # an explicit list: matplotlib falls back glyph by glyph along font.family only
        mpl.rcParams["font.family"] = ["DejaVu Sans", name]
    _state.update(done=True, file=path)
    return path is not None


def has_cjk_font() -> bool:
    return setup()


def plot_language(lang: str | None = None) -> str:
    """The language figures are labelled in: the course's, unless it is Chinese and there is no
    CJK font (then English, after a one-line notice)."""
    lang = lang or language()
    if lang == "zh" and not setup():
        notice()
        return "en"
    return lang


def notice(out=None) -> None:
    """Say once that the figures' labels are English for want of a CJK font, and how to fix it."""
    if _state["noticed"]:
        return
    _state["noticed"] = True
    print(text("plots.no_cjk_font", family=FAMILY), file=out or sys.stdout, flush=True)
