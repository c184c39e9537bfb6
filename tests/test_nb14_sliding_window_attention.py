"""Tests for notebook 14 (sliding windows and attention sinks): the figures, live figure and
self-checks of course/nb14_sliding_window_attention.py, and the committed notebook's stored state."""

import json
import warnings
from pathlib import Path

import ipywidgets as widgets
import numpy as np
import pytest

import attention_core as ac
from course import checks, figures, i18n
from course import nb14_sliding_window_attention as nb14
from course.live import with_controls
from live_frames import blit_mismatches
from stored_notebook import assert_checks_unanswered, stored_text
from figure_texts import texts_not_in_japanese

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "14_sliding_window_attention.ipynb"


@pytest.fixture(scope="module")
def stack():
    rng = np.random.default_rng(14)
    layers = [ac.init_encoder_layer(8, 2, 16, rng) for _ in range(3)]
    return layers, rng.normal(size=(12, 8))


# --- the measurement the live figure repeats -------------------------------------------------

@pytest.mark.parametrize("window", [1, 2, 3, 5, 12])
def test_a_change_reaches_L_times_window_minus_one(stack, window):
    layers, X = stack
    changed = nb14.changed_by_layer(layers, X, window)
    assert changed.shape == (3, 12)
    for L, row in enumerate(changed, 1):
        reach = min(L * (window - 1), 11)
        assert row[:reach + 1].all() and not row[reach + 1:].any(), (window, L, row)


# --- figures and the live figure ----------------------------------------------------------------

def test_plot_windows_draws_masks_and_reach(stack):
    layers, X = stack
    ws = (2, 4, 12)
    fig = nb14.plot_windows({w: ac.sliding_window_mask(12, w) for w in ws},
                            {w: nb14.changed_by_layer(layers, X, w) for w in ws})
    assert len(fig.axes) == 6
    assert np.array_equal(fig.axes[0].images[0].get_array(), np.isfinite(ac.sliding_window_mask(12, 2)))
    assert fig.axes[3].get_title() == "reach: 1, 2, 3"  # w = 2: one position per layer
    assert fig.axes[2].get_title() == "window 12 = causal"
    assert not figures.layout_problems(fig), figures.layout_problems(fig)


def test_live_window_update_text_and_artists(stack):
    layers, X = stack
    live = nb14.LiveWindow(layers, X)
    text = live.update(window=4).splitlines()
    assert text[0] == "window 4: query p sees keys p - 3 .. p (4 keys, itself included)"
    assert text[1] == "a change to token 0 reaches, after layers 1..3: positions 0..3, 0..6, 0..9"
    assert text[2] == "L (w - 1) = 9 for the last layer (capped at n - 1 = 11)"
    assert np.array_equal(live.mask_im.get_array(), np.isfinite(ac.sliding_window_mask(12, 4)))
    assert np.array_equal(live.reach_im.get_array(), nb14.changed_by_layer(layers, X, 4))
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    with pytest.raises(ValueError, match="window must be in 1..12"):
        live.update(window=0)


def test_live_window_blitted_frame_matches_a_full_draw(stack):
    live = nb14.LiveWindow(*stack)
    assert not blit_mismatches(live, [{"window": 1}, {"window": 12}])


def test_interactive_wires_the_window_slider(stack):
    slider = widgets.IntSlider(value=3, min=1, max=12, description="window")
    box = with_controls(nb14.LiveWindow(*stack), window=slider)
    slider.value = 5
    assert "window 5: query p sees keys p - 4 .. p" in box.children[1].value


def test_cache_cost_and_sink_figures_fit():
    steps = np.arange(1, 65)
    memory = nb14.plot_cache_memory(steps, {"full": steps, "rolling": np.minimum(steps, 8)})
    ns = np.array([1024, 2048, 4096])
    cost = nb14.plot_band_cost(ns, {"causal": ns * (ns + 1) / 2, "band": ns * 128.0,
                                    "tiles": ns / 64.0}, 128)
    sinks = nb14.plot_sinks((2, 4, 8), {0: [7.0, 0.01, 0.003], 4: [5.0, 0.002, 0.002]}, 0.0016,
                            np.full(32, 1 / 32))
    assert np.array_equal(memory.axes[0].lines[1].get_ydata(), np.minimum(steps, 8))
    assert cost.axes[0].get_yscale() == "log" and len(cost.axes[0].lines) == 3
    assert [t.get_text() for t in sinks.axes[0].get_legend().get_texts()] == [
        "no sinks", "4 sinks kept", "full causal"]
    one = nb14.plot_sinks((2, 4), {0: [7.0, 0.01], 1: [6.0, 0.005]}, 0.0016, np.full(32, 1 / 32))
    assert one.axes[0].get_legend().get_texts()[1].get_text() == "1 sink kept"
    for fig in (memory, cost, sinks):
        assert not figures.layout_problems(fig), figures.layout_problems(fig)


