"""Notebook 08, The Transformer block: its figures, live figure and self-checks.

The lesson itself is in notebooks/08_transformer_block.ipynb; this module holds what a learner
may skip (drawing, widget wiring, the checks' diagnoses). Its tests are in
tests/test_nb08_transformer_block.py.
"""

from __future__ import annotations

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
from course import figures
from course.checks import shape_off
from course.checks import hint as hint, solution as solution  # offered in the check cells
from course.checks import Mistake, Question  # of its own entries, at the end
from course.figures import SMALL, attention_heatmap, fixed_subplots
from course.i18n import N_, _
from course.live import LiveFigure

# --- figures and live figure ----------------------------------------------------

def _annotated_image(ax, shape, cmap):
    im = ax.imshow(np.zeros(shape), cmap=cmap, vmin=0.0, vmax=1.0, interpolation="none")  # fastest
    texts = [[ax.text(j, i, "", ha="center", va="center", fontsize=SMALL) for j in range(shape[1])]
             for i in range(shape[0])]
    return im, texts


def _set_annotated(im, texts, W):
    im.set_array(W)
    for i, row in enumerate(texts):
        for j, t in enumerate(row):
            t.set_text(f"{W[i, j]:.2f}")
            t.set_color("white" if W[i, j] > 0.6 else "black")


# The three kinds of attention in the paper's figure: (label, colour, where Q, K and V come from).
# The English kind is also the box's gid; both texts are shown through _() (in the learner's language).
ATTENTION_KINDS = {
    N_("encoder self-attention"): ("#56B4E9", N_("Q, K, V from the encoder's states")),
    N_("masked decoder self-attention"): ("#E69F00",
                                          N_("Q, K, V from the decoder's states, causal mask")),
    N_("cross-attention"): ("#009E73", N_("Q from the decoder, K, V from the encoder output")),
}
# The boxes' own texts are the paper's labels (Figure 1 of Vaswani et al.), kept as they are in
# every language: the Japanese prose of notebook 08 quotes them ("Multi-Head Attention", "Add & Norm").
# Their fills are greys (the paper's pastels): colour is kept for the three kinds of attention,
# Okabe-Ito's sky blue, orange and bluish green, which stay apart under colour-vision deficiency.
_PLAIN_BOXES = {"Add & Norm": "white", "Feed Forward": "#d9d9d9", "Input embedding": "#ececec",
                "Output embedding": "#ececec", "Linear": "white", "Softmax": "white"}


