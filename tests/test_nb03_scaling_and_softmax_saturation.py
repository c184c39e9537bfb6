"""Tests for notebook 03: the figures and LiveFigure of course/nb03_scaling_and_softmax_saturation.py
and its self-checks.

The lesson code (the seeded ten-key draw, the saturation measure, the averaged curves) is in the
notebook, which asserts it against the hand computations and the core; nbval compares what it prints.
"""

import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_core as ac
from course import checks, figures
from course import nb03_scaling_and_softmax_saturation as nb03


def _bars(ax):
    return np.array([b.get_height() for b in ax.patches])


# --- figures: they draw the numbers they are given ------------------------------

def test_ten_key_figure_draws_the_two_weight_vectors_it_is_given():
    p_raw, p_scaled = np.eye(10)[3], np.linspace(0.01, 0.19, 10)
    fig = nb03.plot_ten_key_softmax(p_raw, p_scaled, 512)
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    assert np.array_equal(_bars(fig.axes[0]), p_raw) and np.array_equal(_bars(fig.axes[1]), p_scaled)
    assert "512" in fig.axes[0].get_title() and "10 keys" in fig.get_suptitle()
    plt.close(fig)


def test_small_multiples_draw_raw_on_top_and_scaled_below_one_column_per_width():
    rng = np.random.default_rng(0)
    weights = {d: (ac.softmax(rng.normal(size=10) * d), ac.softmax(rng.normal(size=10)))
               for d in (1, 64, 1024)}
    fig = nb03.plot_saturation_small_multiples(weights, seed=7)
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    axes = np.array(fig.axes).reshape(2, 3)
    for col, (d, (raw, scaled)) in enumerate(weights.items()):
        assert np.array_equal(_bars(axes[0, col]), raw) and np.array_equal(_bars(axes[1, col]), scaled)
        assert axes[0, col].get_title() == f"raw, d_k = {d}\nmax {raw.max():.2f}"
    assert fig.get_suptitle().startswith("Seed 7 ")
    plt.close(fig)


def test_saturation_curves_figure_plots_each_number_against_d_k():
    d_ks = 2 ** np.arange(4)
    rng = np.random.default_rng(1)
    curves = {name: {key: rng.random(4) for key in ("max_weight", "entropy", "jacobian_norm")}
              for name in ("unscaled", "scaled")}
    fig = nb03.plot_saturation_curves(d_ks, curves, m=10)
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    for ax, key in zip(fig.axes, ("max_weight", "entropy", "jacobian_norm"), strict=True):
        raw, scaled = ax.lines[:2]
        assert np.array_equal(raw.get_xdata(), d_ks) and np.array_equal(raw.get_ydata(), curves["unscaled"][key])
        assert np.array_equal(scaled.get_ydata(), curves["scaled"][key])
    assert np.allclose(fig.axes[0].lines[2].get_ydata(), 0.1)  # uniform: 1/m
    assert np.allclose(fig.axes[1].lines[2].get_ydata(), np.log(10))  # uniform: ln m
    plt.close(fig)


def test_histograms_compare_raw_with_N_0_d_k_and_scaled_with_N_0_1():
    rng = np.random.default_rng(0)
    samples = {d: rng.normal(size=(2000, d)).sum(axis=1) for d in (4, 64)}  # variance d
    fig = nb03.plot_score_histograms(samples)
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    axes = np.array(fig.axes).reshape(2, 2)
    for col, d in enumerate((4, 64)):
        for row, var in ((0, d), (1, 1.0)):
            (pdf,) = axes[row, col].lines
            assert np.isclose(pdf.get_ydata().max(), 1 / np.sqrt(2 * np.pi * var), rtol=1e-3)
            shown = samples[d] if row == 0 else samples[d] / np.sqrt(d)
            labels = [t.get_text() for t in axes[row, col].get_legend().get_texts()]
            assert f"samples, var {shown.var():.1f}" in labels and f"N(0, {var:g}) density" in labels
    plt.close(fig)


