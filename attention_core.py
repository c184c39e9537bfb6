"""attention_core: the attention mechanism of the Transformer, in readable numpy.

Read top to bottom in the order of the course:

1. softmax                              (notebooks 02, 03)
2. scaled dot-product attention         (notebooks 01-04)
3. masks                                (notebook 04)
4. multi-head attention                 (notebook 05)
5. sinusoidal positional encoding       (notebook 06)
6. feed-forward network, layer norm     (notebook 07)
7. encoder and decoder layers           (notebook 08)
8. cost counts and tiled attention      (notebook 09)

Conventions (the same in every notebook):

- Row vectors, as in PyTorch: X has shape (n, d_model) and Q = X @ W_Q.
- n query positions, m key positions (m = n in self-attention), d_model,
  d_k (query/key width), d_v (value width), h heads, d_ff (FFN width).
- Leading batch dimensions "..." are allowed wherever they make sense.
- Masks are additive: softmax(Q K^T / sqrt(d_k) + M) with M = 0 where a key
  may be seen and M = -inf where it may not. Boolean and 0/1 masks are refused
  (PyTorch reads True both ways, depending on the function); the error says how
  to convert them. A mask broadcasts to the scores (..., n, m) without enlarging
  them, and multi-head attention uses the same mask for every head.

Bad input raises ValueError naming the argument and the shapes or values it got,
and so does a result that float64 cannot hold (an overflow): never a NaN, an
inf or a warning in place of an answer.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

__all__ = [
    "softmax", "AttentionSteps", "attention_steps", "attention_weights",
    "scaled_dot_product_attention",
    "causal_mask", "padding_mask", "split_heads", "merge_heads", "multi_head_attention",
    "sinusoidal_positional_encoding", "positional_shift_matrix", "relu", "feed_forward",
    "layer_norm", "AttentionParams", "FFNParams", "LayerNormParams", "EncoderLayerParams",
    "DecoderLayerParams", "init_attention_params", "init_ffn_params", "init_encoder_layer",
    "init_decoder_layer", "encoder_layer", "decoder_layer", "encode", "decode",
    "attention_cost", "tiled_attention",
    "softmax_backward", "attention_backward", "MultiHeadGrads", "multi_head_attention_backward",
    "layer_norm_backward", "feed_forward_backward", "embedding", "embedding_backward",
    "softmax_cross_entropy", "AdamState", "adam_init", "adam_step", "LMConfig", "init_lm",
    "LMSteps", "lm_forward", "lm_backward",
]


# --------------------------------------------------------------------------
# 0. Input checks (shared by everything below)
# --------------------------------------------------------------------------

def _as_numbers(name: str, x) -> np.ndarray:
    """x as a float64 array if it holds real numbers (bool, int or float); else ValueError.

    Strings are not read as numbers, and complex numbers do not quietly lose their
    imaginary part: both are refused.
    """
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name} must be an array of numbers, got {type(x).__name__}: {e}") from None
    kind = a.dtype.kind
    if kind == "c":
        raise ValueError(f"{name} must hold real numbers, got complex values (dtype {a.dtype}, "
                         f"shape {a.shape}); attention here is defined for real inputs only")
    if kind == "O" and all(isinstance(v, numbers.Real) for v in a.flat):
        kind = "f"  # e.g. a list of Fractions: real numbers that numpy keeps as objects
    if kind not in "biuf":
        raise ValueError(f"{name} must be an array of numbers, got dtype {a.dtype} "
                         f"(shape {a.shape}): {np.ravel(a)[:3].tolist()!r}")
    return a.astype(float, copy=False)


def _as_array(name: str, x, min_ndim: int = 0) -> np.ndarray:
    """Turn x into a float array; reject non-numbers, NaN, +-inf and too few dimensions."""
    a = _as_numbers(name, x)
    if a.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise ValueError(f"{name} contains {a[bad]} at index {bad} (shape {a.shape}); "
                         "inputs must be finite")
    return a


def _positive_int(name: str, value) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _finite_real(name: str, value) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


_BOOL_MASK_HELP = (
    "attention_core only takes ADDITIVE masks: 0 where a key may be seen, -inf where it may "
    "not. A boolean mask is ambiguous: PyTorch uses True = may attend in "
    "F.scaled_dot_product_attention but True = may NOT attend in nn.MultiheadAttention "
    "(attn_mask, key_padding_mask). Convert it: np.where(allowed, 0.0, -np.inf) if True "
    "means 'may attend', or np.where(blocked, -np.inf, 0.0) if True means 'may not'")


def _as_mask(mask, target_shape: tuple[int, ...], name: str = "mask",
             per_head_hint: bool = False) -> np.ndarray:
    """Check an additive mask: finite or -inf values, broadcastable to target_shape (..., n, m)
    without enlarging it (no new batch entries, no new axes)."""
    if np.asarray(mask).dtype == bool:
        raise ValueError(f"{name} is boolean (shape {np.shape(mask)}); {_BOOL_MASK_HELP}")
    M = _as_numbers(name, mask)
    top = np.max(M) if M.size else 0.0  # NaN and +inf show up here: one pass over the mask
    if np.isnan(top) or top == np.inf:
        bad = tuple(int(i) for i in np.argwhere(np.isnan(M) | (M == np.inf))[0])
        raise ValueError(f"{name} may only hold finite numbers (0 = may attend) and -inf "
                         f"(may not); it contains NaN or +inf: {M[bad]} at index {bad} "
                         f"(shape {M.shape})")
    if top == 1 and np.all((M == 0) | (M == 1)):
        raise ValueError(f"{name} holds only 0 and 1 (shape {M.shape}): that is an indicator "
                         f"mask, and adding 1 to a score blocks nothing; {_BOOL_MASK_HELP}")
    try:
        full = np.broadcast_shapes(M.shape, target_shape)
    except ValueError:
        raise ValueError(f"{name} of shape {M.shape} does not broadcast to the scores' shape "
                         f"{target_shape} (..., n, m)") from None
    if full != target_shape:
        hint = ("; multi-head attention uses the same mask for every head: a per-head mask "
                "(..., h, n, m) is not supported (run scaled_dot_product_attention on each "
                "head instead)" if per_head_hint else "")
        raise ValueError(f"{name} of shape {M.shape} would enlarge the scores' shape "
                         f"{target_shape} to {full}; a mask must broadcast to (..., n, m) "
                         f"without adding axes or batch entries (its axes must match the "
                         f"scores' or be 1){hint}")
    return M


def _row_list(rows: np.ndarray) -> tuple[str, str]:
    """'s' or '' and the first few indices of the True entries of rows, as text."""
    idx = [tuple(int(i) for i in r) for r in np.argwhere(rows)]
    where = ", ".join(map(str, idx[:5])) + (f" and {len(idx) - 5} more" if len(idx) > 5 else "")
    return ("s" if len(idx) > 1 else ""), where


def _raise_blocked(rows: np.ndarray, shape: tuple[int, ...], what: str) -> None:
    """rows (..., n) is True where every key of that query row is blocked."""
    s, where = _row_list(rows)
    raise ValueError(f"the {what} blocks every key for query row{s} {where} (index over "
                     f"(..., n) of scores with shape {shape}); softmax of a row that is -inf "
                     "everywhere is undefined (0/0)")


def _raise_overflow(rows: np.ndarray, shape: tuple[int, ...], Q, K, names, masked: bool) -> None:
    """rows (..., n) is True where the scores of that query row left float64's range."""
    s, where = _row_list(rows)
    q, k = names
    raise ValueError(f"{q} {k}^T overflowed: the scores{' + mask' if masked else ''} of query "
                     f"row{s} {where} (index over (..., n) of scores with shape {shape}) are "
                     f"beyond float64's range (about 1.8e308), so their softmax cannot be "
                     f"computed; the entries of {q} reach {np.max(np.abs(Q)):.3g} and those "
                     f"of {k} {np.max(np.abs(K)):.3g} in absolute value: scale them down")


def _explain_bad_rows(row_max, shape, M, what, Q, K, names) -> None:
    """Some row maximum (..., n) is NaN or +-inf: say whether the mask or an overflow did it.

    Q and K are finite (checked) and the mask holds no NaN or +inf (checked), so NaN or +inf
    in a row can only come from Q K^T leaving float64's range. A row that is -inf everywhere
    is the mask's doing if the mask alone blocks it, otherwise an overflow to -inf.
    """
    overflow = np.isnan(row_max) | (row_max == np.inf)
    if np.any(overflow):
        _raise_overflow(overflow, shape, Q, K, names, M is not None)
    empty = row_max == -np.inf
    if M is not None:
        blocked = empty & np.all(np.broadcast_to(M, shape) == -np.inf, axis=-1)
        if np.any(blocked):
            _raise_blocked(blocked, shape, what)
    _raise_overflow(empty, shape, Q, K, names, M is not None)


# --------------------------------------------------------------------------
# 1. Softmax
# --------------------------------------------------------------------------

