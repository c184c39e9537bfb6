"""Figures in words: a short text alternative made from a figure's own data (issue 27).

``describe(fig)`` reads what a matplotlib figure draws, not what a notebook says about it:
for each panel its title, its axes and the numbers that matter.

- a heatmap (``imshow``): its size, what its rows and columns are, the range of its values,
  the cells left empty (masked, or -inf), and which column each row weights most and how much;
- a curve (``plot``): what it is (its legend label), its range, where it starts and ends, and
  where it turns (its highest or lowest point), that it oscillates, or its trend through noise;
- bars (``bar``, ``barh``, ``hist``): their values, by their tick labels;
- points (``scatter``): how many, and their range.

Reference lines (``axhline``/``axvline``: two points) and the numbers printed in a heatmap's
cells are not described again. The words are the course's (course.i18n): a notebook of the
Japanese edition gets Japanese.

``use_course_style()`` (course.figures) makes this the figure's text/plain in a notebook, so it
is stored with the output beside its PNG, and the site and the slides use it as the image's
alt (course/alt_text.py), and the alt of the <img> that JupyterLab draws (its text/html,
course.figures.figure_html); a live figure writes it, hidden, after its printed text
(course/live.py), where a screen reader reads it in JupyterLab too.
The numbers (course.spoken) are rounded to three significant digits, so the text does not
depend on the machine (nbval compares it like any other output).
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection, QuadMesh
from matplotlib.container import BarContainer
from matplotlib.quiver import Quiver
from matplotlib.ticker import LogFormatter, ScalarFormatter

from course.i18n import _
from course.spoken import flat as _flat
from course.spoken import in_list as _list
from course.spoken import number  # noqa: F401 - part of this module's interface
from course.spoken import sentence as _sentence

# A description longer than this is told again with fewer details (a screen reader reads
# the whole alt at once: no figure should take more than a minute or so to hear).
MAX_CHARS = 700
MEASURED = "course-measured"   # the gid of an axes whose values are measurements (mark_measured)
LABELS_LISTED = 24   # the texts of a diagram read out, at most
ROWS_LISTED = 8      # a heatmap with more rows gets its largest value, not one per row
LINES_LISTED = 6     # a panel with more curves gets their count and their common range
BARS_LISTED = 12


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
    then gives what is plotted and over which x, not the measured values (which would make
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
            and (ax.get_images() or ax.collections or ax.containers or _curves(ax)
                 or ax.get_title())]


def _colorbar_label(mappable) -> str:
    cb = getattr(mappable, "colorbar", None)
    if cb is None:
        return ""
    return _flat(cb.ax.get_ylabel() or cb.ax.get_xlabel())


def _named(axis) -> bool:
    """Whether the axis's ticks are names (set_xticklabels, categories), not matplotlib's
    numbers for positions (which are positions, not the names of rows or bars)."""
    return not isinstance(axis.get_major_formatter(), (ScalarFormatter, LogFormatter))


def _tick_names(ax, which: str, count: int) -> list[str]:
    """The tick label at each of positions 0..count-1 of the x or y axis, or its number. An
    axes that shares the axis with others (subplots(sharey=True) labels only the outer ones)
    takes the names of the first of them that has some."""
    shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    for other in [ax, *shared.get_siblings(ax)]:
        axis = other.xaxis if which == "x" else other.yaxis
        if not _named(axis):
            continue
        names = [str(i) for i in range(count)]
        for loc, label in zip(axis.get_ticklocs(), axis.get_ticklabels(), strict=False):
            text = _flat(label.get_text())
            if text and abs(loc - round(loc)) < 1e-9 and 0 <= round(loc) < count:
                names[int(round(loc))] = text
        if any(n != str(i) for i, n in enumerate(names)):
            return names
    return [str(i) for i in range(count)]


def _panel(ax, detail: int, said: dict) -> list[str]:
    if not ax.axison and not ax.get_images() and not any(
            isinstance(c, (QuadMesh, PathCollection, Quiver)) for c in ax.collections):
        return [_diagram(ax, detail)]   # boxes, arrows and words: its lines are not curves
    clauses, quivers = [], []
    for im in ax.get_images():
        clauses.append(_heatmap(ax, im, detail, said))
    for coll in ax.collections:
        if isinstance(coll, QuadMesh):
            clauses.append(_heatmap(ax, coll, detail, said))
        elif isinstance(coll, PathCollection) and len(coll.get_offsets()):
            clauses.append(_points(ax, coll))
        elif isinstance(coll, Quiver):
            quivers.append(coll)
    if quivers:
        clauses.append(_arrows(quivers))
    for container in ax.containers:
        if isinstance(container, BarContainer):
            clauses.append(_bars(ax, container, detail))
    curves = []
    for line in _curves(ax):
        stems = _stems(line)
        if stems is None:
            curves.append(line)
        else:   # bars drawn as one line of vertical segments (notebook 06, for speed)
            clauses.append(_stem_bars(ax, line, *stems, detail))
    if curves:
        clauses.append(_curves_text(ax, curves, detail))
    return [c for c in clauses if c]


def _stems(line):
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


def _stem_bars(ax, line, x, heights, detail: int) -> str:
    label = _label(line)
    lead = _("{label}: ").format(label=label) if label else ""
    axis_label = _axis_label(ax, "y")
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


def _heatmap(ax, mappable, detail: int, said: dict) -> str:
    values = np.ma.asarray(mappable.get_array(), dtype=float)
    if values.ndim != 2:   # an RGB picture, not a map of values
        return _("a picture of {n} × {m} pixels.").format(n=values.shape[0], m=values.shape[1])
    values = np.ma.masked_invalid(np.ma.masked_equal(values, -np.inf))
    n, m = values.shape
    text = _("a heatmap of {n} × {m} values").format(n=n, m=m)
    what = _colorbar_label(mappable)
    if what:
        text += _(" ({what})").format(what=what)
    rows, cols = _axis_label(ax, "y"), _axis_label(ax, "x")
    # with fewer details, the rows and columns an earlier panel named are not named again
    # (notebook 08's layers alternate between two pairs of names)
    named = said.setdefault("rows and columns", set())
    if rows and cols and (detail >= 2 or (rows, cols) not in named):
        text += _(", rows: {rows}, columns: {cols}").format(rows=rows, cols=cols)
    named.add((rows, cols))
    empty = int(np.ma.count_masked(values))
    if empty == values.size:
        return _sentence(text + _(", every cell empty"))
    lo, hi = values.min(), values.max()
    if lo == hi:
        text += _(", every cell {v}").format(v=number(lo))
    else:
        text += _(", from {lo} to {hi}").format(lo=number(lo), hi=number(hi))
    if empty:
        text += _(", {k} of {total} cells empty (masked)").format(k=empty, total=n * m)
    if lo != hi and np.all((values == lo) | (values == hi) | np.ma.getmaskarray(values)):
        # two values only (a mask, a pattern): how many cells have each, not "largest"
        return _sentence(text + _(", {hi} in {k} of {total} cells and {lo} in the others").format(
            k=int(np.ma.sum(values == hi)), total=n * m, hi=number(hi), lo=number(lo)))
    if detail >= 1 and m > 1 and lo != hi:
        row_names, col_names = _tick_names(ax, "y", n), _tick_names(ax, "x", m)
        if n <= ROWS_LISTED:
            best, flat = [], []
            for i in range(n):
                top = _largest(values[i])
                if not top:
                    flat.append(i)   # an empty or constant row has no largest column
                    continue
                # Translators: between the names of columns that tie for a row's largest value
                # (a screen reader says "/" as "slash")
                tie = _(" and ")
                cols = tie.join(col_names[j] for j in top[:3]) + (tie + "…" if len(top) > 3 else "")
                best.append(_("{row} → {col} ({v})").format(
                    row=row_names[i], col=cols, v=number(values[i, top[0]])) if detail >= 2
                    else _("{row} → {col}").format(row=row_names[i], col=cols))
            text += _("; largest in each row: {best}").format(best=_list(best))
            if flat:   # said, not left out silently, with the value when they share one
                rows = _list(row_names[i] for i in flat)
                kept = values[flat][np.isfinite(values[flat])]
                if kept.size and (kept == kept[0]).all():
                    text += (_("; {v} in every cell of the other row ({rows})") if len(flat) == 1
                             else _("; {v} in every cell of the other rows ({rows})")).format(
                        v=number(kept[0]), rows=rows)
                else:
                    text += (_("; the same in every cell of the other row ({rows})")
                             if len(flat) == 1 else
                             _("; the same in every cell of the other rows ({rows})")).format(rows=rows)
        else:
            i, j = np.unravel_index(int(values.argmax()), values.shape)
            text += _("; largest at row {row}, column {col}").format(
                row=row_names[i], col=col_names[j])
            if n == m and n > 2:
                on_diagonal = sum(1 for r in range(n) if _largest(values[r]) == [r])
                text += _("; the largest on the diagonal in {k} of {n} rows").format(
                    k=on_diagonal, n=n)
    return _sentence(text)


def _largest(row) -> list[int]:
    """The columns where a row of a heatmap has its largest value (more than one on a tie),
    or [] for a row that is empty or the same everywhere."""
    if row.count() == 0 or row.min() == row.max():
        return []
    top = row.max()
    return [int(j) for j in np.flatnonzero(np.ma.filled(row, -np.inf) >= top - 1e-9 * max(1.0, abs(top)))]


def _curves(ax) -> list:
    """The drawn curves of ax: visible lines with more than two points (not reference lines)."""
    return [line for line in ax.get_lines() if line.get_visible()
            and len(np.atleast_1d(line.get_xdata())) > 2]


def _label(artist) -> str:
    label = artist.get_label()
    return "" if not label or label.startswith("_") else _flat(label)


def _axis_label(ax, which: str) -> str:
    """The x or y label of ax, or of an axes it shares that axis with (subplots(sharey=True)
    labels only the first)."""
    shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    for other in [ax, *shared.get_siblings(ax)]:
        label = other.get_xlabel() if which == "x" else other.get_ylabel()
        if label:
            return _flat(label)
    return ""


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


def _curves_text(ax, curves, detail: int) -> str:
    xlabel, ylabel = _axis_label(ax, "x"), _axis_label(ax, "y")
    head = ""
    if xlabel or ylabel:
        # each axis named with the letter the numbers after it use ("at x = 0"), and its scale
        head = _("{y} against {x}").format(
            y=_with_letter(ylabel, "y", ax.get_yscale() == "log"),
            x=_with_letter(xlabel, "x", ax.get_xscale() == "log")) + ": "
    if ax.get_gid() == MEASURED:
        xs = np.concatenate([_finite(line)[0] for line in curves])
        names = [_label(line) for line in curves if _label(line)]
        return head + _sentence(_("measured on this machine, not repeated here (the values "
                                  "differ from run to run): {names}, x from {x0} to {x1}").format(
            names=_list(names) or len(curves), x0=number(xs.min()), x1=number(xs.max())))
    # curves told one by one need their names: six unnamed "from 1.89 to 0.27"s say nothing a
    # listener can tell apart (their legend is another panel's, or there is none)
    unnamed = len(curves) > 1 and not all(_label(line) for line in curves)
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
    for line in curves:   # a curve drawn again under another name: "p = 10, the same as p = 0"
        lead = _("{label}, ").format(label=_label(line)) if _label(line) else ""
        text = _curve(line, detail)
        body = text[len(lead):]
        if lead and body in said:
            text = _("{label}, the same as {other}").format(label=_label(line), other=said[body])
        elif lead:
            said[body] = _label(line)
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


def _curve(line, detail: int) -> str:
    x, y = _finite(line)
    label = _label(line)
    lead = _("{label}, ").format(label=label) if label else ""
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


def _bars(ax, container, detail: int) -> str:
    horizontal = getattr(container, "orientation", "vertical") == "horizontal"
    values = np.array([p.get_width() if horizontal else p.get_height()
                       for p in container.patches], dtype=float)
    if values.size == 0:
        return ""
    label = _label(container)
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
    if not _named(axis):
        return ""
    locs = np.asarray(axis.get_ticklocs(), dtype=float)
    if locs.size == 0:
        return ""
    k = int(np.abs(locs - pos).argmin())
    gap = np.diff(np.sort(locs)).min() if locs.size > 1 else np.inf
    return _flat(axis.get_ticklabels()[k].get_text()) if abs(locs[k] - pos) < gap / 2 else ""


def _points(ax, coll) -> str:
    xy = np.asarray(coll.get_offsets(), dtype=float)
    label = _label(coll)
    lead = _("{label}: ").format(label=label) if label else ""
    return lead + _sentence(_("{k} points, x from {x0} to {x1}, y from {y0} to {y1}").format(
        k=len(xy), x0=number(xy[:, 0].min()), x1=number(xy[:, 0].max()),
        y0=number(xy[:, 1].min()), y1=number(xy[:, 1].max())))


def _point(x, y) -> str:
    return f"({number(x)}, {number(y)})"


def _arrows(quivers) -> str:
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


def _diagram(ax, detail: int) -> str:
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
