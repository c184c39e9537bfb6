"""Notebook 14, Sliding windows and attention sinks: its figures, live figure and self-checks.

The lesson itself (the banded mask, the receptive field of stacked layers, the rolling cache,
the cost of the band, the sink experiment) is in notebooks/14_sliding_window_attention.ipynb;
this module holds what a learner may skip (drawing, widget wiring, the checks' diagnoses). Its
tests are in tests/test_nb14_sliding_window_attention.py.
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.ticker import NullFormatter

import attention_core as ac
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
from course import figures
from course.figures import SMALL, fixed_subplots
from course.i18n import N_, _
from course.live import LiveFigure

SEEN = ListedColormap(["0.92", "C0"])  # 0: hidden (-inf), 1: may attend
REACHED = ListedColormap(["0.92", "C1"])  # 0: unchanged, 1: changed

# --- what the live figure recomputes for each window ------------------------------------------


def changed_by_layer(layers, X, window: int, source: int = 0, delta: float = 1.0) -> np.ndarray:
    """(L, n) booleans: which outputs of layers 1..L change when row `source` of X changes.

    Every layer is ac.encoder_layer with ac.sliding_window_mask(n, window); the same loop as the
    notebook's section 2, for the live figure.
    """
    n = X.shape[-2]
    M = ac.sliding_window_mask(n, window)
    A, B = X, X.copy()
    B[..., source, :] += delta  # the changed token
    changed = []
    for layer in layers:
        A, B = ac.encoder_layer(A, layer, M), ac.encoder_layer(B, layer, M)
        changed.append(np.abs(A - B).max(axis=-1) > 1e-9)  # (n,): which rows moved
    return np.array(changed)


def _reach(changed_row) -> int:
    """The furthest position a change reached (-1 if none)."""
    where = np.flatnonzero(changed_row)
    return int(where.max()) if where.size else -1


# --- figures and live figure --------------------------------------------------------------------

def _draw_mask(ax, M, title):
    n, m = M.shape
    im = ax.imshow(np.isfinite(M).astype(float), cmap=SEEN, vmin=0, vmax=1, interpolation="none")
    ax.set_xticks(range(0, m, 4))
    ax.set_yticks(range(0, n, 4))
    ax.set_xlabel(_("key position j"))
    ax.set_ylabel(_("query position i"))
    ax.set_title(title, fontsize=SMALL)
    return im


def _draw_reach(ax, changed, title):
    L, n = changed.shape
    im = ax.imshow(changed.astype(float), cmap=REACHED, vmin=0, vmax=1, interpolation="none",
                   aspect="auto")
    ax.set_xticks(range(0, n, 4))
    ax.set_yticks(range(L), [str(k + 1) for k in range(L)])
    ax.set_xlabel(_("output position"))
    ax.set_ylabel(_("after layer"))
    ax.set_title(title, fontsize=SMALL)
    return im


def plot_windows(masks: dict, changed: dict):
    """Columns: windows. Top: the mask (blue: may attend). Bottom: after each layer, the outputs
    a change to token 0 has reached (brown, C1). masks / changed: {window: (n, n)} / {window: (L, n)}."""
    ws = list(masks)
    title = _("Sliding-window masks (top) and how far a change to token 0 reaches, layer by "
              "layer (bottom)")
    fig, axes = fixed_subplots(2, len(ws), widths=2.3, heights=(2.3, 1.3), left=0.85, right=0.15,
                               bottom=0.7, top=0.85, wgap=0.75, hgap=0.95, squeeze=False,
                               min_width=figures.text_width(title) + 0.3)
    for c, w in enumerate(ws):
        n = masks[w].shape[-1]
        name = _("window {w}").format(w=w) if w < n else _("window {w} = causal").format(w=w)
        _draw_mask(axes[0, c], masks[w], name)
        reach = [_reach(row) for row in changed[w]]
        _draw_reach(axes[1, c], changed[w], _("reach: {reach}").format(
            reach=", ".join(str(r) for r in reach)))
        if c > 0:  # the top panels keep their key-position label; only the inner y labels go
            axes[0, c].set_ylabel("")
            axes[0, c].tick_params(labelleft=False)
        axes[1, c].label_outer()
    figures.suptitle(fig, title)
    return fig


class LiveWindow(LiveFigure):
    """A slider over the window: the banded mask, and how far a change to token 0 reaches."""

    layout = None  # fixed_subplots in setup()

    def __init__(self, layers, X):
        self.layers, self.X = list(layers), np.asarray(X, dtype=float)
        super().__init__()

    def setup(self) -> None:
        n, L = self.X.shape[-2], len(self.layers)
        _fig, (ax_m, ax_r) = fixed_subplots(1, 2, widths=(2.8, 4.6), heights=2.8, left=0.85,
                                            right=0.2, bottom=0.75, top=0.45, wgap=0.95,
                                            fig=self.fig)
        self.mask_im = _draw_mask(ax_m, ac.sliding_window_mask(n, 1), _("the mask"))
        self.reach_im = _draw_reach(ax_r, np.zeros((L, n), dtype=bool),
                                    _("a change to token 0, layer by layer"))
        self.title = ax_m.set_title(_("window {w}: {w} keys per query").format(w="00"),
                                    fontsize=SMALL)
        self.blit([self.mask_im, self.reach_im, self.title])

    def update(self, window: int = 3) -> str:
        w = int(window)
        n = self.X.shape[-2]
        if not 1 <= w <= n:
            raise ValueError(f"window must be in 1..{n}, got {window!r}")
        M = ac.sliding_window_mask(n, w)
        changed = changed_by_layer(self.layers, self.X, w)
        self.mask_im.set_data(np.isfinite(M).astype(float))
        self.reach_im.set_data(changed.astype(float))
        self.title.set_text(_("window {w}: {w} keys per query").format(w=w))
        reach = [_reach(row) for row in changed]
        return "\n".join([
            _("window {w}: query p sees keys p - {back} .. p ({w} keys, itself included)").format(
                w=w, back=w - 1),
            _("a change to token 0 reaches, after layers 1..{L}: positions 0..{reach}").format(
                L=len(reach), reach=", 0..".join(str(r) for r in reach)),
            _("L (w - 1) = {formula} for the last layer (capped at n - 1 = {last})").format(
                formula=len(reach) * (w - 1), last=n - 1)])


def plot_cache_memory(steps, rows: dict, title_bytes: str = ""):
    """Rows held in the cache at each generation step: {"full": ..., "rolling": ...}."""
    title = _("Keys and values held while generating: a growing cache vs a rolling one")
    fig, ax = fixed_subplots(1, 1, widths=6.0, heights=2.6, left=1.0, right=0.2, bottom=0.7,
                             top=0.6, min_width=figures.text_width(title) + 0.3)
    ax.plot(steps, rows["full"], color="C3", label=_("full KV cache"))
    ax.plot(steps, rows["rolling"], color="C0", label=_("rolling cache (window)"))
    ax.set_xlabel(_("generation step t"))
    ax.set_ylabel(_("cached positions"))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=SMALL, loc="upper left")
    figures.suptitle(fig, title)
    return fig


def plot_band_cost(ns, counts: dict, window: int):
    """Score entries of causal attention (about n^2 / 2) and of the band (about n w), against n."""
    title = _("Score entries against n: the causal mask vs a window of {w}").format(w=window)
    fig, ax = fixed_subplots(1, 1, widths=5.0, heights=2.8, left=1.0, right=0.2, bottom=0.7,
                             top=0.6, min_width=figures.text_width(title) + 0.3)
    styles = {"causal": ("C3", "o-", _("causal: n (n + 1) / 2")),
              "band": ("C0", "s-", _("window: about n w")),
              "tiles": ("C2", "^--", _("tiled, band blocks only"))}
    for name, values in counts.items():
        color, style, label = styles[name]
        ax.plot(ns, values, style, color=color, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(_("sequence length n"))
    ax.set_ylabel(_("score entries"))
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=SMALL, loc="upper left")
    figures.suptitle(fig, title)
    return fig


def plot_sinks(cache_sizes, losses: dict, full_loss: float, key_weight):
    """Left: held-out loss against the cache size, for s = 0, 1, ... sinks kept.
    Right: the mean attention weight each key position receives under the full causal mask, from
    the queries 8..31 that can see it, the key the task needs (i - 3) left out.

    losses : {s: losses over cache_sizes}; key_weight : (n,) mean weight per key position.
    """
    title = _("Evicting the first tokens: the loss with and without sink tokens")
    fig, (ax_l, ax_w) = fixed_subplots(1, 2, widths=(4.4, 4.0), heights=2.8, left=1.0,
                                       right=0.2, bottom=0.75, top=0.9, wgap=1.1,
                                       min_width=figures.text_width(title) + 0.3)
    colors = ("C3", "C1", "C2", "C4")
    for (s, values), color in zip(losses.items(), colors, strict=False):
        label = (_("no sinks") if s == 0 else _("1 sink kept") if s == 1
                 else _("{s} sinks kept").format(s=s))
        ax_l.plot(cache_sizes, values, "o-", color=color, label=label, ms=4)
    ax_l.axhline(full_loss, color="k", ls=":", label=_("full causal"))
    ax_l.set_yscale("log")
    ax_l.set_xlabel(_("recent keys w (the cache holds w + s rows)"))
    ax_l.set_ylabel(_("held-out loss"))
    ax_l.set_title(_("loss (log scale)"), fontsize=SMALL)
    ax_l.grid(alpha=0.3, which="both")
    ax_l.legend(fontsize=SMALL, loc="upper right")
    key_weight = np.asarray(key_weight, dtype=float)
    ax_w.bar(np.arange(key_weight.size), key_weight, color="C0")
    ax_w.set_xlabel(_("key position j"))
    ax_w.set_ylabel(_("mean weight"))
    ax_w.set_title(_("weight per key, from queries 8..31 that can see it\n(needed key i - 3 "
                     "excluded)"), fontsize=SMALL)
    ax_w.grid(alpha=0.3, axis="y")
    figures.suptitle(fig, title)
    return fig


# --- self-checks --------------------------------------------------------------------------------

def check_window_mask(answer, n: int, window: int) -> Verdict:
    """Check an additive sliding-window mask (n, n): query i sees keys i - window + 1 .. i."""
    right = ac.sliding_window_mask(n, window)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    mistakes = {"window_off_by_one": ac.sliding_window_mask(n, window + 1)}
    if window > 1:
        mistakes["window_off_by_one_short"] = ac.sliding_window_mask(n, window - 1)
    mistakes["window_not_causal"] = np.where(np.abs(i - j) < window, 0.0, -np.inf)
    mistakes["window_future_visible"] = np.where(j > i - window, 0.0, -np.inf)
    visible = np.isfinite(right)  # the right keys written in notebook 04's other conventions
    mistakes.update({"mask_multiplicative": visible.astype(float),
                     "mask_boolean_blocked": (~visible).astype(float),
                     "mask_large_negative": np.where(visible, 0.0, -1e9)})
    verdict = check_value(answer, right, _("sliding-window mask for n = {n}, window = {w}").format(
        n=n, w=window), mistakes, context={"w": window})
    if verdict.mistake == "mask_large_negative":  # the right keys, the course's other convention
        label, why = named(verdict.mistake)
        return Verdict(MISTAKE, _("Right keys, another convention: you wrote {label}. {why}")
                       .format(label=label, why=sentence(why)), verdict.mistake)
    return verdict


def _whole_number(answer, what: str):
    if is_unanswered(answer):
        return unanswered(what)
    if isinstance(answer, (float, np.floating)) and float(answer).is_integer():
        return None  # 9.0 is a whole number too
    if isinstance(answer, (bool, np.bool_)) or not isinstance(answer, (int, np.integer)):
        return Verdict(WRONG, _("Give a whole number (no quotes), got {answer!r}.").format(
            answer=answer))
    return None


def check_reach(answer, layers: int, window: int) -> Verdict:
    """How many positions back can a change reach the output after `layers` window layers?"""
    what = _("reach after {L} layers of window {w}").format(L=layers, w=window)
    early = _whole_number(answer, what)
    if early is not None:
        return early
    right = layers * (window - 1)
    mistakes = {"reach_off_by_one": layers * window, "reach_one_layer": window - 1}
    v = check_value(int(answer), right, what, mistakes, atol=0.5, context={"w": window})
    if v.status == WRONG:
        side = _("too far") if answer > right else _("not far enough")
        return Verdict(WRONG, _("Not quite: {got} positions is {side}. Follow one change through "
                                "the first layer, then the second.").format(got=int(answer),
                                                                             side=side))
    return v


def check_cache_positions(answer, t: int, window: int, sinks: int) -> Verdict:
    """Which positions does a rolling cache of `sinks` sinks and a `window` hold after position t?"""
    if is_unanswered(answer):
        return unanswered(_("the positions in the cache, as a list"))
    try:
        numbers = [float(x) for x in answer]
    except (TypeError, ValueError):
        numbers = None
    if isinstance(answer, str) or numbers is None or not all(x.is_integer() for x in numbers):
        return Verdict(WRONG, _("Give the positions as a list of whole numbers, got "
                                "{answer!r}.").format(answer=answer))
    got = sorted(int(x) for x in numbers)
    recent = list(range(t - window + 1, t + 1))
    right = sorted(set(range(sinks)) | set(recent))
    if got == right:
        return Verdict(CORRECT, _("Correct: {s} sink positions and the last {w}, {size} rows in "
                                  "all, whatever t is.").format(s=sinks, w=window,
                                                                size=len(right)))
    wrongs = {"evict_sinks": [recent, list(range(t - window - sinks + 1, t + 1))],
              "cache_window_off_by_one": [sorted(set(range(sinks)) | set(range(t - window + k, t + 1)))
                                          for k in (0, 2)]}
    for key, options in wrongs.items():
        if got in options:
            label, why = named(key)
            return Verdict(MISTAKE, _('Not quite: this is the classic mistake "{label}". '
                                      '{why}').format(label=label, why=sentence(why)), key)
    if len(got) == len(right):  # the right size: say which of the two parts is off
        if got[:sinks] != right[:sinks]:
            return Verdict(WRONG, _("Not quite: the number of positions is right, but the first "
                                    "{s} of your list are not the sinks. Positions are counted "
                                    "from 0: which ones does a sink cache never evict?").format(
                                        s=sinks))
        return Verdict(WRONG, _("Not quite: the number of positions is right and so are the "
                                "sinks, but the recent part does not end at the position just "
                                "written, t = {t}.").format(t=t))
    return Verdict(WRONG, _("Not quite: your list has {k} positions. Which positions stay for "
                            "ever, and which are the most recent ones?").format(k=len(got)))


# --- this notebook's entries of checks.MISTAKES and checks.QUESTIONS ---------------------------
# The mistakes its checks name (those several notebooks name are in course/mistakes.py), and
# the hint and worked solution of each of its questions (course/questions.py gathers them).

MISTAKES = {
    "window_off_by_one": Mistake(
        "14",
        N_("a window of window + 1 keys"),
        N_("a window of w means w keys, the query's own position included: p - w + 1 .. p. "
           "Keys p - w .. p are w + 1.")),
    "window_off_by_one_short": Mistake(
        "14",
        N_("a window of window - 1 keys"),
        N_("a window of w means w keys, the query's own position included: p - w + 1 .. p. "
           "Leaving the query itself out, or stopping at p - w + 2, keeps only w - 1.")),
    "window_not_causal": Mistake(
        "14",
        N_("a window that is not causal"),
        N_("|i - j| < w is a band on both sides of the diagonal: each query also sees the next "
           "w - 1 tokens. A decoder's window must also hide the future: j <= i as well as "
           "j > i - w.")),
    "window_future_visible": Mistake(
        "14",
        N_("a window without its causal edge"),
        N_("j > i - w alone cuts off the old keys but lets every query see all later ones. The "
           "window is the causal mask AND the lower edge: i - w < j <= i.")),
    "reach_off_by_one": Mistake(
        "14",
        N_("L w instead of L (w - 1)"),
        N_("each layer moves information back at most w - 1 positions (the window includes the "
           "query itself, which moves it by 0), so L layers reach L (w - 1) back. L w is right "
           "only for a window of w + 1 positions, i - w .. i: the literal reading of Mistral 7B's "
           "paper, whose 32 x 4096 counts such a window.")),
    "reach_one_layer": Mistake(
        "14",
        N_("the reach of one layer"),
        N_("w - 1 is what one layer reaches. Layer 2 reads layer 1's outputs, which already "
           "mix w positions each: the reach adds up over the layers.")),
    "evict_sinks": Mistake(
        "14",
        N_("evicting the sinks"),
        N_("with s sinks the first s positions are never evicted: the cache holds positions "
           "0..s-1 and the most recent w, s + w rows. A plain rolling cache evicts them.")),
    "cache_window_off_by_one": Mistake(
        "14",
        N_("a window of the wrong length in the cache"),
        N_("the most recent w positions after position t are t - w + 1 .. t, the newest "
           "included: w of them.")),
}

QUESTIONS = {
    "14.window_mask": Question(
        N_("Start from ac.causal_mask(7): which keys does it leave to query i? Now also hide the "
           "keys that are too old. How many keys does query 6 see with window 4, itself "
           "included?"),
        "np.where((np.arange(7)[None, :] <= np.arange(7)[:, None])\n"
        "         & (np.arange(7)[None, :] > np.arange(7)[:, None] - 4), 0.0, -np.inf)",
        N_("Query i may see key j when j <= i (causal) and j > i - 4 (not older than the window): "
           "keys i - 3 .. i, four of them. ac.sliding_window_mask(7, 4) is the same mask. "
           "j >= i - 4 would give five keys, and |i - j| < 4 would also let i see i + 1 .. i + 3.")),
    "14.receptive_field": Question(
        N_("Follow the change: after layer 1, which outputs can it have reached (the window "
           "includes the query itself)? Layer 2 reads those outputs. Section 2 measured it for "
           "small windows; the rule does not depend on the size."),
        "32 * (4096 - 1)",
        N_("One layer with window w = 4096 lets position p read p - 4095 .. p, so a change moves "
           "at most w - 1 = 4095 positions per layer; after L = 32 layers, 32 * 4095 = 131,040 "
           "positions. Section 2 measures the same rule layer by layer. 32 * 4096 = 131,072, the "
           "paper's ~131K, counts a window of W + 1 positions (i - W .. i), or the query's own "
           "position as a step: the same ~131K, off by 32.")),
    "14.cache_positions": Question(
        N_("Two kinds of rows: the sinks, which are never evicted, and the most recent window, "
           "which rolls. Write down the newest position and count back, the newest included."),
        "[0, 1, 2, 3] + list(range(23, 31))",
        N_("The s = 4 sinks are positions 0, 1, 2, 3 for ever; the window of w = 8 holds the 8 "
           "most recent positions, 30 - 8 + 1 = 23 .. 30. Twelve rows in all, at every step: "
           "the memory is flat. Without sinks the cache would hold 23 .. 30 only (or the last "
           "12, 19 .. 30, at the same size).")),
}