# --- the live figure: it shows what the notebook's functions compute ----------------

def _scores_for(d_k):
    """Stand-in for the notebook's draw: ten scores that grow with d_k."""
    return np.linspace(-1.0, 1.0, 10) * np.sqrt(d_k) * 3


def _saturation(x):
    """Stand-in for the notebook's measure: numbers the widget cannot have computed itself."""
    return {"max_weight": x.max(), "entropy": x.min(), "jacobian_norm": x.size / 100}


@pytest.fixture
def live():
    live = nb03.LiveSaturation(_scores_for, _saturation)
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    return live


def test_live_saturation_draws_both_softmaxes_of_the_given_scores(live):
    text = live.update(d_k=64)
    s = _scores_for(64)
    assert np.allclose(_bars(live.axes["raw"]), ac.softmax(s))
    assert np.allclose(_bars(live.axes["scaled"]), ac.softmax(s / 8))
    assert text.splitlines() == [
        "d_k = 64, std of q.k = sqrt(d_k) = 8.0",
        "   raw: max weight 24.000, entropy -24.000 nats, ||J|| 0.100",
        "scaled: max weight 3.000, entropy -3.000 nats, ||J|| 0.100",
    ]
    assert live.axes["scaled"].get_title().endswith("\nmax weight 3.000, entropy -3.000 nats, ||J|| 0.100")
    live.update(d_k=1)  # sqrt(1) = 1: both panels the same
    assert np.allclose(_bars(live.axes["raw"]), _bars(live.axes["scaled"]))
    assert "d_k = 1\n" in live.axes["raw"].get_title()


def test_live_saturation_takes_its_width_from_the_scores():
    live = nb03.LiveSaturation(lambda d_k: np.zeros(4), _saturation)
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    assert len(live.bars["raw"]) == 4 and np.allclose(_bars(live.axes["raw"]), 0)
    live.update(d_k=16)
    assert np.allclose(_bars(live.axes["raw"]), 0.25)


def test_live_saturation_updates_in_place_and_renders(live):
    bars = list(live.bars["raw"])
    n_axes = len(live.fig.axes)
    live.render(d_k=4)
    text, png = live.render(d_k=1024)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and "d_k = 1024" in text
    assert list(live.bars["raw"]) == bars and len(live.fig.axes) == n_axes


# --- self-checks ----------------------------------------------------------------

@pytest.mark.parametrize("answer, status, mistake", [
    (..., checks.UNANSWERED, None), (64, checks.CORRECT, None), (8, checks.MISTAKE, "var_std_for_variance"),
    (1, checks.MISTAKE, "var_after_scaling"), (3, checks.WRONG, None), ([64, 64], checks.WRONG, None)])
def test_check_dot_product_variance(answer, status, mistake):
    v = nb03.check_dot_product_variance(answer, d_k=64)
    assert (v.status, v.mistake) == (status, mistake)


@pytest.mark.parametrize("answer, status, mistake", [
    (..., checks.UNANSWERED, None), (1, checks.CORRECT, None), (64, checks.MISTAKE, "var_before_scaling"),
    (8, checks.MISTAKE, "var_divided_by_sqrt"), (0.5, checks.WRONG, None)])
def test_check_dot_product_variance_scaled(answer, status, mistake):
    v = nb03.check_dot_product_variance(answer, d_k=64, scaled=True)
    assert (v.status, v.mistake) == (status, mistake)


@pytest.mark.parametrize("answer, status, mistake", [
    (..., checks.UNANSWERED, None), ("b", checks.CORRECT, None), (" B ", checks.CORRECT, None),
    ("a", checks.MISTAKE, "why_scale_length_myth"), ("c", checks.MISTAKE, "why_scale_row_sums"),
    ("d", checks.WRONG, None)])
def test_check_why_scale(answer, status, mistake):
    v = nb03.check_why_scale(answer)
    assert (v.status, v.mistake) == (status, mistake)
    assert repr(v) == v.message


