"""Tests for notebook 02 (the worked 3x2 example): hand values, figures, checks, stored outputs."""

import json
import re
import warnings
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_core as ac
from course import checks, figures
from course import nb02_worked_example_3x2 as nb02

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "02_worked_example_3x2.ipynb"
TOKENS = ["私", "は", "猫"]
Z = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
W_Q = np.eye(2)
W_K = np.array([[1.0, 1.0], [1.0, -1.0]])
W_V = np.array([[2.0, 0.0], [0.0, 3.0]])
Q, K, V = Z @ W_Q, Z @ W_K, Z @ W_V
E = np.exp(1 / np.sqrt(2))
R = np.exp(np.sqrt(2))
A_EXACT = np.array([[1 / (2 + E), 1 / (2 + E), E / (2 + E)],
                    [E / (E + 1 / E + 1), (1 / E) / (E + 1 / E + 1), 1 / (E + 1 / E + 1)],
                    [R / (2 * R + 1), 1 / (2 * R + 1), R / (2 * R + 1)]])


# ---------------------------------------------------------------- the hand values

def test_hand_values_match_attention_steps():
    steps = ac.attention_steps(Q, K, V)
    assert np.array_equal(K, [[1, 1], [1, -1], [2, 0]]) and np.array_equal(V, [[2, 0], [0, 3], [2, 3]])
    assert np.array_equal(steps.scores, [[1, 1, 2], [1, -1, 0], [2, 0, 2]])
    assert np.allclose(steps.scaled, np.array([[1, 1, 2], [1, -1, 0], [2, 0, 2]]) / np.sqrt(2))
    assert np.allclose(steps.weights, A_EXACT)
    assert np.allclose(steps.output[0], (1 + E) / (2 + E) * np.array([2, 3]))
    assert np.allclose(steps.output, [[1.5035, 2.2552], [1.7199, 1.2721], [1.7832, 1.6626]], atol=1e-4)
    assert not np.allclose(steps.weights, steps.weights.T)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_column_convention_is_the_transpose(seed):
    rng = np.random.default_rng(seed)
    n, m, d_k, d_v = 3, 4, 2, 5
    q, k, v = rng.normal(size=(n, d_k)), rng.normal(size=(m, d_k)), rng.normal(size=(m, d_v))
    out, w = ac.scaled_dot_product_attention(q, k, v)
    w_c = ac.softmax(k @ q.T / np.sqrt(d_k), axis=0)  # K_c^T Q_c with K_c = k.T, Q_c = q.T
    assert np.allclose(w_c, w.T) and np.allclose(v.T @ w_c, out.T)


# ---------------------------------------------------------------- figures

@pytest.fixture(scope="module")
def live():
    live = nb02.LiveWorkedExample(Z, W_Q, W_K, W_V, TOKENS)
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    return live


def test_live_worked_example_original(live):
    live.update(query=0, w_k22=-1.0)  # its text is printed in the notebook, compared by nbval
    assert np.allclose([b.get_height() for b in live.w_bars], A_EXACT[0])
    contrib = A_EXACT[0][:, None] * V
    assert np.allclose(live.arrows.U, contrib[:, 0]) and np.allclose(live.arrows.V, contrib[:, 1])
    starts = np.asarray(live.arrows.get_offsets())
    assert np.allclose(starts[-1] + contrib[-1], A_EXACT[0] @ V)  # tip to tail ends at o_1
    x, y = live.o_marker.get_data()
    assert np.allclose([x[0], y[0]], A_EXACT[0] @ V)


def test_live_worked_example_changed_W_K_moves_weights_and_arrows_not_values(live):
    text = live.update(query=2, w_k22=-3.0)  # a setting the notebook does not print
    W = W_K.copy()
    W[1, 1] = -3.0
    o, A = ac.scaled_dot_product_attention(Z @ W_Q, Z @ W, Z @ W_V)
    assert not np.allclose(A[2], A_EXACT[2])
    assert np.allclose([b.get_height() for b in live.w_bars], A[2])
    contrib = A[2][:, None] * V  # the values V = Z W_V do not depend on W_K
    assert np.allclose(live.arrows.U, contrib[:, 0]) and np.allclose(live.arrows.V, contrib[:, 1])
    x, y = live.o_marker.get_data()
    assert np.allclose([x[0], y[0]], o[2]) and f"o_3 = ({o[2, 0]:.4f}, {o[2, 1]:.4f})" in text
    assert np.array_equal(W_K, [[1.0, 1.0], [1.0, -1.0]])  # the widget must not change its input


