"""Tests for notebook 01 (Q, K, V projections): its figures, its live figure and its checks."""

import re
import warnings

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_core as ac
from course import checks, figures
from course import nb01_qkv_projections as nb01

BOOKS = ["Cat care", "Dog training", "Cat myths", "Astronomy", "Pet budget"]
CONTENTS = ["feeding", "training", "stars", "costs"]
K_BOOKS = np.array([[2, 2, 0, 0], [0, 2, 0, 0], [2, 0, 0, 0], [0, 0, 2, 0], [0, 1, 0, 2]], float)
V_BOOKS = np.array([[1.0, 0.3, 0, 0.2], [0.2, 1.0, 0, 0.1], [0.1, 0, 0.2, 0], [0, 0, 1.0, 0],
                    [0.3, 0, 0, 1.0]])
QUERIES = {"keep a cat": np.array([1.0, 1, 0, 0]), "cost of a cat": np.array([1.0, 0, 0, 1])}


def by_hand(q, keys):
    s = keys @ q / np.sqrt(keys.shape[1])
    e = np.exp(s)
    return e / e.sum()


# ---------------------------------------------------------------- figures

@pytest.fixture(scope="module")
def live():
    live = nb01.LiveLibrary(QUERIES, K_BOOKS, V_BOOKS, BOOKS, CONTENTS)
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    return live


def test_live_library_numbers(live):
    text = live.update(query="keep a cat", strength=1.0)
    w = by_hand(QUERIES["keep a cat"], K_BOOKS)
    assert np.allclose(w, [0.4775, 0.1757, 0.1757, 0.0646, 0.1065], atol=1e-4)
    assert "Cat care 0.477" in text or "Cat care 0.478" in text
    assert np.allclose([b.get_height() for b in live.w_bars], w)
    assert np.allclose([b.get_height() for b in live.o_bars], w @ V_BOOKS)
    assert f"feeding {(w @ V_BOOKS)[0]:.3f}" in text


def test_live_library_strength_sharpens(live):
    live.update(query="keep a cat", strength=8.0)
    heights = np.array([b.get_height() for b in live.w_bars])
    assert heights[0] > 0.99 and np.isclose(heights.sum(), 1.0)
    live.update(query="cost of a cat", strength=4.0)  # three-way tie stays a tie
    heights = np.array([b.get_height() for b in live.w_bars])
    assert np.allclose(heights[[0, 2, 4]], heights[0]) and heights[1] < 0.01


def test_live_library_layout_frozen_and_renders(live):
    assert not isinstance(live.fig.get_layout_engine(), matplotlib.layout_engine.ConstrainedLayoutEngine)
    text, png = live.render(query="cost of a cat", strength=2.0)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and "Pet budget 0.306" in text


def test_library_weights_grid_draws_the_weights_it_is_given():
    rng = np.random.default_rng(0)
    weights = {name: rng.dirichlet(np.ones(5), size=3) for name in ("a", "b")}  # 3 strengths each
    fig = nb01.library_weights_grid(weights, BOOKS, strengths=(1.0, 2.0, 4.0))
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    assert len(fig.axes) == 2
    for ax, (name, w) in zip(fig.axes, weights.items(), strict=True):
        heights = np.array([p.get_height() for p in ax.patches]).reshape(3, 5)
        assert np.array_equal(heights, w) and ax.get_title() == f"query: {name}"
        assert [t.get_text() for t in ax.get_xticklabels()] == BOOKS
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["strength c = 1", "strength c = 2", "strength c = 4"]
    plt.close(fig)


