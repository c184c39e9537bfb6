"""The shared plotting machinery: LiveFigure, interactive() wiring, heatmap, Japanese glyphs."""

import warnings

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_plots as ap


class Bars(ap.LiveFigure):
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
    box = ap.interactive(Bars(), k=slider)
    text, image = box.children[1], box.children[2]
    assert "total = 6" in text.value and image.value[:4] == b"\x89PNG"
    before = image.value
    slider.value = 3
    assert "total = 18" in text.value
    assert image.value != before
    assert box in ap.INTERACTIVES


def test_live_figure_png_is_a_png_and_text_is_escaped():
    live = Bars()
    text, png = live.render(k=2)
    assert text == "k = 2, total = 12" and png.startswith(b"\x89PNG")
    assert ap._escape("a<b>&") == "a&lt;b&gt;&amp;"


def test_attention_heatmap_labels_and_bad_shape():
    fig, im = ap.attention_heatmap(np.full((2, 3), 1 / 3), ["a", "b"], ["x", "y", "z"])
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y", "z"]
    assert im.get_array().shape == (2, 3)
    plt.close(fig)
    with pytest.raises(ValueError, match="2-D"):
        ap.attention_heatmap(np.ones(3))


def test_japanese_labels_have_glyphs():
    assert ap.JAPANESE_FONT, "matplotlib-fontja is missing: labels like 猫 would be boxes"
    fig, ax = plt.subplots()
    ax.set_title("注意重み 私 は 猫")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" is a UserWarning
        fig.canvas.draw()
    plt.close(fig)
