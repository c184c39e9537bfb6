"""Tests for notebook 13 (grouped-query and multi-query attention): the published shapes, figures,
live figure and self-checks of course/nb13_grouped_query_attention.py, and the committed
notebook's stored state."""

import warnings
from pathlib import Path

import ipywidgets as widgets
import numpy as np
import pytest

import attention_core as ac
from course import checks, figures, i18n
from course import nb13_grouped_query_attention as nb13
from course.live import with_controls
from live_frames import blit_mismatches
from stored_notebook import assert_checks_unanswered, stored_text
from figure_texts import texts_not_in_japanese

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "13_grouped_query_attention.ipynb"


# --- the published shapes ------------------------------------------------------------------

def test_published_shapes_are_consistent():
    names = [m.name for m in nb13.MODELS]
    assert names == ["Llama 2 7B", "Llama 2 70B", "Llama 3 8B", "Llama 3 70B", "Mistral 7B",
                     "Falcon 7B", "PaLM 540B"]
    for m in nb13.MODELS:
        assert m.heads % m.kv_heads == 0 and m.source
    shapes = {m.name: (m.layers, m.heads, m.kv_heads, m.head_width) for m in nb13.MODELS}
    assert shapes["Llama 2 7B"] == (32, 32, 32, 128)  # hidden_size 4096 / 32 heads
    assert shapes["Llama 2 70B"] == shapes["Llama 3 70B"] == (80, 64, 8, 128)  # 8192 / 64
    assert shapes["Llama 3 8B"] == shapes["Mistral 7B"] == (32, 32, 8, 128)
    assert shapes["Falcon 7B"] == (32, 71, 1, 64) and 71 * 64 == 4544  # its hidden_size
    assert shapes["PaLM 540B"] == (118, 48, 1, 256)  # head size 256, not d_model 18432 / 48
    assert [m.name for m in nb13.LIVE_MODELS] == names[:5]  # h a power of two


def test_cache_bytes_of_a_published_model():
    llama2_7b = nb13.MODELS[0]
    assert nb13._cache_bytes(llama2_7b, 32, 1) == 524288  # notebook 11's 0.5 MiB per token
    assert nb13._cache_bytes(nb13.MODELS[2], 8, 8192) == 2 ** 30  # Llama 3 8B: 1 GiB at 8,192


# --- figures ----------------------------------------------------------------------------

def test_plot_grouping_connects_each_query_head_to_its_group():
    fig = nb13.plot_grouping(h=8, kv_heads=(8, 2, 1))
    for ax, h_kv in zip(fig.axes, (8, 2, 1), strict=True):
        ends = sorted({line.get_xdata()[1] for line in ax.lines})
        g = 8 // h_kv
        assert ends == [k * g + (g - 1) / 2 for k in range(h_kv)]  # one end per K/V head
        assert len(ax.lines) == 8
    assert not figures.layout_problems(fig), figures.layout_problems(fig)


def test_plot_cache_memory_draws_published_and_mha():
    fig = nb13.plot_cache_memory()
    bars, lines = fig.axes
    widths = [p.get_width() for p in bars.patches]
    n = len(nb13.MODELS)
    assert widths[:n][0] == 512 and widths[n:][1] == 320  # MHA of Llama 2 7B; Llama 2 70B's GQA
    assert len(lines.lines) == 2 * n  # a line and a context dot per model
    assert not figures.layout_problems(fig), figures.layout_problems(fig)


def test_plot_accuracy_vs_cache():
    fig = nb13.plot_accuracy_vs_cache({4: 512, 2: 256, 1: 128},
                                      {"a": {4: 1.0, 2: 0.9, 1: 0.5}, "b": {2: 0.8, 1: 0.3}})
    ax = fig.axes[0]
    assert list(ax.lines[0].get_xdata()) == [128, 256, 512]
    assert list(ax.lines[0].get_ydata()) == [0.5, 0.9, 1.0]
    assert not figures.layout_problems(fig), figures.layout_problems(fig)


# --- live figure -------------------------------------------------------------------------

