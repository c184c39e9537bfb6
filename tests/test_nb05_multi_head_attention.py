"""Plot functions and self-checks added for notebook 05 (multi-head attention)."""

import re
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_core as ac
from course import checks, figures, i18n
from course import nb05_multi_head_attention as nb05

JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")  # hiragana, katakana, kanji


def test_divisors():
    assert nb05.divisors(12) == [1, 2, 3, 4, 6, 12]
    assert nb05.divisors(7) == [1, 7]


def test_head_weights_row_one_heatmap_per_head():
    w = ac.softmax(np.random.default_rng(0).normal(size=(3, 4, 4)))
    fig = nb05.head_weights_row(w, ["a", "b", "c"], labels=list("wxyz"), suptitle="t")
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
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
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    d = live.data
    _, w = ac.multi_head_attention(d["X"], d["X"], d["W_Q"], d["W_K"], d["W_V"], d["W_O"], h)
    visible = [ax for ax in live.axes if ax.get_visible()]
    assert len(visible) == h
    for r in range(h):
        assert np.allclose(live.images[r].get_array(), w[r])
        assert live.labels[r].get_text() == f"head {r}"  # counted from 0, like weights[r]
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


def test_head_weights_by_h_draws_each_heads_core_weights():
    d = nb05.head_count_demo()
    fig = nb05.head_weights_by_h(d, hs=(1, 2, 4))
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    rows = np.array(fig.axes[:3 * 4]).reshape(3, 4)  # one row of max(hs) axes per h, then a colorbar
    for row, h in zip(rows, (1, 2, 4), strict=True):
        _, w = ac.multi_head_attention(d["X"], d["X"], d["W_Q"], d["W_K"], d["W_V"], d["W_O"], h)
        assert [ax.get_visible() for ax in row] == [r < h for r in range(4)]
        for r in range(h):
            assert np.allclose(row[r].images[0].get_array(), w[r]), (h, r)
            assert row[r].get_title() == f"head {r}"  # counted from 0, like w[r]; h labels the row
    plt.close(fig)


# --- self-checks -------------------------------------------------------------

def _example_d_model_4():
    """The notebook's question 2: X_q (3, 4), h = 2, d_model = h*d_k = 4, d_k = 2."""
    rng = np.random.default_rng(7)
    X_q = rng.normal(size=(3, 4))
    P = ac.init_attention_params(4, 2, rng)
    return X_q, P.W_Q, P.W_K, P.W_V, P.W_O, 2


def _example_narrow_heads():
    """d_model = 6 but h*d_k = 4: scaling by sqrt(d_model) and by sqrt(h*d_k) differ."""
    rng = np.random.default_rng(1)
    X, (W_Q, W_K, W_V) = rng.normal(size=(3, 6)), rng.normal(size=(3, 6, 4))
    return X, W_Q, W_K, W_V, rng.normal(size=(4, 6)), 2


def _per_head_scale(X, W_Q, W_K, W_V, W_O, h, D):
    """Multi-head attention with every head's scores divided by sqrt(D) instead of sqrt(d_k)."""
    Q, K, V = (ac.split_heads(X @ W, h) for W in (W_Q, W_K, W_V))
    return ac.merge_heads(ac.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(D)) @ V) @ W_O


def _without_W_O(X, W_Q, W_K, W_V, W_O, h):
    Q, K, V = (ac.split_heads(X @ W, h) for W in (W_Q, W_K, W_V))
    return ac.merge_heads(ac.scaled_dot_product_attention(Q, K, V)[0])  # (n, h*d_v)


def _one_wide_head(X, W_Q, W_K, W_V, W_O, h):
    return ac.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)[0] @ W_O


def _multi_head(answer, example):
    return nb05.check_multi_head(answer(*example), *example[:5], num_heads=example[5])


# Every named mistake of notebook 05, fed in as a learner would make it: key -> the verdict
MISTAKE_CASES = {
    # W_O for d_model = 16, h = 4, d_k = 3, d_v = 5 (the notebook's question 1): (20, 16) is right
    "W_O_uses_d_k": lambda: nb05.check_W_O_shape((12, 16), 16, 4, 3, 5),
    "W_O_transposed": lambda: nb05.check_W_O_shape((16, 20), 16, 4, 3, 5),
    "W_O_single_head": lambda: nb05.check_W_O_shape((5, 16), 16, 4, 3, 5),
    "no_W_O": lambda: _multi_head(_without_W_O, _example_d_model_4()),
    "mha_scaled_by_d_model": lambda: _multi_head(
        lambda *e: _per_head_scale(*e, D=4), _example_d_model_4()),
    "mha_scaled_by_h_d_k": lambda: _multi_head(
        lambda *e: _per_head_scale(*e, D=4), _example_narrow_heads()),
    "mha_not_split": lambda: _multi_head(
        lambda *e: np.round(_one_wide_head(*e), 4), _example_d_model_4()),  # typed to 4 decimals
    # d_model = 512, h = 8, d_k = d_v = 64 (the notebook's question 3): 4 * 512^2 is right
    "mha_counted_h_times": lambda: nb05.check_mha_param_count(8 * 4 * 512 ** 2, 512, 8),
    "mha_forgot_W_O": lambda: nb05.check_mha_param_count(3 * 512 ** 2, 512, 8),
    "mha_one_head_only": lambda: nb05.check_mha_param_count(3 * 512 * 64 + 512 * 512, 512, 8),
    "mha_with_biases": lambda: nb05.check_mha_param_count(4 * 512 ** 2 + 4 * 512, 512, 8),
}