def softmax(x, axis: int = -1) -> np.ndarray:
    """softmax(x)_j = exp(x_j - max x) / sum_i exp(x_i - max x), along `axis`.

    Subtracting the maximum changes nothing mathematically and keeps exp() from
    overflowing, so logits of any finite size work. Entries equal to -inf get
    weight 0. A slice that is -inf everywhere has no softmax: ValueError.
    """
    x = _as_numbers("x", x)
    if x.ndim == 0:
        raise ValueError("softmax needs at least one axis, got a scalar")
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) \
            or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer in {-x.ndim}..{x.ndim - 1} for input of "
                         f"shape {x.shape}, got {axis!r}")
    if x.shape[axis] == 0:
        raise ValueError(f"softmax over axis {axis} of length 0 is undefined (input shape "
                         f"{x.shape}): there is nothing to share the weight 1 between")
    x_max = np.max(x, axis=axis, keepdims=True)  # NaN and +inf show up here too: one pass
    if np.any(np.isnan(x_max)) or np.any(x_max == np.inf):
        raise ValueError(f"softmax input of shape {x.shape} contains NaN or +inf")
    if np.any(x_max == -np.inf):
        s, where = _row_list(np.squeeze(x_max == -np.inf, axis=axis))
        at = f" at index{'es' if s else ''} {where} of the other axes" if x.ndim > 1 else ""
        raise ValueError(f"softmax input of shape {x.shape} is -inf everywhere along axis "
                         f"{axis}{at}; softmax of a slice that is -inf everywhere is undefined "
                         "(0/0)")
    e = np.exp(x - x_max)  # in (0, 1]; the largest entry becomes exp(0) = 1, exp(-inf) = 0
    e /= np.sum(e, axis=axis, keepdims=True)  # normalise in place
    return e


# --------------------------------------------------------------------------
# 2. Scaled dot-product attention
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class AttentionSteps:
    """Every intermediate of Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + M) V."""

    scores: np.ndarray   # (..., n, m)   Q K^T
    scaled: np.ndarray   # (..., n, m)   Q K^T / sqrt(d_k)
    masked: np.ndarray   # (..., n, m)   Q K^T / sqrt(d_k) + M
    weights: np.ndarray  # (..., n, m)   softmax over keys (each row sums to 1)
    output: np.ndarray   # (..., n, d_v) weights @ V


def _check_qk(Q, K):
    Q = _as_array("Q", Q, min_ndim=2)
    K = _as_array("K", K, min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last dimension d_k, got Q {Q.shape} "
                         f"and K {K.shape}")
    if Q.shape[-1] == 0:
        raise ValueError(f"Q and K have d_k = 0 features (Q {Q.shape}, K {K.shape}); "
                         "the scale 1/sqrt(d_k) is undefined")
    if K.shape[-2] == 0:
        raise ValueError(f"K has m = 0 key positions (shape {K.shape}); every query needs "
                         "at least one key (softmax over no keys is undefined)")
    return Q, K


def _check_qkv(Q, K, V):
    """Checked Q, K, V and the broadcast batch shape of the three."""
    Q, K = _check_qk(Q, K)
    V = _as_array("V", V, min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have the same number of positions m, got K {K.shape} "
                         f"and V {V.shape}")
    try:
        batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    except ValueError:
        raise ValueError(f"batch dimensions of Q {Q.shape}, K {K.shape} and V {V.shape} "
                         "do not broadcast") from None
    return Q, K, V, batch


def _qk_batch(Q, K) -> tuple[int, ...]:
    try:
        return np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    except ValueError:
        raise ValueError(f"batch dimensions of Q {Q.shape} and K {K.shape} do not "
                         "broadcast") from None


def _softmax_over_keys(masked, M, what, Q, K, names) -> np.ndarray:
    """softmax along the last axis of (..., n, m) scores, explaining rows that have none.

    The row maximum that softmax needs anyway is where every problem shows up: NaN or
    +inf (Q K^T overflowed) and -inf (the mask blocks the whole row, or an overflow).
    """
    row_max = np.max(masked, axis=-1, keepdims=True)  # (..., n, 1)
    if not np.all(np.isfinite(row_max)):
        _explain_bad_rows(row_max[..., 0], masked.shape, M, what, Q, K, names)
    e = np.exp(masked - row_max)  # in (0, 1]; the largest entry becomes 1, exp(-inf) = 0
    e /= np.sum(e, axis=-1, keepdims=True)  # normalise in place: each row sums to 1
    return e


def _weights(Q, K, M, what="mask", names=("Q", "K")) -> np.ndarray:
    """softmax(Q K^T / sqrt(d_k) + M) for checked Q, K and mask M (or None). (..., n, m)."""
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is explained below
        scaled = Q @ np.swapaxes(K, -1, -2)  # (..., n, d_k) @ (..., d_k, m) -> (..., n, m)
        scaled /= np.sqrt(Q.shape[-1])  # in place: scaled scores, BEFORE softmax
        if M is not None:
            if np.broadcast_shapes(scaled.shape, M.shape) == scaled.shape:
                scaled += M  # in place: (..., n, m), -inf where blocked
            else:  # V alone had the batch axes the mask fills in
                scaled = scaled + M
    return _softmax_over_keys(scaled, M, what, Q, K, names)


def attention_steps(Q, K, V, mask=None) -> AttentionSteps:
    """All steps of softmax(Q K^T / sqrt(d_k) + M) V, in the order they happen.

    Q : (..., n, d_k), K : (..., m, d_k), V : (..., m, d_v),
    mask : additive float (0 = may attend, -inf = may not), broadcastable to (..., n, m)
    without enlarging it, or None. Boolean and 0/1 masks are refused (ValueError).
    """
    Q, K, V, batch = _check_qkv(Q, K, V)
    n, m = Q.shape[-2], K.shape[-2]
    M = None if mask is None else _as_mask(mask, (*batch, n, m))
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is explained below
        scores = Q @ np.swapaxes(K, -1, -2)  # (..., n, d_k) @ (..., d_k, m) -> (..., n, m)
        scaled = scores / np.sqrt(Q.shape[-1])  # scale BEFORE softmax
        masked = scaled if M is None else scaled + M  # (..., n, m), -inf where blocked
    weights = _softmax_over_keys(masked, M, "mask", Q, K, ("Q", "K"))  # over keys
    output = weights @ V  # (..., n, m) @ (..., m, d_v) -> (..., n, d_v)
    return AttentionSteps(scores, scaled, masked, weights, output)


def attention_weights(Q, K, mask=None) -> np.ndarray:
    """A = softmax(Q K^T / sqrt(d_k) + M), each row over the keys. Shape (..., n, m).

    Q : (..., n, d_k), K : (..., m, d_k), mask : additive, broadcastable to (..., n, m)
    without enlarging it, or None.
    """
    Q, K = _check_qk(Q, K)
    M = None if mask is None else _as_mask(mask, (*_qk_batch(Q, K), Q.shape[-2], K.shape[-2]))
    return _weights(Q, K, M)


def scaled_dot_product_attention(Q, K, V, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + M) V; returns (output, weights).

    The same computation as attention_steps, without keeping the intermediates.
    output : (..., n, d_v), weights : (..., n, m). The mask is additive (0 = may attend,
    -inf = may not) and broadcasts to (..., n, m) without enlarging it.
    """
    Q, K, V, batch = _check_qkv(Q, K, V)
    M = None if mask is None else _as_mask(mask, (*batch, Q.shape[-2], K.shape[-2]))
    weights = _weights(Q, K, M)  # (..., n, m)
    return weights @ V, weights  # (..., n, m) @ (..., m, d_v) -> (..., n, d_v)


# --------------------------------------------------------------------------
# 3. Masks (additive: 0 = may attend, -inf = may not)
# --------------------------------------------------------------------------

def causal_mask(n: int) -> np.ndarray:
    """M[i, j] = 0 if j <= i else -inf: query i sees keys 0..i only. Shape (n, n)."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    future = np.triu(np.ones((n, n), dtype=bool), k=1)  # True above the diagonal
    return np.where(future, -np.inf, 0.0)


def padding_mask(lengths, m: int) -> np.ndarray:
    """M[b, 0, j] = 0 if j < lengths[b] else -inf. Shape (batch, 1, m).

    The axis of size 1 broadcasts over the n queries: padding hides keys, not queries.
    """
    if not isinstance(m, (int, np.integer)) or isinstance(m, bool) or m < 1:
        raise ValueError(f"m must be a positive integer, got {m!r}")
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or lengths.size == 0 or not np.issubdtype(lengths.dtype, np.integer):
        raise ValueError(f"lengths must be a 1-D list of integers, got {lengths.tolist()!r}")
    if np.any(lengths < 1) or np.any(lengths > m):
        raise ValueError(f"every length must be in 1..m = 1..{m}, got {lengths.tolist()}")
    is_pad = np.arange(m)[None, :] >= lengths[:, None]  # (batch, m)
    return np.where(is_pad, -np.inf, 0.0)[:, None, :]  # (batch, 1, m)


# --------------------------------------------------------------------------
# 4. Multi-head attention
# --------------------------------------------------------------------------

def split_heads(X, num_heads: int) -> np.ndarray:
    """(..., n, h*d) -> (..., h, n, d): head r gets the r-th contiguous block of columns."""
    X = _as_array("X", X, min_ndim=2)
    num_heads = _positive_int("num_heads", num_heads)
    if X.shape[-1] % num_heads:
        raise ValueError(f"last dimension {X.shape[-1]} of shape {X.shape} is not divisible by "
                         f"num_heads = {num_heads}")
    return _split_heads(X, num_heads)


