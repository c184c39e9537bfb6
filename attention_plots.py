"""attention_plots: the figures of the course, and the numbers behind them.

Every figure the notebooks show is drawn here, so it can be tested and reused;
a notebook only calls it (static figure) or wires it to a slider (live figure).

Two kinds of figure:

- Static: a function that returns a matplotlib Figure (pyplot), e.g.
  ``attention_heatmap(...)``; the notebook cell ends with ``plt.show()``.
- Live: a subclass of ``LiveFigure``. Its ``setup()`` builds the axes and
  artists once and usually ends with ``self.blit(changing_artists)``; its
  ``update(**values)`` changes the artists' data and returns a short text with
  the numbers it shows. The layout is computed once and the static part drawn
  once, so a slider redraws only the changing artists (blitting), in a few
  milliseconds. ``interactive(live, **controls)`` wires ipywidgets controls to
  it: on every change the figure is re-rendered into an ``ipywidgets.Image``
  and the text into a ``<pre>``.

Japanese labels (私, は, 猫): ``matplotlib_fontja`` registers a font with the
glyphs; importing this module selects it.
"""

from __future__ import annotations

import functools
import io
import warnings

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.transforms import Affine2D

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


_one_draw_per_notebook_figure()


# --------------------------------------------------------------------------
# Live figures: drawn once, updated in place, rendered to PNG for a widget
# --------------------------------------------------------------------------

class LiveFigure:
    """A figure built once (setup) and updated in place (update) for a slider.

    Fast path (blitting): a subclass calls ``self.blit(changing)`` at the end of
    setup() with every artist that update() changes. The rest of the figure (axes,
    ticks, labels, static lines) is then drawn once into a background; png()
    restores it and draws only the changing artists on it. Whatever update()
    changes must be among them: axis limits and tick labels must stay fixed.
    Without blit(), png() draws the whole figure.
    """

    figsize: tuple[float, float] = (6.0, 3.0)

    def __init__(self):
        self.fig = Figure(figsize=self.figsize, dpi=80, layout="constrained")
        FigureCanvasAgg(self.fig)
        self._changing: list | None = None  # set by blit()
        self._background = None  # the static part, drawn once (with blit())
        self.setup()
        # Lay the figure out once, then freeze it: with constrained layout left on,
        # every full draw would run the layout solver again.
        self.fig.canvas.draw()  # with blit(): everything but the changing artists
        self.fig.set_layout_engine(None)
        if self._changing is not None:
            self._background = self.fig.canvas.copy_from_bbox(self.fig.bbox)

    def setup(self) -> None:
        """Create axes and artists (override)."""
        raise NotImplementedError

    def update(self, **values) -> str:
        """Change the artists for new control values; return the numbers shown, as text (override)."""
        raise NotImplementedError

    def blit(self, changing) -> None:
        """Call at the end of setup(): png() will redraw only `changing` over a background drawn once.

        The changing artists are left out of the background and drawn over it in the
        order a full draw uses (axes by axes, by zorder), followed within their axes by
        the spines, which a full draw puts over bars and images. So a blitted PNG equals
        a full draw as long as no other static artist is drawn over a changing one: give
        changing artists a zorder above static artists they may overlap. Texts set by
        update() should be the size they will have (layout is computed once, here).
        """
        changing = list(changing)
        whole = {id(a) for a in changing if isinstance(a, matplotlib.axes.Axes)}  # drawn with spines
        axes = {id(a.axes): a.axes for a in changing
                if getattr(a, "axes", None) is not None and id(a.axes) not in whole}
        for ax in axes.values():  # spines: in a full draw above bars (zorder 2.5 > 1)
            changing += [s for s in ax.spines.values() if not any(s is c for c in changing)]
        for artist in changing:
            artist.set_animated(True)  # left out of the background
        self._changing = self._draw_order(changing)

    def _draw_order(self, artists) -> list:
        """`artists` sorted as Figure.draw would draw them: by axes (in figure order), then zorder."""
        fig_children = sorted(self.fig.get_children(), key=lambda a: a.get_zorder())
        fig_rank = {id(a): i for i, a in enumerate(fig_children)}

        def key(a):
            ax = a.axes if getattr(a, "axes", None) is not None and a is not a.axes else None
            if ax is None:  # a figure-level artist (fig.text, ...)
                return (fig_rank.get(id(a), -1), 0, 0)
            children = ax.get_children()
            index = next((i for i, c in enumerate(children) if c is a), len(children))
            return (fig_rank.get(id(ax), -1), a.get_zorder(), index)

        return sorted(artists, key=key)

    def png(self) -> bytes:
        """Render the current figure to PNG bytes (what the Image widget shows)."""
        canvas = self.fig.canvas
        if self._changing is None:
            canvas.draw()
        else:
            canvas.restore_region(self._background)
            renderer = canvas.get_renderer()
            for artist in self._changing:
                ax = getattr(artist, "axes", None)
                if ax is not None and ax is not artist and not ax.get_visible():
                    continue  # a hidden axes draws none of its artists
                artist.draw(renderer)
        return self._encode()

    def full_png(self) -> bytes:
        """The current state drawn in full, blitting or not: the reference png() must equal."""
        changing = self._changing or []
        for artist in changing:
            artist.set_animated(False)
        try:
            self.fig.canvas.draw()
            return self._encode()
        finally:
            for artist in changing:
                artist.set_animated(True)

    def _encode(self) -> bytes:
        """The Agg canvas as PNG bytes (Pillow, fast compression: drawing, not zlib, should dominate)."""
        from PIL import Image

        canvas = self.fig.canvas
        buf = io.BytesIO()
        Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1
                         ).save(buf, format="png", compress_level=1)
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
    every change; the first state is drawn immediately. A SelectionSlider's own
    readout is replaced by a read-only label (see _read_only_readout).
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
    rows = [_read_only_readout(c) if isinstance(c, widgets.SelectionSlider) else c
            for c in controls.values()]
    box = widgets.VBox([widgets.VBox(rows), text, image])
    box.live, box.redraw, box.controls = live, redraw, controls  # for tests and benchmarks
    INTERACTIVES.append(box)
    return box


INTERACTIVES: list = []  # every widget made by interactive() in this kernel (scripts/bench.py sweeps them)


def _read_only_readout(slider):
    """HBox(slider, label): the slider's readout switched off, its value shown in a Label.

    In ipywidgets 8 a SelectionSlider's readout can be clicked and typed into, but
    the typed value is ignored (upstream PR jupyter-widgets/ipywidgets#2976 is still
    open): a learner who types 512 for d_k sees nothing happen. A Label cannot be
    typed into; it follows the slider (the keyboard and mouse still move it).
    """
    import ipywidgets as widgets

    if not slider.readout:
        return slider
    slider.readout = False
    label = widgets.Label(str(slider.label))
    label.add_class("live-figure-readout")
    slider.observe(lambda _change: setattr(label, "value", str(slider.label)), names="index")
    return widgets.HBox([slider, label])


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
        fig, ax = plt.subplots(figsize=(1.0 + 0.8 * m, 0.8 + 0.7 * n), layout="constrained")
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

class LiveLibrary(LiveFigure):
    """Library toy: one query's attention weights over the books and the mixed contents o.

    queries : {name: (d_k,) vector}, keys : (m, d_k) catalogue entries,
    values : (m, d_v) book contents; update(query=name, strength=c) uses c * q.
    """

    figsize = (9.5, 3.6)

    def __init__(self, queries: dict, keys, values, book_labels, content_labels):
        self.queries = {name: np.asarray(q, dtype=float) for name, q in queries.items()}
        self.keys = np.asarray(keys, dtype=float)  # (m, d_k)
        self.values = np.asarray(values, dtype=float)  # (m, d_v)
        self.book_labels, self.content_labels = list(book_labels), list(content_labels)
        super().__init__()

    def setup(self) -> None:
        m, d_v = self.values.shape
        self.ax_w, self.ax_o = self.fig.subplots(1, 2, width_ratios=[m, d_v])
        self.w_bars = self.ax_w.bar(range(m), np.zeros(m), color="tab:blue")
        self.w_text = [self.ax_w.text(j, 0.0, "", ha="center", va="bottom") for j in range(m)]
        self.ax_w.set_xticks(range(m), self.book_labels, rotation=15)
        self.ax_w.set_ylim(0, 1.12)
        self.ax_w.set_xlabel(r"book $j$ (key $k_j$ = catalogue entry)")
        self.ax_w.set_ylabel(r"attention weight $a_j$")
        self.o_bars = self.ax_o.bar(range(d_v), np.zeros(d_v), color="tab:orange")
        self.o_text = [self.ax_o.text(c, 0.0, "", ha="center", va="bottom") for c in range(d_v)]
        self.ax_o.set_xticks(range(d_v), self.content_labels, rotation=15)
        self.ax_o.set_ylim(0, 1.15 * self.values.max())
        self.ax_o.set_xlabel("content feature")
        self.ax_o.set_ylabel(r"mixed contents $o$")
        self.ax_o.set_title(r"what the reader takes home: $o = a V$")
        self.ax_w.set_title("query 'a reader's wish' x 1: weights over the books")  # changes: no mathtext
        self.blit([*self.w_bars, *self.w_text, *self.o_bars, *self.o_text, self.ax_w.title])

    def update(self, query: str, strength: float = 1.0) -> str:
        q = strength * self.queries[query]  # (d_k,)
        out, w = ac.scaled_dot_product_attention(q[None, :], self.keys, self.values)
        w, o = w[0], out[0]  # (m,), (d_v,)
        for bar, text, a in zip(self.w_bars, self.w_text, w, strict=True):
            bar.set_height(a)
            text.set_y(a)
            text.set_text(f"{a:.2f}")
        for bar, text, x in zip(self.o_bars, self.o_text, o, strict=True):
            bar.set_height(x)
            text.set_y(x)
            text.set_text(f"{x:.2f}")
        self.ax_w.set_title(f"query '{query}' x {strength:g}: weights over the books")
        return ("weights a: " + ", ".join(f"{b} {a:.3f}" for b, a in zip(self.book_labels, w, strict=True))
                + "\nmixed o:   " + ", ".join(f"{c} {x:.3f}" for c, x in
                                              zip(self.content_labels, o, strict=True)))