def transformer_architecture(num_layers_paper: int = 6, num_layers_here: int = 2):
    """Our own drawing of the paper's encoder-decoder figure, each attention box named by its kind.

    Every box is a patch whose gid is its kind ("encoder self-attention", ...) for the three
    attention boxes and "box: <text>" for the others; the legend explains the three colours.
    """
    from matplotlib.patches import Circle, FancyBboxPatch, Patch

    # 1140 x 900 px at 120 dpi: one slide of the presentation (scripts/slides.py, 960 px)
    fig, ax = fixed_subplots(widths=9.3, heights=7.05, left=0.1, right=0.1, bottom=0.05, top=0.4)
    ax.set_xlim(0, 10)
    ax.set_ylim(-0.1, 12.9)
    ax.set_axis_off()
    w, hgt = 2.9, 0.62  # box width and height (data units)

    def box(x, y, text, kind=None):
        colour = ATTENTION_KINDS[kind][0] if kind else _PLAIN_BOXES[text]
        ax.add_patch(FancyBboxPatch((x - w / 2, y - hgt / 2), w, hgt, boxstyle="round,pad=0.04",
                                    facecolor=colour, edgecolor="black", linewidth=1.2,
                                    gid=kind or f"box: {text}"))
        label = f"{text}\n({_(kind)})" if kind else text
        ax.text(x, y, label, ha="center", va="center", fontsize=10 if kind else 11)

    def arrow(x0, y0, x1, y1):
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                    arrowprops={"arrowstyle": "-|>", "color": "black", "lw": 1.2,
                                "shrinkA": 0, "shrinkB": 0})

    def up(x, y0, y1):  # from the top of the box at y0 to the bottom of the box at y1
        arrow(x, y0 + hgt / 2 + 0.04, x, y1 - hgt / 2 - 0.04)

    def residual(x, y_from, y_to, side):  # around a sub-layer, into the left or right of Add & Norm
        edge = x + side * (w / 2 + 0.3)
        ax.plot([x, edge, edge], [y_from, y_from, y_to], color="black", lw=1.0)
        arrow(edge, y_to, x + side * (w / 2 + 0.04), y_to)

    def stack(x, y, rows, side):
        """One layer: rows of (text, kind), each sub-layer followed by Add & Norm; returns the top y."""
        for k, (text, kind) in enumerate(rows):
            y_sub, y_add = y + 2.0 * k, y + 2.0 * k + 0.9
            box(x, y_sub, text, kind)
            box(x, y_add, "Add & Norm")
            up(x, y_sub, y_add)
            residual(x, y_sub - hgt / 2 - 0.2, y_add, side)
            if k + 1 < len(rows):
                up(x, y_add, y_sub + 2.0)
        return y + 2.0 * (len(rows) - 1) + 0.9

    def inputs(x, label, embedding, side):
        ax.text(x, 0.15, label, ha="center", va="center", fontsize=10)
        box(x, 1.0, embedding)
        arrow(x, 0.35, x, 1.0 - hgt / 2 - 0.04)
        ax.add_patch(Circle((x, 2.0), 0.2, facecolor="white", edgecolor="black", lw=1.2))
        ax.text(x, 2.0, "+", ha="center", va="center", fontsize=13)
        arrow(x, 1.0 + hgt / 2 + 0.04, x, 1.8)
        ax.text(x + side * 0.45, 2.0, _("positional\nencoding"), ha="left" if side > 0 else "right",
                va="center", fontsize=SMALL)

    def frame(x, y0, y1, side):
        ax.add_patch(FancyBboxPatch((x - w / 2 - 0.45, y0), w + 0.9, y1 - y0,
                                    boxstyle="round,pad=0.05", facecolor="#f4f4f4",
                                    edgecolor="0.4", lw=1.0, zorder=0))
        ax.text(x + side * (w / 2 + 0.6), (y0 + y1) / 2, f"{num_layers_paper}×",
                ha="left" if side > 0 else "right", va="center", fontsize=13)

    enc_x, dec_x = 2.4, 7.3
    inputs(enc_x, _("inputs (source tokens)"), "Input embedding", side=-1)
    inputs(dec_x, _("outputs, shifted right (target tokens)"), "Output embedding", side=1)
    frame(enc_x, 2.55, 6.6, side=-1)
    frame(dec_x, 2.55, 8.6, side=1)
    arrow(enc_x, 2.2, enc_x, 3.3 - hgt / 2 - 0.04)
    enc_top = stack(enc_x, 3.3, [("Multi-Head Attention", "encoder self-attention"),
                                 ("Feed Forward", None)], side=-1)
    arrow(dec_x, 2.2, dec_x, 3.3 - hgt / 2 - 0.04)
    dec_top = stack(dec_x, 3.3, [("Masked Multi-Head Attention", "masked decoder self-attention"),
                                 ("Multi-Head Attention", "cross-attention"),
                                 ("Feed Forward", None)], side=1)
    # the encoder output (memory) goes to the cross-attention of every decoder layer
    y_cross, x_turn = 5.3, (enc_x + dec_x) / 2 + 0.05
    ax.plot([enc_x, enc_x, x_turn, x_turn], [enc_top + hgt / 2 + 0.04, 7.1, 7.1, y_cross],
            color="black", lw=1.2)
    arrow(x_turn, y_cross, dec_x - w / 2 - 0.04, y_cross)
    ax.text(x_turn + 0.1, 6.6, _("memory:\nK and V"), ha="left", va="center", fontsize=SMALL)
    ax.text(dec_x + 0.12, y_cross - 0.55, "Q", ha="left", va="center", fontsize=SMALL)
    box(dec_x, 9.5, "Linear")
    box(dec_x, 10.5, "Softmax")
    up(dec_x, dec_top, 9.5)
    up(dec_x, 9.5, 10.5)
    arrow(dec_x, 10.5 + hgt / 2 + 0.04, dec_x, 11.3)
    ax.text(dec_x, 11.5, _("next-token probabilities"), ha="center", va="center", fontsize=10)
    ax.text(enc_x, 7.5, _("encoder"), ha="center", va="center", fontsize=13)
    ax.text(dec_x - w / 2 - 0.35, 9.5, _("decoder"), ha="right", va="center", fontsize=13)
    handles = [Patch(facecolor=colour, edgecolor="black", label=f"{_(kind)}: {_(source)}")
               for kind, (colour, source) in ATTENTION_KINDS.items()]
    ax.legend(handles=handles, loc="upper left", fontsize=SMALL, frameon=True,
              title=_("{paper}× = {paper} layers in the paper, {here} in this notebook").format(
                  paper=num_layers_paper, here=num_layers_here), title_fontsize=SMALL)
    ax.set_title(_("The Transformer of Vaswani et al. (2017), redrawn: which attention is which"))
    return fig


