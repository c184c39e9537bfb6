"""Notebook 01, Q, K, V projections: its figures, live figure and self-checks.

The lesson itself is in notebooks/01_qkv_projections.ipynb; this module holds what a learner
may skip (drawing, widget wiring, the checks' diagnoses). Its tests are in
tests/test_nb01_qkv_projections.py.
"""

from __future__ import annotations

import matplotlib
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
    weight_mistakes,
)
from course.checks import shape_off
from course.checks import hint as hint, solution as solution  # offered in the check cells
from course.checks import Mistake, Question  # of its own entries, at the end
from course import figures
from course.figures import SMALL, attention_heatmap, fixed_subplots
from course.i18n import N_, _, shown
from course.live import LiveFigure

# Texts notebook 01 passes to heatmap_pair, marked here for translation: the notebook's code is the
# same in every edition; the figure shows them with i18n.shown.
NOTEBOOK_TITLES = (N_("Attention weights A (注意重み): shortcut vs learned projections"),
                   N_("Q = K = V = X"), N_("separate W_Q, W_K"))


# --- figures and live figure ----------------------------------------------------

class LiveLibrary(LiveFigure):
    """Library toy: one query's attention weights over the books and the mixed contents o.

    queries : {name: (d_k,) vector}, keys : (m, d_k) catalogue entries,
    values : (m, d_v) book contents; update(query=name, strength=c) uses c * q.
    """

    layout = None  # fixed_subplots in setup()

    def __init__(self, queries: dict, keys, values, book_labels, content_labels):
        self.queries = {name: np.asarray(q, dtype=float) for name, q in queries.items()}
        self.keys = np.asarray(keys, dtype=float)  # (m, d_k)
        self.values = np.asarray(values, dtype=float)  # (m, d_v)
        self.book_labels, self.content_labels = list(book_labels), list(content_labels)
        super().__init__()

    def setup(self) -> None:
        m, d_v = self.values.shape
        _fig, (self.ax_w, self.ax_o) = fixed_subplots(  # not "_": that is the translation
            1, 2, widths=[0.92 * m, 0.92 * d_v], heights=2.6, left=0.85, right=0.15,
            bottom=1.0, top=0.45, wgap=1.0, fig=self.fig)
        self.w_bars = self.ax_w.bar(range(m), np.zeros(m), color="C0")
        self.w_text = [self.ax_w.text(j, 0.0, "", ha="center", va="bottom", fontsize=SMALL)
                       for j in range(m)]
        self.ax_w.set_xticks(range(m), self.book_labels, rotation=20, ha="right",
                             rotation_mode="anchor")
        self.ax_w.set_ylim(0, 1.12)
        self.ax_w.set_yticks([0, 0.25, 0.5, 0.75, 1])
        self.ax_w.set_xlabel(_(r"book $j$ (key $k_j$ = catalogue entry)"))
        self.ax_w.set_ylabel(_(r"attention weight $a_j$"))
        self.o_bars = self.ax_o.bar(range(d_v), np.zeros(d_v), color="C1")
        self.o_text = [self.ax_o.text(c, 0.0, "", ha="center", va="bottom", fontsize=SMALL)
                       for c in range(d_v)]
        self.ax_o.set_xticks(range(d_v), self.content_labels, rotation=20, ha="right",
                             rotation_mode="anchor")
        top = 1.15 * self.values.max()
        self.ax_o.set_ylim(0, top)
        self.ax_o.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4))
        self.ax_o.set_xlabel(_("content feature"))
        self.ax_o.set_ylabel(_(r"mixed contents $o$"))
        self.ax_o.set_title(_(r"what the reader takes home: $o = a V$"))
        self.ax_w.set_title(_("query '{query}' x {strength}: weights over the books").format(
            query=_("a reader's wish"), strength=1))  # changes: no mathtext
        self.blit([*self.w_bars, *self.w_text, *self.o_bars, *self.o_text, self.ax_w.title])

    def update(self, query: str, strength: float = 1.0) -> str:
        q = strength * self.queries[query]  # (d_k,)
        out, w = ac.scaled_dot_product_attention(q[None, :], self.keys, self.values)
        w, o = w[0], out[0]  # (m,), (d_v,)
        for bar, text, a in zip(self.w_bars, self.w_text, w, strict=True):
            bar.set_height(a)
            text.set_y(a)
            text.set_text(f"{a:.2f}")
        for bar, text, x in zip(self.o_bars, self.o_text, o, strict=True):
            bar.set_height(x)
            text.set_y(x)
            text.set_text(f"{x:.2f}")
        self.ax_w.set_title(_("query '{query}' x {strength}: weights over the books").format(
            query=_(query), strength=f"{strength:g}"))  # the reader as the widget names it
        return _("weights a: {weights}\nmixed o:   {mixed}").format(
            weights=", ".join(f"{b} {a:.3f}" for b, a in zip(self.book_labels, w, strict=True)),
            mixed=", ".join(f"{c} {x:.3f}" for c, x in zip(self.content_labels, o, strict=True)))


