"""course/describe/: a figure in words, made from what it draws (issue 27).

Each test draws a small figure whose answer is known and reads what describe() says of it.
The notebooks' own figures are checked where they are stored (tests/test_stored_notebook.py)
and re-made by strict nbval, which compares each figure's text like any other output.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from course import i18n  # noqa: E402
from course.describe import MAX_CHARS, describe, number  # noqa: E402
from tests.figure_texts import JAPANESE  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def weights_figure():
    """Three queries over three keys, each row's largest weight somewhere else."""
    a = np.array([[0.1, 0.7, 0.2], [0.5, 0.25, 0.25], [0.05, 0.15, 0.8]])
    fig, ax = plt.subplots()
    im = ax.imshow(a)
    ax.set(xticks=range(3), xticklabels=["I", "am", "a cat"], yticks=range(3),
           yticklabels=["I", "am", "a cat"], xlabel="key j", ylabel="query i",
           title="attention weights $A$")
    fig.colorbar(im, ax=ax, label="weight")
    return fig


def test_number_has_three_significant_digits_and_no_negative_zero():
    assert [number(v) for v in (0.12345, -0.0, 1234.5, 1024, -2.5, 5.72e8, 8.6e-6, -np.inf)] == \
        ["0.123", "0", "1230", "1024", "−2.5", "572 million", "8.6 × 10 to the power −6", "−∞"]
    # a power of ten in words: a screen reader spells "8.6e-06" out as "8.6 e minus 06"
    assert number(1.54e12) == "1.54 trillion" and number(1.25e6) == "1.25 million"
    with i18n.language_as("ja"):   # 万, 億, 兆: a Japanese reader counts in fours
        assert [number(v) for v in (1.25e6, 12345678, 5.72e8, 1.54e12, -2e13, 8.6e-6)] == [
            "125 万", "1230 万", "5.72 億", "1.54 兆", "−20 兆", "8.6 × 10 の −6 乗"]
    assert [number(v) for v in (12345678, 999.4e6, 2.5e14)] == [
        "12.3 million", "999 million", "250 trillion"]


def test_heatmap_names_each_row_largest_key_by_its_tick_label():
    text = describe(weights_figure())
    assert text.startswith("attention weights A: a heatmap of 3 × 3 values (weight), "
                           "rows: query i, columns: key j, from 0.05 to 0.8")
    assert "largest in each row: I → am (0.7), am → I (0.5), a cat → a cat (0.8)." in text
    assert "colorbar" not in text and "panel" not in text   # the colorbar is not a panel


def test_masked_and_minus_infinity_cells_are_empty_not_values():
    s = np.array([[1.0, -np.inf, -np.inf], [0.5, 2.0, -np.inf], [0.1, 0.2, 0.3]])
    fig, ax = plt.subplots()
    ax.imshow(s)
    text = describe(fig)
    assert "3 of 9 cells empty (masked)" in text and "from 0.1 to 2" in text
    assert "−∞" not in text
    fig2, ax2 = plt.subplots()
    ax2.imshow(np.ma.masked_invalid(np.full((2, 2), np.nan)))
    assert "every cell empty" in describe(fig2)


def test_a_large_square_map_says_how_many_rows_peak_on_the_diagonal():
    a = np.eye(10) + np.linspace(0.01, 0.1, 10)   # not two-valued
    a[3] = np.roll(a[3], 2)
    fig, ax = plt.subplots()
    ax.imshow(a)
    text = describe(fig)
    assert "the largest on the diagonal in 9 of 10 rows" in text
    assert "largest in each row" not in text


def test_a_curve_says_its_range_and_where_it_turns():
    x = np.linspace(-2, 2, 41)
    fig, ax = plt.subplots()
    ax.plot(x, 1 - x ** 2, label="bump")
    ax.plot(x, np.exp(x), label="exp")
    ax.axhline(0)   # a reference line: not a curve
    ax.set(xlabel="x", ylabel="value")
    text = describe(fig)
    assert text == ("value (y) against x: bump, from −3 at x = −2 to −3 at x = 2, "
                    "highest 1 at x = 0; exp, rising from 0.135 at x = −2 to 7.39 at x = 2.")


def test_an_oscillating_curve_counts_its_turns_and_log_axes_are_said():
    x = np.linspace(0, 4 * np.pi, 400)
    fig, ax = plt.subplots()
    ax.plot(x, 2 + np.sin(x))
    ax.set(yscale="log", xlabel="t", ylabel="y")
    text = describe(fig)
    assert text.startswith("y (log scale) against t (x): ")
    assert "turning 4 times between 1 and 3" in text


