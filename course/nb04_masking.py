"""Notebook 04, Masking: its figures, live figure and self-checks.

The lesson itself is in notebooks/04_masking.ipynb, the leak test and the buggy masks
included; this module holds what a learner may skip (drawing, widget wiring, the checks'
diagnoses). Its tests are in tests/test_nb04_masking.py.
"""

from __future__ import annotations

import matplotlib
import numpy as np

import attention_core as ac
from course import figures
from course.checks import MISTAKE, Verdict, check_value, named, sentence
from course.checks import hint as hint, solution as solution  # offered in the check cells
from course.checks import Mistake, Question  # of its own entries, at the end
from course.figures import SMALL, fixed_subplots
from course.i18n import N_, _
from course.live import LiveFigure

# --- figures and live figure ----------------------------------------------------

# the mask kinds: values of the widget's buttons and column titles of the figure, shown with _()
MASK_KINDS = (N_("none"), N_("causal"), N_("padding"), N_("both"))


def batch_item_options(lengths) -> list[tuple[str, int]]:
    """The batch-item menu of the live figure: [("item 0 (length 6)", 0), ...], in the course's
    language (the notebook's code is the same in every edition)."""
    return [(_("item {b} (length {length})").format(b=b, length=int(L)), b)
            for b, L in enumerate(lengths)]


def mask_for(kind: str, n: int, lengths, item: int) -> np.ndarray:
    """Additive (n, n) mask of one batch item: none, causal, padding, or both (their sum)."""
    if kind not in MASK_KINDS:
        raise ValueError(f"kind must be one of {MASK_KINDS}, got {kind!r}")
    M = np.zeros((n, n))
    if kind in ("causal", "both"):
        M = M + ac.causal_mask(n)  # (n, n)
    if kind in ("padding", "both"):
        M = M + ac.padding_mask(lengths, n)[item]  # (1, n) broadcasts over the n queries
    return M


def _draw_weights_image(ax, n):
    cmap = matplotlib.colormaps["Blues"].with_extremes(bad="0.55")  # blocked cells: grey
    im = ax.imshow(np.zeros((n, n)), cmap=cmap, vmin=0.0, vmax=1.0)
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xlabel(_("key position j"))
    ax.set_ylabel(_("query position i"))
    return im


def _masked_weights(Q, K, M) -> np.ndarray:
    """Weights softmax(Q K^T / sqrt(d_k) + M) as a masked array: blocked cells masked (grey)."""
    A = ac.attention_weights(Q, K, M)  # (..., n, m)
    return np.ma.masked_where(~np.isfinite(np.broadcast_to(M, A.shape)), A)


def masking_example(seed: int = 0, lengths=(6, 4, 2), d_model: int = 8, d_k: int = 4):
    """A padded batch for the mask pictures: Q, K of shape (batch, n, d_k), n = max(lengths)."""
    rng = np.random.default_rng(seed)
    n = max(lengths)
    X = rng.normal(size=(len(lengths), n, d_model))  # (batch, n, d_model)
    W_Q = rng.normal(0, d_model ** -0.5, size=(d_model, d_k))  # entries of Q, K: variance about 1
    W_K = rng.normal(0, d_model ** -0.5, size=(d_model, d_k))
    return X @ W_Q, X @ W_K  # (batch, n, d_model) @ (d_model, d_k) -> (batch, n, d_k)


def plot_mask_patterns(lengths=(6, 4, 2), seed: int = 0):
    """Small multiples: rows = batch items, columns = none / causal / padding / both; grey = blocked."""
    Q, K = masking_example(seed, lengths)
    n = Q.shape[-2]
    fig, axes = fixed_subplots(len(lengths), 4, widths=1.75, heights=1.75, left=1.3, right=1.2,
                               bottom=0.75, top=0.9, wgap=0.15, hgap=0.15, sharex=True,
                               sharey=True, squeeze=False)
    for b, length in enumerate(lengths):
        for c, kind in enumerate(MASK_KINDS):
            ax = axes[b, c]
            im = _draw_weights_image(ax, n)
            im.set_array(_masked_weights(Q[b], K[b], mask_for(kind, n, lengths, b)))
            ax.label_outer()  # axis labels on the outer panels only: the panels share them
        axes[b, 0].set_ylabel(_("item {b} (length {length})\nquery position i").format(
            b=b, length=length))
    for c, kind in enumerate(MASK_KINDS):  # one mask kind per column
        axes[0, c].set_title(_(kind))
    figures.colorbar(fig, im, axes, shrink=0.6, pad=0.2,
                     label=_("attention weight (注意重み)"))
    figures.suptitle(fig, _("Mask patterns (マスク): grey cells are blocked (-inf), rows sum to 1 "
                            "over the rest"))
    return fig


