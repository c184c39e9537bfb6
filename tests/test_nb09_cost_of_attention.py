"""Tests for notebook 09 (the cost of attention): its figures, live figure and self-checks.

The measurement, the slope and the tile counts are taught (and asserted) in the notebook itself.
"""

import math
import re
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_core as ac
from course import checks, figures, i18n
from course import nb09_cost_of_attention as nb09
from course.live import with_controls


def counts(n, block_size):
    """What the notebook's tiling_counts gives, written out independently (float64, one head)."""
    b = min(block_size, n)
    k = math.ceil(n / b)
    return {"tiles_per_side": k, "tiles": k * k, "naive_entries_at_once": n * n,
            "tiled_entries_at_once": b * b, "naive_bytes_at_once": 8 * n * n,
            "tiled_bytes_at_once": 8 * b * b, "entries_computed": n * n}


# ---------------------------------------------------------------- drawing helpers

def test_tile_grid_is_a_checkerboard_of_tiles():
    g = nb09.tile_grid(6, 2)
    assert g.shape == (6, 6)
    assert g[0, 0] == g[1, 1] == g[0, 1] == 0  # same tile
    assert g[0, 2] == 1 and g[2, 0] == 1 and g[2, 2] == 0
    big = nb09.tile_grid(4096, 1024, max_pixels=512)  # downsampled picture, 4 x 4 tiles
    assert big.shape == (512, 512)
    assert big[0, 0] == 0 and big[0, 128] == 1 and big[128, 128] == 0


def test_format_bytes():
    assert nb09.format_bytes(512) == "512 B"
    assert nb09.format_bytes(8 * 1024) == "8.0 KiB"
    assert nb09.format_bytes(128 * 2 ** 20) == "128.0 MiB"
    assert nb09.format_bytes(2 * 2 ** 30) == "2.0 GiB"


# ---------------------------------------------------------------- figures

def test_cost_loglog_draws_every_sweep_and_reference():
    sweeps = {"a": {"n": np.array([1, 2, 4]), "peak_bytes": np.array([1.0, 4.0, 16.0])},
              "b": {"n": np.array([1, 2, 4]), "peak_bytes": np.array([1.0, 2.0, 4.0])}}
    fig = nb09.cost_loglog(sweeps, "peak_bytes", "bytes", "t", refs={2: "a", 1: "b"})
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert len(lines) == 4
    ref2, ref1 = lines[2], lines[3]
    assert np.allclose(ref2.get_ydata(), [1.0, 4.0, 16.0])  # through a's last point, slope 2
    assert np.allclose(ref1.get_ydata(), [1.0, 2.0, 4.0])  # through b's last point, slope 1
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_legend() is not None and ax.get_title() == "t"
    plt.close(fig)


def test_tiling_small_multiples_draws_the_counts_it_is_given():
    fig = nb09.tiling_small_multiples(64, {64: counts(64, 64), 16: counts(64, 16)})
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0] == "b = 64: 1 tile\nheld at once: 4,096 entries"
    assert titles[1] == "b = 16: 16 tiles\nheld at once: 256 entries"
    frame = [p for p in fig.axes[1].patches if p.get_edgecolor()[:3] == (1.0, 0.0, 0.0)]
    assert len(frame) == 1 and frame[0].get_width() == 16  # the first 16 x 16 tile
    plt.close(fig)


def test_live_tiling_shows_the_counts_of_the_function_it_is_given():
    live = nb09.LiveTiling(counts)
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    text = live.update(n=4096, block_size=128)
    naive_bar, tiled_bar = live.bars
    assert naive_bar.get_width() == 4096 ** 2 and tiled_bar.get_width() == 128 ** 2
    assert live.frame.get_width() == pytest.approx(128 / 4096)  # b / n: the grid is in units of n
    assert not live.too_fine.get_visible()
    assert "32 x 32 = 1,024 tiles" in live.grid_title.get_text() and "1,024x fewer" in text
    live.update(n=48, block_size=32)  # edge tiles
    assert "2.25x fewer" in live.bar_title.get_text()
    assert live.im.get_array().shape == (48, 48)
    live.update(n=16384, block_size=1)
    assert live.too_fine.get_visible()
    # the numbers come from the function passed in, not from a copy of it
    fake = dict(counts(64, 8), tiles_per_side=3, tiles=9, tiled_entries_at_once=7)
    live = nb09.LiveTiling(lambda n, block_size: fake)
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    text = live.update(n=64, block_size=8)
    assert "3 x 3 = 9 tiles" in text and live.bars[1].get_width() == 7