def library_weights_grid(queries: dict, keys, book_labels, strengths=(1.0, 4.0)):
    """Small multiples: for each query, its weights over the books at two query strengths."""
    keys = np.asarray(keys, dtype=float)
    m = keys.shape[0]
    fig, axes = plt.subplots(1, len(queries), figsize=(3.2 * len(queries), 3.8), sharey=True,
                             layout="constrained")
    width = 0.8 / len(strengths)
    for ax, (name, q) in zip(np.atleast_1d(axes), queries.items(), strict=True):
        for s, c in enumerate(strengths):
            w = ac.attention_weights(c * np.asarray(q, float)[None, :], keys)  # (1, m)
            ax.bar(np.arange(m) + (s - (len(strengths) - 1) / 2) * width, w[0], width,
                   label=f"strength c = {c:g}")  # the query multiplied by c
        ax.set_title(f"query: {name}")
        ax.set_xticks(range(m), book_labels, rotation=60, ha="right")
        ax.set_xlabel(r"book $j$")
        ax.set_ylim(0, 1)
    np.atleast_1d(axes)[0].set_ylabel(r"attention weight $a_j$")
    fig.legend(*np.atleast_1d(axes)[0].get_legend_handles_labels(), loc="outside right upper")
    fig.suptitle("Attention mixes several books; a stronger query concentrates the mix")
    return fig


def heatmap_pair(left, right, labels, titles=("left", "right"), suptitle=None):
    """Two attention-weight heatmaps side by side (rows = queries, columns = keys)."""
    n = np.shape(left)[0]
    fig, axes = plt.subplots(1, 2, figsize=(2.0 + 1.6 * n, 0.6 + 0.75 * n), layout="constrained")
    for ax, weights, title in zip(axes, (left, right), titles, strict=True):
        attention_heatmap(weights, labels, labels, title=title, ax=ax)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


# --- 02 The worked 3x2 example ----------------------------------------------

_TOKEN_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")


def _value_plane(ax, V, labels):
    """Draw the value vectors v_j as labelled points in the (d_v = 2) plane, their hull shaded."""
    ax.fill(V[:, 0], V[:, 1], color="0.92", zorder=0)  # the weighted sums o_i all land in here
    for j, (v, lbl) in enumerate(zip(V, labels, strict=True)):
        color = _TOKEN_COLORS[j % len(_TOKEN_COLORS)]
        ax.plot(*v, "o", color=color, ms=8)
        ax.annotate(f"$v_{j + 1}$ ({lbl})", v, xytext=(5, 5), textcoords="offset points", color=color)
    lo, hi = min(0.0, V.min()) - 0.5, V.max() + 0.8
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.axhline(0, color="0.8", lw=0.8)
    ax.axvline(0, color="0.8", lw=0.8)
    ax.set_xlabel("value feature 1")
    ax.set_ylabel("value feature 2")


def _tip_to_tail(weights_row, V):
    """Starts and vectors of the contributions a_ij v_j, laid tip to tail; their sum is o_i."""
    contributions = weights_row[:, None] * V  # (m, 1) * (m, d_v) -> (m, d_v)
    starts = np.vstack([np.zeros(V.shape[1]), np.cumsum(contributions, axis=0)[:-1]])
    return starts, contributions


def contributions_grid(V, A, labels):
    """For each query i: the contributions a_ij v_j laid tip to tail, ending at o_i = A[i] @ V."""
    V, A = np.asarray(V, dtype=float), np.asarray(A, dtype=float)
    n = A.shape[0]
    fig, axes = plt.subplots(1, n, figsize=(3.8 * n, 5.0), layout="constrained")
    for i, ax in enumerate(np.atleast_1d(axes)):
        _value_plane(ax, V, labels)
        starts, contrib = _tip_to_tail(A[i], V)
        for j, (s, c) in enumerate(zip(starts, contrib, strict=True)):
            ax.quiver(*s, *c, angles="xy", scale_units="xy", scale=1, width=0.012, zorder=3,
                      color=_TOKEN_COLORS[j % len(_TOKEN_COLORS)],
                      label=f"$a_{{{i + 1}{j + 1}}} v_{j + 1}$ = {A[i, j]:.2f} $v_{j + 1}$")
        o = A[i] @ V  # (m,) @ (m, d_v) -> (d_v,)
        ax.plot(*o, "k*", ms=14, label=f"$o_{i + 1}$ = ({o[0]:.2f}, {o[1]:.2f})")
        ax.set_title(f"query {labels[i]} (i = {i + 1})")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=9, ncols=2)
    fig.suptitle(r"Each output $o_i = \sum_j a_{ij} v_j$: contributions drawn tip to tail")
    return fig


class LiveWorkedExample(LiveFigure):
    """Worked 3x2 example: pick the query token and the entry W_K[1, 1] (math: (2, 2)).

    Left: the query's weights a_i1..a_im. Right: contributions a_ij v_j tip to tail and o_i.
    """

    figsize = (9.0, 3.8)

    def __init__(self, Z, W_Q, W_K, W_V, labels):
        self.Z, self.W_Q, self.W_K, self.W_V = (np.asarray(M, dtype=float)
                                                for M in (Z, W_Q, W_K, W_V))
        self.labels = list(labels)
        super().__init__()

    def setup(self) -> None:
        m = self.Z.shape[0]
        V = self.Z @ self.W_V  # (m, d_model) @ (d_model, d_v) -> (m, d_v); W_K does not change V
        self.ax_w, self.ax_v = self.fig.subplots(1, 2, width_ratios=[1, 1.2])
        colors = [_TOKEN_COLORS[j % len(_TOKEN_COLORS)] for j in range(m)]
        self.w_bars = self.ax_w.bar(range(m), np.zeros(m), color=colors)
        self.w_text = [self.ax_w.text(j, 0.0, "", ha="center", va="bottom") for j in range(m)]
        self.ax_w.set_xticks(range(m), [f"{lbl} (j={j + 1})" for j, lbl in enumerate(self.labels)])
        self.ax_w.set_ylim(0, 1.1)
        self.ax_w.set_xlabel(r"key token $j$")
        self.ax_w.set_ylabel(r"attention weight $a_{ij}$")
        _value_plane(self.ax_v, V, self.labels)
        self.arrows = self.ax_v.quiver(np.zeros(m), np.zeros(m), np.zeros(m), np.zeros(m),
                                       angles="xy", scale_units="xy", scale=1, width=0.012,
                                       color=colors)
        (self.o_marker,) = self.ax_v.plot([], [], "k*", ms=14)
        self.ax_v.set_title("o_1 = (0.000, 0.000)")
        self.ax_w.set_title("query 私 (i=1), W_K[2,2] = -1")
        # arrows and o above the static points and labels of the plane: blitting draws them on top
        self.arrows.set_zorder(3.5)
        self.o_marker.set_zorder(3.6)
        self.blit([*self.w_bars, *self.w_text, self.arrows, self.o_marker, self.ax_w.title,
                   self.ax_v.title])

    def update(self, query: int, w_k22: float = -1.0) -> str:
        """Weights, contributions and o_i for query token `query` (0-based) with W_K[1, 1] = w_k22."""
        W_K = self.W_K.copy()
        W_K[1, 1] = w_k22
        steps = ac.attention_steps(self.Z @ self.W_Q, self.Z @ W_K, self.Z @ self.W_V)
        a = steps.weights[query]  # (m,)
        V = self.Z @ self.W_V  # (m, d_v)
        starts, contrib = _tip_to_tail(a, V)
        for bar, text, w in zip(self.w_bars, self.w_text, a, strict=True):
            bar.set_height(w)
            text.set_y(w)
            text.set_text(f"{w:.3f}")
        self.arrows.set_offsets(starts)
        self.arrows.set_UVC(contrib[:, 0], contrib[:, 1])
        o = steps.output[query]  # (d_v,)
        self.o_marker.set_data([o[0]], [o[1]])
        name = self.labels[query]
        self.ax_w.set_title(f"query {name} (i={query + 1}), W_K[2,2] = {w_k22:g}")
        self.ax_v.set_title(f"o_{query + 1} = ({o[0]:.3f}, {o[1]:.3f})")
        return (f"query {name} (i={query + 1}), W_K[2,2] = {w_k22:g}\n"
                f"weights a_{query + 1}j: " + " ".join(f"{w:.4f}" for w in a) + "\n"
                + "contributions a_ij v_j: "
                + "  ".join(f"({c[0]:.3f}, {c[1]:.3f})" for c in contrib) + "\n"
                + f"o_{query + 1} = ({o[0]:.4f}, {o[1]:.4f})")


# --- 03 Scaling and softmax saturation -------------------------------------

def ten_key_scores(d_k: int, seed: int = 0, m: int = 10) -> np.ndarray:
    """Raw scores q k_j^T of one query and m keys, all entries i.i.d. N(0, 1). Shape (m,).

    Draws q (1, d_k) then K (m, d_k) from np.random.default_rng(seed), in that order.
    """
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(1, d_k))  # (1, d_k)
    K = rng.normal(size=(m, d_k))  # (m, d_k)
    return (q @ K.T)[0]  # (1, d_k) @ (d_k, m) -> (1, m) -> (m,)


def softmax_saturation(scores) -> dict[str, np.ndarray]:
    """Max weight, entropy H(p) = -sum p log p (nats) and ||diag(p) - p p^T||_F of p = softmax(scores).

    scores : (..., m); softmax over the last axis. Each value has shape (...).
    The Jacobian J = diag(p) - p p^T is dp/ds, how much the weights move when the
    scores move: its norm goes to 0 when p saturates to one-hot.
    """
    p = ac.softmax(scores, axis=-1)  # (..., m)
    p_log_p = p * np.log(np.where(p > 0, p, 1.0))  # 0 log 0 = 0, no log(0) warning
    J = p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]  # (..., m, m)
    return {"max_weight": p.max(axis=-1), "entropy": -p_log_p.sum(axis=-1),
            "jacobian_norm": np.sqrt(np.sum(J ** 2, axis=(-2, -1)))}


def saturation_curves(d_ks, rng: np.random.Generator, m: int = 10,
                      num_draws: int = 200) -> dict[str, dict[str, np.ndarray]]:
    """Mean of softmax_saturation over num_draws random (q, K) for each d_k, unscaled and scaled.

    Returns {"unscaled": {...}, "scaled": {...}}, each {"max_weight", "entropy",
    "jacobian_norm"} -> array of shape (len(d_ks),).
    """
    out = {"unscaled": {}, "scaled": {}}
    for d_k in d_ks:
        q = rng.normal(size=(num_draws, 1, d_k))  # (draws, 1, d_k)
        K = rng.normal(size=(num_draws, m, d_k))  # (draws, m, d_k)
        S = (q @ np.swapaxes(K, -1, -2))[:, 0, :]  # (draws, 1, d_k) @ (draws, d_k, m) -> (draws, m)
        for name, s in (("unscaled", S), ("scaled", S / np.sqrt(d_k))):
            for key, value in softmax_saturation(s).items():
                out[name].setdefault(key, []).append(value.mean())
    return {name: {k: np.array(v) for k, v in d.items()} for name, d in out.items()}