def _split_heads(X: np.ndarray, h: int) -> np.ndarray:
    *batch, n, width = X.shape
    X = X.reshape(*batch, n, h, width // h)  # (..., n, h*d) -> (..., n, h, d)
    return np.swapaxes(X, -3, -2)  # (..., n, h, d) -> (..., h, n, d)


def merge_heads(X) -> np.ndarray:
    """(..., h, n, d) -> (..., n, h*d): Concat(head_1, ..., head_h) along features."""
    return _merge_heads(_as_array("X", X, min_ndim=3))


def _merge_heads(X: np.ndarray) -> np.ndarray:
    X = np.swapaxes(X, -3, -2)  # (..., h, n, d) -> (..., n, h, d)
    *batch, n, h, d = X.shape
    return X.reshape(*batch, n, h * d)  # (..., n, h, d) -> (..., n, h*d)


def _check_finite(what: str, a: np.ndarray, inputs: dict, advice: str = "scale them down"
                  ) -> np.ndarray:
    """a was computed from the finite `inputs`; if it is not finite, float64 overflowed."""
    if not np.all(np.isfinite(a)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        largest = ", ".join(f"|{k}| up to {np.max(np.abs(v)) if v.size else 0:.3g}"
                            for k, v in inputs.items())  # only on the way to the error
        raise ValueError(f"{what} overflowed: it is {a[bad]} at index {bad} (shape {a.shape}), "
                         f"beyond float64's range (about 1.8e308); {largest}: {advice}")
    return a


def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads: int, mask=None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """MultiHead = Concat(head_1..head_h) W_O, head_r = Attention(X_q W_r^Q, X_kv W_r^K, X_kv W_r^V).

    X_q : (..., n, d_model), X_kv : (..., m, d_model) (self-attention: X_kv = X_q),
    W_Q, W_K : (d_model, h*d_k), W_V : (d_model, h*d_v), W_O : (h*d_v, d_model),
    mask : additive, broadcastable to (..., n, m) without enlarging it, where ... are the
    batch axes of X_q and X_kv. The same mask is used for every head: a per-head mask
    (..., h, n, m) is refused (ValueError), never read as a batch.
    Returns output (..., n, d_model) and weights (..., h, n, m).
    """
    return _multi_head(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask)


def _multi_head(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask, mask_name="mask"):
    X_q = _as_array("X_q", X_q, min_ndim=2)
    X_kv = _as_array("X_kv", X_kv, min_ndim=2)
    W_Q, W_K, W_V, W_O = (_as_array(name, W, min_ndim=2) for name, W in
                          (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V), ("W_O", W_O)))
    h = _positive_int("num_heads", num_heads)
    d_model = X_q.shape[-1]
    if X_kv.shape[-1] != d_model:
        raise ValueError(f"X_q and X_kv must have the same d_model, got X_q {X_q.shape} "
                         f"and X_kv {X_kv.shape}")
    if X_kv.shape[-2] == 0:
        raise ValueError(f"X_kv has m = 0 key positions (shape {X_kv.shape}); every query "
                         "needs at least one key (softmax over no keys is undefined)")
    try:
        batch = np.broadcast_shapes(X_q.shape[:-2], X_kv.shape[:-2])
    except ValueError:
        raise ValueError(f"batch dimensions of X_q {X_q.shape} and X_kv {X_kv.shape} do not "
                         "broadcast") from None
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.ndim != 2 or W.shape[0] != d_model:
            raise ValueError(f"{name} must have shape (d_model, h*d) = ({d_model}, ...), "
                             f"got {W.shape}")
        if W.shape[1] % h:
            raise ValueError(f"{name} has {W.shape[1]} columns, not divisible by "
                             f"num_heads = {h} (shape {W.shape})")
    if W_Q.shape != W_K.shape:
        raise ValueError(f"W_Q and W_K must have the same shape (d_model, h*d_k), got "
                         f"W_Q {W_Q.shape} and W_K {W_K.shape}")
    if W_Q.shape[1] == 0:
        raise ValueError(f"W_Q and W_K have 0 columns (shape {W_Q.shape}), so d_k = 0; the "
                         "scale 1/sqrt(d_k) is undefined")
    if W_O.shape != (W_V.shape[1], d_model):
        raise ValueError(f"W_O must have shape (h*d_v, d_model) = ({W_V.shape[1]}, {d_model}), "
                         f"got {W_O.shape}")
    M = None
    if mask is not None:
        M = _as_mask(mask, (*batch, X_q.shape[-2], X_kv.shape[-2]), mask_name, per_head_hint=True)
        M = M[..., None, :, :] if M.ndim >= 2 else M  # (..., 1, n, m): the same for all heads
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is explained below
        Q = X_q @ W_Q  # (..., n, d_model) @ (d_model, h*d_k) -> (..., n, h*d_k)
        K = X_kv @ W_K  # (..., m, d_model) @ (d_model, h*d_k) -> (..., m, h*d_k)
        V = X_kv @ W_V  # (..., m, d_model) @ (d_model, h*d_v) -> (..., m, h*d_v)
    for what, P, x, W, x_name, W_name in (("X_q @ W_Q", Q, X_q, W_Q, "X_q", "W_Q"),
                                          ("X_kv @ W_K", K, X_kv, W_K, "X_kv", "W_K"),
                                          ("X_kv @ W_V", V, X_kv, W_V, "X_kv", "W_V")):
        _check_finite(what, P, {x_name: x, W_name: W})
    Q = _split_heads(Q, h)  # (..., n, h*d_k) -> (..., h, n, d_k)
    K = _split_heads(K, h)  # (..., m, h*d_k) -> (..., h, m, d_k)
    V = _split_heads(V, h)  # (..., m, h*d_v) -> (..., h, m, d_v)
    weights = _weights(Q, K, M, mask_name, ("(X_q W_Q)", "(X_kv W_K)"))  # (..., h, n, m)
    heads = weights @ V  # (..., h, n, m) @ (..., h, m, d_v) -> (..., h, n, d_v)
    with np.errstate(over="ignore", invalid="ignore"):
        output = _merge_heads(heads) @ W_O  # (..., n, h*d_v) @ (h*d_v, d_model) -> (..., n, d_model)
    _check_finite("Concat(heads) @ W_O", output, {"X_kv": X_kv, "W_V": W_V, "W_O": W_O})
    return output, weights


# --------------------------------------------------------------------------
# 5. Sinusoidal positional encoding
# --------------------------------------------------------------------------

def sinusoidal_positional_encoding(num_positions: int, d_model: int) -> np.ndarray:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same). Shape (num_positions, d_model)."""
    num_positions = _positive_int("num_positions", num_positions)
    d_model = _positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(f"d_model must be even (sin/cos pairs), got d_model = {d_model}")
    pos = np.arange(num_positions)[:, None]  # (num_positions, 1)
    two_i = np.arange(0, d_model, 2)[None, :]  # (1, d_model/2)
    angle = pos / 10000.0 ** (two_i / d_model)  # (num_positions, d_model/2)
    pe = np.empty((num_positions, d_model))
    pe[:, 0::2] = np.sin(angle)  # even dimensions
    pe[:, 1::2] = np.cos(angle)  # odd dimensions
    return pe


def positional_shift_matrix(k: float, d_model: int) -> np.ndarray:
    """R_k with PE(pos + k) = PE(pos) @ R_k: block-diagonal 2x2 rotations by k*omega_i. Shape (d_model, d_model).

    For the pair (sin w pos, cos w pos) the block is [[cos wk, -sin wk], [sin wk, cos wk]];
    it depends on the offset k only, never on pos.
    """
    k = _finite_real("k", k)
    d_model = _positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(f"d_model must be even (sin/cos pairs), got d_model = {d_model}")
    omega = 1.0 / 10000.0 ** (np.arange(0, d_model, 2) / d_model)  # (d_model/2,)
    R = np.zeros((d_model, d_model))
    c, s = np.cos(k * omega), np.sin(k * omega)
    R[0::2, 0::2] = np.diag(c)   # sin' gets sin*cos(wk) ...
    R[1::2, 0::2] = np.diag(s)   # ... + cos*sin(wk)
    R[0::2, 1::2] = np.diag(-s)  # cos' gets -sin*sin(wk) ...
    R[1::2, 1::2] = np.diag(c)   # ... + cos*cos(wk)
    return R


# --------------------------------------------------------------------------
# 6. Position-wise feed-forward network and layer normalisation
# --------------------------------------------------------------------------

def relu(x) -> np.ndarray:
    """ReLU(x) = max(0, x), elementwise."""
    return np.maximum(0.0, _as_array("x", x))


def feed_forward(X, W_1, b_1, W_2, b_2) -> np.ndarray:
    """FFN(X) = max(0, X W_1 + b_1) W_2 + b_2, the same weights at every position.

    X : (..., n, d_model), W_1 : (d_model, d_ff), b_1 : (d_ff,), W_2 : (d_ff, d_model), b_2 : (d_model,).
    """
    X = _as_array("X", X, min_ndim=1)
    W_1, b_1 = _as_array("W_1", W_1, 2), _as_array("b_1", b_1, 1)
    W_2, b_2 = _as_array("W_2", W_2, 2), _as_array("b_2", b_2, 1)
    d_model = X.shape[-1]
    if W_1.ndim != 2 or W_1.shape[0] != d_model or b_1.shape != (W_1.shape[1],):
        raise ValueError(f"need W_1 (d_model, d_ff) and b_1 (d_ff,) with d_model = {d_model}, "
                         f"got W_1 {W_1.shape} and b_1 {b_1.shape}")
    if W_2.shape != (W_1.shape[1], d_model) or b_2.shape != (d_model,):
        raise ValueError(f"need W_2 (d_ff, d_model) = {(W_1.shape[1], d_model)} and b_2 "
                         f"({d_model},), got W_2 {W_2.shape} and b_2 {b_2.shape}")
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is explained below
        hidden = np.maximum(0.0, X @ W_1 + b_1)  # ReLU; (..., n, d_model) @ (d_model, d_ff) -> (..., n, d_ff)
        out = hidden @ W_2 + b_2  # (..., n, d_ff) @ (d_ff, d_model) -> (..., n, d_model)
    return _check_finite("FFN(X) = max(0, X W_1 + b_1) W_2 + b_2", out,
                         {"X": X, "W_1": W_1, "b_1": b_1, "W_2": W_2, "b_2": b_2})


def layer_norm(X, gamma, beta, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm(x) = gamma * (x - mean) / sqrt(var + eps) + beta, over the last axis (biased var).

    Rows so large that var overflows (|x| above about 1e154) are first divided by their
    largest |x|: the same result, computed without leaving float64's range.
    """
    X = _as_array("X", X, min_ndim=1)
    gamma, beta = _as_array("gamma", gamma, 1), _as_array("beta", beta, 1)
    if gamma.shape != X.shape[-1:] or beta.shape != X.shape[-1:]:
        raise ValueError(f"gamma and beta must have shape (d_model,) = {X.shape[-1:]}, got "
                         f"gamma {gamma.shape} and beta {beta.shape}")
    if not isinstance(eps, numbers.Real) or isinstance(eps, bool) or not 0 < eps < np.inf:
        raise ValueError(f"eps must be a positive finite number, got {eps!r}")
    if X.shape[-1] == 0:
        raise ValueError(f"X has d_model = 0 features (shape {X.shape}); a row without entries "
                         "has no mean or variance")
    with np.errstate(over="ignore", invalid="ignore"):
        mean = X.mean(axis=-1, keepdims=True)  # (..., n, 1)
        var = X.var(axis=-1, keepdims=True)  # (..., n, 1), divides by d_model (as PyTorch)
        if np.all(np.isfinite(mean)) and np.all(np.isfinite(var)):
            out = gamma * (X - mean) / np.sqrt(var + eps) + beta
        else:
            out = gamma * _standardise_huge(X, eps) + beta
    return _check_finite("gamma * (X - mean) / sqrt(var + eps) + beta", out,
                         {"gamma": gamma, "beta": beta})


