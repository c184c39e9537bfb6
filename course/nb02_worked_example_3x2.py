"""Notebook 02, The worked 3x2 example: its figures, live figure and self-checks.

The lesson itself is in notebooks/02_worked_example_3x2.ipynb; this module holds what a learner
may skip (drawing, widget wiring, the checks' diagnoses). Its tests are in
tests/test_nb02_worked_example_3x2.py.
"""

from __future__ import annotations

import numpy as np

import attention_core as ac
from course import figures
from course.checks import Verdict, check_value, weight_mistakes
from course.checks import hint as hint, solution as solution  # offered in the check cells
from course.checks import Mistake, Question  # of its own entries, at the end
from course.figures import fixed_subplots
from course.i18n import N_, _
from course.live import LiveFigure

# Texts notebook 02 passes to the course's drawing functions, marked here for translation (the
# functions show them with i18n.shown): the notebook's code is the same in every edition.
NOTEBOOK_TITLES = (N_("Attention weights A (注意重み)"),)


# --- figures and live figure ----------------------------------------------------

_TOKEN_COLORS = ("C0", "C1", "C2", "C3", "C4")


def _value_plane(ax, V, labels):
    """Draw the value vectors v_j as labelled points in the (d_v = 2) plane, their hull shaded."""
    ax.fill(V[:, 0], V[:, 1], color="0.92", zorder=0)  # the weighted sums o_i all land in here
    for j, (v, lbl) in enumerate(zip(V, labels, strict=True)):
        color = _TOKEN_COLORS[j % len(_TOKEN_COLORS)]
        ax.plot(*v, "o", color=color, ms=8)
        ax.annotate(f"$v_{j + 1}$ ({lbl})", v, xytext=(5, 5), textcoords="offset points", color=color)
    lo, hi = min(0.0, V.min()) - 0.5, V.max() + 0.8
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    whole = np.arange(np.ceil(lo), np.floor(hi) + 1)  # whole numbers: fewer, rounder labels
    ax.set_xticks(whole)
    ax.set_yticks(whole)
    ax.set_aspect("equal")
    # the axes through 0: a grey of 3:1 or more on white (WCAG 1.4.11), and dark enough to stay
    # apart from the token's green under deuteranopia (0.5 has the green's lightness)
    ax.axhline(0, color="0.4", lw=0.8)
    ax.axvline(0, color="0.4", lw=0.8)
    ax.set_xlabel(_("value feature 1"))
    ax.set_ylabel(_("value feature 2"))


def _tip_to_tail(weights_row, V):
    """Starts and vectors of the contributions a_ij v_j, laid tip to tail; their sum is o_i."""
    contributions = weights_row[:, None] * V  # (m, 1) * (m, d_v) -> (m, d_v)
    starts = np.vstack([np.zeros(V.shape[1]), np.cumsum(contributions, axis=0)[:-1]])
    return starts, contributions


def contributions_grid(V, A, labels):
    """For each query i: the contributions a_ij v_j laid tip to tail, ending at o_i = A[i] @ V."""
    V, A = np.asarray(V, dtype=float), np.asarray(A, dtype=float)
    n = A.shape[0]
    title = _(r"Each output $o_i = \sum_j a_{ij} v_j$: contributions drawn tip to tail")
    fig, axes = fixed_subplots(1, n, widths=3.1, heights=3.1, left=0.85, right=0.15,
                               bottom=1.8, top=0.95, wgap=0.55, squeeze=False,
                               min_width=figures.text_width(title) + 0.3, widen="margins")
    for i, ax in enumerate(axes[0]):
        _value_plane(ax, V, labels)
        starts, contrib = _tip_to_tail(A[i], V)
        for j, (s, c) in enumerate(zip(starts, contrib, strict=True)):
            ax.quiver(*s, *c, angles="xy", scale_units="xy", scale=1, width=0.012, zorder=3,
                      color=_TOKEN_COLORS[j % len(_TOKEN_COLORS)],
                      label=f"$a_{{{i + 1}{j + 1}}} v_{j + 1}$ = {A[i, j]:.2f} $v_{j + 1}$")
        o = A[i] @ V  # (m,) @ (m, d_v) -> (d_v,)
        ax.plot(*o, "k*", ms=14, label=f"$o_{i + 1}$ = ({o[0]:.2f}, {o[1]:.2f})")
        ax.set_title(_("query {token} (i = {i})").format(token=labels[i], i=i + 1))
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.17), ncols=1, frameon=False,
                  borderaxespad=0.0, handletextpad=0.5)
        if i:
            ax.set_ylabel("")  # the panels share the plane: one label, on the left
    figures.suptitle(fig, title)
    return fig