_SATURATION_LABELS = {"max_weight": (r"max weight $\max_j\, p_j$", "largest weight"),
                      "entropy": ("entropy H(p) [nats]", "entropy"),
                      "jacobian_norm": (r"$\|\mathrm{diag}(p) - p p^{\mathsf{T}}\|_F$",
                                        "Jacobian norm (gradient size)")}


def plot_saturation_curves(d_ks, curves, m: int = 10):
    """Three panels: max weight, entropy, Jacobian norm against d_k, unscaled vs scaled."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), layout="constrained")
    for ax, (key, (ylabel, title)) in zip(axes, _SATURATION_LABELS.items(), strict=True):
        ax.plot(d_ks, curves["unscaled"][key], "o-", color="tab:red", label=r"raw $q \cdot k$")
        ax.plot(d_ks, curves["scaled"][key], "s-", color="tab:blue",
                label=r"scaled $q \cdot k / \sqrt{d_k}$")
        ax.set_xscale("log", base=2)
        ax.set_xlabel(r"$d_k$ (log scale)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title}, m = {m} keys")
        ax.grid(alpha=0.3)
    axes[1].axhline(np.log(m), color="gray", ls=":", label=f"uniform: ln {m}")
    axes[0].axhline(1 / m, color="gray", ls=":", label=f"uniform: 1/{m}")
    for ax in axes:
        ax.legend(fontsize=9)
    fig.suptitle("Softmax saturation (飽和) as d_k grows, mean over random draws")
    return fig


def plot_score_histograms(samples: dict):
    """Histograms of q.k (top, against N(0, d_k)) and q.k / sqrt(d_k) (bottom, against N(0, 1)).

    samples : {d_k: array of q.k values}.
    """
    d_ks = sorted(samples)
    fig, axes = plt.subplots(2, len(d_ks), figsize=(4.2 * len(d_ks), 6.4),
                             layout="constrained", sharex="row", sharey="row")
    axes = np.asarray(axes).reshape(2, len(d_ks))
    for col, d_k in enumerate(d_ks):
        s = np.asarray(samples[d_k], dtype=float)
        for row, (x, var, name) in enumerate(((s, d_k, r"$q \cdot k$"),
                                              (s / np.sqrt(d_k), 1.0, r"$q \cdot k / \sqrt{d_k}$"))):
            ax = axes[row, col]
            limit = 4 * np.sqrt(max(d_ks)) if row == 0 else 4.0
            grid = np.linspace(-limit, limit, 400)
            ax.hist(x, bins=np.linspace(-limit, limit, 61), density=True, color="tab:gray",
                    histtype="stepfilled", alpha=0.6,  # one polygon, not 60 bar patches
                    label=f"samples, var {x.var():.1f}")
            pdf = np.exp(-grid ** 2 / (2 * var)) / np.sqrt(2 * np.pi * var)
            ax.plot(grid, pdf, color="tab:red" if row == 0 else "tab:blue",
                    label=f"N(0, {var:g}) density")
            ax.set_title(f"{name}, $d_k$ = {d_k}")
            ax.set_xlabel(name)
            ax.legend(fontsize=9, loc="upper right")
    for ax in axes[:, 0]:  # rows share y: one label on the left
        ax.set_ylabel("density")
    fig.suptitle("Dot products of random vectors: spread grows like sqrt(d_k) unless scaled")
    return fig


def _draw_ten_key_bars(ax, weights, color, title):
    bars = ax.bar(np.arange(1, len(weights) + 1), weights, color=color)
    ax.set_ylim(0, 1.05)
    ax.set_xticks(np.arange(1, len(weights) + 1))
    ax.set_xlabel("key j")
    ax.set_ylabel(r"attention weight $p_j$")  # no 注意重み here: rotated, it is hard to read
    ax.set_title(title)
    return bars


def plot_ten_key_softmax(scores, d_k: int):
    """Seed 000's figure: softmax of raw scores (left) beside softmax of scores / sqrt(d_k) (right)."""
    scores = np.asarray(scores, dtype=float)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained", sharey=True)
    _draw_ten_key_bars(axes[0], ac.softmax(scores), "tab:red",
                       rf"softmax($q k_j^T$), no scaling, $d_k$ = {d_k}")
    _draw_ten_key_bars(axes[1], ac.softmax(scores / np.sqrt(d_k)), "tab:blue",
                       rf"softmax($q k_j^T / \sqrt{{d_k}}$), $d_k$ = {d_k}")
    axes[1].set_ylabel("")  # shared y axis: one label, on the left
    fig.suptitle(f"One query, {len(scores)} keys: raw scores saturate, scaled scores spread out "
                 "(注意重み = attention weights)")
    return fig


def plot_saturation_small_multiples(d_ks, seed: int = 0, m: int = 10):
    """Ten-key picture for several d_k: unscaled weights (top row) and scaled (bottom row)."""
    fig, axes = plt.subplots(2, len(d_ks), figsize=(2.6 * len(d_ks), 5.2),
                             layout="constrained", sharey=True)
    for col, d_k in enumerate(d_ks):
        s = ten_key_scores(d_k, seed, m)
        for row, (x, color, name) in enumerate(((s, "tab:red", "raw"),
                                                (s / np.sqrt(d_k), "tab:blue", "scaled"))):
            ax = axes[row, col]
            p = ac.softmax(x)
            ax.bar(np.arange(1, m + 1), p, color=color)
            ax.set_ylim(0, 1.05)
            ax.set_title(f"{name}, $d_k$ = {d_k}\nmax {p.max():.2f}", fontsize=10)
            ax.set_xticks([1, m])
            ax.set_xlabel("key j")
        axes[0, 0].set_ylabel("weight $p_j$ (raw)")
        axes[1, 0].set_ylabel("weight $p_j$ (scaled)")
    fig.suptitle(f"Seed {seed} at growing d_k (a new draw per width): raw softmax saturates, scaled does not")
    return fig


class LiveSaturation(LiveFigure):
    """Ten keys, one query, a chosen d_k: raw vs scaled softmax bars and the three saturation numbers."""

    figsize = (9.0, 3.4)
    m = 10
    seed = 0

    def setup(self) -> None:
        ax_raw, ax_scaled = self.fig.subplots(1, 2, sharey=True)
        zeros = np.zeros(self.m)
        self.bars = {"raw": _draw_ten_key_bars(ax_raw, zeros, "tab:red", ""),
                     "scaled": _draw_ten_key_bars(ax_scaled, zeros, "tab:blue", "")}
        ax_scaled.set_ylabel("")  # shared y axis: one label, on the left
        self.axes = {"raw": ax_raw, "scaled": ax_scaled}
        for ax in self.axes.values():  # two-line titles, as update() writes them
            ax.set_title("softmax\nmax weight", fontsize=10)
        self.blit([*self.bars["raw"], *self.bars["scaled"], *(ax.title for ax in self.axes.values())])

    def update(self, d_k: int = 512) -> str:
        s = ten_key_scores(d_k, self.seed, self.m)
        lines = [f"d_k = {d_k}, std of q.k = sqrt(d_k) = {np.sqrt(d_k):.1f}"]
        for name, x in (("raw", s), ("scaled", s / np.sqrt(d_k))):
            p = ac.softmax(x)
            for bar, h in zip(self.bars[name], p, strict=True):
                bar.set_height(h)
            sat = softmax_saturation(x)
            numbers = (f"max weight {sat['max_weight']:.3f}, entropy {sat['entropy']:.3f} nats, "
                       f"||J|| {sat['jacobian_norm']:.3f}")
            label = "softmax(q k^T)" if name == "raw" else "softmax(q k^T / sqrt(d_k))"
            self.axes[name].set_title(f"{label}, d_k = {d_k}\n{numbers}", fontsize=10)  # no mathtext: fast
            lines.append(f"{name:>6}: {numbers}")
        return "\n".join(lines)


# --- 04 Masking -------------------------------------------------------------

MASK_KINDS = ("none", "causal", "padding", "both")


def mask_for(kind: str, n: int, lengths, item: int) -> np.ndarray:
    """Additive (n, n) mask of one batch item: none, causal, padding, or both (their sum)."""
    if kind not in MASK_KINDS:
        raise ValueError(f"kind must be one of {MASK_KINDS}, got {kind!r}")
    M = np.zeros((n, n))
    if kind in ("causal", "both"):
        M = M + ac.causal_mask(n)  # (n, n)
    if kind in ("padding", "both"):
        M = M + ac.padding_mask(lengths, n)[item]  # (1, n) broadcasts over the n queries
    return M


def leak_test(attention, X, W_Q, W_K, W_V, position, rng: np.random.Generator,
              **kwargs) -> np.ndarray:
    """Replace the token X[position] by a random one; return how much each output row changed.

    attention : function (Q, K, V, **kwargs) -> output (..., n, d_v), e.g. lengths=... for padding;
    X : (..., n, d_model); position : index into the (..., n) axes (an int, or (b, j) for a batch).
    Returns max_k |out_new - out_old| per position, shape (..., n).
    """
    X = np.asarray(X, dtype=float)
    X_new = X.copy()
    X_new[position] = rng.normal(size=X.shape[-1])  # a different token at `position`
    old = attention(X @ W_Q, X @ W_K, X @ W_V, **kwargs)  # (..., n, d_v)
    new = attention(X_new @ W_Q, X_new @ W_K, X_new @ W_V, **kwargs)  # (..., n, d_v)
    return np.abs(new - old).max(axis=-1)  # (..., n)


def causal_attention(Q, K, V) -> np.ndarray:
    """Correct: softmax(Q K^T / sqrt(d_k) + causal mask) V, via attention_core. (n, d_v)."""
    return ac.scaled_dot_product_attention(Q, K, V, ac.causal_mask(Q.shape[-2]))[0]


def bug_causal_mask_on_values(Q, K, V) -> np.ndarray:
    """BUG, for demonstration: softmax over ALL keys, then zero the future values v_j (j > i) per query."""
    n = Q.shape[-2]
    allowed = np.isfinite(ac.causal_mask(n))  # (n, n), True where j <= i
    A = ac.attention_weights(Q, K)  # (n, m): future keys are still in every denominator
    return np.einsum("ij,ij,jd->id", A, allowed, V)  # sum_j a_ij [j <= i] v_j


def bug_causal_mask_after_softmax(Q, K, V) -> np.ndarray:
    """BUG, for demonstration: softmax over all keys, then zero future weights, no renormalising."""
    A = ac.attention_weights(Q, K) * np.isfinite(ac.causal_mask(Q.shape[-2]))  # rows no longer sum to 1
    return A @ V  # (n, m) @ (m, d_v) -> (n, d_v)