class LiveMask(LiveFigure):
    """Pick a query position, a mask kind and a batch item: weights matrix (left) and that row (right)."""

    layout = None  # fixed_subplots in setup()
    lengths = (6, 4, 2)
    seed = 0

    def setup(self) -> None:
        from matplotlib.patches import Rectangle

        self.Q, self.K = masking_example(self.seed, self.lengths)
        n = self.n = self.Q.shape[-2]
        _fig, (ax_im, self.ax_bar) = fixed_subplots(1, 2, widths=[2.9, 4.3], heights=2.9,
                                                    left=0.85, right=0.15, bottom=0.7, top=0.5,
                                                    wgap=0.95, fig=self.fig)
        self.im = _draw_weights_image(ax_im, n)
        self.row_box = Rectangle((-0.5, -0.5), n, 1, fill=False, lw=3, edgecolor="C1")
        ax_im.add_patch(self.row_box)
        self.ax_im = ax_im
        # blocked keys: a grey column behind, the grey of the blocked cells on the left
        self.blocked = self.ax_bar.bar(range(n), np.zeros(n), width=1.0, color="0.55", alpha=0.5)
        self.bars = self.ax_bar.bar(range(n), np.zeros(n), color="C0")
        self.ax_bar.set_ylim(0, 1.05)
        self.ax_bar.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
        self.ax_bar.set_xticks(range(n))
        self.ax_bar.set_xlabel(_("key position j"))
        self.ax_bar.set_ylabel(_("weight a_ij"))  # plain, like the titles: 04 needs no mathtext
        self.ax_im.set_title(_("mask"), fontsize=SMALL)
        self.ax_bar.set_title(_("query"), fontsize=SMALL)
        self.blit([self.im, self.row_box, *self.blocked, *self.bars, self.ax_im.title,
                   self.ax_bar.title])

    def update(self, position: int = 3, mask: str = "causal", item: int = 1) -> str:
        M = mask_for(mask, self.n, self.lengths, item)  # (n, n)
        W = _masked_weights(self.Q[item], self.K[item], M)  # (n, n), blocked cells masked
        self.im.set_array(W)
        self.row_box.set_y(position - 0.5)
        row = W[position].filled(0.0)
        allowed = np.isfinite(M[position])
        for bar, grey, h, ok in zip(self.bars, self.blocked, row, allowed, strict=True):
            bar.set_height(h)  # a blocked key's weight is exactly 0
            grey.set_height(0.0 if ok else 1.05)
        length = self.lengths[item]
        self.ax_im.set_title(_("mask: {mask}, item {item} (length {length})").format(
            mask=_(mask), item=item, length=length), fontsize=SMALL)
        keys = [int(j) for j in np.flatnonzero(allowed)]
        self.ax_bar.set_title(_("query i = {position} may attend to keys {keys} (grey: blocked)")
                              .format(position=position, keys=keys), fontsize=SMALL)
        return _("mask {mask}, batch item {item} (length {length}), query {position}\n"
                 "may attend to keys {keys}\nweights {weights}").format(
            mask=_(mask), item=item, length=length, position=position, keys=keys,
            weights=np.array2string(row, precision=3))


# --- self-checks --------------------------------------------------------------

