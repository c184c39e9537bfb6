"""Tests for notebook 11 (generating, and the KV cache): the figures, live figure and self-checks
of course/nb11_generating_and_kv_cache.py, and the committed notebook's stored state."""

import warnings
from pathlib import Path

import ipywidgets as widgets
import numpy as np
import pytest

import attention_core as ac
import attention_learning as al
from course import checks, figures, i18n
from course import nb11_generating_and_kv_cache as nb11
from course.live import with_controls
from live_frames import blit_mismatches
from stored_notebook import assert_checks_unanswered, stored_text
from figure_texts import texts_not_in_japanese

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "11_generating_and_kv_cache.ipynb"
LABELS = "6 1 0 5 2 3 | 3 2 5 0 1".split()  # positions 0..11
PROMPT_LEN = 7


@pytest.fixture
def steps_and_costs():
    """Six generation steps of two heads over a growing cache, and per-step costs."""
    rng = np.random.default_rng(0)
    weights = [ac.softmax(rng.normal(size=(2, PROMPT_LEN + k)) * 3) for k in range(6)]
    costs = {"recompute": [100 * (PROMPT_LEN + k) ** 2 for k in range(6)],
             "cached": [100 * (PROMPT_LEN + k) for k in range(6)]}
    return weights, costs


# --- figures ----------------------------------------------------------------------------

def test_plot_costs_draws_both_loops_on_log_axes():
    Ts = np.array([16, 32, 64])
    counts = {"recompute": Ts ** 3, "cached": Ts ** 2}
    times = {"recompute": [0.1, 0.4, 1.6], "cached": [0.05, 0.1, 0.2]}
    fig = nb11.plot_costs(Ts, counts, Ts, times)
    assert len(fig.axes) == 2
    for ax in fig.axes:
        assert ax.get_yscale() == "log" and len(ax.lines) == 2
    assert np.array_equal(fig.axes[0].lines[0].get_ydata(), Ts ** 3)
    assert fig.get_suptitle().startswith("Generating T tokens")  # not a panel's title
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    one = nb11.plot_costs(Ts, counts)
    assert len(one.axes) == 1 and not figures.layout_problems(one)  # counts only


def test_plot_generation_attention_greys_what_is_not_cached(steps_and_costs):
    weights, _ = steps_and_costs
    fig = nb11.plot_generation_attention(weights, LABELS, PROMPT_LEN)
    M = fig.axes[1].images[0].get_array()  # head 1
    assert M.shape == (6, 12)
    assert np.ma.getmaskarray(M)[0, PROMPT_LEN:].all() and not np.ma.getmaskarray(M)[5].any()
    assert np.allclose(M[2, :PROMPT_LEN + 2], weights[2][1])
    assert not figures.layout_problems(fig), figures.layout_problems(fig)


# --- live figure -------------------------------------------------------------------------

def test_live_kv_cache_update_text_and_artists(steps_and_costs):
    weights, costs = steps_and_costs
    live = nb11.LiveKVCache(weights, LABELS, PROMPT_LEN, costs)
    text = live.update(step=3).splitlines()
    assert text[0] == "step 3: the new query at position 9 (token 5) predicts the token at 10"
    assert text[1] == "cache: K and V of positions 0..9, shape (h, t + 1, d) = (2, 10, d)"
    assert text[2] == "head 0 weights: " + " ".join(f"{x:.2f}" for x in weights[3][0])
    assert text[-1] == "this step: 1,000 multiply-adds with the cache, 10,000 recomputing the prefix"
    heights = np.array([b.get_height() for b in live.bars[1]])
    assert np.allclose(heights[:10], weights[3][1]) and np.all(heights[10:] == 0)
    assert live.future.get_x() == pytest.approx(9.5) and live.future.get_width() == pytest.approx(2)
    assert live.marker.get_ydata()[0] == sum(costs["recompute"][:4])
    assert live.marker2.get_ydata()[0] == sum(costs["cached"][:4])
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    with pytest.raises(ValueError, match="step must be in 0..5"):
        live.update(step=6)


