"""Tests for notebook 04: the mask helpers, figure, LiveFigure and self-checks of
course/nb04_masking.py.

The leak test and the buggy masks are lesson code in the notebook itself, which asserts what
they show; strict nbval runs it and compares what it prints."""

import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_core as ac
from course import checks, figures
from course import nb04_masking as nb04
from live_frames import blit_mismatches, framed_row


@pytest.fixture
def seed_example():
    """Seed 001: rng = default_rng(0), n=4, d_model=6, d_k=3, d_v=2; X, then W_Q, W_K, W_V."""
    rng = np.random.default_rng(0)
    n, d_model, d_k, d_v = 4, 6, 3, 2
    X = rng.normal(size=(n, d_model))
    W_Q, W_K, W_V = (rng.normal(size=(d_model, d)) for d in (d_k, d_k, d_v))
    return X, W_Q, W_K, W_V


@pytest.fixture
def padded_batch(seed_example):
    _, W_Q, W_K, W_V = seed_example
    X_b = np.random.default_rng(2).normal(size=(3, 4, 6))
    return X_b, W_Q, W_K, W_V, [4, 2, 3]


# --- masks -----------------------------------------------------------------------

def test_mask_for_each_kind():
    lengths = (6, 4, 2)
    assert np.array_equal(nb04.mask_for("none", 6, lengths, 0), np.zeros((6, 6)))
    assert np.array_equal(nb04.mask_for("causal", 6, lengths, 2), ac.causal_mask(6))
    pad = nb04.mask_for("padding", 6, lengths, 1)
    assert pad.shape == (6, 6) and np.all(np.isinf(pad[:, 4:])) and np.all(pad[:, :4] == 0)
    both = nb04.mask_for("both", 6, lengths, 2)
    assert np.array_equal(np.isfinite(both), np.isfinite(ac.causal_mask(6)) & (np.arange(6) < 2))
    with pytest.raises(ValueError, match="kind"):
        nb04.mask_for("future", 6, lengths, 0)


def test_masking_example_shapes_and_scale():
    Q, K = nb04.masking_example(seed=0, lengths=(6, 4, 2))
    assert Q.shape == K.shape == (3, 6, 4)
    assert 0.3 < Q.var() < 3  # entries of variance about 1: weights not saturated


# --- figures ----------------------------------------------------------------------------

def test_plot_mask_patterns_shows_the_core_weights_with_blocked_cells_grey():
    lengths = (6, 4, 2)
    fig = nb04.plot_mask_patterns(lengths=lengths, seed=0)
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    assert len(fig.axes) == 3 * 4 + 1  # 12 panels and a colorbar
    Q, K = nb04.masking_example(0, lengths)
    for b in range(3):
        for c, kind in enumerate(nb04.MASK_KINDS):
            W = fig.axes[4 * b + c].images[0].get_array()  # row b = batch item, column c = kind
            M = nb04.mask_for(kind, 6, lengths, b)
            assert np.array_equal(np.ma.getmaskarray(W), ~np.isfinite(M)), (b, kind)
            assert np.allclose(W.filled(0.0), ac.attention_weights(Q[b], K[b], M)), (b, kind)
    plt.close(fig)


def test_live_mask_update_text_and_artists():
    live = nb04.LiveMask()
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    live.update(position=3, mask="both", item=1)  # its text is in the notebook, compared by nbval
    heights = np.array([b.get_height() for b in live.bars])
    assert np.isclose(heights.sum(), 1) and np.all(heights[4:] == 0)
    Q, K = nb04.masking_example(0, (6, 4, 2))
    M = nb04.mask_for("both", 6, (6, 4, 2), 1)
    A = ac.attention_weights(Q[1], K[1], M)
    assert np.allclose(heights, A[3])
    grey = np.array([b.get_height() for b in live.blocked])  # blocked keys 4, 5 get a grey column
    assert np.all(grey[:4] == 0) and np.all(grey[4:] > 1)
    assert framed_row(live.row_box, live.im) == 3  # the frame around query row 3, as drawn
    text = live.update(position=5, mask="padding", item=2)
    assert "may attend to keys [0, 1]" in text and framed_row(live.row_box, live.im) == 5
    text = live.update(position=0, mask="causal", item=0)
    assert "may attend to keys [0]" in text and "weights [1. 0. 0. 0. 0. 0.]" in text


