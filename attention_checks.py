"""attention_checks: every input check of attention_core and attention_learning, in one place.

The maths modules call one check per public function, at its top, and read as the formulas; the
checks are here, with the messages a learner sees. Each bad input raises ValueError naming the
argument and the shapes or values it got. Results that float64 cannot hold (a score that
overflows, a row that the mask blocks entirely) can only be found after computing: the maths
detects them where they arise and the functions here explain them.

In the order of the course:

1. numbers and arrays      as_numbers, as_array, positive_int, finite_real
2. masks                    as_mask (additive only: boolean and 0/1 masks are refused),
                            query_key_sizes (queries the last n of m positions), lengths
3. softmax and attention    softmax_input, attention, scores (explains rows softmax cannot take)
4. multi-head attention     heads, grouped, multi_head (forward and backward share it),
                            projections
5. positions, FFN, norm     positional, rope, feed_forward, layer_norm, finite (an overflow after
                            computing)
6. layers                   rng, params, layers
7. cost, tiled attention    cost, tile_max, tile_sums
8. learning                 grad_like, tokens, softmax_output, layer_norm_backward, targets, adam,
                            lm_config, lm
"""

from __future__ import annotations

import numbers

import numpy as np


# --------------------------------------------------------------------------
# 1. Numbers and arrays
# --------------------------------------------------------------------------

def as_numbers(name: str, x) -> np.ndarray:
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


def as_array(name: str, x, min_ndim: int = 0) -> np.ndarray:
    """Turn x into a float array; reject non-numbers, NaN, +-inf and too few dimensions."""
    a = as_numbers(name, x)
    if a.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise ValueError(f"{name} contains {a[bad]} at index {bad} (shape {a.shape}); "
                         "inputs must be finite")
    return a


def positive_int(name: str, value) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def finite_real(name: str, value) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def _batch(*arrays, names: str) -> tuple[int, ...]:
    """The broadcast batch shape (all axes but the last two) of the arrays."""
    try:
        return np.broadcast_shapes(*(a.shape[:-2] for a in arrays))
    except ValueError:
        raise ValueError(f"batch dimensions of {names} do not broadcast") from None


# --------------------------------------------------------------------------
# 2. Masks (additive: 0 = may attend, -inf = may not)
# --------------------------------------------------------------------------

BOOL_MASK_HELP = (
    "attention_core only takes ADDITIVE masks: 0 where a key may be seen, -inf where it may "
    "not. A boolean mask is ambiguous: PyTorch uses True = may attend in "
    "F.scaled_dot_product_attention but True = may NOT attend in nn.MultiheadAttention "
    "(attn_mask, key_padding_mask). Convert it: np.where(allowed, 0.0, -np.inf) if True "
    "means 'may attend', or np.where(blocked, -np.inf, 0.0) if True means 'may not'")


def as_mask(mask, target_shape: tuple[int, ...], name: str = "mask",
            per_head_hint: bool = False) -> np.ndarray:
    """Check an additive mask: finite or -inf values, broadcastable to target_shape (..., n, m)
    without enlarging it (no new batch entries, no new axes)."""
    if np.asarray(mask).dtype == bool:
        raise ValueError(f"{name} is boolean (shape {np.shape(mask)}); {BOOL_MASK_HELP}")
    M = as_numbers(name, mask)
    top = np.max(M) if M.size else 0.0  # NaN and +inf show up here: one pass over the mask
    if np.isnan(top) or top == np.inf:
        bad = tuple(int(i) for i in np.argwhere(np.isnan(M) | (M == np.inf))[0])
        raise ValueError(f"{name} may only hold finite numbers (0 = may attend) and -inf "
                         f"(may not); it contains NaN or +inf: {M[bad]} at index {bad} "
                         f"(shape {M.shape})")
    if top == 1 and np.all((M == 0) | (M == 1)):
        raise ValueError(f"{name} holds only 0 and 1 (shape {M.shape}): that is an indicator "
                         f"mask, and adding 1 to a score blocks nothing; {BOOL_MASK_HELP}")
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


def query_key_sizes(n, m) -> tuple[int, int]:
    """n queries that are the last n of m >= n positions (m defaults to n)."""
    n = positive_int("n", n)
    m = n if m is None else positive_int("m", m)
    if m < n:
        raise ValueError(f"m = {m} keys is fewer than n = {n} queries: the queries are the last "
                         "n of the m positions, so m must be at least n")
    return n, m