def test_figures_and_checks_in_the_japanese_edition(stack):
    layers, X = stack
    steps = np.arange(1, 65)
    ns = np.array([1024, 2048, 4096])
    with i18n.language_as("ja"), warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph (tofu) warns at draw time
        ws = (2, 12)
        figs = [nb14.plot_windows({w: ac.sliding_window_mask(12, w) for w in ws},
                                  {w: nb14.changed_by_layer(layers, X, w) for w in ws}),
                nb14.plot_cache_memory(steps, {"full": steps, "rolling": np.minimum(steps, 8)}),
                nb14.plot_band_cost(ns, {"causal": ns ** 2 / 2, "band": ns * 128.0}, 128),
                nb14.plot_sinks((2, 4), {0: [7.0, 0.01], 1: [6.0, 0.005]}, 0.002, np.ones(8) / 8)]
        live = nb14.LiveWindow(layers, X)
        summary = live.update(window=4).splitlines()
        figs.append(live.fig)
        for fig in figs:
            assert not figures.layout_problems(fig), figures.layout_problems(fig)
            assert not texts_not_in_japanese(fig), texts_not_in_japanese(fig)
        wide = nb14.check_window_mask(ac.sliding_window_mask(6, 4), n=6, window=3)
        evicted = nb14.check_cache_positions(list(range(23, 31)), t=30, window=8, sinks=4)
    assert "ウィンドウ" in summary[0]
    assert wide.mistake == "window_off_by_one" and wide.message.startswith("不正解")
    assert evicted.mistake == "evict_sinks" and evicted.message.startswith("不正解")


# --- self-checks ----------------------------------------------------------------------------------

def test_check_window_mask_recognises_each_mistake():
    i, j = np.arange(6)[:, None], np.arange(6)[None, :]
    variants = {
        None: ac.sliding_window_mask(6, 3),
        "window_off_by_one": ac.sliding_window_mask(6, 4),
        "window_off_by_one_short": ac.sliding_window_mask(6, 2),
        "window_not_causal": np.where(np.abs(i - j) < 3, 0.0, -np.inf),
        "window_future_visible": np.where(j > i - 3, 0.0, -np.inf),
    }
    for key, answer in variants.items():
        v = nb14.check_window_mask(answer, n=6, window=3)
        assert v.mistake == key and v.status == (checks.CORRECT if key is None else checks.MISTAKE), key
        if key:
            assert checks.MISTAKES[key].label in v.message
    assert nb14.check_window_mask(ac.causal_mask(6), 6, 3).status == checks.WRONG
    visible = np.isfinite(ac.sliding_window_mask(7, 4))
    for key, answer in {"mask_multiplicative": visible.astype(float),
                        "mask_boolean_blocked": ~visible,
                        "mask_large_negative": np.where(visible, 0.0, -1e9)}.items():
        v = nb14.check_window_mask(answer, n=7, window=4)  # notebook 04's mistakes, named again
        assert v.mistake == key and v.status == checks.MISTAKE, (key, v.message)
    assert nb14.check_window_mask(np.where(visible, 0.0, -1e9), 7, 4).message.startswith(
        "Right keys, another convention")
    assert nb14.check_window_mask(..., 6, 3).status == checks.UNANSWERED


@pytest.mark.parametrize("answer, key, status", [
    (9, None, checks.CORRECT), (np.int64(9), None, checks.CORRECT),
    (12, "reach_off_by_one", checks.MISTAKE), (3, "reach_one_layer", checks.MISTAKE),
    (10, None, checks.WRONG), (5, None, checks.WRONG), ("9", None, checks.WRONG),
    (9.0, None, checks.CORRECT), (np.float64(9.0), None, checks.CORRECT), (9.5, None, checks.WRONG),
    (True, None, checks.WRONG), (..., None, checks.UNANSWERED)])
def test_check_reach(answer, key, status):
    v = nb14.check_reach(answer, layers=3, window=4)
    assert v.mistake == key and v.status == status
    if status == checks.WRONG and type(answer) is int:
        assert ("too far" if answer > 9 else "not far enough") in v.message


@pytest.mark.parametrize("answer, key, status", [
    ([0, 1, 2, 3, *range(23, 31)], None, checks.CORRECT),
    ((30, 29, 28, 27, 26, 25, 24, 23, 3, 2, 1, 0), None, checks.CORRECT),
    (list(range(23, 31)), "evict_sinks", checks.MISTAKE),
    (list(range(19, 31)), "evict_sinks", checks.MISTAKE),
    ([0, 1, 2, 3, *range(22, 31)], "cache_window_off_by_one", checks.MISTAKE),
    ([0, 1, 2, 3, *range(24, 31)], "cache_window_off_by_one", checks.MISTAKE),
    ([0, 1, 2, 3], None, checks.WRONG), ([0.5, 1], None, checks.WRONG),
    ("0, 1, 2", None, checks.WRONG), (5, None, checks.WRONG), (..., None, checks.UNANSWERED)])