def padded_attention(Q, K, V, lengths) -> np.ndarray:
    """Correct: padding mask (batch, 1, m) hides the padded KEYS of each batch item. (batch, n, d_v)."""
    return ac.scaled_dot_product_attention(Q, K, V, ac.padding_mask(lengths, K.shape[-2]))[0]


def bug_padding_on_values(Q, K, V, lengths) -> np.ndarray:
    """BUG, for demonstration: zero the padded value rows v_j instead of masking the padded keys."""
    is_pad = np.arange(K.shape[-2])[None, :] >= np.asarray(lengths)[:, None]  # (batch, m)
    V_zeroed = np.where(is_pad[:, :, None], 0.0, V)  # (batch, m, d_v)
    return ac.attention_weights(Q, K) @ V_zeroed  # padded keys still take part in the softmax


def bug_padding_on_queries(Q, K, V, lengths) -> np.ndarray:
    """BUG, for demonstration: the padding mask put on the query axis, (batch, n, 1) instead of (batch, 1, m).

    Written with -1e9 as such code usually is: a whole padded query ROW gets the same -1e9,
    which softmax ignores, and the real queries still see the padded keys.
    """
    is_pad = np.arange(Q.shape[-2])[None, :] >= np.asarray(lengths)[:, None]  # (batch, n)
    wrong = np.where(is_pad, -1e9, 0.0)[:, :, None]  # (batch, n, 1): hides queries, not keys
    A = ac.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]) + wrong, axis=-1)
    return A @ V  # (batch, n, m) @ (batch, m, d_v) -> (batch, n, d_v)


def _draw_weights_image(ax, n):
    cmap = matplotlib.colormaps["Blues"].with_extremes(bad="0.55")  # blocked cells: grey
    im = ax.imshow(np.zeros((n, n)), cmap=cmap, vmin=0.0, vmax=1.0)
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xlabel("key position j")
    ax.set_ylabel("query position i")
    return im


def _masked_weights(Q, K, M) -> np.ndarray:
    """Weights softmax(Q K^T / sqrt(d_k) + M) as a masked array: blocked cells masked (grey)."""
    A = ac.attention_weights(Q, K, M)  # (..., n, m)
    return np.ma.masked_where(~np.isfinite(np.broadcast_to(M, A.shape)), A)


def masking_example(seed: int = 0, lengths=(6, 4, 2), d_model: int = 8, d_k: int = 4):
    """A padded batch for the mask pictures: Q, K of shape (batch, n, d_k), n = max(lengths)."""
    rng = np.random.default_rng(seed)
    n = max(lengths)
    X = rng.normal(size=(len(lengths), n, d_model))  # (batch, n, d_model)
    W_Q = rng.normal(0, d_model ** -0.5, size=(d_model, d_k))  # entries of Q, K: variance about 1
    W_K = rng.normal(0, d_model ** -0.5, size=(d_model, d_k))
    return X @ W_Q, X @ W_K  # (batch, n, d_model) @ (d_model, d_k) -> (batch, n, d_k)


def plot_mask_patterns(lengths=(6, 4, 2), seed: int = 0):
    """Small multiples: rows = batch items, columns = none / causal / padding / both; grey = blocked."""
    Q, K = masking_example(seed, lengths)
    n = Q.shape[-2]
    fig, axes = plt.subplots(len(lengths), 4, figsize=(11, 2.9 * len(lengths)),
                             layout="constrained", sharex=True, sharey=True)
    for b, length in enumerate(lengths):
        for c, kind in enumerate(MASK_KINDS):
            ax = axes[b, c]
            im = _draw_weights_image(ax, n)
            im.set_array(_masked_weights(Q[b], K[b], mask_for(kind, n, lengths, b)))
            ax.set_title(f"{kind}, item {b} (length {length})", fontsize=10)
            ax.label_outer()  # axis labels on the outer panels only: the panels share them
    fig.colorbar(im, ax=axes, shrink=0.5, label="attention weight (注意重み)")
    fig.suptitle("Mask patterns (マスク): grey cells are blocked (-inf), rows sum to 1 over the rest")
    return fig


class LiveMask(LiveFigure):
    """Pick a query position, a mask kind and a batch item: weights matrix (left) and that row (right)."""

    figsize = (9.5, 3.8)
    lengths = (6, 4, 2)
    seed = 0

    def setup(self) -> None:
        from matplotlib.patches import Rectangle

        self.Q, self.K = masking_example(self.seed, self.lengths)
        n = self.n = self.Q.shape[-2]
        ax_im, self.ax_bar = self.fig.subplots(1, 2, width_ratios=(1, 1.3))
        self.im = _draw_weights_image(ax_im, n)
        self.row_box = Rectangle((-0.5, -0.5), n, 1, fill=False, lw=3, edgecolor="tab:orange")
        ax_im.add_patch(self.row_box)
        self.ax_im = ax_im
        # blocked keys: a grey column behind, the grey of the blocked cells on the left
        self.blocked = self.ax_bar.bar(range(n), np.zeros(n), width=1.0, color="0.55", alpha=0.5)
        self.bars = self.ax_bar.bar(range(n), np.zeros(n), color="tab:blue")
        self.ax_bar.set_ylim(0, 1.05)
        self.ax_bar.set_xticks(range(n))
        self.ax_bar.set_xlabel("key position j")
        self.ax_bar.set_ylabel("weight $a_{ij}$")
        self.ax_im.set_title("mask", fontsize=10)
        self.ax_bar.set_title("query", fontsize=10)
        self.blit([self.im, self.row_box, *self.blocked, *self.bars, self.ax_im.title,
                   self.ax_bar.title])

    def update(self, position: int = 3, mask: str = "causal", item: int = 1) -> str:
        M = mask_for(mask, self.n, self.lengths, item)  # (n, n)
        W = _masked_weights(self.Q[item], self.K[item], M)  # (n, n), blocked cells masked
        self.im.set_array(W)
        self.row_box.set_y(position - 0.5)
        row = W[position].filled(0.0)
        allowed = np.isfinite(M[position])
        for bar, grey, h, ok in zip(self.bars, self.blocked, row, allowed, strict=True):
            bar.set_height(h)  # a blocked key's weight is exactly 0
            grey.set_height(0.0 if ok else 1.05)
        self.ax_im.set_title(f"mask: {mask}, item {item} (length {self.lengths[item]})",
                             fontsize=10)
        keys = [int(j) for j in np.flatnonzero(allowed)]
        self.ax_bar.set_title(f"query i = {position} may attend to keys {keys} (grey: blocked)",
                              fontsize=10)
        return (f"mask {mask}, batch item {item} (length {self.lengths[item]}), query {position}\n"
                f"may attend to keys {keys}\nweights {np.array2string(row, precision=3)}")


# --- 05 Multi-head attention -----------------------------------------------

def head_weights_row(weights, titles, labels=None, suptitle=None):
    """One annotated heatmap per head, side by side. weights : (h, n, m)."""
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 3:
        raise ValueError(f"weights must be (h, n, m), got shape {weights.shape}")
    h, n, m = weights.shape
    if len(titles) != h:
        raise ValueError(f"need one title per head: h = {h}, got {len(titles)} titles")
    fig, axes = plt.subplots(1, h, figsize=(0.3 + (0.75 * m + 0.7) * h, 1.5 + 0.6 * n),
                             layout="constrained")
    for ax, w, title in zip(np.atleast_1d(axes), weights, titles, strict=True):
        attention_heatmap(w, labels, labels, title=title, ax=ax)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def head_count_demo(seed: int = 0, n: int = 6, d_model: int = 12):
    """Fixed X (n, d_model) and W_Q, W_K, W_V, W_O (d_model, d_model) for the head-count slider.

    W_Q, W_K have std 0.45 so that Q K^T / sqrt(d_k) has std about 12 * 0.45^2 = 2.4 for
    every h (q has d_k entries of variance d_model * 0.45^2): the heads stay equally sharp
    whatever h is, and only the split of the same columns into heads changes.
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d_model))  # (n, d_model)
    W_Q = rng.normal(0.0, 0.45, size=(d_model, d_model))  # (d_model, h*d_k)
    W_K = rng.normal(0.0, 0.45, size=(d_model, d_model))  # (d_model, h*d_k)
    W_V = rng.normal(0.0, d_model ** -0.5, size=(d_model, d_model))  # (d_model, h*d_v)
    W_O = rng.normal(0.0, d_model ** -0.5, size=(d_model, d_model))  # (h*d_v, d_model)
    return {"X": X, "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "W_O": W_O}


def divisors(d: int) -> list[int]:
    """All h with d % h == 0, ascending: the head counts that split d_model evenly."""
    return [h for h in range(1, d + 1) if d % h == 0]


def _grid_positions(h: int, cols_max: int = 6) -> list[list[float]]:
    """[left, bottom, width, height] (figure fractions) of h axes in at most two rows of cols_max."""
    cols = min(h, cols_max)
    rows = -(-h // cols_max)
    cell_w, cell_h = 0.96 / cols_max, 0.41  # up to two rows between y = 0.02 and 0.84
    x0 = 0.02 + (cols_max - cols) * cell_w / 2  # centre the used columns ...
    y_top = 0.84 - (2 - rows) * cell_h / 2  # ... and the used rows
    return [[x0 + (r % cols) * cell_w + 0.12 * cell_w, y_top - (r // cols + 1) * cell_h + 0.1 * cell_h,
             0.76 * cell_w, 0.74 * cell_h] for r in range(h)]


class LiveHeadCount(LiveFigure):
    """Slider h over the divisors of d_model: the same W_Q, W_K split into h heads of d_k = d_model/h."""

    figsize = (9.0, 3.8)
    max_heads = 12

    def __init__(self, seed: int = 0):
        self.data = head_count_demo(seed)
        super().__init__()

    def setup(self) -> None:
        # positions set by update(), no layout engine
        self.fig.set_layout_engine(None)
        n = self.data["X"].shape[0]
        self.axes, self.images, self.labels = [], [], []
        for _ in range(self.max_heads):
            ax = self.fig.add_axes((0, 0, 0.1, 0.1))
            im = ax.imshow(np.zeros((n, n)), cmap="Blues", vmin=0.0, vmax=1.0, interpolation="none")
            ax.set_xticks([])
            ax.set_yticks([])
            # a plain text, not a title: titles are re-positioned on every draw (slow)
            self.labels.append(ax.text(0.5, 1.04, "", transform=ax.transAxes, ha="center",
                                       va="bottom", fontsize=10))
            self.axes.append(ax)
            self.images.append(im)
        self.title = self.fig.text(0.5, 0.97, "", ha="center", va="top", fontsize=12)
        self.fig.text(0.5, 0.005, "each square: rows = query i, columns = key j "
                      "(white 0 ... dark blue 1)", ha="center", va="bottom", fontsize=10)
        self.blit([*self.axes, *self.labels, self.title])  # axes move and hide: all of them change

    def update(self, h: int = 1) -> str:
        d = self.data
        d_model = d["X"].shape[1]
        if h not in divisors(d_model) or h > self.max_heads:
            raise ValueError(f"h must divide d_model = {d_model} (one of {divisors(d_model)}), got {h}")
        _, weights = ac.multi_head_attention(d["X"], d["X"], d["W_Q"], d["W_K"], d["W_V"],
                                             d["W_O"], h)  # weights (h, n, n)
        d_k = d_model // h
        params = sum(d[k].size for k in ("W_Q", "W_K", "W_V", "W_O"))
        slots = _grid_positions(h) + [None] * (self.max_heads - h)  # hidden axes need no slot
        for r, (ax, im, pos) in enumerate(zip(self.axes, self.images, slots, strict=True)):
            ax.set_visible(r < h)
            if r < h:
                ax.set_position(pos)
                im.set_array(weights[r])
                self.labels[r].set_text(f"head {r + 1}")
        self.title.set_text(f"h = {h} heads of d_k = d_v = {d_k}  (d_model = {d_model}, "
                            f"parameters 4 d_model² = {params})")
        sharp = weights.max(axis=-1).mean(axis=-1)  # (h,) mean over queries of the largest weight
        return (f"h = {h}: d_k = d_v = d_model / h = {d_k}; parameters = {params} "
                f"(= 4 * {d_model}^2)\nmean largest weight per query, head by head: "
                + " ".join(f"{s:.2f}" for s in sharp))


def head_weights_by_h(data: dict, hs=(1, 2, 3, 6)):
    """Small multiples: for each h in hs one row with the h heads' weights (n, n)."""
    X = data["X"]
    cols = max(hs)
    fig, axes = plt.subplots(len(hs), cols, figsize=(1.45 * cols + 0.6, 1.55 * len(hs) + 0.5),
                             squeeze=False, layout="constrained")
    for row, h in zip(axes, hs, strict=True):
        _, weights = ac.multi_head_attention(X, X, data["W_Q"], data["W_K"], data["W_V"],
                                             data["W_O"], h)  # (h, n, n)
        for r, ax in enumerate(row):
            ax.set_xticks([])
            ax.set_yticks([])
            if r >= h:
                ax.set_visible(False)
                continue
            im = ax.imshow(weights[r], cmap="Blues", vmin=0.0, vmax=1.0)
            ax.set_title(f"h={h}, head {r + 1}", fontsize=9)
            if r == 0:
                ax.set_ylabel(f"d_k = {X.shape[1] // h}\nquery i")
            ax.set_xlabel("key j", fontsize=8)
    fig.colorbar(im, ax=axes, shrink=0.5, label="attention weight")
    fig.suptitle("Same W_Q, W_K split into h heads: attention weights per head")
    return fig


