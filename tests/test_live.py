"""The shared machinery: LiveFigure and with_controls() (course.live), the style and heatmap (course.figures)."""

import io
import os
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
    box = live.with_controls(Bars(), k=slider)
    text, image = box.children[1], box.children[2]
    assert "total = 6" in text.value and image.value[:4] == b"\x89PNG"
    before = image.value
    slider.value = 3
    assert "total = 18" in text.value
    assert image.value != before


def _words(text_widget) -> str:
    import re
    found = re.findall(r'<p class="live-figure-words" style="([^"]*)">(.*?)</p>', text_widget.value)
    assert len(found) == 1 and found[0][0] == live.VISUALLY_HIDDEN, text_widget.value
    return found[0][1]


def test_the_live_figure_is_told_in_words_as_it_is_now():
    from course.describe import describe

    slider = widgets.IntSlider(value=1, min=1, max=3)
    bars = Bars()
    box = live.with_controls(bars, k=slider)
    text, image = box.children[1], box.children[2]
    assert _words(text) == describe(bars.fig) == "3 bars: 1, 2, 3."
    assert image.tooltip is None or image.tooltip == ""   # it would stop ipywidgets drawing it
    slider.value = 3
    assert _words(text) == "3 bars: 3, 6, 9."
    assert text.value.startswith("<pre>k = 3, total = 18</pre>")


def test_a_figure_that_cannot_be_told_is_named_by_its_printed_text(monkeypatch):
    import course.describe

    def fails(fig, max_chars=700):
        raise ValueError("no words")

    monkeypatch.setattr(course.describe, "describe", fails)
    box = live.with_controls(Bars(), k=widgets.IntSlider(value=2, min=1, max=3))
    assert _words(box.children[1]) == "k = 2, total = 12"


def test_the_benchmark_records_every_widget(monkeypatch):
    # scripts/bench.py runs this cell before a notebook's first, then sweeps what it recorded
    from scripts.bench_hooks import RECORD_WIDGETS_CELL
    monkeypatch.setattr(live, "with_controls", live.with_controls)  # put back after the test
    kernel = {}
    exec(RECORD_WIDGETS_CELL, kernel)
    from course.live import with_controls  # as a notebook's first cell does, after the hook
    bars, slider = Bars(), widgets.IntSlider(value=1, min=1, max=3)
    box = with_controls(bars, k=slider)
    assert kernel["_bench_widgets"] == [(bars, {"k": slider})]
    slider.value = 2
    assert "total = 12" in box.children[1].value


def test_selection_slider_gets_a_read_only_readout_that_follows_it():
    # ipywidgets 8 lets one type into a SelectionSlider's readout and ignores it
    slider = widgets.SelectionSlider(options=[1, 2, 4], value=2, description="k")
    box = live.with_controls(Bars(), k=slider)
    row = box.children[0].children[0]
    assert isinstance(row, widgets.HBox) and row.children[0] is slider
    label = row.children[1]
    assert slider.readout is False and isinstance(label, widgets.Label)
    assert label.value == "2" and "live-figure-readout" in label._dom_classes
    slider.value = 4
    assert label.value == "4" and "total = 24" in box.children[1].value
    assert box.children[0].children == (row,)


def test_int_slider_keeps_its_own_readout():
    slider = widgets.IntSlider(value=1, min=1, max=3)
    box = live.with_controls(Bars(), k=slider)
    assert box.children[0].children[0] is slider and slider.readout is True


def test_live_figure_png_is_a_png_and_its_text_shows_as_written():
    bars = Bars()
    text, png = bars.render(k=2)
    assert text == "k = 2, total = 12" and png.startswith(b"\x89PNG")

    class Comparison(Bars):  # a summary with the characters HTML would read as markup
        def update(self, k=1):
            super().update(k)
            return f"k < {k + 1} & k > {k - 1}"

    box = live.with_controls(Comparison(), k=widgets.IntSlider(value=2, min=1, max=3))
    def html_of(w):
        return [w.value] if isinstance(w, widgets.HTML) else sum(
            (html_of(c) for c in getattr(w, "children", ())), [])
    shown, = html_of(box)
    # the learner reads "k < 3 & k > 1"; then come the figure's words, escaped as well
    assert shown.startswith("<pre>k &lt; 3 &amp; k &gt; 1</pre><p ")


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


