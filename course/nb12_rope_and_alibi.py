"""Notebook 12, Positions by rotation (RoPE) and by distance (ALiBi): figures, live figure, checks.

The lesson itself (the rotation, the relative-position identity, the two layouts, the cached
query, ALiBi's bias, the experiment past the training length) is in
notebooks/12_rope_and_alibi.ipynb; this module holds what a learner may skip: drawing, widget
wiring and the checks' diagnoses. The small position-aware language model the experiment trains
(notebook 10's model with its positional table replaced by one of three schemes) is in
position_lm.py; its names are imported here, so that the notebook calls them as nb12.train and
so on. The tests of both are in tests/test_nb12_rope_and_alibi.py.
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Circle

import attention_core as ac
# The small language model the experiment trains is in position_lm.py (beside
# attention_learning.py); the notebook calls it from here, as nb12.train and so on.
from position_lm import SCHEMES as SCHEMES, accuracy_by_position as accuracy_by_position
from position_lm import backward as backward, forward as forward, init_params as init_params
from position_lm import repeat_batch as repeat_batch, top_offsets as top_offsets, train as train
from course.checks import CORRECT, WRONG, Verdict, as_float, check_value, is_unanswered, weight_mistakes
from course.checks import hint as hint, solution as solution  # offered in the check cells
from course.checks import Mistake, Question  # of its own entries, at the end
from course import figures
from course.figures import SMALL, fixed_subplots
from course.i18n import N_, _
from course.live import LiveFigure

# One colour and one line style per scheme, so that the lines differ without colour too
# The legend's names: the schemes' code names, translated where they are words
SCHEME_LABELS = {"sinusoidal": N_("sinusoidal"), "rope": "RoPE", "alibi": "ALiBi",
                 "none": N_("no position")}
SCHEME_STYLES = {"sinusoidal": ("C1", "--", "o"), "rope": ("C0", "-", "s"),
                 "alibi": ("C2", ":", "^"), "none": ("tab:grey", "-.", "x")}

# --- figures and live figure ----------------------------------------------------


def plot_pair_angles(d: int = 64, base: float = 10000.0, n: int = 200):
    """Left: the angle p * theta_j (mod 2 pi) of every pair j at positions p = 0..n-1; right: the
    wavelength 2 pi / theta_j of every pair, in positions (log scale)."""
    theta = base ** (-2.0 * np.arange(d // 2) / d)  # (d/2,)
    angles = np.mod(np.arange(n)[:, None] * theta[None, :], 2 * np.pi)  # (n, d/2)
    title = _("RoPE's d/2 = {half} rotation speeds (d = {d}, base = {base:g})").format(
        half=d // 2, d=d, base=base)
    fig, (ax_a, ax_w) = fixed_subplots(1, 2, widths=[4.4, 3.6], heights=3.0, left=0.95, right=0.25,
                                       bottom=0.75, top=0.75, wgap=2.1,
                                       min_width=figures.text_width(title) + 0.3)
    im = ax_a.imshow(angles.T, aspect="auto", origin="lower", cmap="twilight", vmin=0, vmax=2 * np.pi,
                     interpolation="nearest", extent=(-0.5, n - 0.5, -0.5, d // 2 - 0.5))
    ax_a.set_xlabel(_("position p"))
    ax_a.set_ylabel(_("pair j"))
    ax_a.set_title(_(r"angle $p\,\theta_j$, mod $2\pi$"), fontsize="medium")
    wavelength = 2 * np.pi / theta  # (d/2,) positions per full turn
    ax_w.semilogy(np.arange(d // 2), wavelength, "o-", ms=3)
    ax_w.axhline(n, color="grey", lw=1, ls="--")
    ax_w.text(d // 2 - 1, n * 1.3, _("{n} positions").format(n=n), ha="right", va="bottom",
              fontsize=SMALL, color="dimgrey")
    ax_w.set_xlabel(_("pair j"))
    ax_w.set_ylabel(_(r"positions per turn, $2\pi/\theta_j$"))
    ax_w.set_title(_("fast pairs turn often, slow ones hardly"), fontsize="medium")
    cb = figures.colorbar(fig, im, ax_a, pad=0.15)
    cb.set_ticks([0, np.pi, 2 * np.pi], labels=["0", r"$\pi$", r"$2\pi$"])
    figures.suptitle(fig, title)
    return fig


class LiveRotation(LiveFigure):
    """Sliders m (the query's position), the offset m - n and the base.

    Left: three pairs of q and k (the fastest, a middle one, the slowest) as unit arrows, q's
    pair rotated by m theta_j and k's by n theta_j; right: the score q~_m . k~_n against the offset, for the
    chosen m (line) and for m = 0 (dots): the two coincide, the score depends on m - n only.
    """

    layout = None  # fixed_subplots in setup()
    d = 16
    max_offset = 64
    seed = 12

    def setup(self) -> None:
        rng = np.random.default_rng(self.seed)
        self.q, self.k = rng.normal(size=(1, self.d)), rng.normal(size=(1, self.d))  # (1, d) each
        self.pairs = (0, self.d // 4, self.d // 2 - 1)
        fig, axes = fixed_subplots(1, 3, widths=1.8, heights=1.8, left=0.3, right=5.0, bottom=0.75,
                                   top=0.8, wgap=0.25, fig=self.fig)
        width, height = fig.get_size_inches()
        ax_s = fig.add_axes((7.2 / width, 0.75 / height, 3.8 / width, 1.8 / height))  # the score
        self.arrows = []
        radius = 1.0  # each pair drawn as its direction: the rotation changes only the angle
        for ax, j in zip(axes, self.pairs, strict=True):
            ax.set_xlim(-1.05 * radius, 1.05 * radius)
            ax.set_ylim(-1.05 * radius, 1.05 * radius)
            ax.set_aspect("equal")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.add_patch(Circle((0, 0), radius, fill=False, color="0.5", lw=0.8))
            ax.set_xlabel(_("pair j = {j}, direction").format(j=j))
            (q_line,) = ax.plot([], [], color="C0", lw=2.5, solid_capstyle="round", zorder=3)
            (k_line,) = ax.plot([], [], color="C1", lw=2.5, ls="--", zorder=3)
            self.arrows.append((q_line, k_line))
        fig.text(0.3 / width, 1 - 0.15 / height,
                 _(r"pairs of $\tilde q$ (blue, solid) and $\tilde k$ (brown, dashed)"),
                 ha="left", va="top", fontsize="medium")
        offsets = np.arange(self.max_offset + 1)
        ax_s.axhline(0, color="grey", lw=0.8)
        (self.score_line,) = ax_s.plot(offsets, np.zeros(len(offsets)), color="C0", lw=2,
                                       label=_("query at m"))
        (self.zero_dots,) = ax_s.plot(offsets, np.zeros(len(offsets)), "o", color="black", ms=2.5,
                                      label=_("query at m = 0"))
        (self.marker,) = ax_s.plot([0], [0], "D", color="C3", ms=7, zorder=4)
        ax_s.set_xlim(-1, self.max_offset + 1)
        half = self.d // 2
        norms_q = np.hypot(self.q[0, :half], self.q[0, half:])  # (d/2,): |pair j| of q
        norms_k = np.hypot(self.k[0, :half], self.k[0, half:])
        limit = 1.05 * float(norms_q @ norms_k)  # |q~ . k~| <= sum_j |q pair j| |k pair j|
        ax_s.set_ylim(-limit, limit)
        ax_s.set_xlabel(_("offset m - n"))
        ax_s.set_ylabel(r"$\tilde q_m \cdot \tilde k_n$")
        # the legend on the figure's top line, outside the panel: no curve passes under it
        fig.legend(handles=[self.score_line, self.zero_dots], loc="upper right", ncols=2,
                   bbox_to_anchor=(1 - 0.2 / width, 1 - 0.05 / height), fontsize=SMALL, frameon=False)
        self.score_title = ax_s.set_title(" ", fontsize="medium")
        self.ax_s = ax_s
        self.update(m=100, offset=64, base=10000)  # titles of their largest size for the one layout
        self.blit([line for pair in self.arrows for line in pair]
                  + [self.score_line, self.zero_dots, self.marker, self.score_title])

    def update(self, m: int = 5, offset: int = 3, base: float = 10000.0) -> str:
        if m < 0 or not 0 <= offset <= self.max_offset:
            raise ValueError(f"m must be >= 0 and offset in 0..{self.max_offset}, got m = {m}, "
                             f"offset = {offset}")
        limited = offset > m  # no key before position 0: the slider's offset is capped at m
        offset = min(offset, m)
        n = m - offset
        half = self.d // 2
        q_r, k_r = ac.rope(self.q, [m], base=base), ac.rope(self.k, [n], base=base)  # (1, d) each
        for (q_line, k_line), j in zip(self.arrows, self.pairs, strict=True):
            for line, x in ((q_line, q_r[0]), (k_line, k_r[0])):
                a, b = x[j], x[j + half]  # pair j: features j and j + d/2 (split halves)
                line.set_data([0, a / np.hypot(a, b)], [0, b / np.hypot(a, b)])
        offsets = np.arange(self.max_offset + 1)
        K_at = ac.rope(np.repeat(self.k, len(offsets), axis=0), m - offsets, base=base)  # (offsets, d)
        K_zero = ac.rope(np.repeat(self.k, len(offsets), axis=0), -offsets, base=base)
        scores = (K_at @ q_r.T)[:, 0]  # (offsets,): q~_m . k~_{m - offset}
        from_zero = (K_zero @ self.q.T)[:, 0]  # the same offsets from a query at position 0
        self.score_line.set_ydata(scores)
        self.zero_dots.set_ydata(from_zero)
        self.marker.set_data([offset], [scores[offset]])
        self.score_title.set_text(_("m = {m}, n = {n}: score {score:+.3f}").format(
            m=m, n=n, score=float(scores[offset])))
        same = bool(np.allclose(scores, from_zero, rtol=0, atol=1e-9))
        note = _(" (limited to m: there is no key before position 0)") if limited else ""
        return _("m = {m}, n = m - offset = {n}{note}, base = {base:g}\n"
                 "score q~_m . k~_n = {score:+.4f}; unrotated q . k = {plain:+.4f}\n"
                 "the same curve from a query at position 0: {same}").format(
            m=m, n=n, note=note, base=base, score=float(scores[offset]),
            plain=float((self.q @ self.k.T)[0, 0]), same=same)


def plot_rotation(ms=(5, 60), offset: int = 3, base: float = 10000.0):
    """The live figure's picture for a few query positions m at one offset, as one static figure:
    a row of the three pairs' directions per m, and the score against the offset for each m."""
    rng = np.random.default_rng(LiveRotation.seed)  # the live figure's q and k
    q, k = rng.normal(size=(1, LiveRotation.d)), rng.normal(size=(1, LiveRotation.d))
    half, pairs = LiveRotation.d // 2, (0, LiveRotation.d // 4, LiveRotation.d // 2 - 1)
    rows = len(ms)
    fig, axes = fixed_subplots(rows, 3, widths=1.45, heights=1.45, left=0.9, right=5.4, bottom=0.7,
                               top=0.45, wgap=0.2, hgap=0.45, squeeze=False)
    width, height = fig.get_size_inches()
    ax_s = fig.add_axes((7.0 / width, 0.7 / height, 3.8 / width, (height - 1.15) / height))
    offsets = np.arange(LiveRotation.max_offset + 1)
    styles = ("-", "--", ":")
    for row, m in enumerate(ms):
        n = m - offset
        q_r, k_r = ac.rope(q, [m], base=base)[0], ac.rope(k, [n], base=base)[0]  # (d,) each
        for ax, j in zip(axes[row], pairs, strict=True):
            ax.add_patch(Circle((0, 0), 1.0, fill=False, color="0.5", lw=0.8))
            for x, color, ls in ((q_r, "C0", "-"), (k_r, "C1", "--")):
                a, b = x[j], x[j + half]
                ax.plot([0, a / np.hypot(a, b)], [0, b / np.hypot(a, b)], color=color, ls=ls, lw=2.2)
            ax.set_xlim(-1.05, 1.05)
            ax.set_ylim(-1.05, 1.05)
            ax.set_aspect("equal")
            ax.set_xticks([])
            ax.set_yticks([])
            if row == rows - 1:
                ax.set_xlabel(_("pair j = {j}").format(j=j))
        axes[row, 0].set_ylabel(f"m = {m}\nn = {n}")
        K_at = ac.rope(np.repeat(k, len(offsets), axis=0), m - offsets, base=base)  # (offsets, d)
        scores = K_at @ ac.rope(q, [m], base=base)[0]  # (offsets,)
        ax_s.plot(offsets, scores, ls=styles[row % 3], lw=2 if row == 0 else 1.5,
                  color=("C0", "black", "C4")[row % 3],
                  label=_("query at m = {m}").format(m=m))
        ax_s.plot([offset], [scores[offset]], "D", color="C3", ms=6)
    axes[0, 0].set_title(_(r"$\tilde q$ solid, $\tilde k$ dashed"), loc="left", fontsize=SMALL)
    ax_s.axhline(0, color="grey", lw=0.8)
    ax_s.set_xlabel(_("offset m - n"))
    ax_s.set_ylabel(r"$\tilde q_m \cdot \tilde k_n$")
    ax_s.set_title(_("the same curve for every m"), fontsize="medium")
    ax_s.legend(loc="lower right", fontsize=SMALL)
    return fig


def plot_alibi(num_heads: int = 8, n: int = 12, heads=(0, 3, 7)):
    """Left: ALiBi's slopes for num_heads heads; right: the weights a query at position n - 1
    gives the n keys from the bias alone (equal scores otherwise), for a few heads."""
    slopes = ac.alibi_slopes(num_heads)  # (h,)
    bias = ac.alibi_bias(num_heads, n) + ac.causal_mask(n)  # (h, n, n)
    weights = ac.softmax(bias[:, -1, :])  # (h, n): the last query's weights, scores all 0
    title = _("ALiBi: a penalty -s_r × distance, one slope s_r per head ({h} heads)").format(h=num_heads)
    fig, (ax_s, ax_w) = fixed_subplots(1, 2, widths=[3.4, 4.6], heights=2.8, left=0.95, right=0.25,
                                       bottom=0.75, top=0.75, wgap=1.0,
                                       min_width=figures.text_width(title) + 0.3)
    ax_s.semilogy(np.arange(num_heads), slopes, "o-", color="C2")
    ax_s.set_xlabel(_("head r"))
    ax_s.set_ylabel(_("slope s_r"))
    ax_s.set_title(_("slopes 2^(-8(r+1)/h)"), fontsize="medium")
    styles = ("-", "--", ":", "-.")
    for k, r in enumerate(heads):
        ax_w.plot(np.arange(n), weights[r], marker="o", ms=3, ls=styles[k % len(styles)],
                  label=_("head {r} (s = {s:.3g})").format(r=r, s=slopes[r]))
    ax_w.set_xlabel(_("key position j (the query is at {i})").format(i=n - 1))
    ax_w.set_ylabel(_("weight"))
    ax_w.set_ylim(0, 1.05)
    ax_w.set_title(_("weights from the bias alone"), fontsize="medium")
    ax_w.legend(loc="upper left", fontsize=SMALL)
    figures.suptitle(fig, title)
    return fig


def plot_extrapolation(accuracy: dict, n_train: int, k: int):
    """Accuracy at every position of longer test sequences, one line per scheme.

    accuracy : {scheme: (n,) accuracy at each position, NaN where nothing is predicted}.
    """
    title = _("Trained on length {n}, tested on longer sequences: 'repeat the token {k} back'").format(
        n=n_train, k=k)
    fig, ax = fixed_subplots(widths=7.0, heights=3.0, left=0.95, right=0.25, bottom=0.75, top=0.5,
                             min_width=figures.text_width(title) + 0.3)
    n = len(next(iter(accuracy.values())))
    ax.axvspan(-0.5, n_train - 0.5, color="0.92", zorder=0)
    ax.text(n_train / 2, 1.02, _("positions seen in training"), ha="center", va="bottom",
            fontsize=SMALL, color="dimgrey")
    for scheme, acc in accuracy.items():
        color, ls, marker = SCHEME_STYLES[scheme]
        ax.plot(np.arange(n), acc, color=color, ls=ls, marker=marker, ms=3, markevery=4,
                label=_(SCHEME_LABELS[scheme]))
    ax.axhline(1 / 16, color="grey", lw=0.8, ls="--")
    ax.text(0, 1 / 16 + 0.02, _("chance (1/16)"), ha="left", va="bottom", fontsize=SMALL,
            color="dimgrey")  # inside the trained span, where no line comes down this far
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(0, 1.12)
    ax.set_xlabel(_("position i in the test sequence"))
    ax.set_ylabel(_("accuracy at position i"))
    ax.legend(loc="upper right", fontsize=SMALL, ncols=4)
    figures.suptitle(fig, title)
    return fig


# --- self-checks ----------------------------------------------------------------


def _rope_attention(X, W_Q, W_K, W_V, *, rotate=("q", "k"), interleaved=False, theta_d=False,
                    positions=None):
    """One head's causal attention output with RoPE, or with one of the classic slips."""
    if "x" in rotate:  # the embeddings rotated, then projected: the slip "rope on X"
        X = ac.rope(X, positions)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (n, d_k), (n, d_k), (n, d_v)
    base = 10000.0 ** 0.5 if theta_d else 10000.0  # base^(-2j/d) with base^(1/2) is base^(-j/d)
    rot = {name: (lambda Z: ac.rope(Z, positions, base=base, interleaved=interleaved)) for name in rotate}
    Q, K = rot.get("q", lambda Z: Z)(Q), rot.get("k", lambda Z: Z)(K)
    V = rot.get("v", lambda Z: Z)(V)
    O, _w = ac.scaled_dot_product_attention(Q, K, V, ac.causal_mask(len(X)))
    if "o" in rotate:
        O = ac.rope(O, positions, base=base, interleaved=interleaved)
    return O


def check_rope_attention(answer, X, W_Q, W_K, W_V) -> Verdict:
    """Check one head's causal attention output with RoPE (split halves, base 10000) on q and k."""
    right = _rope_attention(X, W_Q, W_K, W_V)
    mistakes = {
        "rope_wrong_layout": _rope_attention(X, W_Q, W_K, W_V, interleaved=True),
        "rope_rotate_v": _rope_attention(X, W_Q, W_K, W_V, rotate=("q", "k", "v")),
        "rope_after_attention": _rope_attention(X, W_Q, W_K, W_V, rotate=("o",)),
        "rope_theta_d": _rope_attention(X, W_Q, W_K, W_V, theta_d=True),
        "rope_missing": _rope_attention(X, W_Q, W_K, W_V, rotate=()),
        "rope_query_only": _rope_attention(X, W_Q, W_K, W_V, rotate=("q",)),
        "rope_key_only": _rope_attention(X, W_Q, W_K, W_V, rotate=("k",)),
        "rope_on_embeddings": _rope_attention(X, W_Q, W_K, W_V, rotate=("x",)),
    }
    Q, K, V = ac.rope(X @ W_Q), ac.rope(X @ W_K), X @ W_V  # the rotated queries and keys
    for key, w in weight_mistakes(Q, K, ac.causal_mask(len(X))).items():  # the classic slips of 03-04
        if w.shape[-1] == V.shape[0]:
            mistakes.setdefault(key, w @ V)
    return check_value(answer, right, _("attention output with RoPE"), mistakes,
                       hint=_("Rotate Q and K (not V) before the scores, with ac.rope's default layout."))


def check_rope_cached_query(answer, q, k, v, K_cache, V_cache, t: int) -> Verdict:
    """Check the output of a new token at position t: q and k rotated at t, attention over the
    cache (rotated keys of positions 0..t-1) with its own key appended."""
    def output(pos_q, pos_k, interleaved=False):
        q_r = ac.rope(q, [pos_q], interleaved=interleaved)  # (1, d_k)
        k_r = ac.rope(k, [pos_k], interleaved=interleaved)
        K, V = np.concatenate([K_cache, k_r]), np.concatenate([V_cache, v])  # (t + 1, d_k), (t + 1, d_v)
        return ac.scaled_dot_product_attention(q_r, K, V)[0]  # (1, d_v)

    right = output(t, t)
    mistakes = {"rope_cache_offset": output(0, 0), "rope_cache_query_offset": output(0, t),
                "rope_wrong_layout": output(t, t, interleaved=True)}
    q_t = ac.rope(q, [t])  # (1, d_k)
    mistakes["cache_new_key_missing"] = ac.scaled_dot_product_attention(q_t, K_cache, V_cache)[0]
    twice = ac.rope(K_cache, np.arange(len(K_cache)))  # the cached keys rotated a second time
    mistakes["rope_cache_rotated_twice"] = ac.scaled_dot_product_attention(
        q_t, np.concatenate([twice, ac.rope(k, [t])]), np.concatenate([V_cache, v]))[0]
    plain = np.concatenate([K_cache, k])
    mistakes["rope_cache_key_unrotated"] = ac.scaled_dot_product_attention(
        ac.rope(q, [t]), plain, np.concatenate([V_cache, v]))[0]
    return check_value(answer, right, _("output of the new token"), mistakes, context={"t": t})


def check_alibi_slopes(answer, num_heads: int) -> Verdict:
    """Check ALiBi's slopes for num_heads heads (the paper's rule when it is not a power of two)."""
    right = ac.alibi_slopes(num_heads)
    r = np.arange(1, num_heads + 1)
    mistakes = {"alibi_geometric_any_h": 2.0 ** (-8.0 * r / num_heads),
                "alibi_slopes_from_zero": 2.0 ** (-8.0 * (r - 1) / num_heads),
                "alibi_slopes_reversed": right[::-1], "alibi_slope_sign": -right,
                "alibi_slopes_sorted": np.sort(right)[::-1]}
    p = 1 << (num_heads.bit_length() - 1)
    if p != num_heads:  # every other slope of 2p heads from the second: duplicates of the first p
        mistakes["alibi_other_half"] = np.concatenate([right[:p], ac.alibi_slopes(2 * p)[1::2][: num_heads - p]])
    return check_value(answer, right, _("ALiBi slopes for {h} heads").format(h=num_heads), mistakes,
                       context={"heads": num_heads})


def check_layout_permutation(answer, d: int) -> Verdict:
    """Check the column order that turns a split-halves W_Q (or W_K) into an interleaved one:
    the inverse of section 4's pi = (0, 2, ..., 1, 3, ...)."""
    pi = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])  # (d,): interleaved -> split
    right = np.argsort(pi)  # (d,): split halves -> interleaved
    if is_unanswered(answer):
        return check_value(answer, right, _("column order"))
    inverse = pi
    a = as_float(answer)
    if a is not None and a.shape == right.shape and set(a.tolist()) != set(range(d)):
        return Verdict(WRONG, _("Not quite: a column order uses every index 0..{last} exactly "
                                "once; yours does not.").format(last=d - 1))
    if a is not None and a.shape == right.shape and np.array_equal(a, right):
        return Verdict(CORRECT, _("Correct: with W_Q[:, perm] and W_K[:, perm] the interleaved "
                                  "code gives the split-halves checkpoint's scores."))
    return check_value(answer, right, _("column order"), {"rope_inverse_permutation": inverse},
                       atol=0.5)


