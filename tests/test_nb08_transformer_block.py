"""Tests for notebook 08 (the Transformer block): its figures, live figure and self-checks."""

import re
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_core as ac
from course import checks, figures, i18n
from course import nb08_transformer_block as nb08
from course.live import with_controls
from live_frames import framed_row

SRC, TGT = ["私", "は", "猫", "が", "好き"], ["<s>", "I", "like", "cats"]


@pytest.fixture(scope="module")
def weights():
    """Per decoder layer: masked self-attention (h, n, n) and cross-attention (h, n, m), as in 08."""
    d_model, h, d_ff, m, n = 8, 2, 32, 5, 4
    rng = np.random.default_rng(0)
    enc = [ac.init_encoder_layer(d_model, h, d_ff, rng) for _ in range(2)]
    dec = [ac.init_decoder_layer(d_model, h, d_ff, rng) for _ in range(2)]
    memory, states = ac.encode(rng.normal(size=(m, d_model)), enc), rng.normal(size=(n, d_model))
    self_w, cross_w = [], []
    for p in dec:
        states, w_s, w_c = ac.decoder_layer(states, memory, p, return_weights=True)
        self_w.append(w_s)
        cross_w.append(w_c)
    return self_w, cross_w


# --- figures and live figure ----------------------------------------------------

def _row(labels, w):
    return ", ".join(f"{k}:{x:.2f}" for k, x in zip(labels, w, strict=True))


def test_live_decoder_attention_shows_the_chosen_rows(weights):
    self_w, cross_w = weights
    live = nb08.LiveDecoderAttention(self_w, cross_w, TGT, SRC)
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    text = live.update(layer=2, head=1, position=2)
    assert text.startswith("decoder layer 2, head 1, position 2 (like)")
    assert _row(TGT, self_w[1][1, 2]) in text  # layer 2 is index 1, head 1, row 2
    assert _row(SRC, cross_w[1][1, 2]) in text
    assert np.allclose(live.im_s.get_array(), self_w[1][1])
    assert np.allclose(live.im_c.get_array(), cross_w[1][1])
    assert framed_row(live.rect_s, live.im_s) == 2 == framed_row(live.rect_c, live.im_c)  # as drawn
    assert live.txt_c[2][4].get_text() == f"{cross_w[1][1, 2, 4]:.2f}"
    assert live.txt_s[0][3].get_text() == "0.00"  # a future position: masked
    live.update(layer=1, head=0, position=0)
    assert np.allclose(live.im_c.get_array(), cross_w[0][0])
    assert framed_row(live.rect_c, live.im_c) == 0
    assert live.png()[:8] == b"\x89PNG\r\n\x1a\n"  # the blitted redraw renders


def test_interactive_wires_three_controls(weights):
    import ipywidgets as widgets
    live = nb08.LiveDecoderAttention(*weights, TGT, SRC)
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    pos = widgets.IntSlider(min=0, max=3, value=0, description="t")
    box = with_controls(live, layer=widgets.ToggleButtons(options=[1, 2], value=1),
                      head=widgets.ToggleButtons(options=[0, 1], value=0), position=pos)
    pos.value = 3
    assert "position 3 (cats)" in box.children[1].value


def test_block_attention_grid_draws_every_layer_and_the_chosen_head(weights):
    self_w, cross_w = weights
    fig = nb08.block_attention_grid(self_w, cross_w, TGT, SRC, head=1)
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    heatmaps = [ax for ax in fig.axes if ax.images]
    assert len(heatmaps) == 4
    shown = [ax.images[0].get_array() for ax in heatmaps]  # rows: layers; left self, right cross
    for got, want in zip(shown, [self_w[0][1], cross_w[0][1], self_w[1][1], cross_w[1][1]],
                         strict=True):
        assert np.allclose(got, want)
    plt.close(fig)


def test_transformer_architecture_names_each_attention_box_and_has_every_layer():
    import matplotlib.colors as mcolors

    fig = nb08.transformer_architecture(num_layers_paper=6, num_layers_here=2)
    ax = fig.axes[0]
    gids = [p.get_gid() for p in ax.patches if p.get_gid()]
    kinds = ["encoder self-attention", "masked decoder self-attention", "cross-attention"]
    assert sorted(g for g in gids if not g.startswith("box: ")) == sorted(kinds)  # one box each
    plain = [g[len("box: "):] for g in gids if g.startswith("box: ")]
    assert plain.count("Add & Norm") == 2 + 3  # every sub-layer of both layers has one
    assert plain.count("Feed Forward") == 2
    assert {"Input embedding", "Output embedding", "Linear", "Softmax"} <= set(plain)
    texts = [t.get_text() for t in ax.texts]
    for kind, paper in zip(kinds, ["Multi-Head Attention", "Masked Multi-Head Attention",
                                   "Multi-Head Attention"], strict=True):
        assert f"{paper}\n({kind})" in texts  # the paper's name and what it is
    assert texts.count("positional\nencoding") == 2 and texts.count("6×") == 2
    # the legend explains the three colours, and the boxes wear them
    legend = ax.get_legend()
    labels = [t.get_text() for t in legend.get_texts()]
    assert [label.split(":")[0] for label in labels] == kinds
    assert "K, V from the encoder output" in labels[2] and "causal mask" in labels[1]
    boxes = {p.get_gid(): p for p in ax.patches if p.get_gid() in kinds}
    colours = [mcolors.to_hex(h.get_facecolor()) for h in legend.legend_handles]
    assert colours == [mcolors.to_hex(boxes[k].get_facecolor()) for k in kinds]
    assert len(set(colours)) == 3
    assert "2 in this notebook" in legend.get_title().get_text()
    plt.close(fig)


