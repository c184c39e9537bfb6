"""Tests for what notebook 08 (the Transformer block) adds to the shared modules."""

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_core as ac
from course import checks
from course import nb08_transformer_block as nb08
from course.live import interactive

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "08_transformer_block.ipynb"
SRC, TGT = ["私", "は", "猫", "が", "好き"], ["<s>", "I", "like", "cats"]


@pytest.fixture(scope="module")
def model():
    d_model, h, d_ff, m, n = 8, 2, 32, 5, 4
    rng = np.random.default_rng(0)
    enc = [ac.init_encoder_layer(d_model, h, d_ff, rng) for _ in range(2)]
    dec = [ac.init_decoder_layer(d_model, h, d_ff, rng) for _ in range(2)]
    X = rng.normal(size=(m, d_model))
    Y = rng.normal(size=(n, d_model))
    memory = ac.encode(X, enc)
    return dict(enc=enc, dec=dec, X=X, Y=Y, memory=memory)


# --- plots -------------------------------------------------------------------

def test_decoder_attention_maps_match_core(model):
    out, self_w, cross_w = nb08.decoder_attention_maps(model["Y"], model["memory"], model["dec"])
    assert np.allclose(out, ac.decode(model["Y"], model["memory"], model["dec"]))
    assert [w.shape for w in self_w] == [(2, 4, 4)] * 2
    assert [w.shape for w in cross_w] == [(2, 4, 5)] * 2
    for w in self_w:
        assert np.all(np.triu(w, k=1) == 0.0)  # causal by default
    for w in self_w + cross_w:
        assert np.allclose(w.sum(axis=-1), 1.0)


def test_decoder_attention_maps_first_layer_weights(model):
    p = model["dec"][0]
    s = p.self_attn
    _, w = ac.multi_head_attention(model["Y"], model["Y"], s.W_Q, s.W_K, s.W_V, s.W_O, 2,
                                   ac.causal_mask(4))
    _, self_w, _ = nb08.decoder_attention_maps(model["Y"], model["memory"], model["dec"])
    assert np.allclose(self_w[0], w)


def test_live_decoder_attention_text_and_artists(model):
    _, self_w, cross_w = nb08.decoder_attention_maps(model["Y"], model["memory"], model["dec"])
    live = nb08.LiveDecoderAttention(self_w, cross_w, TGT, SRC)
    text = live.update(layer=2, head=1, position=2)
    assert text.startswith("decoder layer 2, head 1, position 2 (like)")
    row_c = ", ".join(f"{k}:{w:.2f}" for k, w in zip(SRC, cross_w[1][1, 2], strict=True))
    assert row_c in text
    assert "cats:0.00" in text  # the future position is masked
    assert "row sums: 1.0000 and 1.0000" in text
    assert np.allclose(live.im_c.get_array(), cross_w[1][1])
    assert np.allclose(live.im_s.get_array(), self_w[1][1])
    assert live.rect_s.get_y() == pytest.approx(1.5)
    assert live.txt_c[2][4].get_text() == f"{cross_w[1][1, 2, 4]:.2f}"
    live.update(layer=1, head=0, position=0)
    assert live.rect_c.get_y() == pytest.approx(-0.5)
    assert live.png()[:8] == b"\x89PNG\r\n\x1a\n"


def test_interactive_wires_three_controls(model):
    import ipywidgets as widgets
    _, self_w, cross_w = nb08.decoder_attention_maps(model["Y"], model["memory"], model["dec"])
    live = nb08.LiveDecoderAttention(self_w, cross_w, TGT, SRC)
    pos = widgets.IntSlider(min=0, max=3, value=0, description="t")
    box = interactive(live, layer=widgets.ToggleButtons(options=[1, 2], value=1),
                         head=widgets.ToggleButtons(options=[0, 1], value=0), position=pos)
    pos.value = 3
    assert "position 3 (cats)" in box.children[1].value


def test_block_attention_grid_draws(model):
    _, self_w, cross_w = nb08.decoder_attention_maps(model["Y"], model["memory"], model["dec"])
    fig = nb08.block_attention_grid(self_w, cross_w, TGT, SRC, head=1)
    heatmaps = [ax for ax in fig.axes if ax.images]
    assert len(heatmaps) == 4
    assert np.allclose(heatmaps[1].images[0].get_array(), cross_w[0][1])
    assert all(ax.get_title() for ax in heatmaps)
    fig.canvas.draw()
    plt.close(fig)


# --- self-checks ---------------------------------------------------------------

def test_cross_kv_source_check(model):
    memory, X, Y = model["memory"], model["X"], model["Y"]
    A = ac.layer_norm(Y, np.ones(8), np.zeros(8))
    assert nb08.check_cross_kv_source(..., memory, (Y, A), X).status == checks.UNANSWERED
    assert nb08.check_cross_kv_source(memory, memory, (Y, A), X).ok
    for dec in (Y, A):
        v = nb08.check_cross_kv_source(dec, memory, (Y, A), X)
        assert v.status == checks.MISTAKE and v.mistake == "kv_from_decoder"
    v = nb08.check_cross_kv_source(X, memory, (Y, A), X)
    assert v.status == checks.MISTAKE and v.mistake == "kv_from_encoder_input"
    assert nb08.check_cross_kv_source(np.zeros((2, 2)), memory, (Y, A), X).status == checks.WRONG
    assert nb08.check_cross_kv_source("encoder", memory, (Y, A), X).status == checks.WRONG


