"""Curves in words (course.describe): what each is, its range, where it starts and ends,
where it turns, or its trend through noise; many curves by their common range."""

from __future__ import annotations

import numpy as np

from course.describe.common import MEASURED, label_of, label_of_axis, legend_name
from course.i18n import _
from course.spoken import in_list as _list
from course.spoken import number
from course.spoken import sentence as _sentence

LINES_LISTED = 6     # a panel with more curves gets their count and their common range


def curve_name(line) -> str:
    """A curve's name: its label, or else the name a legend of the figure gives its look."""
    return label_of(line) or legend_name(line)


def curves_of(ax) -> list:
    """The drawn curves of ax: visible lines with more than two points (not reference lines)."""
    return [line for line in ax.get_lines() if line.get_visible()
            and len(np.atleast_1d(line.get_xdata())) > 2]


def _remark_start(label: str) -> int:
    """Where the bracket that closes `label` opens, or -1."""
    if not label.endswith((")", "）")):
        return -1
    depth = 0
    for i in range(len(label) - 1, -1, -1):
        depth += label[i] in ")）"
        depth -= label[i] in "(（"
        if depth == 0:
            return i
    return -1


def _ends_in_a_remark(label: str) -> bool:
    """Whether `label` ends in a bracketed remark, "d_k (log scale)", "位置 (整数)", and not in a
    formula's brackets, "√(d_k)", "PE(p + k)": the bracket that closes it opens after a space."""
    i = _remark_start(label)
    return i > 0 and (label[i] == "（" or label[i - 1] == " ")


def _with_letter(label: str, letter: str, log: bool) -> str:
    """An axis's label with the letter that the numbers after it use, and its log scale unless
    the label says so: "training step (x)", "n (x, log scale)", "d_k (x, log scale)" for a label
    "d_k (log scale)", "pos (x; integers only)"; the letter first in every bracket."""
    if log and ("log" in label.lower() or "対数" in label):
        log = False   # said by the label itself
    # Translators: the letter of an axis (x or y) on a log scale
    inner = _("{letter}, log scale").format(letter=letter) if log else letter
    if not label or label.strip() == letter:
        # Translators: an axis with no label of its own, on a log scale
        return _("{letter} (log scale)").format(letter=letter) if log else letter
    if _ends_in_a_remark(label):   # one bracket, not two: "d_k (x; log scale)"
        start = _remark_start(label)
        if label[start + 1:-1].strip() in (_("log scale"), "log scale"):   # "d_k (log scale)"
            return _("{label} ({letter})").format(
                label=label[:start].rstrip(), letter=_("{letter}, log scale").format(letter=letter))
        # Translators: an axis label's own bracketed remark, with the axis's letter put first
        return _("{label} ({inner}; {remark})").format(
            label=label[:start].rstrip(), inner=inner, remark=label[start + 1:-1])
    # Translators: an axis's label and the letter (x or y) that the numbers after it use
    return _("{label} ({letter})").format(label=label, letter=inner)


def curves_text(ax, curves, detail: int) -> str:
    xlabel, ylabel = label_of_axis(ax, "x"), label_of_axis(ax, "y")
    head = ""
    if xlabel or ylabel:
        # each axis named with the letter the numbers after it use ("at x = 0"), and its scale
        head = _("{y} against {x}").format(
            y=_with_letter(ylabel, "y", ax.get_yscale() == "log"),
            x=_with_letter(xlabel, "x", ax.get_xscale() == "log")) + ": "
    names = [curve_name(line) for line in curves]
    if ax.get_gid() == MEASURED:
        xs = np.concatenate([_finite(line)[0] for line in curves])
        return head + _sentence(_("measured on this machine, not repeated here (the values "
                                  "differ from run to run): {names}, x from {x0} to {x1}").format(
            names=_list(n for n in names if n) or len(curves), x0=number(xs.min()),
            x1=number(xs.max())))
    # curves told one by one need their names: six unnamed "from 1.89 to 0.27"s say nothing a
    # listener can tell apart (their legend is another panel's, or there is none)
    unnamed = len(curves) > 1 and not all(names)
    if len(curves) > LINES_LISTED or detail == 0 or unnamed:
        ys = np.concatenate([_finite(line)[1] for line in curves])
        if ys.size == 0:
            return head + _sentence(_("{k} curves").format(k=len(curves)))
        if len(curves) == 1:
            return head + _sentence(_("a curve, y from {lo} to {hi}").format(
                lo=number(ys.min()), hi=number(ys.max())))
        return head + _sentence(_("{k} curves, y from {lo} to {hi}").format(
            k=len(curves), lo=number(ys.min()), hi=number(ys.max())))
    told, said = [], {}
    for line, name in zip(curves, names, strict=True):   # drawn again under another name:
        lead = _("{label}, ").format(label=name) if name else ""   # "p = 10, the same as p = 0"
        text = _curve(line, name, detail)
        body = text[len(lead):]
        if lead and body in said:
            text = _("{label}, the same as {other}").format(label=name, other=said[body])
        elif lead:
            said[body] = name
        told.append(text)
    # Translators: the separator between the descriptions of two curves of one panel
    return head + _sentence(_("; ").join(told))


# On a linear axis a value this much smaller than the curve's largest is drawn at 0 and is
# told as 0: its digits are rounding noise (an entropy of 5e-16 nats), which a change of BLAS
# or of thread count would change, and the stored text with them.
NOISE = 1e-12