# --- 06 Positional encoding ------------------------------------------------

def pe_heatmap(num_positions: int = 64, d_model: int = 32):
    """PE as an image: rows = positions pos, columns = dimensions (even = sin, odd = cos)."""
    pe = ac.sinusoidal_positional_encoding(num_positions, d_model)  # (num_positions, d_model)
    fig, ax = plt.subplots(figsize=(7.5, 4.5), layout="constrained")
    im = ax.imshow(pe, cmap="RdBu_r", vmin=-1.0, vmax=1.0, aspect="auto", interpolation="nearest")
    ax.set_xlabel("dimension of PE (even 2i: sin, odd 2i+1: cos)")
    ax.set_ylabel("position pos")
    ax.set_title(f"Sinusoidal positional encoding PE (位置エンコーディング), d_model = {d_model}")
    fig.colorbar(im, ax=ax, label="PE(pos, dim)")
    return fig


def pe_curves(num_positions: int = 100, d_model: int = 32, columns=(0, 1, 6, 14)):
    """A few columns of PE as curves over the position."""
    pe = ac.sinusoidal_positional_encoding(num_positions, d_model)  # (num_positions, d_model)
    fig, ax = plt.subplots(figsize=(10.0, 3.8), layout="constrained")
    for c in columns:
        i = c // 2
        wave = "sin" if c % 2 == 0 else "cos"
        wavelength = 2 * np.pi * 10000.0 ** (2 * i / d_model)
        ax.plot(np.arange(num_positions), pe[:, c], lw=1.5, marker=".", ms=6,
                label=f"dim {c} = {wave}, i = {i}\nwavelength {wavelength:.1f}")
    ax.set_xlabel("position pos (integers only: the dots)")
    ax.set_ylabel("PE(pos, dim)")
    ax.set_title(f"Columns of PE: low dimensions oscillate fast, high ones slowly (d_model = {d_model})")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=10)
    return fig


def pe_dot_vs_offset(d_model: int = 32, positions=(0, 10, 50), max_k: int = 60):
    """PE(p) . PE(p + k) against k for several p: the curves coincide (depends on k only)."""
    pe = ac.sinusoidal_positional_encoding(max(positions) + max_k + 1, d_model)
    ks = np.arange(max_k + 1)
    fig, ax = plt.subplots(figsize=(7.5, 3.8), layout="constrained")
    styles = ["-", "--", ":", "-."]
    for idx, p in enumerate(positions):
        dots = pe[p + ks] @ pe[p]  # (max_k+1, d_model) @ (d_model,) -> (max_k+1,)
        ax.plot(ks, dots, styles[idx % len(styles)], lw=3 - 0.6 * idx, label=f"p = {p}")
    ax.set_xlabel("offset k")
    ax.set_ylabel("PE(p) · PE(p + k)")
    ax.set_title(f"Dot product of two encodings depends on the offset k only (d_model = {d_model})")
    ax.axhline(0, color="grey", lw=0.8)
    ax.legend(title="start position")
    return fig


def _bar_segments(values: np.ndarray, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """x, y of vertical segments 0 -> values[c] at x = c (every other c from offset), NaN-separated.

    One Line2D drawn this way looks like a bar chart and redraws much faster than d_model bars.
    """
    xs = np.arange(offset, len(values), 2, dtype=float)
    x = np.repeat(xs, 3)  # x, x, nan for each bar
    x[2::3] = np.nan
    y = np.zeros_like(x)
    y[1::3] = values[offset::2]
    return x, y


class LivePositionalEncoding(LiveFigure):
    """Sliders pos and d_model: the vector PE(pos) as bars, and PE(pos) . PE(pos + k) against k.

    Both axes are fixed, in units of d_model, so only the data is redrawn (blitting):
    dimension c is drawn in the slot [c, c + 1) of 0 ... d_model, and the dot products
    in units of d_model/2 (they lie in [-d_model/2, d_model/2], as |PE(pos)|^2 = d_model/2).
    """

    figsize = (10.0, 3.8)
    max_d_model = 128
    max_k = 60

    def setup(self) -> None:
        ax_bar, ax_dot = self.fig.subplots(1, 2, width_ratios=(1.3, 1))
        ax_bar.axhline(0, color="grey", lw=0.8)  # before the bars: drawn under them
        (self.sin_bars,) = ax_bar.plot([], [], color="tab:blue", solid_capstyle="butt")
        (self.cos_bars,) = ax_bar.plot([], [], color="tab:orange", solid_capstyle="butt")
        ax_bar.set_xlim(0, 1)
        ax_bar.set_xticks([0, 0.5, 1], ["0", "d_model/2", "d_model"])
        ax_bar.set_ylim(-1.1, 1.1)
        ax_bar.set_yticks([-1, 0, 1])
        ax_bar.set_xlabel("dimension of PE (blue: sin at 2i, orange: cos at 2i+1)")
        ax_bar.set_ylabel("PE(pos, dim)")
        self.ax_bar = ax_bar
        ax_dot.axhline(0, color="grey", lw=0.8)
        ks = np.arange(self.max_k + 1)
        (self.line,) = ax_dot.plot(ks, np.zeros(len(ks)), lw=2, marker="o", ms=3)
        ax_dot.set_xlim(0, self.max_k)
        ax_dot.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(5, integer=True))
        ax_dot.set_ylim(-1.1, 1.1)
        ax_dot.set_yticks([-1, -0.5, 0, 0.5, 1])
        ax_dot.set_xlabel("offset k")
        ax_dot.set_ylabel("PE(pos) · PE(pos + k) / (d_model/2)")
        self.ax_dot = ax_dot
        self.bar_title = ax_bar.set_title(" ")
        self.dot_title = ax_dot.set_title(" ")
        self.update(pos=100, d_model=128)  # titles of their largest size for the one layout
        self.blit([self.sin_bars, self.cos_bars, self.line, self.bar_title, self.dot_title])

    def update(self, pos: int = 0, d_model: int = 16) -> str:
        if not 2 <= d_model <= self.max_d_model or d_model % 2:
            raise ValueError(f"d_model must be even and in 2..{self.max_d_model}, got {d_model}")
        pe = ac.sinusoidal_positional_encoding(pos + self.max_k + 1, d_model)  # (pos+max_k+1, d_model)
        # the data stay in dimensions and dot products; a transform draws them in units of d_model
        in_dims = Affine2D().translate(0.5, 0.0).scale(1.0 / d_model, 1.0) + self.ax_bar.transData
        slot = self.ax_bar.bbox.width * 72.0 / self.fig.dpi / d_model  # one dimension's slot, points
        for line, offset in ((self.sin_bars, 0), (self.cos_bars, 1)):
            line.set_data(*_bar_segments(pe[pos], offset))  # dimension c in the middle of [c, c + 1)
            line.set_transform(in_dims)
            line.set_linewidth(0.7 * slot)
        self.bar_title.set_text(f"PE(pos = {pos}), d_model = {d_model}")
        dots = pe[pos:] @ pe[pos]  # (max_k+1, d_model) @ (d_model,) -> (max_k+1,)
        self.line.set_ydata(dots)
        self.line.set_transform(Affine2D().scale(1.0, 2.0 / d_model) + self.ax_dot.transData)
        self.dot_title.set_text(f"from pos = {pos}: largest at k = 0 (d_model/2 = {d_model // 2})")
        first = " ".join(f"{v:.3f}" for v in pe[pos, :6])
        return (f"pos = {pos}, d_model = {d_model}\nPE(pos)[:6] = {first}\n"
                f"PE(pos) . PE(pos) = {pe[pos] @ pe[pos]:.3f} (= d_model/2)\n"
                "PE(pos) . PE(pos+k) for k = 1, 5, 20: "
                + " ".join(f"{dots[k]:.3f}" for k in (1, 5, 20)))


