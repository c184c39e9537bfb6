"""The colour check (course/colour_check.py, issue 27): what it finds and what it lets pass, and
that it runs on every figure strict nbval draws.

The sweep itself is not here: every notebook kernel nbval starts has COURSE_CHECK_COLOURS=1
(the root conftest.py), so each figure of both editions is checked where the notebook draws it,
and a problem is an output the stored notebook lacks. The last test runs that chain on a
notebook made to fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from course import colour_check as cc  # noqa: E402
from course import figures  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def two_lines(c1, c2, style2="-", marker2=""):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], color=c1, label="a")
    ax.plot([0, 1], [1, 0], color=c2, ls=style2, marker=marker2, label="b")
    return fig


def _contrast_on_white(colour) -> float:
    return cc.contrast(matplotlib.colors.to_rgb(colour), (1.0, 1.0, 1.0))


def _palettes():
    from course import nb13_grouped_query_attention as nb13
    return {"SERIES_COLOURS": figures.SERIES_COLOURS, "nb13.GROUP_COLORS": nb13.GROUP_COLORS}


@pytest.mark.parametrize("name", ["SERIES_COLOURS", "nb13.GROUP_COLORS"])
def test_the_course_palettes_stay_apart_under_every_deficiency_and_stand_out_from_white(name):
    palette = _palettes()[name]
    views = {d: cc.seen([matplotlib.colors.to_rgb(c) for c in palette], d)
             for d in (None, *cc.DEFICIENCIES)}
    for d, ucs in views.items():
        gaps = [np.linalg.norm(ucs[i] - ucs[j]) for i, j in combinations(range(len(ucs)), 2)]
        assert min(gaps) >= cc.MIN_DELTA_E, (cc.NAMES[d], min(gaps))
    # WCAG 2.1, 1.4.11 (AA): a line or marker 3:1 against the background at least
    low = {c: round(_contrast_on_white(c), 2) for c in palette if _contrast_on_white(c) < 3}
    assert not low, low
    assert round(_contrast_on_white("#E69F00"), 2) == 2.25   # Okabe-Ito's orange: the check works
    assert figures.COURSE_STYLE["axes.prop_cycle"].by_key()["color"] == list(figures.SERIES_COLOURS)


def test_red_and_green_lines_are_found_and_the_deficiency_named():
    found = cc.problems(two_lines("#d62728", "#2ca02c"))   # matplotlib's default C3 and C2
    assert len(found) == 1 and "under deuteranopia" in found[0], found
    assert "#d62728" in found[0] and "#2ca02c" in found[0]
    found = cc.problems(two_lines("#ff7f0e", "#2ca02c"))   # C1 and C2
    assert any("under protanopia" in p for p in found), found


def test_the_course_colours_pass_and_so_do_lines_told_apart_by_style():
    with matplotlib.rc_context({"axes.prop_cycle": figures.COURSE_STYLE["axes.prop_cycle"]}):
        assert cc.problems(two_lines("C3", "C2")) == []
        assert cc.problems(two_lines("C1", "C2")) == []
    assert cc.problems(two_lines("#d62728", "#2ca02c", style2=":")) == []
    assert cc.problems(two_lines("#d62728", "#2ca02c", marker2="o")) == []


def test_bars_are_not_excused_by_a_line_style():
    fig, ax = plt.subplots()
    ax.bar([0, 1], [1, 2], color=["#d62728", "#2ca02c"])
    assert any("rectangle" in p and "deuteranopia" in p for p in cc.problems(fig))


def test_a_translucent_colour_is_judged_as_it_looks_on_white():
    fig, ax = plt.subplots()
    ax.fill([0, 1, 1], [0, 0, 1], color="#d62728", alpha=0.02)   # nearly white: a grey
    ax.plot([0, 1], [1, 0], color="0.3")
    assert cc.problems(fig) == []


def test_lines_and_markers_need_3_to_1_against_the_background_greys_too():
    assert round(cc.contrast((1, 1, 1), (0, 0, 0)), 2) == 21.0 and cc.contrast((1, 1, 1), (1, 1, 1)) == 1
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], color="0.75", label="reference")        # 1.83:1: too pale
    ax.plot([0, 1], [1, 0], color="black", alpha=0.2, label="faint")  # as it looks on white
    ax.plot([0, 1], [0.5, 0.5], ls="none", marker="o", markerfacecolor="none",
            markeredgecolor="0.85", label="rings")                  # an empty marker: its edge
    ax.plot([0, 1], [0.2, 0.2], color="0.45", label="guide")          # 4.6:1: fine
    ax.axvspan(0.2, 0.4, color="0.9")                                 # a filled span: not checked
    ax.bar([0.7], [0.3], color="#dddddd", edgecolor="black")          # a filled bar: not checked
    found = cc.problems(fig)
    assert len(found) == 3 and all("contrast" in p for p in found), found
    for label, ratio in (("reference", "1.83"), ("faint", "1.61"), ("rings", "1.41")):
        assert any(f"line {label!r}" in p and f"contrast {ratio}" in p for p in found), (label, found)
    fig, ax = plt.subplots()
    ax.set_facecolor("black")                                         # judged on the panel's own colour
    ax.plot([0, 1], [0, 1], color="0.1")
    ax.scatter([0, 1], [1, 0], color="white")
    found = cc.problems(fig)
    assert len(found) == 1 and "#1a1a1a" in found[0], found


def test_a_mark_is_judged_by_every_way_it_is_seen():
    from matplotlib.patches import Circle, Rectangle

    fig, ax = plt.subplots()
    ax.plot([0], [0], "o", markerfacecolor="0.9", markeredgecolor="black")      # dark edge: fine
    ax.scatter([1], [1], color="0.9", edgecolors="black", linewidths=1)           # the same
    ax.add_patch(Rectangle((0, 0), 1, 1, fill=False, lw=0, edgecolor="0.9"))      # not drawn
    assert cc.problems(fig) == []
    fig, ax = plt.subplots()
    ax.plot([0], [0], "x", color="0.85", label="cross")                           # only an edge
    ax.scatter([1], [1], facecolors="none", edgecolors="0.8", label="ring")       # hollow
    ax.add_patch(Circle((0, 0), 1, facecolor="none", edgecolor="0.75", label="guide"))
    ax.vlines([0, 1], 0, 1, colors=["black", "0.7"], label="ticks")               # one of two pale
    found = cc.problems(fig)
    for what in ("line 'cross'", "PathCollection 'ring'", "outline 'guide'", "LineCollection 'ticks'"):
        assert sum(what in p for p in found) == 1, (what, found)
    assert len(found) == 4, found
    fig, ax = plt.subplots(facecolor="black")
    ax.axis("off")                                                                # no face: the figure's
    ax.plot([0, 1], [0, 1], color="white")
    assert cc.problems(fig) == []


def test_two_series_that_look_the_same_are_found():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], color="C0", label="head 1")
    ax.plot([0, 1], [1, 0], color="C0", label="head 9")
    assert any("look the same" in p for p in cc.problems(fig))


def image(cmap, data=None, **kw):
    fig, ax = plt.subplots()
    ax.imshow(np.linspace(0, 1, 16).reshape(4, 4) if data is None else data, cmap=cmap, **kw)
    return fig


def test_colour_maps_of_one_sign_must_not_turn_in_lightness():
    assert cc.problems(image("Blues")) == []
    assert cc.problems(image("viridis")) == []
    found = cc.problems(image("jet"))
    assert found and all("lightness turns" in p for p in found), found


def test_signed_maps_are_read_from_zero_and_cyclic_ones_from_their_middle():
    signed = np.linspace(-1, 1, 16).reshape(4, 4)
    assert cc.problems(image("RdBu_r", signed, vmin=-1, vmax=1)) == []
    found = cc.problems(image("RdYlGn", signed, vmin=-1, vmax=1))   # red-green: the classic
    assert any("a value and its negative" in p and "deuteranopia" in p for p in found), found
    assert cc.problems(image("twilight", vmin=0, vmax=2 * np.pi)) == []
    assert any("turns" in p for p in cc.problems(image("RdBu_r")))  # one sign: no turn allowed


def test_masked_cells_need_a_colour_of_their_own():
    data = np.ma.masked_less(np.linspace(0, 1, 16).reshape(4, 4), 0.2)
    near = matplotlib.colormaps["Blues"].with_extremes(bad="0.85")
    assert any("masked cells" in p for p in cc.problems(image(near, data, vmin=0, vmax=1)))
    course = matplotlib.colormaps["Blues"].with_extremes(bad="0.55")   # notebooks 04 and 11
    assert cc.problems(image(course, data, vmin=0, vmax=1)) == []


def test_with_the_variable_set_each_problem_goes_to_stderr_once(monkeypatch, capsys):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    monkeypatch.setattr(FigureCanvasAgg, "draw", FigureCanvasAgg.draw)   # undone afterwards
    monkeypatch.delenv(cc.ENV, raising=False)
    cc.check_when_asked()
    fig = two_lines("#d62728", "#2ca02c")
    fig.canvas.draw()
    assert capsys.readouterr().err == ""
    monkeypatch.setenv(cc.ENV, "1")
    cc.check_when_asked()
    cc.check_when_asked()   # twice: still one check per draw
    fig.canvas.draw()
    fig.canvas.draw()
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("colour check: ") and "deuteranopia" in err[0]


def test_strict_nbval_fails_a_notebook_whose_figure_fails_the_check():
    """The whole chain: conftest gives nbval's kernel the variable, use_course_style() turns
    the check on, the figure's problem is an output (stderr) the stored cell lacks, nbval fails
    it; the same cell in the course's colours passes."""
    cell = ("from course import figures\nfigures.use_course_style()\n"
            "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"
            "ax.plot([0, 1], color={a!r}); ax.plot([1, 0], color={b!r})\n"
            "fig.canvas.draw(); plt.close(fig)")
    folder = ROOT / "artifacts" / f"colour-check-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, a, b in (("red_and_green", "#d62728", "#2ca02c"), ("course_colours", "C3", "C2")):
        nb = {"cells": [{"cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {},
                         "outputs": [], "source": cell.format(a=a, b=b)}],
              "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                          "language": "python"}},
              "nbformat": 4, "nbformat_minor": 5}
        paths.append(folder / f"{name}.ipynb")
        paths[-1].write_text(json.dumps(nb), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != cc.ENV and not k.startswith("PYTEST_")}
    try:
        run = subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-q", "-rfE",
                              *(str(p.relative_to(ROOT)) for p in paths)], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=300)
    finally:
        for p in paths:
            p.unlink(missing_ok=True)
        folder.rmdir()
    out = run.stdout[-3000:]
    assert run.returncode == 1 and "1 failed, 1 passed" in out, out
    assert "FAILED artifacts/" in out and "red_and_green.ipynb::Cell 0" in out, out
    assert "Unexpected output fields from running code: {'stderr'}" in out, out