def test_live_mask_renders_png_without_new_artists():
    live = nb04.LiveMask()
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    bars, image = list(live.bars), live.im
    text, png = live.render(position=2, mask="none", item=0)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and "query 2" in text
    assert list(live.bars) == bars and live.im is image


def test_live_mask_blitted_frame_matches_a_full_draw():
    live = nb04.LiveMask()
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    # the bar panel, exactly (the image panel's edge differs in 6 pixels: image compositing), with
    # the grey columns behind the weight bars as in a full draw
    states = ({"position": 3, "mask": "both", "item": 1}, {"position": 0, "mask": "none", "item": 0})
    assert not blit_mismatches(live, states, tolerance="exact", region=live.ax_bar)


# --- self-checks ---------------------------------------------------------------------------

def _causal_variants(n):
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    return {
        None: ac.causal_mask(n),
        "mask_lower_triangle": ac.causal_mask(n).T,
        "mask_hides_diagonal": np.where(np.triu(np.ones((n, n), dtype=bool)), -np.inf, 0.0),
        "mask_multiplicative": (~future).astype(float),
        "mask_boolean_blocked": future,
        "mask_large_negative": np.where(future, -1e9, 0.0),
        "mask_finfo_min": np.where(future, np.finfo(float).min, 0.0),
        "mask_times_inf": np.where(future, -np.inf, np.nan),  # triu(ones) * -inf: 0 * -inf = NaN
    }


@pytest.mark.parametrize("key", list(_causal_variants(5)))
def test_check_causal_mask_recognises_each_mistake(key):
    v = nb04.check_causal_mask(_causal_variants(5)[key], n=5)
    assert v.mistake == key
    assert v.status == (checks.CORRECT if key is None else checks.MISTAKE)


def test_every_mistake_of_notebook_04_in_the_registry_is_tested():
    """The causal-mask mistakes above, and the lead's shared mask mistakes tested below."""
    shared = {"mask_on_values", "mask_after_softmax", "mask_missing"}
    own = {k for k, m in checks.MISTAKES.items() if m.notebook == "04"}
    assert own == (set(_causal_variants(5)) - {None}) | shared


def test_check_causal_mask_unanswered_and_wrong():
    assert nb04.check_causal_mask(..., n=5).status == checks.UNANSWERED
    assert nb04.check_causal_mask(np.zeros((5, 5)), n=5).status == checks.WRONG
    assert nb04.check_causal_mask(ac.causal_mask(4), n=5).status == checks.WRONG


def test_check_causal_mask_explains_nan_and_finfo_min():
    with np.errstate(invalid="ignore"):
        v = nb04.check_causal_mask(np.triu(np.ones((5, 5)), 1) * -np.inf, n=5)
    assert "0 x -inf is NaN" in v.message and "np.where(" in v.message
    v = nb04.check_causal_mask(np.where(np.triu(np.ones((5, 5)), 1) > 0, np.finfo(float).min, 0.0), 5)
    assert "np.finfo(float).min instead of -inf" in v.message and "uniform" in v.message


@pytest.mark.parametrize("key, fill", [("mask_large_negative", -1e9),
                                       ("mask_finfo_min", np.finfo(float).min)])
def test_a_finite_fill_is_called_a_convention_not_a_mistake(key, fill):
    answer = np.where(np.triu(np.ones((5, 5), dtype=bool), k=1), fill, 0.0)
    v = nb04.check_causal_mask(answer, n=5)
    assert v.mistake == key and v.status == checks.MISTAKE, v.message
    assert v.message.startswith("Same weights, another convention: you wrote "), v.message
    assert "classic mistake" not in v.message and "Not quite" not in v.message
    assert "exactly the same weights" in v.message and "a trade-off, not a bug" in v.message.lower()
    assert "torch.finfo(dtype).min" in v.message and "-np.inf" in v.message


def test_weights_check_recognises_mask_mistakes(seed_example):
    X, W_Q, W_K, _ = seed_example
    Q, K = X @ W_Q, X @ W_K
    M = ac.causal_mask(4)
    unmasked = ac.softmax(Q @ K.T / np.sqrt(3))
    assert checks.check_weights(ac.softmax(Q @ K.T / np.sqrt(3) + M), Q, K, mask=M).ok
    assert checks.check_weights(unmasked * np.isfinite(M), Q, K, mask=M).mistake == "mask_after_softmax"
    assert checks.check_weights(unmasked, Q, K, mask=M).mistake == "mask_missing"
    assert checks.check_weights(ac.softmax(Q @ K.T + M), Q, K, mask=M).mistake == "no_scaling"


