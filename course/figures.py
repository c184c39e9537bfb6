"""The course's figure style, its fixed layouts and the drawing helpers several notebooks share.

Nothing here runs on import. Each notebook's first code cell calls
``use_course_style()``, which sets the course's resolution and fonts (including
a font with Japanese glyphs for labels like 私, は, 猫), tells the inline
backend to show figures as they are laid out, and makes each figure's text output
its description in words (course/describe/).

Figures are made for a projector: at 120 dpi and 12 pt, text is 20 px high on screen
(JupyterLab's own text is 14 px), and no text is smaller than 10 pt (17 px). They are
laid out once, in inches (``fixed_subplots``), not by a layout engine at every draw:
constrained layout measures every tick label twice before the figure is drawn, a fifth
to a third of the drawing time of a figure that is drawn once. ``layout_problems``
checks such a layout: nothing cut off, no panel's labels on another panel.
"""

from __future__ import annotations

import html
import warnings

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

from course.alt_text import FIGURE_IMG
from course.i18n import N_, _, shown

# The course's series colours: Okabe and Ito's palette (2008), made to stay apart under the
# common colour-vision deficiencies (course/colour_check.py checks every figure), without its
# three pale colours: a line must stand out from the white background by 3:1 at least (WCAG 2.1,
# 1.4.11 Non-text Contrast), which its yellow (1.4:1), orange (2.25:1) and sky blue (2.31:1) do
# not. The yellow is left out; a brown (#8A4B00, 6.8:1) and a navy (#1A237E, 13.2:1) take the
# places of the other two, picked so that every two colours stay Delta E' 11.7 or more apart
# under each deficiency (the palette's own closest pair, blue and bluish green;
# tests/test_colour_check.py). In the order of matplotlib's
# default names: C0 blue, C1 brown (where matplotlib has orange), C2 green, C3 red (vermillion),
# C4 purple (reddish purple); then navy and black.
SERIES_COLOURS = ("#0072B2", "#8A4B00", "#009E73", "#D55E00", "#CC79A7", "#1A237E", "#000000")

COURSE_STYLE = {
    "axes.prop_cycle": matplotlib.cycler(color=SERIES_COLOURS),
    "figure.dpi": 120,           # 1.5 x the former 80: 20 px text, sharp lines on a projector
    "font.size": 12,             # axis labels, texts
    "axes.titlesize": 13,
    "figure.titlesize": 14,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
    "legend.fontsize": 11,
    "legend.title_fontsize": 11,
    "axes.titley": 1.0,          # titles at a fixed height: no search for the top of the ticks per draw
    "svg.hashsalt": "attention-notebooks",
}

SMALL = "small"  # the smallest text of a figure (annotations in cells, small-multiple titles): 10 pt


def use_course_style() -> None:
    """Apply the course's figure style: resolution, font sizes, Japanese glyphs, one draw per figure.

    Call it once, in a notebook's first code cell (tests and scripts call it too). It changes
    matplotlib's global settings, which is why it is an explicit call and not an import side effect.
    """
    from matplotlib_fontja import japanize  # bundles IPAexGothic: without it 猫 renders as a box

    japanize()  # registers the font and makes it the default family
    matplotlib.rcParams.update(COURSE_STYLE)
    _one_draw_per_notebook_figure()
    _figures_in_words()
    from course import colour_check
    colour_check.check_when_asked()   # only in a test run (COURSE_CHECK_COLOURS=1): issue 27