def test_live_cache_memory_update_text_and_artists():
    live = nb13.LiveCacheMemory()
    text = live.update(h_kv=8, t=32768).splitlines()
    assert text[0] == ("Llama 2 7B: h_kv = 8 of h = 32: 0.125 MiB per token, 4.00 GiB at t = 32,768 "
                       "(published h_kv = 32: 16.00 GiB; MHA: 16.00 GiB)")
    assert text[1].startswith("Llama 2 70B: h_kv = 8 of h = 64: 0.312 MiB per token, 10.00 GiB")
    ends = [b.get_x() + b.get_width() for b in live.bars]
    assert ends == pytest.approx([4, 10, 4, 10, 4])
    live.update(h_kv=64, t=1024)  # capped at each model's h
    ends = [b.get_x() + b.get_width() for b in live.bars]
    assert ends == pytest.approx([0.5, 2.5, 0.5, 2.5, 0.5])
    assert list(live.published.get_xdata()) == pytest.approx([0.5, 0.3125, 0.125, 0.3125, 0.125])
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    with pytest.raises(ValueError, match="h_kv must be a power of two"):
        live.update(h_kv=3, t=1024)
    with pytest.raises(ValueError, match="t must be"):
        live.update(h_kv=2, t=0)


def test_live_cache_memory_blitted_frame_matches_a_full_draw():
    live = nb13.LiveCacheMemory()
    assert not blit_mismatches(live, [{"h_kv": 1, "t": 1024}, {"h_kv": 64, "t": 131072}])


def test_interactive_wires_both_sliders():
    h_kv = widgets.SelectionSlider(options=[1, 2, 4, 8, 16, 32, 64], value=8)
    t = widgets.SelectionSlider(options=[2 ** i for i in range(10, 18)], value=4096)
    box = with_controls(nb13.LiveCacheMemory(), h_kv=h_kv, t=t)
    h_kv.value = 1
    assert "Llama 2 7B: h_kv = 1 of h = 32" in box.children[1].value
    t.value = 8192
    assert "at t = 8,192" in box.children[1].value


# --- the Japanese edition ----------------------------------------------------------------

def test_figures_and_checks_in_the_japanese_edition():
    with i18n.language_as("ja"), warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph (tofu) warns at draw time
        live = nb13.LiveCacheMemory()
        summary = live.update(h_kv=8, t=32768).splitlines()
        names = {m.name for m in nb13.MODELS}
        figs = (nb13.plot_grouping(), nb13.plot_cache_memory(), live.fig,
                nb13.plot_accuracy_vs_cache({4: 512, 2: 256, 1: 128},
                                            {"from scratch, 50 steps": {4: 1.0, 1: 0.5}}))
        for fig in figs:
            fig.canvas.draw()
            assert not figures.layout_problems(fig), figures.layout_problems(fig)
            left = [t for t in texts_not_in_japanese(fig) if t not in names]  # names stay
            assert not left, left
        tiled = nb13.check_cached_mask(ac.causal_mask(5)[:2], n=2, m=5)
        correct = nb13.check_fewer_scores(False)
    assert summary[0].startswith("Llama 2 7B: ")
    assert any("\u3040" <= ch <= "\u9fff" for ch in summary[0])
    assert tiled.mistake == "mask_top_left_with_cache"
    assert tiled.message.startswith("不正解")
    assert correct.ok and correct.message.startswith("正解")


# --- self-checks ---------------------------------------------------------------------------

@pytest.fixture
def qkv():
    rng = np.random.default_rng(13)
    Q = rng.normal(size=(4, 3, 2))
    K, V = rng.normal(size=(2, 5, 2)), rng.normal(size=(2, 5, 3))
    return Q, K, V