# Latin words a Japanese figure text may keep: the paper's box names, symbols, token labels.
_KEPT = re.compile(r"Vaswani|et al|Transformer|Multi-Head Attention|Masked|Add & Norm|Feed Forward|"
                   r"Input embedding|Output embedding|Linear|Softmax|<s>|like|cats")


def _english_words(text: str) -> list[str]:
    """Runs of two or more English words: what an untranslated label would still hold."""
    return re.findall(r"[A-Za-z]{2,}(?:[ ,'-]+[A-Za-z]{2,})+", _KEPT.sub(" ", text))


def test_figures_live_text_and_verdicts_in_the_japanese_edition(weights):
    """notebooks/ja/08: the same figures with Japanese texts, fitting their layouts, no tofu."""
    self_w, cross_w = weights
    with i18n.language_as("ja"), warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph (tofu) warns at draw time
        fig = nb08.transformer_architecture(num_layers_paper=6, num_layers_here=2)
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        ax = fig.axes[0]
        assert ax.get_title().startswith("Vaswani et al. (2017) の Transformer を描き直した図")
        texts = [t.get_text() for t in ax.texts]
        # the paper's box names stay (the Japanese prose quotes them), the kind under them is Japanese
        assert "Multi-Head Attention\n(交差注意)" in texts
        assert "Masked Multi-Head Attention\n(デコーダのマスク付き自己注意)" in texts
        assert {"エンコーダ", "デコーダ", "位置\nエンコーディング"} <= set(texts)
        kinds = ["encoder self-attention", "masked decoder self-attention", "cross-attention"]
        assert sorted(p.get_gid() for p in ax.patches if p.get_gid() in kinds) == sorted(kinds)
        legend = ax.get_legend()
        labels = [t.get_text() for t in legend.get_texts()]
        assert [label.split(":")[0] for label in labels] == ["エンコーダの自己注意",
                                                             "デコーダのマスク付き自己注意", "交差注意"]
        assert "論文では 6 層" in legend.get_title().get_text()
        for text in texts + labels + [legend.get_title().get_text(), ax.get_title()]:
            assert not _english_words(text), text
        plt.close(fig)

        fig = nb08.block_attention_grid(self_w, cross_w, TGT, SRC, head=1)
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        assert fig._suptitle.get_text().startswith("デコーダのアテンション、ヘッド 1")
        heatmaps = [ax for ax in fig.axes if ax.images]
        assert [ax.get_title() for ax in heatmaps[:2]] == ["層 1: マスク付き自己注意 (n, n)",
                                                           "層 1: 交差注意 (n, m)"]
        assert heatmaps[1].get_xlabel() == "キー/バリュー: エンコーダの位置 j"
        for ax in heatmaps:
            assert not _english_words(ax.get_title() + ax.get_xlabel() + ax.get_ylabel())
        plt.close(fig)

        live = nb08.LiveDecoderAttention(self_w, cross_w, TGT, SRC)
        text = live.update(layer=2, head=1, position=3)
        assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
        assert text.startswith("デコーダ層 2、ヘッド 1、位置 3 (cats)\n自己注意の行")
        assert _row(SRC, cross_w[1][1, 3]) in text and not _english_words(text)
        assert live.title_c.get_text() == "層 2、ヘッド 1: 交差注意"
        assert live.fig.axes[1].get_xlabel() == "キーの位置 j (エンコーダ)"
        assert live.png()[:8] == b"\x89PNG\r\n\x1a\n"

        v = nb08.check_cross_weights_shape((5, 4), 4, 5)
        assert v.mistake == "cross_weights_transposed"
        assert v.message.startswith("不正解: (5, 4) は「転置した形状」です。"), v.message
        v = nb08.check_cross_weights_shape((2, 4, 5), 4, 5, h=2)
        assert v.ok and v.message.startswith("正解です: (2, 4, 5) = (h, n, m)。"), v.message
        assert "K と V を与える配列" in nb08.check_cross_kv_source(..., np.zeros((5, 8))).message
        for v in (nb08.check_cross_weights_shape((4, 8), 4, 5, h=2),
                  nb08.check_cross_weights_shape((1, 4, 5), 4, 5),
                  nb08.check_cross_kv_source(np.ones(3), np.zeros((5, 8))),
                  nb08.check_layer_norm(..., X_LN)):
            assert v.message.startswith(("不正解: ", "まだ答えていません: ")), v.message
            assert not _english_words(v.message.replace("attention_core", "")), v.message
    assert nb08.check_cross_weights_shape((5, 4), 4, 5).message.startswith("Not quite: (5, 4) is")


# --- self-checks ---------------------------------------------------------------

def test_cross_kv_source_check():
    rng = np.random.default_rng(3)
    X, Y, A, memory = (rng.normal(size=s) for s in [(5, 8), (4, 8), (4, 8), (5, 8)])
    assert nb08.check_cross_kv_source(..., memory, (Y, A), X).status == checks.UNANSWERED
    assert nb08.check_cross_kv_source(memory, memory, (Y, A), X).ok
    for dec in (Y, A):
        assert nb08.check_cross_kv_source(dec, memory, (Y, A), X).mistake == "kv_from_decoder"
    assert nb08.check_cross_kv_source(X, memory, (Y, A)).status == checks.WRONG  # X not offered
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
    assert "one head, whose weights are one matrix (n, m)" in v.message and "(4, 5)" not in v.message
    v = nb08.check_cross_weights_shape((1, 4, 5), 4, 5)
    assert v.mistake == "cross_weights_leading_1" and "leading 1" in v.message
    assert "the matrix (n, m)." in v.message and "(n, m) = (4, 5)" not in v.message


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
