#!/usr/bin/env python3
"""Give every notebook its slide structure: cell.metadata.slideshow.slide_type, generated.

    python3 dev.py slides                      # every notebook in notebooks/
    python3 dev.py slides notebooks/04_*.ipynb # some
    python3 dev.py slides --check              # change nothing; exit 1 if a notebook is stale

The presentation (`python3 dev.py present`, Voila's reveal.js template) shows a notebook as
slides on a canvas of CANVAS = 1920 x 1080 CSS pixels, with the code hidden: the class sees the
prose, the printed numbers, the figures and the live widgets. The rules, from the notebook's own
structure, so that a new notebook gets its slides by running this command:

- the title cell, and every markdown cell with a `## ` heading line, starts a slide: one slide
  per section (a heading can sit below the last lines of the section before it in the same
  cell: the slide starts at that cell, since cells are never split);
- a `### ` heading starts a sub-slide (below the section's slide: reveal.js's down arrow);
- a section too tall for the canvas continues on sub-slides: cells are packed in order while
  their estimated height (estimate_height: prose, printed lines, figure sizes as stored, a
  fixed height for a widget) fits HEIGHT_BUDGET;
- the widget cell (`with_controls(`) starts a sub-slide of its own, with the short markdown cell
  just before it (what to move) when both fit; the cell that prints its numbers and the static
  figure for readers without a kernel come after it;
- a derivation, a sub-slide whose prose holds two or more display equations ($$) in two or
  more cells, shows its cells one by one: every cell after the first is a fragment;
- unanswered self-check cells (`answer = ...`) are skipped: their output only says
  "Not answered yet"; the question above them stays;
- speaker notes are markdown cells whose slide_type is "notes" (written by hand; they are
  kept as they are, shown in reveal.js's speaker view, key S, and never on the slide).

Only cell metadata changes; sources and outputs are left as they are. The notebooks are written
with nbformat, as `dev.py regenerate` writes them, so an unchanged notebook stays byte-identical.
"""

from __future__ import annotations

import argparse
import base64
import math
import re
import struct
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent

CANVAS = (1920, 1080)          # reveal.js width x height (CSS px) that dev.py present sets
HEIGHT_BUDGET = 960            # what a (sub-)slide's cells may take of the 1080: margins, rounding
WIDGET_HEIGHT = 800            # a live figure: controls, printed numbers, image (440 px high, see course.css)
SLIDE_TYPES = ("slide", "subslide", "fragment", "-", "skip", "notes")

# Rendered sizes at the canvas width, measured in the browser (voila, 1920 x 1080) and rounded up
_CHARS_PER_LINE = 150          # a line of 20 px prose across the slide
_LINE = 32                     # one line of prose
_PARAGRAPH_GAP = 16
_HEADING = {1: 90, 2: 70, 3: 56, 4: 44}
_MATH_LINE = 50                # one line of a display equation
_MATH_GAP = 30
_TABLE_ROW = 47
_CODE_LINE = 26                # a fenced code block in the prose
_OUTPUT_LINE = 24              # printed text: one line
_OUTPUT_GAP = 32               # around one output
_IMAGE_GAP = 24