def block_attention_grid(self_weights, cross_weights, tgt_labels, src_labels, head: int = 0):
    """Small multiples: one row per decoder layer, masked self-attention (n, n) beside cross-attention (n, m)."""
    L = len(self_weights)
    n, m = np.shape(cross_weights[0])[-2:]
    cell = 0.62  # inches per weight: room for its value at 10 pt
    title = _("Decoder attention, head {head} (random weights, untrained): rows = decoder "
              "queries").format(head=head)
    fig, axes = fixed_subplots(L, 2, widths=[cell * n, cell * m], heights=cell * n, left=1.45,
                               right=0.15, bottom=0.75, top=0.9, wgap=1.45, hgap=1.05,
                               squeeze=False, min_width=figures.text_width(title) + 0.3,
                               widen="margins")
    for k in range(L):
        attention_heatmap(self_weights[k][head], tgt_labels, tgt_labels, ax=axes[k, 0],
                          title=_("layer {layer}: masked self (n, n)").format(layer=k + 1))
        attention_heatmap(cross_weights[k][head], tgt_labels, src_labels, ax=axes[k, 1],
                          title=_("layer {layer}: cross (n, m)").format(layer=k + 1))
        axes[k, 0].set_xlabel(_("key: decoder position j"))
        axes[k, 0].set_ylabel(_("query: decoder position i"))
        axes[k, 1].set_xlabel(_("key/value: encoder position j"))
        axes[k, 1].set_ylabel(_("query: decoder position i"))
    figures.suptitle(fig, title)
    return fig


class LiveDecoderAttention(LiveFigure):
    """Pick a decoder layer, a head and a decoder position: its masked self-attention row and cross-attention row."""

    layout = None  # fixed_subplots in setup()

    def __init__(self, self_weights, cross_weights, tgt_labels, src_labels):
        self.self_w = [np.asarray(w, dtype=float) for w in self_weights]  # each (h, n, n)
        self.cross_w = [np.asarray(w, dtype=float) for w in cross_weights]  # each (h, n, m)
        self.tgt, self.src = list(tgt_labels), list(src_labels)
        super().__init__()

    def setup(self) -> None:
        from matplotlib.patches import Rectangle

        n, m = self.cross_w[0].shape[-2:]
        cell = 0.75  # inches per weight
        _fig, (ax_s, ax_c) = fixed_subplots(1, 2, widths=[cell * n, cell * m], heights=cell * n,
                                            left=1.0, right=0.15, bottom=0.75, top=0.45,
                                            wgap=1.05, fig=self.fig)
        self.im_s, self.txt_s = _annotated_image(ax_s, (n, n), "Blues")
        self.im_c, self.txt_c = _annotated_image(ax_c, (n, m), "Oranges")
        for ax, keys, xlabel in ((ax_s, self.tgt, _("key position j (decoder)")),
                                 (ax_c, self.src, _("key position j (encoder)"))):
            ax.set_xticks(range(len(keys)), keys)
            ax.set_yticks(range(n), self.tgt)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(_("query position i (decoder)"))
        self.rect_s = Rectangle((-0.5, -0.5), n, 1, fill=False, ec="C3", lw=3)
        self.rect_c = Rectangle((-0.5, -0.5), m, 1, fill=False, ec="C3", lw=3)
        ax_s.add_patch(self.rect_s)
        ax_c.add_patch(self.rect_c)
        self.title_s = ax_s.set_title("", fontsize="medium")
        self.title_c = ax_c.set_title("", fontsize="medium")
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
        self.title_s.set_text(_("layer {layer}, head {head}: masked self-attention").format(
            layer=layer, head=head))
        self.title_c.set_text(_("layer {layer}, head {head}: cross-attention").format(
            layer=layer, head=head))
        row_s = ", ".join(f"{k}:{w:.2f}" for k, w in zip(self.tgt, W_s[t], strict=True))
        row_c = ", ".join(f"{k}:{w:.2f}" for k, w in zip(self.src, W_c[t], strict=True))
        return _("decoder layer {layer}, head {head}, position {t} ({token})\n"
                 "self-attention row  (sees decoder 0..{t}): {row_s}\n"
                 "cross-attention row (sees all {m} encoder positions): {row_c}\n"
                 "row sums: {sum_s} and {sum_c}").format(
            layer=layer, head=head, t=t, token=self.tgt[t], row_s=row_s, m=W_c.shape[1],
            row_c=row_c, sum_s=f"{W_s[t].sum():.4f}", sum_c=f"{W_c[t].sum():.4f}")