class LiveWorkedExample(LiveFigure):
    """Worked 3x2 example: pick the query token and the entry W_K[1, 1] (math: (2, 2)).

    Left: the query's weights a_i1..a_im. Right: contributions a_ij v_j tip to tail and o_i.
    """

    layout = None  # fixed_subplots in setup()

    def __init__(self, Z, W_Q, W_K, W_V, labels):
        self.Z, self.W_Q, self.W_K, self.W_V = (np.asarray(M, dtype=float)
                                                for M in (Z, W_Q, W_K, W_V))
        self.labels = list(labels)
        super().__init__()

    def setup(self) -> None:
        m = self.Z.shape[0]
        V = self.Z @ self.W_V  # (m, d_model) @ (d_model, d_v) -> (m, d_v); W_K does not change V
        _fig, (self.ax_w, self.ax_v) = fixed_subplots(1, 2, widths=[4.0, 3.3], heights=3.3,
                                                      left=0.85, right=0.2, bottom=0.8, top=0.5,
                                                      wgap=1.1, fig=self.fig)
        colors = [_TOKEN_COLORS[j % len(_TOKEN_COLORS)] for j in range(m)]
        self.w_bars = self.ax_w.bar(range(m), np.zeros(m), color=colors)
        self.w_text = [self.ax_w.text(j, 0.0, "", ha="center", va="bottom") for j in range(m)]
        self.ax_w.set_xticks(range(m), [f"{lbl} (j={j + 1})" for j, lbl in enumerate(self.labels)])
        self.ax_w.set_ylim(0, 1.1)
        self.ax_w.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
        self.ax_w.set_xlabel(_(r"key token $j$"))
        self.ax_w.set_ylabel(_(r"attention weight $a_{ij}$"))
        _value_plane(self.ax_v, V, self.labels)
        self.arrows = self.ax_v.quiver(np.zeros(m), np.zeros(m), np.zeros(m), np.zeros(m),
                                       angles="xy", scale_units="xy", scale=1, width=0.012,
                                       color=colors)
        (self.o_marker,) = self.ax_v.plot([], [], "k*", ms=14)
        self.ax_v.set_title("o_1 = (0.000, 0.000)")
        self.ax_w.set_title(_("query {token} (i={i}), W_K[2,2] = {w}").format(
            token="私", i=1, w=-1))  # the widest title update() sets: layout is computed once
        # arrows and o above the static points and labels of the plane: blitting draws them on top
        self.arrows.set_zorder(3.5)
        self.o_marker.set_zorder(3.6)
        self.blit([*self.w_bars, *self.w_text, self.arrows, self.o_marker, self.ax_w.title,
                   self.ax_v.title])

    def update(self, query: int, w_k22: float = -1.0) -> str:
        """Weights, contributions and o_i for query token `query` (0-based) with W_K[1, 1] = w_k22."""
        W_K = self.W_K.copy()
        W_K[1, 1] = w_k22
        steps = ac.attention_steps(self.Z @ self.W_Q, self.Z @ W_K, self.Z @ self.W_V)
        a = steps.weights[query]  # (m,)
        V = self.Z @ self.W_V  # (m, d_v)
        starts, contrib = _tip_to_tail(a, V)
        for bar, text, w in zip(self.w_bars, self.w_text, a, strict=True):
            bar.set_height(w)
            text.set_y(w)
            text.set_text(f"{w:.3f}")
        self.arrows.set_offsets(starts)
        self.arrows.set_UVC(contrib[:, 0], contrib[:, 1])
        o = steps.output[query]  # (d_v,)
        self.o_marker.set_data([o[0]], [o[1]])
        name = self.labels[query]
        title = _("query {token} (i={i}), W_K[2,2] = {w}").format(token=name, i=query + 1,
                                                                  w=f"{w_k22:g}")
        self.ax_w.set_title(title)
        self.ax_v.set_title(f"o_{query + 1} = ({o[0]:.3f}, {o[1]:.3f})")
        return (title + "\n"
                + _("weights a_{i}j: {weights}").format(i=query + 1,
                                                       weights=" ".join(f"{w:.4f}" for w in a))
                + "\n" + _("contributions a_ij v_j: {contributions}").format(
                    contributions="  ".join(f"({c[0]:.3f}, {c[1]:.3f})" for c in contrib))
                + "\n" + f"o_{query + 1} = ({o[0]:.4f}, {o[1]:.4f})")


# --- self-checks --------------------------------------------------------------

def _row_mistakes(Q, K, i: int) -> dict:
    """{key: row i of the weights that mistake gives}: the classic mistakes and the by-hand slips.

    The column softmax keeps its place in the order of weight_mistakes (the first match is
    named), under the key that says whether it also equals column i of A (S symmetric).
    """
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    S = Q @ K.T  # (n, d_k) @ (d_k, m) -> (n, m)
    scaled = S / np.sqrt(Q.shape[-1])
    symmetric = S.shape[0] == S.shape[1] and np.allclose(S, S.T)
    column_slip = "hand_column_of_A" if symmetric else "hand_softmax_down_columns"
    rows = {(column_slip if key == "softmax_wrong_axis" else key): w[i]
            for key, w in weight_mistakes(Q, K).items() if w.shape == S.shape}
    rows["hand_exp_not_normalised"] = np.exp(scaled[i])
    rows["hand_no_softmax"] = scaled[i]
    return rows