def lengths(lengths, m: int) -> np.ndarray:
    """padding_mask's lengths: 1-D integers in 1..m."""
    m = positive_int("m", m)
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or lengths.size == 0 or not np.issubdtype(lengths.dtype, np.integer):
        raise ValueError(f"lengths must be a 1-D list of integers, got {lengths.tolist()!r}")
    if np.any(lengths < 1) or np.any(lengths > m):
        raise ValueError(f"every length must be in 1..m = 1..{m}, got {lengths.tolist()}")
    return lengths


# --------------------------------------------------------------------------
# 3. Softmax and attention
# --------------------------------------------------------------------------

def _row_list(rows: np.ndarray) -> tuple[str, str]:
    """'s' or '' and the first few indices of the True entries of rows, as text."""
    idx = [tuple(int(i) for i in r) for r in np.argwhere(rows)]
    where = ", ".join(map(str, idx[:5])) + (f" and {len(idx) - 5} more" if len(idx) > 5 else "")
    return ("s" if len(idx) > 1 else ""), where


def softmax_input(x, axis) -> np.ndarray:
    """softmax's x as floats, with an axis it has, of length > 0, and a finite max along it."""
    x = as_numbers("x", x)
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
    return x


def attention(Q, K, V, mask):
    """Checked Q (..., n, d_k), K (..., m, d_k), V (..., m, d_v) or None, and the additive mask
    (None, or broadcastable to the scores (..., n, m) without enlarging them)."""
    Q = as_array("Q", Q, min_ndim=2)
    K = as_array("K", K, min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last dimension d_k, got Q {Q.shape} "
                         f"and K {K.shape}")
    if Q.shape[-1] == 0:
        raise ValueError(f"Q and K have d_k = 0 features (Q {Q.shape}, K {K.shape}); "
                         "the scale 1/sqrt(d_k) is undefined")
    if K.shape[-2] == 0:
        raise ValueError(f"K has m = 0 key positions (shape {K.shape}); every query needs "
                         "at least one key (softmax over no keys is undefined)")
    if V is None:
        batch = _batch(Q, K, names=f"Q {Q.shape} and K {K.shape}")
    else:
        V = as_array("V", V, min_ndim=2)
        if K.shape[-2] != V.shape[-2]:
            raise ValueError(f"K and V must have the same number of positions m, got K "
                             f"{K.shape} and V {V.shape}")
        batch = _batch(Q, K, V, names=f"Q {Q.shape}, K {K.shape} and V {V.shape}")
    M = None if mask is None else as_mask(mask, (*batch, Q.shape[-2], K.shape[-2]))
    return Q, K, V, M


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


def scores(S, M, Q, K, names=("Q", "K"), what="mask") -> None:
    """Say why a row of the scores S = Q K^T / sqrt(d_k) + M (..., n, m) has no softmax, if one has none.

    Q and K are finite (checked) and the mask holds no NaN or +inf (checked), so NaN or +inf
    in a row can only come from Q K^T leaving float64's range. A row that is -inf everywhere
    is the mask's doing if the mask alone blocks it, otherwise an overflow to -inf.
    """
    row_max = np.max(S, axis=-1)  # (..., n): NaN, +inf and -inf all show up here
    if np.all(np.isfinite(row_max)):
        return
    overflow = np.isnan(row_max) | (row_max == np.inf)
    if np.any(overflow):
        _raise_overflow(overflow, S.shape, Q, K, names, M is not None)
    empty = row_max == -np.inf
    if M is not None:
        blocked = empty & np.all(np.broadcast_to(M, S.shape) == -np.inf, axis=-1)
        if np.any(blocked):
            _raise_blocked(blocked, S.shape, what)
    _raise_overflow(empty, S.shape, Q, K, names, M is not None)


# --------------------------------------------------------------------------
# 4. Multi-head attention
# --------------------------------------------------------------------------

