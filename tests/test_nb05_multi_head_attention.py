"""Plot functions and self-checks added for notebook 05 (multi-head attention)."""


import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_core as ac
from course import checks
from course import nb05_multi_head_attention as nb05


def test_divisors():
    assert nb05.divisors(12) == [1, 2, 3, 4, 6, 12]
    assert nb05.divisors(7) == [1, 7]


def test_head_weights_row_one_heatmap_per_head():
    w = ac.softmax(np.random.default_rng(0).normal(size=(3, 4, 4)))
    fig = nb05.head_weights_row(w, ["a", "b", "c"], labels=list("wxyz"), suptitle="t")
    assert len(fig.axes) == 3
    assert [ax.get_title() for ax in fig.axes] == ["a", "b", "c"]
    assert np.allclose(fig.axes[1].images[0].get_array(), w[1])
    plt.close(fig)
    with pytest.raises(ValueError, match="one title per head"):
        nb05.head_weights_row(w, ["a"])
    with pytest.raises(ValueError, match=r"\(h, n, m\)"):
        nb05.head_weights_row(w[0], ["a"])


def test_head_count_demo_is_seeded_and_square():
    a, b = nb05.head_count_demo(), nb05.head_count_demo()
    assert a["X"].shape == (6, 12)
    for k in ("W_Q", "W_K", "W_V", "W_O"):
        assert a[k].shape == (12, 12)
        assert np.array_equal(a[k], b[k])


@pytest.mark.parametrize("h", [1, 2, 3, 4, 6, 12])
def test_live_head_count_shows_h_heads_with_the_core_weights(h):
    live = nb05.LiveHeadCount()
    text = live.update(h=h)
    d = live.data
    _, w = ac.multi_head_attention(d["X"], d["X"], d["W_Q"], d["W_K"], d["W_V"], d["W_O"], h)
    visible = [ax for ax in live.axes if ax.get_visible()]
    assert len(visible) == h
    for r in range(h):
        assert np.allclose(live.images[r].get_array(), w[r])
        assert live.labels[r].get_text() == f"head {r + 1}"
    assert f"d_k = d_v = d_model / h = {12 // h};" in text
    assert "parameters = 576" in text
    sharp = text.splitlines()[1].split(":")[1].split()
    assert np.allclose([float(s) for s in sharp], w.max(axis=-1).mean(axis=-1), atol=0.005)
    assert live.png()[:8] == b"\x89PNG\r\n\x1a\n"


def test_live_head_count_axes_stay_inside_the_figure():
    live = nb05.LiveHeadCount()
    for h in nb05.divisors(12):
        live.update(h=h)
        for ax in live.axes[:h]:
            x0, y0, w, hgt = ax.get_position().bounds
            assert 0 <= x0 and x0 + w <= 1 and 0 <= y0 and y0 + hgt <= 1


def test_live_head_count_update_after_fewer_heads_hides_the_rest():
    live = nb05.LiveHeadCount()
    live.update(h=12)
    live.update(h=2)
    assert sum(ax.get_visible() for ax in live.axes) == 2


def test_live_head_count_rejects_non_divisors():
    with pytest.raises(ValueError, match="must divide d_model = 12"):
        nb05.LiveHeadCount().update(h=5)


def test_head_weights_by_h_draws_sum_of_hs_heatmaps():
    fig = nb05.head_weights_by_h(nb05.head_count_demo(), hs=(1, 2, 4))
    shown = [ax for ax in fig.axes if ax.get_visible() and ax.images]
    assert len(shown) == 1 + 2 + 4
    plt.close(fig)


# --- self-checks -------------------------------------------------------------

def test_param_count_correct_for_every_h():
    for h in (1, 2, 8, 64):
        v = nb05.check_mha_param_count(4 * 512 ** 2, d_model=512, h=h)
        assert v.status == checks.CORRECT, v.message


@pytest.mark.parametrize("value, key", [
    (8 * 4 * 512 ** 2, "counted_h_times"),
    (3 * 512 ** 2, "forgot_W_O"),
    (3 * 512 * 64 + 512 * 512, "one_head_only"),
    (4 * 512 ** 2 + 4 * 512, "with_biases"),
])
def test_param_count_names_each_mistake(value, key):
    v = nb05.check_mha_param_count(value, d_model=512, h=8)
    assert v.status == checks.MISTAKE and v.mistake == key, v.message


def test_param_count_unanswered_wrong_and_bad_type():
    assert nb05.check_mha_param_count(..., 512, 8).status == checks.UNANSWERED
    assert "Not answered yet" in repr(nb05.check_mha_param_count(..., 512, 8))
    assert nb05.check_mha_param_count(12345, 512, 8).status == checks.WRONG
    assert nb05.check_mha_param_count("1048576", 512, 8).status == checks.WRONG
    assert nb05.check_mha_param_count(True, 512, 8).status == checks.WRONG


def test_param_count_with_h_1_does_not_call_a_right_answer_a_mistake():
    # with h = 1, "counted h times" equals the right count: it must be CORRECT, not a mistake
    v = nb05.check_mha_param_count(4 * 16 ** 2, d_model=16, h=1)
    assert v.status == checks.CORRECT