def _standardise_huge(X: np.ndarray, eps: float) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) for rows whose var overflows float64.

    With s = max |x| and c = (x/s - mean(x/s)) / t, t = max |x/s - mean(x/s)|, the row is
    x - mean = s t c, so (x - mean) / sqrt(var + eps) = c / sqrt(var(c) + eps / (s t)^2);
    every number on the right stays within [-2, 2] or underflows harmlessly to 0.
    """
    s = np.max(np.abs(X), axis=-1, keepdims=True)  # (..., n, 1)
    Xs = X / np.where(s == 0, 1.0, s)  # every entry in [-1, 1]
    c = Xs - Xs.mean(axis=-1, keepdims=True)  # in [-2, 2]
    t = np.max(np.abs(c), axis=-1, keepdims=True)  # (..., n, 1)
    c /= np.where(t == 0, 1.0, t)  # largest |c| is 1, or the row is constant (c = 0)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        denom = np.sqrt(np.mean(c * c, axis=-1, keepdims=True) + eps / (s * t) ** 2)
    return c / np.where(denom == 0, 1.0, denom)  # denom = 0 only where c = 0 (constant row)


# --------------------------------------------------------------------------
# 7. Encoder and decoder layers (post-norm, as in "Attention Is All You Need")
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class AttentionParams:
    """Weights of one multi-head attention: W_Q, W_K (d_model, h*d_k), W_V (d_model, h*d_v), W_O (h*d_v, d_model)."""

    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    num_heads: int


@dataclass(frozen=True)
class FFNParams:
    """Weights of the FFN: W_1 (d_model, d_ff), b_1 (d_ff,), W_2 (d_ff, d_model), b_2 (d_model,)."""

    W_1: np.ndarray
    b_1: np.ndarray
    W_2: np.ndarray
    b_2: np.ndarray


@dataclass(frozen=True)
class LayerNormParams:
    """Gain and bias of a layer norm, both (d_model,)."""

    gamma: np.ndarray
    beta: np.ndarray


@dataclass(frozen=True)
class EncoderLayerParams:
    """Self-attention, norm, FFN, norm."""

    self_attn: AttentionParams
    norm1: LayerNormParams
    ffn: FFNParams
    norm2: LayerNormParams


@dataclass(frozen=True)
class DecoderLayerParams:
    """Masked self-attention, norm, cross-attention, norm, FFN, norm."""

    self_attn: AttentionParams
    norm1: LayerNormParams
    cross_attn: AttentionParams
    norm2: LayerNormParams
    ffn: FFNParams
    norm3: LayerNormParams


def _check_rng(rng) -> None:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator (np.random.default_rng(seed)), got "
                         f"{type(rng).__name__}: {rng!r}")


def init_attention_params(d_model: int, num_heads: int, rng: np.random.Generator,
                          d_k: int | None = None, d_v: int | None = None) -> AttentionParams:
    """Random W_Q, W_K, W_V, W_O with std 1/sqrt(fan_in); d_k = d_v = d_model / h by default."""
    _check_rng(rng)
    d_model, num_heads = _positive_int("d_model", d_model), _positive_int("num_heads", num_heads)
    if (d_k is None or d_v is None) and d_model % num_heads:
        raise ValueError(f"d_model = {d_model} is not divisible by num_heads = {num_heads}; "
                         "choose h among the divisors of d_model or pass d_k and d_v")
    d_k = d_model // num_heads if d_k is None else _positive_int("d_k", d_k)
    d_v = d_model // num_heads if d_v is None else _positive_int("d_v", d_v)
    h = num_heads
    return AttentionParams(
        W_Q=rng.normal(0, d_model ** -0.5, size=(d_model, h * d_k)),
        W_K=rng.normal(0, d_model ** -0.5, size=(d_model, h * d_k)),
        W_V=rng.normal(0, d_model ** -0.5, size=(d_model, h * d_v)),
        W_O=rng.normal(0, (h * d_v) ** -0.5, size=(h * d_v, d_model)),
        num_heads=h,
    )


def init_ffn_params(d_model: int, d_ff: int, rng: np.random.Generator) -> FFNParams:
    """Random W_1, W_2 with std 1/sqrt(fan_in) and zero biases."""
    _check_rng(rng)
    d_model, d_ff = _positive_int("d_model", d_model), _positive_int("d_ff", d_ff)
    return FFNParams(W_1=rng.normal(0, d_model ** -0.5, size=(d_model, d_ff)), b_1=np.zeros(d_ff),
                     W_2=rng.normal(0, d_ff ** -0.5, size=(d_ff, d_model)), b_2=np.zeros(d_model))


def _init_norm(d_model: int) -> LayerNormParams:
    return LayerNormParams(gamma=np.ones(d_model), beta=np.zeros(d_model))


def init_encoder_layer(d_model: int, num_heads: int, d_ff: int,
                       rng: np.random.Generator) -> EncoderLayerParams:
    """Seeded parameters of one encoder layer (pass np.random.default_rng(seed))."""
    return EncoderLayerParams(self_attn=init_attention_params(d_model, num_heads, rng),
                              norm1=_init_norm(d_model), ffn=init_ffn_params(d_model, d_ff, rng),
                              norm2=_init_norm(d_model))


def init_decoder_layer(d_model: int, num_heads: int, d_ff: int,
                       rng: np.random.Generator) -> DecoderLayerParams:
    """Seeded parameters of one decoder layer (pass np.random.default_rng(seed))."""
    return DecoderLayerParams(self_attn=init_attention_params(d_model, num_heads, rng),
                              norm1=_init_norm(d_model),
                              cross_attn=init_attention_params(d_model, num_heads, rng),
                              norm2=_init_norm(d_model), ffn=init_ffn_params(d_model, d_ff, rng),
                              norm3=_init_norm(d_model))


def _check_params(params, kind: type, init: str) -> None:
    if not isinstance(params, kind):
        raise ValueError(f"params must be {kind.__name__} (made by {init}), got "
                         f"{type(params).__name__}")


def _mha(X_q, X_kv, p: AttentionParams, mask, mask_name="mask"):
    """Multi-head attention with a parameter bundle; returns (output, weights (..., h, n, m))."""
    return _multi_head(X_q, X_kv, p.W_Q, p.W_K, p.W_V, p.W_O, p.num_heads, mask, mask_name)


def _ln(X, p: LayerNormParams):
    return layer_norm(X, p.gamma, p.beta)


def _ffn(X, p: FFNParams):
    return feed_forward(X, p.W_1, p.b_1, p.W_2, p.b_2)


def _residual(X, sublayer_out, what: str) -> np.ndarray:
    """X + Sublayer(X), the residual connection; (..., n, d_model) + (..., n, d_model)."""
    with np.errstate(over="ignore", invalid="ignore"):
        S = X + sublayer_out
    return _check_finite(what, S, {"input": X, "sublayer": sublayer_out})


def encoder_layer(X, params: EncoderLayerParams, mask=None) -> np.ndarray:
    """Post-norm: H = LN(X + MHA(X, X)); Y = LN(H + FFN(H)). X : (..., n, d_model)."""
    X = _as_array("X", X, min_ndim=2)
    _check_params(params, EncoderLayerParams, "init_encoder_layer")
    attn = _mha(X, X, params.self_attn, mask)[0]  # (..., n, d_model)
    H = _ln(_residual(X, attn, "X + MHA(X, X)"), params.norm1)  # (..., n, d_model)
    return _ln(_residual(H, _ffn(H, params.ffn), "H + FFN(H)"), params.norm2)  # (..., n, d_model)


def decoder_layer(Y, memory, params: DecoderLayerParams, self_mask=None,
                  cross_mask=None, return_weights: bool = False):
    """Post-norm: A = LN(Y + MHA(Y, Y, causal)); B = LN(A + MHA(A, memory)); LN(B + FFN(B)).

    Y : (..., n, d_model) decoder input, memory : (..., m, d_model) encoder output.
    Cross-attention takes Q from the decoder and K, V from the encoder.
    self_mask defaults to causal_mask(n); cross_mask (e.g. padding of the source) to none.
    Both are additive and shared by all heads: self_mask broadcasts to (..., n, n),
    cross_mask to (..., n, m), neither may enlarge the batch.
    Returns the output (..., n, d_model); with return_weights=True also the self-attention
    weights (..., h, n, n) and the cross-attention weights (..., h, n, m).
    """
    Y = _as_array("Y", Y, min_ndim=2)
    memory = _as_array("memory", memory, min_ndim=2)
    _check_params(params, DecoderLayerParams, "init_decoder_layer")
    if memory.shape[-1] != Y.shape[-1]:
        raise ValueError(f"Y and memory must have the same d_model, got Y {Y.shape} and "
                         f"memory {memory.shape}")
    if self_mask is None:
        self_mask = causal_mask(Y.shape[-2]) if Y.shape[-2] else None
    self_out, self_w = _mha(Y, Y, params.self_attn, self_mask, "self_mask")
    A = _ln(_residual(Y, self_out, "Y + MHA(Y, Y)"), params.norm1)  # (..., n, d_model)
    cross_out, cross_w = _mha(A, memory, params.cross_attn, cross_mask, "cross_mask")
    B = _ln(_residual(A, cross_out, "A + MHA(A, memory)"), params.norm2)  # (..., n, d_model)
    out = _ln(_residual(B, _ffn(B, params.ffn), "B + FFN(B)"), params.norm3)  # (..., n, d_model)
    return (out, self_w, cross_w) if return_weights else out


def _check_layers(layers, kind: type) -> list:
    if not isinstance(layers, (list, tuple)) or not all(isinstance(p, kind) for p in layers):
        got = type(layers).__name__ if not isinstance(layers, (list, tuple)) else \
            "[" + ", ".join(type(p).__name__ for p in layers) + "]"
        raise ValueError(f"layers must be a list of {kind.__name__}, got {got}")
    return list(layers)


def encode(X, layers: list[EncoderLayerParams], mask=None) -> np.ndarray:
    """Run X (..., n, d_model) through a stack of encoder layers."""
    X = _as_array("X", X, min_ndim=2)
    for p in _check_layers(layers, EncoderLayerParams):
        X = encoder_layer(X, p, mask)
    return X


def decode(Y, memory, layers: list[DecoderLayerParams], self_mask=None,
           cross_mask=None) -> np.ndarray:
    """Run Y (..., n, d_model) through a stack of decoder layers, all reading the same memory."""
    Y = _as_array("Y", Y, min_ndim=2)
    for p in _check_layers(layers, DecoderLayerParams):
        Y = decoder_layer(Y, memory, p, self_mask, cross_mask)
    return Y


# --------------------------------------------------------------------------
# 8. The cost of attention, and tiled attention with an online softmax
# --------------------------------------------------------------------------

def attention_cost(n: int, m: int | None = None, d_k: int = 64, d_v: int | None = None,
                   h: int = 1, bytes_per_number: int = 8) -> dict[str, int]:
    """Exact counts for one attention call: score entries h*n*m, their bytes, multiply-adds."""
    n = _positive_int("n", n)
    m = n if m is None else _positive_int("m", m)
    d_k = _positive_int("d_k", d_k)
    d_v = d_k if d_v is None else _positive_int("d_v", d_v)
    h = _positive_int("h", h)
    bytes_per_number = _positive_int("bytes_per_number", bytes_per_number)
    entries = h * n * m
    return {
        "score_entries": entries,                       # one per (query, key) pair and head
        "score_bytes": entries * bytes_per_number,      # memory of one (h, n, m) matrix
        "multiply_adds": entries * d_k + entries * d_v,  # Q K^T, then weights @ V
    }


def tiled_attention(Q, K, V, block_size: int, mask=None) -> np.ndarray:
    """softmax(Q K^T / sqrt(d_k) + M) V, block by block with a running (online) softmax.

    Never holds more than a (block_size, block_size) tile of scores per batch entry.
    For each query block it keeps, per row, the running max r, the running sum
    l = sum exp(s - r) and the running numerator acc = sum exp(s - r) v; when a new
    tile raises the max to r', old sums are rescaled by exp(r - r'). Equal to
    scaled_dot_product_attention to float64 round-off. Returns (..., n, d_v).
    """
    Q, K, V, batch = _check_qkv(Q, K, V)
    block_size = _positive_int("block_size", block_size)
    *_, n, d_k = Q.shape
    m, d_v = V.shape[-2:]
    M = None
    if mask is not None:
        M = np.broadcast_to(_as_mask(mask, (*batch, n, m)), (*batch, n, m))  # a view, no copy
    out = np.empty((*batch, n, d_v))
    for i in range(0, n, block_size):
        q = Q[..., i:i + block_size, :] / np.sqrt(d_k)  # (..., b_q, d_k), scaled once
        b_q = q.shape[-2]
        run_max = np.full((*batch, b_q, 1), -np.inf)  # r
        run_sum = np.zeros((*batch, b_q, 1))  # l
        acc = np.zeros((*batch, b_q, d_v))  # sum of exp(s - r) v
        for j in range(0, m, block_size):
            with np.errstate(over="ignore", invalid="ignore"):  # an overflow is explained below
                s = q @ np.swapaxes(K[..., j:j + block_size, :], -1, -2)  # (..., b_q, d_k) @ (..., d_k, b_k) -> (..., b_q, b_k)
                if M is not None:
                    s = s + M[..., i:i + block_size, j:j + block_size]
            new_max = np.maximum(run_max, s.max(axis=-1, keepdims=True))  # (..., b_q, 1)
            if np.any(np.isnan(new_max) | (new_max == np.inf)):  # NaN and +inf propagate here
                _raise_overflow(_rows_of_block(np.isnan(new_max) | (new_max == np.inf), i, n),
                                (*batch, n, m), Q, K, ("Q", "K"), M is not None)
            # rows still -inf everywhere keep max -inf; shift by 0 there to avoid inf - inf
            safe_max = np.where(new_max == -np.inf, 0.0, new_max)
            rescale = np.exp(run_max - safe_max)  # (..., b_q, 1), exp(-inf) = 0 at the start
            p = np.exp(s - safe_max)  # (..., b_q, b_k)
            run_sum = run_sum * rescale + p.sum(axis=-1, keepdims=True)
            with np.errstate(over="ignore", invalid="ignore"):  # an overflow is explained below
                acc = acc * rescale + p @ V[..., j:j + block_size, :]  # (..., b_q, b_k) @ (..., b_k, d_v) -> (..., b_q, d_v)
            run_max = new_max
        if np.any(run_sum == 0):  # -inf everywhere: the mask's doing, or Q K^T overflowed
            empty = _rows_of_block(run_sum == 0, i, n)
            if M is not None and np.any(blocked := empty & np.all(M == -np.inf, axis=-1)):
                _raise_blocked(blocked, (*batch, n, m), "mask")
            _raise_overflow(empty, (*batch, n, m), Q, K, ("Q", "K"), M is not None)
        out[..., i:i + block_size, :] = _check_finite(
            "the running sum acc = sum exp(s - r) v", acc / run_sum, {"V": V},
            "scale V down or use scaled_dot_product_attention")  # (..., b_q, d_v)
    return out


def _rows_of_block(rows: np.ndarray, i: int, n: int) -> np.ndarray:
    """rows (..., b_q, 1) of the query block starting at i, as a (..., n) mask of all rows."""
    full = np.zeros((*rows.shape[:-2], n), dtype=bool)
    full[..., i:i + rows.shape[-2]] = rows[..., 0]
    return full


# --------------------------------------------------------------------------
# 9. Backward passes: gradients, a one-layer language model, Adam (notebooks 10, 11)
# --------------------------------------------------------------------------
# Each *_backward takes the inputs of its forward function plus dY = dL/dY, the
# gradient of a scalar loss L with respect to the forward's output, and returns
# the gradients with respect to the inputs (the vector-Jacobian product). Where
# the forward broadcast an input over batch axes, its gradient is summed back to
# the input's own shape.

def _unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum grad over the axes that broadcasting added or stretched, back to `shape`."""
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra))) if extra > 0 else grad
    stretched = tuple(i for i, s in enumerate(shape) if s == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad


def _grad_like(name: str, g, shape: tuple[int, ...]) -> np.ndarray:
    """Check that an upstream gradient has the shape of the forward output it belongs to."""
    g = _as_array(name, g)
    if g.shape != tuple(shape):
        raise ValueError(f"{name} must have the shape of the forward output {tuple(shape)}, "
                         f"got {g.shape}")
    return g


def _sum_outer(X: np.ndarray, dY: np.ndarray) -> np.ndarray:
    """X^T dY summed over the batch: the gradient of a weight W in Y = X W. (d_in, d_out).

    One small product per batch entry, then a sum: one big (d_in, batch*rows) product would
    be split over BLAS threads, which is slower for these sizes on a busy machine.
    """
    X = np.broadcast_to(X, dY.shape[:-1] + X.shape[-1:])  # (..., rows, d_in)
    per_entry = np.swapaxes(X, -1, -2) @ dY  # (..., d_in, rows) @ (..., rows, d_out) -> (..., d_in, d_out)
    return per_entry.reshape(-1, *per_entry.shape[-2:]).sum(axis=0)  # (d_in, d_out)


def softmax_backward(p, dp, axis: int = -1) -> np.ndarray:
    """dx = p * (dp - sum_j p_j dp_j): the gradient through p = softmax(x) along `axis`.

    The Jacobian is dp_i/dx_j = p_i (delta_ij - p_j), i.e. J = diag(p) - p^T p (notebook 03);
    it is symmetric, so dL/dx = dL/dp J, which is the formula above. p is the softmax
    OUTPUT (entries >= 0, each slice summing to 1), dp = dL/dp has the same shape.
    """
    p = _as_array("p", p, min_ndim=1)
    dp = _as_array("dp", dp, min_ndim=1)
    if dp.shape != p.shape:
        raise ValueError(f"p and dp must have the same shape, got p {p.shape} and dp {dp.shape}")
    sums = p.sum(axis=axis)
    if np.any(p < 0) or not np.allclose(sums, 1.0, atol=1e-6):
        raise ValueError(f"p must be the softmax output (entries >= 0, each slice along axis "
                         f"{axis} summing to 1), got entries in [{p.min():.3g}, {p.max():.3g}] "
                         f"and sums in [{sums.min():.6g}, {sums.max():.6g}]")
    return p * (dp - np.sum(p * dp, axis=axis, keepdims=True))


def attention_backward(Q, K, V, dO, mask=None, return_dscores: bool = False):
    """Gradients of O = softmax(S) V, S = Q K^T / sqrt(d_k) + M, given dO = dL/dO.

        dV = A^T dO,   dA = dO V^T,   dS = A * (dA - rowsum(A * dA)),
        dQ = dS K / sqrt(d_k),   dK = dS^T Q / sqrt(d_k)          (A = softmax(S), rows over keys)

    Q : (..., n, d_k), K : (..., m, d_k), V : (..., m, d_v), dO : (..., n, d_v), the shapes of
    scaled_dot_product_attention; mask : additive, broadcastable to (..., n, m), or None (it is
    a constant: no gradient). A blocked key has A = 0, so it gets dS = 0 too.
    Returns (dQ, dK, dV) with the shapes of Q, K, V; with return_dscores=True also
    dS = dL/dS (..., n, m), the gradient that reaches the softmax input.
    """
    Q, K, V, _ = _check_qkv(Q, K, V)
    A = attention_weights(Q, K, mask)  # (..., n, m), recomputed from the inputs
    dO = _grad_like("dO", dO, (*A.shape[:-1], V.shape[-1]))  # (..., n, d_v)
    dQ, dK, dV, dS = _attention_grads(Q, K, V, A, dO)
    grads = (_unbroadcast(dQ, Q.shape), _unbroadcast(dK, K.shape), _unbroadcast(dV, V.shape))
    return (*grads, dS) if return_dscores else grads


def _attention_grads(Q, K, V, A, dO):
    """The formulas of attention_backward, for checked inputs and the weights A = softmax(S)."""
    dV = np.swapaxes(A, -1, -2) @ dO  # (..., m, n) @ (..., n, d_v) -> (..., m, d_v)
    dA = dO @ np.swapaxes(V, -1, -2)  # (..., n, d_v) @ (..., d_v, m) -> (..., n, m)
    dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))  # softmax_backward(A, dA), (..., n, m)
    dQ = dS @ K / np.sqrt(Q.shape[-1])  # (..., n, m) @ (..., m, d_k) -> (..., n, d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / np.sqrt(Q.shape[-1])  # (..., m, n) @ (..., n, d_k) -> (..., m, d_k)
    return dQ, dK, dV, dS