def heads(X, num_heads=None) -> tuple[np.ndarray, int | None]:
    """split_heads' X (..., n, h*d) and h (h must divide the last axis); merge_heads' X (..., h, n, d)."""
    if num_heads is None:
        return as_array("X", X, min_ndim=3), None
    X = as_array("X", X, min_ndim=2)
    num_heads = positive_int("num_heads", num_heads)
    if X.shape[-1] % num_heads:
        raise ValueError(f"last dimension {X.shape[-1]} of shape {X.shape} is not divisible by "
                         f"num_heads = {num_heads}")
    return X, num_heads


def multi_head(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask, mask_name="mask",
               num_kv_heads=None):
    """The arguments of multi_head_attention and of its backward pass, checked once for both.

    Returns X_q, X_kv, W_Q, W_K, W_V, W_O as float arrays, h, h_kv and the mask M (or None).
    """
    X_q = as_array("X_q", X_q, min_ndim=2)
    X_kv = as_array("X_kv", X_kv, min_ndim=2)
    W_Q, W_K, W_V, W_O = (as_array(name, W, min_ndim=2) for name, W in
                          (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V), ("W_O", W_O)))
    h = positive_int("num_heads", num_heads)
    h_kv = h if num_kv_heads is None else positive_int("num_kv_heads", num_kv_heads)
    if h % h_kv:
        raise ValueError(f"num_heads = {h} is not a multiple of num_kv_heads = {h_kv}: each "
                         "key/value head must serve the same number of query heads")
    d_model = X_q.shape[-1]
    if X_kv.shape[-1] != d_model:
        raise ValueError(f"X_q and X_kv must have the same d_model, got X_q {X_q.shape} "
                         f"and X_kv {X_kv.shape}")
    if X_kv.shape[-2] == 0:
        raise ValueError(f"X_kv has m = 0 key positions (shape {X_kv.shape}); every query "
                         "needs at least one key (softmax over no keys is undefined)")
    batch = _batch(X_q, X_kv, names=f"X_q {X_q.shape} and X_kv {X_kv.shape}")
    for name, W, heads, heads_name in (("W_Q", W_Q, h, "num_heads"), ("W_K", W_K, h_kv, "num_kv_heads"),
                                       ("W_V", W_V, h_kv, "num_kv_heads")):
        if W.ndim != 2 or W.shape[0] != d_model:
            raise ValueError(f"{name} must have shape (d_model, h*d) = ({d_model}, ...), "
                             f"got {W.shape}")
        if W.shape[1] % heads:
            raise ValueError(f"{name} has {W.shape[1]} columns, not divisible by "
                             f"{'num_heads' if h_kv == h else heads_name} = {heads} (shape {W.shape})")
    if h_kv == h and W_Q.shape != W_K.shape:
        raise ValueError(f"W_Q and W_K must have the same shape (d_model, h*d_k), got "
                         f"W_Q {W_Q.shape} and W_K {W_K.shape}")
    if h_kv != h and W_K.shape[1] // h_kv != W_Q.shape[1] // h:
        raise ValueError(f"W_K must have shape (d_model, h_kv*d_k) = ({d_model}, "
                         f"{h_kv * (W_Q.shape[1] // h)}) for h_kv = {h_kv} heads of the width "
                         f"d_k = {W_Q.shape[1] // h} of W_Q {W_Q.shape}, got {W_K.shape}")
    if W_Q.shape[1] == 0:
        raise ValueError(f"W_Q and W_K have 0 columns (shape {W_Q.shape}), so d_k = 0; the "
                         "scale 1/sqrt(d_k) is undefined")
    if W_O.shape != (W_V.shape[1] * h // h_kv, d_model):
        raise ValueError(f"W_O must have shape (h*d_v, d_model) = ({W_V.shape[1] * h // h_kv}, "
                         f"{d_model}), got {W_O.shape}")
    M = None
    if mask is not None:
        M = as_mask(mask, (*batch, X_q.shape[-2], X_kv.shape[-2]), mask_name, per_head_hint=True)
        M = M[..., None, :, :] if M.ndim >= 2 else M  # (..., 1, n, m): the same for every head
    return X_q, X_kv, W_Q, W_K, W_V, W_O, h, h_kv, M


def grouped(Q, K, V):
    """grouped_query_attention's Q (..., h, n, d_k), K (..., h_kv, m, d_k), V (..., h_kv, m, d_v),
    with h a multiple of h_kv; returns them and the group size h / h_kv."""
    Q, K, V = (as_array(name, a, min_ndim=3) for name, a in (("Q", Q), ("K", K), ("V", V)))
    if K.shape[-3] != V.shape[-3]:
        raise ValueError(f"K and V must have the same number of heads h_kv, got K {K.shape} "
                         f"and V {V.shape}")
    if K.shape[-3] == 0 or Q.shape[-3] % K.shape[-3]:
        raise ValueError(f"Q has h = {Q.shape[-3]} heads (shape {Q.shape}), not a multiple of "
                         f"h_kv = {K.shape[-3]} key/value heads (K {K.shape}): every key/value "
                         "head must serve the same number of query heads")
    return Q, K, V, Q.shape[-3] // K.shape[-3]


def projections(Q, K, V, X_q, X_kv, W_Q, W_K, W_V) -> None:
    """Q = X_q W_Q, K = X_kv W_K, V = X_kv W_V were computed from finite inputs: did one overflow?"""
    for what, P, x, W, x_name, W_name in (("X_q @ W_Q", Q, X_q, W_Q, "X_q", "W_Q"),
                                          ("X_kv @ W_K", K, X_kv, W_K, "X_kv", "W_K"),
                                          ("X_kv @ W_V", V, X_kv, W_V, "X_kv", "W_V")):
        finite(what, P, {x_name: x, W_name: W})


# --------------------------------------------------------------------------
# 5. Positions, FFN, layer norm, and overflows found after computing
# --------------------------------------------------------------------------

def positional(num_positions, d_model, k=None):
    """num_positions (or the offset k) and an even d_model (sin/cos pairs)."""
    first = positive_int("num_positions", num_positions) if k is None else finite_real("k", k)
    d_model = positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(f"d_model must be even (sin/cos pairs), got d_model = {d_model}")
    return first, d_model


def rope(x, positions, base):
    """rope's x (..., n, d) with d even, positions (n integers; default 0..n-1) and base > 1."""
    x = as_array("x", x, min_ndim=2)
    n, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"x's last axis d must be even (features are rotated in pairs), got d = {d}")
    p = np.arange(n) if positions is None else np.asarray(positions)
    if p.dtype.kind not in "iu" or p.dtype == bool:
        raise ValueError(f"positions must be integers (the token positions), got dtype {p.dtype}: "
                         f"{np.ravel(p)[:3].tolist()!r}")
    if p.ndim != 1 or p.shape[0] != n:
        raise ValueError(f"positions must be a 1-D array of length n = {n} (one position per "
                         f"row of x), got shape {p.shape}; a cached query at position t takes "
                         "positions=[t]")
    base = finite_real("base", base)
    if base <= 1:
        raise ValueError(f"base must be > 1 (theta_j = base^(-2j/d) must fall with j), got base = {base}")
    return x, p.astype(np.int64), base


