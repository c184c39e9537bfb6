"""Live figures: a figure drawn once and updated in place, wired to ipywidgets controls.

- A subclass of ``LiveFigure`` builds its axes and artists once in ``setup()``
  (usually ending with ``self.blit(changing_artists)``) and changes only their
  data in ``update(**values)``, which returns a short text with the numbers it
  shows. The layout is computed once and the static part drawn once, so a slider
  redraws only the changing artists (blitting), in a few milliseconds.
- ``with_controls(live, **controls)`` wires ipywidgets controls to it (not
  ``ipywidgets.interactive``, which makes its own controls for a callback): on every
  change the figure is re-rendered into an ``ipywidgets.Image`` and the text
  into a ``<pre>``.

Every notebook's live figure lives in its companion module (course/nbNN_*.py).
"""

from __future__ import annotations

import html
import io

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from course.figures import PNG_OPTIONS
from course.i18n import N_, _, shown


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
    # "constrained": laid out once by constrained layout, at the first draw. None: setup() lays the
    # axes out itself, in inches (course.figures.fixed_subplots(..., fig=self.fig)), which also
    # sets the figure's size, and the first draw measures nothing.
    layout: str | None = "constrained"

    def __init__(self):
        # the course's resolution (figure.dpi of use_course_style), like every static figure
        self.fig = Figure(figsize=self.figsize, dpi=matplotlib.rcParams["figure.dpi"],
                          layout=self.layout)
        FigureCanvasAgg(self.fig)
        self._changing: list | None = None  # set by blit()
        self._background = None  # the static part, drawn once (with blit())
        self.setup()
        # Lay the figure out once, then freeze it: with constrained layout left on,
        # every full draw would run the layout solver again.
        self.fig.canvas.draw()  # with blit(): everything but the changing artists
        self.fig.set_layout_engine("none")
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
        """The Agg canvas as PNG bytes: drawing, not encoding, should dominate a slider move."""
        from PIL import Image

        rgba = np.asarray(self.fig.canvas.buffer_rgba())  # (height, width, 4) uint8
        opaque = self.fig.patch.get_alpha() in (None, 1) and self.fig.get_facecolor()[3] == 1
        image = Image.fromarray(np.ascontiguousarray(rgba[..., :3]) if opaque else rgba)
        buf = io.BytesIO()
        image.save(buf, format="png", **PNG_OPTIONS)   # an opaque figure as RGB: a quarter less
        return buf.getvalue()

    def render(self, **values) -> tuple[str, bytes]:
        """update() then png(): everything one slider move costs in the kernel."""
        text = self.update(**values)
        return text, self.png()

    def _repr_png_(self):  # a LiveFigure displayed as the last value of a cell shows its figure
        return self.png()


def with_controls(live: LiveFigure, **controls):
    """Wire ipywidgets controls to a LiveFigure: returns a VBox(controls, text, image).

    Each control's name is the keyword passed to live.update(). The figure is
    shown in an ipywidgets.Image and the numbers in a <pre>, both replaced on
    every change; the first state is drawn immediately. After the numbers, hidden from the eye,
    the figure in words (course.describe), kept up to date for a screen reader. A
    SelectionSlider's own readout is replaced by a read-only label (see _read_only_readout). Each control's
    description and option labels are shown in the course's language (CONTROL_TEXTS).
    """
    import ipywidgets as widgets

    for c in controls.values():
        _in_course_language(c)
    image = widgets.Image(format="png")
    text = widgets.HTML()
    image.add_class("live-figure-image")
    text.add_class("live-figure-text")

    def redraw(_change=None):
        summary, png = live.render(**{name: c.value for name, c in controls.items()})
        # The printed numbers, then the figure in words as it is now (course.describe), hidden
        # from the eye, for the image, which has no alt (an ipywidgets Image has none; its
        # tooltip would be its title, but ipywidgets 8.1's view of an Image then fails to draw:
        # its updateTooltip reads a description it lacks). The slides and the course's
        # JupyterLab extension (labextension/) make these words the image's alt, and then hide
        # them from a screen reader, which would read them twice; without either, a screen
        # reader reads them here, just before the image.
        text.value = ("<pre>" + html.escape(summary, quote=False) + "</pre>"
                      f'<p class="live-figure-words" style="{VISUALLY_HIDDEN}">'
                      + html.escape(_in_words(live.fig, summary), quote=False) + "</p>")
        image.value = png

    for c in controls.values():
        c.observe(redraw, names="value")
    redraw()
    rows = [_read_only_readout(c) if isinstance(c, widgets.SelectionSlider) else c
            for c in controls.values()]
    return widgets.VBox([widgets.VBox(rows), text, image])


# Out of sight, still in the page for a screen reader (the usual "visually hidden" rule)
VISUALLY_HIDDEN = ("position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;"
                   "clip:rect(0,0,0,0);white-space:nowrap;border:0")


def _in_words(fig, summary: str) -> str:
    """describe(fig), or the printed summary if the figure cannot be told (a slider move must
    redraw the figure even then). Without the fallback, site/frames.py describes every frame of
    every live figure of the course, so a figure describe() cannot tell fails the site build."""
    from course.describe import describe

    try:
        return describe(fig)
    except Exception:   # noqa: BLE001 - any failure of the words must not stop the figure
        return summary


# The name this function had until 2026-12: it shadowed ipywidgets.interactive (a different
# function: it builds its own controls from a callback), which the notebooks import too. Kept so
# that a copy of a notebook already handed out to a class still runs; no notebook of the course
# uses it (tests/test_notebook_hygiene.py).
interactive = with_controls


# What the notebooks' controls say, their descriptions and the labels of their options, marked
# for translation here: a notebook's code cells are the same in every edition, so these texts are
# translated where with_controls() shows them. A control's value never changes with the language.
# Symbols (d_k, n, m, m - n, h, pos, d_model, block_size, W_K[2,2]) are not texts and stay as they are;
# tests/test_live.py checks that every other label in the notebooks is listed here.
CONTROL_TEXTS = (
    N_("reader"), N_("strength c"), N_("query"), N_("query i"), N_("mask"), N_("batch item"),
    N_("input x"), N_("layer"), N_("head"), N_("position t"), N_("step"), N_("base"),
    N_("keep a cat"), N_("pets in general"), N_("the stars"), N_("cost of a cat"),  # 01's readers
    N_("none"), N_("causal"), N_("padding"), N_("both"),  # 04's masks (nb04.MASK_KINDS)
    N_("window"),  # 14's slider
    N_("tokens t"),  # 13's cache length
)


def _in_course_language(control) -> None:
    """Show the control's description and option labels in the course's language (in place).

    In English nothing changes. Options keep their values: a Dropdown of ["none", "causal"]
    becomes [("なし", "none"), ("因果", "causal")], and the selected value stays selected.
    """
    description = getattr(control, "description", "")
    if description and _(description) != description:
        control.description = _(description)
        control.style.description_width = "initial"  # the whole translated label, not cut at 80 px
    labels = getattr(control, "_options_labels", None)
    if not labels:
        return
    translated = tuple(shown(label) for label in labels)  # "" stays "" (not the catalog header)
    if translated != tuple(labels):
        value = control.value
        control.options = list(zip(translated, control._options_values, strict=True))
        control.value = value


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