def check_causal_mask(answer, n: int) -> Verdict:
    """Check an additive causal mask (n, n): 0 on and below the diagonal, -inf above."""
    right = ac.causal_mask(n)
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    mistakes = {  # checks.MISTAKES under 04: at the end of this file, or in course/mistakes.py
        "mask_lower_triangle": right.T,
        "mask_hides_diagonal": np.where(np.triu(np.ones((n, n), dtype=bool)), -np.inf, 0.0),
        "mask_multiplicative": (~future).astype(float),
        "mask_boolean_blocked": future.astype(float),
        "mask_large_negative": np.where(future, -1e9, 0.0),
        "mask_finfo_min": np.where(future, np.finfo(float).min, 0.0),
        "mask_times_inf": np.where(future, -np.inf, np.nan),
    }
    verdict = check_value(answer, right, _("causal mask for n = {n}").format(n=n), mistakes)
    if verdict.mistake in FINITE_FILLS:  # the same weights: another convention, not a bug
        label, why = named(verdict.mistake)
        return Verdict(MISTAKE, _("Same weights, another convention: you wrote {label}. {why}")
                       .format(label=label, why=sentence(why)), verdict.mistake)
    return verdict


# finite stand-ins for -inf: a trade-off (section 8), so their verdict does not call them a mistake
FINITE_FILLS = ("mask_large_negative", "mask_finfo_min")


# --- this notebook's entries of checks.MISTAKES and checks.QUESTIONS ---------------------------
# The mistakes its checks name (those several notebooks name are in course/mistakes.py), and
# the hint and worked solution of each of its questions (course/questions.py gathers them).

MISTAKES = {
    "mask_lower_triangle": Mistake(
        "04",
        N_("a mask that hides the past"),
        N_("query i may see keys j <= i: the -inf entries belong ABOVE the diagonal "
           "(np.triu(..., k=1)), not below it.")),
    "mask_times_inf": Mistake(
        "04",
        N_("multiplying by -inf"),
        N_("0 x -inf is NaN, not 0: np.triu(np.ones((n, n)), 1) * -np.inf puts NaN on and below "
           "the diagonal, and one NaN turns a whole softmax row into NaN. "
           "Use np.where(blocked, -np.inf, 0.0).")),
}

QUESTIONS = {
    "04.causal_mask": Question(
        N_("Query i may see the keys j <= i. Start from a True/False matrix that is True exactly "
           "where a key is in the future (j > i: np.triu has an offset k for that), then turn True "
           "into -np.inf and False into 0.0."),
        "np.where(np.triu(np.ones((5, 5), dtype=bool), k=1), -np.inf, 0.0)",
        N_("np.triu(..., k=1) is True strictly above the diagonal, where the keys are in the "
           "future; np.where puts -inf there and 0 everywhere else, so the diagonal "
           "(each position sees itself) and everything below it stay 0. Multiplying by -np.inf "
           "instead would give NaN wherever the entry is 0 (0 x -inf), and -1e9 would hide a fully "
           "masked row silently.")),
    "04.masked_weights": Question(
        N_("The order is scores, scale, mask, softmax: the mask M is added to the scaled scores, "
           "before the softmax sees them."),
        "ac.softmax(Q @ K.T / np.sqrt(d_k) + M, axis=-1)",
        N_("Q @ K.T / sqrt(3) is (4, 4); adding M puts -inf above the diagonal, so the softmax "
           "gives those keys exactly e^(-inf) = 0 and spreads each row over the keys j <= i: the "
           "first row is [1, 0, 0, 0]. Zeroing the weights after the softmax instead leaves rows "
           "that do not sum to 1.")),
    "04.padded_output": Question(
        N_("The core function ac.scaled_dot_product_attention takes the mask as an argument and "
           "returns a pair (output, weights): which one is asked for? The mask is the padding mask "
           "of section 3, built from `lengths`."),
        "ac.scaled_dot_product_attention(Q_b, K_b, V_b, mask=ac.padding_mask(lengths, m=4))[0]",
        N_("The padding mask has the shape (batch, 1, m): for every query it hides the padded KEYS "
           "of its item, and it broadcasts to (batch, n, m) = (3, 4, 4). The function adds it to "
           "the scaled scores before the softmax; [0] is the output, (batch, n, d_v) = (3, 4, 2). "
           "Zeroing the padded values instead would leave the padded keys in every softmax.")),
}