def library_weights_grid(weights: dict, book_labels, strengths=(1.0, 4.0)):
    """Small multiples: for each reader, its weights over the books at each query strength.

    weights : {reader: (len(strengths), m)}, row s the weights at strength strengths[s],
    computed in the notebook.
    """
    m = len(book_labels)
    title = _("Attention mixes several books; a stronger query concentrates the mix")
    fig, axes = fixed_subplots(1, len(weights), widths=0.46 * m, heights=2.3, left=0.85,
                               right=0.15, bottom=1.45, top=1.05, wgap=0.25, sharey=True,
                               squeeze=False, min_width=figures.text_width(title) + 0.3)
    axes = axes[0]
    width = 0.8 / len(strengths)
    for ax, (name, w) in zip(axes, weights.items(), strict=True):
        for s, c in enumerate(strengths):
            ax.bar(np.arange(m) + (s - (len(strengths) - 1) / 2) * width, w[s], width,
                   label=_("strength c = {c}").format(c=f"{c:g}"))  # the query multiplied by c
        ax.set_title(_("query: {name}").format(name=_(name)))  # a reader, as the widget names it
        ax.set_xticks(range(m), book_labels, rotation=60, ha="right", rotation_mode="anchor")
        ax.set_xlabel(_(r"book $j$"))
        ax.set_ylim(0, 1)
        ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1])
    axes[0].set_ylabel(_(r"attention weight $a_j$"))
    figures.suptitle(fig, title)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="upper center", ncols=len(strengths),
               bbox_to_anchor=(0.5, 1 - 0.42 / fig.get_figheight()), frameon=False)
    return fig


def heatmap_pair(left, right, labels, titles=("left", "right"), suptitle=None):
    """Two attention-weight heatmaps side by side (rows = queries, columns = keys)."""
    suptitle = shown(suptitle)  # the notebook's own text, in the course's language
    n = np.shape(left)[0]
    fig, axes = fixed_subplots(1, 2, widths=0.62 * n, heights=0.62 * n, left=1.05, right=0.2,
                               bottom=0.75, top=0.9 if suptitle else 0.45, wgap=1.25,
                               min_width=figures.text_width(suptitle) + 0.3 if suptitle else 0,
                               widen="margins")
    for ax, weights, title in zip(axes, (left, right), titles, strict=True):
        attention_heatmap(weights, labels, labels, title=title, ax=ax)
    if suptitle:
        figures.suptitle(fig, suptitle)
    return fig


# --- self-checks --------------------------------------------------------------

def check_qkv_shapes(answer, n: int, d_model: int, d_k: int, d_v: int) -> Verdict:
    """Check the shapes of (Q, K, V) = (X W_Q, X W_K, X W_V): ((n, d_k), (n, d_k), (n, d_v))."""
    if is_unanswered(answer):
        return unanswered(_("three shapes, as (shape_Q, shape_K, shape_V)"))
    try:
        got = tuple(tuple(int(x) for x in shape) for shape in answer)
    except (TypeError, ValueError):
        return Verdict(WRONG, _("Give three shapes as a tuple of tuples, e.g. ((1, 2), (1, 2), "
                                "(1, 3)); got {answer}.").format(answer=repr(answer)))
    right = ((n, d_k), (n, d_k), (n, d_v))
    if got == right:
        return Verdict(CORRECT, _("Correct: Q and K are (n, d_k) = {qk}, V is (n, d_v) = "
                                  "{v}.").format(qk=right[0], v=right[2]))
    wrongs = {"weight_shapes": ((d_model, d_k), (d_model, d_k), (d_model, d_v)),
              "V_uses_d_k": ((n, d_k), (n, d_k), (n, d_k)),
              "column_convention": ((d_k, n), (d_k, n), (d_v, n)),
              "no_projection": ((n, d_model),) * 3}
    for key, shapes in wrongs.items():
        if got == shapes:
            label, why = named(key)
            return Verdict(MISTAKE, _("Not quite: {got} are {label}. {why}").format(
                got=got, label=label, why=sentence(why)), key)
    if len(got) != 3:
        return Verdict(WRONG, _("Not quite: give three shapes, one each for Q, K and V; you gave "
                                "{count}.").format(count=len(got)))
    off = [_("{name}: {how}").format(name=name, how=shape_off(g, r))
           for name, g, r in zip("QKV", got, right, strict=True) if g != r]
    return Verdict(WRONG, _("Not quite: you gave {got}. What is off: {off}. Each token is one row; "
                            "the widths come from W_Q, W_K and W_V.").format(
        got=got, off=_("; ").join(off)))


