"""Assignment 03 of the graded track: Scaling and softmax saturation (notebooks/03_scaling_and_softmax_saturation.ipynb)."""

from __future__ import annotations

from scripts.graded.items import DERIVE, EXPERIMENT, FILL, Assignment, Item, code

ASSIGNMENT = Assignment(
    "03_scaling_and_softmax_saturation", "Scaling and softmax saturation",
    code("""
import numpy as np

import attention_core as ac

D_KS = [1, 4, 16, 64, 256]   # the widths of the experiment
"""),
    (
        Item("nb03_std_qk", FILL,
             "The d_k = 50 components of q are independent with mean 0 and variance 4; those of "
             "k are independent of them and of each other, with mean 0 and variance 1. Assign "
             "to `std_qk` the standard deviation of q . k (one number).",
             code("""
### BEGIN SOLUTION
std_qk = np.sqrt(50 * 4 * 1)    # Var[q . k] = d_k Var[q_i] Var[k_i]
### END SOLUTION
"""),
             answers=("std_qk",), points=2,
             visible=code("""
assert np.ndim(std_qk) == 0 and float(std_qk) > 0, "std_qk is one positive number"
"""),
             hidden=code("""
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
             code("""
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
             visible=code("""
assert len(curve_raw) == len(D_KS) and len(curve_scaled) == len(D_KS), "one value per d_k"
assert all(0.1 - 1e-9 <= w <= 1 + 1e-9 for w in curve_raw + curve_scaled), \\
    "a largest weight of m = 10 keys lies between 1/10 and 1"
"""),
             hidden=code("""
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