# every mistake of notebook 03's own checks: registry key -> the check with an answer that makes it
MISTAKEN_ANSWERS = {
    "var_std_for_variance": lambda d_k: nb03.check_dot_product_variance(np.sqrt(d_k), d_k),
    "var_after_scaling": lambda d_k: nb03.check_dot_product_variance(1, d_k),
    "var_before_scaling": lambda d_k: nb03.check_dot_product_variance(d_k, d_k, scaled=True),
    "var_divided_by_sqrt": lambda d_k: nb03.check_dot_product_variance(np.sqrt(d_k), d_k, scaled=True),
    "why_scale_length_myth": lambda d_k: nb03.check_why_scale("a"),
    "why_scale_row_sums": lambda d_k: nb03.check_why_scale("C"),
}


@pytest.mark.parametrize("key", MISTAKEN_ANSWERS)
@pytest.mark.parametrize("d_k", [4, 64, 512])
def test_every_mistake_is_a_registered_03_mistake_and_is_named(key, d_k):
    assert checks.MISTAKES[key].notebook == "03"
    v = MISTAKEN_ANSWERS[key](d_k)
    assert (v.status, v.mistake) == (checks.MISTAKE, key), v.message
    _, why = checks.named(key)
    assert v.message.endswith(checks.sentence(why) if key != "why_scale_row_sums" else why)


def test_variance_mistakes_quote_their_label_in_the_classic_wording():
    v = nb03.check_dot_product_variance(8, d_k=64)
    assert v.message.startswith('Not quite: this is the classic mistake "the standard deviation '
                                'sqrt(d_k)". The variance of a sum of d_k')


def test_why_scale_mistakes_keep_their_own_wording():
    assert nb03.check_why_scale("a").message == (
        "Not quite: that is the myth 'it only normalises vector length'. Dividing the score by "
        "sqrt(d_k) leaves q and k as they are (their length is about sqrt(d_k) each, and "
        "q.k / sqrt(d_k) is not a cosine): the scale acts on the scores, not on the vectors.")
    assert nb03.check_why_scale("c").message == (
        "Not quite: the softmax already makes every row sum to 1, with or without the scale. "
        "Look at what the scale does to the scores the softmax receives.")


def test_weights_check_of_the_notebook_recognises_the_scaling_mistakes():
    rng = np.random.default_rng(3)
    Q, K = rng.normal(size=(2, 4)), rng.normal(size=(3, 4))  # as in the notebook
    S = Q @ K.T
    assert checks.check_weights(ac.softmax(S / 2.0), Q, K).ok
    for wrong, key in ((ac.softmax(S), "no_scaling"), (ac.softmax(S) / 2.0, "scale_after_softmax"),
                       (ac.softmax(S / 4.0), "divide_by_d_k")):
        assert checks.check_weights(wrong, Q, K).mistake == key
    assert checks.check_weights(np.round(ac.softmax(S / 2.0), 4), Q, K).ok  # 4 decimals are enough


def test_weights_check_of_the_notebook_names_transposed_scores():
    rng = np.random.default_rng(3)
    Q, K = rng.normal(size=(2, 4)), rng.normal(size=(3, 4))  # n = 2 queries, m = 3 keys
    v = checks.check_weights(ac.softmax(K @ Q.T / 2.0), Q, K)  # (m, n): not square
    assert v.mistake == "transposed_scores" and "K Q^T" in v.message, v.message
    assert checks.check_weights(ac.attention_weights(Q, K).T, Q, K).mistake == "transposed_weights"


def test_check_dot_product_variance_takes_4_decimals():
    assert nb03.check_dot_product_variance(1.00004, d_k=64, scaled=True).ok
    assert nb03.check_dot_product_variance(64, d_k=64).message == \
        "Correct: the Var[q.k] for d_k = 64 is 64 (within 1e-4)."


# --- the Japanese edition --------------------------------------------------------