# ---------------------------------------------------------------- the course's style and layouts

def test_course_style_is_for_a_projector():
    """120 dpi, 12 pt text (20 px), nothing set smaller than 10 pt (17 px)."""
    import matplotlib
    assert matplotlib.rcParams["figure.dpi"] == 120 and matplotlib.rcParams["font.size"] == 12
    fig, ax = plt.subplots()
    ax.set_title("t")
    sizes = [matplotlib.font_manager.FontProperties(size=s).get_size_in_points()
             for s in (figures.SMALL, matplotlib.rcParams["legend.fontsize"],
                       matplotlib.rcParams["xtick.labelsize"])]
    assert min(sizes) >= 9.99
    assert ax.title.get_position()[1] == 1.0 and not ax._autotitlepos  # placed once, not per draw


def test_old_resolution_is_only_applied_in_the_benchmarks_kernels(tmp_path):
    # scripts/bench.py, item 1b: an IPython startup file patches use_course_style in the kernels
    # of one timing run; the course's own modules know nothing of it
    import subprocess
    import sys

    from scripts import bench_hooks
    code = ("import matplotlib; from course import figures; figures.use_course_style(); "
            "print('DPI', matplotlib.rcParams['figure.dpi'], matplotlib.rcParams['font.size'])")
    shown = {}
    for name, env in [("old", bench_hooks.old_resolution_env(tmp_path / "ipython", {})),
                      ("course", {"IPYTHONDIR": str(tmp_path / "plain")})]:
        out = subprocess.run([sys.executable, "-m", "IPython", "--no-banner", "-c", code],
                             env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
        shown[name] = next(line for line in out.stdout.splitlines() if line.startswith("DPI"))
    assert shown == {"old": "DPI 80.0 11.0", "course": "DPI 120.0 12.0"}, shown


def test_fixed_subplots_sizes_are_inches():
    import matplotlib
    fig, axes = figures.fixed_subplots(2, 3, widths=[1.0, 2.0, 1.0], heights=1.5, left=0.8,
                                       right=0.2, bottom=0.6, top=0.4, wgap=0.3, hgap=0.5)
    assert fig.get_size_inches() == pytest.approx([0.8 + 4.0 + 0.6 + 0.2, 0.6 + 3.0 + 0.5 + 0.4])
    assert not isinstance(fig.get_layout_engine(), matplotlib.layout_engine.ConstrainedLayoutEngine)
    w, h = fig.get_size_inches()
    box = axes[1, 1].get_position()  # bottom row, middle column
    assert box.x0 * w == pytest.approx(0.8 + 1.0 + 0.3) and box.width * w == pytest.approx(2.0)
    assert box.y0 * h == pytest.approx(0.6) and box.height * h == pytest.approx(1.5)
    assert axes[0, 0].get_position().y0 * h == pytest.approx(0.6 + 1.5 + 0.5)


def test_colorbar_sits_right_of_the_axes_it_serves():
    fig, axes = figures.fixed_subplots(1, 2, widths=2.0, heights=2.0, left=0.8, right=1.3,
                                       bottom=0.6, top=0.3, wgap=0.6)
    im = axes[0].imshow(np.eye(3))
    axes[1].imshow(np.eye(3))
    cb = figures.colorbar(fig, im, axes, width=0.2, pad=0.25, shrink=0.5, label="w")
    w, h = fig.get_size_inches()
    box = cb.ax.get_position()
    assert box.x0 * w == pytest.approx(0.8 + 4.6 + 0.25) and box.width * w == pytest.approx(0.2)
    assert box.height * h == pytest.approx(1.0) and box.y0 * h == pytest.approx(0.6 + 0.5)
    assert not figures.layout_problems(fig)


def test_layout_problems_finds_cut_off_and_overlapping_text():
    fig, axes = figures.fixed_subplots(1, 2, widths=2.0, heights=1.5, left=0.8, right=0.2,
                                       bottom=0.6, top=0.4, wgap=1.0)  # 0.8 in: 2 px short with
    for ax in axes:                                   # the lowest matplotlib's tick labels
        ax.set(xlabel="x", ylabel="y", title="fits")
    assert figures.layout_problems(fig) == []
    axes[1].set_ylabel("a y label far too long to fit in the gap between the two panels")
    axes[1].yaxis.set_label_coords(-0.6, 0.5)
    problems = figures.layout_problems(fig)
    assert any("overlap" in p for p in problems)
    fig, ax = figures.fixed_subplots(widths=2.0, heights=1.5, left=0.1, right=0.1, bottom=0.6,
                                     top=0.4)
    ax.set_ylabel("no room on the left")
    assert any("cut off" in p and "no room on the left" in p for p in figures.layout_problems(fig))
    fig, ax = figures.fixed_subplots(widths=1.0, heights=1.0, left=0.8, right=0.2, bottom=0.6,
                                     top=0.4)
    ax.set_xticks(range(5), ["long label"] * 5)
    assert any("tick labels" in p for p in figures.layout_problems(fig))


def test_attention_heatmap_on_its_own_fits_its_figure():
    fig, _ = figures.attention_heatmap(np.full((3, 4), 0.25), list("abc"), list("wxyz"))
    assert not figures.layout_problems(fig)


def test_live_figure_uses_the_course_resolution_and_frozen_layout():
    import matplotlib
    bars = BlittedBars()
    assert bars.fig.dpi == matplotlib.rcParams["figure.dpi"]
    assert not isinstance(bars.fig.get_layout_engine(),
                          matplotlib.layout_engine.ConstrainedLayoutEngine)
    w, h = bars.fig.canvas.get_width_height()
    assert (w, h) == (int(4 * bars.fig.dpi), int(3 * bars.fig.dpi))
    assert _pixels(bars.png()).shape == (h, w, 4)


def test_course_style_shows_notebook_figures_in_one_draw_with_fast_compression():
    """In a notebook kernel, use_course_style() tells the inline backend: no re-cropping, zlib 1."""
    from IPython.testing.globalipapp import start_ipython
    from matplotlib_inline.config import InlineBackend
    shell = start_ipython()
    try:
        figures.use_course_style()
        kwargs = InlineBackend.instance().print_figure_kwargs
        assert kwargs["bbox_inches"] is None
        assert kwargs["pil_kwargs"] == figures.PNG_OPTIONS == {"compress_level": 1}
    finally:
        shell.clear_instance()


# --- the controls' texts in the course's language ------------------------------------------

CONTROL_SYMBOLS = {"d_k", "n", "h", "pos", "d_model", "block_size", "W_K[2,2]", "m", "m - n", "h_kv",  # not translated
                   "私", "は", "猫"}  # 02's tokens: the sentence itself, in every edition


def _control_texts_in_notebooks():
    """Every literal description= and string option label of an ipywidgets control in the notebooks."""
    import ast
    from pathlib import Path

    import nbformat
    found = set()
    for path in sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code" or "widgets." not in cell.source:
                continue
            code = "\n".join(line for line in cell.source.splitlines() if not line.startswith(("%", "!")))
            for node in ast.walk(ast.parse(code)):
                if not isinstance(node, ast.keyword):
                    continue
                if node.arg == "description" and isinstance(node.value, ast.Constant):
                    found.add((path.stem, node.value.value))
                if node.arg == "options" and isinstance(node.value, (ast.List, ast.Tuple)):
                    for item in node.value.elts:
                        label = item.elts[0] if isinstance(item, ast.Tuple) else item
                        if isinstance(label, ast.Constant) and isinstance(label.value, str):
                            found.add((path.stem, label.value))
    return found


def test_every_control_text_of_the_notebooks_is_marked_for_translation():
    found = _control_texts_in_notebooks()
    assert {text for _, text in found} >= {"reader", "mask", "step"}  # the scan sees the notebooks
    missing = sorted((nb, text) for nb, text in found
                     if text not in live.CONTROL_TEXTS and text not in CONTROL_SYMBOLS)
    assert not missing, f"add these to course.live.CONTROL_TEXTS (N_) and translate them: {missing}"


def test_option_labels_from_the_companions_are_marked_too():
    from course import nb04_masking as nb04
    assert set(nb04.MASK_KINDS) <= set(live.CONTROL_TEXTS)


def test_controls_speak_the_course_language_and_keep_their_values():
    import ipywidgets as widgets

    from course import i18n
    with i18n.language_as("ja"):
        mask = widgets.ToggleButtons(options=["none", "causal", "padding", "both"], value="both",
                                     description="mask")
        slider = widgets.IntSlider(value=3, min=0, max=5, description="query i")
        symbol = widgets.SelectionSlider(options=[1, 2, 4], value=2, description="d_k")
        seen = []
        box = live.with_controls(_Recorder(seen), mask=mask, position=slider, d_k=symbol)
    assert mask.value == "both" and seen[-1] == {"mask": "both", "position": 3, "d_k": 2}
    assert mask.description != "mask" and not mask.description.isascii()
    assert all(not label.isascii() for label in mask._options_labels)
    assert slider.description != "query i" and symbol.description == "d_k"
    mask.value = "causal"
    assert seen[-1]["mask"] == "causal"
    assert box.children[0].children == (mask, slider, box.children[0].children[2])
    assert box.children[0].children[2].children[0] is symbol
    english = widgets.ToggleButtons(options=["none", "causal"], value="none", description="mask")
    live.with_controls(_Recorder([]), mask=english)
    assert english.description == "mask" and english._options_labels == ("none", "causal")


class _Recorder(live.LiveFigure):
    """A live figure that records the values it is asked to show."""

    figsize = (1, 1)

    def __init__(self, seen):
        self.seen = seen
        super().__init__()

    def setup(self):
        self.fig.add_subplot()

    def update(self, **values):
        self.seen.append(values)
        return ""


def test_the_shared_blit_check_finds_a_frame_that_is_not_the_full_draw():
    """tests/live_frames.py, which every companion's live-figure test uses, can fail: a frame
    that misses a change is reported, in both tolerances."""
    from live_frames import blit_mismatches

    live = BlittedBars()
    assert not blit_mismatches(live, [{"k": 1}, {"k": 2.5}], tolerance="exact")
    # the classic slip: a change to an artist that is not among the blitted ones (the static
    # grey line, drawn once into the background): the widget keeps showing it where it was
    live.ax.lines[0].set_ydata([8, 8])
    live.ax.lines[0].set_linewidth(12)
    assert blit_mismatches(live, [{"k": 2.5}]) == [{"k": 2.5}]
    assert blit_mismatches(live, [{"k": 2.5}], tolerance="exact") == [{"k": 2.5}]


def test_the_shared_framed_row_check_reads_the_row_as_drawn():
    """tests/live_frames.py's framed_row: the row a frame surrounds on the figure, None for a
    frame that surrounds no single row."""
    from matplotlib.patches import Rectangle

    from live_frames import framed_row

    fig, ax = plt.subplots()
    image = ax.imshow(np.zeros((5, 4)))
    frame = ax.add_patch(Rectangle((-0.5, 1.5), 4, 1, fill=False))
    fig.canvas.draw()
    assert framed_row(frame, image) == 2
    frame.set_y(3.5)
    assert framed_row(frame, image) == 4
    frame.set_height(3)  # three rows high: not one row's frame
    assert framed_row(frame, image) is None
    plt.close(fig)