# --- this notebook's entries of checks.MISTAKES and checks.QUESTIONS ---------------------------
# The mistakes its checks name (those several notebooks name are in course/mistakes.py), and
# the hint and worked solution of each of its questions (course/questions.py gathers them).

MISTAKES = {
    "rope_wrong_layout": Mistake(
        "12",
        N_("the other RoPE layout"),
        N_("ac.rope pairs feature j with feature j + d/2 (split halves, as GPT-NeoX and Hugging "
           "Face's Llama do); interleaved=True pairs 2j with 2j + 1. The same numbers in the other "
           "layout rotate other pairs at other speeds: only position 0, which is not rotated, "
           "comes out the same.")),
    "rope_rotate_v": Mistake(
        "12",
        N_("rotating the values too"),
        N_("RoPE rotates the queries and the keys, so that their dot products see the offset; the "
           "values are what the weights average, and stay as X W_V.")),
    "rope_after_attention": Mistake(
        "12",
        N_("rotating after attention instead of before the scores"),
        N_("the rotation must act on q and k BEFORE their dot products: rotating the output (or "
           "anything after the scores) leaves the weights blind to position.")),
    "rope_theta_d": Mistake(
        "12",
        N_("theta computed with d where d/2 belongs"),
        N_("theta_j = base^(-2j/d) = base^(-j/(d/2)) for the d/2 pairs j = 0..d/2 - 1; base^(-j/d) "
           "makes every pair turn too fast, the slowest only about base^(1/2) times slower "
           "than the fastest.")),
    "rope_missing": Mistake(
        "12",
        N_("no rotation at all"),
        N_("that is plain causal attention: rotate Q and K with ac.rope before the scores.")),
    "rope_query_only": Mistake(
        "12",
        N_("rotating only the queries"),
        N_("the score depends on m - n only when BOTH sides are rotated, the query by m and the key "
           "by n; with the keys unrotated it depends on the query's absolute position.")),
    "rope_key_only": Mistake(
        "12",
        N_("rotating only the keys"),
        N_("the score depends on m - n only when BOTH sides are rotated, the query by m and the key "
           "by n; with the queries unrotated it depends on the key's absolute position.")),
    "rope_on_embeddings": Mistake(
        "12",
        N_("rotating X before the projections"),
        N_("rotate the queries and keys AFTER W_Q and W_K: a rotation of x does not pass through "
           "a learned matrix, so (x R) W_Q is not (x W_Q) R and the offset property is lost.")),
    "rope_cache_rotated_twice": Mistake(
        "12",
        N_("rotating the cache again"),
        N_("the cached keys were rotated once, at their own positions, when they were stored: "
           "rotate only the new token's query and key (at position {t}), not the cache.")),
    "rope_cache_offset": Mistake(
        "12",
        N_("forgetting the cache offset"),
        N_("the new token is at position {t}, not 0: rotate its query and key with "
           "positions=[{t}]. Rotated as position 0 on every step, its offsets to the cached keys "
           "come out wrong by t.")),
    "rope_cache_query_offset": Mistake(
        "12",
        N_("the new query rotated as position 0"),
        N_("the query of the token at position {t} must be rotated by {t} too (positions=[{t}]), "
           "like its key: the score sees the difference of the two positions.")),
    "rope_cache_key_unrotated": Mistake(
        "12",
        N_("the new key cached unrotated"),
        N_("every key in the cache is rotated once, at its own position, before it is stored: the "
           "new token's key needs positions=[{t}] as well.")),
    "alibi_geometric_any_h": Mistake(
        "12",
        N_("the geometric sequence for a head count that is not a power of two"),
        N_("2^(-8(r+1)/h) is ALiBi's rule only when h is a power of two. For h = {heads}: the slopes "
           "of the largest power of two p < h, then every other slope of 2p heads for the "
           "remaining h - p heads.")),
    "alibi_slopes_from_zero": Mistake(
        "12",
        N_("slopes starting at 2^0"),
        N_("the first head's slope is 2^(-8/p), not 1, with p the largest power of two <= h: the "
           "exponent runs over r + 1 = 1..p.")),
    "alibi_slopes_reversed": Mistake(
        "12",
        N_("the slopes in reverse order"),
        N_("head 0 has the steepest slope and the slopes fall from there; the order matters once "
           "a checkpoint's heads are trained with them.")),
    "alibi_slopes_sorted": Mistake(
        "12",
        N_("the slopes sorted"),
        N_("for {heads} heads the paper's rule does not give a falling sequence: the first p "
           "heads take the slopes of p heads, and the extra heads the in-between slopes of 2p "
           "heads, after them. Keep that order.")),
    "alibi_other_half": Mistake(
        "12",
        N_("every other slope from the second"),
        N_("the extra heads take the 1st, 3rd, 5th, ... slope of 2p heads: those lie between the "
           "p heads' slopes. From the second, 2p heads' slopes repeat slopes the first p heads "
           "already have.")),
    "alibi_slope_sign": Mistake(
        "12",
        N_("a slope with the wrong sign"),
        N_("the bias is -s_r (i - j) with s_r > 0: a penalty that grows with the distance. With "
           "the sign flipped, far keys are rewarded.")),
    "rope_inverse_permutation": Mistake(
        "12",
        N_("the column order of the other direction"),
        N_("W_Q[:, perm] puts old column perm[c] at new column c. The interleaved code reads pair "
           "j from columns 2j and 2j + 1, so those must receive the checkpoint's columns j and "
           "j + d/2; your order sends them the other way (it is the order for converting "
           "interleaved weights to split halves).")),
}

