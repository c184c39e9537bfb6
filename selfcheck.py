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

import re
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
        "(n, m) and its ROWS sum to 1; yours is the transpose A^T, whose columns sum to 1."),
    "transposed_scores": (
        "transposed scores",
        "S = Q K^T has shape (n, m), query i and key j at row i, column j; yours starts from "
        "K Q^T = S^T, shape (m, n), with the keys in the rows."),
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


def _sentence(why: str) -> str:
    """why as a sentence: a capital first letter, unless it starts with a symbol (n*d_k, x, q.k)."""
    word = re.match(r"[a-z]+(?=[\s,;:-]|$)", why)  # "self-attention ..." counts as a word
    if word and (len(word.group()) > 1 or word.group() == "a"):
        return why[0].upper() + why[1:]
    return why


def _fmt_tol(atol: float) -> str:
    """1e-4, not 0.0001."""
    mantissa, exponent = f"{atol:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _fmt_pair(expected: float, got: float) -> tuple[str, str]:
    """expected and got with just enough digits to tell them apart.

    Numbers below 10,000 start with 4 decimals; larger ones (np.finfo(float).min) and inf/NaN
    start in g format, so they never print with hundreds of digits.
    """
    small = all(abs(x) < 1e4 for x in (expected, got))
    for fmt in (".4f" if small else ".4g", ".6g", ".10g", ".17g"):
        e, g = format(expected, fmt), format(got, fmt)
        if e != g:
            break
    return e, g


