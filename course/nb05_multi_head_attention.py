"""Notebook 05, Multi-head attention: its figures, live figure and self-checks.

The lesson itself is in notebooks/05_multi_head_attention.ipynb; this module holds what a learner
may skip (drawing, widget wiring, the checks' diagnoses). Its tests are in
tests/test_nb05_multi_head_attention.py.
"""

from __future__ import annotations

import numpy as np

import attention_core as ac
from course.checks import (
    CORRECT,
    MISTAKE,
    WRONG,
    Verdict,
    check_value,
    count_in_quotes,
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
from course.i18n import N_, _, shown
from course.live import LiveFigure

# --- figures and live figure ----------------------------------------------------

# The titles notebook 05 gives head_weights_row (section 6, the four hand-built heads): marked
# here, translated where drawn, so that the Japanese edition's figure says them in Japanese.
NOTEBOOK_TITLES = (N_("head 0: same token"), N_("head 1: previous token"),
                   N_("head 2: first token"), N_("head 3: same word"),
                   N_("Four hand-built heads of one multi-head attention (d_model = 12, h = 4)"))


def head_weights_row(weights, titles, labels=None, suptitle=None, cols_max: int = 2):
    """One annotated heatmap per head, in rows of at most cols_max. weights : (h, n, m)."""
    titles, suptitle = [shown(t) for t in titles], shown(suptitle)
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 3:
        raise ValueError(f"weights must be (h, n, m), got shape {weights.shape}")
    h, n, m = weights.shape
    if len(titles) != h:
        raise ValueError(f"need one title per head: h = {h}, got {len(titles)} titles")
    cols, rows = min(h, cols_max), -(-h // cols_max)
    cell = 0.45  # inches per weight: room for its value, "0.00", at 10 pt
    fig, axes = fixed_subplots(rows, cols, widths=cell * m, heights=cell * n, left=1.05, right=0.15,
                               bottom=0.75, top=0.9 if suptitle else 0.45, wgap=0.2, hgap=0.45,
                               sharex=True, sharey=True, squeeze=False, widen="margins",
                               min_width=figures.text_width(suptitle) + 0.3 if suptitle else 0)
    for r, ax in enumerate(axes.flat):
        if r >= h:
            ax.remove()  # an empty cell of the last row
            continue
        attention_heatmap(weights[r], labels, labels, title=titles[r], ax=ax)
        if r % cols:
            ax.set_ylabel("")  # the heads share the queries: labelled on the left only
        if r + cols < h:
            ax.set_xlabel("")  # ... and the keys: labelled at the bottom only
        else:
            ax.xaxis.set_tick_params(labelbottom=True)  # nothing below it: its keys are shown
    if suptitle:
        figures.suptitle(fig, suptitle)
    return fig


def head_count_demo(seed: int = 0, n: int = 6, d_model: int = 12):
    """Fixed X (n, d_model) and W_Q, W_K, W_V, W_O (d_model, d_model) for the head-count slider.

    W_Q, W_K have std 0.45 so that Q K^T / sqrt(d_k) has std about 12 * 0.45^2 = 2.4 for
    every h (q has d_k entries of variance d_model * 0.45^2): the heads stay equally sharp
    whatever h is, and only the split of the same columns into heads changes.
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d_model))  # (n, d_model)
    W_Q = rng.normal(0.0, 0.45, size=(d_model, d_model))  # (d_model, h*d_k)
    W_K = rng.normal(0.0, 0.45, size=(d_model, d_model))  # (d_model, h*d_k)
    W_V = rng.normal(0.0, d_model ** -0.5, size=(d_model, d_model))  # (d_model, h*d_v)
    W_O = rng.normal(0.0, d_model ** -0.5, size=(d_model, d_model))  # (h*d_v, d_model)
    return {"X": X, "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "W_O": W_O}


def divisors(d: int) -> list[int]:
    """All h with d % h == 0, ascending: the head counts that split d_model evenly."""
    return [h for h in range(1, d + 1) if d % h == 0]


def _grid_positions(h: int, cols_max: int = 6) -> list[list[float]]:
    """[left, bottom, width, height] (figure fractions) of h axes in at most two rows of cols_max."""
    cols = min(h, cols_max)
    rows = -(-h // cols_max)
    cell_w, cell_h = 0.96 / cols_max, 0.41  # up to two rows between y = 0.02 and 0.84
    x0 = 0.02 + (cols_max - cols) * cell_w / 2  # centre the used columns ...
    y_top = 0.84 - (2 - rows) * cell_h / 2  # ... and the used rows
    return [[x0 + (r % cols) * cell_w + 0.12 * cell_w, y_top - (r // cols + 1) * cell_h + 0.1 * cell_h,
             0.76 * cell_w, 0.74 * cell_h] for r in range(h)]


class LiveHeadCount(LiveFigure):
    """Slider h over the divisors of d_model: the same W_Q, W_K split into h heads of d_k = d_model/h."""

    figsize = (9.0, 3.8)
    layout = None  # axes placed by update() (_grid_positions)
    max_heads = 12

    def __init__(self, seed: int = 0):
        self.data = head_count_demo(seed)
        super().__init__()

    def setup(self) -> None:
        n = self.data["X"].shape[0]
        self.axes, self.images, self.labels = [], [], []
        for _head in range(self.max_heads):
            ax = self.fig.add_axes((0, 0, 0.1, 0.1))
            im = ax.imshow(np.zeros((n, n)), cmap="Blues", vmin=0.0, vmax=1.0, interpolation="none")
            ax.set_xticks([])
            ax.set_yticks([])
            # a plain text, not a title: titles are re-positioned on every draw (slow)
            self.labels.append(ax.text(0.5, 1.04, "", transform=ax.transAxes, ha="center",
                                       va="bottom", fontsize=SMALL))
            self.axes.append(ax)
            self.images.append(im)
        self.title = self.fig.text(0.5, 0.97, "", ha="center", va="top", fontsize="large")
        self.fig.text(0.5, 0.005, _("each square: rows = query i, columns = key j "
                                    "(white 0 ... dark blue 1)"), ha="center", va="bottom",
                      fontsize=SMALL)
        self.blit([*self.axes, *self.labels, self.title])  # axes move and hide: all of them change

    def update(self, h: int = 1) -> str:
        d = self.data
        d_model = d["X"].shape[1]
        if h not in divisors(d_model) or h > self.max_heads:
            raise ValueError(f"h must divide d_model = {d_model} (one of {divisors(d_model)}), got {h}")
        _output, weights = ac.multi_head_attention(d["X"], d["X"], d["W_Q"], d["W_K"], d["W_V"],
                                                   d["W_O"], h)  # weights (h, n, n)
        d_k = d_model // h
        params = sum(d[k].size for k in ("W_Q", "W_K", "W_V", "W_O"))
        slots = _grid_positions(h) + [None] * (self.max_heads - h)  # hidden axes need no slot
        for r, (ax, im, pos) in enumerate(zip(self.axes, self.images, slots, strict=True)):
            ax.set_visible(r < h)
            if r < h:
                ax.set_position(pos)
                im.set_array(weights[r])
                self.labels[r].set_text(_("head {r}").format(r=r))  # counted from 0, as weights[r]
        self.title.set_text(_("h = {h} heads of d_k = d_v = {d_k}  (d_model = {d_model}, "
                              "parameters 4 d_model² = {params})").format(
                                  h=h, d_k=d_k, d_model=d_model, params=params))
        sharp = weights.max(axis=-1).mean(axis=-1)  # (h,) mean over queries of the largest weight
        return _("h = {h}: d_k = d_v = d_model / h = {d_k}; parameters = {params} "
                 "(= 4 * {d_model}^2)\nmean largest weight per query, head by head: {sharp}").format(
                     h=h, d_k=d_k, params=params, d_model=d_model,
                     sharp=" ".join(f"{s:.2f}" for s in sharp))


def head_weights_by_h(data: dict, hs=(1, 2, 3, 6)):
    """Small multiples: for each h in hs one row with the h heads' weights (n, n)."""
    X = data["X"]
    cols = max(hs)
    title = _("Same W_Q, W_K split into h heads: attention weights per head")
    fig, axes = fixed_subplots(len(hs), cols, widths=1.2, heights=1.2, left=1.25, right=1.15,
                               bottom=0.45, top=0.8, wgap=0.15, hgap=0.4, squeeze=False,
                               min_width=figures.text_width(title) + 0.3, widen="margins")
    for row, h in zip(axes, hs, strict=True):
        _output, weights = ac.multi_head_attention(X, X, data["W_Q"], data["W_K"], data["W_V"],
                                                   data["W_O"], h)  # (h, n, n)
        for r, ax in enumerate(row):
            ax.set_xticks([])
            ax.set_yticks([])
            if r >= h:
                ax.set_visible(False)
                continue
            im = ax.imshow(weights[r], cmap="Blues", vmin=0.0, vmax=1.0)
            ax.set_title(_("head {r}").format(r=r), fontsize=SMALL)
        row[0].set_ylabel(f"h = {h}\nd_k = {X.shape[1] // h}")
    figures.colorbar(fig, im, axes, shrink=0.6, pad=0.2, label=_("attention weight"))
    figures.suptitle(fig, title)
    fig.text(0.5, 0.12 / fig.get_figheight(), _("each square: rows = query i, columns = key j"),
             ha="center", va="bottom", fontsize=SMALL)
    return fig


# --- self-checks --------------------------------------------------------------

def check_W_O_shape(answer, d_model: int, h: int, d_k: int, d_v: int) -> Verdict:
    """Check the shape of W_O: (h*d_v, d_model)."""
    if is_unanswered(answer):
        return unanswered(_("shape of W_O, as a tuple"))
    right = (h * d_v, d_model)
    try:
        got = tuple(int(x) for x in answer)
    except (TypeError, ValueError):
        return Verdict(WRONG, _("Give the shape as a tuple of two integers, got {answer!r}.").format(
            answer=answer))
    if got == right:
        return Verdict(CORRECT, _("Correct: W_O has shape (h*d_v, d_model) = {right}.").format(
            right=right))
    wrongs = {"W_O_uses_d_k": (h * d_k, d_model), "W_O_transposed": (d_model, h * d_v),
              "W_O_single_head": (d_v, d_model)}
    for key, shape in wrongs.items():
        if got == shape and shape != right:
            label, why = named(key)
            return Verdict(MISTAKE, _("Not quite: {got} is the {label}. {why}").format(
                got=got, label=label, why=sentence(why)), key)
    return Verdict(WRONG, _("Not quite: you gave {got}; {off}. W_O reads the concatenated heads "
                            "and writes d_model.").format(got=got, off=shape_off(got, right)))


def check_multi_head(answer, X, W_Q, W_K, W_V, W_O, num_heads: int, mask=None) -> Verdict:
    """Check a multi-head self-attention output (n, d_model).

    Recognises leaving out W_O, scaling every head by sqrt(d_model) or sqrt(h*d_k) instead of
    sqrt(d_k), and not splitting into heads (one head of width h*d_k).
    """
    def mha(W_Q=W_Q, h=num_heads):
        return _concat_heads(X, W_Q, W_K, W_V, h, mask) @ np.asarray(W_O, dtype=float)

    h, d_model, width = num_heads, np.shape(X)[-1], np.shape(W_Q)[1]  # width = h*d_k
    d_k = width // h
    right, _weights = ac.multi_head_attention(X, X, W_Q, W_K, W_V, W_O, h, mask)
    mistakes = {"no_W_O": _concat_heads(X, W_Q, W_K, W_V, h, mask)}  # keys of checks.MISTAKES
    # dividing the scores by sqrt(D) instead of sqrt(d_k) = multiplying W_Q by sqrt(d_k / D)
    scale = _("sqrt(d_model) = sqrt(h*d_k)") if width == d_model else "sqrt(d_model)"
    mistakes["mha_scaled_by_d_model"] = mha(W_Q=np.asarray(W_Q, dtype=float) * np.sqrt(d_k / d_model))
    mistakes["mha_scaled_by_h_d_k"] = mha(W_Q=np.asarray(W_Q, dtype=float) * np.sqrt(d_k / width))
    mistakes["mha_not_split"] = mha(h=1)
    context = {"scale": scale, "d_k": d_k, "d_model": d_model, "width": width, "h": h}
    return check_value(answer, right, _("multi-head output"), mistakes, context=context)


def _concat_heads(X, W_Q, W_K, W_V, h: int, mask=None) -> np.ndarray:
    """Concat(head_0..head_{h-1}), shape (n, h*d_v): multi-head self-attention before W_O."""
    X = np.asarray(X, dtype=float)
    Q, K, V = (ac.split_heads(X @ np.asarray(W, dtype=float), h) for W in (W_Q, W_K, W_V))
    if mask is not None and np.ndim(mask) >= 2:
        mask = np.asarray(mask, dtype=float)[..., None, :, :]  # (..., 1, n, m): every head
    return ac.merge_heads(ac.scaled_dot_product_attention(Q, K, V, mask)[0])  # (..., n, h*d_v)


def check_mha_param_count(answer, d_model: int, h: int) -> Verdict:
    """Check the number of weights of one multi-head attention (no biases): 4 d_model^2.

    With d_k = d_v = d_model / h: W_Q, W_K, W_V are (d_model, h*d_k) = (d_model, d_model)
    and W_O is (h*d_v, d_model) = (d_model, d_model), whatever h is.
    """
    if is_unanswered(answer):
        return unanswered(_("number of parameters (an integer)"))
    if d_model % h:
        raise ValueError(f"h = {h} must divide d_model = {d_model}")
    d_k = d_v = d_model // h
    right = 4 * d_model * d_model
    mistakes = {  # keys of checks.MISTAKES, the counts they give, their {placeholders}
        "mha_counted_h_times": (h * right, {"d_model": d_model, "d_k": d_k}),
        "mha_forgot_W_O": (3 * d_model * d_model, {"d_model": d_model}),
        "mha_one_head_only": (3 * d_model * d_k + h * d_v * d_model, {"h": h}),
        "mha_with_biases": (right + 4 * d_model, {}),
    }
    if isinstance(answer, str):
        return count_in_quotes(answer)
    if not isinstance(answer, (int, np.integer, float, np.floating)) or isinstance(answer, bool):
        return Verdict(WRONG, _("Give the count as one integer, got {answer!r}.").format(
            answer=answer))
    for key, (value, context) in mistakes.items():
        if answer == value and value != right:
            label, why = named(key, **context)
            return Verdict(MISTAKE, _("Not quite: {got} is what {label} gives. {why}").format(
                got=int(answer), label=label, why=sentence(why)), key)
    if answer == right:
        return Verdict(CORRECT, _("Correct: 4 * d_model^2 = {right} weights, the same for every h "
                                  "(here h = {h}, d_k = d_v = {d_k}).").format(right=right, h=h,
                                                                              d_k=d_k))
    return Verdict(WRONG, _("Not quite: you gave {answer!r}. Add up the sizes of W_Q, W_K, W_V "
                            "(d_model, h*d_k) and W_O (h*d_v, d_model) with d_k = d_v = "
                            "d_model/h.").format(answer=answer))


# --- this notebook's entries of checks.MISTAKES and checks.QUESTIONS ---------------------------
# The mistakes its checks name (those several notebooks name are in course/mistakes.py), and
# the hint and worked solution of each of its questions (course/questions.py gathers them).

MISTAKES = {
    "W_O_uses_d_k": Mistake(
        "05",
        N_("wrong W_O shape: (h*d_k, d_model)"),
        N_("W_O multiplies the concatenated VALUE heads, so its first dimension is h*d_v, "
           "not h*d_k (they differ whenever d_k != d_v).")),
    "W_O_transposed": Mistake(
        "05",
        N_("wrong W_O shape: transposed"),
        N_("with row vectors, Concat(heads) (n, h*d_v) @ W_O must give (n, d_model), so W_O "
           "is (h*d_v, d_model), not (d_model, h*d_v).")),
    "W_O_single_head": Mistake(
        "05",
        N_("wrong W_O shape: one head's width"),
        N_("W_O reads all heads at once: its first dimension is h*d_v, not d_v.")),
    "no_W_O": Mistake(
        "05",
        N_("W_O left out"),
        N_("the concatenated heads (n, h*d_v) must still be multiplied by W_O "
           "(h*d_v, d_model) to mix the heads and return to d_model.")),
    "mha_scaled_by_h_d_k": Mistake(
        "05",
        N_("scaling every head by sqrt(h*d_k)"),
        N_("each head compares queries and keys of width d_k = {d_k}, so each head divides its "
           "scores by sqrt(d_k) = sqrt({d_k}), not by sqrt(h*d_k) = sqrt({width}).")),
    "mha_not_split": Mistake(
        "05",
        N_("one head of width h*d_k (no split into heads)"),
        N_("split Q, K and V into h = {h} heads of width d_k = {d_k} (ac.split_heads), run "
           "attention in each head on its own, then concatenate. One head of width h*d_k = {width} "
           "has one softmax per query, so every feature is mixed with the same weights instead of "
           "each head choosing its own.")),
    "mha_counted_h_times": Mistake(
        "05",
        N_("counting every weight matrix h times"),
        N_("the h heads SHARE the columns of W_Q, W_K, W_V: each head has (d_model, d_k) = "
           "({d_model}, {d_k}) matrices, and h of them make one (d_model, h*d_k) = "
           "({d_model}, {d_model}) matrix, not h of them.")),
    "mha_forgot_W_O": Mistake(
        "05",
        N_("forgetting W_O"),
        N_("besides W_Q, W_K, W_V there is the output matrix W_O of shape (h*d_v, d_model) = "
           "({d_model}, {d_model}).")),
    "mha_one_head_only": Mistake(
        "05",
        N_("counting one head's W_Q, W_K, W_V"),
        N_("every one of the h = {h} heads has its own (d_model, d_k) blocks: together "
           "3 * d_model * h*d_k = 3 * d_model^2, plus W_O.")),
    "mha_with_biases": Mistake(
        "05",
        N_("adding biases"),
        N_("attention_core's multi_head_attention has no bias vectors (nor does this question); "
           "with a bias after each of the four matrices you would add 4 * d_model, but count only "
           "the weight matrices here.")),
}

QUESTIONS = {
    "05.W_O_shape": Question(
        N_("W_O multiplies Concat(head_1, ..., head_h) and must give back rows of width d_model. "
           "How wide is that concatenation: h times the width of what each head outputs. Does a "
           "head output queries, keys or values?"),
        "(20, 16)",
        N_("Each head outputs (n, d_v) = (n, 5); four of them side by side are (n, h*d_v) "
           "= (n, 20). With row vectors (n, 20) @ W_O must give (n, d_model) = (n, 16), so W_O is "
           "(h*d_v, d_model) = (20, 16). h*d_k = 12 is the width of the concatenated queries, "
           "which W_O never sees.")),
    "05.multi_head": Question(
        N_("Project X_q with P.W_Q, P.W_K and P.W_V, cut each result into h = 2 heads "
           "(ac.split_heads), run attention in every head on its own, put the heads back side by "
           "side (ac.merge_heads) and do not forget the last matrix."),
        "ac.merge_heads(ac.scaled_dot_product_attention(\n"
        "    ac.split_heads(X_q @ P.W_Q, 2),\n"
        "    ac.split_heads(X_q @ P.W_K, 2),\n"
        "    ac.split_heads(X_q @ P.W_V, 2),\n"
        ")[0]) @ P.W_O",
        N_("X_q @ P.W_Q is (n, h*d_k) = (3, 4); split_heads makes it (h, n, d_k) = (2, 3, 2), and "
           "the same for K and V. scaled_dot_product_attention works along the leading head axis, "
           "every head with its own softmax and its own scale sqrt(d_k) = sqrt(2); [0] is its "
           "output (2, 3, 2). merge_heads concatenates the heads to (n, h*d_v) = (3, 4), and W_O "
           "(4, 4) mixes them back to d_model. This is the loop over heads of sections 1-2, and "
           "ac.multi_head_attention(X_q, X_q, P.W_Q, P.W_K, P.W_V, P.W_O, 2)[0] gives the same.")),
    "05.param_count": Question(
        N_("Count the entries of the four matrices: W_Q, W_K, W_V are (d_model, h*d_k) and W_O is "
           "(h*d_v, d_model). With d_k = d_v = d_model / h, what is h*d_k?"),
        "4 * 512 * 512",
        N_("h*d_k = h*d_v = 8 * 64 = 512 = d_model, so all four matrices are 512 x 512: "
           "4 * 512^2 = 1,048,576 weights. The heads divide these matrices' columns among them, so "
           "the count is the same for every h.")),
}