def test_each_axis_is_named_with_its_letter_and_scale_in_one_bracket():
    fig, ax = plt.subplots()
    ax.plot([1, 10, 100], [3, 2, 1])
    ax.set(xscale="log", xlabel="bytes per token (float64, one layer)", ylabel="d_k (log scale)",
           yscale="log")
    assert describe(fig).startswith("d_k (y, log scale) against bytes per token "
                                    "(x, log scale; float64, one layer): ")  # the letter first
    ax.set(xlabel="n", ylabel="")
    assert describe(fig).startswith("y (log scale) against n (x, log scale): ")
    ax.set(xscale="linear", yscale="linear", xlabel="q · k / √(d_k)", ylabel="PE(p) · PE(p + k)")
    assert describe(fig).startswith("PE(p) · PE(p + k) (y) against q · k / √(d_k) (x): ")  # a
    # formula's brackets are not a remark: the letter goes after them, not into them


def test_bars_by_their_tick_labels_and_horizontal_bars_by_their_width():
    fig, (ax1, ax2) = plt.subplots(1, 2)
    ax1.bar(["a", "b", "c"], [3, 1, 2])
    ax1.set(ylabel="count", title="counts")
    ax2.barh([0, 1], [0.25, 0.75])
    text = describe(fig)
    assert text.startswith("2 panels. counts: 3 bars of count: a 3, b 1, c 2.")
    assert "panel 2: 2 bars: 0.25, 0.75." in text


def test_many_bars_and_many_curves_are_summed_up():
    fig, (ax1, ax2) = plt.subplots(1, 2)
    ax1.bar(range(30), np.arange(30) % 7)
    for k in range(8):
        ax2.plot([0, 1, 2], [k, k + 1, k + 3])
    text = describe(fig)
    assert "30 bars, from 0 to 6, the largest at x = 6." in text   # bars 0 to 29
    fig, ax = plt.subplots()   # grouped bars beside their named ticks: the tick's name
    ax.bar(np.arange(13) - 0.2, np.arange(13) % 5, 0.4)
    ax.set_xticks(range(13), [f"book {k}" for k in range(13)])
    assert describe(fig).endswith("13 bars, from 0 to 4, the largest at book 4.")
    assert "8 curves, y from 0 to 10." in text


def test_points_and_an_rgb_picture():
    fig, (ax1, ax2) = plt.subplots(1, 2)
    ax1.scatter([1, 2, 3], [4, 5, -6])
    ax2.imshow(np.zeros((4, 5, 3)))
    text = describe(fig)
    assert "3 points, x from 1 to 3, y from −6 to 5." in text
    assert "a picture of 4 × 5 pixels." in text


def test_a_long_description_is_told_again_with_fewer_details():
    fig, axes = plt.subplots(2, 4)
    rng = np.random.default_rng(0)
    for k, ax in enumerate(axes.flat):
        ax.imshow(rng.random((6, 6)))
        ax.set_title(f"head {k + 1}")
    full, short = describe(fig, max_chars=10_000), describe(fig)
    assert "largest in each row" in full and len(full) > MAX_CHARS
    assert len(short) <= MAX_CHARS and "head 8: a heatmap of 6 × 6 values" in short


def test_an_empty_figure_says_so():
    fig = plt.figure()
    assert describe(fig) == "no data."


def test_the_japanese_edition_describes_in_japanese():
    with i18n.language_as("ja"):
        text = describe(weights_figure())
    assert JAPANESE.search(text.replace("a cat", "").replace("attention weights A", ""))
    assert "heatmap" not in text and "largest" not in text
    assert "0.7" in text and "a cat" in text   # the numbers and the figure's own labels stay


def test_arrows_from_tail_to_tip_and_a_diagram_by_its_words():
    fig, (ax1, ax2) = plt.subplots(1, 2)
    ax1.quiver([0], [0], [1], [0.5], angles="xy", scale_units="xy", scale=1)
    ax1.quiver([1], [0.5], [0], [1], angles="xy", scale_units="xy", scale=1)
    ax2.set_axis_off()
    ax2.text(0.5, 0.1, "bottom")
    ax2.text(0.5, 0.9, "top")
    ax2.annotate("", xy=(0.5, 0.8), xytext=(0.5, 0.2), arrowprops={"arrowstyle": "->"})
    ax2.plot([0, 1, 2], [0, 1, 0])   # a line of the drawing, not a curve of data
    text = describe(fig)
    assert "arrows (0, 0) → (1, 0.5), (1, 0.5) → (1, 1.5)." in text
    assert "panel 2: a diagram; its labels from the top: top, bottom." in text
    assert "rising" not in text and "highest" not in text