def test_check_grouped_output_recognises_each_mistake(qkv):
    Q, K, V = qkv
    K_rep, V_rep = np.repeat(K, 2, axis=0), np.repeat(V, 2, axis=0)
    variants = {
        None: ac.scaled_dot_product_attention(Q, K_rep, V_rep)[0],
        "gqa_heads_tiled": ac.scaled_dot_product_attention(Q, np.tile(K, (2, 1, 1)),
                                                           np.tile(V, (2, 1, 1)))[0],
        "mha_scaled_by_d_model": ac.softmax(Q @ K_rep.swapaxes(-1, -2) / np.sqrt(4 * 2)) @ V_rep,
        "no_scaling": ac.softmax(Q @ K_rep.swapaxes(-1, -2)) @ V_rep,
        "divide_by_d_k": ac.softmax(Q @ K_rep.swapaxes(-1, -2) / 2) @ V_rep,
        "gqa_first_kv_head_only": ac.scaled_dot_product_attention(
            Q, np.repeat(K[:1], 4, axis=0), np.repeat(V[:1], 4, axis=0))[0],
    }
    for key, answer in variants.items():
        v = nb13.check_grouped_output(answer, Q, K, V)
        assert v.mistake == key, (key, v.message)
        assert v.status == (checks.CORRECT if key is None else checks.MISTAKE)
    v = nb13.check_grouped_output(variants["mha_scaled_by_d_model"], Q, K, V)
    assert "sqrt(d_model)" in v.message and "d_k = 2" in v.message


def test_check_cached_mask_recognises_each_mistake():
    right = ac.causal_mask(3, 7)  # the notebook's question: 4 cached positions, 3 new
    inf = np.inf
    assert right.tolist() == [[0, 0, 0, 0, 0, -inf, -inf], [0, 0, 0, 0, 0, 0, -inf], [0] * 7]
    blocked = ~np.isfinite(right)
    variants = {
        None: right,
        "mask_top_left_with_cache": ac.causal_mask(7)[:3],
        "mask_hides_diagonal": np.array([[0, 0, 0, 0, -inf, -inf, -inf],
                                         [0, 0, 0, 0, 0, -inf, -inf], [0, 0, 0, 0, 0, 0, -inf]]),
        "mask_multiplicative": (~blocked).astype(float),
        "mask_boolean_blocked": blocked.astype(float),
        "mask_large_negative": np.where(blocked, -1e9, 0.0),
        "mask_finfo_min": np.where(blocked, np.finfo(float).min, 0.0),
    }
    for key, answer in variants.items():
        v = nb13.check_cached_mask(answer, n=3, m=7)
        assert v.mistake == key, (key, v.message)
        assert v.status == (checks.CORRECT if key is None else checks.MISTAKE)
    finite = nb13.check_cached_mask(variants["mask_large_negative"], n=3, m=7)
    assert finite.message.startswith("Same weights, another convention") and "-np.inf" in finite.message
    square = nb13.check_cached_mask(ac.causal_mask(3), n=3, m=7)
    assert square.status == checks.WRONG and "one column per key" in square.message


@pytest.mark.parametrize("answer, key", [  # the notebook's question: 28 layers, h 28, h_kv 4
    (57344, None), (401408, "kv_cache_query_heads"), (28672, "kv_cache_keys_only"),
    (2048, "kv_cache_one_layer"), (56, "kv_cache_in_kib"), (458752, "kv_cache_in_bits")])
def test_check_cache_bytes_per_token_recognises_each_mistake(answer, key):
    v = nb13.check_cache_bytes_per_token(answer, layers=28, h=28, h_kv=4, d_k=128,
                                         bytes_per_number=2)
    assert v.mistake == key
    assert v.status == (checks.CORRECT if key is None else checks.MISTAKE)


def test_check_cache_bytes_per_token_quotes_a_fraction_as_given():
    v = nb13.check_cache_bytes_per_token(0.125, layers=28, h=28, h_kv=4, d_k=128,
                                         bytes_per_number=2)  # MiB, say: not "your count 0"
    assert v.status == checks.WRONG and "your count 0.125 is too small" in v.message