@pytest.mark.parametrize("key", list(MISTAKE_CASES))
def test_each_named_mistake_is_recognised(key):
    v = MISTAKE_CASES[key]()
    assert v.status == checks.MISTAKE and v.mistake == key, v.message
    label = checks.MISTAKES[key].label.format(scale="sqrt(d_model) = sqrt(h*d_k)")  # {scale}: one
    assert label in v.message  # the learner is told which mistake it is


def test_every_mistake_of_notebook_05_in_the_registry_has_a_case():
    assert set(MISTAKE_CASES) == {k for k, m in checks.MISTAKES.items() if m.notebook == "05"}


def test_right_answers_pass():
    for h in (1, 2, 8, 64):
        v = nb05.check_mha_param_count(4 * 512 ** 2, d_model=512, h=h)
        assert v.status == checks.CORRECT, v.message
    assert nb05.check_W_O_shape((20, 16), 16, 4, 3, 5).ok
    assert nb05.check_W_O_shape((16, 12), d_model=12, h=2, d_k=4, d_v=8).ok
    for example in (_example_d_model_4(), _example_narrow_heads()):
        right, _ = ac.multi_head_attention(example[0], example[0], *example[1:])
        for answer in (right, np.round(right, 4)):  # 4 decimals are enough
            assert nb05.check_multi_head(answer, *example[:5], num_heads=example[5]).ok


def test_param_count_unanswered_wrong_and_bad_type():
    assert nb05.check_mha_param_count(..., 512, 8).status == checks.UNANSWERED
    assert nb05.check_mha_param_count(12345, 512, 8).status == checks.WRONG
    assert nb05.check_mha_param_count("1048576", 512, 8).status == checks.WRONG
    assert nb05.check_mha_param_count(True, 512, 8).status == checks.WRONG


def test_param_count_with_h_1_does_not_call_a_right_answer_a_mistake():
    # with h = 1, "counted h times" equals the right count: it must be CORRECT, not a mistake
    v = nb05.check_mha_param_count(4 * 16 ** 2, d_model=16, h=1)
    assert v.status == checks.CORRECT


def test_param_count_explanations_carry_the_numbers_of_the_case():
    v = nb05.check_mha_param_count(3 * 12 * 4 + 12 * 12, 12, 3)  # one head of three, d_k = 4
    assert v.mistake == "mha_one_head_only" and "h = 3 heads" in v.message, v.message
    v = nb05.check_mha_param_count(4 * 4 * 16 ** 2, 16, 4)  # h = 4 times
    assert v.mistake == "mha_counted_h_times" and "(16, 4) matrices" in v.message, v.message


def test_param_count_given_as_a_string_says_so():
    v = nb05.check_mha_param_count("1,048,576", 512, 8)
    assert v.status == checks.WRONG and "string" in v.message and "answer = 1048576" in v.message


def test_W_O_shape_mistakes_when_d_k_and_d_v_differ_otherwise():
    assert nb05.check_W_O_shape((8, 12), 12, 2, 4, 8).mistake == "W_O_uses_d_k"
    assert nb05.check_W_O_shape((12, 16), 12, 2, 4, 8).mistake == "W_O_transposed"
    assert nb05.check_W_O_shape((8, 12), 12, 2, 6, 8).mistake == "W_O_single_head"
    assert nb05.check_W_O_shape(..., 12, 2, 4, 8).status == checks.UNANSWERED
    assert nb05.check_W_O_shape("ab", 12, 2, 4, 8).status == checks.WRONG
    assert nb05.check_W_O_shape((1, 2), 12, 2, 4, 8).status == checks.WRONG


def test_W_O_explanation_starts_with_a_capital():
    v = nb05.check_W_O_shape((16, 20), 16, 4, 3, 5)
    assert "With row vectors" in v.message