def test_a_measured_panel_gives_no_values_and_shared_labels_are_found():
    fig, (ax1, ax2) = plt.subplots(1, 2, sharey=True)
    for ax in (ax1, ax2):
        ax.plot([16, 32, 64], [0.0123, 0.0456, 0.0789], label="naive")
        ax.set_xlabel("n")
    ax1.set_ylabel("seconds")
    ax2.set_ylabel("")
    from course import describe as d
    d.mark_measured(ax2)
    text = describe(fig)
    assert "panel 1: seconds (y) against n (x): naive, rising from 0.0123 at x = 16" in text
    assert "panel 2: seconds (y) against n (x): measured on this machine, not repeated here" in text
    assert text.count("0.0789") == 1   # only in the panel that is not measured


def test_panels_past_the_length_are_counted_not_cut_mid_sentence():
    fig, axes = plt.subplots(4, 6)
    for k, ax in enumerate(axes.flat):
        ax.imshow(np.arange(36.0).reshape(6, 6) + k)
        ax.set_title(f"a long title for the panel number {k + 1}")
    text = describe(fig)
    assert len(text) <= MAX_CHARS and text.endswith("more panels not described here.")
    assert text.startswith("24 panels. a long title for the panel number 1: a heatmap of 6 × 6")


def test_panels_that_share_an_axis_share_its_names():
    a = np.array([[0.9, 0.1], [0.2, 0.8]])
    fig, (ax1, ax2) = plt.subplots(1, 2, sharey=True)
    for ax in (ax1, ax2):
        ax.imshow(a)
        ax.set_xticks([0, 1], ["k1", "k2"])
    ax1.set_yticks([0, 1], ["q1", "q2"])   # sharey: the second panel shows no row names
    text = describe(fig)
    assert text.count("q1 → k1 (0.9), q2 → k2 (0.8)") == 2


def test_a_two_valued_map_counts_its_cells_and_a_tie_names_every_column():
    fig, (ax1, ax2) = plt.subplots(1, 2)
    ax1.imshow(np.tril(np.ones((4, 4))))   # a causal pattern: no "largest" to speak of
    ax2.imshow(np.array([[0.5, 0.0, 0.5], [0.2, 0.7, 0.1]]))
    ax2.set_xticks([0, 1, 2], ["the", "cat", "the"])
    text = describe(fig)
    assert "panel 1: a heatmap of 4 × 4 values, from 0 to 1, 1 in 10 of 16 cells and 0 in the others." \
        in text
    assert "largest in each row: 0 → the and the (0.5), 1 → cat (0.7)." in text  # not "/"


def test_rounding_noise_on_a_linear_axis_is_told_as_zero_and_kept_on_a_log_axis():
    x = np.arange(5.0)
    y = np.array([1.97, 0.5, 1e-3, 5.17e-16, 2e-17])
    fig, (linear, log) = plt.subplots(1, 2)
    linear.plot(x, y, label="entropy")
    log.plot(x, y + 1e-20, label="entropy")
    log.set_yscale("log")
    text = describe(fig)
    assert "falling from 1.97 at x = 0 to 0 at x = 4" in text
    assert "to 2 × 10 to the power −17 at x = 4" in text


def test_a_noisy_curve_is_told_by_its_trend_not_by_its_count_of_turns():
    # notebook 10's loss on each new batch turned "54 times": noise, not the curve's shape
    rng = np.random.default_rng(0)
    x = np.arange(150)
    fig, (noisy, level) = plt.subplots(1, 2)
    noisy.plot(x, 3 * np.exp(-x / 25) * np.exp(rng.normal(0, 0.15, x.size)), label="loss")
    noisy.set_yscale("log")
    level.plot(x, 1 + 0.01 * rng.normal(size=x.size), label="flat")
    text = describe(fig)
    assert "loss, falling overall with small ups and downs, from " in text
    assert "flat, nearly level with ups and downs, from " in text
    assert "turning" not in text
    fig, ax = plt.subplots()   # a sine's turns are its shape: still counted
    ax.plot(np.sin(np.linspace(0, 20, 200)))
    assert "turning 6 times between" in describe(fig)


