"""Figures in words: a short text alternative made from a figure's own data (issue 27).

``describe(fig)`` reads what a matplotlib figure draws, not what a notebook says about it:
for each panel its title, its axes and the numbers that matter.

- a heatmap (``imshow``): its size, what its rows and columns are, the range of its values,
  the cells left empty (masked, or -inf), and which column each row weights most and how much;
- a curve (``plot``): what it is (its legend label, or the figure's legend entry that looks like
  it), its range, where it starts and ends, and where it turns (its highest or lowest point),
  that it oscillates, or its trend through noise;
- bars (``bar``, ``barh``, ``hist``, or one line of vertical segments): their values, by their
  tick labels;
- points (``scatter``): how many, and their range;
- arrows (``quiver``): from tail to tip;
- a diagram (an axes with its axis off: boxes, arrows and words): its labels from the top.

Reference lines (``axhline``/``axvline``: two points) and the numbers printed in a heatmap's
cells are not described again. The words are the course's (course.i18n): a notebook of the
Japanese edition gets Japanese.

``use_course_style()`` (course.figures) makes this the figure's text/plain in a notebook, so it
is stored with the output beside its PNG, and the site and the slides use it as the image's
alt (course/alt_text.py), and the alt of the <img> that JupyterLab draws (its text/html,
course.figures.figure_html); a live figure writes it, hidden, after its printed text
(course/live.py), and the slides and the course's JupyterLab extension make it the image's alt.
The numbers (course.spoken) are rounded to three significant digits, so the text does not
depend on the machine (nbval compares it like any other output).

This module tells a figure panel by panel and keeps the words short enough; each kind of mark
has its teller beside it: heatmaps.py, curves.py, marks.py (bars, points, arrows, diagrams),
and common.py, how they read an axes.
"""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.collections import PathCollection, QuadMesh
from matplotlib.container import BarContainer
from matplotlib.quiver import Quiver

from course.describe.common import MEASURED
from course.describe.curves import curves_of, curves_text
from course.describe.heatmaps import heatmap
from course.describe.marks import arrows, as_stems, bars, diagram, points, stem_bars
from course.i18n import _
from course.spoken import flat as _flat
from course.spoken import number  # noqa: F401 - part of this module's interface

# A description longer than this is told again with fewer details (a screen reader reads
# the whole alt at once: no figure should take more than a minute or so to hear).
MAX_CHARS = 700


def describe(fig, max_chars: int = MAX_CHARS) -> str:
    """The figure in words: its title, then each panel. When the whole would be longer than
    max_chars, the panels are told with fewer details (per-row maxima, turning points, single
    values), the first ones with as many as fit; past that, only the first panels are told."""
    count = len(_panels(fig))
    text = _describe(fig, [2] * count)
    if len(text) <= max_chars:
        return text
    details = [0] * count
    text = _describe(fig, details)
    if len(text) > max_chars:
        for shown_panels in range(count - 1, 0, -1):   # the first panels, and how many more
            text = _describe(fig, details, shown_panels)
            if len(text) <= max_chars:
                break
        return text
    for level in (1, 2):   # more details, panel by panel from the first, while they fit
        for k in range(count):
            more = [*details[:k], level, *details[k + 1:]]
            longer = _describe(fig, more)
            if len(longer) <= max_chars:
                details, text = more, longer
    return text


def mark_measured(ax) -> None:
    """Say that ax shows measurements that differ from run to run (timings, memory peaks): its
    words then give what is plotted and over which x, not the measured values (which would make
    the stored text differ on every run, and say more than the figure can be trusted for)."""
    ax.set_gid(MEASURED)


def _describe(fig, details: list[int], shown_panels: int | None = None) -> str:
    panels = _panels(fig)
    sentences = []
    title = fig.get_suptitle() if hasattr(fig, "get_suptitle") else ""
    if title:
        sentences.append(_("Figure: {title}.").format(title=_flat(title)))
    if len(panels) > 1:
        sentences.append(_("{k} panels.").format(k=len(panels)))
    said: dict = {}   # what an earlier panel said, not said again with fewer details
    for k, ax in enumerate(panels[:shown_panels], start=1):
        name = _flat(ax.get_title()) or (_("panel {k}").format(k=k) if len(panels) > 1 else "")
        clauses = _panel(ax, details[k - 1], said)
        body = " ".join(clauses) if clauses else _("no data.")
        sentences.append(_("{name}: {body}").format(name=name, body=body) if name else body)
    if shown_panels is not None and shown_panels < len(panels):
        more = len(panels) - shown_panels
        sentences.append(_("One more panel not described here.") if more == 1
                         else _("{k} more panels not described here.").format(k=more))
    if not panels:
        sentences.append(_("no data."))
    return " ".join(sentences)


def _colorbar_axes(fig) -> set[int]:
    """The ids of the axes that hold a colorbar (drawn for an image or a mesh of another axes)."""
    ids = set()
    for ax in fig.axes:
        for mappable in [*ax.get_images(), *ax.collections]:
            cb = getattr(mappable, "colorbar", None)
            if cb is not None:
                ids.add(id(cb.ax))
    return ids


def _panels(fig) -> list[Axes]:
    colorbars = _colorbar_axes(fig)
    return [ax for ax in fig.axes if ax.get_visible() and id(ax) not in colorbars
            and (ax.get_images() or ax.collections or ax.containers or curves_of(ax)
                 or ax.get_title())]


def _panel(ax, detail: int, said: dict) -> list[str]:
    if not ax.axison and not ax.get_images() and not any(
            isinstance(c, (QuadMesh, PathCollection, Quiver)) for c in ax.collections):
        return [diagram(ax, detail)]   # boxes, arrows and words: its lines are not curves
    clauses, quivers = [], []
    for im in ax.get_images():
        clauses.append(heatmap(ax, im, detail, said))
    for coll in ax.collections:
        if isinstance(coll, QuadMesh):
            clauses.append(heatmap(ax, coll, detail, said))
        elif isinstance(coll, PathCollection) and len(coll.get_offsets()):
            clauses.append(points(ax, coll))
        elif isinstance(coll, Quiver):
            quivers.append(coll)
    if quivers:
        clauses.append(arrows(quivers))
    for container in ax.containers:
        if isinstance(container, BarContainer):
            clauses.append(bars(ax, container, detail))
    curves = []
    for line in curves_of(ax):
        stems = as_stems(line)
        if stems is None:
            curves.append(line)
        else:   # bars drawn as one line of vertical segments (notebook 06, for speed)
            clauses.append(stem_bars(ax, line, *stems, detail))
    if curves:
        clauses.append(curves_text(ax, curves, detail))
    return [c for c in clauses if c]