def test_heatmap_pair_shows_both_matrices_and_japanese_glyphs():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 8))
    _, A = ac.scaled_dot_product_attention(X, X, X)
    B = np.full((5, 5), 0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph (tofu) warns at draw time
        fig = nb01.heatmap_pair(A, B, ["私", "は", "はし", "で", "食べる"], titles=("a", "b"),
                              suptitle="注意重み")
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        fig.canvas.draw()
    images = [ax.images[0].get_array() for ax in fig.axes if ax.images]
    assert np.allclose(images[0], A) and np.allclose(images[1], B)
    plt.close(fig)


def test_figures_fit_in_the_japanese_edition_too():
    """notebooks/ja/01 draws the same figures with translated texts: they must fit the layout."""
    from course import i18n
    rng = np.random.default_rng(0)
    with i18n.language_as("ja"):
        fig = nb01.library_weights_grid({name: rng.dirichlet(np.ones(5), size=2) for name in
                                         ("keep a cat", "pets in general", "the stars", "cost")},
                                        BOOKS)
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        plt.close(fig)
        fig = nb01.heatmap_pair(np.eye(5), np.full((5, 5), 0.2), ["私", "は", "はし", "で", "食べる"],
                                titles=("Q = K = V = X", "W_Q, W_K"), suptitle="注意重み A")
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        plt.close(fig)
        live = nb01.LiveLibrary(QUERIES, K_BOOKS, V_BOOKS, BOOKS, CONTENTS)
        live.update(query="cost of a cat", strength=8.0)
        assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)


# ---------------------------------------------------------------- checks

def test_check_qkv_shapes():
    args = dict(n=5, d_model=8, d_k=4, d_v=3)
    assert nb01.check_qkv_shapes(..., **args).status == checks.UNANSWERED
    assert nb01.check_qkv_shapes(((5, 4), (5, 4), (5, 3)), **args).ok
    mistakes = {"weight_shapes": ((8, 4), (8, 4), (8, 3)), "V_uses_d_k": ((5, 4), (5, 4), (5, 4)),
                "column_convention": ((4, 5), (4, 5), (3, 5)),
                "no_projection": ((5, 8), (5, 8), (5, 8))}
    for key, answer in mistakes.items():
        verdict = nb01.check_qkv_shapes(answer, **args)
        assert verdict.mistake == key, (key, verdict)
    assert nb01.check_qkv_shapes(((5, 4), (5, 3), (5, 3)), **args).status == checks.WRONG
    assert nb01.check_qkv_shapes("5x4", **args).status == checks.WRONG


def test_check_symmetric_scores():
    assert nb01.check_symmetric_scores(...).status == checks.UNANSWERED
    assert nb01.check_symmetric_scores(True).ok
    assert nb01.check_symmetric_scores(False).status == checks.WRONG
    assert nb01.check_symmetric_scores("yes").status == checks.WRONG
    assert "symmetric for every X only if W_Q W_K^T is" in nb01.check_symmetric_scores(True).message


def test_check_library_weights():
    q = QUERIES["cost of a cat"]
    d_k = 4
    s = K_BOOKS @ q
    right = by_hand(q, K_BOOKS)
    assert np.allclose(right[[0, 2, 4]], np.e / (3 * np.e + 2))
    assert nb01.check_library_weights(..., q, K_BOOKS).status == checks.UNANSWERED
    assert nb01.check_library_weights(np.round(right, 6), q, K_BOOKS).ok
    softmax = lambda x: np.exp(x) / np.exp(x).sum()  # noqa: E731
    mistakes = {"no_scaling": softmax(s), "divide_by_d_k": softmax(s / d_k),
                "scale_after_softmax": softmax(s) / np.sqrt(d_k),
                "softmax_wrong_axis": np.ones(5), "library_picked_one_book": np.eye(5)[0],
                "library_no_softmax": s / np.sqrt(d_k)}
    for key, answer in mistakes.items():
        verdict = nb01.check_library_weights(answer, q, K_BOOKS)
        assert verdict.mistake == key, (key, verdict)
    assert nb01.check_library_weights(np.full(5, 0.2), q, K_BOOKS).status == checks.WRONG


