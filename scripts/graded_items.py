"""The graded track's items (issue 26): what `python3 dev.py classroom assignments DIR` writes.

One assignment per notebook, each with items of three kinds:

- FILL: a value to compute in one or a few lines, autograded: a visible test (shape, type, a
  property) and hidden tests (the value itself);
- DERIVE: a derivation answered in words and formulas, graded by hand against the rubric the
  item carries (its points are the rubric's);
- EXPERIMENT: write a function, run it, autograded by visible and hidden tests that try it on
  inputs the student does not see (edge cases included).

Every item differs from the notebook's own self-check questions: no worked solution of
checks.QUESTIONS passes its tests (tests/test_no_reveal.py runs each of them against each item),
and its solution and hidden tests appear only in the teacher's source, never in what students
get (tests/test_graded.py searches the released notebooks for each).

This module is under scripts/, which the course's package does not install: a student's
environment (the hub's venv) cannot import it. The repository itself is public, though, and so
are these solutions: a class that needs answers no one can look up changes the items in its
private copy (the generator does not vary them yet).

Each solution cell holds its own `### BEGIN SOLUTION` / `### END SOLUTION` markers, placed where
the student's stub should stand (inside a function's body, the signature stays visible).
"""

from __future__ import annotations

from typing import NamedTuple

FILL, DERIVE, EXPERIMENT = "fill", "derive", "experiment"
KINDS = (FILL, DERIVE, EXPERIMENT)


class Item(NamedTuple):
    name: str               # nbgrader's grade_id of the graded cell, "nbNN_name"
    kind: str               # FILL, DERIVE or EXPERIMENT
    task: str               # markdown: what the student is asked
    solution: str           # the solution cell (code with its markers) or the model answer
    answers: tuple = ()     # autograded: the names the solution defines and the tests read
    visible: str = ""       # autograded: the tests the student sees
    hidden: str = ""        # autograded: the tests only the grading run has
    points: int = 0         # autograded; DERIVE: the sum of its rubric
    rubric: tuple = ()      # DERIVE: (points, criterion) pairs

    @property
    def score(self) -> int:
        return sum(p for p, _ in self.rubric) if self.kind == DERIVE else self.points


class Assignment(NamedTuple):
    name: str       # the assignment's name and its notebook's: the course notebook's stem
    title: str
    setup: str      # the read-only first code cell: imports and the givens
    items: tuple


def _code(text: str) -> str:
    return text.strip("\n")