def check_symmetric_scores(answer) -> Verdict:
    """True/False question: with Q = K (one projection for both), is S = Q K^T always symmetric?"""
    if is_unanswered(answer):
        return unanswered(_("answer, True or False"))
    if not isinstance(answer, (bool, np.bool_)):
        return Verdict(WRONG, _("Answer with True or False, got {answer}.").format(
            answer=repr(answer)))
    why = _("S^T = (Q Q^T)^T = Q Q^T = S, so token i scores token j exactly as j scores i. "
            "With separate W_Q and W_K, S = X W_Q W_K^T X^T is symmetric for every X only if "
            "W_Q W_K^T is.")
    if answer:
        return Verdict(CORRECT, _("Correct: {why}").format(why=why))
    return Verdict(WRONG, _("Not quite: transpose S = Q Q^T with the rule (AB)^T = B^T A^T and "
                            "compare the result with S. Does it depend on what X is?"))


def check_raw_scores(answer, Q, K, V) -> Verdict:
    """Check the raw scores S = Q K^T, shape (n, m): row i says how much query i matches each key.

    Recognises the exam trap of comparing the values with each other (V V^T), comparing the
    queries with themselves (Q Q^T) and the transposed scores (K Q^T).
    """
    Q, K, V = (np.asarray(x, dtype=float) for x in (Q, K, V))
    mistakes = {"scores_compare_values": V @ V.T,  # (m, d_v) @ (d_v, m) -> (m, m)
                "scores_compare_queries": Q @ Q.T,  # (n, d_k) @ (d_k, n) -> (n, n)
                "transposed_scores": K @ Q.T}  # (m, d_k) @ (d_k, n) -> (m, n)
    return check_value(answer, Q @ K.T, _("raw scores S"), mistakes,
                       hint=_("Entry (i, j) of S is q_i . k_j, before any scaling."))


def check_library_weights(answer, q, keys) -> Verdict:
    """Check one query's weights softmax(q K^T / sqrt(d_k)) over m books: shape (m,) or (1, m).

    Recognises the classic mistakes (no scaling, dividing by d_k, scaling after softmax, softmax
    over the wrong axis), leaving out the softmax, picking one of the best books instead of
    mixing, and sharing the weight equally among tied best books (a hard maximum).
    """
    q = np.asarray(q, dtype=float)[None, :]  # (1, d_k)
    keys = np.asarray(keys, dtype=float)  # (m, d_k)
    d_k = q.shape[-1]
    right = ac.attention_weights(q, keys)[0]  # (m,)
    a = as_float(answer)
    if a is not None and a.shape == (1, len(right)):
        answer = a[0]  # the row that q[None, :] @ K^T leads to: the same m weights
    mistakes = {k: w[0] for k, w in weight_mistakes(q, keys).items() if w.shape == (1, len(right))}
    best, context = _best_book_mistakes(answer, right)
    mistakes.update(best)
    mistakes["library_no_softmax"] = (q @ keys.T)[0] / np.sqrt(d_k)
    return check_value(answer, right, _("weights over the books"), mistakes, atol=1e-3,
                       context=context)


def _best_book_mistakes(answer, right: np.ndarray) -> dict:
    """All weight on one of the best books (the one the answer favours), or shared among them.

    ({key: value}, context): the context says how many books tie, for the registered texts.
    """
    m = len(right)
    top = np.flatnonzero(np.isclose(right, right.max(), rtol=1e-9, atol=0.0))  # tied best books
    a = as_float(answer)
    picked = top[np.argmax(a[top])] if a is not None and a.shape == (m,) else top[0]
    tie = (" " + _("(here {count} books tie for the best score)").format(count=len(top))
           if len(top) > 1 else "")
    out = {"library_picked_one_book": np.eye(m)[picked]}
    if len(top) > 1:
        out["library_hard_max"] = np.isin(np.arange(m), top) / len(top)
    return out, {"tie": tie, "count": len(top)}


# --- this notebook's entries of checks.MISTAKES and checks.QUESTIONS ---------------------------
# The mistakes its checks name (those several notebooks name are in course/mistakes.py), and
# the hint and worked solution of each of its questions (course/questions.py gathers them).