def pe_vectors_grid(positions=(0, 1, 10, 50), d_models=(8, 32)):
    """Small multiples of PE(pos) as bars: one row per d_model, one column per position."""
    fig, axes = plt.subplots(len(d_models), len(positions), figsize=(2.6 * len(positions) + 0.6,
                             2.2 * len(d_models) + 0.5), squeeze=False, sharey=True,
                             layout="constrained")
    for row, d_model in zip(axes, d_models, strict=True):
        pe = ac.sinusoidal_positional_encoding(max(positions) + 1, d_model)
        slot = 2.6 * 72.0 / d_model  # points per dimension: each axes is a little under 2.6 in wide
        for ax, pos in zip(row, positions, strict=True):
            ax.axhline(0, color="grey", lw=0.8)
            for offset, color in ((0, "tab:blue"), (1, "tab:orange")):  # one line per colour
                ax.plot(*_bar_segments(pe[pos], offset), color=color, lw=0.55 * slot,
                        solid_capstyle="butt")
            ax.set_xlim(-0.5, d_model - 0.5)
            ax.set_ylim(-1.1, 1.1)
            ax.set_title(f"PE({pos}), d_model = {d_model}", fontsize=10)
            ax.set_xlabel("dimension")
        row[0].set_ylabel("PE(pos, dim)")
    fig.suptitle("The encoding vector of a few positions (blue: sin, orange: cos)")
    return fig


# --- 07 Feed-forward network -----------------------------------------------

def row_influence(f, X, eps: float = 1e-6) -> np.ndarray:
    """I[i, j] = ||d f(X)[i] / d X[j]||_F (central differences): how much output row i reads input row j.

    f maps (n, d_in) -> (n, d_out). Returns (n, n); the FFN gives a diagonal matrix,
    self-attention a full one.
    """
    X = np.asarray(X, dtype=float)
    n, d_in = X.shape
    sq = np.zeros((n, n))
    for j in range(n):
        for c in range(d_in):
            dX = np.zeros_like(X)
            dX[j, c] = eps
            col = (f(X + dX) - f(X - dX)) / (2 * eps)  # (n, d_out): d f(X) / d X[j, c]
            sq[:, j] += np.sum(col ** 2, axis=-1)
    return np.sqrt(sq)


def locality_figure(delta_ffn, delta_attn, changed: int):
    """Side by side |change of output| (n, d_model) for FFN and self-attention after changing input row `changed`."""
    delta_ffn, delta_attn = np.abs(delta_ffn), np.abs(delta_attn)
    vmax = max(delta_ffn.max(), delta_attn.max(), 1e-12)
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.6), layout="constrained")
    for ax, d, name in zip(axes, (delta_ffn, delta_attn), ("FFN (位置ごと)", "self-attention"),
                           strict=True):
        im = ax.imshow(d, cmap="Reds", vmin=0.0, vmax=vmax, aspect="auto")
        n, d_model = d.shape
        ax.set_xticks(range(d_model))
        ax.set_yticks(range(n))
        ax.set_xlabel("feature (d_model axis)")
        ax.set_ylabel("output position i")
        ax.set_title(f"{name}: |Δ output|, input row {changed} changed")
        ax.axhline(changed - 0.5, color="k", lw=1, ls="--")
        ax.axhline(changed + 0.5, color="k", lw=1, ls="--")
    fig.colorbar(im, ax=axes, label="|Δ output|")
    return fig


def influence_figure(infl_ffn, infl_attn):
    """Two (n, n) maps of ||d out_i / d x_j||: FFN (diagonal) beside self-attention (full)."""
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 4.0), layout="constrained")
    vmax = max(np.max(infl_ffn), np.max(infl_attn))
    for ax, M, name in zip(axes, (infl_ffn, infl_attn), ("FFN", "self-attention"), strict=True):
        M = np.asarray(M, dtype=float)
        im = ax.imshow(M, cmap="Purples", vmin=0.0, vmax=vmax)
        n = M.shape[0]
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.set_xlabel("input position j")
        ax.set_ylabel("output position i")
        ax.set_title(f"{name}: ||∂out_i / ∂x_j||")
        for i in range(n):
            for j in range(n):
                ax.text(j, i, f"{M[i, j]:.1f}", ha="center", va="center", fontsize=8,
                        color="white" if M[i, j] > 0.6 * vmax else "black")
    fig.colorbar(im, ax=axes, label="size of the Jacobian block")
    return fig


def convex_hull_2d(points) -> np.ndarray:
    """Indices of the convex hull of 2-D points, counter-clockwise (Andrew's monotone chain)."""
    P = np.asarray(points, dtype=float)
    if P.ndim != 2 or P.shape[1] != 2 or len(P) < 3:
        raise ValueError(f"points must have shape (k, 2) with k >= 3, got {P.shape}")
    order = sorted(range(len(P)), key=lambda i: (P[i, 0], P[i, 1]))

    def cross(o, a, b):
        return (P[a, 0] - P[o, 0]) * (P[b, 1] - P[o, 1]) - (P[a, 1] - P[o, 1]) * (P[b, 0] - P[o, 0])

    def chain(idx):
        out = []
        for i in idx:
            while len(out) >= 2 and cross(out[-2], out[-1], i) <= 0:
                out.pop()
            out.append(i)
        return out

    lower, upper = chain(order), chain(order[::-1])
    return np.array(lower[:-1] + upper[:-1])


def inside_convex_hull(points, vertices, tol: float = 1e-9) -> np.ndarray:
    """True for each 2-D point on or inside the convex polygon `vertices` (counter-clockwise)."""
    P, H = np.asarray(points, dtype=float), np.asarray(vertices, dtype=float)
    edge = np.roll(H, -1, axis=0) - H  # (k, 2)
    rel = P[:, None, :] - H[None, :, :]  # (num_points, k, 2)
    cross = edge[None, :, 0] * rel[..., 1] - edge[None, :, 1] * rel[..., 0]  # (num_points, k)
    return np.all(cross >= -tol, axis=1)


def convex_hull_figure(V, O):
    """Value vectors v_j (2-D), their convex hull, and attention outputs O = A V (all inside)."""
    V, O = np.asarray(V, dtype=float), np.asarray(O, dtype=float)
    hull = V[convex_hull_2d(V)]
    fig, ax = plt.subplots(figsize=(5.2, 4.6), layout="constrained")
    ax.fill(hull[:, 0], hull[:, 1], color="C0", alpha=0.15, label="convex hull of the values")
    ax.scatter(O[:, 0], O[:, 1], s=8, color="C1", alpha=0.6, label=r"attention outputs $o_i = \sum_j a_{ij} v_j$")
    ax.scatter(V[:, 0], V[:, 1], s=90, color="C0", edgecolor="k", zorder=3, label=r"value vectors $v_j$")
    for j, v in enumerate(V):
        ax.annotate(f"$v_{j + 1}$", v, textcoords="offset points", xytext=(6, 6), fontsize=13)
    ax.margins(0.12)
    ax.set_xlabel("value feature 1")
    ax.set_ylabel("value feature 2")
    ax.set_title("Attention outputs are convex combinations\n(バリューの凸結合)")
    ax.legend(loc="best", fontsize=9)
    ax.set_aspect("equal")
    return fig


def ffn_kinks(ffn, start, end, num: int = 2001) -> np.ndarray:
    """Parameters t in (0, 1) where a hidden unit of the FFN switches on/off along x(t) = start + t (end - start)."""
    t = np.linspace(0.0, 1.0, num)
    line = np.asarray(start, float)[None, :] + t[:, None] * (np.asarray(end, float) - np.asarray(start, float))[None, :]
    active = (line @ ffn.W_1 + ffn.b_1) > 0  # (num, d_ff)
    changed = np.any(active[1:] != active[:-1], axis=1)  # (num - 1,)
    return (t[1:][changed] + t[:-1][changed]) / 2


def bent_line_figure(ffn, start, end, num: int = 401):
    """A straight segment in 2-D (left) and its image under a 2-D -> 2-D FFN (right): bent at the kinks."""
    t = np.linspace(0.0, 1.0, num)
    start, end = np.asarray(start, float), np.asarray(end, float)
    line = start[None, :] + t[:, None] * (end - start)[None, :]  # (num, 2)
    image = ac.feed_forward(line, ffn.W_1, ffn.b_1, ffn.W_2, ffn.b_2)  # (num, 2)
    kinks = ffn_kinks(ffn, start, end)
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.8), layout="constrained")
    for ax, pts, title in zip(axes, (line, image), ("input: a straight segment x(t)",
                                                          "output: FFN(x(t))"), strict=True):
        ax.plot(pts[:, 0], pts[:, 1], color="C0", lw=2.5, label="path")
        ax.plot(*pts[0], "o", color="C2", ms=9, label="t = 0")
        ax.plot(*pts[-1], "s", color="C3", ms=9, label="t = 1")
        ax.set_xlabel("feature 1")
        ax.set_ylabel("feature 2")
        ax.set_title(title)
    if len(kinks):
        k_pts = ac.feed_forward(start[None, :] + kinks[:, None] * (end - start)[None, :],
                                ffn.W_1, ffn.b_1, ffn.W_2, ffn.b_2)
        axes[1].plot(k_pts[:, 0], k_pts[:, 1], "kx", ms=10, mew=2, label="a hidden unit switches")
    axes[1].legend(fontsize=9, loc="best")
    axes[0].legend(fontsize=9, loc="best")
    fig.suptitle("A linear map keeps lines straight; the ReLU in the FFN bends them")
    return fig


def _fmt(v) -> str:
    return "[" + ", ".join(f"{x:+.2f}" for x in np.ravel(v)) + "]"


def ffn_1d_figure(ffn, x_range=(-3.0, 3.0), num: int = 601):
    """FFN with d_model = 1 as a sum of hinges: each unit's ReLU(x w1_j + b1_j) w2_j and the total."""
    xs = np.linspace(*x_range, num)
    hidden = ac.relu(xs[:, None] * ffn.W_1[0] + ffn.b_1)  # (num, d_ff)
    parts = hidden * ffn.W_2[:, 0]  # (num, d_ff): unit j's share of the output
    total = ac.feed_forward(xs[:, None], ffn.W_1, ffn.b_1, ffn.W_2, ffn.b_2)[:, 0]
    fig, ax = plt.subplots(figsize=(7.0, 4.0), layout="constrained")
    for j in range(parts.shape[1]):
        ax.plot(xs, parts[:, j], ls="--", lw=1.5, label=f"unit {j}: ReLU(x w1_{j} + b1_{j}) · w2_{j}")
    ax.plot(xs, total, color="k", lw=3, label="FFN(x) = sum of units + b_2")
    for xk in _kinks_1d(ffn, x_range):
        ax.axvline(xk, color="0.6", lw=0.8, ls=":")
    ax.set_xlabel("input x (d_model = 1)")
    ax.set_ylabel("output")
    ax.set_title("FFN on a 1-D input: piecewise linear, bent where a unit switches (dotted)")
    ax.legend(fontsize=8, loc="best")
    return fig