def test_live_kv_cache_blitted_frame_matches_a_full_draw(steps_and_costs):
    weights, costs = steps_and_costs
    live = nb11.LiveKVCache(weights, LABELS, PROMPT_LEN, costs)
    assert not blit_mismatches(live, [{"step": 0}, {"step": 5}])


def test_interactive_wires_the_step_slider(steps_and_costs):
    weights, costs = steps_and_costs
    slider = widgets.IntSlider(value=0, min=0, max=5)
    box = with_controls(nb11.LiveKVCache(weights, LABELS, PROMPT_LEN, costs), step=slider)
    slider.value = 5
    assert "step 5: the new query at position 11" in box.children[1].value


# --- the Japanese edition ----------------------------------------------------------------



def test_figures_and_checks_in_the_japanese_edition(steps_and_costs):
    """notebooks/ja/11 draws the same figures with translated texts: Japanese, fitting the layout,
    no missing glyph; the live figure's summary and the verdicts are Japanese too."""
    weights, costs = steps_and_costs
    Ts = 2 ** np.arange(4, 13)
    counts = {"recompute": Ts.astype(float) ** 3, "cached": Ts.astype(float) ** 2}
    times = {"recompute": [0.01, 0.04, 0.16, 0.6], "cached": [0.005, 0.01, 0.02, 0.05]}
    with i18n.language_as("ja"), warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph (tofu) warns at draw time
        both = nb11.plot_costs(Ts, counts, Ts[:4], times)
        generation = nb11.plot_generation_attention(weights, LABELS, PROMPT_LEN)
        live = nb11.LiveKVCache(weights, LABELS, PROMPT_LEN, costs)
        summary = live.update(step=3).splitlines()
        for fig in (both, nb11.plot_costs(Ts, counts), generation, live.fig):
            assert not figures.layout_problems(fig), figures.layout_problems(fig)
            assert not texts_not_in_japanese(fig), texts_not_in_japanese(fig)
        transposed = nb11.check_cache_shape((2, 16, 10), h=2, t=10, d_k=16, d_model=32)
        correct = nb11.check_cache_shape((2, 10, 16), h=2, t=10, d_k=16, d_model=32)
        count = nb11.check_total_score_entries(..., T=100, cached=False)
    assert both.axes[0].get_legend().get_texts()[1].get_text() == "KV キャッシュ"
    assert [t.get_text() for t in generation.axes[0].get_yticklabels()][0] == "位置 6"
    assert generation.axes[1].get_title() == "ヘッド 1"
    assert generation.axes[2].get_ylabel() == "注意重み"  # the colour bar
    assert summary[0].startswith("ステップ 3: 位置 9 (トークン 5)")
    assert summary[2] == "ヘッド 0 の重み: " + " ".join(f"{x:.2f}" for x in weights[3][0])
    assert summary[-1] == "このステップの積和演算: キャッシュありで 1,000 回、接頭辞を計算し直すと 10,000 回"
    assert transposed.mistake == "cache_transposed"
    assert transposed.message.startswith("不正解: (2, 16, 10) は「転置したキャッシュ」です。")
    assert correct.ok and correct.message.startswith("正解です: (2, 10, 16) = (h, t, d_k)。")
    assert count.message.startswith("まだ答えていません") and "T = 100" in count.message
    english = nb11.check_cache_shape((2, 16, 10), h=2, t=10, d_k=16, d_model=32).message
    assert english.startswith("Not quite: (2, 16, 10) is a transposed cache.")


# --- self-checks ---------------------------------------------------------------------------

@pytest.mark.parametrize("answer, key", [
    ((2, 10, 16), None), ((10, 16), "cache_no_heads"), ((10, 32), "cache_no_heads"),
    ((2, 16, 10), "cache_transposed"), ((2, 9, 16), "cache_off_by_one"),
    ((2, 11, 16), "cache_off_by_one"), ((2, 10, 32), "cache_d_model")])
def test_check_cache_shape_recognises_each_mistake(answer, key):
    v = nb11.check_cache_shape(answer, h=2, t=10, d_k=16, d_model=32)
    assert v.mistake == key and v.status == (checks.CORRECT if key is None else checks.MISTAKE)
    if key:
        assert checks.MISTAKES[key].label in v.message


