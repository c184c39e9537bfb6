"""Assignment 06 of the graded track: Positional encoding (notebooks/06_positional_encoding.ipynb)."""

from __future__ import annotations

from scripts.graded.items import DERIVE, EXPERIMENT, FILL, Assignment, Item, code

ASSIGNMENT = Assignment(
    "06_positional_encoding", "Positional encoding",
    code("""
import numpy as np

import attention_core as ac

d_model = 16
PE = ac.sinusoidal_positional_encoding(1000, d_model)   # (1000, d_model): positions 0..999
PROBES = np.arange(0, 1000, 10)                         # (100,): the positions the experiment blurs
NOISE = np.random.default_rng(2606).normal(size=(100, d_model))   # (100, d_model): one blur per probe
SIGMAS = [0.01, 0.1, 0.3, 1.0]                          # the noise levels of the experiment
"""),
    (
        Item("nb06_dot_and_wavelength", FILL,
             "For d_model = 16: assign to `dot_7` the dot product PE(p) . PE(p + 7), which is "
             "the same for every position p (section 4.3), and to `longest_wavelength` the "
             "longest wavelength, in positions, among the columns of PE (one number each).",
             code("""
### BEGIN SOLUTION
omega = 1.0 / 10000.0 ** (np.arange(0, d_model, 2) / d_model)   # (d_model/2,): one frequency per pair
dot_7 = np.sum(np.cos(7 * omega))            # sin a sin b + cos a cos b = cos(a - b), pair by pair
longest_wavelength = 2 * np.pi / omega.min()  # the last pair, i = d_model/2 - 1
### END SOLUTION
"""),
             answers=("dot_7", "longest_wavelength"), points=3,
             visible=code("""
assert np.ndim(dot_7) == 0 and np.ndim(longest_wavelength) == 0, "two numbers, not arrays"
assert abs(float(dot_7)) <= d_model / 2, "a dot product of two rows of PE lies between -d_model/2 and d_model/2"
"""),
             hidden=code("""
_w = 10000.0 ** (-np.arange(8) / 8)
assert np.isclose(float(dot_7), PE[123] @ PE[130], atol=1e-6), "dot_7 is not PE(p) . PE(p + 7)"
assert not np.isclose(float(longest_wavelength), 2 * np.pi * 10000), "2 pi 10000 is a bound no column reaches"
assert not np.isclose(float(longest_wavelength), 10000 ** (14 / 16), rtol=1e-3), "a wavelength in positions includes the factor 2 pi"
assert not np.isclose(float(longest_wavelength), 2 * np.pi * 10000 ** (15 / 16), rtol=1e-3), "both dimensions of a pair share one frequency: the exponent is 2i/d_model, not dim/d_model"
assert np.isclose(float(longest_wavelength), 2 * np.pi / _w[-1], rtol=1e-6), "not the longest wavelength of PE's columns"
""")),
        Item("nb06_decode_position", EXPERIMENT,
             "The encoding is unique enough to read the position back. Write "
             "`decode_position(row, max_pos)`: the position p in 0, ..., max_pos - 1 whose "
             "encoding PE(p), of the width len(row), is nearest to `row` (Euclidean distance), "
             "as a Python or numpy integer; `row` may be a list. Then compute `wrong_rate`: for "
             "each sigma of SIGMAS, the fraction of the probes p = PROBES[j] for which "
             "decode_position(PE[p] + sigma * NOISE[j], 1000) is not p. Which noise level does "
             "the code survive, and why (compare sigma with the distance between neighbouring "
             "rows)?",
             code("""
def decode_position(row, max_pos):
    ### BEGIN SOLUTION
    row = np.asarray(row, dtype=float)                                 # (d,)
    table = ac.sinusoidal_positional_encoding(max_pos, row.shape[0])  # (max_pos, d)
    return int(np.argmin(np.sum((table - row) ** 2, axis=1)))
    ### END SOLUTION


### BEGIN SOLUTION
wrong_rate = [np.mean([decode_position(PE[p] + s * noise, 1000) != p for p, noise in zip(PROBES, NOISE)])
              for s in SIGMAS]
### END SOLUTION
print("fraction decoded wrongly:", dict(zip(SIGMAS, np.round(wrong_rate, 3))))
"""),
             answers=("decode_position", "wrong_rate"), points=4,
             visible=code("""
assert decode_position(PE[3], 1000) == 3, "an exact row of PE gives its own position"
assert len(wrong_rate) == len(SIGMAS) and all(0 <= r <= 1 for r in wrong_rate), "one fraction per sigma"
"""),
             hidden=code("""
_T = PE @ PE.T
for _s, _r in zip(SIGMAS, wrong_rate):
    _Y = PE[PROBES] + _s * NOISE
    _near = np.argmax(_Y @ PE.T - 0.5 * np.diag(_T)[None, :], axis=1)
    assert np.isclose(_r, np.mean(_near != PROBES)), "wrong_rate is not the fraction of probes decoded wrongly"
for _p in (0, 1, 500, 999):
    assert decode_position(PE[_p], 1000) == _p, "an exact row of PE must give its own position (0, 1, 500, 999)"
assert decode_position(list(PE[42]), 1000) == 42, "a row given as a list"
_small = ac.sinusoidal_positional_encoding(50, 4)
assert decode_position(_small[37], 50) == 37, "d_model = 4: the width of the table is the row's"
assert decode_position(ac.sinusoidal_positional_encoding(6, 2)[5], 6) == 5, "d_model = 2, one pair: positions 0..5 are still distinct"
assert decode_position(PE[7][:2], 7) == 1, "one pair (sin 7, cos 7), positions 0..6: find the nearest of those rows (the angle 7 has wrapped around the circle)"
assert decode_position(PE[10], 1) == 0, "max_pos = 1: position 0 is the only candidate"
assert decode_position(PE[613] + 0.02 * NOISE[5], 1000) == 613, "a slightly blurred row"
""")),
        Item("nb06_rotation", DERIVE,
             "Write w_i = 1 / 10000^(2i/d_model) for the frequency of pair i. (a) Using the "
             "angle addition formulas, show that the pair (PE(p+k, 2i), PE(p+k, 2i+1)) is the "
             "pair (PE(p, 2i), PE(p, 2i+1)) rotated by the angle k w_i, with a matrix that does "
             "not depend on p. (b) Deduce that PE(p) . PE(p + k) = sum_i cos(k w_i), and that it "
             "is the same for k and -k. (c) What does (b) mean for attention on positions alone "
             "with Q = K = PE, and why can learned W_Q and W_K still tell 'k tokens before' from "
             "'k tokens after'?",
             "(a) With $a = p w_i$, $b = k w_i$: $\\sin(a + b) = \\sin a \\cos b + \\cos a \\sin b$ "
             "and $\\cos(a + b) = \\cos a \\cos b - \\sin a \\sin b$, so the row pair "
             "$(\\sin a, \\cos a)$ times $\\begin{pmatrix}\\cos b & -\\sin b\\\\ \\sin b & \\cos b"
             "\\end{pmatrix}$ is $(\\sin(a + b), \\cos(a + b))$: a rotation by $k w_i$ whose "
             "matrix holds only $k$ and $w_i$, never $p$. "
             "(b) $PE(p) \\cdot PE(p + k) = \\sum_i [\\sin(p w_i) \\sin((p + k) w_i) + "
             "\\cos(p w_i) \\cos((p + k) w_i)] = \\sum_i \\cos(k w_i)$ by "
             "$\\cos(x - y) = \\cos x \\cos y + \\sin x \\sin y$; cos is even, so $k$ and $-k$ "
             "give the same value. (c) The scores $PE(p) \\cdot PE(p') / \\sqrt{d}$ then depend on "
             "$|p - p'|$ only: a query cannot prefer the token before it to the token after it. "
             "With projections the score is $PE(p) W_Q W_K^T PE(p')^T$, and a matrix "
             "$W_Q W_K^T$ that is not symmetric (for example one that rotates each pair) turns "
             "$\\cos(k w_i)$ into terms like $\\sin(k w_i)$, which are odd in $k$.",
             rubric=((1, "(a) the addition formulas written for the pair, and the 2 x 2 rotation "
                         "by k w_i, which does not contain p."),
                     (1, "(b) the sum of sin sin + cos cos collapses to sum_i cos(k w_i), even in "
                         "k."),
                     (1, "(c) raw position scores depend on |k| only (no before/after); a "
                         "non-symmetric W_Q W_K^T brings sin(k w_i) terms, odd in k.")))),
)