def test_live_tiling_png_changes_with_the_sliders():
    live = nb09.LiveTiling(counts)
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    _, first = live.render(n=64, block_size=8)
    _, second = live.render(n=64, block_size=32)
    assert first[:8] == b"\x89PNG\r\n\x1a\n" and first != second
    for n, b in [(64, 8), (256, 16), (4096, 128), (48, 32), (16384, 1)]:  # speed: dev.py bench
        text, png = live.render(n=n, block_size=b)
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and f"n = {n}, block_size = {b}" in text


def test_live_tiling_in_a_widget():
    widgets = pytest.importorskip("ipywidgets")
    live = nb09.LiveTiling(counts)
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    n = widgets.SelectionSlider(options=[16, 64, 256], value=64)
    box = with_controls(live, n=n, block_size=widgets.SelectionSlider(options=[4, 8, 16], value=8))
    n.value = 256
    assert "n = 256, block_size = 8: 32 x 32 = 1,024 tiles" in box.children[1].value


def _english_words(text: str) -> list[str]:
    """Runs of two or more English words (float64, KiB and the like aside): untranslated text."""
    return re.findall(r"[A-Za-z]{2,}(?:[ ,'-]+[A-Za-z]{2,})+", text)


def test_figures_live_text_and_verdicts_in_the_japanese_edition():
    """notebooks/ja/09: the same figures with Japanese texts, fitting their layouts, no tofu."""
    with i18n.language_as("ja"), warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph (tofu) warns at draw time
        fig = nb09.tiling_small_multiples(64, {b: counts(64, b) for b in (64, 32, 16, 8)})
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        assert fig._suptitle.get_text() == ("スコアの格子 n x n = 64 x 64: "
                                            "一度に保持するのは赤いタイルだけ")
        titles = [ax.get_title() for ax in fig.axes]
        assert titles[0] == "b = 64: タイル 1 枚\n一度に保持: 4,096 個の成分"
        assert titles[3] == "b = 8: タイル 64 枚\n一度に保持: 64 個の成分"
        assert (fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()) == ("キーの位置 j", "クエリの位置 i")
        plt.close(fig)

        sweeps = {"a": {"n": np.array([1, 2, 4]), "peak_bytes": np.array([1.0, 4.0, 16.0])}}
        fig = nb09.cost_loglog(sweeps, "peak_bytes", "バイト", "t", refs={2: "a", 1: "a"})
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        ax = fig.axes[0]
        assert ax.get_xlabel() == "系列長 n (対数目盛)"
        assert [t.get_text() for t in ax.get_legend().get_texts()][1:] == ["基準線 ∝ n²",
                                                                           "基準線 ∝ n"]
        plt.close(fig)

        live = nb09.LiveTiling(counts)
        for n, b in [(64, 8), (4096, 128), (48, 32), (16384, 1), (16384, 256)]:
            text = live.update(n=n, block_size=b)
            assert not figures.layout_problems(live.fig), (n, b, figures.layout_problems(live.fig))
        text = live.update(n=4096, block_size=128)
        assert text.startswith("n = 4096, block_size = 128: 32 x 32 = 1,024 枚のタイル\n")
        assert "-> 1,024 分の 1" in text and "どちらも 16,777,216" in text
        assert live.grid_title.get_text() == "n = 4096, b = 128\n32 x 32 = 1,024 枚のタイル"
        assert live.bar_title.get_text().endswith("タイル化: 1,024 分の 1")
        assert live.labels[0].get_text() == "素朴: n x n 全体: 16,777,216 (128.0 MiB)"
        assert live.ax_bar.get_xlabel() == "一度に保持するスコアの成分数 (対数目盛)"
        for t in (text, live.grid_title.get_text(), live.bar_title.get_text(),
                  live.too_fine.get_text(), *(label.get_text() for label in live.labels)):
            assert not _english_words(t), t
        assert live.png()[:8] == b"\x89PNG\r\n\x1a\n"

        v = nb09.check_heads_cost_ratio(1, n=3000, d_model=768, h_from=12, h_to=24)
        assert v.ok and v.message == "正解です: h = 12 から h = 24 にしたときの積和演算の回数の倍率 = 1。"
        v = nb09.check_score_entries(2000 * 2000, n=2000, h=12, d_k=64)
        assert v.mistake == "cost_forgot_heads"
        assert v.message.startswith("不正解: 4,000,000 は「"), v.message
        v = nb09.check_score_entries(12 * 2000 * 64, n=2000, h=12, d_k=64)  # {per_head} filled in
        assert v.mistake == "cost_size_of_Q" and "(ヘッドごと)" in v.message, v.message
        assert "正解です: スコアの成分数 = 48,000,000。" == nb09.check_score_entries(
            48_000_000, n=2000, h=12).message
        assert "ここまでの和 l'" in nb09.check_online_sum(..., 3.0, 1.2, [4.0, 2.0, -1.0]).message
        for v in (nb09.check_online_sum(1.58, 3.0, 1.2, [4.0, 2.0, -1.0]),  # close
                  nb09.check_growth_ratio(5), nb09.check_score_mib("big", n=4096),
                  nb09.check_score_mib(100, n=4096)):
            assert v.status == checks.WRONG and not _english_words(v.message), v.message
    assert nb09.check_growth_ratio(5).message == (
        "Not quite: you gave 5. Think of the (n, n) grid of pairs.")


