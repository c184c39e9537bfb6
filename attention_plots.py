"""attention_plots: the figures of the course, and the numbers behind them.

Every figure the notebooks show is drawn here, so it can be tested and reused;
a notebook only calls it (static figure) or wires it to a slider (live figure).

Two kinds of figure:

- Static: a function that returns a matplotlib Figure (pyplot), e.g.
  ``attention_heatmap(...)``; the notebook cell ends with ``plt.show()``.
- Live: a subclass of ``LiveFigure``. Its ``setup()`` builds the axes and
  artists once; its ``update(**values)`` changes the artists' data (no
  re-layout from scratch, so a slider redraws in a few milliseconds) and
  returns a short text with the numbers it shows. ``interactive(live, **controls)``
  wires ipywidgets controls to it: on every change the figure is re-rendered
  into an ``ipywidgets.Image`` and the text into a ``<pre>``.

Japanese labels (私, は, 猫): ``matplotlib_fontja`` registers a font with the
glyphs; importing this module selects it.
"""

from __future__ import annotations

import io

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

try:  # a font with Japanese glyphs; without it labels like 猫 render as boxes
    import matplotlib_fontja  # noqa: F401  (registers the font on import)
    JAPANESE_FONT = True
except ImportError:  # pragma: no cover - listed in requirements.txt
    JAPANESE_FONT = False

import attention_core as ac  # noqa: F401  (used by the notebook sections below)

matplotlib.rcParams.update({
    "figure.dpi": 80,          # projector-readable, small PNGs
    "font.size": 11,
    "axes.titlesize": 12,
    "svg.hashsalt": "attention-notebooks",
})


# --------------------------------------------------------------------------
# Live figures: drawn once, updated in place, rendered to PNG for a widget
# --------------------------------------------------------------------------

class LiveFigure:
    """A figure built once (setup) and updated in place (update) for a slider."""

    figsize: tuple[float, float] = (6.0, 3.0)

    def __init__(self):
        self.fig = Figure(figsize=self.figsize, dpi=80, layout="constrained")
        FigureCanvasAgg(self.fig)
        self.setup()

    def setup(self) -> None:
        """Create axes and artists (override)."""
        raise NotImplementedError

    def update(self, **values) -> str:
        """Change the artists for new control values; return the numbers shown, as text (override)."""
        raise NotImplementedError

    def png(self) -> bytes:
        """Render the current figure to PNG bytes (what the Image widget shows)."""
        buf = io.BytesIO()
        self.fig.savefig(buf, format="png", pil_kwargs={"compress_level": 1})
        return buf.getvalue()

    def render(self, **values) -> tuple[str, bytes]:
        """update() then png(): everything one slider move costs in the kernel."""
        text = self.update(**values)
        return text, self.png()

    def _repr_png_(self):  # a LiveFigure displayed as the last value of a cell shows its figure
        return self.png()


def interactive(live: LiveFigure, **controls):
    """Wire ipywidgets controls to a LiveFigure: returns a VBox(controls, text, image).

    Each control's name is the keyword passed to live.update(). The figure is
    shown in an ipywidgets.Image and the numbers in a <pre>, both replaced on
    every change; the first state is drawn immediately.
    """
    import ipywidgets as widgets

    image = widgets.Image(format="png")
    text = widgets.HTML()
    image.add_class("live-figure-image")
    text.add_class("live-figure-text")

    def redraw(_change=None):
        summary, png = live.render(**{name: c.value for name, c in controls.items()})
        text.value = "<pre>" + _escape(summary) + "</pre>"
        image.value = png

    for c in controls.values():
        c.observe(redraw, names="value")
    redraw()
    box = widgets.VBox([widgets.VBox(list(controls.values())), text, image])
    box.live, box.redraw, box.controls = live, redraw, controls  # for tests and benchmarks
    return box


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# --------------------------------------------------------------------------
# Shared static figures
# --------------------------------------------------------------------------

def attention_heatmap(weights, query_labels=None, key_labels=None, title="attention weights A",
                      ax=None, annotate=True, vmax=1.0):
    """Heatmap of an (n, m) weight matrix: rows = queries, columns = keys, values printed."""
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2:
        raise ValueError(f"weights must be 2-D (n, m), got shape {weights.shape}")
    n, m = weights.shape
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.0 + 0.8 * m, 0.8 + 0.7 * n))
    im = ax.imshow(weights, cmap="Blues", vmin=0.0, vmax=vmax)
    ax.set_xticks(range(m), key_labels if key_labels is not None else range(m))
    ax.set_yticks(range(n), query_labels if query_labels is not None else range(n))
    ax.set_xlabel("key position j")
    ax.set_ylabel("query position i")
    ax.set_title(title)
    if annotate:
        for i in range(n):
            for j in range(m):
                ax.text(j, i, f"{weights[i, j]:.2f}", ha="center", va="center",
                        color="white" if weights[i, j] > 0.6 * vmax else "black", fontsize=9)
    return ax.figure, im


# ==========================================================================
# Notebook-specific figures. One section per notebook, in course order.
# ==========================================================================

# --- 01 Q, K, V projections -------------------------------------------------

# --- 02 The worked 3x2 example ----------------------------------------------

# --- 03 Scaling and softmax saturation -------------------------------------

# --- 04 Masking -------------------------------------------------------------

# --- 05 Multi-head attention -----------------------------------------------

# --- 06 Positional encoding ------------------------------------------------

# --- 07 Feed-forward network -----------------------------------------------

# --- 08 The Transformer block ----------------------------------------------

# --- 09 The cost of attention ----------------------------------------------