def feed_forward(X, W_1, b_1, W_2, b_2):
    """X (..., n, d_model), W_1 (d_model, d_ff), b_1 (d_ff,), W_2 (d_ff, d_model), b_2 (d_model,)."""
    X = as_array("X", X, min_ndim=1)
    W_1, b_1 = as_array("W_1", W_1, 2), as_array("b_1", b_1, 1)
    W_2, b_2 = as_array("W_2", W_2, 2), as_array("b_2", b_2, 1)
    d_model = X.shape[-1]
    if W_1.ndim != 2 or W_1.shape[0] != d_model or b_1.shape != (W_1.shape[1],):
        raise ValueError(f"need W_1 (d_model, d_ff) and b_1 (d_ff,) with d_model = {d_model}, "
                         f"got W_1 {W_1.shape} and b_1 {b_1.shape}")
    if W_2.shape != (W_1.shape[1], d_model) or b_2.shape != (d_model,):
        raise ValueError(f"need W_2 (d_ff, d_model) = {(W_1.shape[1], d_model)} and b_2 "
                         f"({d_model},), got W_2 {W_2.shape} and b_2 {b_2.shape}")
    return X, W_1, b_1, W_2, b_2


def layer_norm(X, gamma, beta, eps):
    X = as_array("X", X, min_ndim=1)
    gamma, beta = as_array("gamma", gamma, 1), as_array("beta", beta, 1)
    if gamma.shape != X.shape[-1:] or beta.shape != X.shape[-1:]:
        raise ValueError(f"gamma and beta must have shape (d_model,) = {X.shape[-1:]}, got "
                         f"gamma {gamma.shape} and beta {beta.shape}")
    if not isinstance(eps, numbers.Real) or isinstance(eps, bool) or not 0 < eps < np.inf:
        raise ValueError(f"eps must be a positive finite number, got {eps!r}")
    if X.shape[-1] == 0:
        raise ValueError(f"X has d_model = 0 features (shape {X.shape}); a row without entries "
                         "has no mean or variance")
    return X, gamma, beta


