"""Slide structure of the notebooks (scripts/slides.py), checked on the committed files.

The presentation (`python3 dev.py present`) shows a notebook without slide metadata as one
endless slide, so every cell must carry its slide_type, and it must be what the generator
gives for the notebook as it is now (a changed cell or a regenerated figure changes the
packing). tests/test_present.py checks in the browser that the slides then fit the screen.
"""

import json
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
FIX = "run `python3 dev.py present --slides` and commit the notebooks"

from scripts import slides  # noqa: E402


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_cell_has_slide_metadata(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    missing = [i for i, c in enumerate(cells)
               if c.get("metadata", {}).get("slideshow", {}).get("slide_type") not in slides.SLIDE_TYPES]
    assert not missing, f"{path.name}: cells {missing} have no slide_type; {FIX}"
    assert cells[0]["metadata"]["slideshow"]["slide_type"] == "slide"
    for i, c in enumerate(cells):
        if slides.heading_levels(c) & {1, 2} and not slides.is_notes(c):
            assert c["metadata"]["slideshow"]["slide_type"] == "slide", (
                f"{path.name} cell {i}: a ## section does not start a slide; {FIX}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_slide_metadata_is_what_the_generator_gives(path):
    nb = nbformat.read(path, as_version=4)
    assert not slides.apply(nb), f"{path.name}: its slide metadata is stale; {FIX}"


# --- the rules, on small notebooks ----------------------------------------------------------

def _md(text, **meta):
    return nbformat.v4.new_markdown_cell(text, metadata=meta)


def _code(text, outputs=()):
    cell = nbformat.v4.new_code_cell(text)
    cell.outputs = [nbformat.from_dict(o) for o in outputs]
    return cell


def _lines(n):
    return {"output_type": "stream", "name": "stdout", "text": "x\n" * n}


WIDGET = {"output_type": "display_data", "metadata": {},
          "data": {"text/plain": "VBox()", "application/vnd.jupyter.widget-view+json":
                   {"model_id": "m", "version_major": 2, "version_minor": 0}}}


def test_sections_start_slides_and_parts_start_subslides():
    cells = [_md("# Title"), _code("import x"), _md("## 1. One"), _md("text"),
             _md("last words of 1\n\n## 2. Two"), _md("### A part"), _md("more")]
    assert slides.assign(cells) == ["slide", "-", "slide", "-", "slide", "subslide", "-"]


def test_a_tall_section_continues_on_subslides():
    cells = [_md("## 1. Long")] + [_code("print()", [_lines(12)]) for _ in range(6)]
    kinds = slides.assign(cells)
    assert kinds[0] == "slide" and "subslide" in kinds[1:]
    heights = [slides.estimate_height(c) for c in cells]
    start = 0
    for i, kind in enumerate(kinds + ["slide"]):
        if kind in ("slide", "subslide") and i:
            assert sum(heights[start:i]) <= slides.HEIGHT_BUDGET or i - start == 1
            start = i


def test_the_widget_gets_a_subslide_with_the_line_that_introduces_it():
    cells = [_md("## 5. Try it"), _md("a long explanation\n\n" * 3), _md("Move the slider."),
             _code("# NBVAL_IGNORE_OUTPUT\n# why\nlive = X()\nwith_controls(live, a=s)", [WIDGET]),
             _code("print(live.update(a=1))", [_lines(3)])]
    assert slides.assign(cells) == ["slide", "-", "subslide", "-", "-"]


def test_derivations_are_fragments_checks_are_skipped_notes_are_kept():
    cells = [_md("## 2. Derivation"), _md("$$a = b$$"), _md("so\n\n$$b = c$$"), _md("done"),
             _md("Say why.", slideshow={"slide_type": "notes"}),
             _md("## Check yourself"), _code("answer = ...  # a number\ncheck(answer)")]
    assert slides.assign(cells) == ["slide", "fragment", "fragment", "fragment", "notes",
                                    "slide", "skip"]
