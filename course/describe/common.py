"""How the tellers of course.describe read an axes: which axis carries names, the
names of its ticks, an artist's label and an axis's label."""

from __future__ import annotations

from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D
from matplotlib.ticker import LogFormatter, ScalarFormatter

from course.spoken import flat as _flat

MEASURED = "course-measured"   # the gid of an axes whose values are measurements (mark_measured)


def named(axis) -> bool:
    """Whether the axis's ticks are names (set_xticklabels, categories), not matplotlib's
    numbers for positions (which are positions, not the names of rows or bars)."""
    return not isinstance(axis.get_major_formatter(), (ScalarFormatter, LogFormatter))


def tick_names(ax, which: str, count: int) -> list[str]:
    """The tick label at each of positions 0..count-1 of the x or y axis, or its number. An
    axes that shares the axis with others (subplots(sharey=True) labels only the outer ones)
    takes the names of the first of them that has some."""
    shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    for other in [ax, *shared.get_siblings(ax)]:
        axis = other.xaxis if which == "x" else other.yaxis
        if not named(axis):
            continue
        names = [str(i) for i in range(count)]
        for loc, label in zip(axis.get_ticklocs(), axis.get_ticklabels(), strict=False):
            text = _flat(label.get_text())
            if text and abs(loc - round(loc)) < 1e-9 and 0 <= round(loc) < count:
                names[int(round(loc))] = text
        if any(n != str(i) for i, n in enumerate(names)):
            return names
    return [str(i) for i in range(count)]


def label_of(artist) -> str:
    label = artist.get_label()
    return "" if not label or label.startswith("_") else _flat(label)


def label_of_axis(ax, which: str) -> str:
    """The x or y label of ax, or of an axes it shares that axis with (subplots(sharey=True)
    labels only the first): first one of its own row for a y label, of its own column for an x
    label (in a grid that shares y everywhere, notebook 04 labels each row by its item), then
    any other."""
    shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    others = [o for o in shared.get_siblings(ax) if o is not ax]
    line = _grid_line(ax, which)
    if line is not None:
        others.sort(key=lambda o: _grid_line(o, which) != line)   # stable: its own line first
    for other in [ax, *others]:
        label = other.get_xlabel() if which == "x" else other.get_ylabel()
        if label:
            return _flat(label)
    return ""


def _grid_line(ax, which: str):
    """The rows (for a y axis) or columns (for an x axis) of the figure's grid that ax spans,
    or None for an axes outside a grid."""
    spec = ax.get_subplotspec() if hasattr(ax, "get_subplotspec") else None
    if spec is None:
        return None
    return tuple(spec.rowspan if which == "y" else spec.colspan)


def legend_name(line) -> str:
    """The name that a legend of the figure gives a line without a label of its own: the one
    entry drawn in the line's colour, style and marker, in the figure's legend or another
    panel's (notebook 10's three panels share one legend under them, made from the first
    panel's lines). "" when no entry, or more than one, looks like the line."""
    fig = line.figure
    if fig is None:
        return ""
    look = (to_rgba(line.get_color()), line.get_linestyle(), line.get_marker())
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    names = {text.get_text() for legend in legends
             for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=False)
             if isinstance(handle, Line2D) and handle.get_visible()
             and (to_rgba(handle.get_color()), handle.get_linestyle(), handle.get_marker()) == look}
    return _flat(names.pop()) if len(names) == 1 else ""