# --- self-checks --------------------------------------------------------------

def check_cross_kv_source(answer, memory, decoder_states=(), encoder_input=None) -> Verdict:
    """Check which array feeds K and V of cross-attention: the encoder output `memory`.

    decoder_states: arrays that come from the decoder (its input, its self-attention output);
    encoder_input: the source embeddings before the encoder, if the learner may pick those.
    """
    if is_unanswered(answer):
        return unanswered(_("choice of the array that gives K and V"))
    a = as_float(answer)
    memory = np.asarray(memory, dtype=float)

    def same(x):
        x = np.asarray(x, dtype=float)
        return a is not None and a.shape == x.shape and np.allclose(a, x)

    if same(memory):
        return Verdict(CORRECT, _("Correct: K and V come from the encoder output (memory, shape "
                                  "{shape} = (m, d_model)); only Q comes from the decoder.").format(
                                      shape=memory.shape))
    for key, candidates in (("kv_from_decoder", decoder_states),
                            ("kv_from_encoder_input", () if encoder_input is None else (encoder_input,))):
        if any(same(x) for x in candidates):
            label, why = named(key)
            return Verdict(MISTAKE, _("Not quite: that is {label}. {why}").format(
                label=label, why=sentence(why)), key)
    return Verdict(WRONG, _("Not quite: pick one of the arrays of the notebook (the decoder states "
                            "or the encoder output) as the source of K and V."))


def check_cross_weights_shape(answer, n: int, m: int, h: int | None = None) -> Verdict:
    """Check the shape of cross-attention weights: (n, m) for one head, (h, n, m) for all heads."""
    if is_unanswered(answer):
        return unanswered(_("shape, as a tuple"))
    try:
        got = tuple(int(x) for x in answer)
    except (TypeError, ValueError):
        return Verdict(WRONG, _("Give the shape as a tuple of integers, got {answer}.").format(
            answer=repr(answer)))
    lead = () if h is None else (h,)
    right = (*lead, n, m)
    if got == right:
        return Verdict(CORRECT, _("Correct: {right} = ({axes}): {n} decoder queries (rows) over "
                                  "{m} encoder keys (columns).").format(
                                      right=right, axes="h, n, m" if h else "n, m", n=n, m=m))
    if h is None and len(got) == 3 and got[1:] == (n, m):
        return _head_axis_verdict(got, n, m)
    wrongs = {"cross_weights_transposed": [(*lead, m, n)],
              "cross_weights_square": [(*lead, n, n), (*lead, m, m)]}
    for key, shapes in wrongs.items():
        if got in shapes and got != right:
            label, why = named(key)
            return Verdict(MISTAKE, _("Not quite: {got} is {label}. {why}").format(
                got=got, label=label, why=sentence(why)), key)
    if h is None:
        return Verdict(WRONG, _("Not quite: you gave {got}; {off}. Think of rows = decoder "
                                "queries and columns = encoder keys.").format(
                                    got=got, off=shape_off(got, right)))
    return Verdict(WRONG, _("Not quite: you gave {got}; {off}. Think of rows = decoder queries "
                            "and columns = encoder keys, one such matrix per head.").format(
                                got=got, off=shape_off(got, right)))


def _head_axis_verdict(got: tuple, n: int, m: int) -> Verdict:
    """(h, n, m) or (1, n, m) given where one head's (n, m) was asked for."""
    if got[0] == 1:
        label, why = named("cross_weights_leading_1", one_head=(n, m))
        return Verdict(MISTAKE, _("Not quite: {got} has {label}, {why}").format(
            got=got, label=label, why=why), "cross_weights_leading_1")
    label, why = named("cross_weights_all_heads", h=got[0], one_head=(n, m))
    return Verdict(MISTAKE, _("Not quite: {got} is {label}; {why}").format(
        got=got, label=label, why=why), "cross_weights_all_heads")


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
    return check_value(answer, right, _("layer norm of X"), mistakes, atol=1e-4)


