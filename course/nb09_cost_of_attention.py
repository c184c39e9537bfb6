"""Notebook 09, The cost of attention: its figures, live figure and self-checks.

The lesson itself is in notebooks/09_cost_of_attention.ipynb; this module holds what a learner
may skip (drawing, widget wiring, the checks' diagnoses). Its tests are in
tests/test_nb09_cost_of_attention.py.
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
    is_unanswered,
    named,
    sentence,
    unanswered,
)
from course import describe, figures
from course.checks import hint as hint, solution as solution  # offered in the check cells
from course.checks import Mistake, Question  # of its own entries, at the end
from course.figures import SMALL, fixed_subplots
from course.i18n import N_, _, shown
from course.live import LiveFigure

# Texts notebook 09 passes to cost_loglog (its titles, axis labels and series names), marked here
# for translation: the notebook's code is the same in every edition; cost_loglog shows them
# with i18n.shown.
NOTEBOOK_TITLES = (
    N_("time per call [s] (log scale)"), N_("peak memory [MiB] (log scale)"),
    N_("Time of naive attention"), N_("Peak memory of naive attention"),
    N_("Peak memory: naive vs tiled"), N_("Time: naive vs tiled"),
    N_("naive"), N_("naive (whole n x n)"), N_("tiled (b = 256)"),
)


# --- figures and live figure ----------------------------------------------------

MiB = 2 ** 20  # bytes in a mebibyte (MiB); a megabyte (MB) is 10**6 bytes


def format_bytes(num_bytes: float) -> str:
    """Bytes in binary units: '512 B', '8.0 KiB', '128.0 MiB', '2.0 GiB'."""
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if num_bytes >= size:
            return f"{num_bytes / size:.1f} {unit}"
    return f"{int(num_bytes)} B"


def cost_loglog(sweeps: dict, key: str, ylabel: str, title: str, scale: float = 1.0,
                refs: dict | None = None, ax=None):
    """Log-log plot of sweeps[label][key] / scale against n, with reference lines c * n^p.

    sweeps : {label: {"n": (k,) array, key: (k,) array}}, as the notebook's attention_sweep returns.
    refs : {p: label}: a grey line proportional to n^p through the last point of
    sweeps[label], to read a slope off against; default {2: first label}.
    """
    if ax is None:
        _fig, ax = fixed_subplots(  # not "_": that is the translation
            widths=4.6, heights=3.1, left=1.0, right=0.15, bottom=0.7, top=0.45)
    for (label, sw), marker in zip(sweeps.items(), "os^D", strict=False):
        ax.loglog(sw["n"], sw[key] / scale, marker=marker, label=shown(label), zorder=3)
    refs = {2: next(iter(sweeps))} if refs is None else refs
    for (p, label), style in zip(refs.items(), ("--", ":", "-."), strict=False):
        n = sweeps[label]["n"].astype(float)
        last = sweeps[label][key][-1] / scale
        ax.loglog(n, last * (n / n[-1]) ** p, style, color="gray",
                  label=_("reference ∝ {power}").format(power=_power("n", p)))
    ns = next(iter(sweeps.values()))["n"]
    ax.set_xticks(ns, [str(int(n)) for n in ns])  # the measured n, written out
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.yaxis.set_major_formatter(_plain_log_labels)  # 0.01, 0.1, 1: no 10^k mathtext to typeset
    ax.set_xlabel(_("sequence length n (log scale)"))
    ax.set_ylabel(shown(ylabel))
    ax.set_title(shown(title))
    ax.legend()
    ax.grid(True, which="major", alpha=0.3)
    # Its text alternative gives no numbers: timings differ on every run, and a peak of
    # tracemalloc by a few hundred bytes from run to run and between the editions, enough to
    # move the third digit of a value (0.690 or 0.691 MiB)
    describe.mark_measured(ax)
    return ax.figure


def _power(base: str, p) -> str:
    """'n', 'n²', 'n³' in plain text (the font has these superscripts), else mathtext."""
    return {1: base, 2: f"{base}²", 3: f"{base}³"}.get(p, f"${base}^{{{p}}}$")


@matplotlib.ticker.FuncFormatter
def _plain_log_labels(value, _pos=None) -> str:
    """Decades written out (0.001, 0.1, 1, 100, 10000): easier to read than 10^k, and no mathtext."""
    return f"{value:,.10f}".rstrip("0").rstrip(".") if value < 1 else f"{value:,.0f}"


def tile_grid(n: int, block_size: int, max_pixels: int = 512) -> np.ndarray:
    """0/1 checkerboard of the tiles over the n x n score grid (query i, key j in tile (i//b, j//b)).

    Shape (P, P) with P = min(n, max_pixels): pixel k stands for position k*n//P, so a
    very long sequence still gives a small picture.
    """
    P = min(n, max_pixels)
    pos = np.arange(P) * n // P  # (P,) the position each pixel stands for
    tile = pos // block_size  # (P,) tile index of that position
    return (tile[:, None] + tile[None, :]) % 2  # (P, 1) + (1, P) -> (P, P)


_TILE_CMAP = matplotlib.colors.ListedColormap(["#c6dbef", "#6baed6"])
MAX_TILES_DRAWN = 64  # tiles per side beyond which the checkerboard is too fine to see


def _tile_picture(n: int, b: int) -> np.ndarray:
    if -(-n // b) > MAX_TILES_DRAWN:  # too fine to draw: one flat colour
        return np.zeros((2, 2), dtype=int)
    return tile_grid(n, b)


def _draw_tiles(ax, n: int, block_size: int):
    """Checkerboard of tiles on ax plus a red frame round the first tile; returns (image, frame)."""
    b = min(block_size, n)
    im = ax.imshow(_tile_picture(n, b), cmap=_TILE_CMAP, vmin=0, vmax=1,
                   interpolation="nearest", extent=(0, n, n, 0))
    frame = matplotlib.patches.Rectangle((0, 0), b, b, fill=False, edgecolor="red", linewidth=2.5,
                                         zorder=3)  # above the spines: visible when b = n
    ax.add_patch(frame)
    ax.set_xlabel(_("key position j"))
    ax.set_ylabel(_("query position i"))
    return im, frame


def tiling_small_multiples(n: int, counts: dict):
    """Static figure: the n x n score grid cut into tiles for several block sizes, with counts.

    counts : {block_size: the notebook's tiling_counts(n, block_size)}, one picture each.
    """
    title = _("Score grid n x n = {n} x {n}: the red tile is all that is held at once").format(n=n)
    fig, axes = fixed_subplots(1, len(counts), widths=2.4, heights=2.4, left=0.95, right=0.2,
                               bottom=0.7, top=1.0, wgap=0.3, sharey=True, squeeze=False,
                               min_width=figures.text_width(title) + 0.3, widen="margins")
    for ax, (b, c) in zip(axes[0], counts.items(), strict=True):
        _draw_tiles(ax, n, b)
        panel = (_("b = {b}: {tiles} tiles\nheld at once: {entries} entries") if c["tiles"] > 1
                 else _("b = {b}: {tiles} tile\nheld at once: {entries} entries"))
        ax.set_title(panel.format(b=b, tiles=c["tiles"], entries=f"{c['tiled_entries_at_once']:,}"),
                     fontsize="medium")
    for ax in axes[0, 1:]:
        ax.set_ylabel("")  # shared query axis: labelled on the left
    figures.suptitle(fig, title)
    return fig


class LiveTiling(LiveFigure):
    """Slider figure: the n x n score grid cut into tiles, and entries held at once (naive vs tiled).

    tiling_counts: the notebook's function (n, block_size) -> counts; every number shown
    comes from it. The grid is drawn in units of n (ticks 0, n/2, n), so
    everything except the changing artists (tile image, red frame, bars, texts) is drawn
    once and kept as a background; png() restores it and draws only the changing
    artists (blitting).
    """

    figsize = (9.5, 4.0)
    layout = None  # axes placed in setup()
    max_n = 16384

    def __init__(self, tiling_counts):
        self.tiling_counts = tiling_counts
        super().__init__()

    def setup(self) -> None:
        self.ax_grid = self.fig.add_axes((0.09, 0.14, 0.30, 0.66))
        self.ax_bar = self.fig.add_axes((0.50, 0.14, 0.46, 0.66))
        self.im = self.ax_grid.imshow(np.zeros((2, 2)), cmap=_TILE_CMAP, vmin=0, vmax=1,
                                      interpolation="nearest", extent=(0, 1, 1, 0))
        self.frame = matplotlib.patches.Rectangle((0, 0), 1, 1, fill=False, edgecolor="red",
                                                  linewidth=2.5)
        self.ax_grid.add_patch(self.frame)
        for axis in (self.ax_grid.xaxis, self.ax_grid.yaxis):
            axis.set_ticks([0, 0.5, 1], ["0", "n/2", "n"])
        self.ax_grid.set_xlabel(_("key position j"))
        self.ax_grid.set_ylabel(_("query position i"))
        # plain texts, not titles: a title is re-positioned on every draw (slow)
        self.grid_title = self.ax_grid.text(0.5, 1.03, "", transform=self.ax_grid.transAxes,
                                            ha="center", va="bottom", fontsize="medium")
        self.too_fine = self.ax_grid.text(0.5, 0.5, _("tiles too small\nto draw"), ha="center",
                                          va="center", transform=self.ax_grid.transAxes,
                                          fontsize="medium", bbox={"facecolor": "white", "lw": 0})
        self.bars = self.ax_bar.barh([1, 0], [1, 1], color=["C3", "C0"])
        self.ax_bar.set_yticks([])
        self.ax_bar.set_xscale("log")
        self.ax_bar.set_xlim(1, 2 * self.max_n ** 2)
        self.ax_bar.set_xticks(10.0 ** np.arange(0, 9, 2), ["1", "100", "10,000", "1e6", "1e8"])
        self.ax_bar.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        self.ax_bar.set_xlabel(_("score entries held at once (log scale)"))
        self.bar_title = self.ax_bar.text(0.5, 1.03, "", transform=self.ax_bar.transAxes,
                                          ha="center", va="bottom", fontsize="medium")
        self.labels = [self.ax_bar.text(1.5, y, "", va="center", fontsize=SMALL,
                                        bbox={"facecolor": "white", "alpha": 0.8, "lw": 0})
                       for y in (1, 0)]
        self.blit([self.im, self.frame, self.too_fine, self.grid_title, *self.bars, *self.labels,
                   self.bar_title])

    def update(self, n: int = 64, block_size: int = 8) -> str:
        c = self.tiling_counts(n, block_size)
        b = min(block_size, n)
        k = c["tiles_per_side"]
        self.im.set_data(_tile_picture(n, b))
        self.frame.set_bounds(0, 0, b / n, b / n)  # the grid is drawn in units of n
        self.too_fine.set_visible(k > MAX_TILES_DRAWN)
        self.grid_title.set_text(_("n = {n}, b = {b}\n{k} x {k} = {tiles} tiles").format(
            n=n, b=b, k=k, tiles=f"{c['tiles']:,}"))
        for bar, label, key in zip(self.bars, self.labels, ("naive", "tiled"), strict=True):
            entries = c[f"{key}_entries_at_once"]
            bar.set_width(entries)
            what = _("naive, whole n x n") if key == "naive" else _("tiled, one b x b tile")
            label.set_text(f"{what}: {entries:,} ({format_bytes(c[f'{key}_bytes_at_once'])})")
        ratio = c["naive_entries_at_once"] / c["tiled_entries_at_once"]
        ratio = f"{ratio:,.0f}" if ratio.is_integer() else f"{ratio:.3g}"
        self.bar_title.set_text(_("float64 scores held at once\ntiled: {ratio}x fewer").format(
            ratio=ratio))
        return _("n = {n}, block_size = {block_size}: {k} x {k} = {tiles} tiles\n"
                 "score entries held at once: naive {naive} ({naive_bytes}), tiled {tiled} "
                 "({tiled_bytes}) -> {ratio}x fewer\n"
                 "score entries computed in total: {computed} in both").format(
            n=n, block_size=block_size, k=k, tiles=f"{c['tiles']:,}",
            naive=f"{c['naive_entries_at_once']:,}",
            naive_bytes=format_bytes(c["naive_bytes_at_once"]),
            tiled=f"{c['tiled_entries_at_once']:,}",
            tiled_bytes=format_bytes(c["tiled_bytes_at_once"]), ratio=ratio,
            computed=f"{c['entries_computed']:,}")


# --- self-checks --------------------------------------------------------------

def _fmt_number(x: float) -> str:
    """12,345 for whole numbers, 134.218 otherwise."""
    return f"{int(round(x)):,}" if float(x).is_integer() else f"{x:,.6g}"


def _check_number(answer, expected: float, what: str, mistakes: dict, rtol: float = 1e-3,
                  hint: str = "", context: dict | None = None) -> Verdict:
    """One number against expected (relative tolerance rtol).

    mistakes: {key of checks.MISTAKES: the value that mistake gives}, tried in order; the
    mistake's {placeholders} are filled from context.
    """
    if is_unanswered(answer):
        return unanswered(what)
    try:
        a = float(np.asarray(answer, dtype=float))
    except (TypeError, ValueError):
        return Verdict(WRONG, _("Give your {what} as one number, got {answer}.").format(
            what=what, answer=repr(answer)))
    if np.isclose(a, expected, rtol=rtol, atol=0.0):
        return Verdict(CORRECT, _("Correct: the {what} is {value}.").format(
            what=what, value=_fmt_number(expected)))
    for key, value in mistakes.items():
        if not np.isclose(value, expected, rtol=rtol, atol=0.0) and \
                np.isclose(a, value, rtol=rtol, atol=0.0):
            label, why = named(key, **(context or {}))
            return Verdict(MISTAKE, _("Not quite: {got} is what {label} gives. {why}").format(
                got=_fmt_number(a), label=label, why=sentence(why)), key)
    if rtol >= 1e-4 and np.isclose(a, expected, rtol=1e-2, atol=0.0):  # counts (rtol ~ 0) are exact
        return Verdict(WRONG, _("Close: {got} is within 1% of the {what}, but not within "
                                "{tolerance}: check the arithmetic, or give more digits "
                                "(3 decimals).").format(got=_fmt_number(a), what=what,
                                                        tolerance=f"{rtol:.1%}"))
    return Verdict(WRONG, _("Not quite: you gave {got}. {hint}").format(
        got=_fmt_number(a), hint=hint).rstrip())


def check_score_entries(answer, n: int, h: int = 1, d_k: int = 64) -> Verdict:
    """Number of score entries of multi-head self-attention: h * n * n (one per head, query, key)."""
    right = ac.attention_cost(n, d_k=d_k, h=h)["score_entries"]
    mistakes = {"cost_forgot_heads": n * n,
                "cost_size_of_Q": h * n * d_k,
                "cost_size_of_one_head_Q": n * d_k,  # the same number as size_of_Q when h = 1
                "cost_linear_in_n_per_head": h * 2 * n,
                "cost_linear_in_n": 2 * n}
    return _check_number(answer, right, _("number of score entries"), mistakes, rtol=1e-9,
                         hint=_("Count one entry per head, query position and key position."),
                         context={"h": h, "per_head": _(" per head") if h > 1 else ""})


def check_score_mib(answer, n: int, h: int = 1) -> Verdict:
    """Memory of the float64 score matrix (h, n, n) in MiB (1 MiB = 2**20 bytes)."""
    num_bytes = ac.attention_cost(n, h=h, bytes_per_number=8)["score_bytes"]
    entries = h * n * n
    mistakes = {"cost_float32_bytes": num_bytes / 2 / 2 ** 20,
                "cost_megabytes": num_bytes / 1e6,
                "cost_float32_bytes_and_megabytes": num_bytes / 2 / 1e6,
                "cost_bytes_not_mib": num_bytes,
                "cost_entries_not_bytes": entries / 2 ** 20,
                "cost_gib_not_mib": num_bytes / 2 ** 30}
    return _check_number(answer, num_bytes / 2 ** 20, _("float64 score matrix size in MiB"),
                         mistakes, rtol=2e-3,
                         hint=_("Entries (h*n*n) times 8 bytes, divided by 2**20."))


def check_growth_ratio(answer, factor: float = 2) -> Verdict:
    """How many times the score memory (and time) grows when n grows by `factor`: factor**2."""
    mistakes = {"cost_linear_growth": factor, "cost_cubic_growth": factor ** 3}
    return _check_number(answer, factor ** 2,
                         _("growth factor for {factor}x n").format(factor=_fmt_number(factor)),
                         mistakes, rtol=1e-9, hint=_("Think of the (n, n) grid of pairs."),
                         context={"factor": _fmt_number(factor), "square": _fmt_number(factor ** 2),
                                  "cube": _fmt_number(factor ** 3)})


def check_online_sum(answer, r: float, l: float, s_block) -> Verdict:
    """Running softmax sum after one more block: l' = l exp(r - r') + sum_j exp(s_j - r'), r' = max(r, max s)."""
    s = np.asarray(s_block, dtype=float)
    r_new = max(r, float(s.max()))
    new_terms = float(np.exp(s - r_new).sum())
    right = l * np.exp(r - r_new) + new_terms
    mistakes = {"online_no_rescale": l + new_terms,
                "online_rescale_inverted": l * np.exp(r_new - r) + new_terms,
                "online_old_max_kept": l + float(np.exp(s - r).sum())}
    return _check_number(answer, right, _("running sum l'"), mistakes, rtol=1e-3,
                         hint=_("Update the maximum first, then rescale l and add the new terms."))


def check_heads_cost_ratio(answer, n: int, d_model: int, h_from: int, h_to: int) -> Verdict:
    """Factor by which the multiply-adds of Q K^T and A V change from h_from to h_to heads: 1.

    With d_k = d_v = d_model / h all heads together do h n^2 (d_k + d_v) = 2 n^2 d_model.
    """
    for h in (h_from, h_to):
        if d_model % h:
            raise ValueError(f"h = {h} must divide d_model = {d_model}")
    work = {h: ac.attention_cost(n, d_k=d_model // h, h=h)["multiply_adds"] for h in (h_from, h_to)}
    mistakes = {"cost_heads_main_cost": h_to / h_from,  # as if every head kept its width
                "cost_heads_one_head": (work[h_to] / h_to) / (work[h_from] / h_from)}
    return _check_number(answer, work[h_to] / work[h_from],
                         _("factor by which the multiply-adds change from h = {h_from} to "
                           "h = {h_to}").format(h_from=h_from, h_to=h_to),
                         mistakes, rtol=1e-9,
                         hint=_("Write h n^2 (d_k + d_v) with d_k = d_v = d_model / h."),
                         context={"h_from": h_from, "h_to": h_to})


# --- this notebook's entries of checks.MISTAKES and checks.QUESTIONS ---------------------------
# The mistakes its checks name (those several notebooks name are in course/mistakes.py), and
# the hint and worked solution of each of its questions (course/questions.py gathers them).

MISTAKES = {
    "cost_forgot_heads": Mistake(
        "09",
        N_("one head only (n*n)"),
        N_("every head has its own n x n score matrix, so multiply by h = {h}.")),
    "cost_size_of_Q": Mistake(
        "09",
        N_("the size of Q (h*n*d_k)"),
        N_("n*d_k counts the numbers in Q or K; the score matrix has one entry per "
           "(query, key) pair{per_head}: n*n, whatever d_k is.")),
    "cost_size_of_one_head_Q": Mistake(
        "09",
        N_("the size of one head's Q (n*d_k)"),
        N_("n*d_k counts the numbers in Q or K; the score matrix has one entry per "
           "(query, key) pair: n*n per head, whatever d_k is.")),
    "cost_linear_in_n_per_head": Mistake(
        "09",
        N_("adding the positions (2n per head)"),
        N_("queries and keys are paired, not added: n queries times n keys = n*n pairs per head.")),
    "cost_linear_in_n": Mistake(
        "09",
        N_("adding the positions (2n)"),
        N_("queries and keys are paired, not added: n queries times n keys = n*n pairs per head, "
           "times h = {h} heads.")),
    "cost_float32_bytes": Mistake(
        "09",
        N_("4 bytes per number (float32)"),
        N_("numpy's default float is float64, 8 bytes per number; 4 bytes is float32.")),
    "cost_megabytes": Mistake(
        "09",
        N_("megabytes (MB, 10**6 bytes)"),
        N_("the question asks for MiB: 1 MiB = 2**20 = 1,048,576 bytes, a little more than "
           "1 MB = 1,000,000 bytes, so the MiB number is smaller.")),
    "cost_float32_bytes_and_megabytes": Mistake(
        "09",
        N_("4 bytes per number and MB"),
        N_("float64 takes 8 bytes per number, and 1 MiB = 2**20 bytes (not 10**6).")),
    "cost_bytes_not_mib": Mistake(
        "09",
        N_("leaving the answer in bytes"),
        N_("that is the number of bytes; divide by 2**20 = 1,048,576 to get MiB.")),
    "cost_entries_not_bytes": Mistake(
        "09",
        N_("counting entries instead of bytes"),
        N_("each float64 entry takes 8 bytes; multiply the entries by 8 before dividing by "
           "2**20.")),
    "cost_gib_not_mib": Mistake(
        "09",
        N_("GiB (2**30 bytes)"),
        N_("that is the size in GiB; the question asks for MiB (2**20 bytes).")),
    "cost_linear_growth": Mistake(
        "09",
        N_("linear growth ({factor}x)"),
        N_("there is one score per (query, key) pair: {factor}x the queries AND {factor}x the "
           "keys, and every query is paired with every key.")),
    "cost_cubic_growth": Mistake(
        "09",
        N_("cubic growth ({cube}x)"),
        N_("the score matrix has two axes (queries and keys), so it grows with the square of n.")),
    "online_no_rescale": Mistake(
        "09",
        N_("adding without rescaling the old sum"),
        N_("the old sum l was measured against the old maximum r; when the maximum rises to r' "
           "every old term exp(s - r) must become exp(s - r'), so multiply l by exp(r - r').")),
    "online_rescale_inverted": Mistake(
        "09",
        N_("rescaling by exp(r' - r)"),
        N_("the factor is exp(r - r') <= 1: the old terms shrink when the maximum rises.")),
    "online_old_max_kept": Mistake(
        "09",
        N_("keeping the old maximum r"),
        N_("the new running maximum is r' = max(r, max s); measure every term, old and new, "
           "against r' so no exp() can overflow.")),
    "cost_heads_main_cost": Mistake(
        "09",
        N_("treating the head count as the main cost"),
        N_("with d_k = d_v = d_model / h more heads are narrower heads, so all heads together do "
           "h n^2 (d_k + d_v) multiply-adds: put d_k = d_v = d_model / h in it and see what "
           "is left of h. On long inputs it is the n^2 pairs that cost: doubling n multiplies the "
           "work by 4. (The number of score entries, h n^2, does grow with h; the arithmetic does "
           "not.)")),
    "cost_heads_one_head": Mistake(
        "09",
        N_("counting one head's work only"),
        N_("one of {h_to} heads has d_k = d_model / {h_to} and does {h_from}/{h_to} of the work of "
           "one of {h_from} heads, but there are {h_to} of them: count the work of all heads "
           "together.")),
}

QUESTIONS = {
    "09.score_entries": Question(
        N_("Every head forms its own score matrix with one entry per (query, key) pair. How many "
           "pairs do n queries and n keys make, and how many heads are there? d_k is a red "
           "herring."),
        "12 * 2000 * 2000",
        N_("One head: n * n = 2000 * 2000 = 4,000,000 pairs; twelve heads: 48,000,000 score "
           "entries. d_k = 64 is the length of each dot product (the work per entry), not the "
           "number of entries.")),
    "09.score_mib": Question(
        N_("Entries times bytes per entry, divided by the bytes of one MiB. One head, float64, and "
           "a MiB is a power of two, not a million."),
        "3072 * 3072 * 8 / 2**20",
        N_("3072^2 = 9,437,184 entries of 8 bytes are 75,497,472 bytes; divided by 2^20 "
           "= 1,048,576 that is exactly 72 MiB (75.5 MB in powers of ten; 36 MiB in float32).")),
    "09.growth_ratio": Question(
        N_("The score matrix is n x n. Write down its number of entries for n and for 2n, and "
           "divide."),
        "4",
        N_("(2n)^2 / n^2 = 4: twice the queries times twice the keys is four times the pairs, "
           "whatever n is. The time grows the same way, since every entry costs one dot product.")),
    "09.online_sum": Question(
        N_("The new block raises the running maximum. The old sum l = 1.2 was measured against the "
           "old maximum r = 3: what must happen to each of its terms e^(s - r) once the maximum is "
           "r' = 4? Then add the new terms, measured against r'."),
        "1.2 * np.exp(3.0 - 4.0) + np.exp(4.0 - 4.0) + np.exp(2.0 - 4.0) + np.exp(-1.0 - 4.0)",
        N_("r' = max(3.0, 4.0) = 4.0. Every old term e^(s - 3) becomes e^(s - 4) = e^(s - 3) "
           "e^(-1), so the old sum shrinks to 1.2 e^(-1) = 0.4415. The new terms are e^0 + e^(-2) "
           "+ e^(-5) = 1 + 0.1353 + 0.0067 = 1.1421, so l' = 1.5836.")),
    "09.heads_cost_ratio": Question(
        N_("With d_k = d_v = d_model / h, each head works on narrower vectors. Write the "
           "multiply-adds of all heads together as h * n^2 * (d_k + d_v) and put d_k = d_v "
           "= d_model / h in."),
        "ac.attention_cost(3000, d_k=32, h=24)['multiply_adds'] "
        "/ ac.attention_cost(3000, d_k=64, h=12)['multiply_adds']",
        N_("h n^2 (d_k + d_v) = h n^2 (2 d_model / h) = 2 n^2 d_model: the h cancels, so the "
           "factor is 1. Doubling the heads halves each head's width; on long inputs the cost is "
           "the n^2 of the score matrix, whatever h is (only the memory of the weights, h n^2, "
           "grows with h).")),
}