def test_live_worked_example_renders_japanese(live):
    assert not isinstance(live.fig.get_layout_engine(), matplotlib.layout_engine.ConstrainedLayoutEngine)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph (tofu) warns at draw time
        _, png = live.render(query=2, w_k22=0.0)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_contributions_grid_ends_at_outputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = nb02.contributions_grid(V, A_EXACT, TOKENS)
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        fig.canvas.draw()
    assert len(fig.axes) == 3
    for i, ax in enumerate(fig.axes):
        stars = [ln for ln in ax.lines if ln.get_marker() == "*"]
        assert np.allclose(np.ravel(stars[0].get_data()), A_EXACT[i] @ V)
        assert len(ax.collections) >= 3  # three quiver arrows
    plt.close(fig)


def test_figures_fit_in_the_japanese_edition_too():
    """notebooks/ja/02 draws the same figures with translated texts: they must fit the layout."""
    from course import i18n
    with i18n.language_as("ja"):
        fig = nb02.contributions_grid(V, A_EXACT, TOKENS)
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        live = nb02.LiveWorkedExample(Z, W_Q, W_K, W_V, TOKENS)
        live.update(query=2, w_k22=-3.0)
        assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    plt.close(fig)


def test_heatmap_has_no_tofu():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig, _ = figures.attention_heatmap(A_EXACT, TOKENS, TOKENS, title="注意重み A")
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        fig.canvas.draw()
    plt.close(fig)


# ---------------------------------------------------------------- checks

def _softmax_rows(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def test_check_weight_row():
    S = Q @ K.T
    assert nb02.check_weight_row(..., Q, K, i=1).status == checks.UNANSWERED
    assert nb02.check_weight_row(A_EXACT[1], Q, K, i=1).ok
    assert nb02.check_weight_row(np.round(A_EXACT[1], 4), Q, K, i=1).ok  # by hand, 4 decimals
    mistakes = {"no_scaling": _softmax_rows(S)[1], "divide_by_d_k": _softmax_rows(S / 2)[1],
                "scale_after_softmax": _softmax_rows(S)[1] / np.sqrt(2),
                "hand_column_of_A": _softmax_rows(S / np.sqrt(2), axis=0)[1],
                "hand_exp_not_normalised": np.exp(S[1] / np.sqrt(2)),
                "hand_no_softmax": S[1] / np.sqrt(2)}
    for key, answer in mistakes.items():
        verdict = nb02.check_weight_row(np.round(answer, 4), Q, K, i=1)
        assert verdict.mistake == key, (key, verdict)
    assert nb02.check_weight_row([1 / 3] * 3, Q, K, i=1).status == checks.WRONG


def test_check_weight_row_recognises_reading_a_column():
    rng = np.random.default_rng(3)  # a non-symmetric S, so column i of A differs from the rest
    q, k = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    A = ac.attention_weights(q, k)
    assert nb02.check_weight_row(A[:, 0], q, k, i=0).mistake == "transposed_weights"
    v = nb02.check_weight_row(ac.softmax(q @ k.T / np.sqrt(2), axis=0)[0], q, k, i=0)
    assert v.mistake == "hand_softmax_down_columns" and "column sum" in v.message, v.message


def test_check_weight_row_names_both_column_slips_when_S_is_symmetric():
    assert np.allclose(Q @ K.T, (Q @ K.T).T)  # the notebook's S: column i of A = column softmax
    for answer in (A_EXACT[:, 1], _softmax_rows(Q @ K.T / np.sqrt(2), axis=0)[1]):
        v = nb02.check_weight_row(np.round(answer, 4), Q, K, i=1)
        assert v.mistake == "hand_column_of_A", v.message
        assert "column sum" in v.message and "column 2 of A instead of row 2" in v.message


def test_check_output_row():
    S = Q @ K.T
    assert nb02.check_output_row(..., Q, K, V, i=1).status == checks.UNANSWERED
    assert nb02.check_output_row(A_EXACT[1] @ V, Q, K, V, i=1).ok
    mistakes = {"no_scaling": _softmax_rows(S)[1] @ V, "divide_by_d_k": _softmax_rows(S / 2)[1] @ V,
                "hand_mixed_keys": A_EXACT[1] @ K, "hand_plain_mean": V.mean(axis=0)}
    for key, answer in mistakes.items():
        verdict = nb02.check_output_row(np.round(answer, 4), Q, K, V, i=1)
        assert verdict.mistake == key, (key, verdict)
    assert nb02.check_output_row([0.0, 0.0], Q, K, V, i=1).status == checks.WRONG


def _non_symmetric():
    rng = np.random.default_rng(3)  # S = q k^T is not symmetric: the two column slips differ
    return rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2))


