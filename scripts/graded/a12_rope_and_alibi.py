"""Assignment 12 of the graded track: Positions by rotation (RoPE) and by distance (ALiBi) (notebooks/12_rope_and_alibi.ipynb)."""

from __future__ import annotations

from scripts.graded.items import DERIVE, EXPERIMENT, FILL, Assignment, Item, code

ASSIGNMENT = Assignment(
    "12_rope_and_alibi", "Positions by rotation (RoPE) and by distance (ALiBi)",
    code("""
import numpy as np

import attention_core as ac

rng = np.random.default_rng(2612)
h, n, m, d_k, d_v = 4, 3, 7, 4, 2
Q = rng.normal(size=(h, n, d_k))   # (h, n, d_k): the LAST n of m positions (a cache holds the first m - n)
K = rng.normal(size=(h, m, d_k))   # (h, m, d_k)
V = rng.normal(size=(h, m, d_v))   # (h, m, d_v)
D_HEAD, BASE, CONTEXT = 128, 500000.0, 8192   # the counting item: Llama 3's head width, base and context
"""),
    (
        Item("nb12_turning_pairs", FILL,
             "RoPE on heads of width D_HEAD = 128 with base = BASE = 500,000 (Llama 3's), over a "
             "context of CONTEXT = 8192 positions. Assign to `turning_pairs` the number of pairs "
             "j that make at least one full turn between position 0 and position 8192 (an angle "
             "of at least 2 pi), and to `slowest_angle` the angle in radians by which the slowest "
             "pair has turned at position 8192.",
             code("""
### BEGIN SOLUTION
theta = BASE ** (-2.0 * np.arange(D_HEAD // 2) / D_HEAD)   # (D_HEAD/2,): one speed per pair
turning_pairs = int(np.sum(CONTEXT * theta >= 2 * np.pi))
slowest_angle = CONTEXT * theta[-1]                         # the last pair, j = D_HEAD/2 - 1
### END SOLUTION
"""),
             answers=("turning_pairs", "slowest_angle"), points=3,
             visible=code("""
assert float(turning_pairs).is_integer() and 0 < turning_pairs <= D_HEAD // 2, "a number of pairs, between 1 and 64"
assert np.ndim(slowest_angle) == 0 and 0 < float(slowest_angle) < 2 * np.pi, "the slowest pair turns by less than a full turn"
"""),
             hidden=code("""
_speeds = np.exp(-np.log(500000.0) * np.arange(0, 128, 2) / 128)
assert turning_pairs != 64, "the exponent is 2j/d: with j/d every pair would turn"
assert turning_pairs != 50, "base 500,000, not 10,000"
assert turning_pairs == np.count_nonzero(8192 * _speeds >= 2 * np.pi), "not the number of pairs that turn at least once"
assert not np.isclose(float(slowest_angle), 8192 / 500000.0), "the slowest pair is j = 63, whose speed is base^(-126/128), not 1/base"
assert np.isclose(float(slowest_angle), 8192 * _speeds.min(), rtol=1e-6), "not the angle of the slowest pair at position 8192"
""")),
        Item("nb12_alibi_attention", EXPERIMENT,
             "Write `alibi_attention(Q, K, V)` for Q (h, n, d_k), K (h, m, d_k), V (h, m, d_v) "
             "with n <= m, the queries being the last n of m positions (a cache holds the first "
             "m - n): causal attention with ALiBi's bias for h heads, returning (output, "
             "weights) as ac.scaled_dot_product_attention does. Run it on Q, K, V above as "
             "`out, weights`. Then give 8 heads no content at all (queries, keys and values of "
             "zeros, n = m = 12, d_k = d_v = 4) and put in `far_weight` the weight that the last "
             "query puts on key 0 in each head (8 numbers). Which heads still read that far?",
             code("""
def alibi_attention(Q, K, V):
    ### BEGIN SOLUTION
    heads, n_q, n_k = Q.shape[0], Q.shape[-2], K.shape[-2]
    M = ac.alibi_bias(heads, n_q, n_k) + ac.causal_mask(n_q, n_k)   # (h, n, m): the penalty, the future hidden
    return ac.scaled_dot_product_attention(Q, K, V, M)             # (h, n, d_v), (h, n, m)
    ### END SOLUTION


### BEGIN SOLUTION
out, weights = alibi_attention(Q, K, V)
far_weight = alibi_attention(np.zeros((8, 12, 4)), np.zeros((8, 12, 4)), np.zeros((8, 12, 4)))[1][:, -1, 0]
### END SOLUTION
print("weight of key 0 from query 11, heads 0..7:", np.round(far_weight, 4))
"""),
             answers=("alibi_attention", "out", "weights", "far_weight"), points=4,
             visible=code("""
assert np.shape(out) == (h, n, d_v) and np.shape(weights) == (h, n, m), "output (h, n, d_v), weights (h, n, m)"
assert np.shape(far_weight) == (8,), "one weight per head"
"""),
             hidden=code("""
def _ref(A, B, C):
    _h, _n, _m = A.shape[0], A.shape[1], B.shape[1]
    _pos = np.arange(_m - _n, _m)[:, None] - np.arange(_m)[None, :]   # (n, m): query position minus key position
    _S = A @ np.swapaxes(B, 1, 2) / np.sqrt(A.shape[2]) - ac.alibi_slopes(_h)[:, None, None] * _pos
    return ac.softmax(np.where(_pos < 0, -np.inf, _S)) @ C
assert np.allclose(out, _ref(Q, K, V)), "out is not causal ALiBi attention with the queries at positions 4..6"
assert np.allclose(np.triu(weights[:, :, 4:], 1), 0), "a query must not see keys after its own position"
_s = 2.0 ** (-np.arange(1, 9))
_e = np.exp(-_s[:, None] * np.arange(11, -1, -1)[None, :])
assert np.allclose(far_weight, _e[:, 0] / _e.sum(axis=1)), "far_weight is not the weight of key 0 from query 11 with equal scores"
_g = np.random.default_rng(43)
_Q3, _K3, _V3 = _g.normal(size=(3, 5, 2)), _g.normal(size=(3, 5, 2)), _g.normal(size=(3, 5, 3))
assert np.allclose(alibi_attention(_Q3, _K3, _V3)[0], _ref(_Q3, _K3, _V3)), "h = 3 heads (not a power of two), n = m = 5"
_Q1, _K1, _V1 = _g.normal(size=(2, 1, 4)), _g.normal(size=(2, 6, 4)), _g.normal(size=(2, 6, 2))
assert np.allclose(alibi_attention(_Q1, _K1, _V1)[0], _ref(_Q1, _K1, _V1)), "one cached query at position 5 over six keys"
assert np.allclose(alibi_attention(_Q1[:1], _K1[:1], _V1[:1])[1].sum(axis=-1), 1), "one head: each row of weights sums to 1"
""")),
        Item("nb12_relative_positions", DERIVE,
             "(a) Write pair j of a query q and a key k as complex numbers q_j = a_j + i b_j and "
             "k_j. Show that after RoPE at positions p (query) and p' (key) the score is "
             "Re[sum_j q_j conj(k_j) e^{i (p - p') theta_j}], so that it depends on p - p' "
             "only. (b) ALiBi adds -s (i - j) to the score of query i and key j. Show that the "
             "weights of query i over keys j <= i are those of scores plus s j, and give the "
             "ratio of the weights of two keys j and j' whose content scores are equal. (c) For "
             "q = k (the same vector at both positions) write the RoPE score as a function of the "
             "offset D = p - p', show that it is largest at D = 0, and explain why a large "
             "offset can still score nearly as high (think of the fast and the slow pairs).",
             "(a) RoPE multiplies $q_j$ by $e^{i p \\theta_j}$ and $k_j$ by $e^{i p' \\theta_j}$; "
             "the real dot product of two pairs is $\\mathrm{Re}[z \\bar w]$, so the score is "
             "$\\sum_j \\mathrm{Re}[q_j e^{i p \\theta_j} \\overline{k_j e^{i p' \\theta_j}}] = "
             "\\mathrm{Re}[\\sum_j q_j \\bar k_j e^{i (p - p') \\theta_j}]$: $p$ and $p'$ enter "
             "through $p - p'$ alone. "
             "(b) $-s(i - j) = -s i + s j$; the term $-s i$ is the same for every key of row $i$ "
             "and the softmax does not change when a constant is added to a whole row, so the "
             "weights are those of the scores plus $s j$. With equal content scores "
             "$a_{ij} / a_{ij'} = e^{s (j - j')} = e^{-s (j' - j)}$: each position further back "
             "costs the factor $e^{-s}$. "
             "(c) With $q = k$: $\\mathrm{Re}[\\sum_j |q_j|^2 e^{i D \\theta_j}] = \\sum_j |q_j|^2 "
             "\\cos(D \\theta_j) \\le \\sum_j |q_j|^2$, with equality at $D = 0$. The slow pairs "
             "($\\theta_j$ small) have $\\cos(D \\theta_j) \\approx 1$ over long offsets, and a "
             "fast pair comes back near $\\cos = 1$ whenever $D \\theta_j$ is near a multiple of "
             "$2 \\pi$: if most of the weight $|q_j|^2$ lies on slow pairs, or the fast ones come "
             "round together, a distant offset scores almost as high as $D = 0$.",
             rubric=((1, "(a) the rotations as factors e^{i p theta_j}, the conjugate of the key's "
                         "giving e^{i (p - p') theta_j}: the score depends on p - p' only."),
                     (1, "(b) -s i is constant along row i and cancels in the softmax; equal "
                         "content scores give the ratio e^{s (j - j')}."),
                     (1, "(c) the score sum_j |q_j|^2 cos(D theta_j), largest at D = 0; slow pairs "
                         "barely turn and fast ones come round, so far offsets can score high.")))),
)