def test_checks_unanswered_and_wrong(qkv):
    assert nb13.check_grouped_output(..., *qkv).message.startswith("Not answered yet")
    assert nb13.check_cached_mask(..., 3, 7).status == checks.UNANSWERED
    assert nb13.check_cache_bytes_per_token(..., 32, 32, 8, 128, 2).status == checks.UNANSWERED
    assert nb13.check_fewer_scores(...).status == checks.UNANSWERED
    wrong = nb13.check_cache_bytes_per_token(12345, 32, 32, 8, 128, 2)
    assert wrong.status == checks.WRONG and "too small" in wrong.message
    assert "131" not in wrong.message.replace("12,345", "")
    assert nb13.check_cache_bytes_per_token("131072", 32, 32, 8, 128, 2).status == checks.WRONG
    assert nb13.check_cache_bytes_per_token([1, 2], 32, 32, 8, 128, 2).status == checks.WRONG
    assert nb13.check_grouped_output(np.zeros((4, 3, 3)), *qkv).status == checks.WRONG


def test_conceptual_question():
    assert nb13.check_fewer_scores(False).ok and nb13.check_fewer_scores(np.bool_(False)).ok
    v = nb13.check_fewer_scores(True)
    assert v.status == checks.MISTAKE and v.mistake == "gqa_fewer_scores"
    assert checks.MISTAKES["gqa_fewer_scores"].label in v.message
    assert nb13.check_fewer_scores("False").status == checks.WRONG
    assert nb13.check_fewer_scores(0).status == checks.WRONG


def test_every_mistake_of_notebook_13_is_registered():
    ours = {k for k, m in checks.MISTAKES.items() if m.notebook == "13"}
    assert ours == {"gqa_heads_tiled", "gqa_first_kv_head_only", "mask_top_left_with_cache",
                    "kv_cache_query_heads", "kv_cache_keys_only", "kv_cache_one_layer",
                    "kv_cache_in_kib", "kv_cache_in_bits", "gqa_fewer_scores"}


def test_questions_are_registered_with_solutions_that_pass(qkv):
    Q, K, V = qkv
    keys = {k for k in checks.QUESTIONS if k.startswith("13.")}
    assert keys == {"13.grouped_output", "13.cached_mask", "13.cache_bytes_per_token",
                    "13.fewer_scores"}
    given = {"np": np, "ac": ac, "Q": Q, "K": K, "V": V}
    assert nb13.check_grouped_output(eval(checks.QUESTIONS["13.grouped_output"].solution, given),
                                     Q, K, V).ok
    assert nb13.check_cached_mask(eval(checks.QUESTIONS["13.cached_mask"].solution, given), 3, 7).ok
    assert nb13.check_cache_bytes_per_token(
        eval(checks.QUESTIONS["13.cache_bytes_per_token"].solution), 28, 28, 4, 128, 2).ok
    assert nb13.check_fewer_scores(eval(checks.QUESTIONS["13.fewer_scores"].solution)).ok


# --- the committed notebook ----------------------------------------------------------------------

def test_notebook_stores_the_equivalences():
    out = stored_text(NOTEBOOK)
    assert "by hand, head by head = ac.grouped_query_attention: True" in out
    assert "repeat, then plain attention = the grouped call: True" in out
    assert "same? False" in out and "agrees anyway: [0, 2, 5, 7]" in out
    assert "num_kv_heads = h is multi-head attention, bit for bit: True" in out
    assert "grouped layer = multi-head layer with tied key/value heads: True" in out
    assert "bottom-right mask: the full pass's last 3 rows? True" in out
    assert "    top-left mask: the full pass's last 3 rows? False" in out


def test_notebook_counts_match_the_formulas():
    out = stored_text(NOTEBOOK)
    for h_kv, params in ((4, 4096), (2, 3072), (1, 2560)):
        per_token = 2 * h_kv * 8 * 8
        assert f"{h_kv:4d} {params:21,d} {params:8,d} {per_token:22,d}" in out
        assert f"{12 * per_token:,} bytes in the arrays, {12 * per_token:,} by the formula" in out
    for m in nb13.MODELS:
        per_token = 2 * m.layers * m.kv_heads * m.head_width * 2
        assert f"{m.name:<12} {per_token / 2**10:9,.0f}" in out


def test_notebook_checks_are_unanswered_and_nothing_on_stderr():
    assert_checks_unanswered(NOTEBOOK, 4)