@pytest.fixture
def cache_case():
    rng = np.random.default_rng(11)
    K_old, V_old = rng.normal(size=(4, 4)), rng.normal(size=(4, 3))
    q, k_new, v_new = rng.normal(size=(1, 4)), rng.normal(size=(1, 4)), rng.normal(size=(1, 3))
    return q, K_old, V_old, k_new, v_new


def test_check_cached_attention_recognises_each_mistake(cache_case):
    q, K_old, V_old, k_new, v_new = cache_case
    K, V = np.vstack([K_old, k_new]), np.vstack([V_old, v_new])
    variants = {
        None: ac.scaled_dot_product_attention(q, K, V)[0],
        "cache_new_key_missing": ac.scaled_dot_product_attention(q, K_old, V_old)[0],
        "cache_row_masked": V[:1],  # causal_mask(t)[0] leaves key 0 only: its value
        "cache_no_scaling": ac.softmax(q @ K.T) @ V,
        "divide_by_d_k": ac.softmax(q @ K.T / 4) @ V,
    }
    for key, answer in variants.items():
        v = nb11.check_cached_attention(answer, *cache_case)
        assert v.mistake == key, key
        assert v.status == (checks.CORRECT if key is None else checks.MISTAKE)


@pytest.mark.parametrize("cached, answer, key", [
    (False, 338350, None), (False, 10000, "recompute_count_last_step_only"),
    (False, 5050, "recompute_count_cached"),
    (False, 328350, "count_off_by_one"), (False, 348551, "count_off_by_one"),
    (True, 5050, None), (True, 338350, "cache_count_quadratic"), (True, 4950, "count_off_by_one"),
    (True, 5150, "count_off_by_one")])
def test_check_total_score_entries_recognises_each_mistake(cached, answer, key):
    v = nb11.check_total_score_entries(answer, T=100, cached=cached)
    assert v.mistake == key and v.status == (checks.CORRECT if key is None else checks.MISTAKE)


def test_checks_unanswered_and_wrong(cache_case):
    assert nb11.check_cache_shape(..., 2, 10, 16, 32).message.startswith("Not answered yet")
    assert nb11.check_cached_attention(..., *cache_case).status == checks.UNANSWERED
    assert nb11.check_total_score_entries(..., 100, False).status == checks.UNANSWERED
    assert nb11.check_cache_shape((3, 3, 3), 2, 10, 16, 32).status == checks.WRONG
    assert nb11.check_cache_shape("2, 10, 16", 2, 10, 16, 32).status == checks.WRONG
    assert nb11.check_total_score_entries(12345, 100, False).status == checks.WRONG
    assert nb11.check_total_score_entries("338350", 100, False).status == checks.WRONG
    assert nb11.check_total_score_entries([1, 2], 100, False).status == checks.WRONG


def test_every_mistake_of_notebook_11_is_registered():
    ours = {k for k, m in checks.MISTAKES.items() if m.notebook == "11"}
    assert ours == {"cache_no_heads", "cache_transposed", "cache_off_by_one", "cache_d_model",
                    "cache_new_key_missing", "cache_row_masked", "cache_no_scaling",
                    "recompute_count_last_step_only", "cache_count_quadratic", "count_off_by_one",
                    "recompute_count_cached", "weight_is_explanation", "cache_saves_memory"}


def test_no_wrong_reply_contains_the_expected_answer(cache_case):
    """A wrong or mistaken answer is told what is off, never the value it should have given."""
    for cached, right in ((False, 338350), (True, 5050)):
        for answer in (0, 1, 12345, 5050, 10000, 338350, 328350, 348551, 4950, 5150, 10 ** 7, -5):
            v = nb11.check_total_score_entries(answer, T=100, cached=cached)
            if v.status != checks.CORRECT:
                assert str(right) not in v.message.replace(",", ""), (cached, answer, v.message)
    q, K_old, V_old, k_new, v_new = cache_case
    right = ac.scaled_dot_product_attention(q, np.vstack([K_old, k_new]), np.vstack([V_old, v_new]))[0]
    for wrong in (right + 0.5, right * 0, -right, right[:, ::-1]):
        message = nb11.check_cached_attention(wrong, *cache_case).message
        assert not any(f"{x:.4f}" in message or f"{x:.3f}" in message for x in right.ravel()), message
    assert "(0, 0)" in nb11.check_cached_attention(right + [[0.5, 0, 0]], *cache_case).message
    assert "too large" in nb11.check_total_score_entries(10 ** 7, 100, False).message
    assert "too small" in nb11.check_total_score_entries(12345, 100, False).message


