"""Assignment 02 of the graded track: The worked 3x2 example (notebooks/02_worked_example_3x2.ipynb)."""

from __future__ import annotations

from scripts.graded.items import DERIVE, EXPERIMENT, FILL, Assignment, Item, code

ASSIGNMENT = Assignment(
    "02_worked_example_3x2", "The worked 3x2 example",
    code("""
import numpy as np

import attention_core as ac

# three tokens, as in notebook 02 but other numbers: work them out by hand first
Z = np.array([[1.0, 1.0], [0.0, 2.0], [2.0, 0.0]])   # (n, d_model) = (3, 2)
W_Q = np.array([[1.0, 0.0], [1.0, 1.0]])             # (d_model, d_k)
W_K = np.array([[0.0, 1.0], [1.0, 0.0]])             # (d_model, d_k): swaps the coordinates
W_V = np.array([[1.0, 2.0], [3.0, 0.0]])             # (d_model, d_v)
d_k = 2
"""),
    (
        Item("nb02_third_row", FILL,
             "The attention weights of the THIRD token (row 3 of A, three numbers) as `a_3`, and "
             "its output o_3 (a row of A V) as `o_3`. Four decimals are enough.",
             code("""
### BEGIN SOLUTION
Q, K, V = Z @ W_Q, Z @ W_K, Z @ W_V      # each (3, 2)
s_3 = Q[2] @ K.T / np.sqrt(d_k)          # (d_k,) @ (d_k, m) -> (m,)
a_3 = np.exp(s_3) / np.exp(s_3).sum()    # (m,)
o_3 = a_3 @ V                            # (m,) @ (m, d_v) -> (d_v,)
### END SOLUTION
"""),
             answers=("a_3", "o_3"), points=3,
             visible=code("""
assert np.shape(a_3) == (3,), "a_3 holds one weight per key: three numbers"
assert np.isclose(np.sum(a_3), 1.0, atol=1e-3), "a row of weights sums to 1"
assert np.shape(o_3) == (2,), "o_3 has d_v = 2 numbers"
"""),
             hidden=code("""
_O, _A = ac.scaled_dot_product_attention(Z @ W_Q, Z @ W_K, Z @ W_V)
assert np.allclose(a_3, _A[2], atol=5e-4), "a_3 is not the third row of the weights"
assert np.allclose(o_3, _O[2], atol=1e-3), "o_3 is not the third row of the output"
""")),
        Item("nb02_column_convention", EXPERIMENT,
             "Seed 000 writes attention in the column convention: Q_c is (d_k, n), K_c is "
             "(d_k, m), V_c is (d_v, m), and Attention = V_c softmax(K_c^T Q_c / sqrt(d_k)) with "
             "the softmax down each column. Write `column_attention(Qc, Kc, Vc)` returning the "
             "(d_v, n) output, computed in the column convention itself (do not transpose back "
             "and call the core), and safe for large scores. Run it on the example's Q^T, K^T, "
             "V^T as `O_cols`.",
             code("""
def column_attention(Qc, Kc, Vc):
    ### BEGIN SOLUTION
    S = Kc.T @ Qc / np.sqrt(Qc.shape[0])                   # (m, d_k) @ (d_k, n) -> (m, n)
    S = S - S.max(axis=0, keepdims=True)                   # softmax down each column (over keys)
    A = np.exp(S) / np.exp(S).sum(axis=0, keepdims=True)   # (m, n)
    return Vc @ A                                          # (d_v, m) @ (m, n) -> (d_v, n)
    ### END SOLUTION


### BEGIN SOLUTION
O_cols = column_attention((Z @ W_Q).T, (Z @ W_K).T, (Z @ W_V).T)
### END SOLUTION
print(O_cols)
"""),
             answers=("column_attention", "O_cols"), points=4,
             visible=code("""
assert np.shape(O_cols) == (2, 3), "O_cols is (d_v, n) = (2, 3)"
"""),
             hidden=code("""
assert np.allclose(O_cols, ac.scaled_dot_product_attention(Z @ W_Q, Z @ W_K, Z @ W_V)[0].T), \\
    "O_cols is not the example's output, transposed"
_r = np.random.default_rng(7)
_Qc, _Kc, _Vc = _r.normal(size=(4, 3)), _r.normal(size=(4, 5)), _r.normal(size=(2, 5))
_out = column_attention(_Qc, _Kc, _Vc)
assert np.shape(_out) == (2, 3), "n = 3 queries, m = 5 keys: the output is (d_v, n) = (2, 3)"
assert np.allclose(_out, ac.scaled_dot_product_attention(_Qc.T, _Kc.T, _Vc.T)[0].T), \\
    "not the row convention's output transposed (n != m)"
_big = column_attention(300 * _Qc, 300 * _Kc, _Vc)
assert np.all(np.isfinite(_big)), "large scores overflow e^x: subtract each column's maximum"
""")),
        Item("nb02_shift", DERIVE,
             "(a) Write a_31, the weight the third token gives the first, in closed form as a "
             "ratio of exponentials of the scaled scores (exact numbers, no decimals). "
             "(b) Every score of a row is increased by the same constant c: what happens to its "
             "weights? Prove it. (c) Why does the core subtract each row's maximum before "
             "taking e^x, and why does (b) make that allowed?",
             "(a) $q_3 = (2, 0)$, the keys are $(1, 1), (2, 0), (0, 2)$, so the scores are "
             "$2, 4, 0$ and the scaled ones $\\sqrt 2, 2\\sqrt 2, 0$: "
             "$a_{31} = e^{\\sqrt 2} / (e^{\\sqrt 2} + e^{2\\sqrt 2} + 1)$. "
             "(b) Nothing changes: $e^{s_j + c} / \\sum_k e^{s_k + c} = e^c e^{s_j} / "
             "(e^c \\sum_k e^{s_k})$ and $e^c$ cancels. (c) $e^x$ overflows float64 above about "
             "709 (inf / inf = NaN); after subtracting the maximum every exponent is at most 0 and "
             "the largest term is 1, so nothing overflows and the sum is at least 1; by (b), with "
             "c = -max, the weights are the same.",
             rubric=((1, "(a) scores 2, 4, 0 scaled by 1/sqrt 2, and a_31 = e^(sqrt 2) / "
                         "(e^(sqrt 2) + e^(2 sqrt 2) + 1), exact."),
                     (1, "(b) the weights are unchanged, shown by e^c cancelling."),
                     (1, "(c) overflow of e^x (float64, near 709) is avoided, the largest term "
                         "becomes 1 (no division by 0 or inf), and (b) with c = -max says the "
                         "result is the same.")))),
)
