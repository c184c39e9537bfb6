"""The shared machinery: LiveFigure and interactive() (course.live), the style and heatmap (course.figures)."""

import io
import warnings

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import pytest

from course import figures, live


class Bars(live.LiveFigure):
    figsize = (3, 2)

    def setup(self):
        self.ax = self.fig.add_subplot()
        self.bars = self.ax.bar(range(3), [0, 0, 0])
        self.ax.set_ylim(0, 10)

    def update(self, k=1):
        for i, b in enumerate(self.bars):
            b.set_height(k * (i + 1))
        return f"k = {k}, total = {6 * k}"


def test_interactive_redraws_text_and_image_on_change():
    slider = widgets.IntSlider(value=1, min=1, max=3)
    box = live.interactive(Bars(), k=slider)
    text, image = box.children[1], box.children[2]
    assert "total = 6" in text.value and image.value[:4] == b"\x89PNG"
    before = image.value
    slider.value = 3
    assert "total = 18" in text.value
    assert image.value != before
    assert any(ref() is box for ref in live.INTERACTIVES)


def test_selection_slider_gets_a_read_only_readout_that_follows_it():
    # ipywidgets 8 lets one type into a SelectionSlider's readout and ignores it
    slider = widgets.SelectionSlider(options=[1, 2, 4], value=2, description="k")
    box = live.interactive(Bars(), k=slider)
    row = box.children[0].children[0]
    assert isinstance(row, widgets.HBox) and row.children[0] is slider
    label = row.children[1]
    assert slider.readout is False and isinstance(label, widgets.Label)
    assert label.value == "2" and "live-figure-readout" in label._dom_classes
    slider.value = 4
    assert label.value == "4" and "total = 24" in box.children[1].value
    assert box.controls == {"k": slider}


def test_int_slider_keeps_its_own_readout():
    slider = widgets.IntSlider(value=1, min=1, max=3)
    box = live.interactive(Bars(), k=slider)
    assert box.children[0].children[0] is slider and slider.readout is True


def test_live_figure_png_is_a_png_and_text_is_escaped():
    bars = Bars()
    text, png = bars.render(k=2)
    assert text == "k = 2, total = 12" and png.startswith(b"\x89PNG")
    assert live._escape("a<b>&") == "a&lt;b&gt;&amp;"


def test_attention_heatmap_labels_and_bad_shape():
    fig, im = figures.attention_heatmap(np.full((2, 3), 1 / 3), ["a", "b"], ["x", "y", "z"])
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y", "z"]
    assert im.get_array().shape == (2, 3)
    plt.close(fig)
    with pytest.raises(ValueError, match="2-D"):
        figures.attention_heatmap(np.ones(3))


def test_japanese_labels_have_glyphs():
    fig, ax = plt.subplots()
    ax.set_title("注意重み 私 は 猫")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" is a UserWarning
        fig.canvas.draw()
    plt.close(fig)


class BlittedBars(live.LiveFigure):
    """Bars, their value labels, a title and a line that change; everything else static."""

    figsize = (4, 3)

    def setup(self):
        self.ax = self.fig.add_subplot()
        self.ax.axhline(5, color="0.6", zorder=0.5)  # static, under the bars (zorder 1)
        self.bars = self.ax.bar(range(3), [0, 0, 0], color="tab:blue")
        self.labels = [self.ax.text(i, 0, "", ha="center", va="bottom", bbox={"fc": "w", "alpha": 0.7})
                       for i in range(3)]
        (self.line,) = self.ax.plot([0, 2], [0, 0], color="tab:red", lw=3)
        self.ax.set_ylim(0, 10)
        self.ax.set_xticks([])  # no tick marks under the bars: pixel-exact comparison
        self.ax.set_title("k = 1")
        self.blit([*self.bars, *self.labels, self.line, self.ax.title])

    def update(self, k=1):
        for i, (bar, label) in enumerate(zip(self.bars, self.labels, strict=True)):
            bar.set_height(k * (i + 1))
            label.set_y(k * (i + 1))
            label.set_text(f"{k * (i + 1):.1f}")
        self.line.set_ydata([k, 9 - k])
        self.ax.set_title(f"k = {k}, total = {6 * k}")
        return f"k = {k}"


def _pixels(png):
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA")).astype(int)


def test_blitted_png_equals_a_full_redraw_of_the_same_state():
    live = BlittedBars()
    assert live._background is not None and all(a.get_animated() for a in live._changing)
    # a new state, then back to an old one (cached text), then another: no ghost of earlier states
    for k in (1, 2.5, 1, 0.5, 2.5):
        text, png = live.render(k=k)
        blitted, full = _pixels(png), _pixels(live.full_png())
        # Agg may round a cached label blended over a bar edge one level differently
        assert np.abs(blitted - full).max() <= 1, f"k = {k}: blitted PNG differs from a full draw"
        assert text == f"k = {k}"
    assert np.abs(_pixels(live.png()) - _pixels(live.full_png())).max() <= 1  # png() after full_png()
    assert not _pixels(live.render(k=1)[1]).tolist() == _pixels(live.render(k=2)[1]).tolist()


def test_unblitted_png_draws_the_whole_figure():
    live = Bars()
    assert live._changing is None
    _, png = live.render(k=2)
    assert np.array_equal(_pixels(png), _pixels(live.full_png()))
