"""selfcheck: check-yourself questions that recognise the classic mistakes.

A learner writes an answer in code and passes it to a check. The check
compares it with what ``attention_core`` computes and returns a ``Verdict``
whose text is shown as the cell's output:

- the answer is still ``...`` (the committed state): "Not answered yet ...";
- it matches: "Correct ...";
- it matches what a classic mistake produces (softmax over the wrong axis,
  scaling after softmax, no scaling, dividing by d_k, masking V instead of the
  scores, transposed weights, wrong W_O shape, ...): the mistake is named and
  explained;
- otherwise: where the largest difference is, and what to look at.

Checks never raise on a wrong answer, so a notebook always runs to the end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import attention_core as ac

UNANSWERED = "unanswered"
CORRECT = "correct"
MISTAKE = "mistake"
WRONG = "wrong"


@dataclass(frozen=True)
class Verdict:
    """Result of a check: status, the message shown, and the recognised mistake (if any)."""

    status: str
    message: str
    mistake: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == CORRECT

    def __repr__(self) -> str:
        return self.message

    def __str__(self) -> str:
        return self.message


# (label, explanation) of every classic mistake the checks know
MISTAKES = {
    "softmax_wrong_axis": (
        "softmax over the wrong axis",
        "softmax must run along each row (over the keys, axis=-1) so that every "
        "query's weights sum to 1; yours normalises each column (over the queries)."),
    "scale_after_softmax": (
        "scaling after softmax",
        "divide the scores by sqrt(d_k) BEFORE the softmax; dividing the weights "
        "afterwards leaves rows that no longer sum to 1 and does not prevent saturation."),
    "no_scaling": (
        "no scaling",
        "the scores must be divided by sqrt(d_k) before the softmax; without it "
        "Var[q.k] = d_k and the softmax saturates for large d_k."),
    "divide_by_d_k": (
        "dividing by d_k instead of sqrt(d_k)",
        "the standard deviation of q.k is sqrt(d_k), so the scale is 1/sqrt(d_k); "
        "dividing by d_k shrinks the scores too much and flattens the weights."),
    "mask_on_values": (
        "masking V instead of the scores",
        "the mask must be added to the scores before the softmax; zeroing the "
        "blocked values leaves the blocked keys in the softmax, so the remaining "
        "weights no longer sum to 1 and the positions still compete."),
    "mask_after_softmax": (
        "masking after the softmax",
        "zeroing weights after the softmax leaves rows that do not sum to 1; add the "
        "mask (0 / -inf) to the scores before the softmax."),
    "mask_missing": (
        "no mask",
        "this is the unmasked result: add the mask (0 where allowed, -inf where "
        "not) to the scaled scores before the softmax."),
    "transposed_weights": (
        "transposed weights",
        "rows are queries and columns are keys: A = softmax(Q K^T / sqrt(d_k)) has shape "
        "(n, m) and its ROWS sum to 1; yours is the transpose (K Q^T ordering)."),
    "transposed_scores": (
        "transposed scores",
        "S = Q K^T (query i, key j at row i, column j); yours is K Q^T = S^T."),
    "W_O_uses_d_k": (
        "wrong W_O shape: (h*d_k, d_model)",
        "W_O multiplies the concatenated VALUE heads, so its first dimension is h*d_v, "
        "not h*d_k (they differ whenever d_k != d_v)."),
    "W_O_transposed": (
        "wrong W_O shape: transposed",
        "with row vectors, Concat(heads) (n, h*d_v) @ W_O must give (n, d_model), so W_O "
        "is (h*d_v, d_model), not (d_model, h*d_v)."),
    "W_O_single_head": (
        "wrong W_O shape: one head's width",
        "W_O reads all heads at once: its first dimension is h*d_v, not d_v."),
    "no_W_O": (
        "W_O left out",
        "the concatenated heads (n, h*d_v) must still be multiplied by W_O "
        "(h*d_v, d_model) to mix the heads and return to d_model."),
}


def _is_unanswered(answer) -> bool:
    return answer is ... or answer is None


def _unanswered(what: str) -> Verdict:
    return Verdict(UNANSWERED, f"Not answered yet: replace `...` with your {what} and run "
                               "the cell again.")


def _as_float(answer):
    try:
        return np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return None


def check_value(answer, expected, what: str, mistakes: dict | None = None,
                atol: float = 1e-6, hint: str = "") -> Verdict:
    """Compare answer with expected; if wrong, name the mistake whose value it matches.

    mistakes: {key: value} or {key: (value, label, explanation)}; a plain key uses MISTAKES.
    """
    if _is_unanswered(answer):
        return _unanswered(what)
    a, e = _as_float(answer), np.asarray(expected, dtype=float)
    if a is None:
        return Verdict(WRONG, f"Your {what} is a {type(answer).__name__}, not numbers; "
                              f"expected an array of shape {e.shape}.")
    if a.shape == e.shape and np.allclose(a, e, atol=atol, rtol=1e-6, equal_nan=True):
        return Verdict(CORRECT, f"Correct: your {what} matches attention_core "
                                f"(shape {e.shape}, within {atol:g}).")
    for key, spec in (mistakes or {}).items():
        value, label, why = (spec if isinstance(spec, tuple) else (spec, *MISTAKES[key]))
        v = np.asarray(value, dtype=float)
        if v.shape == a.shape and np.allclose(a, v, atol=atol, rtol=1e-6, equal_nan=True):
            return Verdict(MISTAKE, f"Not quite: your {what} is what {label} gives. "
                                    f"{why[0].upper()}{why[1:]}", key)
    if a.shape != e.shape:
        return Verdict(WRONG, f"Wrong shape: your {what} has shape {a.shape}, expected "
                              f"{e.shape}. {hint}".rstrip())
    diff = np.abs(a - e)
    idx = tuple(int(i) for i in np.unravel_index(np.nanargmax(np.nan_to_num(diff, nan=np.inf)),
                                                 diff.shape))
    return Verdict(WRONG, f"Not quite: your {what} differs from attention_core by up to "
                          f"{float(diff[idx]):.3g} at index {idx} (expected {float(e[idx]):.4f}, "
                          f"got {float(a[idx]):.4f}). {hint}".rstrip())


def _weight_mistakes(Q, K, mask=None) -> dict:
    """Weights produced by each classic mistake, for the same Q, K, mask."""
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2)  # (..., n, d_k) @ (..., d_k, m) -> (..., n, m)
    M = 0.0 if mask is None else np.asarray(mask, dtype=float)
    right = ac.softmax(S / np.sqrt(d_k) + M, axis=-1)
    out = {}
    try:
        out["softmax_wrong_axis"] = ac.softmax(S / np.sqrt(d_k) + M, axis=-2)
    except ValueError:  # a column blocked everywhere: this mistake cannot be formed
        pass
    out["scale_after_softmax"] = ac.softmax(S + M, axis=-1) / np.sqrt(d_k)
    out["no_scaling"] = ac.softmax(S + M, axis=-1)
    out["divide_by_d_k"] = ac.softmax(S / d_k + M, axis=-1)
    if mask is not None:
        unmasked = ac.softmax(S / np.sqrt(d_k), axis=-1)
        out["mask_after_softmax"] = unmasked * np.isfinite(M)
        out["mask_missing"] = unmasked
    if right.shape[-1] == right.shape[-2]:
        out["transposed_weights"] = np.swapaxes(right, -1, -2)
    return out


def check_scores(answer, Q, K) -> Verdict:
    """Check raw scores S = Q K^T."""
    S = np.asarray(Q, dtype=float) @ np.swapaxes(np.asarray(K, dtype=float), -1, -2)
    d_k = np.shape(Q)[-1]
    mistakes = {"transposed_scores": np.swapaxes(S, -1, -2),
                "scaled_too_early": (S / np.sqrt(d_k), "already scaled scores",
                                     "this step asks for the raw S = Q K^T; the division by "
                                     "sqrt(d_k) comes next.")}
    return check_value(answer, S, "scores S = Q K^T", mistakes)


def check_weights(answer, Q, K, mask=None) -> Verdict:
    """Check attention weights A = softmax(Q K^T / sqrt(d_k) + M) (rows over keys)."""
    _, right = ac.scaled_dot_product_attention(Q, K, np.zeros((np.shape(K)[-2], 1)), mask)
    return check_value(answer, right, "attention weights A", _weight_mistakes(Q, K, mask))


def check_attention(answer, Q, K, V, mask=None) -> Verdict:
    """Check the attention output softmax(Q K^T / sqrt(d_k) + M) V, diagnosing the classic mistakes."""
    output, _ = ac.scaled_dot_product_attention(Q, K, V, mask)
    V = np.asarray(V, dtype=float)
    mistakes = {k: w @ V for k, w in _weight_mistakes(Q, K, mask).items()
                if w.shape[-1] == V.shape[-2]}
    if mask is not None:
        # the "mask V" bug: softmax over all keys, then zero the blocked values per query
        d_k = np.shape(Q)[-1]
        unmasked = ac.softmax(np.asarray(Q, float) @ np.swapaxes(np.asarray(K, float), -1, -2)
                              / np.sqrt(d_k), axis=-1)
        allowed = np.isfinite(np.broadcast_to(np.asarray(mask, float), unmasked.shape))
        mistakes = {"mask_on_values": (unmasked * allowed) @ V, **mistakes}
    return check_value(answer, output, "attention output", mistakes)


def check_W_O_shape(answer, d_model: int, h: int, d_k: int, d_v: int) -> Verdict:
    """Check the shape of W_O: (h*d_v, d_model)."""
    if _is_unanswered(answer):
        return _unanswered("shape of W_O, as a tuple")
    right = (h * d_v, d_model)
    try:
        got = tuple(int(x) for x in answer)
    except (TypeError, ValueError):
        return Verdict(WRONG, f"Give the shape as a tuple of two integers, got {answer!r}.")
    if got == right:
        return Verdict(CORRECT, f"Correct: W_O has shape (h*d_v, d_model) = {right}.")
    wrongs = {"W_O_uses_d_k": (h * d_k, d_model), "W_O_transposed": (d_model, h * d_v),
              "W_O_single_head": (d_v, d_model)}
    for key, shape in wrongs.items():
        if got == shape and shape != right:
            label, why = MISTAKES[key]
            return Verdict(MISTAKE, f"Not quite: {got} is the {label}. {why}", key)
    return Verdict(WRONG, f"Not quite: W_O has shape (h*d_v, d_model) = {right}, you gave {got}.")


def check_multi_head(answer, X, W_Q, W_K, W_V, W_O, num_heads: int, mask=None) -> Verdict:
    """Check a multi-head self-attention output (n, d_model)."""
    right, _ = ac.multi_head_attention(X, X, W_Q, W_K, W_V, W_O, num_heads, mask)
    heads, _ = ac.multi_head_attention(X, X, W_Q, W_K, W_V, np.eye(np.shape(W_V)[1]),
                                       num_heads, mask)
    return check_value(answer, right, "multi-head output", {"no_W_O": heads})


# ==========================================================================
# Notebook-specific checks (one section per notebook, in course order)
# ==========================================================================

# --- 01 Q, K, V projections -------------------------------------------------

# --- 02 The worked 3x2 example ----------------------------------------------

# --- 03 Scaling and softmax saturation -------------------------------------

# --- 04 Masking -------------------------------------------------------------

# --- 05 Multi-head attention -----------------------------------------------

# --- 06 Positional encoding ------------------------------------------------

# --- 07 Feed-forward network -----------------------------------------------

# --- 08 The Transformer block ----------------------------------------------

# --- 09 The cost of attention ----------------------------------------------