def test_check_cache_positions(answer, key, status):
    v = nb14.check_cache_positions(answer, t=30, window=8, sinks=4)
    assert v.mistake == key and v.status == status, v.message


def test_check_reach_for_mistral_names_the_papers_window():
    assert nb14.check_reach(131040, layers=32, window=4096).status == checks.CORRECT
    v = nb14.check_reach(131072, layers=32, window=4096)
    assert v.mistake == "reach_off_by_one" and "Mistral" in v.message
    assert nb14.check_reach(4095, layers=32, window=4096).mistake == "reach_one_layer"


@pytest.mark.parametrize("answer, part", [
    ([1, 2, 3, 4, *range(23, 31)], "are not the sinks"),
    ([0, 1, 2, 3, *range(24, 32)], "does not end at the position just written")])
def test_check_cache_positions_says_which_part_of_a_right_sized_list_is_off(answer, part):
    v = nb14.check_cache_positions(answer, t=30, window=8, sinks=4)
    assert v.status == checks.WRONG and part in v.message and "12 positions" not in v.message


def test_every_mistake_of_notebook_14_is_registered():
    ours = {k for k, m in checks.MISTAKES.items() if m.notebook == "14"}
    assert ours == {"window_off_by_one", "window_off_by_one_short", "window_not_causal",
                    "window_future_visible", "reach_off_by_one", "reach_one_layer", "evict_sinks",
                    "cache_window_off_by_one"}
    assert {k for k in checks.QUESTIONS if k.startswith("14.")} == {
        "14.window_mask", "14.receptive_field", "14.cache_positions"}


# --- the committed notebook -----------------------------------------------------------------------

def test_notebook_stores_its_checks_and_measurements():
    out = stored_text(NOTEBOOK)
    assert "the core agrees: True" in out and "w >= n is the causal mask: True" in out
    assert "w = 3: furthest changed position after layers 1..4: [2, 4, 6, 8]; L (w - 1) = [2, 4, 6, 8]" in out
    assert "w = 5: furthest changed position after layers 1..4: [4, 8, 12, 16]" in out
    assert "cache bytes at t = 8, 32, 63: [512, 512, 512]" in out
    rolling = float(out.split("rolling cache vs window mask: max difference ")[1].split()[0])
    banded = float(out.split("banded tiles vs the window mask: max difference ")[1].split()[0])
    assert rolling < 1e-12 and banded < 1e-12
    assert " 16384      134,225,920   2,089,024   64.3      16,384    255" in out


def test_notebook_counts_match_the_formulas():
    """The band row of the table: sum_i min(i + 1, w) = n w - w (w - 1) / 2, and the tiles."""
    out = stored_text(NOTEBOOK)
    w = b = 128
    for n in (1024, 2048, 4096, 8192, 16384):
        band = sum(min(i + 1, w) for i in range(n))
        assert f"{n * (n + 1) // 2:16,d} {band:11,d}" in out
        assert f"{(n // b) ** 2:11,d} {2 * n // b - 1:6d}" in out


def test_notebook_sink_numbers_are_the_ones_its_text_quotes():
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    prose = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    out = stored_text(NOTEBOOK)
    assert "full causal: held-out loss 0.0016; weight on the needed key i - 3: 0.621" in out
    assert "s = 0 sinks:   7.2564   6.8847   0.0091" in out
    assert "8 rows: 4 recent + 4 sinks: loss 0.0023; 8 recent, no sinks: loss 0.0026" in out
    assert "5 rows: 4 recent + 1 sinks: loss 0.0059; 5 recent, no sinks: loss 0.0073" in out
    assert "6 rows: 4 recent + 2 sinks: loss 0.0037; 6 recent, no sinks: loss 0.0056" in out
    assert "the most likely token is the right one for 99.66% of the answers" in out
    assert "per key, from the queries that see it: 0.011 to 0.031" in out
    # the paired differences, sinks minus none: within two standard errors for s = 1 and 4
    assert "difference 0.0014, two standard errors 0.0022; sinks better on 53%" in out
    assert "difference 0.0020, two standard errors 0.0018; sinks better on 54%" in out
    assert "difference 0.0003, two standard errors 0.0005; sinks better on 60%" in out
    for quoted in ("0.0091 against 0.0016", "0.0059 against 0.0073", "0.0037 against 0.0056",
                   "0.0023 against 0.0026", "0.62 of their weight", "99.7 %", "0.011 to 0.031",
                   "53 to 60 %"):
        assert quoted in prose, quoted


def test_notebook_checks_are_unanswered_and_nothing_on_stderr():
    assert_checks_unanswered(NOTEBOOK, 3)