def test_a_title_line_in_brackets_is_its_remark_and_spaces_are_single():
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [0, 1, 2])
    ax.set_title("attention entropy\n(output rows) [nats]")
    ax.set_ylabel(r"max weight $\max_j\ p_j$")
    text = describe(fig)
    assert text.startswith("attention entropy (output rows), in nats: max weight max_j p_j (y)")
    ax.set_title("weight per key\n(from queries 8..31)\n(without key i - 3)")   # two remarks
    assert describe(fig).startswith(
        "weight per key (from queries 8 to 31, without key i − 3): ")


def test_a_unit_in_square_brackets_is_said_in_words_and_an_index_is_left():
    """A screen reader at its default punctuation reads "time [s]" as "time s"."""
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [3, 2, 1])
    ax.set_ylabel("time per call [s]")
    ax.set_xlabel("entry W_K[2,2]")
    assert describe(fig).startswith("time per call, in seconds (y) against entry W_K[2,2] (x): ")
    ax.set_ylabel("peak memory [MiB]")
    assert describe(fig).startswith("peak memory, in mebibytes (y) against")
    with i18n.language_as("ja"):
        ax.set_ylabel("1 回の呼び出しの時間 [秒]")
        ax.set_xlabel("系列長 n")
        assert "縦軸は 1 回の呼び出しの時間、単位は秒 (y)" in describe(fig)
        ax.set_ylabel("損失 [ナット]")
        assert "縦軸は 損失、単位はナット (y)" in describe(fig)


def test_unnamed_curves_of_one_panel_are_told_together():
    """Curves told one by one need names: 'from 1.89 to 0.27' six times tells none apart."""
    fig, ax = plt.subplots()
    for k in range(3):
        ax.plot([0, 1, 2], [3 + k, 2 + k, 1 + k])
    assert describe(fig) == "3 curves, y from 1 to 5."
    fig, ax = plt.subplots()
    for k in range(3):
        ax.plot([0, 1, 2], [3 + k, 2 + k, 1 + k], label=f"k = {k}")
    assert describe(fig).count("falling from") == 3


def test_a_japanese_gloss_is_left_out_of_english_words_and_kept_in_japanese():
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [0, 1, 2])
    ax.set_title("Mask patterns (マスク), d_k (位置ごと) (x)")   # a title, not data
    ax.set_xticks([0, 1, 2], ["私", "は", "猫"])
    assert describe(fig).startswith("Mask patterns, d_k (x): ")
    with i18n.language_as("ja"):
        assert describe(fig).startswith("Mask patterns (マスク), d_k (位置ごと) (x): ")


def test_bars_drawn_as_one_line_of_segments_are_told_as_bars():
    # notebook 06 draws a bar chart as vertical segments 0 -> v, NaN-separated (faster)
    values = np.array([1.0, 0.5, -0.25])
    x = np.repeat(np.arange(3.0), 3)
    x[2::3] = np.nan
    y = np.zeros_like(x)
    y[1::3] = values
    fig, ax = plt.subplots()
    ax.plot(x, y, label="cos")
    ax.set_ylabel("PE")
    assert describe(fig) == "cos: 3 bars of PE at x = 0 to 2: 1, 0.5, −0.25."


def test_rows_with_no_largest_column_are_said_not_left_out():
    a = np.zeros((3, 4))
    a[1] = [0.1, 0.2, 0.3, 0.05]   # not two-valued
    fig, ax = plt.subplots()
    ax.imshow(a)
    text = describe(fig)
    assert "largest in each row: 1 → 2 (0.3)" in text
    assert "0 in every cell of the other rows (0, 2)" in text
    a[2] = 0.5   # constant rows of different values
    ax.images[0].set_data(a)
    assert "the same in every cell of the other rows (0, 2)" in describe(fig)


def test_a_title_of_two_lines_is_read_as_two_parts():
    fig, ax = plt.subplots()
    ax.bar([0, 1], [1, 2])
    ax.set_title("step 40: loss 0.61\n6 of 6 rows on the key")
    fig.suptitle("Training:\nthe pattern forming")
    text = describe(fig)
    assert text.startswith("Figure: Training: the pattern forming.")
    assert "step 40: loss 0.61, 6 of 6 rows on the key" in text