def _plain(text: str) -> str:
    """Roughly the visible characters of a line of markdown."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)        # links: their text
    text = re.sub(r"\$([^$]*)\$", lambda m: "x" * max(1, len(m.group(1)) // 2), text)  # math
    return re.sub(r"[*_`]", "", text)


def _wrapped_lines(text: str, indent: int = 0) -> int:
    return max(1, math.ceil(len(_plain(text)) / max(40, _CHARS_PER_LINE - indent)))


def markdown_height(source: str) -> int:
    """Estimated height (CSS px) of a rendered markdown cell at the canvas width."""
    height = 0
    lines = source.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
            continue
        if stripped.startswith("$$"):                                  # display math
            block = [stripped]
            if stripped.count("$$") < 2:                               # over several lines
                while i + 1 < len(lines):
                    i += 1
                    block.append(lines[i].strip())
                    if "$$" in lines[i]:
                        break
            body = " ".join(block)
            matrices = [m.count("\\\\") + 1 for m in
                        re.findall(r"\\begin\{[pbv]?matrix\}(.*?)\\end", body)]
            if matrices:                                               # side by side: the tallest
                height += _MATH_GAP + 40 + max(matrices) * 34
            else:
                rows = body.count("\\\\") + 1
                tall = re.search(r"\\frac|\\sum|\\prod|\\int", body) is not None
                height += _MATH_GAP + rows * (_MATH_LINE + (24 if tall else 0))
            i += 1
            continue
        if stripped.startswith("```"):                                 # fenced code
            n = 0
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                n += 1
                i += 1
            height += _PARAGRAPH_GAP + 20 + n * _CODE_LINE
            i += 1
            continue
        m = re.match(r"(#{1,6}) ", stripped)
        if m:
            height += _HEADING.get(len(m.group(1)), 44)
            i += 1
            continue
        if stripped.startswith("|"):                                   # table
            rows = 0
            while i < len(lines) and lines[i].strip().startswith("|"):
                if not re.fullmatch(r"\|[\s:|-]+\|?", lines[i].strip()):
                    rows += _wrapped_lines(lines[i].strip().strip("|"))
                i += 1
            height += _PARAGRAPH_GAP + rows * _TABLE_ROW
            continue
        # a paragraph, a list item or a quote: up to the next blank line or block start
        block = [stripped]
        i += 1
        while i < len(lines) and lines[i].strip() and not re.match(
                r"\s*(#{1,6} |\$\$|```|\||[-*+] |\d+\. )", lines[i]):
            block.append(lines[i].strip())
            i += 1
        text = " ".join(block)
        indent = 8 if re.match(r"([-*+>]|\d+\.) ", text) else 0
        if "$" in text and re.search(r"\\frac|\\sum|\\sqrt|\^\{|_\{", text):
            per_line = _LINE + 6                                       # inline math is taller
        else:
            per_line = _LINE
        height += _PARAGRAPH_GAP + _wrapped_lines(text, indent) * per_line
    return height


def _png_size(data: str) -> tuple[int, int]:
    head = base64.b64decode(data[:64])
    return struct.unpack(">II", head[16:24])


def output_height(output: dict) -> int:
    """Estimated height (CSS px) of one stored output, as Voila shows it (code hidden)."""
    data = output.get("data", {})
    if "application/vnd.jupyter.widget-view+json" in data:
        return WIDGET_HEIGHT
    if "image/png" in data:
        w, h = _png_size(data["image/png"])
        width = CANVAS[0] - 80
        return _IMAGE_GAP + (h if w <= width else math.ceil(h * width / w))
    if output["output_type"] == "stream":
        text = "".join(output.get("text", ""))
    elif output["output_type"] == "error":
        text = "\n".join(output.get("traceback", []))
    else:
        text = "".join(data.get("text/plain", ""))
    lines = sum(max(1, math.ceil(len(x) / 160)) for x in text.rstrip("\n").split("\n"))
    return _OUTPUT_GAP + lines * _OUTPUT_LINE


def estimate_height(cell: dict) -> int:
    """Estimated height (CSS px) of a cell on a slide: markdown rendered, code by its outputs."""
    kind = slide_kind(cell)
    if kind in ("skip", "notes"):
        return 0
    if cell["cell_type"] == "markdown":
        return markdown_height(_src(cell))
    if cell["cell_type"] == "code":
        return sum(output_height(o) for o in cell.get("outputs", []))
    return 0


def _src(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def heading_levels(cell: dict) -> set[int]:
    """The levels of the markdown headings a cell holds (any line)."""
    if cell["cell_type"] != "markdown":
        return set()
    return {len(m.group(1)) for m in re.finditer(r"^(#{1,6}) \S", _src(cell), re.MULTILINE)}


def is_widget(cell: dict) -> bool:
    return cell["cell_type"] == "code" and re.search(r"^[^#\n]*\bwith_controls\(", _src(cell),
                                                      re.MULTILINE) is not None


def is_unanswered_check(cell: dict) -> bool:
    return cell["cell_type"] == "code" and re.search(r"^answer = \.\.\.", _src(cell),
                                                      re.MULTILINE) is not None


def is_notes(cell: dict) -> bool:
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type") == "notes"


def slide_kind(cell: dict) -> str | None:
    """What the cell is regardless of packing: notes, skip, or None."""
    if is_notes(cell):
        return "notes"
    if is_unanswered_check(cell):
        return "skip"
    return None


def display_equations(cell: dict) -> int:
    return _src(cell).count("$$") // 2 if cell["cell_type"] == "markdown" else 0


def assign(cells: list[dict]) -> list[str]:
    """The slide_type of every cell, by the rules in this module's docstring."""
    types: list[str | None] = [slide_kind(c) for c in cells]
    heights = [estimate_height(c) for c in cells]

    # 1. sections and ### parts: the starts that come from the notebook's headings
    for i, c in enumerate(cells):
        if types[i] is not None:
            continue
        levels = heading_levels(c)
        if i == 0 or levels & {1, 2}:
            types[i] = "slide"
        elif 3 in levels:
            types[i] = "subslide"

    # 2. the widget opens a sub-slide, with the short markdown cell before it if both fit
    for i, c in enumerate(cells):
        if not is_widget(c) or types[i] == "slide":
            continue
        j = i - 1
        while j >= 0 and types[j] in ("notes", "skip"):
            j -= 1
        if (j >= 0 and cells[j]["cell_type"] == "markdown" and types[j] is None
                and heights[j] + heights[i] <= HEIGHT_BUDGET):
            types[j] = "subslide"
        elif types[i] is None:
            types[i] = "subslide"

    # 3. pack each run of cells between starts into sub-slides that fit
    used = 0
    for i in range(len(cells)):
        if types[i] in ("notes", "skip"):
            continue
        if types[i] in ("slide", "subslide"):
            used = heights[i]
            continue
        if used + heights[i] > HEIGHT_BUDGET and used > 0:
            types[i] = "subslide"
            used = heights[i]
        else:
            used += heights[i]

    # 4. derivations: fragments after the first cell of a sub-slide with 2+ equation cells
    starts = [i for i, t in enumerate(types) if t in ("slide", "subslide")] + [len(cells)]
    for a, b in zip(starts, starts[1:], strict=False):
        members = [k for k in range(a, b) if types[k] not in ("notes", "skip")]
        eq_cells = [k for k in members if display_equations(cells[k])]
        if len(eq_cells) >= 2 and sum(display_equations(cells[k]) for k in eq_cells) >= 2:
            for k in members[1:]:
                if types[k] is None and not is_widget(cells[k]):
                    types[k] = "fragment"

    return [t or "-" for t in types]


def apply(nb) -> bool:
    """Set the slide metadata of one notebook (nbformat node); True if anything changed."""
    changed = False
    for cell, kind in zip(nb.cells, assign(nb.cells), strict=True):
        want = {**cell.metadata.get("slideshow", {}), "slide_type": kind}
        if cell.metadata.get("slideshow") != want:
            cell.metadata["slideshow"] = want
            changed = True
    return changed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a notebook's slide metadata is stale")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    stale = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if not apply(nb):
            continue
        stale.append(path)
        if not args.check:
            nbformat.validate(nb)
            nbformat.write(nb, path)
    verb = "stale" if args.check else "updated"
    for path in stale:
        print(f"{verb}: {path}")
    if args.check and stale:
        print("run `python3 dev.py slides` to regenerate the slide metadata")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