def _finite(line):
    x = np.asarray(line.get_xdata(), dtype=float)
    y = np.asarray(line.get_ydata(), dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if y.size and line.axes is not None and line.axes.get_yscale() == "linear":
        y = np.where(np.abs(y) < NOISE * np.abs(y).max(), 0.0, y)
    return x, y


def _curve(line, name: str, detail: int) -> str:
    x, y = _finite(line)
    lead = _("{label}, ").format(label=name) if name else ""
    if y.size == 0:
        return lead + _("no finite values")
    if detail >= 2 and np.ptp(y) > 0:   # a flat run at either end, said first or last:
        head, tail = _flat_run(y), _flat_run(y[::-1])   # "1 from x = 3 to 15, then ..."
        if head:
            return lead + _("{y} from x = {x0} to x = {x1}, then {rest}").format(
                y=number(y[0]), x0=number(x[0]), x1=number(x[head - 1]),
                rest=_shape(line, x[head - 1:], y[head - 1:], detail))
        if tail:
            return lead + _("{rest}, then {y} to x = {x1}").format(
                rest=_shape(line, x[:y.size - tail + 1], y[:y.size - tail + 1], detail),
                y=number(y[-1]), x1=number(x[-1]))
    return lead + _shape(line, x, y, detail)


def _flat_run(y) -> int:
    """How many values at the start of y equal its first, when they are a tenth of the curve or
    more (at least 3) and not all of it; else 0."""
    k = int(np.argmax(y != y[0])) if (y != y[0]).any() else y.size
    return k if max(3, y.size // 10) <= k < y.size - 1 else 0


def _shape(line, x, y, detail: int) -> str:
    """A curve's values told: its ends and rise or fall, its turns, or its trend."""
    ends = dict(y0=number(y[0]), x0=number(x[0]), y1=number(y[-1]), x1=number(x[-1]))
    start = _("from {y0} at x = {x0} to {y1} at x = {x1}").format(**ends)
    steps = np.sign(np.diff(y))
    steps = steps[steps != 0]
    turns = int(np.count_nonzero(np.diff(steps))) if steps.size else 0
    if steps.size == 0:
        return _("constant at {y}").format(y=number(y[0]))
    if turns == 0:
        if steps[0] > 0:
            return _("rising from {y0} at x = {x0} to {y1} at x = {x1}").format(**ends)
        return _("falling from {y0} at x = {x0} to {y1} at x = {x1}").format(**ends)
    if detail < 2:
        return _("{start}, between {lo} and {hi}").format(
            start=start, lo=number(y.min()), hi=number(y.max()))
    if turns <= 2:
        i_hi, i_lo = int(y.argmax()), int(y.argmin())
        ends = {0, y.size - 1}
        turn = []
        if i_hi not in ends:
            turn.append(_("highest {y} at x = {x}").format(y=number(y[i_hi]), x=number(x[i_hi])))
        if i_lo not in ends:
            turn.append(_("lowest {y} at x = {x}").format(y=number(y[i_lo]), x=number(x[i_lo])))
        return _list([start, *turn])
    trend = _trend(line.axes, y, dict(start=start, lo=number(y.min()), hi=number(y.max())))
    if trend is not None:   # a training curve's step-to-step noise: its turns are no news
        return trend
    return _("{start}, turning {k} times between {lo} and {hi}").format(
        start=start, k=turns, lo=number(y.min()), hi=number(y.max()))


# A curve with more than two turns is told by its trend, not by its count of turns, when its
# swings from one turn to the next are small (their median under SMALL_SWING of its range, as
# the eye sees the axis), irregular (their spread over their mean above IRREGULAR), or so many
# that it turns at more than half of its points: the noise of a loss on each new batch "turned
# 54 times"; a sine's turns are its shape, and are counted. The trend is judged against the
# panel's y range, as the eye judges it: under LEVEL of it, the curve is nearly level.
SMALL_SWING = 0.15


IRREGULAR = 0.5


LEVEL = 0.1


def _trend(ax, y, said: dict):
    """For a curve with small, irregular or very many ups and downs, the words of its overall
    trend (with `said`: start, lo and hi); None for a curve whose turns are its shape."""
    log = ax is not None and ax.get_yscale() == "log" and (y > 0).all()
    seen = np.log10(y) if log else y   # as the eye sees it on the axis
    seen = seen[np.r_[True, np.diff(seen) != 0]]
    span = float(seen.max() - seen.min())
    steps = np.sign(np.diff(seen))
    turns = np.flatnonzero(np.diff(steps)) + 1
    swings = np.abs(np.diff(seen[np.r_[0, turns, seen.size - 1]]))
    small = np.median(swings) < SMALL_SWING * span
    if span == 0 or not (small or swings.std() > IRREGULAR * swings.mean()
                         or turns.size > seen.size / 2):
        return None
    lo, hi = ax.get_ylim() if ax is not None else (seen.min(), seen.max())
    panel = abs(float(np.log10(hi / lo) if log else hi - lo)) or span
    tenth = max(1, seen.size // 10)
    change = float(seen[-tenth:].mean() - seen[:tenth].mean())
    how = _("with small ups and downs") if small else _("with ups and downs")
    if change > LEVEL * panel:
        return _("rising overall {how}, {start}, between {lo} and {hi}").format(how=how, **said)
    if change < -LEVEL * panel:
        return _("falling overall {how}, {start}, between {lo} and {hi}").format(how=how, **said)
    return _("nearly level {how}, {start}, between {lo} and {hi}").format(how=how, **said)
