"""Assignment 07 of the graded track: The position-wise feed-forward network (notebooks/07_feed_forward_network.ipynb)."""

from __future__ import annotations

from scripts.graded.items import DERIVE, EXPERIMENT, FILL, Assignment, Item, code

ASSIGNMENT = Assignment(
    "07_feed_forward_network", "The position-wise feed-forward network",
    code("""
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
             code("""
### BEGIN SOLUTION
merged = (np.concatenate([ffn_a.W_1, ffn_b.W_1], axis=1),   # (d_model, 3 + 5): both hidden layers
          np.concatenate([ffn_a.b_1, ffn_b.b_1]),           # (8,)
          np.concatenate([ffn_a.W_2, ffn_b.W_2], axis=0),   # (8, d_model): each unit's own row
          ffn_a.b_2 + ffn_b.b_2)                            # (d_model,): both output biases, once each
### END SOLUTION
"""),
             answers=("merged",), points=3,
             visible=code("""
assert len(merged) == 4, "merged is the tuple (W_1, b_1, W_2, b_2)"
assert [np.shape(a) for a in merged] == [(4, 8), (8,), (8, 4), (4,)], "the shapes of an FFN with d_model = 4, d_ff = 8"
"""),
             hidden=code("""
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
             code("""
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
             visible=code("""
assert np.shape(A_0) == (d_model, d_model) and np.shape(c_0) == (d_model,), "A is (d_model, d_model), c is (d_model,)"
"""),
             hidden=code("""
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