# ---------------------------------------------------------------- self-checks

R, L, S_BLOCK = 3.0, 1.2, np.array([4.0, 2.0, -1.0])  # question 4: r' = 4
NEW_TERMS = np.exp(S_BLOCK - 4.0).sum()

# every named mistake of notebook 09, fed in as the answer it produces
MISTAKEN_ANSWERS = {
    "cost_forgot_heads": lambda: nb09.check_score_entries(1024 ** 2, n=1024, h=8, d_k=64),
    "cost_size_of_Q": lambda: nb09.check_score_entries(8 * 1024 * 64, n=1024, h=8, d_k=64),
    "cost_size_of_one_head_Q": lambda: nb09.check_score_entries(1024 * 64, n=1024, h=8, d_k=64),
    "cost_linear_in_n_per_head": lambda: nb09.check_score_entries(8 * 2048, n=1024, h=8, d_k=64),
    "cost_linear_in_n": lambda: nb09.check_score_entries(2048, n=1024, h=8, d_k=64),
    "cost_float32_bytes": lambda: nb09.check_score_mib(64, n=4096),
    "cost_megabytes": lambda: nb09.check_score_mib(134.2, n=4096),
    "cost_float32_bytes_and_megabytes": lambda: nb09.check_score_mib(67.1, n=4096),
    "cost_bytes_not_mib": lambda: nb09.check_score_mib(134217728, n=4096),
    "cost_entries_not_bytes": lambda: nb09.check_score_mib(16, n=4096),
    "cost_gib_not_mib": lambda: nb09.check_score_mib(0.125, n=4096),
    "cost_linear_growth": lambda: nb09.check_growth_ratio(2),
    "cost_cubic_growth": lambda: nb09.check_growth_ratio(8),
    "online_no_rescale": lambda: nb09.check_online_sum(L + NEW_TERMS, R, L, S_BLOCK),
    "online_rescale_inverted": lambda: nb09.check_online_sum(L * np.exp(4.0 - R) + NEW_TERMS,
                                                             R, L, S_BLOCK),
    "online_old_max_kept": lambda: nb09.check_online_sum(L + np.exp(S_BLOCK - R).sum(),
                                                         R, L, S_BLOCK),
    "cost_heads_main_cost": lambda: nb09.check_heads_cost_ratio(2, n=3000, d_model=768,
                                                                h_from=12, h_to=24),
    "cost_heads_one_head": lambda: nb09.check_heads_cost_ratio(0.5, n=3000, d_model=768,
                                                               h_from=12, h_to=24),
}