def finite(what: str, a: np.ndarray, inputs: dict, advice: str = "scale them down") -> np.ndarray:
    """a was computed from the finite `inputs`; if it is not finite, float64 overflowed."""
    if not np.all(np.isfinite(a)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        largest = ", ".join(f"|{k}| up to {np.max(np.abs(v)) if v.size else 0:.3g}"
                            for k, v in inputs.items())  # only on the way to the error
        raise ValueError(f"{what} overflowed: it is {a[bad]} at index {bad} (shape {a.shape}), "
                         f"beyond float64's range (about 1.8e308); {largest}: {advice}")
    return a


# --------------------------------------------------------------------------
# 6. Layers: seeds, parameter bundles, stacks
# --------------------------------------------------------------------------

def rng(rng, spelled: str = "a numpy Generator") -> None:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be {spelled} (np.random.default_rng(seed)), got "
                         f"{type(rng).__name__}" + ("" if spelled.startswith("a np.")
                                                    else f": {rng!r}"))


def params(params, kind: type, init: str) -> None:
    if not isinstance(params, kind):
        raise ValueError(f"params must be {kind.__name__} (made by {init}), got "
                         f"{type(params).__name__}")


def layers(layers, kind: type) -> list:
    if not isinstance(layers, (list, tuple)) or not all(isinstance(p, kind) for p in layers):
        got = type(layers).__name__ if not isinstance(layers, (list, tuple)) else \
            "[" + ", ".join(type(p).__name__ for p in layers) + "]"
        raise ValueError(f"layers must be a list of {kind.__name__}, got {got}")
    return list(layers)


def same_d_model(Y, memory) -> None:
    if memory.shape[-1] != Y.shape[-1]:
        raise ValueError(f"Y and memory must have the same d_model, got Y {Y.shape} and "
                         f"memory {memory.shape}")


# --------------------------------------------------------------------------
# 7. Cost counts and tiled attention
# --------------------------------------------------------------------------

def cost(n, m, d_k, d_v, h, bytes_per_number):
    n = positive_int("n", n)
    m = n if m is None else positive_int("m", m)
    d_k = positive_int("d_k", d_k)
    d_v = d_k if d_v is None else positive_int("d_v", d_v)
    return n, m, d_k, d_v, positive_int("h", h), positive_int("bytes_per_number", bytes_per_number)


def _rows_of_block(rows: np.ndarray, i: int, n: int) -> np.ndarray:
    """rows (..., b_q, 1) of the query block starting at i, as a (..., n) mask of all rows."""
    full = np.zeros((*rows.shape[:-2], n), dtype=bool)
    full[..., i:i + rows.shape[-2]] = rows[..., 0]
    return full


def tile_max(run_max, i: int, shape, Q, K, M) -> None:
    """The running max (..., b_q, 1) of query block i: NaN or +inf means Q K^T overflowed."""
    bad = np.isnan(run_max) | (run_max == np.inf)
    if np.any(bad):
        _raise_overflow(_rows_of_block(bad, i, shape[-2]), shape, Q, K, ("Q", "K"), M is not None)


def tile_sums(run_sum, i: int, shape, Q, K, M, window=None) -> None:
    """The running sums (..., b_q, 1) of query block i after every key: 0 means no weight at all.
    With a window, a row is blocked when the mask hides every key of its window."""
    if np.any(run_sum == 0):  # -inf everywhere: the mask's doing, or Q K^T overflowed
        empty = _rows_of_block(run_sum == 0, i, shape[-2])
        hidden = None if M is None else M == -np.inf
        if hidden is not None and window is not None:
            back = np.arange(shape[-2])[:, None] + shape[-1] - shape[-2] - np.arange(shape[-1])
            hidden = hidden | (back < 0) | (back >= window)  # outside the window counts as hidden
        if hidden is not None and np.any(blocked := empty & np.all(hidden, axis=-1)):
            _raise_blocked(blocked, shape, "mask" if window is None else "mask, within the window,")
        _raise_overflow(empty, shape, Q, K, ("Q", "K"), M is not None)


