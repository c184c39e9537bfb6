"""Tests for notebook 09 (the cost of attention): its plot helpers, live figure and self-checks."""

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_core as ac
from course import checks
from course import nb09_cost_of_attention as nb09
from course.live import interactive

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "09_cost_of_attention.ipynb"


# ---------------------------------------------------------------- counts and measurements

@pytest.mark.parametrize("n, b, per_side", [(64, 8, 8), (48, 32, 2), (300, 7, 43), (16, 64, 1)])
def test_tiling_counts(n, b, per_side):
    c = nb09.tiling_counts(n, b)
    assert c["tiles_per_side"] == per_side
    assert c["tiles"] == per_side ** 2
    assert c["naive_entries_at_once"] == n * n == c["entries_computed"]
    assert c["tiled_entries_at_once"] == min(b, n) ** 2
    assert c["naive_bytes_at_once"] == 8 * n * n
    assert c["tiled_bytes_at_once"] == 8 * min(b, n) ** 2


def test_tiling_counts_with_heads_and_float32():
    c = nb09.tiling_counts(1024, 128, h=8, bytes_per_number=4)
    assert c["naive_entries_at_once"] == 8 * 1024 ** 2
    assert c["naive_bytes_at_once"] == 4 * 8 * 1024 ** 2
    assert c["tiled_bytes_at_once"] == 4 * 8 * 128 ** 2
    assert c["naive_entries_at_once"] == ac.attention_cost(1024, h=8)["score_entries"]


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_tiling_counts_rejects_bad_sizes(bad):
    with pytest.raises(ValueError, match="positive integer"):
        nb09.tiling_counts(bad, 4)
    with pytest.raises(ValueError, match="positive integer"):
        nb09.tiling_counts(16, bad)


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


def test_loglog_slope():
    n = np.array([100, 200, 400])
    assert nb09.loglog_slope(n, 3.0 * n ** 2) == pytest.approx(2.0)
    assert nb09.loglog_slope(n, 5.0 * n) == pytest.approx(1.0)


def test_measure_call_sees_numpy_allocations():
    seconds, peak = nb09.measure_call(lambda: np.ones((512, 512)))  # 2 MiB
    assert seconds >= 0
    assert 2 * 2 ** 20 <= peak < 2.2 * 2 ** 20


def test_attention_sweep_naive_memory_grows_as_n_squared_tiled_does_not():
    ns = [128, 256, 512]
    naive = nb09.attention_sweep(ns, d_k=16)
    tiled = nb09.attention_sweep(ns, d_k=16, block_size=64)
    assert list(naive["n"]) == ns and naive["seconds"].shape == (3,)
    # the naive peak holds at least one n x n float64 matrix and grows as n^2
    assert np.all(naive["peak_bytes"] >= 8 * np.array(ns) ** 2)
    assert nb09.loglog_slope(ns, naive["peak_bytes"]) == pytest.approx(2.0, abs=0.05)
    # the tiled peak stays far below one n x n matrix and grows at most linearly
    assert tiled["peak_bytes"][-1] < 8 * 512 ** 2 / 2
    assert nb09.loglog_slope(ns, tiled["peak_bytes"]) < 1.05


def test_attention_sweep_keeps_fastest_time_and_largest_peak(monkeypatch):
    measured = iter([(3.0, 10), (1.0, 30), (2.0, 20)])  # (seconds, peak) of three calls
    monkeypatch.setattr(nb09, "measure_call", lambda call: next(measured))
    sweep = nb09.attention_sweep([8], d_k=4, repeats=3)
    assert sweep["seconds"].tolist() == [1.0] and sweep["peak_bytes"].tolist() == [30]


def test_attention_sweep_rejects_zero_repeats():
    with pytest.raises(ValueError, match="repeats must be at least 1, got 0"):
        nb09.attention_sweep([8], repeats=0)


# ---------------------------------------------------------------- figures

def test_cost_loglog_draws_every_sweep_and_reference():
    sweeps = {"a": {"n": np.array([1, 2, 4]), "peak_bytes": np.array([1.0, 4.0, 16.0])},
              "b": {"n": np.array([1, 2, 4]), "peak_bytes": np.array([1.0, 2.0, 4.0])}}
    fig = nb09.cost_loglog(sweeps, "peak_bytes", "bytes", "t", refs={2: "a", 1: "b"})
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert len(lines) == 4
    ref2, ref1 = lines[2], lines[3]
    assert np.allclose(ref2.get_ydata(), [1.0, 4.0, 16.0])  # through a's last point, slope 2
    assert np.allclose(ref1.get_ydata(), [1.0, 2.0, 4.0])  # through b's last point, slope 1
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_legend() is not None and ax.get_title() == "t"
    plt.close(fig)


def test_tiling_small_multiples_titles_give_counts():
    fig = nb09.tiling_small_multiples(n=64, block_sizes=(64, 16))
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0].startswith("b = 64: 1 tile\n") and "4,096 entries" in titles[0]
    assert titles[1].startswith("b = 16: 16 tiles\n") and "256 entries" in titles[1]
    plt.close(fig)


def test_live_tiling_update_text_and_artists():
    live = nb09.LiveTiling()
    text = live.update(n=4096, block_size=128)
    assert text.splitlines() == [
        "n = 4096, block_size = 128: 32 x 32 = 1,024 tiles",
        "score entries held at once: naive 16,777,216 (128.0 MiB), tiled 16,384 (128.0 KiB) "
        "-> 1,024x fewer",
        "score entries computed in total: 16,777,216 in both"]
    naive_bar, tiled_bar = live.bars
    assert naive_bar.get_width() == 4096 ** 2 and tiled_bar.get_width() == 128 ** 2
    assert live.frame.get_width() == pytest.approx(128 / 4096)
    assert not live.too_fine.get_visible()
    live.update(n=48, block_size=32)
    assert "2.25x fewer" in live.bar_title.get_text()
    assert live.im.get_array().shape == (48, 48)
    live.update(n=16384, block_size=1)
    assert live.too_fine.get_visible()


def test_live_tiling_png_changes_with_the_sliders():
    live = nb09.LiveTiling()
    _, first = live.render(n=64, block_size=8)
    _, second = live.render(n=64, block_size=32)
    assert first[:8] == b"\x89PNG\r\n\x1a\n" and first != second
    for n, b in [(64, 8), (256, 16), (4096, 128), (48, 32), (16384, 1)]:  # speed: dev.py bench
        text, png = live.render(n=n, block_size=b)
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and f"n = {n}, block_size = {b}" in text


def test_live_tiling_in_a_widget():
    widgets = pytest.importorskip("ipywidgets")
    live = nb09.LiveTiling()
    box = interactive(live, n=widgets.SelectionSlider(options=[16, 64, 256], value=64),
                         block_size=widgets.SelectionSlider(options=[4, 8, 16], value=8))
    box.controls["n"].value = 256
    assert "n = 256, block_size = 8: 32 x 32 = 1,024 tiles" in box.children[1].value


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
}


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
    assert "3x the queries times 3x the keys is 9x the pairs." in v.message
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


# ---------------------------------------------------------------- the notebook itself

def test_notebook_was_executed_and_keeps_its_compared_numbers():
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    out = "".join("".join(o.get("text", "")) for c in code for o in c.get("outputs", []))
    assert "growth factor per doubling of n: [4 4 4 4 4 4]" in out
    assert "slope of peak memory against n: 2.00" in out
    assert out.count("max |tiled - naive| < 1e-12") == 6
    assert ">=" not in out
