"""Text alternatives of the stored figures, for the editions without a kernel (site, slides).

A figure's alt is the section it is in and the figure in words, made from its data: the
description the kernel stored as the output's text/plain (course/describe/, made the figure's
text by course.figures.use_course_style), in the notebook's language. A figure stored without
one (its text/plain is matplotlib's "<Figure size ... with 2 Axes>") falls back to the notebook's
own words about it: the paragraph that introduces it (the last paragraph of the markdown cell
before its code cell), as plain text.

Standard library only: site/build.py imports it in .venv-site, and the slides' template
(presentation/) calls it as the Jinja filter `figure_alt` (presentation/voila.json).
"""

from __future__ import annotations

import html
import re

FIGURE = {"en": "Figure", "ja": "図"}
# How a figure's <img alt> (its text/html, course.figures.figure_html, for JupyterLab) begins:
# the site (site/build.py) knows it by this and shows the PNG instead
FIGURE_IMG = '<img src="data:image/png;base64,'

LIVE_FIGURE = {"en": "Live figure", "ja": "インタラクティブな図"}
MAX_CHARS = 400

SYMBOLS = {"times": "×", "cdot": "·", "infty": "∞", "to": "→", "rightarrow": "→",
           "leftarrow": "←", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "approx": "≈",
           "ne": "≠", "neq": "≠", "in": "∈", "sum": "Σ", "prod": "Π", "top": "ᵀ", "ldots": "…",
           "dots": "…", "cdots": "…", "pm": "±", "sim": "~", "quad": " ", "qquad": " ",
           "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "Delta": "Δ",
           "epsilon": "ε", "varepsilon": "ε", "theta": "θ", "lambda": "λ", "mu": "μ",
           "pi": "π", "sigma": "σ", "omega": "ω", "tau": "τ", "phi": "φ", "odot": "⊙",
           "partial": "∂", "nabla": "∇", "mid": "|", "lvert": "|", "rvert": "|", "max": "max", "min": "min", "exp": "exp",
           "log": "log", "sin": "sin", "cos": "cos", "arg": "arg"}
_FRAC = re.compile(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}")
_SQRT = re.compile(r"\\sqrt\{([^{}]*)\}")
_WRAP = re.compile(r"\\(?:text|mathrm|mathbf|mathcal|mathit|mathsf|boldsymbol|operatorname|mathbb)"
                   r"\s*\{([^{}]*)\}")
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"<[^>]+>")


def tex_to_text(tex: str) -> str:
    """A formula as a screen reader can say it: symbols for the commands, no braces."""
    for _ in range(3):   # nested \frac{\sqrt{d_k}}{2} and the like
        tex = _FRAC.sub(r"(\1)/(\2)", tex)
        tex = _SQRT.sub(r"√(\1)", tex)
        tex = _WRAP.sub(r"\1", tex)
    tex = re.sub(r"\\(?:mathcal|mathbf|mathrm|left|right|big|Big|bigl|bigr)\b\s*", "", tex)
    tex = _COMMAND.sub(lambda m: SYMBOLS.get(m.group(1), m.group(1)), tex)
    return tex.replace("{", "").replace("}", "").replace("\\,", " ").replace("\\", "")


def markdown_to_text(md: str, blocks: bool = True) -> str:
    """Markdown (with $...$ maths and a little HTML) as one line of plain text; `blocks`: drop
    the markers of headings and list items at the start of a line."""
    md = re.sub(r"\$\$(.+?)\$\$", lambda m: tex_to_text(m.group(1)), md, flags=re.S)
    md = re.sub(r"\$([^$]+)\$", lambda m: tex_to_text(m.group(1)), md)
    md = _LINK.sub(r"\1", md)
    md = _TAG.sub("", md)
    if blocks:
        md = re.sub(r"^\s*(?:#+|[-*+]|\d+\.)\s+", "", md, flags=re.M)
    md = md.replace("**", "").replace("`", "")
    md = re.sub(r"(?<!\w)[*_](\S[^*_]*?)[*_](?!\w)", r"\1", md)
    return " ".join(html.unescape(md).split())


def _shorten(text: str, n: int = MAX_CHARS) -> str:
    if len(text) <= n:
        return text
    cut = text[:n]
    end = max(cut.rfind(". "), cut.rfind("。"))
    return cut[:end + 1] if end > n // 3 else cut.rsplit(" ", 1)[0] + " …"


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _context(cells, index: int) -> tuple[str, str]:
    """The last heading and the last paragraph of the markdown cells before cell `index`."""
    heading, paragraph = "", ""
    for cell in cells[:index]:
        if cell.get("cell_type") != "markdown":
            continue
        source = _source(cell)
        headings = re.findall(r"^#{1,3}\s+(.+)$", source, flags=re.M)
        if headings:
            heading = markdown_to_text(headings[-1], blocks=False)
        paragraphs = [p for p in re.split(r"\n\s*\n", source.strip())
                      if p.strip() and not re.match(r"^#{1,6}\s", p.strip())]
        paragraph = markdown_to_text(paragraphs[-1]) if paragraphs else ""
    return heading, paragraph


def _text(output) -> str:
    text = output.get("data", {}).get("text/plain", "")
    return "".join(text) if isinstance(text, list) else text


def is_figure(output) -> bool:
    """Whether a stored output is a picture (PNG, JPEG or SVG)."""
    return any(m in output.get("data", {}) for m in ("image/png", "image/jpeg", "image/svg+xml"))


def output_description(output) -> str:
    """The figure in words that the kernel stored as the output's text/plain, as one line;
    "" where there is none (matplotlib's "<Figure size 720x360 with 2 Axes>", or nothing)."""
    text = " ".join(_text(output).split())
    return "" if not text or text.startswith("<Figure") else text


def figure_alt(cells, index: int, lang: str = "en", output=None) -> str:
    """The alt of the figures of code cell `index` of `cells` (a notebook's cells): of `output`
    (one of its outputs) if given, else of all its figures, in the order they are shown."""
    heading, paragraph = _context(cells, index)
    label = FIGURE.get(lang, FIGURE["en"])
    if heading:
        label += f" ({heading})"
    if output is not None:
        outputs = [output]
    else:
        cell = cells[index] if 0 <= index < len(cells) else {}
        outputs = [o for o in cell.get("outputs", []) if is_figure(o)]
    described = " ".join(d for d in map(output_description, outputs) if d)
    text = described or _shorten(paragraph)
    return f"{label}: {text}" if text else label


def live_figure_label(cells, index: int, lang: str = "en") -> str:
    """How the alt of a live figure's frames on the site begins, before the text its callback
    printed for the values shown: "Live figure (its section)"."""
    heading, _ = _context(cells, index)
    label = LIVE_FIGURE.get(lang, LIVE_FIGURE["en"])
    return f"{label} ({heading})" if heading else label


def notebook_language(nb) -> str:
    """"ja" for the Japanese edition's notebooks (metadata.translation.language), else "en"."""
    meta = nb.get("metadata", {}) if isinstance(nb, dict) else nb.metadata
    return (meta.get("translation") or {}).get("language", "en")


def figure_alt_filter(cell, nb, output=None) -> str:
    """Jinja filter of the slides' template: `{{ cell | figure_alt(nb, output) }}`."""
    cells = nb["cells"]
    index = next((i for i, c in enumerate(cells) if c is cell or (
        c.get("id") and c.get("id") == cell.get("id"))), len(cells))
    return figure_alt(cells, index, notebook_language(nb), output)
