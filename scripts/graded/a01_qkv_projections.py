"""Assignment 01 of the graded track: Q, K, V projections (notebooks/01_qkv_projections.ipynb)."""

from __future__ import annotations

from scripts.graded.items import DERIVE, EXPERIMENT, FILL, Assignment, Item, code

ASSIGNMENT = Assignment(
    "01_qkv_projections", "Q, K, V projections",
    code("""
import numpy as np

import attention_core as ac

rng = np.random.default_rng(2601)
n, d_model, d_k, d_v = 4, 6, 3, 2
X = rng.normal(size=(n, d_model))        # (n, d_model): four tokens
W_Q = rng.normal(size=(d_model, d_k))    # (d_model, d_k)
W_K = rng.normal(size=(d_model, d_k))    # (d_model, d_k)
W_V = rng.normal(size=(d_model, d_v))    # (d_model, d_v)
"""),
    (
        Item("nb01_asymmetry", FILL,
             "With Q = K = X the score matrix is symmetric (notebook 01). With the projections "
             "above, S = (X W_Q)(X W_K)^T is not. Assign to `asymmetry` the largest absolute "
             "entry of S - S^T: one number.",
             code("""
### BEGIN SOLUTION
S = (X @ W_Q) @ (X @ W_K).T    # (n, d_k) @ (d_k, n) -> (n, n)
asymmetry = np.abs(S - S.T).max()
### END SOLUTION
"""),
             answers=("asymmetry",), points=2,
             visible=code("""
assert np.ndim(asymmetry) == 0, "asymmetry is one number, not an array"
assert float(asymmetry) > 0, "with separate W_Q and W_K the scores are not symmetric"
"""),
             hidden=code("""
_S = X @ W_Q @ W_K.T @ X.T
assert np.isclose(float(asymmetry), np.abs(_S - _S.T).max(), rtol=1e-6, atol=0), \\
    "not the largest |S - S^T| of S = (X W_Q)(X W_K)^T"
""")),
        Item("nb01_is_projection", EXPERIMENT,
             "\"Projection\" in Q = X W_Q means a learned linear map, not a projection in the "
             "linear-algebra sense: a square matrix P with P P = P. Write "
             "`is_projection(W, tol=1e-9)`, True exactly when W is such a matrix (up to `tol` "
             "in every entry) and False for a matrix that is not square. Then build "
             "P = W_Q (W_Q^T W_Q)^{-1} W_Q^T, the orthogonal projection onto the columns of "
             "W_Q, as `P_cols`, and run your function on W_Q and on P_cols.",
             code("""
def is_projection(W, tol=1e-9):
    ### BEGIN SOLUTION
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        return False
    return bool(np.all(np.abs(W @ W - W) <= tol))
    ### END SOLUTION


### BEGIN SOLUTION
P_cols = W_Q @ np.linalg.inv(W_Q.T @ W_Q) @ W_Q.T    # (d_model, d_k) ... -> (d_model, d_model)
### END SOLUTION
print("W_Q is a projection:", is_projection(W_Q))
print("P_cols is a projection:", is_projection(P_cols))
"""),
             answers=("is_projection", "P_cols"), points=4,
             visible=code("""
assert is_projection(np.eye(3)), "the identity is a projection"
assert not is_projection(W_Q), "W_Q (6 x 3) is not even square"
assert np.shape(P_cols) == (d_model, d_model), "P_cols is (d_model, d_model)"
"""),
             hidden=code("""
assert is_projection(P_cols), "P_cols should satisfy P P = P"
assert np.allclose(P_cols, W_Q @ np.linalg.pinv(W_Q)), "P_cols is not the projection onto W_Q's columns"
assert not is_projection(2 * np.eye(3)), "2 I is not idempotent"
assert not is_projection(np.ones((2, 3))), "a 2 x 3 matrix is not a projection"
_u = np.array([[1.0], [2.0]])
assert is_projection(_u @ _u.T / 5.0), "u u^T / |u|^2 is a projection"
assert not is_projection(np.eye(4) + 1e-3), "I + 0.001 is close to a projection, but is not one"
assert is_projection(np.zeros((3, 3))), "the zero matrix is a projection"
_r = np.random.default_rng(5)
_B = _r.normal(size=(5, 2))
assert is_projection(_B @ np.linalg.pinv(_B)), "an orthogonal projection of rank 2"
assert not is_projection(_r.normal(size=(5, 5))), "a random square matrix is not a projection"
""")),
        Item("nb01_self_scores", DERIVE,
             "Take Q = K = X, no projections. (a) Show that S = Q K^T is symmetric. (b) Show "
             "that when all tokens have the same length, |x_i| = r, each token's largest score is "
             "the one with itself, and say what that does to its attention weights. (c) Explain "
             "why separate W_Q and W_K remove both effects. Answer in words and formulas "
             "(LaTeX between $ signs works).",
             "(a) $S^T = (X X^T)^T = X X^T = S$: $s_{ij} = x_i \\cdot x_j = s_{ji}$. "
             "(b) By Cauchy-Schwarz $s_{ij} = x_i \\cdot x_j \\le |x_i|\\,|x_j| = r^2 = s_{ii}$, "
             "with equality only for $x_j = x_i$: the diagonal holds each row's maximum, so after "
             "the softmax every token gives itself the largest weight, the more so the larger "
             "$r^2/\\sqrt{d}$. (c) With projections $s_{ij} = x_i W_Q W_K^T x_j^T$; the matrix "
             "$W_Q W_K^T$ is in general neither symmetric nor positive semi-definite, so "
             "$s_{ij} \\ne s_{ji}$ and $s_{ii}$ need not be the row's maximum: what a token looks "
             "for (its query) differs from how it is found (its key).",
             rubric=((1, "(a) S^T = S shown from (X X^T)^T = X X^T, or entry by entry "
                         "(x_i . x_j = x_j . x_i)."),
                     (1, "(b) Cauchy-Schwarz (or the angle) gives s_ij <= r^2 = s_ii, so the "
                         "diagonal is each row's maximum and the softmax puts the most weight "
                         "on the token itself."),
                     (1, "(c) s_ij = x_i W_Q W_K^T x_j^T with W_Q W_K^T not symmetric (and not "
                         "positive semi-definite) in general: neither symmetry nor the largest "
                         "diagonal follows; query and key play different roles.")))),
)
