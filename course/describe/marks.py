"""Bars, points, arrows and diagrams in words (course.describe): bars by their tick's
names, points by their range, arrows from tail to tip, a diagram by its labels."""

from __future__ import annotations

import numpy as np

from course.describe.common import label_of, label_of_axis, named
from course.i18n import _
from course.spoken import flat as _flat
from course.spoken import in_list as _list
from course.spoken import number
from course.spoken import sentence as _sentence

BARS_LISTED = 12     # bars told one by one, at most (arrows: half as many)
LABELS_LISTED = 24   # the texts of a diagram read out, at most


def as_stems(line):
    """(x, heights) if the line is vertical segments from 0, one per x, NaN-separated (a bar
    chart drawn as one line), else None."""
    x = np.asarray(line.get_xdata(), dtype=float)
    y = np.asarray(line.get_ydata(), dtype=float)
    if x.size < 3 or x.size % 3 or not np.all(np.isnan(x[2::3])):
        return None
    x0, x1, y0, y1 = x[0::3], x[1::3], y[0::3], y[1::3]
    if not (np.array_equal(x0, x1) and np.all(y0 == 0)):
        return None
    return x0, y1


def stem_bars(ax, line, x, heights, detail: int) -> str:
    label = label_of(line)
    lead = _("{label}: ").format(label=label) if label else ""
    axis_label = label_of_axis(ax, "y")
    what = _("{k} bars of {what}").format(k=x.size, what=axis_label) if axis_label \
        else _("{k} bars").format(k=x.size)
    where = _(" at x = {x0} to {x1}").format(x0=number(x.min()), x1=number(x.max()))
    if x.size <= BARS_LISTED and detail >= 1:
        return lead + _sentence(_("{what}: {values}").format(
            what=what + where, values=_list(number(v) for v in heights)))
    if heights.min() == heights.max():
        return lead + _sentence(what + where + _(", every one {v}").format(v=number(heights[0])))
    return lead + _sentence(what + where + _(", from {lo} to {hi}").format(
        lo=number(heights.min()), hi=number(heights.max())))


def bars(ax, container, detail: int) -> str:
    horizontal = getattr(container, "orientation", "vertical") == "horizontal"
    values = np.array([p.get_width() if horizontal else p.get_height()
                       for p in container.patches], dtype=float)
    if values.size == 0:
        return ""
    label = label_of(container)
    lead = _("{label}: ").format(label=label) if label else ""
    axis_label = _flat(ax.get_xlabel() if horizontal else ax.get_ylabel())
    what = _("{k} bars of {what}").format(k=values.size, what=axis_label) if axis_label \
        else _("{k} bars").format(k=values.size)
    if values.size <= BARS_LISTED and detail >= 1:
        positions = [p.get_y() + p.get_height() / 2 if horizontal else p.get_x() + p.get_width() / 2
                     for p in container.patches]
        axis = ax.yaxis if horizontal else ax.xaxis
        items = []
        for pos, v in zip(positions, values, strict=True):
            name = _bar_name(axis, pos)
            items.append(_("{name} {value}").format(name=name, value=number(v))
                         if name else number(v))
        return lead + _sentence(_("{what}: {values}").format(what=what, values=_list(items)))
    # the largest bar told by where it stands, as its axis counts ("x = 24"), not "bar 25"
    # (its count from 1, which a listener takes for a position of bars numbered from 0)
    patch = container.patches[int(values.argmax())]
    pos = patch.get_y() + patch.get_height() / 2 if horizontal else patch.get_x() + patch.get_width() / 2
    axis = ax.yaxis if horizontal else ax.xaxis
    where = _bar_name(axis, pos) or f"{'y' if horizontal else 'x'} = {number(pos)}"
    return lead + _sentence(what + _(", from {lo} to {hi}, the largest at {where}").format(
        lo=number(values.min()), hi=number(values.max()), where=where))


def _bar_name(axis, pos: float) -> str:
    """The name of the tick a bar stands at, or beside (grouped bars are drawn off their tick,
    by less than half the distance to the next one); "" on an axis of numbers."""
    if not named(axis):
        return ""
    locs = np.asarray(axis.get_ticklocs(), dtype=float)
    if locs.size == 0:
        return ""
    k = int(np.abs(locs - pos).argmin())
    gap = np.diff(np.sort(locs)).min() if locs.size > 1 else np.inf
    return _flat(axis.get_ticklabels()[k].get_text()) if abs(locs[k] - pos) < gap / 2 else ""


def points(ax, coll) -> str:
    xy = np.asarray(coll.get_offsets(), dtype=float)
    label = label_of(coll)
    lead = _("{label}: ").format(label=label) if label else ""
    return lead + _sentence(_("{k} points, x from {x0} to {x1}, y from {y0} to {y1}").format(
        k=len(xy), x0=number(xy[:, 0].min()), x1=number(xy[:, 0].max()),
        y0=number(xy[:, 1].min()), y1=number(xy[:, 1].max())))


def _point(x, y) -> str:
    return f"({number(x)}, {number(y)})"


def arrows(quivers) -> str:
    """The arrows of a panel's quivers, from their tail to their tip where they are drawn in
    data units."""
    x, y, u, v = (np.concatenate([np.ma.filled(np.ravel(getattr(q, a)).astype(float), np.nan)
                                  for q in quivers]) for a in "XYUV")
    keep = np.isfinite(u) & np.isfinite(v) & ((u != 0) | (v != 0))
    x, y, u, v = x[keep], y[keep], u[keep], v[keep]
    if x.size == 0:
        return ""
    in_data = all(q.scale_units == "xy" and q.scale == 1 and q.angles == "xy" for q in quivers)
    if not in_data or x.size > BARS_LISTED // 2:
        return _sentence(_("{k} arrows").format(k=x.size))
    items = [_("{tail} → {tip}").format(tail=_point(a, b), tip=_point(a + c, b + d))
             for a, b, c, d in zip(x, y, u, v, strict=True)]
    return _sentence(_("arrows {arrows}").format(arrows=_list(items)))


def diagram(ax, detail: int) -> str:
    """A drawing of boxes and arrows (an axes with its axis off): its words, from the top left
    down, as one reads them."""
    placed = []
    for t in ax.texts:
        text = _flat(t.get_text())
        if not text or not t.get_visible():
            continue
        try:
            x, y = t.get_transform().transform(t.get_position())
        except Exception:   # a position in units the text cannot tell: read it last
            x, y = np.inf, -np.inf
        placed.append((-round(y), round(x), text))
    if not placed:
        return _sentence(_("a drawing without words"))
    words = [w for *_, w in sorted(placed)]
    listed = LABELS_LISTED if detail >= 1 else LABELS_LISTED // 3
    more = len(words) - listed
    text = _("a diagram; its labels from the top: {labels}").format(labels=_list(words[:listed]))
    if more > 0:
        text += _(" and {k} more").format(k=more)
    return _sentence(text)