def test_multi_head_scale_explanations_carry_the_numbers_of_the_case():
    v = MISTAKE_CASES["mha_scaled_by_d_model"]()
    assert "scaling every head by sqrt(d_model) = sqrt(h*d_k)" in v.message
    assert "sqrt(d_k) = sqrt(2), not by sqrt(d_model) = sqrt(h*d_k) = sqrt(4)" in v.message
    v = MISTAKE_CASES["mha_scaled_by_h_d_k"]()
    assert "sqrt(d_k) = sqrt(2), not by sqrt(h*d_k) = sqrt(4)" in v.message, v.message
    example = _example_narrow_heads()  # d_model = 6 != h*d_k = 4: scaling by sqrt(6) is named too
    v = _multi_head(lambda *e: _per_head_scale(*e, D=6), example)
    assert v.mistake == "mha_scaled_by_d_model" and "by sqrt(d_model) = sqrt(6)" in v.message


# --- the Japanese edition ------------------------------------------------------

def _japanese(*texts):
    """Every text has Japanese in it: (text, ...) of those that have none."""
    return [t for t in texts if not JAPANESE.search(t)]


def test_figures_and_checks_speak_japanese_in_the_japanese_edition():
    """In notebooks/ja/05 the figures (the notebook's own head titles too) and verdicts are
    Japanese, and every figure still fits its fixed layout."""
    d = nb05.head_count_demo()
    w = ac.multi_head_attention(d["X"][:6], d["X"][:6], d["W_Q"], d["W_K"], d["W_V"], d["W_O"], 4)[1]
    with i18n.language_as("ja"), warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph (tofu) warns at draw time
        fig = nb05.head_weights_row(w, list(nb05.NOTEBOOK_TITLES[:4]), labels=list("abcdef"),
                                    suptitle=nb05.NOTEBOOK_TITLES[4])
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        assert not _japanese(fig._suptitle.get_text(), *(ax.get_title() for ax in fig.axes),
                             fig.axes[0].get_ylabel(), fig.axes[-1].get_xlabel())
        plt.close(fig)
        fig = nb05.head_weights_by_h(d, hs=(1, 2, 3, 6))
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        titles = [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_title()]
        assert len(titles) == 1 + 2 + 3 + 6 and not _japanese(*titles)
        assert not _japanese(fig._suptitle.get_text(), fig.axes[-1].get_ylabel(),
                             *(t.get_text() for t in fig.texts))
        plt.close(fig)
        live = nb05.LiveHeadCount()
        for h in nb05.divisors(12):
            text = live.update(h=h)
            assert not figures.layout_problems(live.fig), (h, figures.layout_problems(live.fig))
            assert not _japanese(text, live.title.get_text(), *(t.get_text() for t in live.labels[:h]))
            assert live.labels[h - 1].get_text().endswith(f" {h - 1}")  # still counted from 0
        assert live.png()[:8] == b"\x89PNG\r\n\x1a\n"
        verdicts = [nb05.check_W_O_shape(..., 16, 4, 3, 5), nb05.check_W_O_shape((20, 16), 16, 4, 3, 5),
                    nb05.check_W_O_shape((1, 2), 16, 4, 3, 5), nb05.check_W_O_shape("ab", 16, 4, 3, 5),
                    nb05.check_mha_param_count(4 * 512 ** 2, 512, 8),
                    nb05.check_mha_param_count(12345, 512, 8),
                    nb05.check_mha_param_count([1], 512, 8),
                    _multi_head(lambda *e: ac.multi_head_attention(e[0], e[0], *e[1:])[0],
                                _example_d_model_4())]
        verdicts += [case() for case in MISTAKE_CASES.values()]
        assert not _japanese(*(v.message for v in verdicts))
        v = MISTAKE_CASES["W_O_transposed"]()
        assert v.mistake == "W_O_transposed" and "(16, 20)" in v.message  # the numbers are kept
        v = MISTAKE_CASES["mha_scaled_by_d_model"]()  # {scale} filled in after the translation
        assert "sqrt(d_model) = sqrt(h*d_k) = sqrt(4)" in v.message, v.message
    assert nb05.check_W_O_shape((20, 16), 16, 4, 3, 5).message.startswith("Correct: W_O has shape")


def test_notebook_titles_are_the_ones_the_notebook_passes():
    """NOTEBOOK_TITLES marks the notebook's own texts for translation: a changed cell would leave
    the Japanese figure with an English title, so the two must stay the same strings."""
    from pathlib import Path

    import nbformat

    path = Path(__file__).resolve().parents[1] / "notebooks" / "05_multi_head_attention.ipynb"
    code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                     if c.cell_type == "code")
    assert [t for t in nb05.NOTEBOOK_TITLES if f'"{t}"' not in code] == []


def test_multi_head_without_W_O_is_named_when_W_O_is_not_square():
    example = _example_narrow_heads()  # Concat is (3, 4), the output (3, 6)
    assert _multi_head(_without_W_O, example).mistake == "no_W_O"
    assert _multi_head(lambda *e: np.zeros((3, 6)), example).status == checks.WRONG