# --- this notebook's entries of checks.MISTAKES and checks.QUESTIONS ---------------------------
# The mistakes its checks name (those several notebooks name are in course/mistakes.py), and
# the hint and worked solution of each of its questions (course/questions.py gathers them).

MISTAKES = {
    "kv_from_decoder": Mistake(
        "08",
        N_("taking K and V from the decoder"),
        N_("in cross-attention (encoder-decoder attention) only the queries come from the decoder; "
           "the keys and values come from the encoder output (memory), so that every decoder "
           "position can read the source sentence. K and V from the decoder would just be the "
           "decoder's self-attention a second time.")),
    "kv_from_encoder_input": Mistake(
        "08",
        N_("taking K and V from the encoder's input embeddings"),
        N_("K and V come from the encoder's OUTPUT (after its last layer), the same memory for "
           "every decoder layer, not from the source embeddings.")),
    "cross_weights_transposed": Mistake(
        "08",
        N_("the transposed shape"),
        N_("rows are queries and columns are keys: the n decoder positions ask and the m encoder "
           "positions answer, so one head's weights are (n, m), each row summing to 1 over the "
           "m source positions; (m, n) is the transpose.")),
    "cross_weights_square": Mistake(
        "08",
        N_("a square shape"),
        N_("only self-attention is square; cross-attention compares n decoder queries with m "
           "encoder keys, so its weights are (n, m).")),
    "layer_norm_columns": Mistake(
        "08",
        N_("normalising the columns"),
        N_("layer norm works on each token (row) separately: mean and variance over its d_model "
           "features, axis=-1. Normalising each feature over the positions (axis=0) mixes "
           "tokens, like batch norm over the sequence.")),
    "layer_norm_unbiased_var": Mistake(
        "08",
        N_("the unbiased variance (ddof=1)"),
        N_("layer norm divides the sum of squares by d_model (biased variance: np.var's default, "
           "and what PyTorch's LayerNorm uses), not by d_model - 1.")),
    "layer_norm_std_only": Mistake(
        "08",
        N_("not subtracting the mean"),
        N_("layer norm first centres each row, x - mean(x), then divides by sqrt(var + eps).")),
    "cross_weights_all_heads": Mistake(
        "08",
        N_("the shape of all h = {h} heads, (h, n, m)"),
        N_("the question asks for one head, whose weights are one matrix (n, m), without the head "
           "axis.")),
    "cross_weights_leading_1": Mistake(
        "08",
        N_("a leading 1"),
        N_("an extra axis of length one; one head's weights are the matrix (n, m).")),
}

QUESTIONS = {
    "08.cross_kv_source": Question(
        N_("Cross-attention is how each decoder position reads the source sentence. Which of the "
           "four arrays holds the source sentence after the encoder has worked on it?"),
        "memory",
        N_("In cross-attention only the queries come from the decoder "
           "(A1, after its masked self-attention); the keys and values come from the encoder "
           "output, memory, of shape (m, d_model) = (5, 8), the same for every decoder layer. Y or "
           "A1 would make it a second self-attention, and X, the source embeddings, would skip the "
           "encoder.")),
    "08.cross_weights_shape": Question(
        N_("Rows are queries, columns are keys. In cross-attention, who asks: the n = 4 decoder "
           "positions or the m = 5 encoder positions? And the question is about one head."),
        "(4, 5)",
        N_("The n = 4 decoder positions are the queries (rows) and the m = 5 encoder positions the "
           "keys (columns): one head's weights are (n, m) = (4, 5), each row a distribution over "
           "the five source tokens. All h heads together would be (h, n, m).")),
    "08.layer_norm": Question(
        N_("Layer norm treats each row (token) on its own: its mean and its variance over the "
           "d_model features. Use axis=-1 with keepdims=True so the (3, 1) statistics broadcast, "
           "and keep eps inside the square root."),
        "(X_ln - X_ln.mean(axis=-1, keepdims=True)) / np.sqrt(X_ln.var(axis=-1, keepdims=True) "
        "+ 1e-5)",
        N_("The first row (1, 2, 3, 6) has mean 3 and variance (4 + 1 + 0 + 9) / 4 = 3.5, so its "
           "layer norm is (-2, -1, 0, 3) / sqrt(3.5 + 1e-5) = (-1.0690, -0.5345, 0, 1.6036). "
           "np.var divides by d_model (ddof=0), as layer norm does; axis=0 would normalise each "
           "feature over the tokens instead.")),
}