@dataclass(frozen=True)
class MultiHeadGrads:
    """Gradients of multi_head_attention's output: each d* has the shape of its input."""

    dX_q: np.ndarray     # (..., n, d_model)
    dX_kv: np.ndarray    # (..., m, d_model)
    dW_Q: np.ndarray     # (d_model, h*d_k)
    dW_K: np.ndarray     # (d_model, h*d_k)
    dW_V: np.ndarray     # (d_model, h*d_v)
    dW_O: np.ndarray     # (h*d_v, d_model)
    dscores: np.ndarray  # (..., h, n, m): dL/dS at every head's softmax input


def _check_mha(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads):
    """The argument checks of multi_head_attention, without computing it."""
    X_q = _as_array("X_q", X_q, min_ndim=2)
    X_kv = _as_array("X_kv", X_kv, min_ndim=2)
    W_Q, W_K, W_V, W_O = (_as_array(name, W, min_ndim=2) for name, W in
                          (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V), ("W_O", W_O)))
    h = _positive_int("num_heads", num_heads)
    d_model = X_q.shape[-1]
    if X_kv.shape[-1] != d_model:
        raise ValueError(f"X_q and X_kv must have the same d_model, got X_q {X_q.shape} "
                         f"and X_kv {X_kv.shape}")
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.ndim != 2 or W.shape[0] != d_model or W.shape[1] % h:
            raise ValueError(f"{name} must have shape (d_model, h*d) = ({d_model}, a multiple of "
                             f"num_heads = {h}), got {W.shape}")
    if W_Q.shape != W_K.shape:
        raise ValueError(f"W_Q and W_K must have the same shape (d_model, h*d_k), got "
                         f"W_Q {W_Q.shape} and W_K {W_K.shape}")
    if W_O.shape != (W_V.shape[1], d_model):
        raise ValueError(f"W_O must have shape (h*d_v, d_model) = ({W_V.shape[1]}, {d_model}), "
                         f"got {W_O.shape}")
    return X_q, X_kv, W_Q, W_K, W_V, W_O, h