def _close(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    return a.shape == b.shape and np.allclose(a, b, atol=atol, rtol=1e-6, equal_nan=True)


def check_value(answer, expected, what: str, mistakes: dict | None = None,
                atol: float = 1e-4, hint: str = "") -> Verdict:
    """Compare answer with expected; if wrong, name the mistake whose value it matches.

    mistakes: {key: value} or {key: (value, label, explanation)}; a plain key uses MISTAKES.
    A mistake whose value is within atol of expected is never named: it is not a mistake here.
    """
    if _is_unanswered(answer):
        return _unanswered(what)
    a, e = _as_float(answer), np.asarray(expected, dtype=float)
    if a is None:
        return Verdict(WRONG, f"Your {what} is a {type(answer).__name__}, not numbers; "
                              f"expected an array of shape {e.shape}.")
    if _close(a, e, atol):
        return _correct(what, e, atol)
    for key, spec in (mistakes or {}).items():
        value, label, why = (spec if isinstance(spec, tuple) else (spec, *MISTAKES[key]))
        v = np.asarray(value, dtype=float)
        if _close(a, v, atol) and not _close(v, e, atol):
            return Verdict(MISTAKE, f"Not quite: this is the classic mistake \"{label}\". "
                                    f"{_sentence(why)}", key)
    if a.shape != e.shape:
        return Verdict(WRONG, f"Wrong shape: your {what} has shape {a.shape}, expected "
                              f"{e.shape}. {hint}".rstrip())
    return _wrong(a, e, what, atol, hint)


def _correct(what: str, e: np.ndarray, atol: float) -> Verdict:
    """A number is quoted back; for an array, its shape."""
    if e.ndim == 0:
        value = f"{float(e):.6g}" if abs(e) < 1e6 else f"{float(e):.10g}"
        return Verdict(CORRECT, f"Correct: the {what} is {value} (within {_fmt_tol(atol)}).")
    return Verdict(CORRECT, f"Correct: your answer for the {what} matches attention_core "
                            f"(shape {e.shape}, within {_fmt_tol(atol)}).")


def _wrong(a: np.ndarray, e: np.ndarray, what: str, atol: float, hint: str) -> Verdict:
    """Where the answer is furthest off (a NaN counts as infinitely far), shown so the numbers differ."""
    with np.errstate(invalid="ignore"):  # inf - inf: equal infinities are not off at all
        diff = np.where((a == e) | (np.isnan(a) & np.isnan(e)), 0.0, np.abs(a - e))
    diff = np.where(np.isnan(diff), np.inf, diff)
    idx = tuple(int(i) for i in np.unravel_index(np.argmax(diff), diff.shape))
    expected, got = _fmt_pair(float(e[idx]), float(a[idx]))
    tolerance = f"answers within {_fmt_tol(atol)} count as correct"
    if e.ndim == 0:
        return Verdict(WRONG, f"Not quite: your answer for the {what} is {got}, expected {expected} "
                              f"({tolerance}). {hint}".rstrip())
    return Verdict(WRONG, f"Not quite: your answer for the {what} differs from attention_core by up to "
                          f"{float(diff[idx]):.3g} at index {idx} (expected {expected}, got {got}; "
                          f"{tolerance}). {hint}".rstrip())


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
    out["transposed_weights"] = np.swapaxes(right, -1, -2)  # A^T, (..., m, n)
    if mask is None:  # the weights of K Q^T, (..., m, n): softmax over the queries
        out["transposed_scores"] = ac.softmax(np.swapaxes(S, -1, -2) / np.sqrt(d_k), axis=-1)
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
    right = ac.attention_weights(Q, K, mask)
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
            return Verdict(MISTAKE, f"Not quite: {got} is the {label}. {_sentence(why)}", key)
    return Verdict(WRONG, f"Not quite: W_O has shape (h*d_v, d_model) = {right}, you gave {got}.")


def check_multi_head(answer, X, W_Q, W_K, W_V, W_O, num_heads: int, mask=None) -> Verdict:
    """Check a multi-head self-attention output (n, d_model).

    Recognises leaving out W_O, scaling every head by sqrt(d_model) or sqrt(h*d_k) instead of
    sqrt(d_k), and not splitting into heads (one head of width h*d_k).
    """
    def mha(W_Q=W_Q, h=num_heads):
        return _concat_heads(X, W_Q, W_K, W_V, h, mask) @ np.asarray(W_O, dtype=float)

    h, d_model, width = num_heads, np.shape(X)[-1], np.shape(W_Q)[1]  # width = h*d_k
    d_k = width // h
    right, _ = ac.multi_head_attention(X, X, W_Q, W_K, W_V, W_O, h, mask)
    mistakes = {"no_W_O": _concat_heads(X, W_Q, W_K, W_V, h, mask)}
    both = "sqrt(d_model) = sqrt(h*d_k)" if width == d_model else "sqrt(d_model)"
    for key, D, scale in (("mha_scaled_by_d_model", d_model, both),
                          ("mha_scaled_by_h_d_k", width, "sqrt(h*d_k)")):
        # dividing the scores by sqrt(D) instead of sqrt(d_k) = multiplying W_Q by sqrt(d_k / D)
        mistakes[key] = (mha(W_Q=np.asarray(W_Q, dtype=float) * np.sqrt(d_k / D)),
                         f"scaling every head by {scale}",
                         f"each head compares queries and keys of width d_k = {d_k}, so each "
                         f"head divides its scores by sqrt(d_k) = sqrt({d_k}), not by "
                         f"{scale} = sqrt({D}).")
    mistakes["mha_not_split"] = (
        mha(h=1), "one head of width h*d_k (no split into heads)",
        f"split Q, K and V into h = {h} heads of width d_k = {d_k} (ac.split_heads), run "
        f"attention in each head on its own, then concatenate. One head of width h*d_k = {width} "
        "has one softmax per query, so every feature is mixed with the same weights instead of "
        "each head choosing its own.")
    return check_value(answer, right, "multi-head output", mistakes)


def _concat_heads(X, W_Q, W_K, W_V, h: int, mask=None) -> np.ndarray:
    """Concat(head_1..head_h), shape (n, h*d_v): multi-head self-attention before W_O."""
    X = np.asarray(X, dtype=float)
    Q, K, V = (ac.split_heads(X @ np.asarray(W, dtype=float), h) for W in (W_Q, W_K, W_V))
    if mask is not None and np.ndim(mask) >= 2:
        mask = np.asarray(mask, dtype=float)[..., None, :, :]  # (..., 1, n, m): every head
    return ac.merge_heads(ac.scaled_dot_product_attention(Q, K, V, mask)[0])  # (..., n, h*d_v)


# ==========================================================================
# Notebook-specific checks (one section per notebook, in course order)
# ==========================================================================

# --- 01 Q, K, V projections -------------------------------------------------

QKV_SHAPE_MISTAKES = {
    "weight_shapes": (
        "the shapes of the weight matrices",
        "(d_model, d_k), (d_model, d_k), (d_model, d_v) are W_Q, W_K, W_V; Q = X W_Q has one "
        "row per token, so Q and K are (n, d_k) and V is (n, d_v)."),
    "V_uses_d_k": (
        "V with width d_k",
        "V = X W_V takes its width from W_V, which is (d_model, d_v): V is (n, d_v), and d_v "
        "need not equal d_k."),
    "column_convention": (
        "the column (transposed) convention",
        "this course uses row vectors: each token is a ROW, so Q = X W_Q is (n, d_k), not (d_k, n)."),
    "no_projection": (
        "the width of X",
        "the projections change the width: X is (n, d_model), but Q, K are (n, d_k) and V is "
        "(n, d_v)."),
}


def check_qkv_shapes(answer, n: int, d_model: int, d_k: int, d_v: int) -> Verdict:
    """Check the shapes of (Q, K, V) = (X W_Q, X W_K, X W_V): ((n, d_k), (n, d_k), (n, d_v))."""
    if _is_unanswered(answer):
        return _unanswered("three shapes, as (shape_Q, shape_K, shape_V)")
    try:
        got = tuple(tuple(int(x) for x in shape) for shape in answer)
    except (TypeError, ValueError):
        return Verdict(WRONG, "Give three shapes as a tuple of tuples, e.g. ((1, 2), (1, 2), "
                              f"(1, 3)); got {answer!r}.")
    right = ((n, d_k), (n, d_k), (n, d_v))
    if got == right:
        return Verdict(CORRECT, f"Correct: Q and K are (n, d_k) = {right[0]}, V is (n, d_v) = "
                                f"{right[2]}.")
    wrongs = {"weight_shapes": ((d_model, d_k), (d_model, d_k), (d_model, d_v)),
              "V_uses_d_k": ((n, d_k), (n, d_k), (n, d_k)),
              "column_convention": ((d_k, n), (d_k, n), (d_v, n)),
              "no_projection": ((n, d_model),) * 3}
    for key, shapes in wrongs.items():
        if got == shapes:
            label, why = QKV_SHAPE_MISTAKES[key]
            return Verdict(MISTAKE, f"Not quite: {got} are {label}. {_sentence(why)}",
                           key)
    return Verdict(WRONG, f"Not quite: expected {right} for (Q, K, V), you gave {got}.")


def check_symmetric_scores(answer) -> Verdict:
    """True/False question: with Q = K (one projection for both), is S = Q K^T always symmetric?"""
    if _is_unanswered(answer):
        return _unanswered("answer, True or False")
    if not isinstance(answer, (bool, np.bool_)):
        return Verdict(WRONG, f"Answer with True or False, got {answer!r}.")
    why = ("S^T = (Q Q^T)^T = Q Q^T = S, so token i scores token j exactly as j scores i. "
           "With separate W_Q and W_K, S = X W_Q W_K^T X^T is symmetric for every X only if "
           "W_Q W_K^T is.")
    if answer:
        return Verdict(CORRECT, f"Correct: {why}")
    return Verdict(WRONG, f"Not quite: it is always symmetric. {why}")


def check_library_weights(answer, q, keys) -> Verdict:
    """Check one query's weights softmax(q K^T / sqrt(d_k)) over m books: shape (m,) or (1, m).

    Recognises the classic mistakes (no scaling, dividing by d_k, scaling after softmax, softmax
    over the wrong axis), leaving out the softmax, picking one of the best books instead of
    mixing, and sharing the weight equally among tied best books (a hard maximum).
    """
    q = np.asarray(q, dtype=float)[None, :]  # (1, d_k)
    keys = np.asarray(keys, dtype=float)  # (m, d_k)
    d_k = q.shape[-1]
    right = ac.attention_weights(q, keys)[0]  # (m,)
    a = _as_float(answer)
    if a is not None and a.shape == (1, len(right)):
        answer = a[0]  # the row that q[None, :] @ K^T leads to: the same m weights
    mistakes = {k: w[0] for k, w in _weight_mistakes(q, keys).items() if w.shape == (1, len(right))}
    mistakes.update(_best_book_mistakes(answer, right))
    mistakes["no_softmax"] = (
        (q @ keys.T)[0] / np.sqrt(d_k), "the scaled scores without the softmax",
        "the scaled scores q k_j^T / sqrt(d_k) still have to go through the softmax to become "
        "positive weights that sum to 1.")
    return check_value(answer, right, "weights over the books", mistakes, atol=1e-3)


def _best_book_mistakes(answer, right: np.ndarray) -> dict:
    """All weight on one of the best books (the one the answer favours), or shared among them."""
    m = len(right)
    top = np.flatnonzero(np.isclose(right, right.max(), rtol=1e-9, atol=0.0))  # tied best books
    a = _as_float(answer)
    picked = top[np.argmax(a[top])] if a is not None and a.shape == (m,) else top[0]
    tie = f" (here {len(top)} books tie for the best score)" if len(top) > 1 else ""
    out = {"picked_one_book": (
        np.eye(m)[picked], "picking the single best book",
        f"attention does not choose one book{tie}: it mixes all of them, each with weight "
        "softmax(q k_j / sqrt(d_k)) > 0.")}
    if len(top) > 1:
        out["hard_max"] = (
            np.isin(np.arange(m), top) / len(top), "the hard maximum (argmax) instead of the softmax",
            f"sharing the weight equally among the {len(top)} best books is what a hard maximum "
            "does: the softmax of scores scaled up without limit. Softmax is a SOFT maximum: the "
            "best books get the most, but every book, even a weaker match, keeps a weight "
            "exp(s_j / sqrt(d_k)) / sum_l exp(s_l / sqrt(d_k)) > 0.")
    return out


# --- 02 The worked 3x2 example ----------------------------------------------

def _row_mistakes(Q, K, i: int) -> dict:
    """Row i of the weights each classic mistake gives, plus the by-hand slips of one row."""
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    S = Q @ K.T  # (n, d_k) @ (d_k, m) -> (n, m)
    scaled = S / np.sqrt(Q.shape[-1])
    rows = {key: w[i] for key, w in _weight_mistakes(Q, K).items() if w.shape == S.shape}
    rows["softmax_wrong_axis"] = (rows["softmax_wrong_axis"], *_column_slip(S, i))
    rows["exp_not_normalised"] = (
        np.exp(scaled[i]), "exp() without dividing by the sum",
        "softmax divides each exp(s~_ij) by the row's sum so the weights add up to 1.")
    rows["no_softmax"] = (
        scaled[i], "the scaled scores without the softmax",
        "the scaled scores s~_ij = s_ij / sqrt(d_k) still go through exp and the division "
        "by the row sum.")
    return rows


def _column_slip(S: np.ndarray, i: int) -> tuple[str, str]:
    """(label, why) of a column softmax; when S is symmetric, that is also column i of A."""
    why = ("each weight must be divided by the sum over its ROW (the same query, all keys): "
           "a_ij = exp(s~_ij) / sum_l exp(s~_il)")
    if S.shape[0] != S.shape[1] or not np.allclose(S, S.T):
        return "softmax down the columns", why + "; yours divides by a column sum."
    return (f"softmax down the columns (or column {i + 1} of A)",
            why + ". Yours either divides by a column sum or reads column "
                  f"{i + 1} of A instead of row {i + 1}: S is symmetric here, so both slips "
                  "give the same numbers.")


def check_weight_row(answer, Q, K, i: int) -> Verdict:
    """Check row i of A = softmax(Q K^T / sqrt(d_k)) (0-based i), diagnosing the classic slips."""
    A = ac.attention_weights(Q, K)
    return check_value(answer, A[i], f"weights of query row {i + 1}", _row_mistakes(Q, K, i),
                       atol=1e-3, hint="Compute s_ij = q_i k_j^T, divide by sqrt(d_k), "
                                       "then softmax over j.")


def check_output_row(answer, Q, K, V, i: int) -> Verdict:
    """Check o_i = sum_j a_ij v_j (0-based i), diagnosing weight slips and mixing the wrong rows."""
    output, A = ac.scaled_dot_product_attention(Q, K, V)
    V, K = np.asarray(V, dtype=float), np.asarray(K, dtype=float)
    mistakes = {}
    for key, spec in _row_mistakes(Q, K, i).items():
        if key in ("no_softmax", "exp_not_normalised"):
            continue  # not weights; their "outputs" would only confuse
        value, label, why = spec if isinstance(spec, tuple) else (spec, *MISTAKES[key])
        mistakes[key] = (np.asarray(value) @ V, label, why)
    mistakes["mixed_keys"] = (A[i] @ K, "mixing the keys instead of the values",
                              "the weights decide HOW MUCH of each token to take; what is "
                              "taken is the value v_j, not the key k_j.")
    mistakes["plain_mean"] = (V.mean(axis=0), "the plain average of the values",
                              "the values are averaged WITH the attention weights a_ij, "
                              "not with equal weights 1/m.")
    return check_value(answer, output[i], f"output o_{i + 1}", mistakes, atol=1e-3,
                       hint="o_i = a_i1 v_1 + a_i2 v_2 + a_i3 v_3.")


# --- 03 Scaling and softmax saturation -------------------------------------

def check_dot_product_variance(answer, d_k: int, scaled: bool = False) -> Verdict:
    """Check Var[q.k] = d_k (scaled=False) or Var[q.k / sqrt(d_k)] = 1 (scaled=True), entries i.i.d. (0, 1)."""
    what = "Var[q.k / sqrt(d_k)]" if scaled else "Var[q.k]"
    if scaled:
        expected = 1.0
        mistakes = {
            "scale_not_applied": (d_k, "the variance before scaling",
                                  "dividing q.k by sqrt(d_k) divides its variance by "
                                  "(sqrt(d_k))^2 = d_k, so d_k becomes 1."),
            "variance_scaled_by_sqrt": (np.sqrt(d_k), "dividing the variance by sqrt(d_k) once",
                                        "Var[X / c] = Var[X] / c^2: with c = sqrt(d_k) the "
                                        "variance d_k is divided by d_k, not by sqrt(d_k)."),
        }
    else:
        expected = float(d_k)
        mistakes = {
            "std_for_variance": (np.sqrt(d_k), "the standard deviation sqrt(d_k)",
                                 "the variance of a sum of d_k independent terms q_i k_i, each "
                                 "of variance 1, is d_k; sqrt(d_k) is its standard deviation."),
            "variance_is_one": (1.0, "the variance after scaling",
                                "each term q_i k_i has variance 1, but there are d_k of them and "
                                "the variances of independent terms add up: Var[q.k] = d_k."),
        }
    if not _is_unanswered(answer) and np.ndim(answer) != 0:
        return Verdict(WRONG, f"Give {what} as a single number, got shape {np.shape(answer)}.")
    return check_value(answer, expected, f"{what} for d_k = {d_k}", mistakes)


WHY_SCALE_CHOICES = {
    "a": "it makes q and k unit-length vectors",
    "b": "it keeps the variance of the scores at 1, so the softmax does not saturate as d_k grows",
    "c": "it makes each row of attention weights sum to 1",
}


def check_why_scale(answer) -> Verdict:
    """Multiple choice: why divide the scores by sqrt(d_k)? (see WHY_SCALE_CHOICES)."""
    if _is_unanswered(answer):
        return _unanswered('choice ("a", "b" or "c")')
    choice = str(answer).strip().lower()
    if choice == "b":
        return Verdict(CORRECT, "Correct: Var[q.k] = d_k, so the raw scores spread like sqrt(d_k) and "
                                "push the softmax into saturation; dividing by sqrt(d_k) brings "
                                "the variance back to 1 for every d_k.")
    if choice == "a":
        return Verdict(MISTAKE, "Not quite: that is the myth 'it only normalises vector length'. "
                                "Dividing the score by sqrt(d_k) leaves q and k as they are (their "
                                "length is about sqrt(d_k) each, and q.k / sqrt(d_k) is not a "
                                "cosine); it fixes the spread of the scores, Var = 1.",
                       "only_normalises_length")
    if choice == "c":
        return Verdict(MISTAKE, "Not quite: the softmax already makes every row sum to 1, with or "
                                "without the scale. The scale changes how peaked the row is.",
                       "scale_for_row_sums")
    return Verdict(WRONG, f'Answer with one letter, "a", "b" or "c"; got {answer!r}.')


# --- 04 Masking -------------------------------------------------------------

def check_causal_mask(answer, n: int) -> Verdict:
    """Check an additive causal mask (n, n): 0 on and below the diagonal, -inf above."""
    right = ac.causal_mask(n)
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    mistakes = {
        "mask_lower_triangle": (right.T, "a mask that hides the past",
                                "query i may see keys j <= i: the -inf entries belong ABOVE "
                                "the diagonal (np.triu(..., k=1)), not below it."),
        "mask_hides_diagonal": (np.where(np.triu(np.ones((n, n), dtype=bool)), -np.inf, 0.0),
                                "a mask that also hides the diagonal",
                                "every position may attend to itself; use k=1 in np.triu so "
                                "the diagonal stays 0 (otherwise row 0 blocks every key)."),
        "mask_multiplicative": ((~future).astype(float), "a 0/1 (multiplicative) mask",
                                "our masks are ADDED to the scores: 0 where a key may be seen, "
                                "-inf where it may not. A 1/0 mask added to the scores hides nothing."),
        "mask_boolean_blocked": (future.astype(float), "a True/False 'is blocked' matrix",
                                 "turn it into an additive mask: np.where(blocked, -np.inf, 0.0)."),
        "mask_large_negative": (np.where(future, -1e9, 0.0), "a finite -1e9 instead of -inf",
                                "here it gives the same weights, but on a row that is blocked "
                                "everywhere -1e9 silently gives uniform weights instead of an "
                                "error; use -np.inf."),
        "mask_finfo_min": (np.where(future, np.finfo(float).min, 0.0),
                           "np.finfo(float).min instead of -inf",
                           "the most negative float is still finite: here it gives the same "
                           "weights, but on a row that is blocked everywhere it silently gives "
                           "uniform weights instead of an error; use -np.inf."),
        "mask_times_inf": (np.where(future, -np.inf, np.nan), "multiplying by -inf",
                           "0 x -inf is NaN, not 0: np.triu(np.ones((n, n)), 1) * -np.inf puts "
                           "NaN on and below the diagonal, and one NaN turns a whole softmax row "
                           "into NaN. Use np.where(blocked, -np.inf, 0.0)."),
    }
    return check_value(answer, right, f"causal mask for n = {n}", mistakes)


# --- 05 Multi-head attention -----------------------------------------------

def _count_in_quotes(answer: str) -> Verdict:
    """A count typed as a string: say so, and show the number if the string holds one."""
    try:
        number = int(answer.replace(",", "").replace("_", "").strip())
    except ValueError:
        return Verdict(WRONG, f"Your answer {answer!r} is a string (text in quotes); give the "
                              "count as a number, without quotes.")
    return Verdict(WRONG, f"Your answer {answer!r} is a string (text in quotes), not a number; "
                          f"write it without quotes: answer = {number}.")


def check_mha_param_count(answer, d_model: int, h: int) -> Verdict:
    """Check the number of weights of one multi-head attention (no biases): 4 d_model^2.

    With d_k = d_v = d_model / h: W_Q, W_K, W_V are (d_model, h*d_k) = (d_model, d_model)
    and W_O is (h*d_v, d_model) = (d_model, d_model), whatever h is.
    """
    if _is_unanswered(answer):
        return _unanswered("number of parameters (an integer)")
    if d_model % h:
        raise ValueError(f"h = {h} must divide d_model = {d_model}")
    d_k = d_v = d_model // h
    right = 4 * d_model * d_model
    mistakes = {
        "counted_h_times": (h * right, "counting every weight matrix h times",
                            f"the h heads SHARE the columns of W_Q, W_K, W_V: each head has "
                            f"(d_model, d_k) = ({d_model}, {d_k}) matrices, and h of them make one "
                            f"(d_model, h*d_k) = ({d_model}, {d_model}) matrix, not h of them."),
        "forgot_W_O": (3 * d_model * d_model, "forgetting W_O",
                       f"besides W_Q, W_K, W_V there is the output matrix W_O of shape "
                       f"(h*d_v, d_model) = ({d_model}, {d_model})."),
        "one_head_only": (3 * d_model * d_k + h * d_v * d_model, "counting one head's W_Q, W_K, W_V",
                          f"every one of the h = {h} heads has its own (d_model, d_k) blocks: "
                          f"together 3 * d_model * h*d_k = 3 * d_model^2, plus W_O."),
        "with_biases": (right + 4 * d_model, "adding biases",
                        "attention_core's multi_head_attention has no bias vectors (nor does this "
                        "question); with a bias after each of the four matrices you would add "
                        "4 * d_model, but count only the weight matrices here."),
    }
    if isinstance(answer, str):
        return _count_in_quotes(answer)
    if not isinstance(answer, (int, np.integer, float, np.floating)) or isinstance(answer, bool):
        return Verdict(WRONG, f"Give the count as one integer, got {answer!r}.")
    for key, (value, label, why) in mistakes.items():
        if answer == value and value != right:
            return Verdict(MISTAKE, f"Not quite: {int(answer)} is what {label} gives. "
                                    f"{_sentence(why)}", key)
    if answer == right:
        return Verdict(CORRECT, f"Correct: 4 * d_model^2 = {right} weights, the same for every h "
                                f"(here h = {h}, d_k = d_v = {d_k}).")
    return Verdict(WRONG, f"Not quite: you gave {answer!r}. Add up the sizes of W_Q, W_K, W_V "
                          f"(d_model, h*d_k) and W_O (h*d_v, d_model) with d_k = d_v = d_model/h.")


# --- 06 Positional encoding ------------------------------------------------

def check_pe_entry(answer, pos: int, dim: int, d_model: int) -> Verdict:
    """Check one entry PE(pos, dim): sin(pos / 10000^(2i/d_model)) at dim = 2i, cos(...) at 2i+1."""
    if not 0 <= dim < d_model:
        raise ValueError(f"dim must be in 0..d_model-1 = 0..{d_model - 1}, got {dim}")
    i = dim // 2  # the pair index: dim = 2i or 2i+1
    right_fn, wrong_fn = (np.sin, np.cos) if dim % 2 == 0 else (np.cos, np.sin)
    angle = pos / 10000.0 ** (2 * i / d_model)
    right = float(ac.sinusoidal_positional_encoding(pos + 1, d_model)[pos, dim])
    mistakes = {
        "pe_swapped_sin_cos": (wrong_fn(angle), "swapping sin and cos",
                               "even dimensions 2i get sin, odd dimensions 2i+1 get cos; "
                               f"dim = {dim} is {'even' if dim % 2 == 0 else 'odd'}."),
        "pe_exponent_i": (right_fn(pos / 10000.0 ** (i / d_model)), "the exponent i/d_model",
                          f"the exponent is 2i/d_model with the pair index i = {i} "
                          f"(here 2i/d_model = {2 * i}/{d_model}), not i/d_model."),
        "pe_exponent_dim": (right_fn(pos / 10000.0 ** (dim / d_model)),
                            "using the dimension index dim in place of 2i",
                            f"both dimensions of a pair share one frequency: dim = {dim} belongs to "
                            f"pair i = {i}, so the exponent is 2i/d_model = {2 * i}/{d_model}, "
                            f"not {dim}/{d_model}."),
        "pe_positions_from_1": (float(ac.sinusoidal_positional_encoding(pos + 2, d_model)[pos + 1, dim]),
                                "counting positions from 1",
                                "positions start at pos = 0 (the first token), as the rows of "
                                "ac.sinusoidal_positional_encoding do."),
    }
    i_up = (dim + 1) // 2  # ceil(dim / 2): the pair index rounded up
    rounded_up = right_fn(pos / 10000.0 ** (2 * i_up / d_model))
    if not any(np.isclose(rounded_up, v[0], atol=1e-4) for v in mistakes.values()):
        mistakes["pe_pair_index_rounded_up"] = (
            rounded_up, f"the pair index i = ceil(dim/2) = {i_up}",
            f"the pair index rounds DOWN: dim = {dim} = 2i + 1 gives i = dim // 2 = {i}, so "
            f"the exponent is 2i/d_model = {2 * i}/{d_model}, not {2 * i_up}/{d_model}.")
    return check_value(answer, right, f"PE(pos={pos}, dim={dim})", mistakes)


def check_permuted_output(answer, Y, perm) -> Verdict:
    """Check the self-attention output for permuted inputs X[perm] (no positional encoding): Y[perm]."""
    Y = np.asarray(Y, dtype=float)
    perm = np.asarray(perm)
    inverse = np.argsort(perm)
    mistakes = {
        "not_permuted": (Y, "the unpermuted output",
                         "self-attention without positions is permutation-EQUIVARIANT, not "
                         "invariant: the output rows move together with the input rows."),
        "inverse_permutation": (Y[inverse], "the inverse permutation",
                                "row r of the new input is X[perm[r]], so row r of the new "
                                "output is Y[perm[r]]: index with perm, not with argsort(perm)."),
    }
    return check_value(answer, Y[perm], "output for X[perm]", mistakes)


# --- 07 Feed-forward network -----------------------------------------------

MISTAKES.update({
    "ffn_no_biases": (
        "forgetting the biases",
        "FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 also learns b_1 (d_ff numbers) and b_2 "
        "(d_model numbers): the count is 2 d_model d_ff + d_ff + d_model."),
    "ffn_one_bias": (
        "counting only one of the two biases",
        "there are two bias vectors, b_1 of shape (d_ff,) and b_2 of shape (d_model,); "
        "count both."),
    "ffn_counted_like_attention": (
        "counting the FFN like attention (4 d_model^2)",
        "attention has four d_model x d_model matrices (W_Q, W_K, W_V, W_O); the FFN has two "
        "matrices, W_1 (d_model, d_ff) and W_2 (d_ff, d_model), with d_ff = 4 d_model, so "
        "2 d_model d_ff = 8 d_model^2, plus the biases d_ff + d_model."),
    "ffn_square_weights": (
        "using d_model x d_model weights",
        "the hidden layer is wider than the model: W_1 is (d_model, d_ff), not (d_model, d_model)."),
    "ffn_relu_after_W_2": (
        "the ReLU applied after W_2",
        "the ReLU acts on the d_ff hidden units, between the two linear maps: "
        "max(0, x W_1 + b_1), then W_2 and b_2. Applied at the end it clips the output "
        "to >= 0 and leaves the two linear maps joined into one."),
    "ffn_no_relu": (
        "leaving out the ReLU",
        "without max(0, .) the two layers collapse into a single linear map "
        "x (W_1 W_2) + (b_1 W_2 + b_2); the ReLU on the hidden units is the non-linearity."),
    "ffn_missing_b_1": (
        "a missing b_1",
        "add the hidden bias b_1 before the ReLU: max(0, x W_1 + b_1). It moves where each "
        "hidden unit switches on."),
    "ffn_missing_b_2": (
        "a missing b_2",
        "add the output bias b_2 at the very end: ... W_2 + b_2."),
})


def ffn_param_count(d_model: int, d_ff: int) -> int:
    """Number of learned numbers in the FFN: W_1, b_1, W_2, b_2 = 2 d_model d_ff + d_ff + d_model."""
    return 2 * d_model * d_ff + d_ff + d_model


def check_ffn_param_count(answer, d_model: int, d_ff: int) -> Verdict:
    """Check the FFN parameter count; recognise forgotten biases and the attention-like 4 d_model^2."""
    if _is_unanswered(answer):
        return _unanswered("parameter count (an integer)")
    if isinstance(answer, str):
        return _count_in_quotes(answer)
    try:
        got = int(answer)
    except (TypeError, ValueError):
        return Verdict(WRONG, f"Give the count as one integer, got {answer!r}.")
    if got != answer:
        return Verdict(WRONG, f"A parameter count is a whole number, got {answer!r}.")
    right = ffn_param_count(d_model, d_ff)
    if got == right:
        return Verdict(CORRECT, f"Correct: 2 d_model d_ff + d_ff + d_model = 2*{d_model}*{d_ff} + "
                                f"{d_ff} + {d_model} = {right:,}.")
    wrongs = {"ffn_no_biases": 2 * d_model * d_ff,
              "ffn_one_bias": (2 * d_model * d_ff + d_ff, 2 * d_model * d_ff + d_model),
              "ffn_counted_like_attention": (4 * d_model ** 2, 4 * d_model ** 2 + 4 * d_model),
              "ffn_square_weights": (2 * d_model ** 2 + 2 * d_model, 2 * d_model ** 2)}
    for key, values in wrongs.items():
        if got in np.atleast_1d(values):
            label, why = MISTAKES[key]
            return Verdict(MISTAKE, f"Not quite: {got:,} is what {label} gives. "
                                    f"{_sentence(why)}", key)
    return Verdict(WRONG, f"Not quite: you gave {got:,}. Count W_1 (d_model x d_ff), b_1 (d_ff), "
                          f"W_2 (d_ff x d_model) and b_2 (d_model) with d_model = {d_model}, "
                          f"d_ff = {d_ff}.")


def check_ffn_output(answer, X, W_1, b_1, W_2, b_2) -> Verdict:
    """Check FFN(X) = max(0, X W_1 + b_1) W_2 + b_2; recognise ReLU after W_2, no ReLU, missing biases."""
    X, W_1, b_1, W_2, b_2 = (np.asarray(a, dtype=float) for a in (X, W_1, b_1, W_2, b_2))
    right = ac.feed_forward(X, W_1, b_1, W_2, b_2)
    Z = X @ W_1 + b_1  # (n, d_ff) pre-activation
    mistakes = {"ffn_relu_after_W_2": ac.relu(Z @ W_2 + b_2),
                "ffn_no_relu": Z @ W_2 + b_2,
                "ffn_missing_b_1": ac.relu(X @ W_1) @ W_2 + b_2,
                "ffn_missing_b_2": ac.relu(Z) @ W_2}
    return check_value(answer, right, "FFN output", mistakes)


# --- 08 The Transformer block ----------------------------------------------

MISTAKES.update({
    "kv_from_decoder": (
        "taking K and V from the decoder",
        "in cross-attention (encoder-decoder attention) only the queries come from the decoder; "
        "the keys and values come from the encoder output (memory), so that every decoder "
        "position can read the source sentence. K and V from the decoder would just be the "
        "decoder's self-attention a second time."),
    "kv_from_encoder_input": (
        "taking K and V from the encoder's input embeddings",
        "K and V come from the encoder's OUTPUT (after its last layer), the same memory for "
        "every decoder layer, not from the source embeddings."),
    "cross_weights_transposed": (
        "the transposed shape",
        "rows are queries and columns are keys: the n decoder positions ask and the m encoder "
        "positions answer, so one head's weights are (n, m), each row summing to 1 over the "
        "m source positions; (m, n) is the transpose."),
    "cross_weights_square": (
        "a square shape",
        "only self-attention is square; cross-attention compares n decoder queries with m "
        "encoder keys, so its weights are (n, m)."),
    "layer_norm_columns": (
        "normalising the columns",
        "layer norm works on each token (row) separately: mean and variance over its d_model "
        "features, axis=-1. Normalising each feature over the positions (axis=0) mixes "
        "tokens, like batch norm over the sequence."),
    "layer_norm_unbiased_var": (
        "the unbiased variance (ddof=1)",
        "layer norm divides the sum of squares by d_model (biased variance: np.var's default, "
        "and what PyTorch's LayerNorm uses), not by d_model - 1."),
    "layer_norm_std_only": (
        "not subtracting the mean",
        "layer norm first centres each row, x - mean(x), then divides by sqrt(var + eps)."),
})


def check_cross_kv_source(answer, memory, decoder_states=(), encoder_input=None) -> Verdict:
    """Check which array feeds K and V of cross-attention: the encoder output `memory`.

    decoder_states: arrays that come from the decoder (its input, its self-attention output);
    encoder_input: the source embeddings before the encoder, if the learner may pick those.
    """
    if _is_unanswered(answer):
        return _unanswered("choice of the array that gives K and V")
    a = _as_float(answer)
    memory = np.asarray(memory, dtype=float)

    def same(x):
        x = np.asarray(x, dtype=float)
        return a is not None and a.shape == x.shape and np.allclose(a, x)

    if same(memory):
        return Verdict(CORRECT, f"Correct: K and V come from the encoder output (memory, shape "
                                f"{memory.shape} = (m, d_model)); only Q comes from the decoder.")
    for key, candidates in (("kv_from_decoder", decoder_states),
                            ("kv_from_encoder_input", () if encoder_input is None else (encoder_input,))):
        if any(same(x) for x in candidates):
            label, why = MISTAKES[key]
            return Verdict(MISTAKE, f"Not quite: that is {label}. {_sentence(why)}", key)
    return Verdict(WRONG, "Not quite: pick one of the arrays of the notebook (the decoder states "
                          "or the encoder output) as the source of K and V.")


def check_cross_weights_shape(answer, n: int, m: int, h: int | None = None) -> Verdict:
    """Check the shape of cross-attention weights: (n, m) for one head, (h, n, m) for all heads."""
    if _is_unanswered(answer):
        return _unanswered("shape, as a tuple")
    try:
        got = tuple(int(x) for x in answer)
    except (TypeError, ValueError):
        return Verdict(WRONG, f"Give the shape as a tuple of integers, got {answer!r}.")
    lead = () if h is None else (h,)
    right = (*lead, n, m)
    if got == right:
        return Verdict(CORRECT, f"Correct: {right} = ({'h, ' if h else ''}n, m): {n} decoder "
                                f"queries (rows) over {m} encoder keys (columns).")
    if h is None and len(got) == 3 and got[1:] == (n, m):
        return _head_axis_verdict(got, n, m)
    wrongs = {"cross_weights_transposed": [(*lead, m, n)],
              "cross_weights_square": [(*lead, n, n), (*lead, m, m)]}
    for key, shapes in wrongs.items():
        if got in shapes and got != right:
            label, why = MISTAKES[key]
            return Verdict(MISTAKE, f"Not quite: {got} is {label}. {_sentence(why)}", key)
    return Verdict(WRONG, f"Not quite: you gave {got}; think of rows = decoder queries (n = {n}) "
                          f"and columns = encoder keys (m = {m})"
                          + ("" if h is None else f", one such matrix per head (h = {h})") + ".")


def _head_axis_verdict(got: tuple, n: int, m: int) -> Verdict:
    """(h, n, m) or (1, n, m) given where one head's (n, m) was asked for."""
    if got[0] == 1:
        return Verdict(MISTAKE, f"Not quite: {got} has a leading 1, an extra axis of length one; "
                                f"one head's weights are the matrix (n, m) = {(n, m)}.",
                       "cross_weights_leading_1")
    return Verdict(MISTAKE, f"Not quite: {got} is the shape of all h = {got[0]} heads, (h, n, m); "
                            f"the question asks for one head, whose weights are (n, m) = {(n, m)}.",
                   "cross_weights_all_heads")


def check_layer_norm(answer, X, eps: float = 1e-5) -> Verdict:
    """Check LayerNorm(X) with gamma = 1, beta = 0; recognise columns, ddof=1, and no centring."""
    X = np.asarray(X, dtype=float)
    d_model = X.shape[-1]
    right = ac.layer_norm(X, np.ones(d_model), np.zeros(d_model), eps)
    mistakes = {
        "layer_norm_columns": (X - X.mean(axis=0)) / np.sqrt(X.var(axis=0) + eps),
        "layer_norm_unbiased_var": (X - X.mean(axis=-1, keepdims=True))
        / np.sqrt(X.var(axis=-1, ddof=1, keepdims=True) + eps),
        "layer_norm_std_only": X / np.sqrt(X.var(axis=-1, keepdims=True) + eps),
    }
    return check_value(answer, right, "layer norm of X", mistakes, atol=1e-4)


# --- 09 The cost of attention ----------------------------------------------

def _fmt_number(x: float) -> str:
    """12,345 for whole numbers, 134.218 otherwise."""
    return f"{int(round(x)):,}" if float(x).is_integer() else f"{x:,.6g}"


def _check_number(answer, expected: float, what: str, mistakes, rtol: float = 1e-3,
                  hint: str = "") -> Verdict:
    """One number against expected (relative tolerance rtol); mistakes: [(key, value, label, why)]."""
    if _is_unanswered(answer):
        return _unanswered(what)
    try:
        a = float(np.asarray(answer, dtype=float))
    except (TypeError, ValueError):
        return Verdict(WRONG, f"Give your {what} as one number, got {answer!r}.")
    if np.isclose(a, expected, rtol=rtol, atol=0.0):
        return Verdict(CORRECT, f"Correct: the {what} is {_fmt_number(expected)}.")
    for key, value, label, why in mistakes:
        if not np.isclose(value, expected, rtol=rtol, atol=0.0) and \
                np.isclose(a, value, rtol=rtol, atol=0.0):
            return Verdict(MISTAKE, f"Not quite: {_fmt_number(a)} is what {label} gives. "
                                    f"{_sentence(why)}", key)
    if rtol >= 1e-4 and np.isclose(a, expected, rtol=1e-2, atol=0.0):  # counts (rtol ~ 0) are exact
        return Verdict(WRONG, f"Close: {_fmt_number(a)} is within 1% of the {what}, but not within "
                              f"{rtol:.1%}: check the arithmetic, or give more digits "
                              "(3 decimals).")
    return Verdict(WRONG, f"Not quite: you gave {_fmt_number(a)}. {hint}".rstrip())


def check_score_entries(answer, n: int, h: int = 1, d_k: int = 64) -> Verdict:
    """Number of score entries of multi-head self-attention: h * n * n (one per head, query, key)."""
    right = ac.attention_cost(n, d_k=d_k, h=h)["score_entries"]
    heads = " per head" if h > 1 else ""
    mistakes = [
        ("forgot_heads", n * n, "one head only (n*n)",
         f"every head has its own n x n score matrix, so multiply by h = {h}."),
        ("size_of_Q", h * n * d_k, "the size of Q (h*n*d_k)",
         "n*d_k counts the numbers in Q or K; the score matrix has one entry per "
         f"(query, key) pair{heads}: n*n, whatever d_k is."),
        ("size_of_Q", n * d_k, "the size of one head's Q (n*d_k)",
         "n*d_k counts the numbers in Q or K; the score matrix has one entry per "
         "(query, key) pair: n*n per head, whatever d_k is."),
        ("linear_in_n", h * 2 * n, "adding the positions (2n per head)",
         "queries and keys are paired, not added: n queries times n keys = n*n pairs per head."),
        ("linear_in_n", 2 * n, "adding the positions (2n)",
         "queries and keys are paired, not added: n queries times n keys = n*n pairs per head, "
         f"times h = {h} heads."),
    ]
    return _check_number(answer, right, "number of score entries", mistakes, rtol=1e-9,
                         hint="Count one entry per head, query position and key position.")


def check_score_mib(answer, n: int, h: int = 1) -> Verdict:
    """Memory of the float64 score matrix (h, n, n) in MiB (1 MiB = 2**20 bytes)."""
    num_bytes = ac.attention_cost(n, h=h, bytes_per_number=8)["score_bytes"]
    entries = h * n * n
    mistakes = [
        ("float32_bytes", num_bytes / 2 / 2 ** 20, "4 bytes per number (float32)",
         "numpy's default float is float64, 8 bytes per number; 4 bytes is float32."),
        ("megabytes", num_bytes / 1e6, "megabytes (MB, 10**6 bytes)",
         "the question asks for MiB: 1 MiB = 2**20 = 1,048,576 bytes, a little more than "
         "1 MB = 1,000,000 bytes, so the MiB number is smaller."),
        ("float32_bytes", num_bytes / 2 / 1e6, "4 bytes per number and MB",
         "float64 takes 8 bytes per number, and 1 MiB = 2**20 bytes (not 10**6)."),
        ("bytes_not_mib", num_bytes, "leaving the answer in bytes",
         "that is the number of bytes; divide by 2**20 = 1,048,576 to get MiB."),
        ("entries_not_bytes", entries / 2 ** 20, "counting entries instead of bytes",
         "each float64 entry takes 8 bytes; multiply the entries by 8 before dividing by 2**20."),
        ("gib_not_mib", num_bytes / 2 ** 30, "GiB (2**30 bytes)",
         "that is the size in GiB; the question asks for MiB (2**20 bytes)."),
    ]
    return _check_number(answer, num_bytes / 2 ** 20, "float64 score matrix size in MiB",
                         mistakes, rtol=2e-3,
                         hint="Entries (h*n*n) times 8 bytes, divided by 2**20.")


def check_growth_ratio(answer, factor: float = 2) -> Verdict:
    """How many times the score memory (and time) grows when n grows by `factor`: factor**2."""
    mistakes = [
        ("linear_growth", factor, f"linear growth ({_fmt_number(factor)}x)",
         f"there is one score per (query, key) pair: {_fmt_number(factor)}x the queries times "
         f"{_fmt_number(factor)}x the keys is {_fmt_number(factor ** 2)}x the pairs."),
        ("cubic_growth", factor ** 3, f"cubic growth ({_fmt_number(factor ** 3)}x)",
         "the score matrix has two axes (queries and keys), so it grows with the square of n."),
    ]
    return _check_number(answer, factor ** 2, f"growth factor for {_fmt_number(factor)}x n",
                         mistakes, rtol=1e-9, hint="Think of the (n, n) grid of pairs.")


def check_online_sum(answer, r: float, l: float, s_block) -> Verdict:
    """Running softmax sum after one more block: l' = l exp(r - r') + sum_j exp(s_j - r'), r' = max(r, max s)."""
    s = np.asarray(s_block, dtype=float)
    r_new = max(r, float(s.max()))
    new_terms = float(np.exp(s - r_new).sum())
    right = l * np.exp(r - r_new) + new_terms
    mistakes = [
        ("no_rescale", l + new_terms, "adding without rescaling the old sum",
         "the old sum l was measured against the old maximum r; when the maximum rises to r' "
         "every old term exp(s - r) must become exp(s - r'), so multiply l by exp(r - r')."),
        ("rescale_inverted", l * np.exp(r_new - r) + new_terms, "rescaling by exp(r' - r)",
         "the factor is exp(r - r') <= 1: the old terms shrink when the maximum rises."),
        ("old_max_kept", l + float(np.exp(s - r).sum()), "keeping the old maximum r",
         "the new running maximum is r' = max(r, max s); measure every term, old and new, "
         "against r' so no exp() can overflow."),
    ]
    return _check_number(answer, right, "running sum l'", mistakes, rtol=1e-3,
                         hint="Update the maximum first, then rescale l and add the new terms.")