def check_weight_row(answer, Q, K, i: int) -> Verdict:
    """Check row i of A = softmax(Q K^T / sqrt(d_k)) (0-based i), diagnosing the classic slips."""
    A = ac.attention_weights(Q, K)
    return check_value(answer, A[i], _("weights of query row {i}").format(i=i + 1),
                       _row_mistakes(Q, K, i), atol=1e-3, context={"i": i + 1},
                       hint=_("Compute s_ij = q_i k_j^T, divide by sqrt(d_k), then softmax "
                              "over j."))


def check_output_row(answer, Q, K, V, i: int) -> Verdict:
    """Check o_i = sum_j a_ij v_j (0-based i), diagnosing weight slips and mixing the wrong rows."""
    output, A = ac.scaled_dot_product_attention(Q, K, V)
    V, K = np.asarray(V, dtype=float), np.asarray(K, dtype=float)
    not_weights = ("hand_no_softmax", "hand_exp_not_normalised")  # their "outputs" would confuse
    mistakes = {key: w @ V for key, w in _row_mistakes(Q, K, i).items() if key not in not_weights}
    mistakes["hand_mixed_keys"] = A[i] @ K
    mistakes["hand_plain_mean"] = V.mean(axis=0)
    return check_value(answer, output[i], _("output o_{i}").format(i=i + 1), mistakes,
                       atol=1e-3, context={"i": i + 1},
                       hint="o_i = a_i1 v_1 + a_i2 v_2 + a_i3 v_3.")  # a formula: every language


# --- this notebook's entries of checks.MISTAKES and checks.QUESTIONS ---------------------------
# The mistakes its checks name (those several notebooks name are in course/mistakes.py), and
# the hint and worked solution of each of its questions (course/questions.py gathers them).

MISTAKES = {
    "hand_softmax_down_columns": Mistake(
        "02",
        N_("softmax down the columns"),
        N_("each weight must be divided by the sum over its ROW (the same query, all keys): "
           "a_ij = exp(s~_ij) / sum_l exp(s~_il); yours divides by a column sum.")),
    "hand_column_of_A": Mistake(
        "02",
        N_("softmax down the columns (or column {i} of A)"),
        N_("each weight must be divided by the sum over its ROW (the same query, all keys): "
           "a_ij = exp(s~_ij) / sum_l exp(s~_il). Yours either divides by a column sum or reads "
           "column {i} of A instead of row {i}: S is symmetric here, so both slips give the same "
           "numbers.")),
    "hand_exp_not_normalised": Mistake(
        "02",
        N_("exp() without dividing by the sum"),
        N_("softmax divides each exp(s~_ij) by the row's sum so the weights add up to 1.")),
    "hand_no_softmax": Mistake(
        "02",
        N_("the scaled scores without the softmax"),
        N_("the scaled scores s~_ij = s_ij / sqrt(d_k) still go through exp and the division "
           "by the row sum.")),
    "hand_mixed_keys": Mistake(
        "02",
        N_("mixing the keys instead of the values"),
        N_("the weights decide HOW MUCH of each token to take; what is taken is the value v_j, "
           "not the key k_j.")),
    "hand_plain_mean": Mistake(
        "02",
        N_("the plain average of the values"),
        N_("the values are averaged WITH the attention weights a_ij, not with equal weights 1/m.")),
}

QUESTIONS = {
    "02.weight_row": Question(
        N_("The query of は, q_2 = (0, 1), picks the second coordinate of every key, so the scores "
           "s_2j are the second column of K. Divide them by sqrt(2), take e^x of each, and divide "
           "each by the sum of the three."),
        "[0.5760, 0.1400, 0.2840]",
        N_("K has the rows (1, 1), (1, -1), (2, 0), so s_21, s_22, s_23 = 1, -1, 0 and the scaled "
           "scores are 0.7071, -0.7071, 0. Their exponentials are 2.0281, 0.4931 and 1, with the "
           "sum 3.5212; divided by it: 0.5760, 0.1400, 0.2840, which add up to 1. In closed form "
           "a_21 = e^(1/sqrt 2) / (e^(1/sqrt 2) + e^(-1/sqrt 2) + 1).")),
    "02.output_row": Question(
        N_("The weights of question 1 say how much of each token to take; what is taken is the "
           "token's VALUE, a row of V: (2, 0), (0, 3), (2, 3). Add the three values, each "
           "multiplied by its weight."),
        "[1.7200, 1.2720]",
        N_("o_2 = 0.5760 (2, 0) + 0.1400 (0, 3) + 0.2840 (2, 3) = (1.1520 + 0 + 0.5680, 0 + 0.4200 "
           "+ 0.8520) = (1.7200, 1.2720). With unrounded weights it is (1.7199, "
           "1.2721), row 2 of O = A V; the check accepts both (3 decimals).")),
}
