"""Assignment 10 of the graded track: Learning to attend (notebooks/10_learning_to_attend.ipynb)."""

from __future__ import annotations

from scripts.graded.items import DERIVE, EXPERIMENT, FILL, Assignment, Item, code

ASSIGNMENT = Assignment(
    "10_learning_to_attend", "Learning to attend",
    code("""
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
             code("""
### BEGIN SOLUTION
dS = al.attention_backward(Q, K, V, G, return_dscores=True)[3]   # (n, m): dL/dS at the softmax input
dL_dc = np.sum(dS * (Q @ K.T))   # S = c (Q K^T) is linear in c: (n, d_k) @ (d_k, m) -> (n, m)
### END SOLUTION
"""),
             answers=("dL_dc",), points=3,
             visible=code("""
assert np.ndim(dL_dc) == 0, "dL_dc is one number"
"""),
             hidden=code("""
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
             code("""
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
             visible=code("""
assert set(errors) == set(CANDIDATES), "one error per candidate"
assert right_formula in CANDIDATES, "right_formula is one of the names of CANDIDATES"
"""),
             hidden=code("""
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
