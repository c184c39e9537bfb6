"""Assignment 09 of the graded track: The cost of attention (notebooks/09_cost_of_attention.ipynb)."""

from __future__ import annotations

from scripts.graded.items import DERIVE, EXPERIMENT, FILL, Assignment, Item, code

ASSIGNMENT = Assignment(
    "09_cost_of_attention", "The cost of attention",
    code("""
import numpy as np

import attention_core as ac

rng = np.random.default_rng(2609)
m, d_k, d_v = 10, 4, 3
q = rng.normal(size=d_k)          # (d_k,): one query
K = rng.normal(size=(m, d_k))     # (m, d_k): ten keys
V = rng.normal(size=(m, d_v))     # (m, d_v)
"""),
    (
        Item("nb09_longest_input", FILL,
             "A GPU has 24 GiB for the score matrices of one attention layer: h = 16 heads, "
             "self-attention over n tokens, each score in float16 (2 bytes). Assign to `n_max` "
             "the largest whole n for which all the layer's score matrices fit at once.",
             code("""
### BEGIN SOLUTION
budget = 24 * 2**30                     # bytes: a GiB is 2^30 bytes
n_max = int(np.sqrt(budget / (16 * 2)))  # h n^2 entries of 2 bytes <= budget; round down
### END SOLUTION
"""),
             answers=("n_max",), points=2,
             visible=code("""
assert float(n_max).is_integer() and n_max > 0, "n_max is a positive whole number"
"""),
             hidden=code("""
_fits = lambda k: 16 * k * k * 2 <= 24 * 1024 ** 3
assert n_max != 27386, "a GiB is 2^30 bytes, not 10^9"
assert n_max != 113511, "every one of the 16 heads has its own n x n scores"
assert n_max != 14188, "float16 takes 2 bytes per score, not 8"
assert _fits(n_max), "the score matrices of n_max tokens do not fit into 24 GiB: round down"
assert not _fits(n_max + 1), "n_max + 1 tokens still fit: not the largest n"
""")),
        Item("nb09_online_attention", EXPERIMENT,
             "Write `online_attention(q, K, V, block_size)`: the attention output of ONE query q "
             "(d_k,) over the keys K (m, d_k) and values V (m, d_v), softmax(q K^T / sqrt(d_k)) V, "
             "computed block by block: visit the keys block_size at a time (the last block may "
             "be shorter) and keep only a running maximum, a running sum of exponentials and a "
             "running weighted sum of values, never all m scores at once. It must stay finite "
             "for large scores. Run it with block sizes 1, 3 and 10 as `outputs`, a list of three "
             "(d_v,) arrays.",
             code("""
def online_attention(q, K, V, block_size):
    ### BEGIN SOLUTION
    r, total = -np.inf, 0.0                  # the running maximum and sum of exp(s - r)
    acc = np.zeros(V.shape[1])               # (d_v,): sum of exp(s - r) v
    for j in range(0, K.shape[0], block_size):
        s = K[j:j + block_size] @ q / np.sqrt(q.shape[0])   # (b, d_k) @ (d_k,) -> (b,)
        r_new = max(r, s.max())
        shrink = np.exp(r - r_new)           # exp(r - r') <= 1: the old terms against r'
        e = np.exp(s - r_new)                # (b,)
        total = total * shrink + e.sum()
        acc = acc * shrink + e @ V[j:j + block_size]        # (b,) @ (b, d_v) -> (d_v,)
        r = r_new
    return acc / total
    ### END SOLUTION


### BEGIN SOLUTION
outputs = [online_attention(q, K, V, b) for b in (1, 3, 10)]
### END SOLUTION
full = ac.scaled_dot_product_attention(q[None], K, V)[0][0]   # (d_v,): all m scores at once
print("largest difference from the full softmax:", max(np.abs(o - full).max() for o in outputs))
"""),
             answers=("online_attention", "outputs"), points=4,
             visible=code("""
assert len(outputs) == 3 and all(np.shape(o) == (d_v,) for o in outputs), "three outputs of d_v = 3 numbers"
"""),
             hidden=code("""
_ref = lambda a, B, C: ac.scaled_dot_product_attention(a[None], B, C)[0][0]
assert all(np.allclose(_o, _ref(q, K, V)) for _o in outputs), "not softmax(q K^T / sqrt(d_k)) V for every block size"
_g = np.random.default_rng(31)
_q, _K, _V = _g.normal(size=6), _g.normal(size=(7, 6)), _g.normal(size=(7, 2))
for _b in (2, 3, 7, 100):
    assert np.allclose(online_attention(_q, _K, _V, _b), _ref(_q, _K, _V)), "m = 7 keys: a block size that does not divide m, or one larger than m"
_Kup, _Vup = np.outer(np.arange(1.0, 9.0), np.ones(6)), np.outer(np.arange(8.0), [1.0, -1.0])
assert np.allclose(online_attention(np.ones(6), _Kup, _Vup, 2), _ref(np.ones(6), _Kup, _Vup)), "scores rising from block to block: rescale the old sums by exp(r - r')"
assert np.all(np.isfinite(online_attention(300 * _q, 300 * _K, _V, 3))), "large scores overflow e^x: measure them against the running maximum"
assert np.allclose(online_attention(300 * _q, 300 * _K, _V, 3), _ref(300 * _q, 300 * _K, _V)), "large scores: not the softmax output"
assert np.allclose(online_attention(_q, _K[:1], _V[:1], 4), _V[0]), "one key gets all the weight"
""")),
        Item("nb09_online_invariant", DERIVE,
             "In the online softmax of one query, after the blocks 1..t the state is a running "
             "maximum r_t, a sum l_t and a vector a_t. (a) State the invariant that r_t, l_t and "
             "a_t satisfy in terms of the scores s_j and values v_j seen so far, and prove by "
             "induction that the update r' = max(r, max of the new block), l' = l e^(r - r') + "
             "sum over the new block of e^(s_j - r'), a' = a e^(r - r') + sum of e^(s_j - r') v_j "
             "keeps it. (b) Deduce that a / l after the last block is the attention output, "
             "whatever the block size and the order of the blocks. (c) Tiled attention does "
             "this for every query: what does it save compared with forming the n x m score "
             "matrix, and what does it not save?",
             "(a) Invariant: $r_t = \\max_{j \\le t} s_j$, $l_t = \\sum_{j \\le t} e^{s_j - r_t}$ "
             "and $a_t = \\sum_{j \\le t} e^{s_j - r_t} v_j$ (sums over the keys seen). It holds "
             "for the empty state ($r = -\\infty$, $l = 0$, $a = 0$). If it holds before a block "
             "$B$, then $l e^{r - r'} = \\sum_{old} e^{s_j - r} e^{r - r'} = \\sum_{old} "
             "e^{s_j - r'}$, and adding $\\sum_{j \\in B} e^{s_j - r'}$ gives the sum over all keys "
             "seen against $r' = \\max(r, \\max_B s_j)$, the new maximum; the same for $a$. "
             "(b) After all blocks $a / l = \\sum_j e^{s_j - r} v_j / \\sum_j e^{s_j - r} = "
             "\\sum_j \\mathrm{softmax}(s)_j v_j$ (the factor $e^{-r}$ cancels, as in a shift of "
             "all scores); the sums do not depend on how the keys were grouped or ordered. "
             "(c) It saves memory: at most a block of scores per query block ($b^2$ numbers, or "
             "$b$ per query) instead of $n m$, so the memory grows linearly in $n$. It does not "
             "save arithmetic: every one of the $n m$ scores is still computed once, about "
             "$n m (d_k + d_v)$ multiply-adds, plus the rescaling.",
             rubric=((1, "(a) the invariant stated for r, l and a, and the induction step: "
                         "multiplying by e^(r - r') re-measures the old terms against r'."),
                     (1, "(b) a / l equals the softmax-weighted sum (e^(-r) cancels) for any "
                         "grouping and order of the keys."),
                     (1, "(c) saves memory (a block of scores instead of n x m, linear in n), not "
                         "the n m (d_k + d_v) multiply-adds.")))),
)