def test_heads_cost_ratio_check():
    args = dict(n=3000, d_model=768, h_from=12, h_to=24)  # the notebook's question 5
    assert nb09.check_heads_cost_ratio(..., **args).status == checks.UNANSWERED
    v = nb09.check_heads_cost_ratio(1, **args)
    assert v.ok and v.message == ("Correct: the factor by which the multiply-adds change from "
                                  "h = 12 to h = 24 is 1."), v.message
    assert nb09.check_heads_cost_ratio(1.0, **args).ok
    v = nb09.check_heads_cost_ratio(2, **args)
    assert "see what is left of h" in v.message and "doubling n multiplies" in v.message
    assert "the same for" not in v.message  # issue 21: the diagnosis does not give the answer
    assert "12/24 of the work" in nb09.check_heads_cost_ratio(0.5, **args).message
    assert nb09.check_heads_cost_ratio(4, **args).status == checks.WRONG
    # the counts behind it: 2 n^2 d_model for every h that divides d_model
    for h in (1, 2, 3, 4, 6, 8, 12, 24):
        assert ac.attention_cost(3000, d_k=768 // h, h=h)["multiply_adds"] == 2 * 3000 ** 2 * 768
    with pytest.raises(ValueError, match="must divide d_model"):
        nb09.check_heads_cost_ratio(1, n=10, d_model=768, h_from=12, h_to=7)


@pytest.mark.parametrize("key", MISTAKEN_ANSWERS)
def test_every_named_mistake_is_recognised(key):
    v = MISTAKEN_ANSWERS[key]()
    assert v.status == checks.MISTAKE and v.mistake == key, v.message
    assert f"is what {checks.MISTAKES[key].label.split('{')[0]}" in v.message


def test_every_registered_mistake_of_09_is_tested():
    registered = {k for k, m in checks.MISTAKES.items() if m.notebook == "09"}
    assert registered == set(MISTAKEN_ANSWERS)


def test_mistake_placeholders_are_filled_from_the_case():
    v = nb09.check_score_entries(2000 * 2000, n=2000, h=12, d_k=64)
    assert v.message.endswith("Every head has its own n x n score matrix, so multiply by h = 12.")
    v = nb09.check_score_entries(2 * 2000, n=2000, h=12, d_k=64)
    assert v.message.endswith("n*n pairs per head, times h = 12 heads.")
    v = nb09.check_score_entries(12 * 2000 * 64, n=2000, h=12, d_k=64)
    assert "(query, key) pair per head: n*n, whatever d_k is." in v.message
    v = nb09.check_growth_ratio(3, factor=3)
    assert v.mistake == "cost_linear_growth" and "linear growth (3x)" in v.message
    assert "3x the queries AND 3x the keys, and every query is paired with every key." in v.message
    assert "9" not in v.message  # issue 21: not the expected 9x
    assert "cubic growth (27x)" in nb09.check_growth_ratio(27, factor=3).message


def test_with_one_head_the_size_of_Q_is_one_mistake_with_one_message():
    v = nb09.check_score_entries(100 * 16, n=100, h=1, d_k=16)  # h*n*d_k = n*d_k
    assert v.mistake == "cost_size_of_Q" and "pair: n*n, whatever" in v.message
    v = nb09.check_score_entries(200, n=100, h=1, d_k=16)  # 2hn = 2n
    assert v.mistake == "cost_linear_in_n_per_head"


def test_checks_accept_right_answers_and_refuse_others():
    assert nb09.check_score_entries(..., n=1024, h=8).status == checks.UNANSWERED
    assert nb09.check_score_entries(8 * 1024 ** 2, n=1024, h=8).ok
    assert nb09.check_score_entries(12345, n=1024, h=8).status == checks.WRONG
    assert nb09.check_score_entries("many", n=1024, h=8).status == checks.WRONG
    assert nb09.check_score_mib(..., n=4096).status == checks.UNANSWERED
    assert nb09.check_score_mib(128, n=4096).ok and nb09.check_score_mib(128.0, n=4096).ok
    assert nb09.check_score_mib(134.217728, n=4096).mistake == "cost_megabytes"
    assert nb09.check_score_mib(100, n=4096).status == checks.WRONG
    assert nb09.check_growth_ratio(...).status == checks.UNANSWERED
    assert nb09.check_growth_ratio(4).ok and nb09.check_growth_ratio(9, factor=3).ok
    assert nb09.check_growth_ratio(5).status == checks.WRONG
    right = L * np.exp(R - 4.0) + NEW_TERMS
    assert nb09.check_online_sum(..., R, L, S_BLOCK).status == checks.UNANSWERED
    assert nb09.check_online_sum(right, R, L, S_BLOCK).ok
    assert nb09.check_online_sum(round(right, 4), R, L, S_BLOCK).ok
    assert nb09.check_online_sum(0.5, R, L, S_BLOCK).status == checks.WRONG


def test_a_close_answer_is_asked_for_more_digits():
    v = nb09.check_online_sum(1.58, r=3.0, l=1.2, s_block=[4.0, 2.0, -1.0])  # right: 1.5899
    assert v.status == checks.WRONG and "within 1%" in v.message and "check the arithmetic, or give more digits" in v.message
    assert "Update the maximum" not in v.message
    v = nb09.check_score_entries(48_100_000, n=2000, h=12)  # a count must be exact: no "close"
    assert v.status == checks.WRONG and "within 1%" not in v.message


def test_explanation_starting_with_a_symbol_keeps_its_case():
    v = nb09.check_score_entries(12 * 2000 * 64, n=2000, h=12, d_k=64)
    assert v.mistake == "cost_size_of_Q" and ". n*d_k counts" in v.message, v.message
    assert ". Every head" in nb09.check_score_entries(2000 * 2000, n=2000, h=12).message


def test_online_sum_gives_the_softmax_normaliser():
    # the check's right answer is the sum the full softmax divides by (against the new max)
    s = np.array([1.0, 3.0, 0.5, 4.0, 2.0, -1.0])
    l1 = np.exp(s[:3] - 3.0).sum()
    v = nb09.check_online_sum(np.exp(s - 4.0).sum(), 3.0, l1, s[3:])
    assert v.ok
