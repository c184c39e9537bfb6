"""Notebook 03, Scaling and softmax saturation: its figures, live figure and self-checks.

The lesson itself is in notebooks/03_scaling_and_softmax_saturation.ipynb; this module holds what a learner
may skip (drawing, widget wiring, the checks' diagnoses). Its tests are in
tests/test_nb03_scaling_and_softmax_saturation.py.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib
import numpy as np

import attention_core as ac
from course import figures
from course.checks import (
    CORRECT,
    MISTAKE,
    WRONG,
    Verdict,
    check_value,
    is_unanswered,
    named,
    sentence,
    unanswered,
)
from course.checks import hint as hint, solution as solution  # offered in the check cells
from course.checks import Mistake, Question  # of its own entries, at the end
from course.figures import SMALL, fixed_subplots
from course.i18n import N_, _
from course.live import LiveFigure

# --- figures and live figure ----------------------------------------------------

# (y label, title) of each panel, translated where they are drawn; the norm is a formula only
_SATURATION_LABELS = {"max_weight": (N_(r"max weight $\max_j\, p_j$"), N_("largest weight")),
                      "entropy": (N_("entropy H(p) [nats]"), N_("entropy")),
                      "jacobian_norm": (r"$\|\mathrm{diag}(p) - p^{\mathsf{T}} p\|_F$",
                                        N_("Jacobian norm (gradient size)"))}


def plot_saturation_curves(d_ks, curves, m: int = 10):
    """Three panels: max weight, entropy, Jacobian norm against d_k, unscaled vs scaled."""
    d_ks = np.asarray(d_ks)
    fig, axes = fixed_subplots(1, 3, widths=2.85, heights=2.6, left=0.95, right=0.15,
                               bottom=0.7, top=1.2, wgap=1.0)
    shown = d_ks[::2] if len(d_ks) > 6 else d_ks  # every other width: labels that do not crowd
    for ax, (key, (ylabel, title)) in zip(axes, _SATURATION_LABELS.items(), strict=True):
        ax.plot(d_ks, curves["unscaled"][key], "o-", color="C3",
                label=_(r"raw $q \cdot k$"))
        ax.plot(d_ks, curves["scaled"][key], "s-", color="C0",
                label=_(r"scaled $q \cdot k / \sqrt{d_k}$"))
        ax.set_xscale("log", base=2)
        ax.set_xticks(shown, [str(int(d)) for d in shown])  # 1, 4, 16, ...: plain, like the text
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(5))
        ax.set_xlabel(_(r"$d_k$ (log scale)"))
        ax.set_ylabel(_(ylabel))
        ax.set_title(_(title))
        ax.grid(alpha=0.3)
    # the reference lines, each with a one-entry legend where the curves leave room
    axes[0].axhline(1 / m, color="gray", ls=":", label=_("uniform: 1/{m}").format(m=m))
    axes[1].axhline(np.log(m), color="gray", ls=":", label=_("uniform: ln {m}").format(m=m))
    axes[0].legend(handles=axes[0].lines[2:], loc="upper left", fontsize=SMALL)
    axes[1].legend(handles=axes[1].lines[2:], loc="lower left", fontsize=SMALL)
    figures.suptitle(fig, _("Softmax saturation (飽和) as d_k grows: m = {m} keys, mean over "
                            "random draws").format(m=m))
    fig.legend(handles=axes[0].lines[:2], loc="upper center", ncols=2, frameon=False,
               bbox_to_anchor=(0.5, 1 - 0.42 / fig.get_figheight()))
    return fig


def plot_score_histograms(samples: dict):
    """Histograms of q.k (top, against N(0, d_k)) and q.k / sqrt(d_k) (bottom, against N(0, 1)).

    samples : {d_k: array of q.k values}.
    """
    d_ks = sorted(samples)
    title = _("Dot products of random vectors: spread grows like sqrt(d_k) unless scaled")
    fig, axes = fixed_subplots(2, len(d_ks), widths=3.3, heights=1.95, left=0.95, right=0.15,
                               bottom=0.7, top=0.85, wgap=0.3, hgap=1.05, sharex="row",
                               sharey="row", squeeze=False, min_width=figures.text_width(title) + 0.3)
    for col, d_k in enumerate(d_ks):
        s = np.asarray(samples[d_k], dtype=float)
        for row, (x, var, name) in enumerate(((s, d_k, r"$q \cdot k$"),
                                              (s / np.sqrt(d_k), 1.0, r"$q \cdot k / \sqrt{d_k}$"))):
            ax = axes[row, col]
            limit = 4 * np.sqrt(max(d_ks)) if row == 0 else 4.0
            grid = np.linspace(-limit, limit, 400)
            ax.hist(x, bins=np.linspace(-limit, limit, 61), density=True, color="tab:gray",
                    histtype="stepfilled", alpha=0.6,  # one polygon, not 60 bar patches
                    label=_("samples, var {var}").format(var=f"{x.var():.1f}"))
            pdf = np.exp(-grid ** 2 / (2 * var)) / np.sqrt(2 * np.pi * var)
            ax.plot(grid, pdf, color="C3" if row == 0 else "C0",
                    label=_("N(0, {var}) density").format(var=f"{var:g}"))
            ax.set_title(f"{name}, $d_k$ = {d_k}")
            ax.set_xlabel(name)
            ax.legend(fontsize=SMALL, loc="upper right")
        axes[0, col].xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(5, steps=[1, 2, 5, 10]))
        axes[1, col].set_xticks([-4, -2, 0, 2, 4])
    for ax in axes[:, 0]:  # rows share y: one label on the left
        ax.set_ylabel(_("density"))
        ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4))
        top = max(a.dataLim.y1 for a in ax.get_shared_y_axes().get_siblings(ax))
        ax.set_ylim(0, 1.45 * top)  # room above the densities for the legends
    figures.suptitle(fig, title)
    return fig


def _draw_ten_key_bars(ax, weights, color, title):
    bars = ax.bar(np.arange(1, len(weights) + 1), weights, color=color)
    ax.set_ylim(0, 1.05)
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_xticks(np.arange(1, len(weights) + 1))
    ax.set_xlabel(_("key j"))
    ax.set_ylabel(_(r"attention weight $p_j$"))  # no 注意重み here: rotated, it is hard to read
    ax.set_title(title)
    return bars


def plot_ten_key_softmax(p_raw, p_scaled, d_k: int):
    """Source note 000's figure: the weights of the raw scores (left) beside those of scores / sqrt(d_k) (right).

    p_raw, p_scaled : (m,) softmax(s) and softmax(s / sqrt(d_k)), computed in the notebook.
    """
    fig, axes = fixed_subplots(1, 2, widths=4.6, heights=2.6, left=0.85, right=0.15, bottom=0.7,
                               top=0.95, wgap=0.3, sharey=True)
    _draw_ten_key_bars(axes[0], p_raw, "C3",
                       _(r"softmax($q k_j^T$), no scaling, $d_k$ = {d_k}").format(d_k=d_k))
    _draw_ten_key_bars(axes[1], p_scaled, "C0",
                       _(r"softmax($q k_j^T / \sqrt{{d_k}}$), $d_k$ = {d_k}").format(d_k=d_k))
    axes[1].set_ylabel("")  # shared y axis: one label, on the left
    figures.suptitle(fig, _("One query, {m} keys: raw scores saturate, scaled scores spread "
                            "out").format(m=len(p_raw)))
    return fig


def plot_saturation_small_multiples(weights: dict, seed: int = 0):
    """Ten-key picture for several d_k: unscaled weights (top row) and scaled (bottom row).

    weights : {d_k: (p_raw, p_scaled)}, each (m,), computed in the notebook; seed: that of the
    draws, for the title.
    """
    d_ks = list(weights)
    title = _("Seed {seed} at growing d_k (a new draw per width): raw softmax saturates, "
              "scaled does not").format(seed=seed)
    fig, axes = fixed_subplots(2, len(d_ks), widths=1.9, heights=1.5, left=1.05, right=0.15,
                               bottom=0.7, top=1.0, wgap=0.2, hgap=0.9, sharey=True,
                               squeeze=False, min_width=figures.text_width(title) + 0.3)
    for col, d_k in enumerate(d_ks):
        panel_titles = (_("raw, d_k = {d_k}\nmax {max}"), _("scaled, d_k = {d_k}\nmax {max}"))
        for row, (p, color, panel_title) in enumerate(zip(weights[d_k], ("C3", "C0"),
                                                          panel_titles, strict=True)):
            ax, p = axes[row, col], np.asarray(p, dtype=float)
            m = len(p)
            ax.bar(np.arange(1, m + 1), p, color=color)
            ax.set_ylim(0, 1.05)
            ax.set_title(panel_title.format(d_k=d_k, max=f"{p.max():.2f}"), fontsize=SMALL)
            ax.set_xticks([1, m])
        axes[1, col].set_xlabel(_("key j"))  # both rows: the same keys
    axes[0, 0].set_yticks([0, 0.5, 1])
    axes[0, 0].set_ylabel(_("weight $p_j$ (raw)"))
    axes[1, 0].set_ylabel(_("weight $p_j$ (scaled)"))
    figures.suptitle(fig, title)
    return fig


class LiveSaturation(LiveFigure):
    """Ten keys, one query, a chosen d_k: raw vs scaled softmax bars and the three saturation numbers.

    scores_for : d_k -> (m,) raw scores q K^T (the notebook's seeded draw);
    saturation : scores -> {"max_weight", "entropy", "jacobian_norm"} (the notebook's measure).
    """

    layout = None  # fixed_subplots in setup()

    def __init__(self, scores_for, saturation):
        self.scores_for, self.saturation = scores_for, saturation
        self.m = len(scores_for(1))
        super().__init__()

    def setup(self) -> None:
        _fig, (ax_raw, ax_scaled) = fixed_subplots(1, 2, widths=4.1, heights=2.4, left=0.85,
                                                   right=0.15, bottom=0.7, top=0.7, wgap=0.3,
                                                   sharey=True, fig=self.fig)
        zeros = np.zeros(self.m)
        self.bars = {"raw": _draw_ten_key_bars(ax_raw, zeros, "C3", ""),
                     "scaled": _draw_ten_key_bars(ax_scaled, zeros, "C0", "")}
        ax_scaled.set_ylabel("")  # shared y axis: one label, on the left
        self.axes = {"raw": ax_raw, "scaled": ax_scaled}
        for ax in self.axes.values():  # two-line titles, as update() writes them
            ax.set_title(_("softmax\nmax weight"), fontsize=SMALL)
        self.blit([*self.bars["raw"], *self.bars["scaled"], *(ax.title for ax in self.axes.values())])

    def update(self, d_k: int = 512) -> str:
        s = self.scores_for(d_k)
        numbers = {}
        for name, x in (("raw", s), ("scaled", s / np.sqrt(d_k))):
            p = ac.softmax(x)
            for bar, h in zip(self.bars[name], p, strict=True):
                bar.set_height(h)
            sat = self.saturation(x)
            text = _("max weight {max_weight}, entropy {entropy} nats, ||J|| {norm}")
            numbers[name] = text.format(max_weight=f"{sat['max_weight']:.3f}",
                                        entropy=f"{sat['entropy']:.3f}",
                                        norm=f"{sat['jacobian_norm']:.3f}")
            label = "softmax(q k^T)" if name == "raw" else "softmax(q k^T / sqrt(d_k))"
            self.axes[name].set_title(f"{label}, d_k = {d_k}\n{numbers[name]}",
                                      fontsize=SMALL)  # no mathtext: fast
        # one text, so that a translation can align its own row names
        return _("d_k = {d_k}, std of q.k = sqrt(d_k) = {std}\n"
                 "   raw: {raw}\n"
                 "scaled: {scaled}").format(d_k=d_k, std=f"{np.sqrt(d_k):.1f}", **numbers)


# --- self-checks --------------------------------------------------------------

def check_dot_product_variance(answer, d_k: int, scaled: bool = False) -> Verdict:
    """Check Var[q.k] = d_k (scaled=False) or Var[q.k / sqrt(d_k)] = 1 (scaled=True), entries i.i.d. (0, 1)."""
    what = "Var[q.k / sqrt(d_k)]" if scaled else "Var[q.k]"  # formulas: the same in every language
    if scaled:
        expected = 1.0
        mistakes = {"var_before_scaling": d_k, "var_divided_by_sqrt": np.sqrt(d_k)}
    else:
        expected = float(d_k)
        mistakes = {"var_std_for_variance": np.sqrt(d_k), "var_after_scaling": 1.0}
    if not is_unanswered(answer) and np.ndim(answer) != 0:
        return Verdict(WRONG, _("Give {what} as a single number, got shape {shape}.").format(
            what=what, shape=np.shape(answer)))
    return check_value(answer, expected, _("{what} for d_k = {d_k}").format(what=what, d_k=d_k),
                       mistakes)


class _ShownTexts(Mapping):
    """A read-only {key: text} whose texts come out in the learner's language when read.

    The notebook prints the choices itself (`for letter, text in nb03.WHY_SCALE_CHOICES.items()`),
    in the same code in every edition: so the translation happens here, on every access.
    """

    def __init__(self, texts: dict):
        self._texts = dict(texts)

    def __getitem__(self, key):
        return _(self._texts[key])

    def __iter__(self):
        return iter(self._texts)

    def __len__(self):
        return len(self._texts)

    def __repr__(self):
        return repr(dict(self))


WHY_SCALE_CHOICES = _ShownTexts({
    "a": N_("it makes q and k unit-length vectors"),
    "b": N_("it keeps the variance of the scores at 1, so the softmax does not saturate as d_k "
            "grows"),
    "c": N_("it makes each row of attention weights sum to 1"),
})


def check_why_scale(answer) -> Verdict:
    """Multiple choice: why divide the scores by sqrt(d_k)? (see WHY_SCALE_CHOICES)."""
    if is_unanswered(answer):
        return unanswered(_('choice ("a", "b" or "c")'))
    choice = str(answer).strip().lower()
    if choice == "b":
        return Verdict(CORRECT, _("Correct: Var[q.k] = d_k, so the raw scores spread like "
                                  "sqrt(d_k) and push the softmax into saturation; dividing by "
                                  "sqrt(d_k) brings the variance back to 1 for every d_k."))
    if choice == "a":
        label, why = named("why_scale_length_myth")
        return Verdict(MISTAKE, _("Not quite: that is the myth '{label}'. {why}").format(
            label=label, why=sentence(why)), "why_scale_length_myth")
    if choice == "c":
        _label, why = named("why_scale_row_sums")  # not "_": that is the translation
        return Verdict(MISTAKE, _("Not quite: {why}").format(why=why), "why_scale_row_sums")
    return Verdict(WRONG, _('Answer with one letter, "a", "b" or "c"; got {answer!r}.').format(
        answer=answer))


# --- this notebook's entries of checks.MISTAKES and checks.QUESTIONS ---------------------------
# The mistakes its checks name (those several notebooks name are in course/mistakes.py), and
# the hint and worked solution of each of its questions (course/questions.py gathers them).

MISTAKES = {
    "var_std_for_variance": Mistake(
        "03",
        N_("the standard deviation sqrt(d_k)"),
        N_("the variance of a sum of d_k independent terms q_i k_i, each of variance 1, is d_k; "
           "sqrt(d_k) is its standard deviation.")),
    "var_after_scaling": Mistake(
        "03",
        N_("the variance after scaling"),
        N_("each term q_i k_i has variance 1, but there are d_k of them and the variances of "
           "independent terms add up: Var[q.k] = d_k.")),
    "var_before_scaling": Mistake(
        "03",
        N_("the variance before scaling"),
        N_("dividing q.k by sqrt(d_k) divides its variance by (sqrt(d_k))^2 = d_k: apply that "
           "to Var[q.k] = d_k.")),
    "var_divided_by_sqrt": Mistake(
        "03",
        N_("dividing the variance by sqrt(d_k) once"),
        N_("Var[X / c] = Var[X] / c^2: with c = sqrt(d_k) the variance d_k is divided by d_k, "
           "not by sqrt(d_k).")),
    "why_scale_length_myth": Mistake(  # the check words it: that is the myth '<label>'. <why>
        "03",
        N_("it only normalises vector length"),
        N_("dividing the score by sqrt(d_k) leaves q and k as they are (their length is about "
           "sqrt(d_k) each, and q.k / sqrt(d_k) is not a cosine): the scale acts on the scores, "
           "not on the vectors.")),
    "why_scale_row_sums": Mistake(  # the check shows only the why
        "03",
        N_("the scale makes each row sum to 1"),
        N_("the softmax already makes every row sum to 1, with or without the scale. Look at "
           "what the scale does to the scores the softmax receives.")),
}

QUESTIONS = {
    "03.dot_product_variance": Question(
        N_("The score q.k is a sum of d_k terms q_i k_i. What is the variance of one such product "
           "of two independent numbers with mean 0 and variance 1, and what happens to the "
           "variances when independent terms are added?"),
        "64",
        N_("Each term has Var[q_i k_i] = E[q_i^2] E[k_i^2] = 1 * 1 = 1 (mean 0 and independence), "
           "and the variances of independent terms add up: Var[q.k] = d_k = 64. Its standard "
           "deviation, sqrt(64) = 8, is the typical size of a raw score.")),
    "03.scaled_variance": Question(
        N_("Dividing a random variable by a constant c divides its variance by c^2. Here the "
           "variable is q.k, with the variance of question 1, and c = sqrt(d_k)."),
        "1",
        N_("Var[q.k / sqrt(d_k)] = Var[q.k] / (sqrt(d_k))^2 = d_k / d_k = 1, for every d_k: that "
           "is the whole reason for the factor 1/sqrt(d_k).")),
    "03.weights": Question(
        N_("The same three steps as always, with the Q, K and d_k this cell defines (d_k = 4, no "
           "longer 512): scores Q K^T of shape (n, m) = (2, 3), the scale, then the softmax over "
           "each row. Where does the scale go, before or after the softmax?"),
        "ac.softmax(Q @ K.T / np.sqrt(d_k), axis=-1)",
        N_("The cell redefines Q (2, 4), K (3, 4) and d_k = 4, so Q @ K.T is (2, 3), one row per "
           "query. The scale comes before the softmax (after it the rows no longer sum to 1), it "
           "is sqrt(d_k) = 2 and not d_k = 4, and axis=-1 normalises each query's row over the "
           "keys.")),
    "03.why_scale": Question(
        N_("Which of the three does the scale change: the length of q and k, the spread of the "
           "scores, or the row sums of the weights? And which of them does the softmax already "
           "take care of on its own?"),
        '"b"',
        N_("Var[q.k] = d_k, so without the scale the scores spread like sqrt(d_k) and the softmax "
           "saturates: nearly one-hot weights and a vanishing Jacobian (section 5). Dividing by "
           "sqrt(d_k) brings the variance back to 1 for every d_k. (a) is the length myth: q and k "
           "are left as they are, and q.k / sqrt(d_k) is not a cosine. (c) is what the softmax "
           "does by itself, with or without the scale.")),
}
