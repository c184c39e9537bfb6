"""A heatmap in words (course.describe): its size, its rows and columns, the range of its
values, its empty cells, and which column each row weights most and how much."""

from __future__ import annotations

import numpy as np

from course.describe.common import label_of_axis, tick_names
from course.i18n import _
from course.spoken import flat as _flat
from course.spoken import in_list as _list
from course.spoken import number
from course.spoken import sentence as _sentence

ROWS_LISTED = 8      # a heatmap with more rows gets its largest value, not one per row


def _colorbar_label(mappable) -> str:
    cb = getattr(mappable, "colorbar", None)
    if cb is None:
        return ""
    return _flat(cb.ax.get_ylabel() or cb.ax.get_xlabel())


def heatmap(ax, mappable, detail: int, said: dict) -> str:
    values = np.ma.asarray(mappable.get_array(), dtype=float)
    if values.ndim != 2:   # an RGB picture, not a map of values
        return _("a picture of {n} × {m} pixels.").format(n=values.shape[0], m=values.shape[1])
    values = np.ma.masked_invalid(np.ma.masked_equal(values, -np.inf))
    n, m = values.shape
    text = _("a heatmap of {n} × {m} values").format(n=n, m=m)
    what = _colorbar_label(mappable)
    if what:
        text += _(" ({what})").format(what=what)
    rows, cols = label_of_axis(ax, "y"), label_of_axis(ax, "x")
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
        row_names, col_names = tick_names(ax, "y", n), tick_names(ax, "x", m)
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