A01 = Assignment(
    "01_qkv_projections", "Q, K, V projections",
    _code("""
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
             _code("""
### BEGIN SOLUTION
S = (X @ W_Q) @ (X @ W_K).T    # (n, d_k) @ (d_k, n) -> (n, n)
asymmetry = np.abs(S - S.T).max()
### END SOLUTION
"""),
             answers=("asymmetry",), points=2,
             visible=_code("""
assert np.ndim(asymmetry) == 0, "asymmetry is one number, not an array"
assert float(asymmetry) > 0, "with separate W_Q and W_K the scores are not symmetric"
"""),
             hidden=_code("""
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
             _code("""
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
             visible=_code("""
assert is_projection(np.eye(3)), "the identity is a projection"
assert not is_projection(W_Q), "W_Q (6 x 3) is not even square"
assert np.shape(P_cols) == (d_model, d_model), "P_cols is (d_model, d_model)"
"""),
             hidden=_code("""
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

A02 = Assignment(
    "02_worked_example_3x2", "The worked 3x2 example",
    _code("""
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
             _code("""
### BEGIN SOLUTION
Q, K, V = Z @ W_Q, Z @ W_K, Z @ W_V      # each (3, 2)
s_3 = Q[2] @ K.T / np.sqrt(d_k)          # (d_k,) @ (d_k, m) -> (m,)
a_3 = np.exp(s_3) / np.exp(s_3).sum()    # (m,)
o_3 = a_3 @ V                            # (m,) @ (m, d_v) -> (d_v,)
### END SOLUTION
"""),
             answers=("a_3", "o_3"), points=3,
             visible=_code("""
assert np.shape(a_3) == (3,), "a_3 holds one weight per key: three numbers"
assert np.isclose(np.sum(a_3), 1.0, atol=1e-3), "a row of weights sums to 1"
assert np.shape(o_3) == (2,), "o_3 has d_v = 2 numbers"
"""),
             hidden=_code("""
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
             _code("""
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
             visible=_code("""
assert np.shape(O_cols) == (2, 3), "O_cols is (d_v, n) = (2, 3)"
"""),
             hidden=_code("""
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

A03 = Assignment(
    "03_scaling_and_softmax_saturation", "Scaling and softmax saturation",
    _code("""
import numpy as np

import attention_core as ac

D_KS = [1, 4, 16, 64, 256]   # the widths of the experiment
"""),
    (
        Item("nb03_std_qk", FILL,
             "The d_k = 50 components of q are independent with mean 0 and variance 4; those of "
             "k are independent of them and of each other, with mean 0 and variance 1. Assign "
             "to `std_qk` the standard deviation of q . k (one number).",
             _code("""
### BEGIN SOLUTION
std_qk = np.sqrt(50 * 4 * 1)    # Var[q . k] = d_k Var[q_i] Var[k_i]
### END SOLUTION
"""),
             answers=("std_qk",), points=2,
             visible=_code("""
assert np.ndim(std_qk) == 0 and float(std_qk) > 0, "std_qk is one positive number"
"""),
             hidden=_code("""
assert not np.isclose(float(std_qk), 200.0), "that is the variance of q . k, not its standard deviation"
assert np.isclose(float(std_qk), np.sqrt(200.0), atol=1e-3), "not the standard deviation of q . k"
""")),
        Item("nb03_max_weight", EXPERIMENT,
             "Write `mean_max_weight(d_k, scaled, m=10, trials=2000, seed=0)`: draw, with "
             "`np.random.default_rng(seed)`, `trials` queries and m keys per trial with standard "
             "normal components, take the softmax of each query's m scores (divided by "
             "sqrt(d_k) when `scaled`), and return the mean over the trials of the largest "
             "weight. It must stay finite for any d_k. Then compute `curve_raw` and "
             "`curve_scaled`, one value per width of D_KS, and look at them: they are the "
             "numbers behind notebook 03's saturation curve.",
             _code("""
def mean_max_weight(d_k, scaled, m=10, trials=2000, seed=0):
    ### BEGIN SOLUTION
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(trials, 1, d_k))        # (trials, 1, d_k): one query per trial
    k = rng.normal(size=(trials, m, d_k))        # (trials, m, d_k)
    s = (q @ np.swapaxes(k, 1, 2))[:, 0, :]      # (trials, 1, d_k) @ (trials, d_k, m) -> (trials, m)
    if scaled:
        s = s / np.sqrt(d_k)
    return float(ac.softmax(s, axis=-1).max(axis=-1).mean())
    ### END SOLUTION


### BEGIN SOLUTION
curve_raw = [mean_max_weight(d, scaled=False) for d in D_KS]
curve_scaled = [mean_max_weight(d, scaled=True) for d in D_KS]
### END SOLUTION
print("raw:   ", np.round(curve_raw, 3))
print("scaled:", np.round(curve_scaled, 3))
"""),
             answers=("mean_max_weight", "curve_raw", "curve_scaled"), points=4,
             visible=_code("""
assert len(curve_raw) == len(D_KS) and len(curve_scaled) == len(D_KS), "one value per d_k"
assert all(0.1 - 1e-9 <= w <= 1 + 1e-9 for w in curve_raw + curve_scaled), \\
    "a largest weight of m = 10 keys lies between 1/10 and 1"
"""),
             hidden=_code("""
assert np.all(np.diff(curve_raw) > 0), "unscaled, the largest weight grows with d_k"
assert curve_raw[-1] > 0.9, "unscaled, d_k = 256 is nearly one-hot"
assert all(abs(w - 0.32) < 0.02 for w in curve_scaled[2:]), \\
    "scaled, from d_k = 16 on the curve should stay flat at the level a correct experiment gives"
assert mean_max_weight(8, True, m=1, trials=5) == 1.0, "one key gets all the weight"
assert np.isfinite(mean_max_weight(250_000, False, m=3, trials=20)), \\
    "scores of size 500 overflow e^x: use a stable softmax"
assert abs(mean_max_weight(16, True, m=4, trials=4000, seed=3) - 0.51) < 0.03, \\
    "m = 4 keys, seed 3: not the mean largest weight a correct experiment gives"
""")),
        Item("nb03_variance", DERIVE,
             "The components of q and of k are independent, each with mean 0 and variance "
             "sigma^2. Derive E[q . k] and Var[q . k] step by step, saying where independence is "
             "used, and give the number the scores must be divided by to have variance 1.",
             "$E[q \\cdot k] = \\sum_i E[q_i k_i] = \\sum_i E[q_i] E[k_i] = 0$ (independence of "
             "$q_i$ and $k_i$). The terms $q_i k_i$ are independent of each other, so "
             "$\\mathrm{Var}[q \\cdot k] = \\sum_i \\mathrm{Var}[q_i k_i]$; each is "
             "$E[q_i^2 k_i^2] - E[q_i k_i]^2 = E[q_i^2] E[k_i^2] = \\sigma^4$, so "
             "$\\mathrm{Var}[q \\cdot k] = d_k \\sigma^4$. Dividing by $\\sigma^2 \\sqrt{d_k}$ "
             "gives variance 1; with $\\sigma = 1$ that is the paper's $\\sqrt{d_k}$.",
             rubric=((1, "E[q . k] = 0, from E[q_i k_i] = E[q_i] E[k_i] (independence)."),
                     (1, "The variance of the sum is the sum of the variances because the terms "
                         "are independent (no covariances), said explicitly."),
                     (1, "Var[q_i k_i] = E[q_i^2] E[k_i^2] = sigma^4, so Var[q . k] = "
                         "d_k sigma^4."),
                     (1, "Divide by sigma^2 sqrt(d_k) (sqrt(d_k) when sigma = 1).")))),
)

A04 = Assignment(
    "04_masking", "Masking",
    _code("""
import numpy as np

import attention_core as ac


def correct(X):
    \"\"\"Causal self-attention of X (n, d) with itself as queries, keys and values.\"\"\"
    return ac.scaled_dot_product_attention(X, X, X, ac.causal_mask(X.shape[0]))[0]


def no_mask(X):
    \"\"\"The same without a mask.\"\"\"
    return ac.scaled_dot_product_attention(X, X, X)[0]


def masked_after_softmax(X):
    \"\"\"A classic bug: the future weights set to 0 after the softmax, without renormalising.\"\"\"
    A = ac.softmax(X @ X.T / np.sqrt(X.shape[1]), axis=-1)   # (n, n)
    return np.tril(A) @ X                                    # (n, n) @ (n, d) -> (n, d)


ATTENDS = {"correct": correct, "no_mask": no_mask, "masked_after_softmax": masked_after_softmax}
"""),
    (
        Item("nb04_batch_mask", FILL,
             "A batch of three sequences of lengths 3, 1 and 2, padded to n = 3. Assign to "
             "`M_batch` the additive mask of shape (batch, n, n) = (3, 3, 3) that is causal AND "
             "hides each item's padded keys: 0 where a query may attend, -inf where not.",
             _code("""
### BEGIN SOLUTION
M_batch = ac.causal_mask(3) + ac.padding_mask([3, 1, 2], m=3)   # (3, 3) + (3, 1, 3) -> (3, 3, 3)
### END SOLUTION
"""),
             answers=("M_batch",), points=3,
             visible=_code("""
assert np.shape(M_batch) == (3, 3, 3), "one (n, n) mask per item: (3, 3, 3)"
assert set(np.unique(M_batch)) <= {0.0, -np.inf}, "an additive mask holds only 0 and -inf"
"""),
             hidden=_code("""
_M = np.where(np.triu(np.ones((3, 3)), 1) > 0, -np.inf, 0.0)[None] + np.where(
    np.arange(3)[None, None, :] >= np.array([3, 1, 2])[:, None, None], -np.inf, 0.0)
assert np.array_equal(np.triu(M_batch[0], 1) == -np.inf, np.triu(np.ones((3, 3)), 1) > 0), \\
    "item 0 (nothing padded): the causal mask"
assert np.array_equal(M_batch, _M), "not causal and padding together"
""")),
        Item("nb04_leaks", EXPERIMENT,
             "Write `leaks(attend, n=6, d=3, seed=0)`: True when the output of `attend` at some "
             "position t changes when a token AFTER t changes, False otherwise. `attend` takes X "
             "of shape (n, d) and returns one output row per position. Any change at all counts. "
             "The last lines of the cell run it on every function of ATTENDS.",
             _code("""
def leaks(attend, n=6, d=3, seed=0):
    ### BEGIN SOLUTION
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))                  # (n, d)
    before = attend(X)                           # (n, d_v)
    for t in range(n - 1):                       # change every token after position t
        Y = X.copy()
        Y[t + 1:] = rng.normal(size=(n - t - 1, d))
        if not np.array_equal(attend(Y)[: t + 1], before[: t + 1]):
            return True
    return False
    ### END SOLUTION


found = {name: leaks(f) for name, f in ATTENDS.items()}
print(found)
"""),
             answers=("leaks", "found"), points=4,
             visible=_code("""
assert set(found) == set(ATTENDS), "one verdict per function of ATTENDS"
assert found["no_mask"], "without a mask the future leaks in"
"""),
             hidden=_code("""
assert found == {"correct": False, "no_mask": True, "masked_after_softmax": True}, \\
    "not every function of ATTENDS got the right verdict"
def _second_into_first(X):   # a leak from token 1 into position 0 only
    out = correct(X).copy()
    out[0] += 1e-4 * X[1]
    return out
assert leaks(_second_into_first), "a leak from position 1 into position 0 is a leak"
def _next_token(X):          # each position sees the next token a little
    out = correct(X).copy()
    out[:-1] += 1e-4 * X[1:]
    return out
assert leaks(_next_token), "a small leak from the next token is a leak"
assert not leaks(lambda X: np.cumsum(X, axis=0)), "a running sum uses only the past"
assert leaks(lambda X: np.cumsum(X[::-1], axis=0)[::-1]), "a reversed running sum sees the future"
assert not leaks(correct, n=2, d=1, seed=4), "two positions, the correct mask"
""")),
        Item("nb04_fully_masked", DERIVE,
             "(a) What does the softmax of a row whose every entry is -inf give, and why "
             "(compute e^x / sum e^x)? (b) With -1e9 in place of -inf, what does a fully masked "
             "row give instead, and why is that worse for finding the bug? (c) Name one way a "
             "fully masked row arises in practice, and what a correct implementation should do "
             "about it.",
             "(a) Every $e^{-\\infty} = 0$, so the row is $0/0$ = NaN in every entry (and with "
             "the maximum subtracted first, $-\\infty - (-\\infty)$ is already NaN); the NaN "
             "spreads through $A V$ into every later layer. (b) $-10^9$ is finite: after "
             "subtracting the row's maximum every entry is $e^0 = 1$, so the weights are the "
             "uniform $1/m$, an average over keys the query should not see: wrong numbers and no "
             "error, silently. (c) For example a padded QUERY position whose keys are all "
             "padding, or a window or causal mask whose offset is wrong for a cached step; the "
             "implementation should refuse it with a clear error naming the row (as the core "
             "does), or make sure each row keeps at least one key and ignore the outputs of "
             "padded positions.",
             rubric=((1, "(a) e^(-inf) = 0 everywhere gives 0/0 = NaN for the whole row, and "
                         "the NaN propagates through the output."),
                     (1, "(b) -1e9 gives uniform weights 1/m over forbidden keys: finite, wrong, "
                         "and silent."),
                     (1, "(c) a plausible cause (padded query rows, a wrong offset of a "
                         "causal/window mask) and a remedy (a clear error, or at least one key "
                         "per row with padded outputs ignored).")))),
)

A05 = Assignment(
    "05_multi_head_attention", "Multi-head attention",
    _code("""
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
             _code("""
### BEGIN SOLUTION
n_params = 2 * 256 * (8 * 16) + 256 * (8 * 24) + (8 * 24) * 256   # W_Q, W_K; W_V; W_O
### END SOLUTION
"""),
             answers=("n_params",), points=2,
             visible=_code("""
assert float(n_params).is_integer() and n_params > 0, "a count of weights is a positive whole number"
"""),
             hidden=_code("""
assert n_params != 4 * 256 ** 2, "that is the count for d_k = d_v = d_model / h"
assert n_params == 2 * 256 * 128 + 2 * 256 * 192, "not the weights of the four matrices"
""")),
        Item("nb05_head_contributions", EXPERIMENT,
             "The output Concat(head_1, ..., head_h) W_O is a SUM over heads: head r only meets "
             "its own block of rows of W_O. Write `head_contributions(X, P, h)` returning an "
             "array of shape (h, n, d_model) whose r-th slice is what head r adds to the output, "
             "head_r W_O^(r), computed head by head from the blocks of the projections. The last lines of the "
             "cell run it and compare the sum of the contributions with the core's output.",
             _code("""
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
             visible=_code("""
assert np.shape(contributions) == (h, n, d_model), "one (n, d_model) slice per head"
"""),
             hidden=_code("""
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


A06 = Assignment(
    "06_positional_encoding", "Positional encoding",
    _code("""
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
             _code("""
### BEGIN SOLUTION
omega = 1.0 / 10000.0 ** (np.arange(0, d_model, 2) / d_model)   # (d_model/2,): one frequency per pair
dot_7 = np.sum(np.cos(7 * omega))            # sin a sin b + cos a cos b = cos(a - b), pair by pair
longest_wavelength = 2 * np.pi / omega.min()  # the last pair, i = d_model/2 - 1
### END SOLUTION
"""),
             answers=("dot_7", "longest_wavelength"), points=3,
             visible=_code("""
assert np.ndim(dot_7) == 0 and np.ndim(longest_wavelength) == 0, "two numbers, not arrays"
assert abs(float(dot_7)) <= d_model / 2, "a dot product of two rows of PE lies between -d_model/2 and d_model/2"
"""),
             hidden=_code("""
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
             _code("""
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
             visible=_code("""
assert decode_position(PE[3], 1000) == 3, "an exact row of PE gives its own position"
assert len(wrong_rate) == len(SIGMAS) and all(0 <= r <= 1 for r in wrong_rate), "one fraction per sigma"
"""),
             hidden=_code("""
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

A07 = Assignment(
    "07_feed_forward_network", "The position-wise feed-forward network",
    _code("""
import numpy as np

import attention_core as ac

rng = np.random.default_rng(2607)
d_model = 4
X = rng.normal(size=(5, d_model))   # (n, d_model): five positions


def random_ffn(d_ff):
    \"\"\"An FFN with random weights AND biases (init_ffn_params would set the biases to 0).\"\"\"
    return ac.FFNParams(W_1=rng.normal(size=(d_model, d_ff)), b_1=rng.normal(size=d_ff),
                        W_2=rng.normal(size=(d_ff, d_model)), b_2=rng.normal(size=d_model))


ffn_a, ffn_b = random_ffn(3), random_ffn(5)   # call them as ffn_a(X): ac.feed_forward with their arrays
"""),
    (
        Item("nb07_merged_ffn", FILL,
             "Two FFNs side by side, their outputs added: ffn_a(X) + ffn_b(X), with d_ff = 3 and "
             "5. One FFN with d_ff = 8 computes exactly the same for every input. Assign to "
             "`merged` the tuple (W_1, b_1, W_2, b_2) of that FFN, such that "
             "ac.feed_forward(X, *merged) equals ffn_a(X) + ffn_b(X) for every X.",
             _code("""
### BEGIN SOLUTION
merged = (np.concatenate([ffn_a.W_1, ffn_b.W_1], axis=1),   # (d_model, 3 + 5): both hidden layers
          np.concatenate([ffn_a.b_1, ffn_b.b_1]),           # (8,)
          np.concatenate([ffn_a.W_2, ffn_b.W_2], axis=0),   # (8, d_model): each unit's own row
          ffn_a.b_2 + ffn_b.b_2)                            # (d_model,): both output biases, once each
### END SOLUTION
"""),
             answers=("merged",), points=3,
             visible=_code("""
assert len(merged) == 4, "merged is the tuple (W_1, b_1, W_2, b_2)"
assert [np.shape(a) for a in merged] == [(4, 8), (8,), (8, 4), (4,)], "the shapes of an FFN with d_model = 4, d_ff = 8"
"""),
             hidden=_code("""
_target = lambda Z: ffn_a(Z) + ffn_b(Z)
assert np.allclose(ac.feed_forward(X, *merged), _target(X)), "ac.feed_forward(X, *merged) is not ffn_a(X) + ffn_b(X)"
assert not np.allclose(merged[3], ffn_a.b_2) and not np.allclose(merged[3], ffn_b.b_2), "each FFN adds its own b_2: the merged output bias keeps both"
_Z = 4 * np.random.default_rng(17).normal(size=(200, 4))
assert np.allclose(ac.feed_forward(_Z, *merged), _target(_Z)), "equal on X but not on other inputs: it must hold for every input"
""")),
        Item("nb07_local_affine", EXPERIMENT,
             "Near a point x the FFN is affine: every y whose hidden units are on and off as at "
             "x gives FFN(y) = y A + c (row vectors). Write `local_affine(x, W_1, b_1, W_2, b_2)` "
             "returning (A, c) for the region of x, A of shape (d_model, d_model) and c of shape "
             "(d_model,); a unit whose pre-activation is exactly 0 counts as off (ReLU'(0) = 0, "
             "as in PyTorch). Run it on the first row of X with ffn_b as `A_0, c_0`, and compare "
             "FFN(y) with y A_0 + c_0 for a y close to X[0] and one far from it.",
             _code("""
def local_affine(x, W_1, b_1, W_2, b_2):
    ### BEGIN SOLUTION
    on = (np.asarray(x, dtype=float) @ W_1 + b_1 > 0).astype(float)   # (d_ff,): 1 where active
    A = (W_1 * on) @ W_2              # (d_model, d_ff) @ (d_ff, d_model) -> (d_model, d_model)
    c = (b_1 * on) @ W_2 + b_2        # (d_ff,) @ (d_ff, d_model) -> (d_model,)
    return A, c
    ### END SOLUTION


### BEGIN SOLUTION
A_0, c_0 = local_affine(X[0], ffn_b.W_1, ffn_b.b_1, ffn_b.W_2, ffn_b.b_2)
### END SOLUTION
near, far = X[0] + 1e-3, X[0] + 5.0   # (d_model,) each
print("near:", np.abs(ffn_b(near[None])[0] - (near @ A_0 + c_0)).max())
print("far: ", np.abs(ffn_b(far[None])[0] - (far @ A_0 + c_0)).max())
"""),
             answers=("local_affine", "A_0", "c_0"), points=4,
             visible=_code("""
assert np.shape(A_0) == (d_model, d_model) and np.shape(c_0) == (d_model,), "A is (d_model, d_model), c is (d_model,)"
"""),
             hidden=_code("""
_f = ffn_b
_J = np.stack([(_f((X[0] + _e)[None]) - _f((X[0] - _e)[None]))[0] / 2e-6 for _e in 1e-6 * np.eye(4)])
assert np.allclose(A_0, _J, atol=1e-6), "A_0 is not the FFN's derivative at X[0] (rows: input features, columns: outputs)"
assert np.allclose(X[0] @ A_0 + c_0, _f(X[:1])[0]), "FFN(X[0]) is not X[0] A_0 + c_0"
_g = np.random.default_rng(23)
_W1, _b1, _W2, _b2 = _g.normal(size=(3, 6)), _g.normal(size=6), _g.normal(size=(6, 3)), _g.normal(size=3)
for _x in _g.normal(size=(5, 3)):
    _A, _c = local_affine(_x, _W1, _b1, _W2, _b2)
    _y = _x + 1e-4 * _g.normal(size=3)
    assert np.allclose(_y @ _A + _c, ac.feed_forward(_y[None], _W1, _b1, _W2, _b2)[0]), "d_model = 3, d_ff = 6: FFN(y) is not y A + c near x"
_A, _c = local_affine(np.zeros(2), np.eye(2, 3), np.array([0.0, 1.0, -1.0]), np.ones((3, 2)), np.zeros(2))
assert np.allclose(_A, [[0.0, 0.0], [1.0, 1.0]]) and np.allclose(_c, [1.0, 1.0]), "a unit whose pre-activation is exactly 0 is off"
_A, _c = local_affine([2.0], np.array([[1.0, -1.0]]), np.zeros(2), np.array([[3.0], [5.0]]), np.array([0.5]))
assert np.allclose(_A, [[3.0]]) and np.allclose(_c, [0.5]), "d_model = 1, x given as a list: one unit on, one off"
""")),
        Item("nb07_what_relu_does", DERIVE,
             "(a) Take b_1 = 0 and b_2 = 0. Show that FFN(c x) = c FFN(x) for every c >= 0, "
             "and give an FFN (d_model = 1, d_ff = 2, numbers) and an x for which it fails at "
             "c = -1. (b) An attention output row is a weighted average of the value rows, so it "
             "lies in their convex hull. Show that an FFN does not map averages to averages: "
             "give inputs x_1, x_2 and an FFN (numbers) with FFN((x_1 + x_2)/2) != "
             "(FFN(x_1) + FFN(x_2))/2. (c) For a permutation matrix P, show FFN(P X) = P FFN(X), "
             "and say what in the Transformer must therefore carry the order of the tokens.",
             "(a) $\\max(0, c z) = c \\max(0, z)$ for $c \\ge 0$ (both sides are 0 when "
             "$z \\le 0$, and $cz$ when $z > 0$), so $FFN(cx) = \\max(0, c x W_1) W_2 = "
             "c \\max(0, x W_1) W_2 = c FFN(x)$. Counterexample: $W_1 = (1, -1)$, $W_2 = (1, 1)^T$ "
             "gives $FFN(x) = |x|$, and $FFN(-1 \\cdot 1) = 1 \\ne -FFN(1) = -1$. "
             "(b) The same $|x|$: $x_1 = -1$, $x_2 = 1$ give $FFN(0) = 0$ but "
             "$(FFN(-1) + FFN(1))/2 = 1$; the ReLU bends, so the output can leave the convex hull "
             "of what attention produced. (c) Row $i$ of $FFN(X)$ is $\\max(0, x_i W_1 + b_1) W_2 + "
             "b_2$, computed from row $i$ alone with the same weights; $P X$ reorders the rows, so "
             "its FFN is the same rows reordered, $P\\,FFN(X)$. The FFN (like attention without "
             "positions) cannot see the order: the positional encoding added to the input must "
             "carry it.",
             rubric=((1, "(a) max(0, cz) = c max(0, z) for c >= 0 gives homogeneity, and a "
                         "correct counterexample for c = -1 (for example |x|)."),
                     (1, "(b) a correct numerical example where the FFN of the mean is not the "
                         "mean of the FFN values."),
                     (1, "(c) row by row with shared weights gives FFN(P X) = P FFN(X); the order "
                         "must come from the positional encoding.")))),
)

A08 = Assignment(
    "08_transformer_block", "The Transformer block",
    _code("""
import numpy as np

import attention_core as ac

rng = np.random.default_rng(2608)
n, d_model, h, d_ff = 5, 8, 2, 16
X = rng.normal(size=(n, d_model))                     # (n, d_model)
layer = ac.init_encoder_layer(d_model, h, d_ff, rng)   # .self_attn, .norm1, .ffn, .norm2
# layer.self_attn: .W_Q, .W_K, .W_V, .W_O, .num_heads; layer.ffn: .W_1, .b_1, .W_2, .b_2;
# layer.norm1, layer.norm2: .gamma, .beta
"""),
    (
        Item("nb08_decoder_params", FILL,
             "One decoder layer as `ac.init_decoder_layer(96, 6, 384, rng)` builds it: "
             "d_model = 96, h = 6 heads, d_ff = 384, attention without biases, the FFN with its "
             "biases, and every layer norm with its gain and bias. Assign to `n_decoder_params` "
             "the number of its parameters: one whole number. Count it first, then check with "
             "the arrays of the layer if you like.",
             _code("""
### BEGIN SOLUTION
attention_weights_count = 4 * 96 * 96                 # W_Q, W_K, W_V, W_O: h d_k = h d_v = d_model
ffn_count = 2 * 96 * 384 + 384 + 96                   # W_1, W_2, b_1, b_2
n_decoder_params = 2 * attention_weights_count + ffn_count + 3 * 2 * 96   # self + cross, FFN, 3 norms
### END SOLUTION
"""),
             answers=("n_decoder_params",), points=2,
             visible=_code("""
assert float(n_decoder_params).is_integer() and n_decoder_params > 0, "a count of parameters is a positive whole number"
"""),
             hidden=_code("""
_p = ac.init_decoder_layer(96, 6, 384, np.random.default_rng(0))
_sizes = [a.size for part in vars(_p).values() for a in vars(part).values() if isinstance(a, np.ndarray)]
assert n_decoder_params != sum(_sizes) - 576, "the three layer norms have a gain and a bias each"
assert n_decoder_params != sum(_sizes) - 4 * 96 ** 2, "a decoder layer has two attentions: masked self-attention and cross-attention"
assert n_decoder_params == sum(_sizes), "not the number of parameters of one decoder layer"
""")),
        Item("nb08_encoder_by_hand", EXPERIMENT,
             "Write `encoder_layer_parts(X, params, mask=None)` returning (H, Y), the two halves "
             "of the post-norm encoder layer: H = LN_1(X + MHA(X, X)) and Y = LN_2(H + FFN(H)), "
             "built from ac.multi_head_attention, ac.feed_forward and ac.layer_norm with the "
             "arrays of `params` (not by calling ac.encoder_layer or the parts of params "
             "directly). X may carry a batch axis in front. Run it on X and `layer` with the "
             "causal mask as `H_c, Y_c`, and look at the mean and standard deviation of each row "
             "of Y_c: why are they what they are?",
             _code("""
def encoder_layer_parts(X, params, mask=None):
    ### BEGIN SOLUTION
    sa, f, n1, n2 = params.self_attn, params.ffn, params.norm1, params.norm2
    mixed = ac.multi_head_attention(X, X, sa.W_Q, sa.W_K, sa.W_V, sa.W_O, sa.num_heads, mask)[0]
    H = ac.layer_norm(X + mixed, n1.gamma, n1.beta)            # (..., n, d_model)
    bent = ac.feed_forward(H, f.W_1, f.b_1, f.W_2, f.b_2)      # (..., n, d_model)
    return H, ac.layer_norm(H + bent, n2.gamma, n2.beta)       # (..., n, d_model) each
    ### END SOLUTION


### BEGIN SOLUTION
H_c, Y_c = encoder_layer_parts(X, layer, ac.causal_mask(n))
### END SOLUTION
print("row means:", np.round(Y_c.mean(axis=-1), 6))
print("row stds: ", np.round(Y_c.std(axis=-1), 6))
"""),
             answers=("encoder_layer_parts", "H_c", "Y_c"), points=4,
             visible=_code("""
assert np.shape(H_c) == (n, d_model) and np.shape(Y_c) == (n, d_model), "H and Y are (n, d_model)"
"""),
             hidden=_code("""
assert np.allclose(Y_c, ac.encoder_layer(X, layer, ac.causal_mask(n))), "Y_c is not the encoder layer's output with the causal mask"
assert np.allclose(H_c, layer.norm1(X + layer.self_attn(X, X, ac.causal_mask(n))[0])), "H_c is not LN_1(X + MHA(X, X))"
_g = np.random.default_rng(29)
_l = ac.init_encoder_layer(6, 3, 10, _g)
_l = ac.EncoderLayerParams(self_attn=_l.self_attn, ffn=_l.ffn,
                           norm1=ac.LayerNormParams(_g.normal(size=6), _g.normal(size=6)),
                           norm2=ac.LayerNormParams(_g.normal(size=6), _g.normal(size=6)))
_X = _g.normal(size=(2, 4, 6))
_H, _Y = encoder_layer_parts(_X, _l)
assert np.shape(_Y) == (2, 4, 6), "a batch of two sequences: (2, n, d_model)"
assert np.allclose(_Y, ac.encoder_layer(_X, _l)), "with other gains and biases (norm1 and norm2 differ) the output is wrong"
assert np.allclose(_H, _l.norm1(_X + _l.self_attn(_X, _X)[0])), "H is not LN_1(X + MHA(X, X)) for gains and biases of the layer"
_M = ac.padding_mask([4, 2], m=4)
assert np.allclose(encoder_layer_parts(_X, _l, _M)[1], ac.encoder_layer(_X, _l, _M)), "a padding mask must reach the attention"
""")),
        Item("nb08_layer_norm_invariance", DERIVE,
             "Take gamma = 1 and beta = 0, and write LN(x) = (x - mu) / sqrt(sigma^2 + eps) for "
             "a row x of d_model numbers with mean mu and (biased) variance sigma^2. (a) Show that "
             "LN(x) has mean 0 and variance sigma^2 / (sigma^2 + eps). (b) Show that "
             "LN(a x + b) = LN(x) for every number a > 0 and every number b added to all "
             "entries, when eps = 0; what happens for a < 0? (c) Use (b) to explain why the rows "
             "of a post-norm layer's output cannot grow from layer to layer, and what is "
             "different in the residual stream of a pre-norm layer.",
             "(a) $\\frac{1}{d}\\sum_j (x_j - \\mu) = \\mu - \\mu = 0$, so the mean of LN(x) is 0; "
             "its variance is $\\frac{1}{d}\\sum_j (x_j - \\mu)^2 / (\\sigma^2 + \\epsilon) = "
             "\\sigma^2 / (\\sigma^2 + \\epsilon)$, just below 1. (b) $a x + b$ has mean "
             "$a \\mu + b$ and variance $a^2 \\sigma^2$, so $LN(a x + b) = (a x + b - a\\mu - b) / "
             "\\sqrt{a^2 \\sigma^2} = a (x - \\mu) / (|a| \\sigma)$: that is $LN(x)$ for "
             "$a > 0$ and $-LN(x)$ for $a < 0$. (c) Every post-norm sublayer ends in a layer "
             "norm, so each output row is gamma times a row of mean 0 and variance about 1 (norm "
             "about $\\sqrt{d_{model}}$), plus beta, whatever the size of its input: nothing "
             "accumulates across layers. In pre-norm, $x + F(LN(x))$ adds each sublayer's output "
             "to an un-normalised stream, so its norm can grow with depth (only a final layer "
             "norm rescales it).",
             rubric=((1, "(a) the mean is 0 and the variance sigma^2 / (sigma^2 + eps), shown "
                         "from the definitions."),
                     (1, "(b) mean a mu + b and variance a^2 sigma^2 give LN(ax + b) = "
                         "sign(a) LN(x)."),
                     (1, "(c) post-norm: every output row is re-normalised (norm about "
                         "sqrt(d_model)), so nothing grows; pre-norm adds to an un-normalised "
                         "residual stream that can grow with depth.")))),
)

A09 = Assignment(
    "09_cost_of_attention", "The cost of attention",
    _code("""
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
             _code("""
### BEGIN SOLUTION
budget = 24 * 2**30                     # bytes: a GiB is 2^30 bytes
n_max = int(np.sqrt(budget / (16 * 2)))  # h n^2 entries of 2 bytes <= budget; round down
### END SOLUTION
"""),
             answers=("n_max",), points=2,
             visible=_code("""
assert float(n_max).is_integer() and n_max > 0, "n_max is a positive whole number"
"""),
             hidden=_code("""
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
             _code("""
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
             visible=_code("""
assert len(outputs) == 3 and all(np.shape(o) == (d_v,) for o in outputs), "three outputs of d_v = 3 numbers"
"""),
             hidden=_code("""
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

A10 = Assignment(
    "10_learning_to_attend", "Learning to attend",
    _code("""
import numpy as np

import attention_core as ac
import attention_learning as al

rng = np.random.default_rng(2610)
n, m, d_k, d_v = 3, 4, 5, 2
Q = rng.normal(size=(n, d_k))   # (n, d_k)
K = rng.normal(size=(m, d_k))   # (m, d_k)
V = rng.normal(size=(m, d_v))   # (m, d_v)
G = rng.normal(size=(n, d_v))   # (n, d_v): dL/dO, the upstream gradient


def loss(Q, K, V):
    \"\"\"L = sum(G * O) for O = Attention(Q, K, V): its gradient with respect to O is G.\"\"\"
    return np.sum(G * ac.scaled_dot_product_attention(Q, K, V)[0])


A = ac.attention_weights(Q, K)   # (n, m)
CANDIDATES = {  # three formulas for dL/dV, each (m, d_v): which one is right?
    "A^T G": A.T @ G,                                                 # (m, n) @ (n, d_v) -> (m, d_v)
    "A^T G / sqrt(d_k)": A.T @ G / np.sqrt(d_k),
    "softmax down the columns": ac.softmax(Q @ K.T / np.sqrt(d_k), axis=0).T @ G,
}
"""),
    (
        Item("nb10_scale_gradient", FILL,
             "Write the scores as S = c Q K^T with c = 1/sqrt(d_k), as the forward pass uses it. "
             "Assign to `dL_dc` the derivative of the loss L above with respect to the number c, "
             "at c = 1/sqrt(d_k): one number. (It tells whether a slightly sharper or flatter "
             "softmax would lower the loss; notebook 10's last section trains with and without "
             "the scale.)",
             _code("""
### BEGIN SOLUTION
dS = al.attention_backward(Q, K, V, G, return_dscores=True)[3]   # (n, m): dL/dS at the softmax input
dL_dc = np.sum(dS * (Q @ K.T))   # S = c (Q K^T) is linear in c: (n, d_k) @ (d_k, m) -> (n, m)
### END SOLUTION
"""),
             answers=("dL_dc",), points=3,
             visible=_code("""
assert np.ndim(dL_dc) == 0, "dL_dc is one number"
"""),
             hidden=_code("""
_L = lambda c: np.sum(G * (ac.softmax(c * (Q @ K.T)) @ V))
_fd = (_L(5 ** -0.5 + 1e-6) - _L(5 ** -0.5 - 1e-6)) / 2e-6
assert not np.isclose(float(dL_dc), _fd / np.sqrt(5), rtol=1e-4), "sum(dS * S) is c dL/dc: S = c Q K^T, so dS/dc is Q K^T, not S"
assert not np.isclose(float(dL_dc), -_fd, rtol=1e-4), "the sign is wrong"
assert np.isclose(float(dL_dc), _fd, rtol=1e-5, atol=1e-8), "not dL/dc at c = 1/sqrt(d_k)"
""")),
        Item("nb10_grad_check", EXPERIMENT,
             "Write `grad_check(f, x, grad, eps=1e-6)`: f maps a float array x (any shape, a "
             "0-d array too) to a number, and `grad` claims to be df/dx. Compute the centred "
             "finite difference (f(x + eps e_i) - f(x - eps e_i)) / (2 eps) for every entry i, "
             "and return max_i |numeric_i - grad_i| divided by the largest of max |numeric|, "
             "max |grad| and 1e-12, as a float. x must be the same after the call. Then run it "
             "on the three CANDIDATES for dL/dV as `errors` (a dict: name -> error), and put the "
             "name of the right formula in `right_formula`.",
             _code("""
def grad_check(f, x, grad, eps=1e-6):
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    numeric = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        step = np.zeros(x.shape)
        step[idx] = eps
        numeric[idx] = (f(x + step) - f(x - step)) / (2 * eps)   # centred difference
    largest = max(np.abs(numeric).max(), np.abs(grad).max(), 1e-12)
    return float(np.abs(numeric - grad).max() / largest)
    ### END SOLUTION


### BEGIN SOLUTION
errors = {name: grad_check(lambda V_: loss(Q, K, V_), V, g) for name, g in CANDIDATES.items()}
right_formula = min(errors, key=errors.get)
### END SOLUTION
for name, err in errors.items():
    print(f"{name:>26}: {err:.2e}")
"""),
             answers=("grad_check", "errors", "right_formula"), points=4,
             visible=_code("""
assert set(errors) == set(CANDIDATES), "one error per candidate"
assert right_formula in CANDIDATES, "right_formula is one of the names of CANDIDATES"
"""),
             hidden=_code("""
_AG = ac.attention_weights(Q, K).T @ G
_Bc = ac.softmax(Q @ K.T / np.sqrt(d_k), axis=0).T @ G
assert right_formula == "A^T G", "the right formula is the one whose error is tiny"
assert errors["A^T G"] < 1e-8, "L is linear in V: the right formula's error is round-off"
assert abs(errors["A^T G / sqrt(d_k)"] - (1 - 5 ** -0.5)) < 1e-6, "not the error this definition gives for a gradient 1/sqrt(d_k) too small"
assert abs(errors["softmax down the columns"] - np.abs(_AG - _Bc).max() / max(np.abs(_AG).max(), np.abs(_Bc).max())) < 1e-6, "not the error of the column softmax"
_a = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]])
assert grad_check(lambda z: np.sum(_a * z), np.ones((2, 3)), _a) < 1e-8, "a linear function and its exact gradient: the error is round-off"
assert abs(grad_check(lambda z: np.sum(_a * z), np.ones((2, 3)), 2 * _a) - 0.5) < 1e-6, "a gradient twice too large has the error 1/2 by this definition"
_x = np.array([1.0, 2.0])
assert grad_check(lambda z: np.sum(z ** 3), _x, 3 * _x ** 2) < 1e-8, "f = sum x^3: a forward difference is not accurate enough, use the centred one"
assert abs(grad_check(lambda z: np.sum(z ** 3), _x, 3 * _x ** 2, eps=1e-2) - 1e-4 / (12 + 1e-4)) < 1e-9, "eps = 1e-2: the step eps is not the one given"
assert np.array_equal(_x, [1.0, 2.0]), "grad_check changed x"
_c = np.random.default_rng(37).normal(size=(2, 2, 3))
assert grad_check(lambda z: np.sum(np.sin(z)), _c, np.cos(_c)) < 1e-8, "a 3-d x: every entry"
assert grad_check(lambda z: z ** 2, np.array(3.0), np.array(6.0)) < 1e-8, "a 0-d x"
assert grad_check(lambda z: 3.0, np.ones(3), np.zeros(3)) == 0.0, "a constant f with the gradient 0: the error is 0"
""")),
        Item("nb10_cross_entropy", DERIVE,
             "(a) For one position with logits z (length V) and target t, L = -log softmax(z)_t. "
             "Derive dL/dz_j for every j (the cases j = t and j != t), and write the result as "
             "one vector. (b) Show that every row of dS = A * (dA - rowsum(A * dA)), the "
             "gradient at the softmax input, sums to 0, and explain why it must (what happens to "
             "the weights when the same number is added to a whole row of scores?). (c) A row of "
             "weights is nearly one-hot (one weight close to 1). What is dS for that row, and what "
             "does it mean for learning when the scores are not scaled by 1/sqrt(d_k)?",
             "(a) $L = -z_t + \\log \\sum_k e^{z_k}$, so $\\partial L / \\partial z_j = "
             "-[j = t] + e^{z_j} / \\sum_k e^{z_k} = p_j - [j = t]$: $p_t - 1$ for the target, "
             "$p_j$ for the others; as one vector $\\nabla_z L = p - \\mathrm{onehot}(t)$ (its "
             "entries sum to 0). (b) $\\sum_j dS_{ij} = \\sum_j A_{ij} dA_{ij} - (\\sum_j A_{ij}) "
             "\\sum_k A_{ik} dA_{ik} = 0$ because $\\sum_j A_{ij} = 1$. It must: adding $c$ to "
             "every score of row $i$ leaves its weights, hence $L$, unchanged, so the derivative "
             "of $L$ along the direction $(1, \\dots, 1)$ of that row, $\\sum_j dS_{ij}$, is 0. "
             "(c) With $A_{i\\cdot} \\approx e_k$: $dS_{ij} = A_{ij}(dA_{ij} - dA_{ik}) \\approx 0$ "
             "for $j \\ne k$ (factor $A_{ij} \\approx 0$) and for $j = k$ (the bracket is 0): the "
             "whole row's score gradient vanishes. Unscaled scores have standard deviation "
             "$\\sqrt{d_k}$ and saturate the softmax, so $W_Q$ and $W_K$ get almost no gradient "
             "and a row stuck on a wrong key stays there (the stuck rows of notebook 10's "
             "section 7).",
             rubric=((1, "(a) dL/dz = p - onehot(t), derived from L = -z_t + log sum e^z, both "
                         "cases."),
                     (1, "(b) the row sum is 0 because each row of A sums to 1, linked to the "
                         "invariance of the softmax to adding a constant to a row."),
                     (1, "(c) a one-hot row gives dS close to 0 (both cases), so unscaled, "
                         "saturated scores give W_Q and W_K almost no gradient.")))),
)

A11 = Assignment(
    "11_generating_and_kv_cache", "Generating, and the KV cache",
    _code("""
import numpy as np

import attention_core as ac

rng = np.random.default_rng(2611)
n, d_k, d_v = 6, 4, 3
Q = rng.normal(size=(n, d_k))   # (n, d_k): one query per position, in the order generation meets them
K = rng.normal(size=(n, d_k))   # (n, d_k)
V = rng.normal(size=(n, d_v))   # (n, d_v)
PROMPT, CHUNK, NEW = 40, 8, 10  # the counting item: prompt length, prefill chunk, tokens generated
"""),
    (
        Item("nb11_chunked_prefill", FILL,
             "With a KV cache, a prompt of PROMPT = 40 tokens goes through in chunks of "
             "CHUNK = 8 (a chunked prefill): each chunk's 8 queries are compared with every key "
             "cached before it and with the chunk's own 8 keys, in one score matrix of shape "
             "(8, keys) per head; count every entry of it (the causal mask hides some after they "
             "are formed). The prefill leaves positions 0..39 in the cache; then NEW = 10 tokens "
             "are fed in one at a time, at positions 40, ..., 49, each query against the cache "
             "and its own key. For one head, assign to `prefill_entries` the score entries of the "
             "whole prefill and to `generate_entries` those of the 10 generation steps.",
             _code("""
### BEGIN SOLUTION
prefill_entries = sum(CHUNK * (c + CHUNK) for c in range(0, PROMPT, CHUNK))   # c keys cached before the chunk
generate_entries = sum(t + 1 for t in range(PROMPT, PROMPT + NEW))            # position t sees t + 1 keys
### END SOLUTION
"""),
             answers=("prefill_entries", "generate_entries"), points=3,
             visible=_code("""
assert float(prefill_entries).is_integer() and float(generate_entries).is_integer(), "two whole numbers"
assert 0 < generate_entries < prefill_entries, "ten one-row steps form fewer entries than the prefill"
"""),
             hidden=_code("""
_chunks = [(k + 1) * 8 for k in range(5)]   # the keys each chunk's queries meet
assert prefill_entries != 40 * 40, "not one pass of all 40 queries: each chunk meets only the keys up to its own"
assert prefill_entries != 40 * 41 // 2, "every entry of a chunk's (8, keys) matrix is formed, masked ones too"
assert prefill_entries != 5 * 8 * 8, "a chunk's queries meet the cached keys as well as the chunk's own"
assert prefill_entries == 8 * sum(_chunks), "not the entries of the five chunks' score matrices"
assert generate_entries != sum(range(40, 50)), "off by one: the query at position t also meets its own key"
assert generate_entries != sum(_k * _k for _k in range(41, 51)), "with a cache only the new query is computed, not the whole prefix"
assert generate_entries == sum(range(41, 51)), "not the entries of the ten cached steps"
""")),
        Item("nb11_decode_with_cache", EXPERIMENT,
             "Write `decode_with_cache(Q, K, V)`: the causal attention outputs of the n positions "
             "of Q (n, d_k), K (n, d_k), V (n, d_v), computed as generation computes them: one "
             "position at a time, appending its key and value to a cache and attending with its "
             "query alone over everything cached. Return `(outputs, entries)`: the (n, d_v) "
             "outputs and the number of score entries the loop formed. Run it on Q, K, V above "
             "as `O_cached, entries_cached`, and compare O_cached with one causal pass over all "
             "n positions.",
             _code("""
def decode_with_cache(Q, K, V):
    ### BEGIN SOLUTION
    K_cache, V_cache = np.zeros((0, K.shape[1])), np.zeros((0, V.shape[1]))   # empty: no position yet
    outputs, entries = [], 0
    for t in range(Q.shape[0]):
        K_cache = np.concatenate([K_cache, K[t:t + 1]])   # (t + 1, d_k): the new key last
        V_cache = np.concatenate([V_cache, V[t:t + 1]])   # (t + 1, d_v)
        o, a = ac.scaled_dot_product_attention(Q[t:t + 1], K_cache, V_cache)   # (1, d_v), (1, t + 1)
        outputs.append(o[0])
        entries += a.size                                 # the last position sees every cached key
    return np.array(outputs), entries
    ### END SOLUTION


### BEGIN SOLUTION
O_cached, entries_cached = decode_with_cache(Q, K, V)
### END SOLUTION
O_full = ac.scaled_dot_product_attention(Q, K, V, ac.causal_mask(n))[0]   # (n, d_v): one causal pass
print("largest difference from the causal pass:", np.abs(O_cached - O_full).max())
"""),
             answers=("decode_with_cache", "O_cached", "entries_cached"), points=4,
             visible=_code("""
assert np.shape(O_cached) == (n, d_v), "one output row of d_v numbers per position"
assert float(entries_cached).is_integer(), "entries_cached is a whole number"
"""),
             hidden=_code("""
_causal = lambda A, B, C: ac.scaled_dot_product_attention(A, B, C, ac.causal_mask(len(A)))[0]
assert np.allclose(O_cached, _causal(Q, K, V)), "O_cached is not the causal attention output of Q, K, V"
assert entries_cached != 36, "a cached step computes only the new query's row, not the whole prefix again"
assert entries_cached == 21, "not the score entries of the cached loop over six positions"
_g = np.random.default_rng(41)
_Q, _K, _V = _g.normal(size=(9, 2)), _g.normal(size=(9, 2)), _g.normal(size=(9, 5))
_O, _e = decode_with_cache(_Q, _K, _V)
assert np.allclose(_O, _causal(_Q, _K, _V)), "nine positions, d_k = 2, d_v = 5: not the causal output"
assert int(_e) == 45, "nine positions: not the entries of the cached loop"
_O1, _e1 = decode_with_cache(_Q[:1], _K[:1], _V[:1])
assert np.allclose(_O1, _V[:1]) and int(_e1) == 1, "one position: its only key gets all the weight"
assert np.allclose(decode_with_cache(40 * _Q, 40 * _K, _V)[0], _causal(40 * _Q, 40 * _K, _V)), "large scores: the softmax must not overflow"
""")),
        Item("nb11_prefix_consistency", DERIVE,
             "(a) In one causal attention layer, O = softmax(Q K^T / sqrt(d_k) + M) V with "
             "M the causal mask, show that row j of O depends on the rows 0..j of X only "
             "(Q = X W_Q, K = X W_K, V = X W_V), and hence that appending tokens never changes "
             "an earlier row. (b) A model stacks such layers, each followed by position-wise "
             "sublayers (residual, layer norm, FFN). Prove by induction over the layers that "
             "the keys and values of every layer at position j depend on tokens 0..j only, so "
             "that all of them may be cached. (c) An encoder layer attends without a mask. What "
             "goes wrong if one caches its keys and values while tokens are appended, and what "
             "would a correct step have to recompute?",
             "(a) $o_j = \\sum_i a_{ji} v_i$ with $a_{ji} = 0$ for $i > j$ (the mask adds "
             "$-\\infty$, the softmax gives 0), and $a_{ji}$ for $i \\le j$ is the softmax of "
             "$q_j \\cdot k_i / \\sqrt{d_k}$, $i \\le j$, which holds only $x_0..x_j$ "
             "($q_j = x_j W_Q$, $k_i = x_i W_K$, $v_i = x_i W_V$). A later token adds a key "
             "$i > j$ whose weight in row $j$ is 0, so row $j$ is unchanged. "
             "(b) Induction: the input of layer 1 at position $j$ is $E[y_j] + P_j$, a function of "
             "token $j$. If the input rows $0..j$ of layer $\\ell$ depend on tokens $0..j$ only, "
             "then by (a) its attention row $j$ does, and the position-wise sublayers act on row "
             "$j$ alone, so its output row $j$, the input of layer $\\ell + 1$, does too; its keys "
             "and values at $j$ are that input times $W_K$, $W_V$. Hence every layer's $k_j$, "
             "$v_j$ is final once token $j$ is in, and may be cached. "
             "(c) Without a mask row $j$ attends to every position, later ones included: a new "
             "token changes the outputs of all earlier positions, hence the inputs of the next "
             "layer and its keys and values at every position. Cached keys and values of layers "
             "above the first are stale; a correct step must recompute all positions of every "
             "layer (only the first layer's keys and values, $x_i W_K$, stay valid).",
             rubric=((1, "(a) the mask zeroes a_ji for i > j and the rest uses x_0..x_j only, so "
                         "appending a token leaves row j unchanged."),
                     (1, "(b) the induction over layers: position-wise sublayers keep the "
                         "dependence on 0..j, so every layer's k_j and v_j is final."),
                     (1, "(c) without a mask a new token changes every earlier row, hence the "
                         "next layers' keys and values: all positions must be recomputed.")))),
)

A12 = Assignment(
    "12_rope_and_alibi", "Positions by rotation (RoPE) and by distance (ALiBi)",
    _code("""
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
             _code("""
### BEGIN SOLUTION
theta = BASE ** (-2.0 * np.arange(D_HEAD // 2) / D_HEAD)   # (D_HEAD/2,): one speed per pair
turning_pairs = int(np.sum(CONTEXT * theta >= 2 * np.pi))
slowest_angle = CONTEXT * theta[-1]                         # the last pair, j = D_HEAD/2 - 1
### END SOLUTION
"""),
             answers=("turning_pairs", "slowest_angle"), points=3,
             visible=_code("""
assert float(turning_pairs).is_integer() and 0 < turning_pairs <= D_HEAD // 2, "a number of pairs, between 1 and 64"
assert np.ndim(slowest_angle) == 0 and 0 < float(slowest_angle) < 2 * np.pi, "the slowest pair turns by less than a full turn"
"""),
             hidden=_code("""
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
             _code("""
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
             visible=_code("""
assert np.shape(out) == (h, n, d_v) and np.shape(weights) == (h, n, m), "output (h, n, d_v), weights (h, n, m)"
assert np.shape(far_weight) == (8,), "one weight per head"
"""),
             hidden=_code("""
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

A13 = Assignment(
    "13_grouped_query_attention", "Grouped-query and multi-query attention",
    _code("""
import numpy as np

import attention_core as ac

rng = np.random.default_rng(2613)
h, h_kv, t, d_k, d_v = 8, 2, 6, 4, 3
q = rng.normal(size=(h, d_k))               # (h, d_k): the new token's query, one row per query head
K_cache = rng.normal(size=(h_kv, t, d_k))   # (h_kv, t, d_k): the cached keys, the new one included
V_cache = rng.normal(size=(h_kv, t, d_v))   # (h_kv, t, d_v)
D_MODEL, H, H_KV, D_HEAD = 4096, 32, 8, 128  # the counting item: a Llama-3-8B-sized layer
"""),
    (
        Item("nb13_param_saving", FILL,
             "An attention layer with D_MODEL = 4096, H = 32 query heads, H_KV = 8 key/value heads "
             "and d_k = d_v = D_HEAD = 128, no biases. Assign to `attn_params` the number of "
             "weights of its W_Q, W_K, W_V and W_O, and to `param_saving` the fraction of the "
             "weights it saves against multi-head attention with the same D_MODEL, H and D_HEAD "
             "(a number between 0 and 1). Compare it with the fraction of the KV cache it saves.",
             _code("""
### BEGIN SOLUTION
attn_params = D_MODEL * H * D_HEAD + 2 * D_MODEL * H_KV * D_HEAD + H * D_HEAD * D_MODEL   # W_Q; W_K, W_V; W_O
param_saving = 1 - attn_params / (4 * D_MODEL * H * D_HEAD)   # multi-head: four (4096, 4096) matrices
### END SOLUTION
"""),
             answers=("attn_params", "param_saving"), points=3,
             visible=_code("""
assert float(attn_params).is_integer() and attn_params > 0, "a count of weights is a positive whole number"
assert np.ndim(param_saving) == 0 and 0 < float(param_saving) < 1, "param_saving is a fraction between 0 and 1"
"""),
             hidden=_code("""
_mha = 4 * 4096 ** 2
_kv = 2 * 4096 * 8 * 128
assert attn_params != 4096 ** 2 + 3 * _kv // 2, "W_O maps the 32 query heads' outputs back: it keeps its (h d_v, d_model) shape"
assert attn_params == 2 * 4096 ** 2 + _kv, "not the weights of W_Q, W_K, W_V and W_O"
assert not np.isclose(float(param_saving), 0.75), "0.75 is what the KV cache saves (h_kv / h = 1/4): W_Q and W_O do not shrink"
assert not np.isclose(float(param_saving), 1 - (3 * 4096 ** 2 + _kv / 2) / _mha), "both W_K and W_V shrink"
assert np.isclose(float(param_saving), 1 - (2 * 4096 ** 2 + _kv) / _mha, rtol=1e-9), "not the fraction of the weights saved"
""")),
        Item("nb13_decode_step", EXPERIMENT,
             "A decoding step reads the whole cache, so a kernel reads each key/value head once "
             "for its g = h / h_kv query heads instead of repeating it. Write "
             "`gqa_decode_step(q, K_cache, V_cache)`: q (h, d_k) is one new token's query in "
             "every head, K_cache (h_kv, t, d_k) and V_cache (h_kv, t, d_v) the cache; return "
             "the (h, d_v) attention output of every query head, query head r reading key/value "
             "head r // g, WITHOUT np.repeat: group the rows of q as (h_kv, g, d_k) and attend "
             "each group over its own key/value head. Run it on q, K_cache, V_cache as `o_step`.",
             _code("""
def gqa_decode_step(q, K_cache, V_cache):
    ### BEGIN SOLUTION
    groups = q.reshape(K_cache.shape[0], -1, q.shape[-1])   # (h, d_k) -> (h_kv, g, d_k): heads k g .. k g + g - 1
    o, _ = ac.scaled_dot_product_attention(groups, K_cache, V_cache)   # (h_kv, g, d_k) @ (h_kv, d_k, t) -> ... (h_kv, g, d_v)
    return o.reshape(q.shape[0], V_cache.shape[-1])         # (h_kv, g, d_v) -> (h, d_v)
    ### END SOLUTION


### BEGIN SOLUTION
o_step = gqa_decode_step(q, K_cache, V_cache)
### END SOLUTION
print("o_step:", o_step.shape)
"""),
             answers=("gqa_decode_step", "o_step"), points=4,
             visible=_code("""
assert np.shape(o_step) == (h, d_v), "one output row of d_v numbers per query head"
"""),
             hidden=_code("""
_gqa = lambda a, B, C: ac.grouped_query_attention(a[:, None, :], B, C)[0][:, 0, :]
_wrong_order = ac.scaled_dot_product_attention(q.reshape(4, 2, 4).swapaxes(0, 1), K_cache, V_cache)[0].swapaxes(0, 1).reshape(8, 3)
assert not np.allclose(o_step, _wrong_order), "query head r reads key/value head r // g, not r mod h_kv: heads 0..3 share head 0"
assert np.allclose(o_step, _gqa(q, K_cache, V_cache)), "o_step is not grouped-query attention of the new query"
_g = np.random.default_rng(47)
_q, _K, _V = _g.normal(size=(6, 5)), _g.normal(size=(3, 4, 5)), _g.normal(size=(3, 4, 2))
assert np.allclose(gqa_decode_step(_q, _K, _V), _gqa(_q, _K, _V)), "h = 6, h_kv = 3, d_k = 5: scale by sqrt(d_k) of a head"
assert np.allclose(gqa_decode_step(_q, _K[:1], _V[:1]), _gqa(_q, _K[:1], _V[:1])), "h_kv = 1: multi-query attention"
_K6, _V6 = _g.normal(size=(6, 4, 5)), _g.normal(size=(6, 4, 2))
assert np.allclose(gqa_decode_step(_q, _K6, _V6), _gqa(_q, _K6, _V6)), "h_kv = h: multi-head attention"
assert np.allclose(gqa_decode_step(_q, _K[:, :1], _V[:, :1]), np.repeat(_V[:, 0], 2, axis=0)), "a cache of one position: every head copies its value"
""")),
        Item("nb13_tied_heads", DERIVE,
             "Let a layer have h query heads and h_kv key/value heads, g = h / h_kv, and write "
             "W_K^(k) for the k-th block of d_k columns of its W_K (d_model, h_kv d_k), the same "
             "for W_V. (a) Show that it computes exactly what multi-head attention computes with "
             "the (d_model, h d_k) matrix whose r-th block is W_K^(r // g) (the same for W_V). "
             "(b) With d_k = d_v = d_model / h, write the attention's weights and the cache per "
             "token as fractions of multi-head attention's, as functions of h_kv / h, and say "
             "which one goes to 0 as h_kv / h does. (c) Converting a trained multi-head model, "
             "one replaces the g key heads of a group by their mean. Show that query head r's "
             "scores become the mean of its scores against the g old keys of its group, and "
             "explain why that is not its old scores, nor does the mean commute with the "
             "softmax, so that the converted model needs some training.",
             "(a) Multi-head head $r$ uses $K_r = X W_K^{(r)}$ with $W_K^{(r)} := W_K^{(r // g)}$, "
             "i.e. $K_r = X W_K^{(r//g)}$, which is the key/value head $r // g$ that grouped "
             "attention gives head $r$; the same for $V$, while $Q_r$ and $W_O$ are the same "
             "matrices: each head's softmax and output, hence the concatenation and $W_O$, agree. "
             "(b) Weights: $(2 h + 2 h_{kv}) d_k d_{model} / (4 h d_k d_{model}) = "
             "\\tfrac12 + \\tfrac12 h_{kv}/h$; cache: $2 h_{kv} d_k / (2 h d_k) = h_{kv} / h$. "
             "The cache goes to 0 with $h_{kv}/h$, the weights only to one half (W_Q and W_O "
             "keep their size). "
             "(c) The pooled key is $\\bar k = \\frac1g \\sum_{r'} k_{r'}$, so $q_r \\cdot \\bar k = "
             "\\frac1g \\sum_{r'} q_r \\cdot k_{r'}$: the mean of the scores of $q_r$ against the "
             "group's keys. Head $r$ was trained with $q_r \\cdot k_r$ only; the other keys "
             "$k_{r'}$ were never meant for $q_r$, so the mean differs from its old score unless "
             "the group's keys were equal. And $\\mathrm{softmax}(\\frac1g \\sum s_{r'}) \\ne "
             "\\frac1g \\sum \\mathrm{softmax}(s_{r'})$ (the softmax is not linear), so the "
             "weights change too: the output changes, and a little further training (uptraining) "
             "adapts $W_Q$ and the rest to the shared heads.",
             rubric=((1, "(a) head r of the multi-head layer with the tied blocks has the keys "
                         "and values of head r // g: every head's output, hence the layer's, "
                         "is the same."),
                     (1, "(b) weights 1/2 + h_kv / (2h) of multi-head attention, cache h_kv / h; "
                         "only the cache goes to 0."),
                     (1, "(c) q_r . mean(k) is the mean of q_r's scores against the group's keys, "
                         "not q_r . k_r, and the softmax is not linear: training is needed.")))),
)

A14 = Assignment(
    "14_sliding_window_attention", "Sliding windows and attention sinks",
    _code("""
import numpy as np

import attention_core as ac

rng = np.random.default_rng(2614)
T, w, d_k, d_v = 14, 5, 4, 3
Q = rng.normal(size=(T, d_k))   # (T, d_k): positions 0..13
K = rng.normal(size=(T, d_k))   # (T, d_k)
V = rng.normal(size=(T, d_v))   # (T, d_v)
# A ring buffer of w = 5 slots after position 13 (slot = position % w): the positions in its slots,
# in memory order. Position 13 went into slot 3 and overwrote position 8.
slot_positions = np.array([10, 11, 12, 13, 9])
N, W, CHUNK = 5000, 4096, 512   # the counting item: Mistral 7B's window
"""),
    (
        Item("nb14_band_entries", FILL,
             "Sliding-window attention with W = 4096 (a query sees the last 4096 positions, "
             "itself included). Assign to `band_entries` the number of score entries the mask "
             "leaves visible when N = 5000 positions go through at once, and to "
             "`chunk_entries` the visible entries when, with the first 4488 positions in a cache, "
             "the last CHUNK = 512 positions go through as one chunk of new queries over all "
             "5000 keys.",
             _code("""
### BEGIN SOLUTION
band_entries = sum(min(p + 1, W) for p in range(N))          # position p sees keys max(0, p - W + 1) .. p
chunk_entries = sum(min(p + 1, W) for p in range(N - CHUNK, N))   # the chunk's queries are the LAST 512
### END SOLUTION
"""),
             answers=("band_entries", "chunk_entries"), points=3,
             visible=_code("""
assert float(band_entries).is_integer() and float(chunk_entries).is_integer(), "two whole numbers"
assert 0 < chunk_entries < band_entries, "the chunk is part of the whole pass"
"""),
             hidden=_code("""
_causal = 5000 * 5001 // 2
assert band_entries != 5000 * 4096, "the first 4095 positions see fewer than W keys"
assert band_entries != _causal, "that is the causal mask: the window hides keys older than W"
assert band_entries != 5000 * 4096 - 4096 * 4097 // 2, "off by one: position p < W sees p + 1 keys, itself included"
assert band_entries == 5000 * 4096 - 4096 * 4095 // 2, "not the entries the window leaves visible"
assert chunk_entries != 512 * 513 // 2, "the new queries are the last 512 of 5000 positions, not the first (bottom-right alignment)"
assert chunk_entries == 512 * 4096, "not the visible entries of the chunk"
""")),
        Item("nb14_position_mask", EXPERIMENT,
             "In a ring buffer the keys lie in slot order, not in position order, and a slot may "
             "still be empty. Write `position_window_mask(q_pos, k_pos, window)`: the additive "
             "(n, m) mask for queries at the positions q_pos (length n) over keys at the "
             "positions k_pos (length m, any order, -1 for an empty slot): 0 where key position "
             "j satisfies q - window < j <= q for the query's position q, -inf elsewhere and for "
             "every empty slot. Both may be lists. Then attend the query at position 13 over the "
             "ring buffer's keys and values as they lie in slot_positions' order, and keep its "
             "output, shape (1, d_v), as `ring_output`.",
             _code("""
def position_window_mask(q_pos, k_pos, window):
    ### BEGIN SOLUTION
    p = np.asarray(q_pos)[:, None]   # (n, 1): each query's position
    j = np.asarray(k_pos)[None, :]   # (1, m): each slot's position, -1 if empty
    return np.where((j >= 0) & (j <= p) & (j > p - window), 0.0, -np.inf)   # (n, m)
    ### END SOLUTION


### BEGIN SOLUTION
ring_K, ring_V = K[slot_positions], V[slot_positions]   # (w, d_k), (w, d_v): the buffer, slot by slot
ring_output = ac.scaled_dot_product_attention(Q[13:14], ring_K, ring_V,
                                              position_window_mask([13], slot_positions, w))[0]
### END SOLUTION
print("ring_output:", ring_output)
"""),
             answers=("position_window_mask", "ring_output"), points=4,
             visible=_code("""
assert np.shape(ring_output) == (1, d_v), "one query, d_v = 3 numbers"
assert np.shape(position_window_mask([0, 1], [0, 1, 2], 2)) == (2, 3), "one row per query, one column per key"
"""),
             hidden=_code("""
_band = ac.scaled_dot_product_attention(Q, K, V, ac.sliding_window_mask(T, w))[0]
assert np.allclose(ring_output, _band[13:]), "ring_output is not the window attention output of position 13"
_same = lambda a, b: np.array_equal(np.asarray(a, dtype=float), b)
assert _same(position_window_mask(range(7), range(7), 3), ac.sliding_window_mask(7, 3)), "positions in order: the window mask"
assert _same(position_window_mask(np.arange(4, 9), np.arange(9), 3), ac.sliding_window_mask(5, 3, 9)), "queries at 4..8 over keys 0..8"
_inf = -np.inf
assert _same(position_window_mask([7], [4, 5, 6, 7, 8], 3), [[_inf, 0, 0, 0, _inf]]), "off by one: the window holds w positions, the query's own included"
assert _same(position_window_mask([7], [8, 3, 6], 3), [[_inf, _inf, 0]]), "keys in any order: each by its position"
assert _same(position_window_mask([2], [0, 1, 2, -1, -1], 5), [[0, 0, 0, _inf, _inf]]), "an empty slot (-1) is never seen"
assert _same(position_window_mask([3, 4], [0, 1, 2, 3, 4], 1), [[_inf, _inf, _inf, 0, _inf], [_inf, _inf, _inf, _inf, 0]]), "window 1: each query sees only itself"
assert _same(position_window_mask(range(4), range(4), 10), ac.causal_mask(4)), "a window wider than the sequence is the causal mask"
""")),
        Item("nb14_window_reach", DERIVE,
             "(a) Prove by induction that after L layers of sliding-window attention with window "
             "w (each followed by position-wise sublayers), the output at position p depends on "
             "the inputs at positions p - L (w - 1), ..., p only, and give an example in which it "
             "does depend on the input at p - L (w - 1). (b) Show that causal window attention "
             "over n positions leaves n w - w (w - 1) / 2 score entries visible (n >= w), and "
             "that the ratio of the causal mask's count to this one grows like n / (2w). "
             "(c) A rolling cache writes position t into slot t mod w. Explain why attending over "
             "the w slots, in slot order, gives exactly the window's output (why the order of the "
             "slots does not matter, and why overwriting slot t mod w loses nothing).",
             "(a) Layer 1: row $p$ attends to keys $p - w + 1..p$, so it depends on inputs "
             "$p - (w - 1)..p$; the position-wise sublayers keep that. If after $L$ layers row "
             "$q$ depends on inputs $q - L(w-1)..q$, layer $L + 1$'s row $p$ reads rows "
             "$p - w + 1..p$ of layer $L$, which depend on inputs from "
             "$p - w + 1 - L(w - 1) = p - (L + 1)(w - 1)$ on. It can depend on the farthest one: "
             "with weights that make each position attend only to the key $w - 1$ back (scores "
             "$-\\infty$-like elsewhere), the value at $p - L(w-1)$ is carried $w - 1$ positions "
             "per layer to $p$ (e.g. $w = 2$, one step back per layer). "
             "(b) Position $p$ sees $\\min(p + 1, w)$ keys: $\\sum_{p=0}^{w-2} (p + 1) + (n - w + "
             "1) w = w (w - 1) / 2 + n w - w^2 + w = n w - w (w - 1) / 2$. The causal count is "
             "$n (n + 1) / 2$; their ratio $\\frac{n (n + 1) / 2}{n w - w (w - 1) / 2} \\to "
             "\\frac{n}{2 w}$ for $n \\gg w$. "
             "(c) Attention is a sum over keys, $\\sum_j a_j v_j$ with $a_j \\propto e^{s_j}$: "
             "permuting keys and values together permutes the terms and changes nothing, so the "
             "slot order does not matter. After position $t$ is written, slots $t \\bmod w$ for the "
             "last $w$ positions $t - w + 1..t$ are distinct (they are $w$ consecutive integers "
             "mod $w$) and hold exactly the keys the query at $t$ may see; the overwritten "
             "position $t - w$ is outside the window of $t$ and of every later query.",
             rubric=((1, "(a) the induction step from L to L + 1 layers (w - 1 more positions), "
                         "and an example of weights that carry the farthest input to p."),
                     (1, "(b) the count sum_p min(p + 1, w) = n w - w (w - 1) / 2, and the ratio "
                         "n (n + 1) / 2 over it tending to n / (2w)."),
                     (1, "(c) attention is invariant to permuting keys with their values; the "
                         "w slots hold the last w positions, and the overwritten t - w is never "
                         "read again.")))),
)

ASSIGNMENTS = (A01, A02, A03, A04, A05, A06, A07, A08, A09, A10, A11, A12, A13, A14)