def test_a_flat_run_is_said_first_and_a_curve_drawn_again_is_named_once():
    x = np.arange(3, 64)
    y = np.where(x <= 15, 1.0, 0.5 + 0.3 * np.cos(x))
    fig, ax = plt.subplots()
    ax.plot(x, y, label="RoPE")
    ax.plot(x, y, label="again")
    text = describe(fig)
    assert "RoPE, 1 from x = 3 to x = 15, then from 1 at x = 15 to " in text
    assert "again, the same as RoPE" in text


def test_ascii_stand_ins_are_said_as_symbols_and_hyphenated_words_stay():
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [0, 1, 2])
    ax.set(title="one-layer (-inf), 2 x 8 x d_k, n x n = 64 x 64, 1/sqrt(d_k), queries 8..31",
           xlabel="offset m - n", ylabel="-s_r × distance")
    text = describe(fig)
    assert text.startswith("one-layer (−∞), 2 × 8 × d_k, n × n = 64 × 64, 1/√(d_k), queries 8 to "
                           "31: −s_r × distance (y) against offset m − n (x): ")


def test_a_special_token_is_said_as_words():
    """Notebook 08's decoder reads "<s>" first; a screen reader would say "less than s greater
    than", or at its default punctuation a bare "s"."""
    fig, ax = plt.subplots()
    ax.imshow(np.array([[0.9, 0.1], [0.2, 0.8]]))
    ax.set(xticks=[0, 1], xticklabels=["<s>", "I"], yticks=[0, 1], yticklabels=["<s>", "I"])
    assert "largest in each row: start token → start token (0.9), I → I (0.8)" in describe(fig)


def test_a_curve_without_a_label_takes_its_name_from_a_legend_that_draws_it():
    """Notebook 10: three panels, one legend under them made from the first panel's lines; the
    other panels' curves are told by the names the legend gives their colour and style."""
    fig, axes = plt.subplots(1, 2)
    for color, ls, name in (("C0", "-", "scaled"), ("C0", "--", "not scaled")):
        axes[0].plot([0, 1, 2], [3, 2, 1], color=color, ls=ls, label=name)
        axes[1].plot([0, 1, 2], [1, 2, 4], color=color, ls=ls)
    fig.legend(handles=axes[0].lines)
    axes[1].set_title("gradient")
    text = describe(fig)
    assert "gradient: scaled, rising from 1 at x = 0 to 4 at x = 2; not scaled, the same as scaled" \
        in text, text
    fig, ax = plt.subplots()   # two entries that look alike: neither names a curve
    ax.plot([0, 1, 2], [3, 2, 1], color="C0")
    ax.plot([0, 1, 2], [1, 2, 4], color="C1")
    proxies = [plt.Line2D([], [], color="C0"), plt.Line2D([], [], color="C0")]
    fig.legend(handles=proxies, labels=["a", "b"])
    assert describe(fig).startswith("2 curves, y from 1 to 4"), describe(fig)


def test_a_panel_of_a_grid_that_shares_y_takes_the_y_label_of_its_own_row():
    """Notebook 04: sharey=True over a grid of 2 × 2 panels, each row's first labelled by its
    item; a panel of the second row is told with its row's label, not the first row's."""
    fig, axes = plt.subplots(2, 2, sharey=True, squeeze=False)
    for ax in axes.flat:
        ax.plot([0, 1, 2], [0, 1, 2])
    axes[0, 0].set_ylabel("item 0")
    axes[1, 0].set_ylabel("item 1")
    axes[1, 1].set_title("lower right")
    text = describe(fig)
    assert "lower right: item 1 (y) against x:" in text, text


def test_rows_without_a_largest_value_say_the_value_they_share():
    fig, ax = plt.subplots()   # notebook 07: one row changed, the others exactly 0
    ax.imshow(np.array([[0.0, 0.0, 0.0], [0.1, 0.9, 0.3], [0.0, 0.0, 0.0]]))
    assert "; 0 in every cell of the other rows (0, 2)" in describe(fig)
    fig, ax = plt.subplots()
    ax.imshow(np.array([[0.0, 0.0], [0.1, 0.9]]))
    assert "; 0 in every cell of the other row (0)" in describe(fig)