def multi_head_attention_backward(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads: int, dOut,
                                  mask=None) -> MultiHeadGrads:
    """Gradients of Out = Concat(head_1..head_h) W_O, head_r = Attention(X_q W_r^Q, X_kv W_r^K, X_kv W_r^V).

    Backwards through the forward's steps: dW_O = C^T dOut and dC = dOut W_O^T for the
    concatenation C; split dC into heads; attention_backward in each head; merge; then for
    Q = X_q W_Q: dW_Q = X_q^T dQ, dX_q = dQ W_Q^T (K and V alike, both adding into dX_kv).
    Same arguments as multi_head_attention, plus dOut = dL/dOut (..., n, d_model).
    For self-attention (X_kv is X_q) the gradient of X is dX_q + dX_kv.
    """
    X_q, X_kv, W_Q, W_K, W_V, W_O, h = _check_mha(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads)
    Q = split_heads(X_q @ W_Q, h)  # (..., n, d_model) @ (d_model, h*d_k) -> (..., h, n, d_k)
    K = split_heads(X_kv @ W_K, h)  # (..., m, d_model) @ (d_model, h*d_k) -> (..., h, m, d_k)
    V = split_heads(X_kv @ W_V, h)  # (..., m, d_model) @ (d_model, h*d_v) -> (..., h, m, d_v)
    if mask is not None:
        mask = np.asarray(mask, dtype=float)
        mask = mask[..., None, :, :] if mask.ndim >= 2 else mask  # (..., 1, n, m): every head
    A = attention_weights(Q, K, mask)  # (..., h, n, m)
    C = merge_heads(A @ V)  # (..., h, n, m) @ (..., h, m, d_v) -> (..., h, n, d_v) -> (..., n, h*d_v)
    dOut = _grad_like("dOut", dOut, (*C.shape[:-1], W_O.shape[1]))  # (..., n, d_model)
    dW_O = _sum_outer(C, dOut)  # (h*d_v, d_model)
    dC = dOut @ W_O.T  # (..., n, d_model) @ (d_model, h*d_v) -> (..., n, h*d_v)
    dQ, dK, dV, dS = _attention_grads(Q, K, V, A, split_heads(dC, h))  # in every head
    dQ, dK, dV = merge_heads(dQ), merge_heads(dK), merge_heads(dV)  # (..., n or m, h*d)
    dX_q = dQ @ W_Q.T  # (..., n, h*d_k) @ (h*d_k, d_model) -> (..., n, d_model)
    dX_kv = dK @ W_K.T + dV @ W_V.T  # (..., m, h*d_k) @ (h*d_k, d_model) + (..., m, h*d_v) @ (h*d_v, d_model)
    return MultiHeadGrads(dX_q=_unbroadcast(dX_q, X_q.shape), dX_kv=_unbroadcast(dX_kv, X_kv.shape),
                          dW_Q=_sum_outer(X_q, dQ), dW_K=_sum_outer(X_kv, dK),
                          dW_V=_sum_outer(X_kv, dV), dW_O=dW_O, dscores=dS)


def layer_norm_backward(X, gamma, dY, eps: float = 1e-5):
    """Gradients of Y = gamma * Xhat + beta, Xhat = (X - mean) / sigma, sigma = sqrt(var + eps).

        dbeta = sum dY,   dgamma = sum dY * Xhat,   dXhat = dY * gamma,
        dX = (dXhat - mean(dXhat) - Xhat * mean(dXhat * Xhat)) / sigma    (means over the last axis)

    X : (..., n, d_model), gamma : (d_model,), dY : (..., n, d_model); the sums run over every
    row. Returns (dX, dgamma, dbeta).
    """
    X = _as_array("X", X, min_ndim=1)
    gamma = _as_array("gamma", gamma, 1)
    if gamma.shape != X.shape[-1:]:
        raise ValueError(f"gamma must have shape (d_model,) = {X.shape[-1:]}, got {gamma.shape}")
    if not eps > 0:
        raise ValueError(f"eps must be positive, got {eps!r}")
    dY = _grad_like("dY", dY, X.shape)
    sigma = np.sqrt(X.var(axis=-1, keepdims=True) + eps)  # (..., n, 1)
    X_hat = (X - X.mean(axis=-1, keepdims=True)) / sigma  # (..., n, d_model)
    dX_hat = dY * gamma
    dX = (dX_hat - dX_hat.mean(axis=-1, keepdims=True)
          - X_hat * np.mean(dX_hat * X_hat, axis=-1, keepdims=True)) / sigma
    rows = tuple(range(X.ndim - 1))  # every axis but the features
    return dX, np.sum(dY * X_hat, axis=rows), np.sum(dY, axis=rows)