def _mistaken_answers():
    """registry key -> (verdict for the mistaken answer, the row number shown in the text)."""
    S = Q @ K.T
    q, k, v = _non_symmetric()
    col = ac.softmax(q @ k.T / np.sqrt(2), axis=0)
    return {
        "hand_softmax_down_columns": (nb02.check_weight_row(col[2], q, k, i=2), 3),
        "hand_column_of_A": (nb02.check_weight_row(A_EXACT[:, 0], Q, K, i=0), 1),
        "hand_exp_not_normalised": (nb02.check_weight_row(np.exp(S[2] / np.sqrt(2)), Q, K, i=2), 3),
        "hand_no_softmax": (nb02.check_weight_row(S[0] / np.sqrt(2), Q, K, i=0), 1),
        "hand_mixed_keys": (nb02.check_output_row(A_EXACT[2] @ K, Q, K, V, i=2), 3),
        "hand_plain_mean": (nb02.check_output_row(V.mean(axis=0), Q, K, V, i=0), 1),
    }


@pytest.mark.parametrize("key", list(_mistaken_answers()))
def test_every_mistake_is_a_registered_02_mistake_and_is_named(key):
    assert checks.MISTAKES[key].notebook == "02"
    v, row = _mistaken_answers()[key]
    assert (v.status, v.mistake) == (checks.MISTAKE, key), v.message
    label, why = checks.named(key, i=row)
    assert f'the classic mistake "{label}". {checks.sentence(why)}' in v.message, v.message


def test_column_slips_carry_into_the_output_under_the_same_key():
    q, k, v = _non_symmetric()
    col = ac.softmax(q @ k.T / np.sqrt(2), axis=0)
    assert nb02.check_output_row(col[1] @ v, q, k, v, i=1).mistake == "hand_softmax_down_columns"
    verdict = nb02.check_output_row(A_EXACT[:, 1] @ V, Q, K, V, i=1)
    assert verdict.mistake == "hand_column_of_A" and "(or column 2 of A)" in verdict.message
    # not weights: the check does not offer "outputs" of exp() alone or of the bare scores
    S = Q @ K.T
    for answer in (np.exp(S[1] / np.sqrt(2)) @ V, S[1] / np.sqrt(2) @ V):
        assert nb02.check_output_row(answer, Q, K, V, i=1).status == checks.WRONG


# ---------------------------------------------------------------- the stored notebook

def _cells():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def test_notebook_checks_every_step_against_the_core():
    sources = ["".join(c["source"]) for c in _cells()]
    assert any("ac.attention_steps(" in s and "steps.output" in s for s in sources)


# ---------------------------------------------------------------- the Japanese edition

_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")  # kana or kanji
_ENGLISH_RUN = re.compile(r"[A-Za-z]{2,}(?: [A-Za-z]{2,}){2,}")  # three English words in a row


def test_figures_and_verdicts_in_japanese():
    """In notebooks/ja/02 the figures and the verdicts come out in Japanese (needs
    locale/ja/LC_MESSAGES/course.po with the translations of course/nb02_*.py)."""
    from course import i18n
    with i18n.language_as("ja"):
        fig = nb02.contributions_grid(V, A_EXACT, TOKENS)
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        ax = fig.axes[0]
        assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == (
            "クエリ「私」 (i = 1)", "バリューの特徴量 1", "バリューの特徴量 2")
        assert _JAPANESE.search(fig.get_suptitle())
        plt.close(fig)
        live = nb02.LiveWorkedExample(Z, W_Q, W_K, W_V, TOKENS)
        text = live.update(query=2, w_k22=-3.0)
        assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
        assert text.startswith("クエリ「猫」 (i=3)") and "\n寄与 a_ij v_j: " in text, text
        assert (live.ax_w.get_xlabel(), live.ax_w.get_ylabel()) == ("キーのトークン $j$",
                                                                    "注意重み $a_{ij}$")
        verdicts = [nb02.check_weight_row(..., Q, K, i=1), nb02.check_weight_row([1 / 3] * 3, Q, K, i=1),
                    nb02.check_weight_row(A_EXACT[:, 1], Q, K, i=1),
                    nb02.check_output_row(A_EXACT[1] @ V, Q, K, V, i=1),
                    nb02.check_output_row([0.0, 0.0], Q, K, V, i=1)]
    messages = [v.message for v in verdicts]
    assert all(_JAPANESE.search(m) and not _ENGLISH_RUN.search(m) and "{" not in m
               for m in messages), messages
    assert "クエリの 2 行目の重み" in messages[0] and "ソフトマックスをとります" in messages[1], messages
    assert "A の第 2 行ではなく第 2 列" in messages[2] and "出力 o_2" in messages[3], messages
