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