def test_a_notebook_figure_is_shown_as_its_png_its_words_and_an_img_with_them_as_alt(monkeypatch):
    """JupyterLab draws an image/png without an alt and leaves its text/plain unshown, so a
    figure also has a text/html: the same PNG in an <img> whose alt is its words, which
    JupyterLab draws instead (README, "Accessibility"). The figure is drawn once for both; its
    formats come from IPython's own format(), so display()'s display_id, metadata and
    include/exclude work as for any object. A figure describe cannot read keeps matplotlib's
    own text and gets no <img alt> that would say "<Figure size ...>"."""
    import html

    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.pylabtools import select_figure_formats
    from IPython.utils.capture import capture_output

    import course.describe
    from course import figures

    shell = InteractiveShell.instance()   # a shell of its own, cleared at the end
    try:
        # what a notebook's kernel does: every format on (a terminal shows text alone), and
        # the inline backend's PNG
        shell.display_formatter.active_types = shell.display_formatter.format_types
        select_figure_formats(shell, {"png"}, bbox_inches=None)   # as use_course_style asks
        figures.use_course_style()
        fig = weights_figure()
        draws = []
        fig.canvas.mpl_connect("draw_event", draws.append)
        with capture_output() as published:
            data, metadata = shell.display_formatter.format(fig)
        assert not published.outputs   # formats only: display() publishes them, with its ids
        assert sorted(data) == ["image/png", "text/html", "text/plain"] and len(draws) == 1
        assert data["text/plain"] == describe(fig)
        assert data["text/html"] == (f'<img src="data:image/png;base64,{data["image/png"]}" '
                                     f'alt="{html.escape(describe(fig))}">')
        many = weights_figure()   # twelve panels: the alt leaves details out, the full words
        for ax in many.subplots(3, 4):   # below it (a closed <details>) do not
            for a in ax:
                a.imshow(np.random.default_rng(0).random((6, 6)))
        shown = shell.display_formatter.format(many)[0]["text/html"]
        full = describe(many, max_chars=figures.FULL_CHARS)
        assert len(describe(many)) <= course.describe.MAX_CHARS < len(full)
        assert shown.endswith(f'<details class="course-figure-words"><summary>The figure in words, '
                              f'in full</summary><p>{html.escape(full)}</p></details>')
        assert "<details" not in data["text/html"]   # the alt says it all
        data, _ = shell.display_formatter.format(fig, exclude={"text/html"})
        assert sorted(data) == ["image/png", "text/plain"] and len(draws) == 2
        data, _ = shell.display_formatter.format(fig, exclude={"image/png"})
        assert sorted(data) == ["text/html", "text/plain"] and len(draws) == 3
        data, _ = shell.display_formatter.format(fig)   # the PNG kept from it is not reused
        assert len(draws) == 4
        data, _ = shell.display_formatter.format(fig, exclude={"image/png"})
        shell.events.trigger("post_execute")   # the end of the cell: the unused PNG is dropped
        data, _ = shell.display_formatter.format(fig, include={"image/png"})
        assert list(data) == ["image/png"] and len(draws) == 6   # drawn anew, not the kept one

        # a learner's retina figures: drawn at 2x, shown at their size
        select_figure_formats(shell, {"retina"}, bbox_inches=None)
        figures.use_course_style()
        data, metadata = shell.display_formatter.format(fig)
        w, h = metadata["image/png"]["width"], metadata["image/png"]["height"]
        assert data["text/html"].endswith(f' width="{w}" height="{h}">')

        def cannot(fig):
            raise ValueError("not a figure the course draws")
        monkeypatch.setattr(course.describe, "describe", cannot)
        figures.use_course_style()   # what the notebook's first cell does, now with `cannot`
        data, _ = shell.display_formatter.format(fig)
        assert data["text/plain"].startswith("<Figure size") and "text/html" not in data
        assert "image/png" in data
    finally:
        InteractiveShell.clear_instance()


def test_with_fewer_details_rows_and_columns_named_before_are_not_named_again():
    """Notebook 08's layers alternate self- and cross-attention: at fewer details each pair of
    axis names is said once, which leaves room for each query's largest key."""
    rng = np.random.default_rng(0)
    fig, axes = plt.subplots(1, 4)
    for k, ax in enumerate(axes):
        ax.imshow(rng.random((3, 3)))
        ax.set_title(f"layer {k // 2 + 1}: {'self' if k % 2 == 0 else 'cross'}")
        ax.set_ylabel("query: decoder position i")
        ax.set_xlabel("key: decoder position j" if k % 2 == 0 else "key: encoder position j")
    full = describe(fig, max_chars=10_000)
    assert full.count("rows: query: decoder position i") == 4
    short = describe(fig, max_chars=len(full) - 1)
    assert short.count("rows: query: decoder position i") < 4
    assert short.count("largest in each row") >= 3
