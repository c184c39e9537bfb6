"""Assignment 05 of the graded track: Multi-head attention (notebooks/05_multi_head_attention.ipynb)."""

from __future__ import annotations

from scripts.graded.items import DERIVE, EXPERIMENT, FILL, Assignment, Item, code

ASSIGNMENT = Assignment(
    "05_multi_head_attention", "Multi-head attention",
    code("""
import numpy as np

import attention_core as ac

rng = np.random.default_rng(2605)
n, d_model, h, d_k, d_v = 5, 8, 4, 3, 2        # d_k and d_v need not be d_model / h
X = rng.normal(size=(n, d_model))               # (n, d_model)
P = ac.init_attention_params(d_model, h, rng, d_k=d_k, d_v=d_v)
# P.W_Q, P.W_K: (d_model, h*d_k); P.W_V: (d_model, h*d_v); P.W_O: (h*d_v, d_model)
"""),
    (
        Item("nb05_param_count", FILL,
             "A multi-head attention layer with d_model = 256 and h = 8 heads whose widths are "
             "NOT d_model / h: d_k = 16 and d_v = 24. Assign to `n_params` the number of "
             "weights in W_Q, W_K, W_V and W_O together (no biases): one whole number.",
             code("""
### BEGIN SOLUTION
n_params = 2 * 256 * (8 * 16) + 256 * (8 * 24) + (8 * 24) * 256   # W_Q, W_K; W_V; W_O
### END SOLUTION
"""),
             answers=("n_params",), points=2,
             visible=code("""
assert float(n_params).is_integer() and n_params > 0, "a count of weights is a positive whole number"
"""),
             hidden=code("""
assert n_params != 4 * 256 ** 2, "that is the count for d_k = d_v = d_model / h"
assert n_params == 2 * 256 * 128 + 2 * 256 * 192, "not the weights of the four matrices"
""")),
        Item("nb05_head_contributions", EXPERIMENT,
             "The output Concat(head_1, ..., head_h) W_O is a SUM over heads: head r only meets "
             "its own block of rows of W_O. Write `head_contributions(X, P, h)` returning an "
             "array of shape (h, n, d_model) whose r-th slice is what head r adds to the output, "
             "head_r W_O^(r), computed head by head from the blocks of the projections. The last lines of the "
             "cell run it and compare the sum of the contributions with the core's output.",
             code("""
def head_contributions(X, P, h):
    ### BEGIN SOLUTION
    d_k, d_v = P.W_Q.shape[1] // h, P.W_V.shape[1] // h
    out = []
    for r in range(h):
        q = X @ P.W_Q[:, r * d_k:(r + 1) * d_k]      # (n, d_model) @ (d_model, d_k) -> (n, d_k)
        k = X @ P.W_K[:, r * d_k:(r + 1) * d_k]      # (n, d_k)
        v = X @ P.W_V[:, r * d_v:(r + 1) * d_v]      # (n, d_v)
        head = ac.scaled_dot_product_attention(q, k, v)[0]   # (n, d_v)
        out.append(head @ P.W_O[r * d_v:(r + 1) * d_v])      # (n, d_v) @ (d_v, d_model) -> (n, d_model)
    return np.stack(out)                              # (h, n, d_model)
    ### END SOLUTION


contributions = head_contributions(X, P, h)
full = ac.multi_head_attention(X, X, P.W_Q, P.W_K, P.W_V, P.W_O, h)[0]   # (n, d_model)
print("largest |sum of contributions - output|:", np.abs(contributions.sum(axis=0) - full).max())
"""),
             answers=("head_contributions", "contributions"), points=4,
             visible=code("""
assert np.shape(contributions) == (h, n, d_model), "one (n, d_model) slice per head"
"""),
             hidden=code("""
_full = ac.multi_head_attention(X, X, P.W_Q, P.W_K, P.W_V, P.W_O, h)[0]
assert np.allclose(contributions.sum(axis=0), _full), "the contributions do not add up to the output"
_r = np.random.default_rng(11)
_P = ac.init_attention_params(6, 3, _r, d_k=5, d_v=4)
_X = _r.normal(size=(7, 6))
_c = head_contributions(_X, _P, 3)
assert np.shape(_c) == (3, 7, 6), "h = 3 heads, n = 7, d_model = 6: (3, 7, 6)"
for _k in range(3):
    _W_O = np.zeros_like(_P.W_O)
    _W_O[_k * 4:(_k + 1) * 4] = _P.W_O[_k * 4:(_k + 1) * 4]   # only head _k reaches the output
    assert np.allclose(_c[_k], ac.multi_head_attention(_X, _X, _P.W_Q, _P.W_K, _P.W_V, _W_O, 3)[0]), \\
        "a slice is not that head's own contribution (d_k = 5, d_v = 4: the blocks of W_V and W_O are 4 wide)"
_one = ac.init_attention_params(6, 1, _r)
assert np.allclose(head_contributions(_X, _one, 1)[0],
                   ac.multi_head_attention(_X, _X, _one.W_Q, _one.W_K, _one.W_V, _one.W_O, 1)[0]), \\
    "one head: its contribution is the whole output"
""")),
        Item("nb05_concat_is_a_sum", DERIVE,
             "(a) Prove that Concat(H_1, ..., H_h) W_O = sum_r H_r W_O^(r), where W_O^(r) is the "
             "r-th block of d_v rows of W_O. (b) Two heads have identical W_Q^(r), W_K^(r) and "
             "W_V^(r). Show that they can be replaced by one head, and say what W_O block that "
             "head needs. (c) With d_k = d_v = d_model / h, how does the number of weights change "
             "when h is doubled, and why?",
             "(a) Entry $(i, j)$ of $C W_O$ with $C = [H_1, \\dots, H_h]$ is "
             "$\\sum_c C_{ic} (W_O)_{cj}$; split the columns $c$ into the $h$ blocks of width "
             "$d_v$: block $r$ of $C$ is $H_r$ and meets only block $r$ of the rows of $W_O$, so the "
             "sum is $\\sum_r (H_r W_O^{(r)})_{ij}$ (block matrix multiplication). (b) Equal "
             "projections give equal heads $H_a = H_b$, so by (a) "
             "$H_a W_O^{(a)} + H_b W_O^{(b)} = H_a (W_O^{(a)} + W_O^{(b)})$: one head with the "
             "sum of the two blocks gives the same output; the second head adds nothing a single "
             "one cannot. (c) It does not change: $W_Q, W_K, W_V$ are $d_{model} \\times h d_k = "
             "d_{model} \\times d_{model}$ and $W_O$ is $h d_v \\times d_{model} = d_{model} "
             "\\times d_{model}$ for every $h$, $4 d_{model}^2$ in all: more heads, each "
             "narrower.",
             rubric=((1, "(a) the columns of Concat split into h blocks that meet only their "
                         "own rows of W_O (block multiplication, or entry by entry)."),
                     (1, "(b) identical projections give identical heads, and by (a) one head "
                         "with W_O^(a) + W_O^(b) replaces both."),
                     (1, "(c) unchanged, 4 d_model^2, because h d_k = h d_v = d_model for every "
                         "h.")))),
)