_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")  # kana or kanji
_ENGLISH_RUN = re.compile(r"[A-Za-z]{2,}(?: [A-Za-z]{2,}){2,}")  # three English words in a row


def _japanese(text: str) -> bool:
    return bool(_JAPANESE.search(text)) and not _ENGLISH_RUN.search(text)


def _figure_texts(fig):
    texts = [fig.get_suptitle()] + [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    for ax in fig.axes:
        texts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        if ax.get_legend():
            texts += [t.get_text() for t in ax.get_legend().get_texts()]
    def words(text):  # what is left without formulas and symbols, the same in every language
        return re.sub(r"\$[^$]*\$|softmax|d_k", "", text)

    return [t for t in texts if re.search(r"[^\W\d_]", words(t))]


def test_figures_live_figure_choices_and_verdicts_in_japanese():
    """In notebooks/ja/03 every figure, the widget's texts, the printed choices and the verdicts
    come out in Japanese, and the figures still fit (needs locale/ja/LC_MESSAGES/course.po with
    the translations of course/nb03_*.py)."""
    from course import i18n
    rng = np.random.default_rng(0)
    d_ks = 2 ** np.arange(11)
    curves = {name: {key: rng.random(11) for key in ("max_weight", "entropy", "jacobian_norm")}
              for name in ("unscaled", "scaled")}
    with i18n.language_as("ja"):
        figs = [nb03.plot_saturation_curves(d_ks, curves),
                nb03.plot_score_histograms({d: rng.normal(size=(500, d)).sum(axis=1)
                                            for d in (4, 64, 512)}),
                nb03.plot_ten_key_softmax(np.eye(10)[3], np.full(10, 0.1), 512),
                nb03.plot_saturation_small_multiples(
                    {d: (ac.softmax(rng.normal(size=10) * d), ac.softmax(rng.normal(size=10)))
                     for d in (1, 16, 64, 256, 1024)})]
        for fig in figs:
            assert not figures.layout_problems(fig), figures.layout_problems(fig)
            texts = _figure_texts(fig)
            assert texts and all(_japanese(t) for t in texts), texts
        assert figs[0].axes[2].get_title() == "ヤコビ行列のノルム (勾配の大きさ)"
        assert figs[3].axes[5].get_title().startswith("スケーリング後、d_k = 1\n最大 0.")
        live = nb03.LiveSaturation(_scores_for, _saturation)
        text = live.update(d_k=1024)
        assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
        assert text.splitlines()[1:] == [
            "スケーリングなし: 最大の重み 96.000、エントロピー -96.000 ナット、||J|| 0.100",
            "スケーリングあり: 最大の重み 3.000、エントロピー -3.000 ナット、||J|| 0.100"]
        assert live.axes["raw"].get_title().endswith("\n最大の重み 96.000、エントロピー -96.000 ナット、||J|| 0.100")
        choices = dict(nb03.WHY_SCALE_CHOICES)
        verdicts = [nb03.check_dot_product_variance(64, d_k=64),
                    nb03.check_dot_product_variance(8, d_k=64),
                    nb03.check_dot_product_variance([1, 2], d_k=64, scaled=True),
                    nb03.check_why_scale(...), nb03.check_why_scale("b"), nb03.check_why_scale("a"),
                    nb03.check_why_scale("c"), nb03.check_why_scale("d")]
    assert list(choices) == ["a", "b", "c"] and all(_japanese(t) for t in choices.values()), choices
    assert nb03.WHY_SCALE_CHOICES["b"].startswith("it keeps the variance")  # English again outside
    messages = [v.message for v in verdicts]
    assert all(_japanese(m) and "{" not in m for m in messages), messages
    assert messages[0] == "正解です: d_k = 64 のときの Var[q.k] = 64 (誤差 1e-4 以内)。"
    assert messages[5].startswith("不正解: それは「ベクトルの長さを正規化しているだけ」という誤解です。")