def feed_forward_backward(X, W_1, b_1, W_2, b_2, dY):
    """Gradients of FFN(X) = relu(Z) W_2 + b_2 with Z = X W_1 + b_1, given dY = dL/dFFN(X).

        dW_2 = H^T dY, db_2 = sum dY, dZ = (dY W_2^T) * [Z > 0], dW_1 = X^T dZ, db_1 = sum dZ,
        dX = dZ W_1^T                                                   (H = relu(Z))

    Shapes as in feed_forward. Returns (dX, dW_1, db_1, dW_2, db_2). ReLU's derivative at
    exactly 0 is taken as 0, as in PyTorch.
    """
    X = _as_array("X", X, min_ndim=1)
    W_1, b_1 = _as_array("W_1", W_1, 2), _as_array("b_1", b_1, 1)
    W_2 = _as_array("W_2", W_2, 2)
    d_model = X.shape[-1]
    if W_1.shape[0] != d_model or b_1.shape != (W_1.shape[1],):
        raise ValueError(f"need W_1 (d_model, d_ff) and b_1 (d_ff,) with d_model = {d_model}, "
                         f"got W_1 {W_1.shape} and b_1 {b_1.shape}")
    if W_2.shape != (W_1.shape[1], d_model) or np.shape(b_2) != (d_model,):
        raise ValueError(f"need W_2 (d_ff, d_model) = {(W_1.shape[1], d_model)} and b_2 "
                         f"({d_model},), got W_2 {W_2.shape} and b_2 {np.shape(b_2)}")
    dY = _grad_like("dY", dY, X.shape)
    Z = X @ W_1 + b_1  # (..., n, d_model) @ (d_model, d_ff) -> (..., n, d_ff)
    dZ = (dY @ W_2.T) * (Z > 0)  # (..., n, d_model) @ (d_model, d_ff) -> (..., n, d_ff)
    rows = tuple(range(X.ndim - 1))
    dX = dZ @ W_1.T  # (..., n, d_ff) @ (d_ff, d_model) -> (..., n, d_model)
    return dX, _sum_outer(X, dZ), dZ.sum(axis=rows), _sum_outer(relu(Z), dY), dY.sum(axis=rows)


def _as_tokens(tokens, vocab_size: int) -> np.ndarray:
    t = np.asarray(tokens)
    if t.size and not np.issubdtype(t.dtype, np.integer):
        raise ValueError(f"tokens must be integers (token ids), got dtype {t.dtype}")
    if t.ndim == 0 or t.size == 0:
        raise ValueError(f"tokens must be a non-empty array of token ids, got shape {t.shape}")
    if t.min() < 0 or t.max() >= vocab_size:
        raise ValueError(f"token ids must be in 0..vocab_size-1 = 0..{vocab_size - 1}, got ids "
                         f"from {t.min()} to {t.max()}")
    return t


def embedding(tokens, E) -> np.ndarray:
    """X[..., i, :] = E[tokens[..., i]]: row lookup in the table E (vocab_size, d_model)."""
    E = _as_array("E", E, min_ndim=2)
    if E.ndim != 2:
        raise ValueError(f"E must be a (vocab_size, d_model) table, got shape {E.shape}")
    return E[_as_tokens(tokens, E.shape[0])]  # (..., n) -> (..., n, d_model)


def embedding_backward(tokens, dX, vocab_size: int) -> np.ndarray:
    """dE[v] = sum of dX[..., i, :] over every position i with tokens[..., i] = v. (vocab_size, d_model)."""
    vocab_size = _positive_int("vocab_size", vocab_size)
    tokens = _as_tokens(tokens, vocab_size)
    dX = _as_array("dX", dX, min_ndim=1)
    if dX.shape[:-1] != tokens.shape:
        raise ValueError(f"dX must have shape tokens.shape + (d_model,) = {tokens.shape} + (d,), "
                         f"got {dX.shape}")
    dE = np.zeros((vocab_size, dX.shape[-1]))
    np.add.at(dE, tokens.ravel(), dX.reshape(-1, dX.shape[-1]))  # a token used twice adds twice
    return dE


def softmax_cross_entropy(logits, targets, ignore_index: int = -100) -> tuple[float, np.ndarray]:
    """L = -(1/N) sum_i log softmax(logits_i)[t_i] over the N counted positions, and dL/dlogits.

        dL/dlogits_i = (softmax(logits_i) - onehot(t_i)) / N      (0 where t_i = ignore_index)

    logits : (..., vocab_size); targets : (...) integer ids, ignore_index where nothing is
    predicted (as in PyTorch's cross_entropy). Returns (loss in nats, dlogits).
    """
    logits = _as_array("logits", logits, min_ndim=1)
    t = np.asarray(targets)
    if t.shape != logits.shape[:-1] or (t.size and not np.issubdtype(t.dtype, np.integer)):
        raise ValueError(f"targets must be integers of shape logits.shape[:-1] = "
                         f"{logits.shape[:-1]}, got {t.dtype} of shape {t.shape}")
    counted = t != ignore_index
    vocab_size = logits.shape[-1]
    if not np.any(counted):
        raise ValueError(f"every target is ignore_index = {ignore_index}: nothing to average")
    if np.any((t[counted] < 0) | (t[counted] >= vocab_size)):
        raise ValueError(f"targets must be in 0..{vocab_size - 1} (or ignore_index = "
                         f"{ignore_index}), got values from {t[counted].min()} to {t[counted].max()}")
    shifted = logits - logits.max(axis=-1, keepdims=True)  # stable log-softmax
    log_p = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))  # (..., vocab)
    safe_t = np.where(counted, t, 0)[..., None]  # (..., 1)
    N = int(counted.sum())
    loss = -float(np.sum(np.take_along_axis(log_p, safe_t, axis=-1)[..., 0] * counted)) / N
    dlogits = np.exp(log_p)  # softmax(logits)
    np.put_along_axis(dlogits, safe_t, np.take_along_axis(dlogits, safe_t, axis=-1) - 1.0, axis=-1)
    return loss, dlogits * counted[..., None] / N


@dataclass(frozen=True)
class AdamState:
    """Adam's running averages of the gradients (m) and squared gradients (v), after `step` steps."""

    step: int
    m: dict
    v: dict


def adam_init(params: dict) -> AdamState:
    """Zero averages for every array of params (a dict name -> array)."""
    return AdamState(0, {k: np.zeros_like(p) for k, p in params.items()},
                     {k: np.zeros_like(p) for k, p in params.items()})


def adam_step(params: dict, grads: dict, state: AdamState, lr: float = 1e-3, beta1: float = 0.9,
              beta2: float = 0.999, eps: float = 1e-8) -> tuple[dict, AdamState]:
    """One Adam step (Kingma and Ba; as torch.optim.Adam), for every array p with gradient g:

        m = beta1 m + (1 - beta1) g,   v = beta2 v + (1 - beta2) g^2,
        p = p - lr * mhat / (sqrt(vhat) + eps),   mhat = m / (1 - beta1^t), vhat = v / (1 - beta2^t)

    Returns new params and a new state; the ones passed in are not changed.
    """
    for name, d in (("params", params), ("grads", grads)):
        if not isinstance(d, dict):
            raise ValueError(f"{name} must be a dict name -> array, got {type(d).__name__}")
    if set(grads) != set(params):
        raise ValueError(f"grads must have the keys of params, got {sorted(grads)} for "
                         f"{sorted(params)}")
    if not isinstance(state, AdamState) or set(state.m) != set(params):
        raise ValueError("state must be the AdamState of these params (from adam_init(params) "
                         f"or the previous adam_step), got {type(state).__name__}")
    for k in params:
        g = _as_array(f"grads[{k!r}]", grads[k])  # NaN or inf would spoil every later step
        if g.shape != np.shape(params[k]):
            raise ValueError(f"grads[{k!r}] must have the shape of params[{k!r}], "
                             f"{np.shape(params[k])}, got {g.shape}")
    if not lr > 0:
        raise ValueError(f"lr must be positive, got {lr!r}")
    t = state.step + 1
    m = {k: beta1 * state.m[k] + (1 - beta1) * grads[k] for k in params}
    v = {k: beta2 * state.v[k] + (1 - beta2) * grads[k] ** 2 for k in params}
    new = {k: params[k] - lr * (m[k] / (1 - beta1 ** t)) / (np.sqrt(v[k] / (1 - beta2 ** t)) + eps)
           for k in params}
    return new, AdamState(t, m, v)


# A one-layer, decoder-only language model: embeddings, one post-norm layer with causal
# self-attention (ac.encoder_layer with a causal mask), and an unembedding W_U to the vocabulary.