def test_check_library_weights_accepts_4_decimals_and_a_row():
    q = QUERIES["cost of a cat"]
    right = by_hand(q, K_BOOKS)
    assert nb01.check_library_weights(np.round(right, 4), q, K_BOOKS).ok
    assert nb01.check_library_weights(np.round(right, 3), q, K_BOOKS).ok
    assert nb01.check_library_weights(right[None, :], q, K_BOOKS).ok  # (1, m), as q[None, :] gives
    assert nb01.check_library_weights(np.eye(5)[None, 0], q, K_BOOKS).mistake == "library_picked_one_book"


@pytest.mark.parametrize("book", [0, 2, 4])
def test_check_library_weights_knows_any_of_the_tied_best_books(book):
    v = nb01.check_library_weights(np.eye(5)[book], QUERIES["cost of a cat"], K_BOOKS)
    assert v.mistake == "library_picked_one_book" and "3 books tie" in v.message, v.message


def test_check_library_weights_names_the_hard_maximum():
    v = nb01.check_library_weights([1 / 3, 0, 1 / 3, 0, 1 / 3], QUERIES["cost of a cat"], K_BOOKS)
    assert v.mistake == "library_hard_max" and "hard maximum (argmax)" in v.message, v.message
    v = nb01.check_library_weights(np.eye(5)[0], QUERIES["keep a cat"], K_BOOKS)  # one best book
    assert v.mistake == "library_picked_one_book" and "tie" not in v.message


