"""The course's figure style and the drawing helpers several notebooks share.

Nothing here runs on import. Each notebook's first code cell calls
``use_course_style()``, which sets the course's resolution and fonts (including
a font with Japanese glyphs for labels like 私, は, 猫) and tells the inline
backend to show figures as they are laid out.
"""

from __future__ import annotations

import warnings

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

from course.i18n import _

COURSE_STYLE = {
    "figure.dpi": 80,          # projector-readable, small PNGs
    "font.size": 11,
    "axes.titlesize": 12,
    "svg.hashsalt": "attention-notebooks",
}


def use_course_style() -> None:
    """Apply the course's figure style: resolution, font sizes, Japanese glyphs, one draw per figure.

    Call it once, in a notebook's first code cell (tests and scripts call it too). It changes
    matplotlib's global settings, which is why it is an explicit call and not an import side effect.
    """
    from matplotlib_fontja import japanize  # bundles IPAexGothic: without it 猫 renders as a box

    japanize()  # registers the font and makes it the default family
    matplotlib.rcParams.update(COURSE_STYLE)
    _one_draw_per_notebook_figure()


def _one_draw_per_notebook_figure() -> None:
    """Show notebook figures as laid out, instead of re-cropping them.

    IPython's inline backend saves each figure with bbox_inches="tight", which draws
    it twice (once to measure, once to save). Our figures already fit their canvas
    (constrained layout), so the second draw only costs time: about half of every
    notebook's plotting time.
    """
    try:
        from IPython import get_ipython
        from matplotlib_inline.config import InlineBackend
    except ImportError:
        return
    if get_ipython() is None:  # plain Python (tests, scripts): no inline backend
        return
    cfg = InlineBackend.instance()
    with warnings.catch_warnings():  # matplotlib_inline still uses an old-style traitlets observer
        warnings.simplefilter("ignore", DeprecationWarning)
        cfg.print_figure_kwargs = {**cfg.print_figure_kwargs, "bbox_inches": None}


def attention_heatmap(weights, query_labels=None, key_labels=None, title=None,
                      ax=None, annotate=True, vmax=1.0):
    """Heatmap of an (n, m) weight matrix: rows = queries, columns = keys, values printed.

    title: None gives "attention weights A" (in the course's current language, course.i18n).
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2:
        raise ValueError(f"weights must be 2-D (n, m), got shape {weights.shape}")
    n, m = weights.shape
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.0 + 0.8 * m, 0.8 + 0.7 * n), layout="constrained")
    im = ax.imshow(weights, cmap="Blues", vmin=0.0, vmax=vmax)
    ax.set_xticks(range(m), key_labels if key_labels is not None else range(m))
    ax.set_yticks(range(n), query_labels if query_labels is not None else range(n))
    ax.set_xlabel(_("key position j"))
    ax.set_ylabel(_("query position i"))
    ax.set_title(_("attention weights A") if title is None else title)
    if annotate:
        for i in range(n):
            for j in range(m):
                ax.text(j, i, f"{weights[i, j]:.2f}", ha="center", va="center",
                        color="white" if weights[i, j] > 0.6 * vmax else "black", fontsize=9)
    return ax.figure, im
