"""What the live-figure tests of the companions share: is each blitted frame the full draw?

A LiveFigure redraws only its changing artists over a background drawn once (course/live.py);
for every state a test names, the PNG the widget would show must be what a full draw of the same
state gives. Image compositing may round a few edge pixels of an image panel differently, so
`edges` allows a tiny fraction of pixels off by more than 2 levels; `exact` allows none off by
more than 1 (Agg rounding of a cached label).
"""

from __future__ import annotations

import io

import numpy as np


def pixels(png: bytes) -> np.ndarray:
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA")).astype(int)


def blit_mismatches(live, states, *, tolerance: str = "edges", region=None) -> list:
    """The states (dicts of control values) whose blitted frame differs from a full draw.

    region : an axes whose box (plus 2 pixels) is the only part compared, or None (all).
    """
    bad = []
    for state in states:
        _, png = live.render(**state)
        diff = np.abs(pixels(png) - pixels(live.full_png()))
        if region is not None:
            x0, y0, x1, y1 = region.bbox.extents.astype(int)
            height = live.fig.canvas.get_width_height()[1]
            diff = diff[height - y1 - 2:height - y0 + 2, x0 - 2:x1 + 2]
        off = diff.max() > 1 if tolerance == "exact" else np.mean(diff > 2) >= 0.002
        if off:
            bad.append(state)
    return bad


def framed_row(frame, image) -> int | None:
    """The row of the heatmap `image` (an AxesImage, row 0 at the top) that the rectangle `frame`
    surrounds as the figure draws them: about one row high and centred on it, or None."""
    renderer = frame.figure.canvas.get_renderer()
    box, heat = frame.get_window_extent(renderer), image.get_window_extent(renderer)
    rows = image.get_array().shape[0]
    row_height = heat.height / rows
    if not 0.5 * row_height <= box.height <= 1.5 * row_height:
        return None
    row = (heat.y1 - (box.y0 + box.y1) / 2) / row_height  # from the top, in rows
    return int(row) if 0 <= row < rows and abs(row - int(row) - 0.5) < 0.25 else None