def test_attention_check_recognises_masking_v(padded_batch):
    X_b, W_Q, W_K, W_V, lengths = padded_batch
    Q, K, V = X_b @ W_Q, X_b @ W_K, X_b @ W_V
    P = ac.padding_mask(lengths, m=4)
    assert checks.check_attention(ac.scaled_dot_product_attention(Q, K, V, P)[0], Q, K, V, mask=P).ok
    unmasked = ac.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(3))
    masked_v = (unmasked * np.isfinite(P)) @ V
    assert checks.check_attention(masked_v, Q, K, V, mask=P).mistake == "mask_on_values"
    assert checks.check_attention(..., Q, K, V, mask=P).status == checks.UNANSWERED


# --- the Japanese edition ----------------------------------------------------------------

_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")  # kana or kanji
_ENGLISH_RUN = re.compile(r"[A-Za-z]{2,}(?: [A-Za-z]{2,}){2,}")  # three English words in a row


def _japanese(text: str) -> bool:
    return bool(_JAPANESE.search(text)) and not _ENGLISH_RUN.search(text)


def test_figure_live_figure_and_verdicts_in_japanese():
    """In notebooks/ja/04 the mask figure, the widget's texts and the verdicts come out in
    Japanese, and the figures still fit (needs locale/ja/LC_MESSAGES/course.po with the
    translations of course/nb04_masking.py)."""
    from course import i18n
    with i18n.language_as("ja"):
        fig = nb04.plot_mask_patterns(lengths=(6, 4, 2), seed=0)
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        assert [fig.axes[c].get_title() for c in range(4)] == ["なし", "因果", "パディング", "両方"]
        texts = [fig.get_suptitle(), fig.axes[-1].get_ylabel(), fig.axes[8].get_xlabel(),
                 *(fig.axes[4 * b].get_ylabel() for b in range(3))]
        assert all(_japanese(t) for t in texts), texts
        assert fig.axes[4].get_ylabel() == "要素 1 (長さ 4)\nクエリの位置 i"
        plt.close(fig)
        live = nb04.LiveMask()
        text = live.update(position=3, mask="both", item=1)
        assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
        texts = [text, live.ax_im.get_title(), live.ax_bar.get_title(), live.ax_bar.get_xlabel(),
                 live.ax_bar.get_ylabel(), live.ax_im.get_ylabel()]
        assert all(_japanese(t) for t in texts), texts
        assert text.splitlines()[0] == "マスク: 両方、バッチの要素 1 (長さ 4)、クエリ 3"
        assert live.ax_im.get_title() == "マスク: 両方、要素 1 (長さ 4)"
        future = np.triu(np.ones((5, 5), dtype=bool), k=1)
        verdicts = [nb04.check_causal_mask(..., n=5), nb04.check_causal_mask(ac.causal_mask(5), n=5),
                    nb04.check_causal_mask(ac.causal_mask(5).T, n=5),
                    nb04.check_causal_mask(np.where(future, -1e9, 0.0), n=5),
                    nb04.check_causal_mask(np.zeros((5, 5)), n=5)]
    messages = [v.message for v in verdicts]
    assert all(_japanese(m) and "{" not in m for m in messages), messages
    assert "n = 5 の因果マスク" in messages[0] and messages[1].startswith("正解です"), messages
    assert messages[3].startswith("重みは同じで、約束ごとが違うだけです: "), messages[3]
    assert [v.mistake for v in verdicts[2:4]] == ["mask_lower_triangle", "mask_large_negative"]


def test_batch_item_options_name_each_item_and_its_length_in_the_course_language():
    from course import i18n
    assert nb04.batch_item_options([6, 4, 2]) == [("item 0 (length 6)", 0), ("item 1 (length 4)", 1),
                                                  ("item 2 (length 2)", 2)]
    with i18n.language_as("ja"):
        assert nb04.batch_item_options([6, 4]) == [("要素 0 (長さ 6)", 0), ("要素 1 (長さ 4)", 1)]