@pytest.mark.parametrize("check, key", [(nb11.check_weight_explains, "weight_is_explanation"),
                                        (nb11.check_cache_saves_memory, "cache_saves_memory")])
def test_conceptual_questions(check, key):
    assert check(False).ok and check(np.bool_(False)).ok
    v = check(True)
    assert v.status == checks.MISTAKE and v.mistake == key and checks.MISTAKES[key].label in v.message
    assert check("False").status == checks.WRONG and check(0).status == checks.WRONG
    assert check(...).status == checks.UNANSWERED


def test_head_ablation_zeroes_each_heads_rows_of_W_O():
    config = al.LMConfig(vocab_size=5, n_ctx=6, d_model=8, num_heads=2, d_ff=8)
    params = al.init_lm(config, np.random.default_rng(0))
    tokens = np.random.default_rng(1).integers(0, 5, size=(10, 6))
    targets = np.roll(tokens, -1, axis=1)
    rows, keys = np.arange(3, 6), np.array([2, 1, 0])
    out = nb11.head_ablation(params, tokens, targets, config, rows, keys)
    s = al.lm_forward(params, tokens, config)
    assert out["accuracy"] == pytest.approx(np.mean(s.logits.argmax(-1) == targets))
    W_O = params["W_O"].copy()
    W_O[:4] = 0
    zeroed = al.lm_forward({**params, "W_O": W_O}, tokens, config)
    assert out["zeroed"][0] == pytest.approx(np.mean(zeroed.logits.argmax(-1) == targets))
    on = s.weights[:, :, rows].argmax(-1) == keys
    assert out["on_key"] == pytest.approx([on[:, 0].mean(), on[:, 1].mean()])
    assert out["both_on_key"] <= min(out["on_key"]) <= max(out["on_key"]) <= out["either_on_key"]


# --- the committed notebook ----------------------------------------------------------------------

def test_notebook_stores_equal_generations_and_exact_counts():
    out = stored_text(NOTEBOOK)
    assert "sequences reversed without a single mistake: 200 of 200" in out
    assert "gives the first t rows of the full pass: True" in out
    assert "same tokens as recomputing: True" in out and "same logits (to 1e-12):     True" in out
    assert "same tokens on 20 held-out prompts: True" in out
    assert "  4096 1,537,705,181,184  571,736,064  2689.5" in out
    assert "T = 1048576: ratio     699006.8, ratio / T = 0.6666" in out  # tends to 2T/3
    assert "this model, t = 12: 6,144 bytes in the arrays, 6,144 by the formula" in out
    assert "Llama 2 7B: 524,288 bytes = 0.50 MiB per token, 2.00 GiB at t = 4,096 per sequence" in out
    assert "head 0: largest weight on the right key on 93.9% of rows; accuracy with head 0 zeroed: 0.939" in out
    assert "head 1: largest weight on the right key on 97.7% of rows; accuracy with head 1 zeroed: 0.974" in out
    assert "both heads on the right key: 91.6%, at least one: 100.0%" in out


def test_notebook_counts_match_the_formula():
    """The table's T = 16 row, from the closed forms: sum t = T(T+1)/2, sum t^2 = T(T+1)(2T+1)/6."""
    c_row, T = 8480, 16
    s1, s2 = T * (T + 1) // 2, T * (T + 1) * (2 * T + 1) // 6
    recompute, cached = c_row * s1 + 64 * s2, c_row * T + 64 * s1
    out = stored_text(NOTEBOOK)
    assert f"{T:6d} {recompute:16,d} {cached:12,d}" in out


def test_notebook_checks_are_unanswered_and_nothing_on_stderr():
    assert_checks_unanswered(NOTEBOOK, 5)
