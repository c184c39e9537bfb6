"""Notebook 07, Feed-forward network: its figures, live figure and self-checks.

The lesson itself is in notebooks/07_feed_forward_network.ipynb; this module holds what a learner
may skip (drawing, widget wiring, the checks' diagnoses). Its tests are in
tests/test_nb07_feed_forward_network.py.
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
from course.checks import hint as hint, solution as solution  # offered in the check cells
from course.checks import Mistake, Question  # of its own entries, at the end
from course import figures
from course.figures import SMALL, fixed_subplots
from course.i18n import N_, _
from course.live import LiveFigure

# --- figures and live figure ----------------------------------------------------

def locality_figure(delta_ffn, delta_attn, changed: int):
    """Side by side |change of output| (n, d_model) for FFN and self-attention after changing input row `changed`."""
    delta_ffn, delta_attn = np.abs(delta_ffn), np.abs(delta_attn)
    vmax = max(delta_ffn.max(), delta_attn.max(), 1e-12)
    fig, axes = fixed_subplots(1, 2, widths=3.6, heights=2.6, left=0.85, right=1.2, bottom=0.7,
                               top=0.9, wgap=0.95)
    for ax, d, name in zip(axes, (delta_ffn, delta_attn), (_("FFN (位置ごと)"), _("self-attention")),
                           strict=True):
        im = ax.imshow(d, cmap="Reds", vmin=0.0, vmax=vmax, aspect="auto")
        n, d_model = d.shape
        ax.set_xticks(range(d_model))
        ax.set_yticks(range(n))
        ax.set_xlabel(_("feature (d_model axis)"))
        ax.set_ylabel(_("output position i"))
        ax.set_title(name)
        ax.axhline(changed - 0.5, color="k", lw=1, ls="--")
        ax.axhline(changed + 0.5, color="k", lw=1, ls="--")
    figures.colorbar(fig, im, axes, label=_("|Δ output|"))
    figures.suptitle(fig, _("|Δ output| after changing input row {changed} (dashed)").format(
        changed=changed))
    return fig


def influence_figure(infl_ffn, infl_attn):
    """Two (n, n) maps of ||d out_i / d x_j||: FFN (diagonal) beside self-attention (full)."""
    n = np.shape(infl_ffn)[0]
    side = max(0.62 * n, 2.7)  # inches: room for each value, and for the title above
    fig, axes = fixed_subplots(1, 2, widths=side, heights=side, left=0.85, right=1.35,
                               bottom=0.7, top=0.45, wgap=0.95)
    vmax = max(np.max(infl_ffn), np.max(infl_attn))
    for ax, M, name in zip(axes, (infl_ffn, infl_attn), ("FFN", _("self-attention")), strict=True):
        M = np.asarray(M, dtype=float)
        im = ax.imshow(M, cmap="Purples", vmin=0.0, vmax=vmax)
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.set_xlabel(_("input position j"))
        ax.set_ylabel(_("output position i"))
        ax.set_title(f"{name}: ||∂out_i / ∂x_j||")
        for i in range(n):
            for j in range(n):
                ax.text(j, i, f"{M[i, j]:.1f}", ha="center", va="center", fontsize=SMALL,
                        color="white" if M[i, j] > 0.6 * vmax else "black")
    figures.colorbar(fig, im, axes, label=_("size of the Jacobian block"))
    return fig


def convex_hull_2d(points) -> np.ndarray:
    """Indices of the convex hull of 2-D points, counter-clockwise (Andrew's monotone chain).

    A standard algorithm, not the lesson: the notebook uses the corners it returns for its own
    inside-the-hull test, and convex_hull_figure to draw the hull.
    """
    P = np.asarray(points, dtype=float)
    if P.ndim != 2 or P.shape[1] != 2 or len(P) < 3:
        raise ValueError(f"points must have shape (k, 2) with k >= 3, got {P.shape}")
    order = sorted(range(len(P)), key=lambda i: (P[i, 0], P[i, 1]))

    def cross(o, a, b):
        return (P[a, 0] - P[o, 0]) * (P[b, 1] - P[o, 1]) - (P[a, 1] - P[o, 1]) * (P[b, 0] - P[o, 0])

    def chain(idx):
        out = []
        for i in idx:
            while len(out) >= 2 and cross(out[-2], out[-1], i) <= 0:
                out.pop()
            out.append(i)
        return out

    lower, upper = chain(order), chain(order[::-1])
    return np.array(lower[:-1] + upper[:-1])


def convex_hull_figure(V, O):
    """Value vectors v_j (2-D), their convex hull, and attention outputs O = A V (all inside)."""
    V, O = np.asarray(V, dtype=float), np.asarray(O, dtype=float)
    hull = V[convex_hull_2d(V)]
    lo, hi = V.min(axis=0), V.max(axis=0)
    pad = 0.12 * (hi - lo)
    (x0, y0), (x1, y1) = lo - pad, hi + pad
    height = 4.0  # inches; the width follows from the data (equal scales)
    fig, ax = fixed_subplots(widths=height * (x1 - x0) / (y1 - y0), heights=height, left=0.8,
                             right=3.0, bottom=0.7, top=0.75)
    ax.fill(hull[:, 0], hull[:, 1], color="C0", alpha=0.15, label=_("convex hull of the values"))
    ax.scatter(O[:, 0], O[:, 1], s=8, color="C1", alpha=0.8,  # 3:1 on white at least
               label=_(r"attention outputs $o_i = \sum_j a_{ij} v_j$"))
    ax.scatter(V[:, 0], V[:, 1], s=90, color="C0", edgecolor="k", zorder=3,
               label=_(r"value vectors $v_j$"))
    for j, v in enumerate(V):
        ax.annotate(f"$v_{j + 1}$", v, textcoords="offset points", xytext=(6, 6), fontsize=13)
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_xlabel(_("value feature 1"))
    ax.set_ylabel(_("value feature 2"))
    ax.set_title(_("Attention outputs are convex combinations\n(バリューの凸結合)"))
    ax.legend(loc="upper left", bbox_to_anchor=(1.03, 1.0), fontsize=SMALL, borderaxespad=0.0)
    ax.set_aspect("equal")
    return fig


def bent_line_figure(ffn, start, end, kinks, num: int = 401):
    """A straight segment in 2-D (left) and its image under a 2-D -> 2-D FFN (right), marked at the kinks.

    kinks: the parameters t in (0, 1) where a hidden unit switches, computed in the notebook.
    """
    t = np.linspace(0.0, 1.0, num)
    start, end = np.asarray(start, float), np.asarray(end, float)
    line = start[None, :] + t[:, None] * (end - start)[None, :]  # (num, 2)
    image = ac.feed_forward(line, ffn.W_1, ffn.b_1, ffn.W_2, ffn.b_2)  # (num, 2)
    kinks = np.asarray(kinks, dtype=float)
    fig, axes = fixed_subplots(1, 2, widths=4.0, heights=2.7, left=0.85, right=0.15, bottom=0.7,
                               top=1.2, wgap=0.95)
    for ax, pts, title in zip(axes, (line, image), (_("input: a straight segment x(t)"),
                                                          _("output: FFN(x(t))")), strict=True):
        ax.plot(pts[:, 0], pts[:, 1], color="C0", lw=2.5, label=_("path"))
        ax.plot(*pts[0], "o", color="C2", ms=9, label="t = 0")
        ax.plot(*pts[-1], "s", color="C3", ms=9, label="t = 1")
        ax.set_xlabel(_("feature 1"))
        ax.set_ylabel(_("feature 2"))
        ax.set_title(title)
        ax.margins(0.08)
    if len(kinks):
        k_pts = ac.feed_forward(start[None, :] + kinks[:, None] * (end - start)[None, :],
                                ffn.W_1, ffn.b_1, ffn.W_2, ffn.b_2)
        axes[1].plot(k_pts[:, 0], k_pts[:, 1], "kx", ms=10, mew=2,
                     label=_("a hidden unit switches"))
    figures.suptitle(fig, _("A linear map keeps lines straight; the ReLU in the FFN bends them"))
    handles = axes[1].get_lines()  # the same marks in both panels: one legend, under the title
    fig.legend(handles=handles, loc="upper center", ncols=len(handles), frameon=False,
               bbox_to_anchor=(0.5, 1 - 0.42 / fig.get_figheight()))
    return fig


def _fmt(v) -> str:
    return "[" + ", ".join(f"{x:+.2f}" for x in np.ravel(v)) + "]"


def ffn_1d_figure(xs, hinges, output, corners):
    """FFN with d_model = 1 as a sum of hinges, all computed in the notebook.

    xs (num,) inputs; hinges (num, d_ff), unit j's ReLU(x w1_j + b1_j) w2_j; output (num,), FFN(xs);
    corners (d_ff,), where each unit switches (drawn dotted when inside the range of xs).
    """
    xs, hinges, output = (np.asarray(a, dtype=float) for a in (xs, hinges, output))
    fig, ax = fixed_subplots(widths=5.6, heights=3.2, left=0.8, right=3.3, bottom=0.7, top=0.45)
    for j in range(hinges.shape[1]):
        ax.plot(xs, hinges[:, j], ls="--", lw=1.5,
                label=_("unit {j}: ReLU(x w1_{j} + b1_{j}) · w2_{j}").format(j=j))
    ax.plot(xs, output, color="k", lw=3, label=_("FFN(x) = sum of units + b_2"))
    for xk in _in_range(corners, xs[0], xs[-1]):
        ax.axvline(xk, color="0.5", lw=0.8, ls=":")
    ax.set_xlabel(_("input x (d_model = 1)"))
    ax.set_ylabel(_("output"))
    ax.set_title(_("FFN on a 1-D input: piecewise linear, bent where a unit switches (dotted)"),
                 loc="left")
    ax.legend(fontsize=SMALL, loc="upper left", bbox_to_anchor=(1.03, 1.0), borderaxespad=0.0)
    return fig


def _in_range(corners, low, high) -> np.ndarray:
    """The corners strictly between low and high, sorted: the ones a figure over [low, high] shows."""
    c = np.asarray(corners, dtype=float)
    return np.sort(c[(c > low) & (c < high)])


class LiveFFN1D(LiveFigure):
    """Slider for a 1-D input x: the FFN curve with the current point, and the d_ff hidden units as bars.

    corners: where each unit switches, computed in the notebook; drawn as dotted verticals.
    """

    layout = None  # fixed_subplots in setup()

    def __init__(self, ffn, corners, x_range=(-3.0, 3.0)):
        if ffn.W_1.shape[0] != 1 or ffn.W_2.shape[1] != 1:
            raise ValueError(f"LiveFFN1D needs d_model = 1: W_1 (1, d_ff) and W_2 (d_ff, 1), got "
                             f"W_1 {ffn.W_1.shape} and W_2 {ffn.W_2.shape}")
        self.ffn, self.corners, self.x_range = ffn, corners, x_range
        super().__init__()

    def setup(self) -> None:
        f = self.ffn
        _fig, (ax_f, ax_h) = fixed_subplots(1, 2, widths=[4.6, 3.1], heights=2.6, left=0.8,
                                            right=0.15, bottom=0.7, top=0.5, wgap=0.95,
                                            fig=self.fig)
        xs = np.linspace(*self.x_range, 601)
        ys = ac.feed_forward(xs[:, None], f.W_1, f.b_1, f.W_2, f.b_2)[:, 0]
        ax_f.plot(xs, ys, color="k", lw=2, label="FFN(x)")
        for xk in _in_range(self.corners, *self.x_range):
            ax_f.axvline(xk, color="0.5", lw=0.8, ls=":")
        (self.point,) = ax_f.plot([], [], "o", color="C3", ms=11, label=_("current x"))
        ax_f.set_xlabel(_("input x (d_model = 1)"))
        ax_f.set_ylabel("FFN(x)")
        ax_f.legend(loc="best", fontsize=SMALL)  # computed once: the legend is static
        self.title = ax_f.set_title("")
        d_ff = f.W_1.shape[1]
        top = ac.relu(xs[:, None] * f.W_1[0] + f.b_1).max()
        self.bars = ax_h.bar(range(d_ff), np.zeros(d_ff), color="C2", edgecolor="k")
        ax_h.set_ylim(0, 1.1 * top)
        ax_h.set_xticks(range(d_ff))
        ax_h.set_xlabel(_("hidden unit j (d_ff axis)"))
        ax_h.set_ylabel("ReLU(x w1_j + b1_j)")
        ax_h.set_title(_("hidden units (grey = off)"))
        self.update(x=0.0)  # a title of its real size for the one layout
        self.blit([self.point, *self.bars, self.title])

    def update(self, x=0.0) -> str:
        f = self.ffn
        x = float(x)
        z = x * f.W_1[0] + f.b_1  # (d_ff,) pre-activation
        hidden = ac.relu(z)
        y = float(ac.feed_forward(np.array([[x]]), f.W_1, f.b_1, f.W_2, f.b_2)[0, 0])
        self.point.set_data([x], [y])
        for bar, hv, zv in zip(self.bars, hidden, z, strict=True):
            bar.set_height(hv)
            bar.set_facecolor("C2" if zv > 0 else "0.75")
        on = int(np.sum(z > 0))
        self.title.set_text(_("x = {x}: FFN(x) = {y}, {on} of {units} units on").format(
            x=f"{x:+.2f}", y=f"{y:+.3f}", on=on, units=len(z)))
        return _("x = {x}\nz = x W_1 + b_1 = {z}\nReLU(z)         = {hidden}\n"
                 "units on: {on} of {units}\nFFN(x) = ReLU(z) W_2 + b_2 = {y}").format(
                     x=f"{x:+.2f}", z=_fmt(z), hidden=_fmt(hidden), on=on, units=len(z),
                     y=f"{y:+.4f}")


# --- self-checks --------------------------------------------------------------

def ffn_param_count(d_model: int, d_ff: int) -> int:
    """Number of learned numbers in the FFN: W_1, b_1, W_2, b_2 = 2 d_model d_ff + d_ff + d_model."""
    return 2 * d_model * d_ff + d_ff + d_model


def check_ffn_param_count(answer, d_model: int, d_ff: int) -> Verdict:
    """Check the FFN parameter count; recognise forgotten biases and the attention-like 4 d_model^2."""
    if is_unanswered(answer):
        return unanswered(_("parameter count (an integer)"))
    if isinstance(answer, str):
        return count_in_quotes(answer)
    try:
        got = int(answer)
    except (TypeError, ValueError):
        return Verdict(WRONG, _("Give the count as one integer, got {answer!r}.").format(
            answer=answer))
    if got != answer:
        return Verdict(WRONG, _("A parameter count is a whole number, got {answer!r}.").format(
            answer=answer))
    right = ffn_param_count(d_model, d_ff)
    if got == right:
        return Verdict(CORRECT, _("Correct: 2 d_model d_ff + d_ff + d_model = 2*{d_model}*{d_ff} + "
                                  "{d_ff} + {d_model} = {right}.").format(
                                      d_model=d_model, d_ff=d_ff, right=f"{right:,}"))
    wrongs = {"ffn_no_biases": 2 * d_model * d_ff,
              "ffn_one_bias": (2 * d_model * d_ff + d_ff, 2 * d_model * d_ff + d_model),
              "ffn_counted_like_attention": (4 * d_model ** 2, 4 * d_model ** 2 + 4 * d_model),
              "ffn_square_weights": (2 * d_model ** 2 + 2 * d_model, 2 * d_model ** 2)}
    for key, values in wrongs.items():
        if got in np.atleast_1d(values):
            label, why = named(key)
            return Verdict(MISTAKE, _("Not quite: {got} is what {label} gives. {why}").format(
                got=f"{got:,}", label=label, why=sentence(why)), key)
    return Verdict(WRONG, _("Not quite: you gave {got}. Count W_1 (d_model x d_ff), b_1 (d_ff), "
                            "W_2 (d_ff x d_model) and b_2 (d_model) with d_model = {d_model}, "
                            "d_ff = {d_ff}.").format(got=f"{got:,}", d_model=d_model, d_ff=d_ff))


def check_ffn_output(answer, X, W_1, b_1, W_2, b_2) -> Verdict:
    """Check FFN(X) = max(0, X W_1 + b_1) W_2 + b_2; recognise ReLU after W_2, no ReLU, missing biases."""
    X, W_1, b_1, W_2, b_2 = (np.asarray(a, dtype=float) for a in (X, W_1, b_1, W_2, b_2))
    right = ac.feed_forward(X, W_1, b_1, W_2, b_2)
    Z = X @ W_1 + b_1  # (n, d_ff) pre-activation
    mistakes = {"ffn_relu_after_W_2": ac.relu(Z @ W_2 + b_2),
                "ffn_no_relu": Z @ W_2 + b_2,
                "ffn_missing_b_1": ac.relu(X @ W_1) @ W_2 + b_2,
                "ffn_missing_b_2": ac.relu(Z) @ W_2}
    return check_value(answer, right, _("FFN output"), mistakes)


# --- this notebook's entries of checks.MISTAKES and checks.QUESTIONS ---------------------------
# The mistakes its checks name (those several notebooks name are in course/mistakes.py), and
# the hint and worked solution of each of its questions (course/questions.py gathers them).

MISTAKES = {
    "ffn_no_biases": Mistake(
        "07",
        N_("forgetting the biases"),
        N_("FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 also learns b_1 (d_ff numbers) and b_2 "
           "(d_model numbers): the count is 2 d_model d_ff + d_ff + d_model.")),
    "ffn_one_bias": Mistake(
        "07",
        N_("counting only one of the two biases"),
        N_("there are two bias vectors, b_1 of shape (d_ff,) and b_2 of shape (d_model,); "
           "count both.")),
    "ffn_counted_like_attention": Mistake(
        "07",
        N_("counting the FFN like attention (4 d_model^2)"),
        N_("attention has four d_model x d_model matrices (W_Q, W_K, W_V, W_O); the FFN has two "
           "matrices, W_1 (d_model, d_ff) and W_2 (d_ff, d_model), with d_ff = 4 d_model, so "
           "2 d_model d_ff = 8 d_model^2, plus the biases d_ff + d_model.")),
    "ffn_square_weights": Mistake(
        "07",
        N_("using d_model x d_model weights"),
        N_("the hidden layer is wider than the model: W_1 is (d_model, d_ff), not "
           "(d_model, d_model).")),
    "ffn_relu_after_W_2": Mistake(
        "07",
        N_("the ReLU applied after W_2"),
        N_("the ReLU acts on the d_ff hidden units, between the two linear maps: "
           "max(0, x W_1 + b_1), then W_2 and b_2. Applied at the end it clips the output "
           "to >= 0 and leaves the two linear maps joined into one.")),
    "ffn_no_relu": Mistake(
        "07",
        N_("leaving out the ReLU"),
        N_("without max(0, .) the two layers collapse into a single linear map "
           "x (W_1 W_2) + (b_1 W_2 + b_2); the ReLU on the hidden units is the non-linearity.")),
    "ffn_missing_b_1": Mistake(
        "07",
        N_("a missing b_1"),
        N_("add the hidden bias b_1 before the ReLU: max(0, x W_1 + b_1). It moves where each "
           "hidden unit switches on.")),
    "ffn_missing_b_2": Mistake(
        "07",
        N_("a missing b_2"),
        N_("add the output bias b_2 at the very end: ... W_2 + b_2.")),
}

QUESTIONS = {
    "07.ffn_param_count": Question(
        N_("The FFN learns four arrays: W_1 (d_model, d_ff), b_1 (d_ff,), W_2 (d_ff, d_model) and "
           "b_2 (d_model,). Add up their sizes."),
        "2 * 512 * 2048 + 2048 + 512",
        N_("W_1 and W_2 hold 512 * 2048 = 1,048,576 numbers each, b_1 holds 2048 and b_2 512: "
           "2,097,152 + 2,560 = 2,099,712, about 8 d_model^2, twice attention's "
           "4 d_model^2 = 1,048,576.")),
    "07.ffn_output": Question(
        N_("Row by row: widen with W_1 and b_1 (the first row gives (-0.5, -2, 3), as the question "
           "says), switch off the negative hidden units, then come back with W_2 and b_2. Where "
           "exactly does the ReLU go?"),
        "np.maximum(0, X_tiny @ W_1t + b_1t) @ W_2t + b_2t",
        N_("Row 1: (-0.5, -2, 3) becomes (0, 0, 3) after the ReLU; times W_2 that is 3 (1, -1) "
           "= (3, -3), plus b_2 = (0.5, -1): (3.5, -4). Row 2: x = (0, 1) gives (1.5, 2, -2), then "
           "(1.5, 2, 0), then 1.5 (1, 2) + 2 (-1, 1) = (-0.5, 5), plus b_2: (0, 4). The ReLU acts "
           "on the d_ff hidden units between the two linear maps; b_1 goes before it, b_2 at the "
           "end.")),
}