@dataclass(frozen=True)
class LMConfig:
    """Sizes of the one-layer language model of notebooks 10 and 11 (like nanoGPT's GPTConfig)."""

    vocab_size: int
    n_ctx: int                 # the longest sequence: rows of the positional table P
    d_model: int = 32
    num_heads: int = 1
    d_ff: int = 64
    d_k: int | None = None     # query/key width of each head; d_model / h by default (d_v always is)
    scale_scores: bool = True  # False: softmax(Q K^T + M), without 1/sqrt(d_k) (notebook 10)

    def __post_init__(self):
        for name in ("vocab_size", "n_ctx", "d_model", "num_heads", "d_ff"):
            _positive_int(name, getattr(self, name))
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model = {self.d_model} is not divisible by num_heads = "
                             f"{self.num_heads}")
        if self.d_k is not None:
            _positive_int("d_k", self.d_k)
        if not isinstance(self.scale_scores, (bool, np.bool_)):
            raise ValueError(f"scale_scores must be True or False, got {self.scale_scores!r}")

    @property
    def head_width(self) -> int:
        """d_k of each head."""
        return self.d_model // self.num_heads if self.d_k is None else self.d_k


def init_lm(config: LMConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random parameters, a dict name -> array (what adam_step updates).

    E (vocab_size, d_model) and P (n_ctx, d_model) with std 1/sqrt(2), so X = E[t] + P[i] has
    entries of variance about 1; the layer as init_encoder_layer (std 1/sqrt(fan_in), gamma = 1,
    beta = 0, zero biases); W_U (d_model, vocab_size) with std 1/sqrt(d_model). W_Q and W_K
    are drawn last: configs that differ only in d_k get the same draw of everything else.
    """
    if not isinstance(config, LMConfig):
        raise ValueError(f"config must be an LMConfig, got {type(config).__name__}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a np.random.Generator (np.random.default_rng(seed)), "
                         f"got {type(rng).__name__}")
    c = config
    d_model, hk, hv = c.d_model, c.num_heads * c.head_width, c.d_model
    p = {"E": rng.normal(0, 0.5 ** 0.5, size=(c.vocab_size, d_model)),
         "P": rng.normal(0, 0.5 ** 0.5, size=(c.n_ctx, d_model)),
         "W_V": rng.normal(0, d_model ** -0.5, size=(d_model, hv)),
         "W_O": rng.normal(0, hv ** -0.5, size=(hv, d_model)),
         "gamma_1": np.ones(d_model), "beta_1": np.zeros(d_model),
         "W_1": rng.normal(0, d_model ** -0.5, size=(d_model, c.d_ff)), "b_1": np.zeros(c.d_ff),
         "W_2": rng.normal(0, c.d_ff ** -0.5, size=(c.d_ff, d_model)), "b_2": np.zeros(d_model),
         "gamma_2": np.ones(d_model), "beta_2": np.zeros(d_model),
         "W_U": rng.normal(0, d_model ** -0.5, size=(d_model, c.vocab_size))}
    p["W_Q"] = rng.normal(0, d_model ** -0.5, size=(d_model, hk))
    p["W_K"] = rng.normal(0, d_model ** -0.5, size=(d_model, hk))
    return p


def _lm_shapes(c: LMConfig) -> dict[str, tuple[int, ...]]:
    hk, hv = c.num_heads * c.head_width, c.d_model
    return {"E": (c.vocab_size, c.d_model), "P": (c.n_ctx, c.d_model), "W_Q": (c.d_model, hk),
            "W_K": (c.d_model, hk), "W_V": (c.d_model, hv), "W_O": (hv, c.d_model),
            "gamma_1": (c.d_model,), "beta_1": (c.d_model,), "W_1": (c.d_model, c.d_ff),
            "b_1": (c.d_ff,), "W_2": (c.d_ff, c.d_model), "b_2": (c.d_model,),
            "gamma_2": (c.d_model,), "beta_2": (c.d_model,), "W_U": (c.d_model, c.vocab_size)}


def _check_lm(params: dict, tokens, config: LMConfig) -> np.ndarray:
    if not isinstance(config, LMConfig):
        raise ValueError(f"config must be an LMConfig, got {type(config).__name__}")
    shapes = _lm_shapes(config)
    if not isinstance(params, dict) or set(params) != set(shapes):
        got = sorted(params) if isinstance(params, dict) else type(params).__name__
        raise ValueError(f"params must be a dict with the keys {sorted(shapes)}, got {got}")
    for name, shape in shapes.items():
        if np.shape(params[name]) != shape:
            raise ValueError(f"params[{name!r}] must have shape {shape} for this config, "
                             f"got {np.shape(params[name])}")
    tokens = _as_tokens(tokens, config.vocab_size)
    if tokens.shape[-1] > config.n_ctx:
        raise ValueError(f"sequences of length {tokens.shape[-1]} are longer than n_ctx = "
                         f"{config.n_ctx}, the rows of the positional table P")
    return tokens


def _query_weights(params: dict, config: LMConfig) -> np.ndarray:
    """W_Q as the attention uses it: times sqrt(d_k) without scaling, which cancels the 1/sqrt(d_k)."""
    return params["W_Q"] if config.scale_scores else params["W_Q"] * np.sqrt(config.head_width)


@dataclass(frozen=True)
class LMSteps:
    """Every intermediate of lm_forward, in order (what lm_backward reads)."""

    tokens: np.ndarray   # (..., n) token ids
    X: np.ndarray        # (..., n, d_model)   E[tokens] + P[:n]
    attn: np.ndarray     # (..., n, d_model)   MHA(X, X; causal mask)
    weights: np.ndarray  # (..., h, n, n)      the attention weights
    H: np.ndarray        # (..., n, d_model)   LN_1(X + attn)
    F: np.ndarray        # (..., n, d_model)   FFN(H)
    Y: np.ndarray        # (..., n, d_model)   LN_2(H + FFN(H))
    logits: np.ndarray   # (..., n, vocab_size) Y W_U


def lm_forward(params: dict, tokens, config: LMConfig) -> LMSteps:
    """logits = Y W_U, Y = LN_2(H + FFN(H)), H = LN_1(X + MHA(X, X; causal)), X = E[tokens] + P[:n].

    tokens : (..., n) ids with n <= n_ctx. The layer is ac.encoder_layer with a causal mask, so
    logits[..., i, :] (the prediction of token i + 1) depends on tokens 0..i only.
    """
    tokens = _check_lm(params, tokens, config)
    p = params
    n = tokens.shape[-1]
    X = embedding(tokens, p["E"]) + p["P"][:n]  # (..., n, d_model)
    attn, weights = multi_head_attention(X, X, _query_weights(p, config), p["W_K"], p["W_V"],
                                         p["W_O"], config.num_heads, causal_mask(n))
    H = layer_norm(X + attn, p["gamma_1"], p["beta_1"])  # (..., n, d_model)
    F = feed_forward(H, p["W_1"], p["b_1"], p["W_2"], p["b_2"])  # (..., n, d_model)
    Y = layer_norm(H + F, p["gamma_2"], p["beta_2"])  # (..., n, d_model)
    logits = Y @ p["W_U"]  # (..., n, d_model) @ (d_model, vocab_size) -> (..., n, vocab_size)
    return LMSteps(tokens, X, attn, weights, H, F, Y, logits)


def lm_backward(params: dict, steps: LMSteps, dlogits, config: LMConfig
                ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Gradients of every parameter, given the forward's steps and dlogits = dL/dlogits.

    The forward's steps in reverse: W_U, LN_2, FFN (+ its residual), LN_1, attention (+ its
    residual), then the embeddings (P gets the sum over the batch). Returns (grads, dscores):
    grads has the keys of params; dscores (..., h, n, n) is dL/dS at the attention's softmax
    input, the gradient that reaches the scores.
    """
    if not isinstance(steps, LMSteps):
        raise ValueError(f"steps must be the LMSteps that lm_forward returned, got "
                         f"{type(steps).__name__}")
    tokens = _check_lm(params, steps.tokens, config)
    p, s = params, steps
    dlogits = _grad_like("dlogits", dlogits, s.logits.shape)
    g = {"W_U": _sum_outer(s.Y, dlogits)}
    dY = dlogits @ p["W_U"].T  # (..., n, vocab) @ (vocab, d_model) -> (..., n, d_model)
    dZ2, g["gamma_2"], g["beta_2"] = layer_norm_backward(s.H + s.F, p["gamma_2"], dY)
    dH, g["W_1"], g["b_1"], g["W_2"], g["b_2"] = feed_forward_backward(
        s.H, p["W_1"], p["b_1"], p["W_2"], p["b_2"], dZ2)
    dH = dH + dZ2  # the residual H + FFN(H) passes dZ2 straight to H
    dZ1, g["gamma_1"], g["beta_1"] = layer_norm_backward(s.X + s.attn, p["gamma_1"], dH)
    mha = multi_head_attention_backward(s.X, s.X, _query_weights(p, config), p["W_K"], p["W_V"],
                                        p["W_O"], config.num_heads, dZ1, causal_mask(s.X.shape[-2]))
    scale = 1.0 if config.scale_scores else np.sqrt(config.head_width)
    g.update(W_Q=mha.dW_Q * scale, W_K=mha.dW_K, W_V=mha.dW_V, W_O=mha.dW_O)
    dX = dZ1 + mha.dX_q + mha.dX_kv  # residual + both uses of X (queries, keys and values)
    g["E"] = embedding_backward(tokens, dX, config.vocab_size)
    g["P"] = np.zeros_like(p["P"])
    g["P"][:dX.shape[-2]] = dX.reshape(-1, *dX.shape[-2:]).sum(axis=0)  # (n, d_model)
    return {k: g[k] for k in params}, mha.dscores