def _one_draw_per_notebook_figure() -> None:
    """Show notebook figures as laid out, instead of re-cropping them.

    IPython's inline backend saves each figure with bbox_inches="tight", which draws
    it twice (once to measure, once to save). Our figures already fit their canvas
    (fixed layouts, or constrained layout), so the second draw only costs time: about
    half of every notebook's plotting time.
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
        # PNG_OPTIONS: Pillow's fast compression, as for the live frames (course.live)
        cfg.print_figure_kwargs = {**cfg.print_figure_kwargs, "bbox_inches": None,
                                   "pil_kwargs": dict(PNG_OPTIONS)}


def _figures_in_words() -> None:
    """Make a figure's text/plain its description (course.describe), not "<Figure size ...>",
    and show the figure with it as its alt.

    The notebook stores the words beside the figure's PNG: nbval compares them like any other
    output, and the site and the slides make the image's alt from them (course/alt_text.py).
    JupyterLab 4 draws an image/png without an alt and does not show the text/plain beside it,
    so each figure also gets a text/html, the same PNG as an <img> whose alt is its words,
    which JupyterLab draws instead (README, "Accessibility"). Issue 27.
    """
    try:
        from IPython import get_ipython
    except ImportError:
        return
    ip = get_ipython()
    if ip is None:  # plain Python (tests, scripts): nothing is displayed
        return
    from matplotlib.figure import Figure

    from course.describe import describe

    def in_words(fig, printer, cycle):
        try:
            printer.text(describe(fig))
        except Exception:   # a learner's own figure that describe cannot read: still shown
            printer.text(repr(fig))   # tests/test_stored_notebook.py: never a course figure

    formatters = ip.display_formatter.formatters
    formatters["text/plain"].for_type(Figure, in_words)

    # The <img alt> is a text/html of its own, which IPython's display asks for before the
    # image/png: drawn for it, the PNG is kept (one figure, one use) and handed to the image/png
    # formatter that comes next, so that the figure is drawn once. display()'s display_id,
    # metadata and include/exclude work as for any object.
    png_formatter = formatters["image/png"]
    try:
        draw = png_formatter.lookup_by_type(Figure)
    except KeyError:   # no PNG of figures here (another backend or figure format): no <img>
        return
    kept = []   # [(figure, its PNG)], set by as_img, taken by png, emptied after each cell

    def png(fig):
        if kept and kept[0][0] is fig:
            return kept.pop()[1]
        return draw(fig)

    def as_img(fig):
        kept.clear()   # an earlier display's PNG of this figure (its image/png excluded): drawn anew
        words = formatters["text/plain"](fig)   # in_words above
        value = png_formatter(fig) if words and not words.startswith("<Figure") else None
        if value is None:   # no words (a learner's figure describe cannot read), or no PNG
            return None
        kept[:] = [(fig, value)]
        data, metadata = value if isinstance(value, tuple) else (value, {})
        try:   # the words without their length limit, where the alt had to leave some out
            full = describe(fig, max_chars=FULL_CHARS)
        except Exception:
            full = None
        return figure_html(data, words, metadata.get("width"), metadata.get("height"), full)

    png_formatter.for_type(Figure, png)
    formatters["text/html"].for_type(Figure, as_img)
    ip.events.register("post_execute", kept.clear)   # a PNG no image/png took (excluded) goes


# The figure in words in full, where its alt (course.describe.MAX_CHARS) had to leave details
# out: a figure of twelve heatmaps has no room in a short alt for each query's largest key.
FULL_CHARS = 6000


def figure_html(png: str | bytes | None, words: str, width: int | None = None,
                height: int | None = None, full: str | None = None) -> str | None:
    """A figure's PNG (base64) as an <img> whose alt is its words, with the width and height a
    retina PNG is drawn at, and, where `full` says more than the alt, a disclosure below it
    (<details>, closed) with the full words; None without a PNG or words (matplotlib's own
    "<Figure size ...>" is no words: a learner's figure describe cannot read)."""
    words = " ".join(words.split())
    if not png or not words or words.startswith("<Figure"):
        return None
    png = png.decode("ascii") if isinstance(png, bytes) else png
    size = "".join(f' {name}="{int(v)}"' for name, v in (("width", width), ("height", height))
                   if v is not None)
    img = f'{FIGURE_IMG}{png}" alt="{html.escape(words)}"{size}>'
    full = " ".join((full or "").split())
    if full and full != words:
        img += (f'<details class="course-figure-words"><summary>{html.escape(_(FULL_WORDS))}'
                f'</summary><p>{html.escape(full)}</p></details>')
    return img


FULL_WORDS = N_("The figure in words, in full")


# How the course's PNGs are compressed (Pillow, through matplotlib's pil_kwargs): zlib level 1
# takes a third of the default level's time on these flat-coloured figures, for larger files.
PNG_OPTIONS = {"compress_level": 1}


# --- fixed layouts ------------------------------------------------------------------

def fixed_subplots(nrows: int = 1, ncols: int = 1, *, widths, heights, left: float,
                   right: float, bottom: float, top: float, wgap: float = 0.0, hgap: float = 0.0,
                   min_width: float = 0.0, widen: str = "columns", fig=None, **kwargs):
    """A figure of nrows x ncols axes laid out once, every size in inches: (fig, axes).

    widths, heights : of each column / row of axes (one number: all alike); left, right,
    bottom, top : the margins, room for tick labels, axis labels, titles, a suptitle, a colour
    bar; wgap, hgap : between columns / rows. The figure's size follows from them; min_width:
    if it comes out narrower, the columns widen (room for a title, see text_width), or with
    widen="margins" the left and right margins do (panels of a fixed shape). With `fig`
    (a LiveFigure's), that figure is resized and used. kwargs go to GridSpec.subplots
    (sharex, sharey, squeeze, subplot_kw).

    Nothing is re-laid out at draw time, so text must fit the margins: check a new layout with
    layout_problems(fig).
    """
    widths = np.broadcast_to(np.asarray(widths, dtype=float), (ncols,))
    heights = np.broadcast_to(np.asarray(heights, dtype=float), (nrows,))
    fixed = left + wgap * (ncols - 1) + right
    if fixed + widths.sum() < min_width:
        if widen == "columns":
            widths = widths * (min_width - fixed) / widths.sum()
        else:
            extra = (min_width - fixed - widths.sum()) / 2
            left, right = left + extra, right + extra
    size = (left + widths.sum() + wgap * (ncols - 1) + right,
            bottom + heights.sum() + hgap * (nrows - 1) + top)
    if fig is None:
        fig = plt.figure(figsize=size, layout="none")
    else:
        fig.set_layout_engine("none")
        fig.set_size_inches(size)
    w, h = size
    gs = fig.add_gridspec(nrows, ncols, left=left / w, right=1 - right / w, bottom=bottom / h,
                          top=1 - top / h, wspace=wgap / widths.mean(), hspace=hgap / heights.mean(),
                          width_ratios=widths, height_ratios=heights)
    return fig, gs.subplots(**kwargs)


def text_width(text: str, size="figure.titlesize") -> float:
    """Width in inches of one line of text in the course's font at `size` (points, a size name
    like "large", or an rcParams key): to make a figure wide enough for its title."""
    from matplotlib.backends.backend_agg import RendererAgg

    if isinstance(size, str) and size in matplotlib.rcParams:
        size = matplotlib.rcParams[size]
    prop = matplotlib.font_manager.FontProperties(size=size)
    ismath = text.count("$") >= 2 and text.count("$") % 2 == 0
    width, _, _ = RendererAgg(1, 1, 72).get_text_width_height_descent(text, prop, ismath=ismath)
    return width / 72


def suptitle(fig, text: str, pad: float = 0.08, **kwargs):
    """The figure's title, `pad` inches below its top edge (the top margin must hold it)."""
    return fig.suptitle(text, y=1 - pad / fig.get_figheight(), va="top", **kwargs)


def colorbar(fig, mappable, axes, *, width: float = 0.16, pad: float = 0.15, shrink: float = 1.0,
             label: str | None = None):
    """A colour bar `pad` inches right of `axes` (one or several), `width` inches wide.

    Its height is `shrink` times theirs, centred; the right margin must hold the bar, its tick
    labels and its label (about pad + width + 0.75 in).
    """
    boxes = [ax.get_position() for ax in np.ravel(axes)]
    x1 = max(b.x1 for b in boxes)
    y0, y1 = min(b.y0 for b in boxes), max(b.y1 for b in boxes)
    h = (y1 - y0) * shrink
    fw = fig.get_figwidth()
    cax = fig.add_axes((x1 + pad / fw, y0 + (y1 - y0 - h) / 2, width / fw, h))
    return fig.colorbar(mappable, cax=cax, label=label)


def _ticks_in_view(axis) -> list:
    """The major and minor ticks whose location is within the axis' view limits: the ones a
    draw shows (public API only: the locators' locations and the ticks made for them)."""
    lo, hi = sorted(axis.get_view_interval())
    slack = 1e-10 * max(abs(lo), abs(hi), 1.0)
    ticks = []
    for locs, make in ((axis.get_majorticklocs(), axis.get_major_ticks),
                       (axis.get_minorticklocs(), axis.get_minor_ticks)):
        ticks += [tick for tick, loc in zip(make(len(locs)), locs, strict=True)
                  if lo - slack <= loc <= hi + slack]
    return ticks


def layout_problems(fig) -> list[str]:
    """What is wrong with a figure's layout, as sentences; [] if nothing is.

    Draws the figure, then checks that every text lies inside the figure (nothing cut off),
    that the axes and their tick labels, axis labels and titles do not overlap another axes'
    ones, that the figure's own texts (suptitle) overlap no axes, and that neighbouring tick
    labels do not run into each other.
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    inside = fig.bbox.padded(1.0)
    problems = []

    def name(artist):
        ax = getattr(artist, "axes", None)
        where = f" of axes {fig.axes.index(ax)}" if ax in fig.axes else ""
        return f"{type(artist).__name__} {artist.get_text()!r}{where}"

    undrawn = set()  # labels of ticks outside the view limits, or of a hidden axis: not drawn
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if not ax.axison:  # set_axis_off(): no ticks, no axis labels
                undrawn |= {id(axis.label), id(axis.offsetText)}
            shown = ({id(t) for tick in _ticks_in_view(axis) for t in (tick.label1, tick.label2)}
                     if ax.axison else set())
            undrawn |= {id(t) for tick in axis.majorTicks + axis.minorTicks
                        for t in (tick.label1, tick.label2) if id(t) not in shown}
    texts = [t for t in fig.findobj(matplotlib.text.Text)
             if t.get_visible() and t.get_text() and id(t) not in undrawn and _drawn(t)]
    for t in texts:
        box = t.get_window_extent(renderer)
        if not (inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0
                and box.y1 <= inside.y1):
            problems.append(f"{name(t)} is cut off: {_fmt_box(box)} outside {_fmt_box(fig.bbox)}")
    axes = [ax for ax in fig.axes if ax.get_visible()]
    boxes = [ax.get_tightbbox(renderer) for ax in axes]
    for i in range(len(axes)):
        for j in range(i + 1, len(axes)):
            if _overlap(boxes[i], boxes[j]):
                problems.append(f"axes {fig.axes.index(axes[i])} and {fig.axes.index(axes[j])} "
                                f"overlap: {_fmt_box(boxes[i])} and {_fmt_box(boxes[j])}")
    for t in fig.texts:  # suptitle() adds its text here too
        if not (t.get_visible() and t.get_text()):
            continue
        box = t.get_window_extent(renderer)
        for ax, axbox in zip(axes, boxes, strict=True):
            if _overlap(box, axbox):
                problems.append(f"{name(t)} overlaps axes {fig.axes.index(ax)}")
    for ax in axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t for t in axis.get_ticklabels()
                      if t.get_visible() and t.get_text() and id(t) not in undrawn]
            for a, b in zip(labels[:-1], labels[1:], strict=True):
                if _labels_collide(a, b, renderer):
                    problems.append(f"tick labels {a.get_text()!r} and {b.get_text()!r} of axes "
                                    f"{fig.axes.index(ax)} overlap")
    return problems


def _drawn(text) -> bool:
    """A text that a draw shows: visible, and not in a hidden axes or legend."""
    ax = getattr(text, "axes", None)
    if ax is not None and not ax.get_visible():
        return False
    if text.get_clip_on() and ax is not None and text.get_clip_box() is not None:
        return False  # clipped to its axes (annotations inside a heatmap): cannot spill out
    return True


def _labels_collide(a, b, renderer) -> bool:
    """Two neighbouring tick labels run into each other (rotated ones: closer than a line apart)."""
    angle = np.deg2rad(a.get_rotation())
    if np.isclose(np.sin(2 * angle), 0.0):  # 0 or 90 degrees: their boxes are the text
        return _overlap(a.get_window_extent(renderer), b.get_window_extent(renderer))
    # parallel slanted lines of text: apart by the anchors' distance across the text direction
    (xa, ya), (xb, yb) = (t.get_transform().transform(t.get_position()) for t in (a, b))
    across = abs((xb - xa) * np.sin(angle) - (yb - ya) * np.cos(angle))
    return across < a.get_fontsize() * a.get_figure(root=True).dpi / 72


def _overlap(a, b, tol: float = 1.0) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > tol and min(a.y1, b.y1) - max(a.y0, b.y0) > tol


def _fmt_box(b) -> str:
    return f"[{b.x0:.0f}, {b.x1:.0f}] x [{b.y0:.0f}, {b.y1:.0f}] px"


# --- shared drawing helpers ------------------------------------------------------------

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
        fig, ax = fixed_subplots(widths=0.62 * m, heights=0.62 * n, left=1.0, right=0.25,
                                 bottom=0.75, top=0.45)
    im = ax.imshow(weights, cmap="Blues", vmin=0.0, vmax=vmax)
    ax.set_xticks(range(m), key_labels if key_labels is not None else range(m))
    ax.set_yticks(range(n), query_labels if query_labels is not None else range(n))
    ax.set_xlabel(_("key position j"))
    ax.set_ylabel(_("query position i"))
    ax.set_title(_("attention weights A") if title is None else shown(title))
    if annotate:
        for i in range(n):
            for j in range(m):
                ax.text(j, i, f"{weights[i, j]:.2f}", ha="center", va="center", fontsize=SMALL,
                        color="white" if weights[i, j] > 0.6 * vmax else "black")
    return ax.figure, im
