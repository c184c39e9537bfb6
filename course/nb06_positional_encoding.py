"""Notebook 06, Positional encoding: its figures, live figure and self-checks.

The lesson itself is in notebooks/06_positional_encoding.ipynb; this module holds what a learner
may skip (drawing, widget wiring, the checks' diagnoses). Its tests are in
tests/test_nb06_positional_encoding.py.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.transforms import Affine2D

import attention_core as ac
from course import figures
from course.checks import Verdict, check_value
from course.checks import hint as hint, solution as solution  # offered in the check cells
from course.checks import Mistake, Question  # of its own entries, at the end
from course.figures import SMALL, fixed_subplots
from course.i18n import N_, _
from course.live import LiveFigure

# --- figures and live figure ----------------------------------------------------

def pe_heatmap(num_positions: int = 64, d_model: int = 32):
    """PE as an image: rows = positions pos, columns = dimensions (even = sin, odd = cos)."""
    pe = ac.sinusoidal_positional_encoding(num_positions, d_model)  # (num_positions, d_model)
    fig, ax = fixed_subplots(widths=6.4, heights=3.4, left=0.8, right=1.25, bottom=0.7, top=0.45)
    im = ax.imshow(pe, cmap="RdBu_r", vmin=-1.0, vmax=1.0, aspect="auto", interpolation="nearest")
    ax.set_xlabel(_("dimension of PE (even 2i: sin, odd 2i+1: cos)"))
    ax.set_ylabel(_("position pos"))
    ax.set_title(_("Sinusoidal positional encoding PE (位置エンコーディング), d_model = {d_model}")
                 .format(d_model=d_model))
    figures.colorbar(fig, im, ax, label="PE(pos, dim)")
    return fig


def pe_curves(num_positions: int = 100, d_model: int = 32, columns=(0, 1, 6, 14)):
    """A few columns of PE as curves over the position."""
    pe = ac.sinusoidal_positional_encoding(num_positions, d_model)  # (num_positions, d_model)
    fig, ax = fixed_subplots(widths=7.3, heights=2.8, left=0.85, right=2.25, bottom=0.7, top=0.45)
    for c in columns:
        i = c // 2
        wave = "sin" if c % 2 == 0 else "cos"
        wavelength = 2 * np.pi * 10000.0 ** (2 * i / d_model)
        ax.plot(np.arange(num_positions), pe[:, c], lw=1.5, marker=".", ms=6,
                label=_("dim {c} = {wave}, i = {i}\nwavelength {wavelength}").format(
                    c=c, wave=wave, i=i, wavelength=f"{wavelength:.1f}"))
    ax.set_xlabel(_("position pos (integers only: the dots)"))
    ax.set_ylabel("PE(pos, dim)")
    ax.set_title(_("Columns of PE: low dimensions oscillate fast, high ones slowly "
                   "(d_model = {d_model})").format(d_model=d_model))
    ax.set_yticks([-1, -0.5, 0, 0.5, 1])
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=SMALL)
    return fig


def pe_dot_vs_offset(ks, dots, positions, d_model: int):
    """PE(p) . PE(p + k) against k, one curve per start position p (computed in the notebook).

    ks (K,) offsets; dots (len(positions), K), row r for p = positions[r]. The curves coincide.
    """
    ks, dots = np.asarray(ks), np.asarray(dots, dtype=float)
    if dots.shape != (len(positions), len(ks)):
        raise ValueError(f"dots must have shape (len(positions), len(ks)) = "
                         f"{(len(positions), len(ks))}, got {dots.shape}")
    fig, ax = fixed_subplots(widths=6.5, heights=2.8, left=0.8, right=0.15, bottom=0.7, top=0.45)
    styles = ["-", "--", ":", "-."]
    for idx, (p, row) in enumerate(zip(positions, dots, strict=True)):
        ax.plot(ks, row, styles[idx % len(styles)], lw=3 - 0.6 * idx, label=f"p = {p}")
    ax.set_xlabel(_("offset k"))
    ax.set_ylabel("PE(p) · PE(p + k)")
    ax.set_title(_("Dot product of two encodings depends on the offset k only "
                   "(d_model = {d_model})").format(d_model=d_model))
    ax.axhline(0, color="grey", lw=0.8)
    ax.legend(title=_("start position"))
    return fig


def _bar_segments(values: np.ndarray, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """x, y of vertical segments 0 -> values[c] at x = c (every other c from offset), NaN-separated.

    One Line2D drawn this way looks like a bar chart and redraws much faster than d_model bars.
    """
    xs = np.arange(offset, len(values), 2, dtype=float)
    x = np.repeat(xs, 3)  # x, x, nan for each bar
    x[2::3] = np.nan
    y = np.zeros_like(x)
    y[1::3] = values[offset::2]
    return x, y


class LivePositionalEncoding(LiveFigure):
    """Sliders pos and d_model: the vector PE(pos) as bars, and PE(pos) . PE(pos + k) against k.

    Both axes are fixed, in units of d_model, so only the data is redrawn (blitting):
    dimension c is drawn in the slot [c, c + 1) of 0 ... d_model, and the dot products
    in units of d_model/2 (they lie in [-d_model/2, d_model/2], as |PE(pos)|^2 = d_model/2).
    """

    layout = None  # fixed_subplots in setup()
    max_d_model = 128
    max_k = 60

    def setup(self) -> None:
        _fig, (ax_bar, ax_dot) = fixed_subplots(1, 2, widths=[4.5, 4.2], heights=2.9, left=0.85,
                                                right=0.3, bottom=0.7, top=0.5, wgap=1.15,
                                                fig=self.fig)
        ax_bar.axhline(0, color="grey", lw=0.8)  # before the bars: drawn under them
        # labelled (no legend: the axis label says which colour is which) for the figure's words
        (self.sin_bars,) = ax_bar.plot([], [], color="C0", solid_capstyle="butt", label="sin")
        (self.cos_bars,) = ax_bar.plot([], [], color="C1", solid_capstyle="butt", label="cos")
        ax_bar.set_xlim(0, 1)
        ax_bar.set_xticks([0, 0.5, 1], ["0", "d_model/2", "d_model"])
        ax_bar.set_ylim(-1.1, 1.1)
        ax_bar.set_yticks([-1, 0, 1])
        ax_bar.set_xlabel(_("dimension of PE (blue: sin at 2i, brown: cos at 2i+1)"))
        ax_bar.set_ylabel("PE(pos, dim)")
        self.ax_bar = ax_bar
        ax_dot.axhline(0, color="grey", lw=0.8)
        ks = np.arange(self.max_k + 1)
        (self.line,) = ax_dot.plot(ks, np.zeros(len(ks)), lw=2, marker="o", ms=3)
        ax_dot.set_xlim(0, self.max_k)
        ax_dot.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(5, integer=True))
        ax_dot.set_ylim(-1.1, 1.1)
        ax_dot.set_yticks([-1, -0.5, 0, 0.5, 1])
        ax_dot.set_xlabel(_("offset k"))
        ax_dot.set_ylabel("PE(pos) · PE(pos + k) / (d_model/2)")
        self.ax_dot = ax_dot
        self.bar_title = ax_bar.set_title(" ", fontsize="medium")
        self.dot_title = ax_dot.set_title(" ", fontsize="medium")
        self.update(pos=100, d_model=128)  # titles of their largest size for the one layout
        self.blit([self.sin_bars, self.cos_bars, self.line, self.bar_title, self.dot_title])

    def update(self, pos: int = 0, d_model: int = 16) -> str:
        if not 2 <= d_model <= self.max_d_model or d_model % 2:
            raise ValueError(f"d_model must be even and in 2..{self.max_d_model}, got {d_model}")
        pe = ac.sinusoidal_positional_encoding(pos + self.max_k + 1, d_model)  # (pos+max_k+1, d_model)
        # the data stay in dimensions and dot products; a transform draws them in units of d_model
        in_dims = Affine2D().translate(0.5, 0.0).scale(1.0 / d_model, 1.0) + self.ax_bar.transData
        slot = self.ax_bar.bbox.width * 72.0 / self.fig.dpi / d_model  # one dimension's slot, points
        for line, offset in ((self.sin_bars, 0), (self.cos_bars, 1)):
            line.set_data(*_bar_segments(pe[pos], offset))  # dimension c in the middle of [c, c + 1)
            line.set_transform(in_dims)
            line.set_linewidth(0.7 * slot)
        self.bar_title.set_text(f"PE(pos = {pos}), d_model = {d_model}")
        dots = pe[pos:] @ pe[pos]  # (max_k+1, d_model) @ (d_model,) -> (max_k+1,)
        self.line.set_ydata(dots)
        self.line.set_transform(Affine2D().scale(1.0, 2.0 / d_model) + self.ax_dot.transData)
        self.dot_title.set_text(_("from pos = {pos}: largest at k = 0 (d_model/2 = {half})").format(
            pos=pos, half=d_model // 2))
        first = " ".join(f"{v:.3f}" for v in pe[pos, :6])
        return _("pos = {pos}, d_model = {d_model}\nPE(pos)[:6] = {first}\n"
                 "PE(pos) . PE(pos) = {norm} (= d_model/2)\n"
                 "PE(pos) . PE(pos+k) for k = 1, 5, 20: {dots}").format(
                     pos=pos, d_model=d_model, first=first, norm=f"{pe[pos] @ pe[pos]:.3f}",
                     dots=" ".join(f"{dots[k]:.3f}" for k in (1, 5, 20)))


def pe_vectors_grid(positions=(0, 1, 10, 50), d_models=(8, 32)):
    """Small multiples of PE(pos) as bars: one row per d_model, one column per position."""
    title = _("The encoding vector of a few positions (blue: sin, brown: cos)")
    fig, axes = fixed_subplots(len(d_models), len(positions), widths=2.4, heights=1.6,
                               left=0.9, right=0.15, bottom=0.7, top=0.85, wgap=0.2, hgap=0.8,
                               sharey=True, squeeze=False, min_width=figures.text_width(title) + 0.3)
    width = axes[0, 0].get_position().width * fig.get_figwidth()  # a dimension's bar: a share of it
    for row, d_model in zip(axes, d_models, strict=True):
        pe = ac.sinusoidal_positional_encoding(max(positions) + 1, d_model)
        slot = width * 72.0 / d_model  # points per dimension
        for ax, pos in zip(row, positions, strict=True):
            ax.axhline(0, color="grey", lw=0.8)
            for offset, color, name in ((0, "C0", "sin"), (1, "C1", "cos")):  # a line per colour
                ax.plot(*_bar_segments(pe[pos], offset), color=color, lw=0.55 * slot,
                        solid_capstyle="butt", label=name)   # the label: for its words only
            ax.set_xlim(-0.5, d_model - 0.5)
            ax.set_ylim(-1.1, 1.1)
            ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4, integer=True))
            ax.set_title(f"PE({pos}), d_model = {d_model}", fontsize=SMALL)
            ax.set_xlabel(_("dimension"))
        row[0].set_yticks([-1, 0, 1])
        row[0].set_ylabel("PE(pos, dim)")
    figures.suptitle(fig, title)
    return fig


# --- self-checks --------------------------------------------------------------

def check_pe_entry(answer, pos: int, dim: int, d_model: int) -> Verdict:
    """Check one entry PE(pos, dim): sin(pos / 10000^(2i/d_model)) at dim = 2i, cos(...) at 2i+1."""
    if not 0 <= dim < d_model:
        raise ValueError(f"dim must be in 0..d_model-1 = 0..{d_model - 1}, got {dim}")
    i = dim // 2  # the pair index: dim = 2i or 2i+1
    right_fn, wrong_fn = (np.sin, np.cos) if dim % 2 == 0 else (np.cos, np.sin)
    angle = pos / 10000.0 ** (2 * i / d_model)
    right = float(ac.sinusoidal_positional_encoding(pos + 1, d_model)[pos, dim])
    i_up = (dim + 1) // 2  # ceil(dim / 2): the pair index rounded up
    parity = _("even") if dim % 2 == 0 else _("odd")  # fills the why of pe_swapped_sin_cos
    context = {"dim": dim, "parity": parity, "i": i, "two_i": 2 * i, "d_model": d_model,
               "i_up": i_up, "two_i_up": 2 * i_up}
    values = {
        "pe_swapped_sin_cos": wrong_fn(angle),
        "pe_exponent_i": right_fn(pos / 10000.0 ** (i / d_model)),
        "pe_exponent_dim": right_fn(pos / 10000.0 ** (dim / d_model)),
        "pe_positions_from_1": float(ac.sinusoidal_positional_encoding(pos + 2, d_model)[pos + 1, dim]),
    }
    rounded_up = right_fn(pos / 10000.0 ** (2 * i_up / d_model))
    if not any(np.isclose(rounded_up, v, atol=1e-4) for v in values.values()):
        values["pe_pair_index_rounded_up"] = rounded_up
    return check_value(answer, right, f"PE(pos={pos}, dim={dim})", values, context=context)


def check_permuted_output(answer, Y, perm) -> Verdict:
    """Check the self-attention output for permuted inputs X[perm] (no positional encoding): Y[perm]."""
    Y = np.asarray(Y, dtype=float)
    perm = np.asarray(perm)
    mistakes = {"pe_not_permuted": Y, "pe_inverse_permutation": Y[np.argsort(perm)]}
    return check_value(answer, Y[perm], _("output for X[perm]"), mistakes)


# --- this notebook's entries of checks.MISTAKES and checks.QUESTIONS ---------------------------
# The mistakes its checks name (those several notebooks name are in course/mistakes.py), and
# the hint and worked solution of each of its questions (course/questions.py gathers them).

MISTAKES = {
    "pe_swapped_sin_cos": Mistake(
        "06",
        N_("swapping sin and cos"),
        N_("even dimensions 2i get sin, odd dimensions 2i+1 get cos; dim = {dim} is {parity}.")),
    "pe_exponent_i": Mistake(
        "06",
        N_("the exponent i/d_model"),
        N_("the exponent is 2i/d_model with the pair index i = {i} (here 2i/d_model = "
           "{two_i}/{d_model}), not i/d_model.")),
    "pe_exponent_dim": Mistake(
        "06",
        N_("using the dimension index dim in place of 2i"),
        N_("both dimensions of a pair share one frequency: dim = {dim} belongs to pair i = {i}, so "
           "the exponent is 2i/d_model = {two_i}/{d_model}, not {dim}/{d_model}.")),
    "pe_positions_from_1": Mistake(
        "06",
        N_("counting positions from 1"),
        N_("positions start at pos = 0 (the first token), as the rows of "
           "ac.sinusoidal_positional_encoding do.")),
    "pe_pair_index_rounded_up": Mistake(
        "06",
        N_("the pair index i = ceil(dim/2) = {i_up}"),
        N_("the pair index rounds DOWN: dim = {dim} = 2i + 1 gives i = dim // 2 = {i}, so the "
           "exponent is 2i/d_model = {two_i}/{d_model}, not {two_i_up}/{d_model}.")),
    "pe_not_permuted": Mistake(
        "06",
        N_("the unpermuted output"),
        N_("self-attention without positions is permutation-EQUIVARIANT, not invariant: the output "
           "rows move together with the input rows.")),
    "pe_inverse_permutation": Mistake(
        "06",
        N_("the inverse permutation"),
        N_("row r of the new input is X[perm[r]], so row r of the new output is Y[perm[r]]: index "
           "with perm, not with argsort(perm).")),
}

QUESTIONS = {
    "06.pe_entry": Question(
        N_("Dimension 3 = 2i + 1 is odd, which decides between sin and cos, and it belongs to the "
           "pair i = 3 // 2. The angle is pos / 10000^(2i / d_model): work out the exponent "
           "first."),
        "np.cos(10 / 10000 ** (2 * 1 / 8))",
        N_("Dimension 3 is odd: PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)) with i = 1, so the "
           "exponent is 2/8 = 0.25 and 10000^0.25 = 10. The angle is 10 / 10 = 1 radian and "
           "PE(10, 3) = cos(1) = 0.5403. Dimension 2, the other half of the pair, is sin(1).")),
    "06.permuted_output": Question(
        N_("Self-attention without positions is permutation-equivariant: reorder the input rows, "
           "and the output rows are reordered the same way. Row r of the new input is X[perm[r]]; "
           "which row of Y is its output?"),
        "Y[perm]",
        N_("Row r of the new input is the old token perm[r], and attention treats a token the same "
           "wherever it stands, so row r of the new output is that token's old output, Y[perm[r]]: "
           "the whole matrix is Y[perm]. Y itself would mean nothing moves (invariance), and "
           "Y[np.argsort(perm)] applies the inverse permutation.")),
}