def _kinks_1d(ffn, x_range):
    w, b = ffn.W_1[0], ffn.b_1
    nz = w != 0
    xk = -b[nz] / w[nz]
    return np.sort(xk[(xk > x_range[0]) & (xk < x_range[1])])


class LiveFFN1D(LiveFigure):
    """Slider for a 1-D input x: the FFN curve with the current point, and the d_ff hidden units as bars."""

    figsize = (9.0, 3.4)

    def __init__(self, ffn, x_range=(-3.0, 3.0)):
        if ffn.W_1.shape[0] != 1 or ffn.W_2.shape[1] != 1:
            raise ValueError(f"LiveFFN1D needs d_model = 1: W_1 (1, d_ff) and W_2 (d_ff, 1), got "
                             f"W_1 {ffn.W_1.shape} and W_2 {ffn.W_2.shape}")
        self.ffn, self.x_range = ffn, x_range
        super().__init__()

    def setup(self) -> None:
        f = self.ffn
        ax_f, ax_h = self.fig.subplots(1, 2, width_ratios=[3, 2])
        xs = np.linspace(*self.x_range, 601)
        ys = ac.feed_forward(xs[:, None], f.W_1, f.b_1, f.W_2, f.b_2)[:, 0]
        ax_f.plot(xs, ys, color="k", lw=2, label="FFN(x)")
        for xk in _kinks_1d(f, self.x_range):
            ax_f.axvline(xk, color="0.6", lw=0.8, ls=":")
        (self.point,) = ax_f.plot([], [], "o", color="C3", ms=11, label="current x")
        ax_f.set_xlabel("input x (d_model = 1)")
        ax_f.set_ylabel("FFN(x)")
        ax_f.legend(loc="best", fontsize=9)
        self.title = ax_f.set_title("")
        d_ff = f.W_1.shape[1]
        top = ac.relu(xs[:, None] * f.W_1[0] + f.b_1).max()
        self.bars = ax_h.bar(range(d_ff), np.zeros(d_ff), color="C2", edgecolor="k")
        ax_h.set_ylim(0, 1.1 * top)
        ax_h.set_xticks(range(d_ff))
        ax_h.set_xlabel("hidden unit j (d_ff axis)")
        ax_h.set_ylabel("ReLU(x w1_j + b1_j)")
        ax_h.set_title("hidden units (grey = off)")
        self.update(x=0.0)  # a title of its real size for the one layout
        self.blit([self.point, *self.bars, self.title])

    def update(self, x=0.0) -> str:
        f = self.ffn
        x = float(x)
        z = x * f.W_1[0] + f.b_1  # (d_ff,) pre-activation
        hidden = ac.relu(z)
        y = float(ac.feed_forward(np.array([[x]]), f.W_1, f.b_1, f.W_2, f.b_2)[0, 0])
        self.point.set_data([x], [y])
        for bar, hv, zv in zip(self.bars, hidden, z, strict=True):
            bar.set_height(hv)
            bar.set_facecolor("C2" if zv > 0 else "0.75")
        on = int(np.sum(z > 0))
        self.title.set_text(f"x = {x:+.2f}: FFN(x) = {y:+.3f}, {on} of {len(z)} units on")
        return (f"x = {x:+.2f}\nz = x W_1 + b_1 = {_fmt(z)}\nReLU(z)         = {_fmt(hidden)}\n"
                f"units on: {on} of {len(z)}\nFFN(x) = ReLU(z) W_2 + b_2 = {y:+.4f}")


# --- 08 The Transformer block ----------------------------------------------

def decoder_attention_maps(Y, memory, layers, self_mask=None, cross_mask=None):
    """Run a decoder stack as ac.decode does, keeping every layer's attention weights.

    Y : (n, d_model) decoder input, memory : (m, d_model) encoder output.
    Returns (output (n, d_model), [self weights (h, n, n) per layer], [cross weights (h, n, m) per layer]).
    """
    self_w, cross_w = [], []
    for p in layers:
        Y, ws, wc = ac.decoder_layer(Y, memory, p, self_mask, cross_mask, return_weights=True)
        self_w.append(ws)
        cross_w.append(wc)
    return Y, self_w, cross_w


def _annotated_image(ax, shape, cmap):
    im = ax.imshow(np.zeros(shape), cmap=cmap, vmin=0.0, vmax=1.0, interpolation="none")  # fastest
    texts = [[ax.text(j, i, "", ha="center", va="center", fontsize=9) for j in range(shape[1])]
             for i in range(shape[0])]
    return im, texts


def _set_annotated(im, texts, W):
    im.set_array(W)
    for i, row in enumerate(texts):
        for j, t in enumerate(row):
            t.set_text(f"{W[i, j]:.2f}")
            t.set_color("white" if W[i, j] > 0.6 else "black")


def block_attention_grid(self_weights, cross_weights, tgt_labels, src_labels, head: int = 0):
    """Small multiples: one row per decoder layer, masked self-attention (n, n) beside cross-attention (n, m)."""
    L = len(self_weights)
    n, m = np.shape(cross_weights[0])[-2:]
    fig, axes = plt.subplots(L, 2, figsize=(2.6 + 0.62 * (n + m), 0.9 + 2.9 * L),
                             squeeze=False, layout="constrained",
                             gridspec_kw={"width_ratios": [n, m]})
    for k in range(L):
        attention_heatmap(self_weights[k][head], tgt_labels, tgt_labels, ax=axes[k, 0],
                          title=f"layer {k + 1}, head {head}: masked self (n, n)")
        attention_heatmap(cross_weights[k][head], tgt_labels, src_labels, ax=axes[k, 1],
                          title=f"layer {k + 1}, head {head}: cross (n, m)")
        axes[k, 0].set_xlabel("key: decoder position j")
        axes[k, 0].set_ylabel("query: decoder position i")
        axes[k, 1].set_xlabel("key/value: encoder position j")
        axes[k, 1].set_ylabel("query: decoder position i")
    fig.suptitle("Decoder attention (random weights, untrained): rows = decoder queries")
    return fig


class LiveDecoderAttention(LiveFigure):
    """Pick a decoder layer, a head and a decoder position: its masked self-attention row and cross-attention row."""

    figsize = (10.0, 3.8)

    def __init__(self, self_weights, cross_weights, tgt_labels, src_labels):
        self.self_w = [np.asarray(w, dtype=float) for w in self_weights]  # each (h, n, n)
        self.cross_w = [np.asarray(w, dtype=float) for w in cross_weights]  # each (h, n, m)
        self.tgt, self.src = list(tgt_labels), list(src_labels)
        super().__init__()

    def setup(self) -> None:
        from matplotlib.patches import Rectangle

        n, m = self.cross_w[0].shape[-2:]
        ax_s, ax_c = self.fig.subplots(1, 2, width_ratios=[n, m])
        self.im_s, self.txt_s = _annotated_image(ax_s, (n, n), "Blues")
        self.im_c, self.txt_c = _annotated_image(ax_c, (n, m), "Oranges")
        for ax, keys, kind in ((ax_s, self.tgt, "decoder"), (ax_c, self.src, "encoder")):
            ax.set_xticks(range(len(keys)), keys)
            ax.set_yticks(range(n), self.tgt)
            ax.set_xlabel(f"key position j ({kind})")
            ax.set_ylabel("query position i (decoder)")
        self.rect_s = Rectangle((-0.5, -0.5), n, 1, fill=False, ec="C3", lw=3)
        self.rect_c = Rectangle((-0.5, -0.5), m, 1, fill=False, ec="C3", lw=3)
        ax_s.add_patch(self.rect_s)
        ax_c.add_patch(self.rect_c)
        self.title_s = ax_s.set_title("")
        self.title_c = ax_c.set_title("")
        self.update(layer=1, head=0, position=0)  # titles of their real size for the one layout
        self.blit([self.im_s, self.im_c, *(t for row in self.txt_s + self.txt_c for t in row), self.rect_s,
                   self.rect_c, self.title_s, self.title_c])

    def update(self, layer=1, head=0, position=0) -> str:
        layer, head, t = int(layer), int(head), int(position)
        W_s, W_c = self.self_w[layer - 1][head], self.cross_w[layer - 1][head]
        _set_annotated(self.im_s, self.txt_s, W_s)
        _set_annotated(self.im_c, self.txt_c, W_c)
        self.rect_s.set_y(t - 0.5)
        self.rect_c.set_y(t - 0.5)
        self.title_s.set_text(f"layer {layer}, head {head}: masked self-attention")
        self.title_c.set_text(f"layer {layer}, head {head}: cross-attention")
        row_s = ", ".join(f"{k}:{w:.2f}" for k, w in zip(self.tgt, W_s[t], strict=True))
        row_c = ", ".join(f"{k}:{w:.2f}" for k, w in zip(self.src, W_c[t], strict=True))
        return (f"decoder layer {layer}, head {head}, position {t} ({self.tgt[t]})\n"
                f"self-attention row  (sees decoder 0..{t}): {row_s}\n"
                f"cross-attention row (sees all {W_c.shape[1]} encoder positions): {row_c}\n"
                f"row sums: {W_s[t].sum():.4f} and {W_c[t].sum():.4f}")


# --- 09 The cost of attention ----------------------------------------------

MiB = 2 ** 20  # bytes in a mebibyte (MiB); a megabyte (MB) is 10**6 bytes


def format_bytes(num_bytes: float) -> str:
    """Bytes in binary units: '512 B', '8.0 KiB', '128.0 MiB', '2.0 GiB'."""
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if num_bytes >= size:
            return f"{num_bytes / size:.1f} {unit}"
    return f"{int(num_bytes)} B"


def measure_call(fn) -> tuple[float, int]:
    """Run fn() once; return (wall-clock seconds, peak bytes allocated during the call).

    The peak comes from tracemalloc, which sees numpy's array buffers (numpy
    reports them to it); memory allocated before the call (the inputs) is not counted.
    """
    import time
    import tracemalloc

    tracemalloc.start()
    start = time.perf_counter()
    fn()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak


def attention_sweep(ns, d_k: int = 64, block_size: int | None = None,
                    seed: int = 0, repeats: int = 3) -> dict[str, np.ndarray]:
    """Time and peak memory of a self-attention call for each n (naive, or tiled if block_size).

    Q, K, V (n, d_k) are drawn from np.random.default_rng(seed) before measuring. Each call
    is repeated: the time is the fastest of `repeats` (the first call at a new size pays
    one-off costs), the peak is the largest. Returns {"n", "seconds", "peak_bytes"},
    arrays of shape (len(ns),).
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    rows = []
    for n in ns:
        rng = np.random.default_rng(seed)
        Q, K, V = (rng.normal(size=(n, d_k)) for _ in range(3))  # (n, d_k) each
        if block_size is None:
            call = functools.partial(ac.scaled_dot_product_attention, Q, K, V)
        else:
            call = functools.partial(ac.tiled_attention, Q, K, V, block_size)
        times, peaks = zip(*(measure_call(call) for _ in range(repeats)), strict=True)
        rows.append((min(times), max(peaks)))
    seconds, peaks = zip(*rows, strict=True)
    return {"n": np.array(ns), "seconds": np.array(seconds),
            "peak_bytes": np.array(peaks, dtype=np.int64)}


def loglog_slope(x, y) -> float:
    """Slope p of the straight line log y = p log x + c through the last two points (y ~ x^p)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return float(np.log(y[-1] / y[-2]) / np.log(x[-1] / x[-2]))


def cost_loglog(sweeps: dict, key: str, ylabel: str, title: str, scale: float = 1.0,
                refs: dict | None = None, ax=None):
    """Log-log plot of sweeps[label][key] / scale against n, with reference lines c * n^p.

    sweeps : {label: attention_sweep(...) result}.
    refs : {p: label}: a grey line proportional to n^p through the last point of
    sweeps[label], to read a slope off against; default {2: first label}.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.0), layout="constrained")
    for (label, sw), marker in zip(sweeps.items(), "os^D", strict=False):
        ax.loglog(sw["n"], sw[key] / scale, marker=marker, label=label, zorder=3)
    refs = {2: next(iter(sweeps))} if refs is None else refs
    for (p, label), style in zip(refs.items(), ("--", ":", "-."), strict=False):
        n = sweeps[label]["n"].astype(float)
        last = sweeps[label][key][-1] / scale
        ax.loglog(n, last * (n / n[-1]) ** p, style, color="gray",
                  label=f"reference $\\propto n^{p}$" if p != 1 else r"reference $\propto n$")
    ns = next(iter(sweeps.values()))["n"]
    ax.set_xticks(ns, [str(int(n)) for n in ns])  # the measured n, written out
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel("sequence length n (log scale)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    ax.grid(True, which="major", alpha=0.3)
    return ax.figure


def tiling_counts(n: int, block_size: int, h: int = 1, bytes_per_number: int = 8) -> dict[str, int]:
    """Exact counts of tiled self-attention on an n x n score grid cut into block_size tiles.

    tiles = ceil(n / b)^2; the naive way holds h*n*n score entries at once, the
    tiled way at most h*b*b (b = min(block_size, n)); both compute h*n*n in total.
    """
    for name, value in (("n", n), ("block_size", block_size)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    b = min(block_size, n)
    per_side = -(-n // b)  # ceil(n / b)
    return {"tiles_per_side": per_side, "tiles": per_side ** 2,
            "naive_entries_at_once": h * n * n, "tiled_entries_at_once": h * b * b,
            "naive_bytes_at_once": h * n * n * bytes_per_number,
            "tiled_bytes_at_once": h * b * b * bytes_per_number,
            "entries_computed": h * n * n}


def tile_grid(n: int, block_size: int, max_pixels: int = 512) -> np.ndarray:
    """0/1 checkerboard of the tiles over the n x n score grid (query i, key j in tile (i//b, j//b)).

    Shape (P, P) with P = min(n, max_pixels): pixel k stands for position k*n//P, so a
    very long sequence still gives a small picture.
    """
    P = min(n, max_pixels)
    pos = np.arange(P) * n // P  # (P,) the position each pixel stands for
    tile = pos // block_size  # (P,) tile index of that position
    return (tile[:, None] + tile[None, :]) % 2  # (P, 1) + (1, P) -> (P, P)


_TILE_CMAP = matplotlib.colors.ListedColormap(["#c6dbef", "#6baed6"])
MAX_TILES_DRAWN = 64  # tiles per side beyond which the checkerboard is too fine to see


def _tile_picture(n: int, b: int) -> np.ndarray:
    if -(-n // b) > MAX_TILES_DRAWN:  # too fine to draw: one flat colour
        return np.zeros((2, 2), dtype=int)
    return tile_grid(n, b)


def _draw_tiles(ax, n: int, block_size: int):
    """Checkerboard of tiles on ax plus a red frame round the first tile; returns (image, frame)."""
    b = min(block_size, n)
    im = ax.imshow(_tile_picture(n, b), cmap=_TILE_CMAP, vmin=0, vmax=1,
                   interpolation="nearest", extent=(0, n, n, 0))
    frame = matplotlib.patches.Rectangle((0, 0), b, b, fill=False, edgecolor="red", linewidth=2.5,
                                         zorder=3)  # above the spines: visible when b = n
    ax.add_patch(frame)
    ax.set_xlabel("key position j")
    ax.set_ylabel("query position i")
    return im, frame


def tiling_small_multiples(n: int = 64, block_sizes=(64, 32, 16, 8)):
    """Static figure: the n x n score grid cut into tiles for several block sizes, with counts."""
    fig, axes = plt.subplots(1, len(block_sizes), figsize=(3.0 * len(block_sizes), 4.0),
                             layout="compressed")  # "compressed": made for square axes in a row
    for ax, b in zip(axes, block_sizes, strict=True):
        _draw_tiles(ax, n, b)
        c = tiling_counts(n, b)
        ax.set_title(f"b = {b}: {c['tiles']} tile{'s' if c['tiles'] > 1 else ''}\n"
                     f"held at once: {c['tiled_entries_at_once']:,} entries")
    fig.suptitle(f"Score grid n x n = {n} x {n}: the red tile is all that is held at once")
    return fig


class LiveTiling(LiveFigure):
    """Slider figure: the n x n score grid cut into tiles, and entries held at once (naive vs tiled).

    The grid is drawn in units of n (ticks 0, n/2, n), so everything except the
    changing artists (tile image, red frame, bars, texts) is drawn once and kept as
    a background; png() restores it and draws only the changing artists (blitting).
    """

    figsize = (9.5, 4.0)
    max_n = 16384

    def setup(self) -> None:
        self.fig.set_layout_engine(None)
        self.ax_grid = self.fig.add_axes((0.09, 0.14, 0.30, 0.66))
        self.ax_bar = self.fig.add_axes((0.50, 0.14, 0.46, 0.66))
        self.im = self.ax_grid.imshow(np.zeros((2, 2)), cmap=_TILE_CMAP, vmin=0, vmax=1,
                                      interpolation="nearest", extent=(0, 1, 1, 0))
        self.frame = matplotlib.patches.Rectangle((0, 0), 1, 1, fill=False, edgecolor="red",
                                                  linewidth=2.5)
        self.ax_grid.add_patch(self.frame)
        for axis in (self.ax_grid.xaxis, self.ax_grid.yaxis):
            axis.set_ticks([0, 0.5, 1], ["0", "n/2", "n"])
        self.ax_grid.set_xlabel("key position j")
        self.ax_grid.set_ylabel("query position i")
        # plain texts, not titles: a title is re-positioned on every draw (slow)
        self.grid_title = self.ax_grid.text(0.5, 1.03, "", transform=self.ax_grid.transAxes,
                                            ha="center", va="bottom", fontsize=12)
        self.too_fine = self.ax_grid.text(0.5, 0.5, "tiles too small\nto draw", ha="center",
                                          va="center", transform=self.ax_grid.transAxes,
                                          fontsize=11, bbox={"facecolor": "white", "lw": 0})
        self.bars = self.ax_bar.barh([1, 0], [1, 1], color=["#d62728", "#1f77b4"])
        self.ax_bar.set_yticks([])
        self.ax_bar.set_xscale("log")
        self.ax_bar.set_xlim(1, 2 * self.max_n ** 2)
        self.ax_bar.set_xticks(10.0 ** np.arange(0, 9, 2), ["1", "100", "10,000", "1e6", "1e8"])
        self.ax_bar.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        self.ax_bar.set_xlabel("score entries held at once (log scale)")
        self.bar_title = self.ax_bar.text(0.5, 1.03, "", transform=self.ax_bar.transAxes,
                                          ha="center", va="bottom", fontsize=12)
        self.labels = [self.ax_bar.text(1.5, y, "", va="center", fontsize=10,
                                        bbox={"facecolor": "white", "alpha": 0.8, "lw": 0})
                       for y in (1, 0)]
        self.blit([self.im, self.frame, self.too_fine, self.grid_title, *self.bars, *self.labels,
                   self.bar_title])

    def update(self, n: int = 64, block_size: int = 8) -> str:
        c = tiling_counts(n, block_size)
        b = min(block_size, n)
        k = c["tiles_per_side"]
        self.im.set_data(_tile_picture(n, b))
        self.frame.set_bounds(0, 0, b / n, b / n)  # the grid is drawn in units of n
        self.too_fine.set_visible(k > MAX_TILES_DRAWN)
        self.grid_title.set_text(f"n = {n}, b = {b}\n{k} x {k} = {c['tiles']:,} tiles")
        for bar, label, key in zip(self.bars, self.labels, ("naive", "tiled"), strict=True):
            entries = c[f"{key}_entries_at_once"]
            bar.set_width(entries)
            what = "naive, whole n x n" if key == "naive" else "tiled, one b x b tile"
            label.set_text(f"{what}: {entries:,} ({format_bytes(c[f'{key}_bytes_at_once'])})")
        ratio = c["naive_entries_at_once"] / c["tiled_entries_at_once"]
        ratio = f"{ratio:,.0f}" if ratio.is_integer() else f"{ratio:.3g}"
        self.bar_title.set_text(f"float64 scores held at once\ntiled: {ratio}x fewer")
        return (f"n = {n}, block_size = {block_size}: {k} x {k} = {c['tiles']:,} tiles\n"
                f"score entries held at once: naive {c['naive_entries_at_once']:,} "
                f"({format_bytes(c['naive_bytes_at_once'])}), tiled "
                f"{c['tiled_entries_at_once']:,} ({format_bytes(c['tiled_bytes_at_once'])})"
                f" -> {ratio}x fewer\n"
                f"score entries computed in total: {c['entries_computed']:,} in both")