def tile_output(out, V) -> np.ndarray:
    """acc / l of a query block: finite unless the weighted sum of V overflowed."""
    return finite("the running sum acc = sum exp(s - r) v", out, {"V": V},
                  "scale V down or use scaled_dot_product_attention")


# --------------------------------------------------------------------------
# 8. Learning: gradients, tokens, loss, Adam, the language model
# --------------------------------------------------------------------------

def grad_like(name: str, g, shape: tuple[int, ...]) -> np.ndarray:
    """Check that an upstream gradient has the shape of the forward output it belongs to."""
    g = as_array(name, g)
    if g.shape != tuple(shape):
        raise ValueError(f"{name} must have the shape of the forward output {tuple(shape)}, "
                         f"got {g.shape}")
    return g


def softmax_output(p, dp, axis):
    """softmax_backward's p (a softmax output along axis) and dp of the same shape."""
    p = as_array("p", p, min_ndim=1)
    dp = as_array("dp", dp, min_ndim=1)
    if dp.shape != p.shape:
        raise ValueError(f"p and dp must have the same shape, got p {p.shape} and dp {dp.shape}")
    sums = p.sum(axis=axis)
    if np.any(p < 0) or not np.allclose(sums, 1.0, atol=1e-6):
        raise ValueError(f"p must be the softmax output (entries >= 0, each slice along axis "
                         f"{axis} summing to 1), got entries in [{p.min():.3g}, {p.max():.3g}] "
                         f"and sums in [{sums.min():.6g}, {sums.max():.6g}]")
    return p, dp


def layer_norm_backward(X, gamma, dY, eps):
    X = as_array("X", X, min_ndim=1)
    gamma = as_array("gamma", gamma, 1)
    if gamma.shape != X.shape[-1:]:
        raise ValueError(f"gamma must have shape (d_model,) = {X.shape[-1:]}, got {gamma.shape}")
    if not eps > 0:
        raise ValueError(f"eps must be positive, got {eps!r}")
    return X, gamma, grad_like("dY", dY, X.shape)


def tokens(tokens, vocab_size: int) -> np.ndarray:
    t = np.asarray(tokens)
    if t.size and not np.issubdtype(t.dtype, np.integer):
        raise ValueError(f"tokens must be integers (token ids), got dtype {t.dtype}")
    if t.ndim == 0 or t.size == 0:
        raise ValueError(f"tokens must be a non-empty array of token ids, got shape {t.shape}")
    if t.min() < 0 or t.max() >= vocab_size:
        raise ValueError(f"token ids must be in 0..vocab_size-1 = 0..{vocab_size - 1}, got ids "
                         f"from {t.min()} to {t.max()}")
    return t


def embedding_table(E) -> np.ndarray:
    E = as_array("E", E, min_ndim=2)
    if E.ndim != 2:
        raise ValueError(f"E must be a (vocab_size, d_model) table, got shape {E.shape}")
    return E


def embedding_grad(tokens_, dX, vocab_size):
    vocab_size = positive_int("vocab_size", vocab_size)
    tokens_ = tokens(tokens_, vocab_size)
    dX = as_array("dX", dX, min_ndim=1)
    if dX.shape[:-1] != tokens_.shape:
        raise ValueError(f"dX must have shape tokens.shape + (d_model,) = {tokens_.shape} + (d,), "
                         f"got {dX.shape}")
    return tokens_, dX, vocab_size


def targets(logits, targets, ignore_index):
    """Integer targets of shape logits.shape[:-1], in 0..vocab-1 or ignore_index, not all ignored."""
    logits = as_array("logits", logits, min_ndim=1)
    t = np.asarray(targets)
    if t.shape != logits.shape[:-1] or (t.size and not np.issubdtype(t.dtype, np.integer)):
        raise ValueError(f"targets must be integers of shape logits.shape[:-1] = "
                         f"{logits.shape[:-1]}, got {t.dtype} of shape {t.shape}")
    counted = t != ignore_index
    if not np.any(counted):
        raise ValueError(f"every target is ignore_index = {ignore_index}: nothing to average")
    if np.any((t[counted] < 0) | (t[counted] >= logits.shape[-1])):
        raise ValueError(f"targets must be in 0..{logits.shape[-1] - 1} (or ignore_index = "
                         f"{ignore_index}), got values from {t[counted].min()} to {t[counted].max()}")
    return logits, t, counted