def test_W_O_question_of_the_notebook_separates_every_mistake():
    # d_model = 16, h = 4, d_k = 3, d_v = 5: every classic W_O mistake gives a different shape
    assert nb05.check_W_O_shape((20, 16), 16, 4, 3, 5).status == checks.CORRECT
    for shape, key in (((12, 16), "W_O_uses_d_k"), ((16, 20), "W_O_transposed"),
                       ((5, 16), "W_O_single_head")):
        assert nb05.check_W_O_shape(shape, 16, 4, 3, 5).mistake == key


def test_multi_head_question_of_the_notebook():
    rng = np.random.default_rng(7)
    X_q = rng.normal(size=(3, 4))
    P = ac.init_attention_params(4, 2, rng)
    right, _ = ac.multi_head_attention(X_q, X_q, P.W_Q, P.W_K, P.W_V, P.W_O, 2)
    assert nb05.check_multi_head(right, X_q, P.W_Q, P.W_K, P.W_V, P.W_O, 2).ok
    Q, K, V = (ac.split_heads(X_q @ W, 2) for W in (P.W_Q, P.W_K, P.W_V))
    no_W_O = ac.merge_heads(ac.scaled_dot_product_attention(Q, K, V)[0])
    v = nb05.check_multi_head(no_W_O, X_q, P.W_Q, P.W_K, P.W_V, P.W_O, 2)
    assert v.mistake == "no_W_O"


def test_multi_head_check_names_the_wide_scale_and_the_missing_split():
    rng = np.random.default_rng(7)
    X_q = rng.normal(size=(3, 4))
    P = ac.init_attention_params(4, 2, rng)  # d_model = h*d_k = 4, d_k = 2
    Q, K, V = (ac.split_heads(X_q @ W, 2) for W in (P.W_Q, P.W_K, P.W_V))
    heads = ac.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(4)) @ V  # sqrt(d_model) per head
    v = nb05.check_multi_head(ac.merge_heads(heads) @ P.W_O, X_q, P.W_Q, P.W_K, P.W_V, P.W_O, 2)
    assert v.mistake == "mha_scaled_by_d_model" and "sqrt(d_k) = sqrt(2)" in v.message, v.message
    one_head = ac.scaled_dot_product_attention(X_q @ P.W_Q, X_q @ P.W_K, X_q @ P.W_V)[0] @ P.W_O
    v = nb05.check_multi_head(np.round(one_head, 4), X_q, P.W_Q, P.W_K, P.W_V, P.W_O, 2)
    assert v.mistake == "mha_not_split", v.message


def test_multi_head_check_names_a_scale_of_h_times_d_k_when_it_is_not_d_model():
    rng = np.random.default_rng(1)
    X, (W_Q, W_K, W_V) = rng.normal(size=(3, 6)), rng.normal(size=(3, 6, 4))  # h*d_k = 4 != 6
    W_O = rng.normal(size=(4, 6))
    Q, K, V = (ac.split_heads(X @ W, 2) for W in (W_Q, W_K, W_V))
    heads = ac.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(4)) @ V
    v = nb05.check_multi_head(ac.merge_heads(heads) @ W_O, X, W_Q, W_K, W_V, W_O, 2)
    assert v.mistake == "mha_scaled_by_h_d_k" and "sqrt(h*d_k) = sqrt(4)" in v.message, v.message
    no_W_O = ac.merge_heads(ac.scaled_dot_product_attention(Q, K, V)[0])  # (n, h*d_v) = (3, 4)
    assert nb05.check_multi_head(no_W_O, X, W_Q, W_K, W_V, W_O, 2).mistake == "no_W_O"


def test_W_O_explanation_starts_with_a_capital():
    v = nb05.check_W_O_shape((16, 20), 16, 4, 3, 5)
    assert "With row vectors" in v.message


def test_param_count_given_as_a_string_says_so():
    v = nb05.check_mha_param_count("1,048,576", 512, 8)
    assert v.status == checks.WRONG and "string" in v.message and "answer = 1048576" in v.message


def test_W_O_shape_mistakes():
    assert nb05.check_W_O_shape((16, 12), d_model=12, h=2, d_k=4, d_v=8).ok
    assert nb05.check_W_O_shape((8, 12), 12, 2, 4, 8).mistake == "W_O_uses_d_k"
    assert nb05.check_W_O_shape((12, 16), 12, 2, 4, 8).mistake == "W_O_transposed"
    assert nb05.check_W_O_shape((8, 12), 12, 2, 6, 8).mistake == "W_O_single_head"
    assert nb05.check_W_O_shape(..., 12, 2, 4, 8).status == checks.UNANSWERED
    assert nb05.check_W_O_shape("ab", 12, 2, 4, 8).status == checks.WRONG


def test_multi_head_without_W_O_is_named():
    X = np.random.default_rng(7).normal(size=(3, 4))
    p = ac.init_attention_params(4, 2, np.random.default_rng(8))
    right, _ = ac.multi_head_attention(X, X, p.W_Q, p.W_K, p.W_V, p.W_O, 2)
    assert nb05.check_multi_head(right, X, p.W_Q, p.W_K, p.W_V, p.W_O, 2).ok
    heads, _ = ac.multi_head_attention(X, X, p.W_Q, p.W_K, p.W_V, np.eye(4), 2)
    assert nb05.check_multi_head(heads, X, p.W_Q, p.W_K, p.W_V, p.W_O, 2).mistake == "no_W_O"
