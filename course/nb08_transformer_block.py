"""Notebook 08, The Transformer block: its figures, live figure and self-checks.

The lesson itself is in notebooks/08_transformer_block.ipynb; this module holds what a learner
may skip (drawing, widget wiring, the checks' diagnoses). Its tests are in
tests/test_nb08_transformer_block.py.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

import attention_core as ac
from course.checks import (
    CORRECT,
    MISTAKE,
    WRONG,
    Verdict,
    as_float,
    check_value,
    is_unanswered,
    named,
    sentence,
    unanswered,
)
from course.checks import hint as hint, solution as solution  # offered in the check cells
from course.figures import attention_heatmap
from course.live import LiveFigure

# --- figures and live figure ----------------------------------------------------

def _annotated_image(ax, shape, cmap):
    im = ax.imshow(np.zeros(shape), cmap=cmap, vmin=0.0, vmax=1.0, interpolation="none")  # fastest
    texts = [[ax.text(j, i, "", ha="center", va="center", fontsize=9) for j in range(shape[1])]
             for i in range(shape[0])]
    return im, texts


def _set_annotated(im, texts, W):
    im.set_array(W)
    for i, row in enumerate(texts):
        for j, t in enumerate(row):
            t.set_text(f"{W[i, j]:.2f}")
            t.set_color("white" if W[i, j] > 0.6 else "black")


def block_attention_grid(self_weights, cross_weights, tgt_labels, src_labels, head: int = 0):
    """Small multiples: one row per decoder layer, masked self-attention (n, n) beside cross-attention (n, m)."""
    L = len(self_weights)
    n, m = np.shape(cross_weights[0])[-2:]
    fig, axes = plt.subplots(L, 2, figsize=(2.6 + 0.62 * (n + m), 0.9 + 2.9 * L),
                             squeeze=False, layout="constrained",
                             gridspec_kw={"width_ratios": [n, m]})
    for k in range(L):
        attention_heatmap(self_weights[k][head], tgt_labels, tgt_labels, ax=axes[k, 0],
                          title=f"layer {k + 1}, head {head}: masked self (n, n)")
        attention_heatmap(cross_weights[k][head], tgt_labels, src_labels, ax=axes[k, 1],
                          title=f"layer {k + 1}, head {head}: cross (n, m)")
        axes[k, 0].set_xlabel("key: decoder position j")
        axes[k, 0].set_ylabel("query: decoder position i")
        axes[k, 1].set_xlabel("key/value: encoder position j")
        axes[k, 1].set_ylabel("query: decoder position i")
    fig.suptitle("Decoder attention (random weights, untrained): rows = decoder queries")
    return fig


class LiveDecoderAttention(LiveFigure):
    """Pick a decoder layer, a head and a decoder position: its masked self-attention row and cross-attention row."""

    figsize = (10.0, 3.8)

    def __init__(self, self_weights, cross_weights, tgt_labels, src_labels):
        self.self_w = [np.asarray(w, dtype=float) for w in self_weights]  # each (h, n, n)
        self.cross_w = [np.asarray(w, dtype=float) for w in cross_weights]  # each (h, n, m)
        self.tgt, self.src = list(tgt_labels), list(src_labels)
        super().__init__()

    def setup(self) -> None:
        from matplotlib.patches import Rectangle

        n, m = self.cross_w[0].shape[-2:]
        ax_s, ax_c = self.fig.subplots(1, 2, width_ratios=[n, m])
        self.im_s, self.txt_s = _annotated_image(ax_s, (n, n), "Blues")
        self.im_c, self.txt_c = _annotated_image(ax_c, (n, m), "Oranges")
        for ax, keys, kind in ((ax_s, self.tgt, "decoder"), (ax_c, self.src, "encoder")):
            ax.set_xticks(range(len(keys)), keys)
            ax.set_yticks(range(n), self.tgt)
            ax.set_xlabel(f"key position j ({kind})")
            ax.set_ylabel("query position i (decoder)")
        self.rect_s = Rectangle((-0.5, -0.5), n, 1, fill=False, ec="C3", lw=3)
        self.rect_c = Rectangle((-0.5, -0.5), m, 1, fill=False, ec="C3", lw=3)
        ax_s.add_patch(self.rect_s)
        ax_c.add_patch(self.rect_c)
        self.title_s = ax_s.set_title("")
        self.title_c = ax_c.set_title("")
        self.update(layer=1, head=0, position=0)  # titles of their real size for the one layout
        self.blit([self.im_s, self.im_c, *(t for row in self.txt_s + self.txt_c for t in row), self.rect_s,
                   self.rect_c, self.title_s, self.title_c])

    def update(self, layer=1, head=0, position=0) -> str:
        layer, head, t = int(layer), int(head), int(position)
        W_s, W_c = self.self_w[layer - 1][head], self.cross_w[layer - 1][head]
        _set_annotated(self.im_s, self.txt_s, W_s)
        _set_annotated(self.im_c, self.txt_c, W_c)
        self.rect_s.set_y(t - 0.5)
        self.rect_c.set_y(t - 0.5)
        self.title_s.set_text(f"layer {layer}, head {head}: masked self-attention")
        self.title_c.set_text(f"layer {layer}, head {head}: cross-attention")
        row_s = ", ".join(f"{k}:{w:.2f}" for k, w in zip(self.tgt, W_s[t], strict=True))
        row_c = ", ".join(f"{k}:{w:.2f}" for k, w in zip(self.src, W_c[t], strict=True))
        return (f"decoder layer {layer}, head {head}, position {t} ({self.tgt[t]})\n"
                f"self-attention row  (sees decoder 0..{t}): {row_s}\n"
                f"cross-attention row (sees all {W_c.shape[1]} encoder positions): {row_c}\n"
                f"row sums: {W_s[t].sum():.4f} and {W_c[t].sum():.4f}")


# --- self-checks --------------------------------------------------------------

def check_cross_kv_source(answer, memory, decoder_states=(), encoder_input=None) -> Verdict:
    """Check which array feeds K and V of cross-attention: the encoder output `memory`.

    decoder_states: arrays that come from the decoder (its input, its self-attention output);
    encoder_input: the source embeddings before the encoder, if the learner may pick those.
    """
    if is_unanswered(answer):
        return unanswered("choice of the array that gives K and V")
    a = as_float(answer)
    memory = np.asarray(memory, dtype=float)

    def same(x):
        x = np.asarray(x, dtype=float)
        return a is not None and a.shape == x.shape and np.allclose(a, x)

    if same(memory):
        return Verdict(CORRECT, f"Correct: K and V come from the encoder output (memory, shape "
                                f"{memory.shape} = (m, d_model)); only Q comes from the decoder.")
    for key, candidates in (("kv_from_decoder", decoder_states),
                            ("kv_from_encoder_input", () if encoder_input is None else (encoder_input,))):
        if any(same(x) for x in candidates):
            label, why = named(key)
            return Verdict(MISTAKE, f"Not quite: that is {label}. {sentence(why)}", key)
    return Verdict(WRONG, "Not quite: pick one of the arrays of the notebook (the decoder states "
                          "or the encoder output) as the source of K and V.")


def check_cross_weights_shape(answer, n: int, m: int, h: int | None = None) -> Verdict:
    """Check the shape of cross-attention weights: (n, m) for one head, (h, n, m) for all heads."""
    if is_unanswered(answer):
        return unanswered("shape, as a tuple")
    try:
        got = tuple(int(x) for x in answer)
    except (TypeError, ValueError):
        return Verdict(WRONG, f"Give the shape as a tuple of integers, got {answer!r}.")
    lead = () if h is None else (h,)
    right = (*lead, n, m)
    if got == right:
        return Verdict(CORRECT, f"Correct: {right} = ({'h, ' if h else ''}n, m): {n} decoder "
                                f"queries (rows) over {m} encoder keys (columns).")
    if h is None and len(got) == 3 and got[1:] == (n, m):
        return _head_axis_verdict(got, n, m)
    wrongs = {"cross_weights_transposed": [(*lead, m, n)],
              "cross_weights_square": [(*lead, n, n), (*lead, m, m)]}
    for key, shapes in wrongs.items():
        if got in shapes and got != right:
            label, why = named(key)
            return Verdict(MISTAKE, f"Not quite: {got} is {label}. {sentence(why)}", key)
    return Verdict(WRONG, f"Not quite: you gave {got}; think of rows = decoder queries (n = {n}) "
                          f"and columns = encoder keys (m = {m})"
                          + ("" if h is None else f", one such matrix per head (h = {h})") + ".")


def _head_axis_verdict(got: tuple, n: int, m: int) -> Verdict:
    """(h, n, m) or (1, n, m) given where one head's (n, m) was asked for."""
    if got[0] == 1:
        label, why = named("cross_weights_leading_1", one_head=(n, m))
        return Verdict(MISTAKE, f"Not quite: {got} has {label}, {why}", "cross_weights_leading_1")
    label, why = named("cross_weights_all_heads", h=got[0], one_head=(n, m))
    return Verdict(MISTAKE, f"Not quite: {got} is {label}; {why}", "cross_weights_all_heads")


def check_layer_norm(answer, X, eps: float = 1e-5) -> Verdict:
    """Check LayerNorm(X) with gamma = 1, beta = 0; recognise columns, ddof=1, and no centring."""
    X = np.asarray(X, dtype=float)
    d_model = X.shape[-1]
    right = ac.layer_norm(X, np.ones(d_model), np.zeros(d_model), eps)
    mistakes = {
        "layer_norm_columns": (X - X.mean(axis=0)) / np.sqrt(X.var(axis=0) + eps),
        "layer_norm_unbiased_var": (X - X.mean(axis=-1, keepdims=True))
        / np.sqrt(X.var(axis=-1, ddof=1, keepdims=True) + eps),
        "layer_norm_std_only": X / np.sqrt(X.var(axis=-1, keepdims=True) + eps),
    }
    return check_value(answer, right, "layer norm of X", mistakes, atol=1e-4)