def adam(params, grads, state, state_type, lr) -> None:
    for name, d in (("params", params), ("grads", grads)):
        if not isinstance(d, dict):
            raise ValueError(f"{name} must be a dict name -> array, got {type(d).__name__}")
    if set(grads) != set(params):
        raise ValueError(f"grads must have the keys of params, got {sorted(grads)} for "
                         f"{sorted(params)}")
    if not isinstance(state, state_type) or set(state.m) != set(params):
        raise ValueError("state must be the AdamState of these params (from adam_init(params) "
                         f"or the previous adam_step), got {type(state).__name__}")
    for k in params:
        g = as_array(f"grads[{k!r}]", grads[k])  # NaN or inf would spoil every later step
        if g.shape != np.shape(params[k]):
            raise ValueError(f"grads[{k!r}] must have the shape of params[{k!r}], "
                             f"{np.shape(params[k])}, got {g.shape}")
    if not lr > 0:
        raise ValueError(f"lr must be positive, got {lr!r}")


def lm_config(c) -> None:
    for name in ("vocab_size", "n_ctx", "d_model", "num_heads", "d_ff"):
        positive_int(name, getattr(c, name))
    if c.d_model % c.num_heads:
        raise ValueError(f"d_model = {c.d_model} is not divisible by num_heads = {c.num_heads}")
    if c.d_k is not None:
        positive_int("d_k", c.d_k)
    if c.num_kv_heads is not None and c.num_heads % positive_int("num_kv_heads", c.num_kv_heads):
        raise ValueError(f"num_heads = {c.num_heads} is not a multiple of num_kv_heads = "
                         f"{c.num_kv_heads}: each key/value head must serve the same number of "
                         "query heads")
    if not isinstance(c.scale_scores, (bool, np.bool_)):
        raise ValueError(f"scale_scores must be True or False, got {c.scale_scores!r}")


def is_config(config, kind: type) -> None:
    if not isinstance(config, kind):
        raise ValueError(f"config must be an {kind.__name__}, got {type(config).__name__}")


def lm(params, tokens_, config, kind: type) -> np.ndarray:
    """The language model's config (a `kind`), params (a dict with config.shapes) and tokens
    (..., n) with n <= n_ctx."""
    is_config(config, kind)
    shapes = config.shapes
    if not isinstance(params, dict) or set(params) != set(shapes):
        got = sorted(params) if isinstance(params, dict) else type(params).__name__
        raise ValueError(f"params must be a dict with the keys {sorted(shapes)}, got {got}")
    for name, shape in shapes.items():
        if np.shape(params[name]) != shape:
            raise ValueError(f"params[{name!r}] must have shape {shape} for this config, "
                             f"got {np.shape(params[name])}")
    tokens_ = tokens(tokens_, config.vocab_size)
    if tokens_.shape[-1] > config.n_ctx:
        raise ValueError(f"sequences of length {tokens_.shape[-1]} are longer than n_ctx = "
                         f"{config.n_ctx}, the rows of the positional table P")
    return tokens_


def lm_mask(mask, n: int) -> np.ndarray:
    """lm_forward's mask: additive, (n, n) after broadcasting, and causal (-inf above the
    diagonal), so that the model still predicts each token from the ones before it only."""
    M = np.broadcast_to(as_mask(mask, (n, n)), (n, n))
    seen_later = np.triu(M > -np.inf, k=1)  # (n, n): a key after its query that is not hidden
    if seen_later.any():
        i, j = (int(x) for x in np.argwhere(seen_later)[0])
        raise ValueError(f"mask lets query {i} see the later key {j}: the language model's mask "
                         "must be causal (-inf above the diagonal), or position i would read "
                         "the token it predicts")
    return M


def steps(steps, kind: type):
    if not isinstance(steps, kind):
        raise ValueError(f"steps must be the {kind.__name__} that lm_forward returned, got "
                         f"{type(steps).__name__}")
    return steps
