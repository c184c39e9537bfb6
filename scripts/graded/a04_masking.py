"""Assignment 04 of the graded track: Masking (notebooks/04_masking.ipynb)."""

from __future__ import annotations

from scripts.graded.items import DERIVE, EXPERIMENT, FILL, Assignment, Item, code

ASSIGNMENT = Assignment(
    "04_masking", "Masking",
    code("""
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
             code("""
### BEGIN SOLUTION
M_batch = ac.causal_mask(3) + ac.padding_mask([3, 1, 2], m=3)   # (3, 3) + (3, 1, 3) -> (3, 3, 3)
### END SOLUTION
"""),
             answers=("M_batch",), points=3,
             visible=code("""
assert np.shape(M_batch) == (3, 3, 3), "one (n, n) mask per item: (3, 3, 3)"
assert set(np.unique(M_batch)) <= {0.0, -np.inf}, "an additive mask holds only 0 and -inf"
"""),
             hidden=code("""
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
             code("""
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
             visible=code("""
assert set(found) == set(ATTENDS), "one verdict per function of ATTENDS"
assert found["no_mask"], "without a mask the future leaks in"
"""),
             hidden=code("""
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