MISTAKES = {
    "weight_shapes": Mistake(
        "01",
        N_("the shapes of the weight matrices"),
        N_("(d_model, d_k), (d_model, d_k), (d_model, d_v) are W_Q, W_K, W_V; Q = X W_Q has one "
           "row per token, so Q and K are (n, d_k) and V is (n, d_v).")),
    "V_uses_d_k": Mistake(
        "01",
        N_("V with width d_k"),
        N_("V = X W_V takes its width from W_V, which is (d_model, d_v): V is (n, d_v), and d_v "
           "need not equal d_k.")),
    "column_convention": Mistake(
        "01",
        N_("the column (transposed) convention"),
        N_("this course uses row vectors: each token is a ROW, so Q = X W_Q is (n, d_k), not "
           "(d_k, n).")),
    "no_projection": Mistake(
        "01",
        N_("the width of X"),
        N_("the projections change the width: X is (n, d_model), but Q, K are (n, d_k) and V is "
           "(n, d_v).")),
    "library_picked_one_book": Mistake(
        "01",
        N_("picking the single best book"),
        N_("attention does not choose one book{tie}: it mixes all of them, each with weight "
           "softmax(q k_j / sqrt(d_k)) > 0.")),
    "library_hard_max": Mistake(
        "01",
        N_("the hard maximum (argmax) instead of the softmax"),
        N_("sharing the weight equally among the {count} best books is what a hard maximum "
           "does: the softmax of scores scaled up without limit. Softmax is a SOFT maximum: the "
           "best books get the most, but every book, even a weaker match, keeps a weight "
           "exp(s_j / sqrt(d_k)) / sum_l exp(s_l / sqrt(d_k)) > 0.")),
    "library_no_softmax": Mistake(
        "01",
        N_("the scaled scores without the softmax"),
        N_("the scaled scores q k_j^T / sqrt(d_k) still have to go through the softmax to become "
           "positive weights that sum to 1.")),
    "scores_compare_values": Mistake(
        "01",
        N_("comparing V with V"),
        N_("the scores compare what each position looks for with how every position can be found: "
           "S = Q K^T, queries with keys. The values are what the weights mix afterwards, O = A V; "
           "V V^T only says how alike the contents are, not what any token is looking for.")),
    "scores_compare_queries": Mistake(
        "01",
        N_("comparing Q with Q"),
        N_("Q Q^T compares the queries with each other, as if the keys were the queries (the Q = K "
           "shortcut of section 5, with its symmetric scores); the scores pair every query with "
           "every KEY: S = Q K^T.")),
}

QUESTIONS = {
    "01.qkv_shapes": Question(
        N_("Each token is one row, so Q, K and V all have n rows. Their widths come from the "
           "matrices they are multiplied by: W_Q and W_K are (d_model, d_k), W_V is "
           "(d_model, d_v)."),
        "((5, 4), (5, 4), (5, 3))",
        N_("Q = X W_Q: (n, d_model) @ (d_model, d_k) -> (n, d_k) = (5, 4), and K the same; V = X "
           "W_V: (n, d_model) @ (d_model, d_v) -> (n, d_v) = (5, 3). d_model = 8 disappears in the "
           "product: it is the width the matrices read, not the width they write.")),
    "01.symmetric_scores": Question(
        N_("Transpose S = Q Q^T with the rule (AB)^T = B^T A^T. Does the result depend on what X "
           "(and hence Q) is?"),
        "True",
        N_("S^T = (Q Q^T)^T = (Q^T)^T Q^T = Q Q^T = S for every Q, hence for every X: token i "
           "scores token j exactly as j scores i. With separate W_Q and W_K the scores are S = X "
           "W_Q W_K^T X^T, symmetric for every X only if W_Q W_K^T is.")),
    "01.library_weights": Question(
        N_("The scores are dot products of q = (1, 0, 0, 1) with the rows of K_books: small whole "
           "numbers. Then the scale sqrt(d_k) with d_k = 4, then the softmax over the five books. "
           "Equal scores get equal weights, and no weight is 0."),
        'ac.softmax(queries["cost of a cat"] @ K_books.T / np.sqrt(4))',
        N_("The scores q K^T are 2, 0, 2, 0, 2 (Cat care, Cat myths and Pet budget each share one "
           "subject with the query), scaled by 1/sqrt(4): 1, 0, 1, 0, 1. The softmax gives "
           "e / (3e + 2) = 0.2677 to each of the three tied books and 1 / (3e + 2) = 0.0985 to Dog "
           "training and Astronomy: a blend of all five, with no single winner.")),
    "01.raw_scores": Question(
        N_("Row i of S says how much query i matches every key: each entry pairs a ROW of Q with a "
           "row of K. Which two of Q, K, V are compared, and which one is only mixed afterwards?"),
        "Q @ K.T",
        N_("S = Q K^T, shape (n, m) = (3, 3): entry (i, j) is q_i . k_j, query i against key j. "
           "V is not compared with anything: it is what the weights mix once the scores have gone "
           "through the scaling and the softmax. V V^T would compare the contents with each other, "
           "and K Q^T is the transpose, with the keys in the rows.")),
}