def test_cross_weights_shape_check():
    assert nb08.check_cross_weights_shape(..., 4, 5).status == checks.UNANSWERED
    assert nb08.check_cross_weights_shape((4, 5), 4, 5).ok
    assert nb08.check_cross_weights_shape((2, 4, 5), 4, 5, h=2).ok
    v = nb08.check_cross_weights_shape((5, 4), 4, 5)
    assert v.status == checks.MISTAKE and v.mistake == "cross_weights_transposed"
    v = nb08.check_cross_weights_shape((2, 5, 4), 4, 5, h=2)
    assert v.mistake == "cross_weights_transposed"
    for shape in ((4, 4), (5, 5)):
        assert nb08.check_cross_weights_shape(shape, 4, 5).mistake == "cross_weights_square"
    assert nb08.check_cross_weights_shape((4, 8), 4, 5).status == checks.WRONG
    assert nb08.check_cross_weights_shape("4x5", 4, 5).status == checks.WRONG


def test_cross_weights_shape_of_all_heads_or_a_leading_1():
    v = nb08.check_cross_weights_shape((2, 4, 5), 4, 5)
    assert v.mistake == "cross_weights_all_heads" and "all h = 2 heads" in v.message
    assert "one head, whose weights are (n, m) = (4, 5)" in v.message
    v = nb08.check_cross_weights_shape((1, 4, 5), 4, 5)
    assert v.mistake == "cross_weights_leading_1" and "leading 1" in v.message
    assert "(n, m) = (4, 5)" in v.message


X_LN = np.array([[1.0, 2.0, 3.0, 6.0], [0.0, -1.0, 1.0, 0.0], [2.0, 2.0, 0.0, 0.0]])  # question 3
EPS = 1e-5


def _kv_source(pick):
    """Question 1 on a small model: the answer `pick` chooses among Y, A, memory and X."""
    rng = np.random.default_rng(3)
    X, Y, A, memory = (rng.normal(size=s) for s in [(5, 8), (4, 8), (4, 8), (5, 8)])
    arrays = {"X": X, "Y": Y, "A": A, "memory": memory}
    return nb08.check_cross_kv_source(arrays[pick], memory, decoder_states=(Y, A), encoder_input=X)


# every named mistake of notebook 08, fed in as the answer it produces
MISTAKEN_ANSWERS = {
    "kv_from_decoder": lambda: _kv_source("A"),
    "kv_from_encoder_input": lambda: _kv_source("X"),
    "cross_weights_transposed": lambda: nb08.check_cross_weights_shape((5, 4), 4, 5),
    "cross_weights_square": lambda: nb08.check_cross_weights_shape((5, 5), 4, 5),
    "cross_weights_all_heads": lambda: nb08.check_cross_weights_shape((2, 4, 5), 4, 5),
    "cross_weights_leading_1": lambda: nb08.check_cross_weights_shape((1, 4, 5), 4, 5),
    "layer_norm_columns": lambda: nb08.check_layer_norm(
        (X_LN - X_LN.mean(0)) / np.sqrt(X_LN.var(0) + EPS), X_LN),
    "layer_norm_unbiased_var": lambda: nb08.check_layer_norm(
        (X_LN - X_LN.mean(1, keepdims=True)) / np.sqrt(X_LN.var(1, ddof=1, keepdims=True) + EPS),
        X_LN),
    "layer_norm_std_only": lambda: nb08.check_layer_norm(
        X_LN / np.sqrt(X_LN.var(1, keepdims=True) + EPS), X_LN),
}


@pytest.mark.parametrize("key", MISTAKEN_ANSWERS)
def test_every_named_mistake_is_recognised(key):
    v = MISTAKEN_ANSWERS[key]()
    assert v.status == checks.MISTAKE and v.mistake == key, v.message
    assert checks.MISTAKES[key].label.split("{")[0] in v.message


def test_every_registered_mistake_of_08_is_tested():
    registered = {k for k, m in checks.MISTAKES.items() if m.notebook == "08"}
    assert registered == set(MISTAKEN_ANSWERS)


def test_layer_norm_check():
    right = (X_LN - X_LN.mean(1, keepdims=True)) / np.sqrt(X_LN.var(1, keepdims=True) + EPS)
    assert np.allclose(right, ac.layer_norm(X_LN, np.ones(4), np.zeros(4)))
    assert nb08.check_layer_norm(..., X_LN).status == checks.UNANSWERED
    assert nb08.check_layer_norm(right, X_LN).ok
    no_eps = (X_LN - X_LN.mean(1, keepdims=True)) / X_LN.std(1, keepdims=True)
    assert nb08.check_layer_norm(no_eps, X_LN).ok  # eps is a detail, not a mistake
    assert nb08.check_layer_norm(right + 0.1, X_LN).status == checks.WRONG
