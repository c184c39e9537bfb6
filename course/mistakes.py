"""The one registry of every classic mistake a self-check can name (data only).

Checks (course/checks.py and each notebook's companion) refer to a mistake by its key and fill
in the numbers of the case at hand; the teacher's guide lists them per notebook. Read-only.

Each notebook's own mistakes are at the end of its companion (course/nbNN_topic.py, its dict
MISTAKES); the ones here are named by the shared checks (course/checks.py) or by the checks of
several notebooks. MISTAKES gathers both (course/registry.py).

The labels and explanations are built at import time, so they are only marked with N_() here;
checks.named() translates them when a verdict is made (course/i18n.py), then fills them in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from course.i18n import N_
from course.registry import Registry


class Mistake(NamedTuple):
    """A classic mistake a check can recognise: where it is taught, its name, and why it is wrong."""

    notebook: str  # "04": the notebook whose checks diagnose it (the teacher's guide groups by it)
    label: str  # quoted in the verdict: 'this is the classic mistake "<label>"'
    why: str  # the explanation; {placeholders} are filled in by the check (str.format)


# The mistakes several notebooks' checks name, under the notebook that teaches them.
SHARED = {
    "softmax_wrong_axis": Mistake(
        "03",
        N_("softmax over the wrong axis"),
        N_("softmax must run along each row (over the keys, axis=-1) so that every "
           "query's weights sum to 1; yours normalises each column (over the queries).")),
    "scale_after_softmax": Mistake(
        "03",
        N_("scaling after softmax"),
        N_("divide the scores by sqrt(d_k) BEFORE the softmax; dividing the weights "
           "afterwards leaves rows that no longer sum to 1 and does not prevent saturation.")),
    "no_scaling": Mistake(
        "03",
        N_("no scaling"),
        N_("the scores must be divided by sqrt(d_k) before the softmax; without it "
           "Var[q.k] = d_k and the softmax saturates for large d_k.")),
    "divide_by_d_k": Mistake(
        "03",
        N_("dividing by d_k instead of sqrt(d_k)"),
        N_("the standard deviation of q.k is sqrt(d_k), so the scale is 1/sqrt(d_k); "
           "dividing by d_k shrinks the scores too much and flattens the weights.")),
    "mask_on_values": Mistake(
        "04",
        N_("masking V instead of the scores"),
        N_("the mask must be added to the scores before the softmax; zeroing the "
           "blocked values leaves the blocked keys in the softmax, so the remaining "
           "weights no longer sum to 1 and the positions still compete.")),
    "mask_after_softmax": Mistake(
        "04",
        N_("masking after the softmax"),
        N_("zeroing weights after the softmax leaves rows that do not sum to 1; add the "
           "mask (0 / -inf) to the scores before the softmax.")),
    "mask_missing": Mistake(
        "04",
        N_("no mask"),
        N_("this is the unmasked result: add the mask (0 where allowed, -inf where "
           "not) to the scaled scores before the softmax.")),
    "transposed_weights": Mistake(
        "02",
        N_("transposed weights"),
        N_("rows are queries and columns are keys: A = softmax(Q K^T / sqrt(d_k)) has shape "
           "(n, m) and its ROWS sum to 1; yours is the transpose A^T, whose columns sum to 1.")),
    "transposed_scores": Mistake(
        "02",
        N_("transposed scores"),
        N_("S = Q K^T has shape (n, m), query i and key j at row i, column j; yours starts from "
           "K Q^T = S^T, shape (m, n), with the keys in the rows.")),
    "mask_hides_diagonal": Mistake(
        "04",
        N_("a mask that also hides the diagonal"),
        N_("every position may attend to itself; use k=1 in np.triu so the diagonal stays 0 "
           "(otherwise row 0 blocks every key).")),
    "mask_multiplicative": Mistake(
        "04",
        N_("a 0/1 (multiplicative) mask"),
        N_("our masks are ADDED to the scores: 0 where a key may be seen, -inf where it may not. "
           "A 1/0 mask added to the scores hides nothing.")),
    "mask_boolean_blocked": Mistake(
        "04",
        N_("a True/False 'is blocked' matrix"),
        N_("turn it into an additive mask: np.where(blocked, -np.inf, 0.0).")),
    # the next two are not bugs but another convention: check_causal_mask says so in its verdict
    "mask_large_negative": Mistake(
        "04",
        N_("a finite -1e9 instead of -inf"),
        N_("here it gives exactly the same weights (exp(-1e9) underflows to 0). It differs only on "
           "a row blocked everywhere: added to the scores, -1e9 leaves that row with the unmasked "
           "weights (the softmax ignores a constant added to a whole row), where -inf gives 0/0, "
           "which attention_core reports as an error (a plain softmax returns NaN). Much "
           "production code prefers a finite value, which keeps such rows free of NaN, but takes "
           "it from the dtype (torch.finfo(dtype).min): -1e9 overflows to -inf in float16. A "
           "trade-off, not a bug; this question asks for the course's -np.inf.")),
    "mask_finfo_min": Mistake(
        "04",
        N_("np.finfo(float).min instead of -inf"),
        N_("the most negative float64 is finite, so here it gives exactly the same weights. It "
           "differs only on a row blocked everywhere: every score plus np.finfo(float).min rounds "
           "to np.finfo(float).min, so that row gets uniform weights, where -inf gives 0/0 "
           "(attention_core's error, a plain softmax's NaN). It is what much production code uses "
           "(torch.finfo(dtype).min): a trade-off, not a bug; this question asks for the course's "
           "-np.inf.")),
    "mha_scaled_by_d_model": Mistake(
        "05",
        N_("scaling every head by {scale}"),
        N_("each head compares queries and keys of width d_k = {d_k}, so each head divides its "
           "scores by sqrt(d_k) = sqrt({d_k}), not by {scale} = sqrt({d_model}).")),
    "cache_new_key_missing": Mistake(
        "11",
        N_("attending only to the older tokens"),
        N_("append the new token's key and value to the cache BEFORE the attention: a position "
           "may attend to itself (the causal mask keeps the diagonal).")),
}

# Every named mistake of every check: SHARED, then each companion's MISTAKES, in course order,
# gathered on the first lookup. A read-only mapping, so nothing can change it.
MISTAKES: Mapping[str, Mistake] = Registry("MISTAKES", SHARED, lambda key, m: m.notebook)