QUESTIONS = {
    "12.rope_attention": Question(
        N_("Project first (Q = X W_Q, K = X W_K, V = X W_V), then rotate Q and K, each row at its "
           "own position (ac.rope's default positions are 0..n-1), then run causal attention as in "
           "notebook 04. Which of the three is not rotated?"),
        "ac.scaled_dot_product_attention(\n"
        "    ac.rope(X @ W_Q), ac.rope(X @ W_K), X @ W_V, ac.causal_mask(5)\n"
        ")[0]",
        N_("RoPE goes after the projections and before the scores: rope(Q) rope(K)^T / sqrt(d_k) "
           "+ M, with rows 0..4 rotated by their positions. V = X W_V is not rotated: the weights "
           "decide where to read, the values are what is read. [0] is the output (n, d_v) = "
           "(5, 4); [1] would be the weights.")),
    "12.rope_cached_query": Question(
        N_("The new token is the fifth position. Rotate its query and its key at THAT position "
           "(positions=[...]), append the rotated key and the value to the cache, and attend with "
           "the one rotated query. Does it need a mask?"),
        "ac.scaled_dot_product_attention(\n"
        "    ac.rope(q, positions=[4]),\n"
        "    np.concatenate([K_cache, ac.rope(k, positions=[4])]),\n"
        "    np.concatenate([V_cache, v]),\n"
        ")[0]",
        N_("The cached keys were rotated at positions 0-3 when they entered the cache; the new key "
           "and query are rotated at t = 4, so every score sees the offset 4 - n. The new query "
           "is the last position and may see every key: no mask. Without positions=[4], ac.rope "
           "rotates the one row as position 0, the classic cache-offset slip.")),
    "12.alibi_slopes": Question(
        N_("12 is not a power of two. Take the slopes of the largest power of two below it, "
           "p = 8; the other 12 - 8 heads take every other slope of 2p = 16 heads, starting "
           "with the first."),
        "np.concatenate([2.0 ** (-8 * np.arange(1, 9) / 8),\n"
        "                2.0 ** (-8 * np.arange(1, 17) / 16)[0::2][:4]])",
        N_("For p = 8 the slopes are 2^(-1), 2^(-2), ..., 2^(-8). For 16 heads they would be "
           "2^(-0.5), 2^(-1), ..., 2^(-8); every other one from the first is 2^(-0.5), 2^(-1.5), "
           "2^(-2.5), 2^(-3.5) for the last 4 heads: 0.7071, 0.3536, 0.1768, 0.0884 after "
           "0.5, 0.25, ..., 0.0039. The geometric sequence 2^(-8(r+1)/12) is not ALiBi's rule "
           "for 12 heads.")),
    "12.layout_permutation": Question(
        N_("In your code (interleaved) pair j is read from columns 2j and 2j + 1; in the checkpoint "
           "(split halves) pair j is columns j and j + 4. W_Q[:, perm] puts old column perm[c] at "
           "new column c: which old column must land at new column 1? At new column 2?"),
        "np.argsort(np.concatenate([np.arange(0, 8, 2), np.arange(1, 8, 2)]))",
        N_("New column 2j must hold the first feature of pair j, which the checkpoint keeps in "
           "column j, and new column 2j + 1 the second, old column j + 4: perm = [0, 4, 1, 5, 2, "
           "6, 3, 7], the inverse of section 4's pi (np.argsort inverts a permutation). q and k "
           "are permuted alike, so every dot product, and every score, is unchanged. pi itself "
           "is the order for the other direction, interleaved weights into split-halves code, "
           "which Hugging Face's Llama conversion script applies to the rows of q_proj and "
           "k_proj (torch stores W transposed).")),
}