def _section_3_qkv():
    """Q, K, V of the notebook's section 3: n = 3, d_model = 6, d_k = 4, d_v = 2."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3, 6))
    W_Q, W_K, W_V = (rng.normal(size=(6, d)) / np.sqrt(6) for d in (4, 4, 2))
    return X @ W_Q, X @ W_K, X @ W_V


def test_check_raw_scores():
    Q, K, V = _section_3_qkv()
    assert nb01.check_raw_scores(..., Q, K, V).status == checks.UNANSWERED
    assert nb01.check_raw_scores(Q @ K.T, Q, K, V).ok
    assert nb01.check_raw_scores(np.round(Q @ K.T, 4), Q, K, V).ok
    assert nb01.check_raw_scores(K @ Q.T, Q, K, V).mistake == "transposed_scores"
    v = nb01.check_raw_scores(Q @ K.T / 2, Q, K, V)  # scaled by 1/sqrt(d_k): not what was asked
    assert v.status == checks.WRONG and "before any scaling" in v.message, v.message
    v = nb01.check_raw_scores(V @ V.T, Q, K, V)
    assert 'the classic mistake "comparing V with V"' in v.message and "O = A V" in v.message


# every mistake of notebook 01's own checks: registry key -> a verdict for the mistaken answer
SHAPES = dict(n=5, d_model=8, d_k=4, d_v=3)
COST = QUERIES["cost of a cat"]
MISTAKEN_ANSWERS = {
    "weight_shapes": lambda: nb01.check_qkv_shapes(((8, 4), (8, 4), (8, 3)), **SHAPES),
    "V_uses_d_k": lambda: nb01.check_qkv_shapes(((5, 4), (5, 4), (5, 4)), **SHAPES),
    "column_convention": lambda: nb01.check_qkv_shapes(((4, 5), (4, 5), (3, 5)), **SHAPES),
    "no_projection": lambda: nb01.check_qkv_shapes(((5, 8),) * 3, **SHAPES),
    "library_picked_one_book": lambda: nb01.check_library_weights(np.eye(5)[2], COST, K_BOOKS),
    "library_hard_max": lambda: nb01.check_library_weights([1 / 3, 0, 1 / 3, 0, 1 / 3], COST, K_BOOKS),
    "library_no_softmax": lambda: nb01.check_library_weights(K_BOOKS @ COST / 2, COST, K_BOOKS),
    "scores_compare_values": lambda: nb01.check_raw_scores(
        (lambda Q, K, V: V @ V.T)(*_section_3_qkv()), *_section_3_qkv()),
    "scores_compare_queries": lambda: nb01.check_raw_scores(
        (lambda Q, K, V: Q @ Q.T)(*_section_3_qkv()), *_section_3_qkv()),
}


@pytest.mark.parametrize("key", MISTAKEN_ANSWERS)
def test_every_mistake_is_a_registered_01_mistake_and_is_named(key):
    assert checks.MISTAKES[key].notebook == "01"
    v = MISTAKEN_ANSWERS[key]()
    assert (v.status, v.mistake) == (checks.MISTAKE, key), v.message
    label, why = checks.named(key, tie=" (here 3 books tie for the best score)", count=3)
    assert label in v.message and v.message.endswith(checks.sentence(why)), v.message


def test_best_book_mistakes_fill_in_the_tie():
    v = nb01.check_library_weights(np.eye(5)[2], COST, K_BOOKS)
    assert "Attention does not choose one book (here 3 books tie for the best score): it mixes" in v.message
    v = nb01.check_library_weights([1 / 3, 0, 1 / 3, 0, 1 / 3], COST, K_BOOKS)
    assert "sharing the weight equally among the 3 best books is what" in v.message.lower()
    assert "{" not in v.message


# ---------------------------------------------------------------- the Japanese edition

_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")  # kana or kanji
_ENGLISH_RUN = re.compile(r"[A-Za-z]{2,}(?: [A-Za-z]{2,}){2,}")  # three English words in a row


def _japanese(text: str) -> bool:
    """Japanese, with no English phrase left (book labels and code names aside)."""
    for name in BOOKS + CONTENTS:
        text = text.replace(name, "")
    return bool(_JAPANESE.search(text)) and not _ENGLISH_RUN.search(text)


def test_figures_live_figure_and_verdicts_in_japanese():
    """In notebooks/ja/01 the figures, the widget's texts and the verdicts come out in Japanese
    (needs locale/ja/LC_MESSAGES/course.po with the translations of course/nb01_*.py)."""
    from course import i18n
    rng = np.random.default_rng(0)
    with i18n.language_as("ja"):
        fig = nb01.library_weights_grid({name: rng.dirichlet(np.ones(5), size=2) for name in
                                         ("keep a cat", "cost of a cat")}, BOOKS)
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        texts = [fig.get_suptitle(), fig.axes[0].get_ylabel(), fig.axes[0].get_xlabel(),
                 *(ax.get_title() for ax in fig.axes), *(t.get_text() for t in fig.legends[0].get_texts())]
        assert all(_japanese(t) for t in texts), texts
        assert fig.axes[1].get_title() == "クエリ: 猫にかかる費用"  # the reader as the widget names it
        plt.close(fig)
        live = nb01.LiveLibrary(QUERIES, K_BOOKS, V_BOOKS, BOOKS, CONTENTS)
        text = live.update(query="cost of a cat", strength=4.0)
        assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
        texts = [text, *(ax.get_title() for ax in live.fig.axes),
                 *(ax.get_xlabel() for ax in live.fig.axes), *(ax.get_ylabel() for ax in live.fig.axes)]
        assert all(_japanese(t) for t in texts), texts
        verdicts = [nb01.check_qkv_shapes(((8, 4), (8, 4), (8, 3)), **SHAPES),
                    nb01.check_qkv_shapes(..., **SHAPES), nb01.check_symmetric_scores(...),
                    nb01.check_library_weights(np.eye(5)[2], COST, K_BOOKS),
                    nb01.check_library_weights(np.full(5, 0.2), COST, K_BOOKS),
                    nb01.check_raw_scores(np.zeros((3, 3)), *_section_3_qkv())]
    messages = [v.message for v in verdicts]
    assert all(_japanese(m) and "{" not in m for m in messages), messages
    assert messages[0].startswith("不正解: ((8, 4), (8, 4), (8, 3)) は「重み行列の形状」"), messages[0]
    assert "(ここでは 3 冊の本が最高スコアで並んでいます)" in messages[3], messages[3]
    assert "本ごとの重み" in messages[4] and "生のスコア S" in messages[5], messages
