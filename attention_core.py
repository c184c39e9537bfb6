"""attention_core: the attention mechanism of the Transformer, in readable numpy.

Read top to bottom in the order of the course:

1. softmax                              (notebooks 02, 03)
2. scaled dot-product attention         (notebooks 01-04)
3. masks: causal, sliding window, padding (notebooks 04, 14)
4. multi-head and grouped-query attention (notebooks 05, 13)
5. sinusoidal positional encoding       (notebook 06)
   rotary positions (RoPE) and ALiBi    (notebook 12)
6. feed-forward network, layer norm     (notebook 07)
7. encoder and decoder layers           (notebook 08)
8. cost counts and tiled attention      (notebook 09)

Learning (backward passes, the loss, Adam, the small language model of notebooks 10 and 11) is
in attention_learning.py; every input check is in attention_checks/ (a file per topic), so
that each function here is its formula: the docstring (the formula, the shapes), one line that
checks the inputs, and the maths with a shape comment on every matmul and reshape.

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

from dataclasses import dataclass

import numpy as np

import attention_checks as check

__all__ = [
    "softmax", "AttentionSteps", "attention_steps", "attention_weights",
    "scaled_dot_product_attention",
    "causal_mask", "sliding_window_mask", "padding_mask", "split_heads", "merge_heads",
    "grouped_query_attention", "multi_head_attention",
    "sinusoidal_positional_encoding", "positional_shift_matrix",
    "rope", "alibi_slopes", "alibi_bias", "relu", "feed_forward",
    "layer_norm", "AttentionParams", "FFNParams", "LayerNormParams", "EncoderLayerParams",
    "DecoderLayerParams", "init_attention_params", "init_ffn_params", "init_encoder_layer",
    "init_decoder_layer", "encoder_layer", "decoder_layer", "encode", "decode",
    "attention_cost", "tiled_attention",
]


# --------------------------------------------------------------------------
# 1. Softmax
# --------------------------------------------------------------------------

def softmax(x, axis: int = -1) -> np.ndarray:
    """softmax(x)_j = exp(x_j - max x) / sum_i exp(x_i - max x), along `axis`.

    Subtracting the maximum changes nothing mathematically and keeps exp() from
    overflowing, so logits of any finite size work. Entries equal to -inf get
    weight 0. A slice that is -inf everywhere has no softmax: ValueError.
    """
    x = check.softmax_input(x, axis)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))  # in (0, 1]; the largest entry is exp(0) = 1
    e /= np.sum(e, axis=axis, keepdims=True)  # normalise in place
    return e


# --------------------------------------------------------------------------
# 2. Scaled dot-product attention
# --------------------------------------------------------------------------

def scaled_dot_product_attention(Q, K, V, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + M) V; returns (output, weights).

    Q : (..., n, d_k), K : (..., m, d_k), V : (..., m, d_v); mask : additive (0 = may attend,
    -inf = may not), broadcastable to (..., n, m) without enlarging it, or None.
    output : (..., n, d_v), weights : (..., n, m), each row over the keys summing to 1.
    """
    Q, K, V, M = check.attention(Q, K, V, mask)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is explained below
        S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])  # (..., n, d_k) @ (..., d_k, m) -> (..., n, m)
        S = S if M is None else S + M  # -inf where a key may not be seen
    check.scores(S, M, Q, K)  # a row softmax cannot take: an overflow, or every key blocked
    A = softmax(S, axis=-1)  # over the keys: (..., n, m)
    return A @ V, A  # (..., n, m) @ (..., m, d_v) -> (..., n, d_v)


def attention_weights(Q, K, mask=None) -> np.ndarray:
    """A = softmax(Q K^T / sqrt(d_k) + M), each row over the keys. Shape (..., n, m).

    Q : (..., n, d_k), K : (..., m, d_k), mask : additive, broadcastable to (..., n, m)
    without enlarging it, or None.
    """
    Q, K, _, M = check.attention(Q, K, None, mask)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is explained below
        S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])  # (..., n, d_k) @ (..., d_k, m) -> (..., n, m)
        S = S if M is None else S + M
    check.scores(S, M, Q, K)
    return softmax(S, axis=-1)  # (..., n, m)


@dataclass(frozen=True)
class AttentionSteps:
    """Every intermediate of Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + M) V."""

    scores: np.ndarray   # (..., n, m)   Q K^T
    scaled: np.ndarray   # (..., n, m)   Q K^T / sqrt(d_k)
    masked: np.ndarray   # (..., n, m)   Q K^T / sqrt(d_k) + M
    weights: np.ndarray  # (..., n, m)   softmax over keys (each row sums to 1)
    output: np.ndarray   # (..., n, d_v) weights @ V


def attention_steps(Q, K, V, mask=None) -> AttentionSteps:
    """All steps of softmax(Q K^T / sqrt(d_k) + M) V, in the order they happen.

    Arguments as scaled_dot_product_attention; returns every intermediate (AttentionSteps).
    """
    Q, K, V, M = check.attention(Q, K, V, mask)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is explained below
        scores = Q @ np.swapaxes(K, -1, -2)  # (..., n, d_k) @ (..., d_k, m) -> (..., n, m)
        scaled = scores / np.sqrt(Q.shape[-1])  # scale BEFORE softmax
        masked = scaled if M is None else scaled + M  # (..., n, m), -inf where blocked
    check.scores(masked, M, Q, K)
    weights = softmax(masked, axis=-1)  # over keys
    output = weights @ V  # (..., n, m) @ (..., m, d_v) -> (..., n, d_v)
    return AttentionSteps(scores, scaled, masked, weights, output)


# --------------------------------------------------------------------------
# 3. Masks (additive: 0 = may attend, -inf = may not)
# --------------------------------------------------------------------------

def causal_mask(n: int, m: int | None = None) -> np.ndarray:
    """M[i, j] = 0 if j <= i + m - n else -inf. Shape (n, m); m defaults to n.

    The n queries are the LAST n of m positions (a KV cache holds m - n earlier ones): query i
    sits at position i + m - n and sees keys 0..i + m - n. (PyTorch's is_causal=True aligns the
    queries with the first n keys instead when n != m: torch.nn.attention.bias.causal_lower_right
    is this mask.)
    """
    n, m = check.query_key_sizes(n, m)
    future = np.arange(m)[None, :] > np.arange(m - n, m)[:, None]  # (n, m): key j after query i
    return np.where(future, -np.inf, 0.0)


def sliding_window_mask(n: int, window: int, m: int | None = None) -> np.ndarray:
    """M[i, j] = 0 if p - window < j <= p, else -inf, for query i at position p = i + m - n. (n, m).

    Each query sees the last `window` positions, itself included, aligned like causal_mask:
    window >= m is the causal mask, window = 1 lets each query see only itself.
    """
    n, m = check.query_key_sizes(n, m)
    window = check.positive_int("window", window)
    p = np.arange(m - n, m)[:, None]  # (n, 1): each query's position
    j = np.arange(m)[None, :]  # (1, m)
    return np.where((j <= p) & (j > p - window), 0.0, -np.inf)  # (n, m)


def padding_mask(lengths, m: int) -> np.ndarray:
    """M[b, 0, j] = 0 if j < lengths[b] else -inf. Shape (batch, 1, m).

    The axis of size 1 broadcasts over the n queries: padding hides keys, not queries.
    """
    lengths = check.lengths(lengths, m)
    is_pad = np.arange(m)[None, :] >= lengths[:, None]  # (batch, m)
    return np.where(is_pad, -np.inf, 0.0)[:, None, :]  # (batch, 1, m)


# --------------------------------------------------------------------------
# 4. Multi-head attention
# --------------------------------------------------------------------------

def split_heads(X, num_heads: int) -> np.ndarray:
    """(..., n, h*d) -> (..., h, n, d): head r gets the r-th contiguous block of columns."""
    X, h = check.heads(X, num_heads)
    *batch, n, width = X.shape
    X = X.reshape(*batch, n, h, width // h)  # (..., n, h*d) -> (..., n, h, d)
    return np.swapaxes(X, -3, -2)  # (..., n, h, d) -> (..., h, n, d)


def merge_heads(X) -> np.ndarray:
    """(..., h, n, d) -> (..., n, h*d): Concat(head_1, ..., head_h) along features."""
    X = np.swapaxes(check.heads(X)[0], -3, -2)  # (..., h, n, d) -> (..., n, h, d)
    *batch, n, h, d = X.shape
    return X.reshape(*batch, n, h * d)  # (..., n, h, d) -> (..., n, h*d)


def grouped_query_attention(Q, K, V, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Grouped-query attention: query head r reads key/value head r // (h / h_kv).

    Q : (..., h, n, d_k), K : (..., h_kv, m, d_k), V : (..., h_kv, m, d_v), h a multiple of h_kv;
    mask : additive, broadcastable to (..., h, n, m) without enlarging it. h_kv = h is multi-head
    attention, h_kv = 1 multi-query attention (as torch's scaled_dot_product_attention with
    enable_gqa=True). Returns output (..., h, n, d_v) and weights (..., h, n, m).
    """
    Q, K, V, group = check.grouped(Q, K, V)
    K = np.repeat(K, group, axis=-3)  # (..., h_kv, m, d_k) -> (..., h, m, d_k): heads 0, 0, 1, 1, ...
    V = np.repeat(V, group, axis=-3)  # (..., h_kv, m, d_v) -> (..., h, m, d_v)
    return scaled_dot_product_attention(Q, K, V, mask)  # (..., h, n, d_v), (..., h, n, m)


def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads: int, mask=None, *,
                         num_kv_heads: int | None = None, mask_name: str = "mask"
                         ) -> tuple[np.ndarray, np.ndarray]:
    """MultiHead = Concat(head_1..head_h) W_O, head_r = Attention(X_q W_r^Q, X_kv W_r^K, X_kv W_r^V).

    X_q : (..., n, d_model), X_kv : (..., m, d_model) (self-attention: X_kv = X_q),
    W_Q, W_K : (d_model, h*d_k), W_V : (d_model, h*d_v), W_O : (h*d_v, d_model),
    mask : additive, broadcastable to (..., n, m) without enlarging it, where ... are the
    batch axes of X_q and X_kv. The same mask is used for every head: a per-head mask
    (..., h, n, m) is refused (ValueError), never read as a batch. num_kv_heads = h_kv < h
    shares each key/value head among h / h_kv query heads (grouped_query_attention): W_K is then
    (d_model, h_kv*d_k) and W_V (d_model, h_kv*d_v). mask_name is what the errors call the mask
    (the decoder's self_mask and cross_mask).
    Returns output (..., n, d_model) and weights (..., h, n, m).
    """
    X_q, X_kv, W_Q, W_K, W_V, W_O, h, h_kv, M = check.multi_head(
        X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask, mask_name, num_kv_heads)  # M: (..., 1, n, m)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is explained by the checks
        Q = X_q @ W_Q  # (..., n, d_model) @ (d_model, h*d_k) -> (..., n, h*d_k)
        K = X_kv @ W_K  # (..., m, d_model) @ (d_model, h*d_k) -> (..., m, h*d_k)
        V = X_kv @ W_V  # (..., m, d_model) @ (d_model, h*d_v) -> (..., m, h*d_v)
        check.projections(Q, K, V, X_q, X_kv, W_Q, W_K, W_V)
        Q, K, V = split_heads(Q, h), split_heads(K, h_kv), split_heads(V, h_kv)  # (..., h or h_kv, n or m, d)
        K, V = np.repeat(K, h // h_kv, axis=-3), np.repeat(V, h // h_kv, axis=-3)  # head r reads r // (h/h_kv)
        S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]) + (0.0 if M is None else M)  # (..., h, n, m); M: every head
        check.scores(S, M, Q, K, ("(X_q W_Q)", "(X_kv W_K)"), mask_name)
        A = softmax(S, axis=-1)  # (..., h, n, m)
        output = merge_heads(A @ V) @ W_O  # (..., h, n, d_v) -> (..., n, h*d_v) @ (h*d_v, d_model) -> (..., n, d_model)
    check.finite("Concat(heads) @ W_O", output, {"X_kv": X_kv, "W_V": W_V, "W_O": W_O})
    return output, A


# --------------------------------------------------------------------------
# 5. Sinusoidal positional encoding
# --------------------------------------------------------------------------

def sinusoidal_positional_encoding(num_positions: int, d_model: int) -> np.ndarray:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same). Shape (num_positions, d_model)."""
    num_positions, d_model = check.positional(num_positions, d_model)
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
    k, d_model = check.positional(None, d_model, k=k)
    omega = 1.0 / 10000.0 ** (np.arange(0, d_model, 2) / d_model)  # (d_model/2,)
    R = np.zeros((d_model, d_model))
    c, s = np.cos(k * omega), np.sin(k * omega)
    R[0::2, 0::2] = np.diag(c)   # sin' gets sin*cos(wk) ...
    R[1::2, 0::2] = np.diag(s)   # ... + cos*sin(wk)
    R[0::2, 1::2] = np.diag(-s)  # cos' gets -sin*sin(wk) ...
    R[1::2, 1::2] = np.diag(c)   # ... + cos*cos(wk)
    return R


# --------------------------------------------------------------------------
# 5b. Rotary positions (RoPE) and ALiBi (notebook 12)
# --------------------------------------------------------------------------
# Two relative position schemes that act inside attention instead of adding PE to x.
# RoPE: Su et al., 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding"
# (arXiv:2104.09864). ALiBi: Press, Smith and Lewis, 2022, "Train Short, Test Long:
# Attention with Linear Biases Enables Input Length Extrapolation" (ICLR 2022).

def rope(x, positions=None, *, base: float = 10000.0, interleaved: bool = False) -> np.ndarray:
    """Rotary position embedding: rotate each pair of features of x by positions[i] * theta_j.

        theta_j = base^(-2j/d),   j = 0 .. d/2 - 1
        (a, b) -> (a cos(p theta_j) - b sin(p theta_j),  a sin(p theta_j) + b cos(p theta_j))

    i.e. in complex form x~_j = (a + i b) e^{i p theta_j}. Applied to queries and keys,
    q_m . k_n = Re[sum_j q_j conj(k_j) e^{i (m - n) theta_j}] depends on m - n only.

    x: (..., n, d), d even. positions: integers, length n (default 0..n-1); a cached query
    at position t takes positions=[t]. interleaved=False pairs feature j with j + d/2 (the
    split-halves layout of GPT-NeoX and Hugging Face Llama's rotate_half); interleaved=True
    pairs 2j with 2j + 1 (the RoFormer paper's layout). Returns an array of x's shape.
    """
    x, p, base = check.rope(x, positions, base)
    d = x.shape[-1]
    theta = base ** (-2.0 * np.arange(d // 2) / d)  # (d/2,)
    angle = p[:, None] * theta[None, :]  # (n, 1) * (1, d/2) -> (n, d/2), broadcast over ...
    first, second = (np.s_[0::2], np.s_[1::2]) if interleaved else (np.s_[:d // 2], np.s_[d // 2:])
    a, b = x[..., first], x[..., second]  # (..., n, d/2): the two features of every pair
    out = np.empty_like(x)  # (..., n, d)
    out[..., first] = a * np.cos(angle) - b * np.sin(angle)
    out[..., second] = a * np.sin(angle) + b * np.cos(angle)
    return out


def alibi_slopes(num_heads: int) -> np.ndarray:
    """ALiBi's head slopes (Press et al., 2022). Shape (num_heads,).

    For h a power of two: the geometric sequence s_r = 2^(-8 r / h), r = 1 .. h
    (8 heads: 1/2, 1/4, ..., 1/256). Otherwise, the paper's rule: with p the largest power of
    two below h, the p slopes for p heads, then the first h - p of every other slope
    (the 1st, 3rd, ...) for 2p heads.
    """
    h = check.positive_int("num_heads", num_heads)
    p = 1 << (h.bit_length() - 1)  # the largest power of two <= h
    slopes = 2.0 ** (-8.0 * np.arange(1, p + 1) / p)  # (p,)
    return slopes if p == h else np.concatenate([slopes, alibi_slopes(2 * p)[0::2][: h - p]])  # (h,)


def alibi_bias(num_heads: int, n: int, m: int | None = None) -> np.ndarray:
    """ALiBi's additive bias B[r, i, j] = -s_r * (m - n + i - j). Shape (num_heads, n, m).

    The n queries are the last n of m positions (query i sits at position m - n + i; m
    defaults to n), key j at position j, s_r = alibi_slopes(num_heads)[r]. Add it to the
    scores together with causal_mask(n, m): entries with j > m - n + i (future keys) are
    positive here and must be blocked by that mask.
    """
    h = check.positive_int("num_heads", num_heads)
    n, m = check.query_key_sizes(n, m)
    minus_distance = np.arange(m)[None, :] - (m - n + np.arange(n))[:, None]  # (n, m): j - (m - n + i)
    return alibi_slopes(h)[:, None, None] * minus_distance[None, :, :]  # (h, 1, 1) * (1, n, m) -> (h, n, m)


# --------------------------------------------------------------------------
# 6. Position-wise feed-forward network and layer normalisation
# --------------------------------------------------------------------------

def relu(x) -> np.ndarray:
    """ReLU(x) = max(0, x), elementwise."""
    return np.maximum(0.0, check.as_array("x", x))


def feed_forward(X, W_1, b_1, W_2, b_2) -> np.ndarray:
    """FFN(X) = max(0, X W_1 + b_1) W_2 + b_2, the same weights at every position.

    X : (..., n, d_model), W_1 : (d_model, d_ff), b_1 : (d_ff,), W_2 : (d_ff, d_model), b_2 : (d_model,).
    """
    X, W_1, b_1, W_2, b_2 = check.feed_forward(X, W_1, b_1, W_2, b_2)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is explained below
        hidden = np.maximum(0.0, X @ W_1 + b_1)  # ReLU; (..., n, d_model) @ (d_model, d_ff) -> (..., n, d_ff)
        out = hidden @ W_2 + b_2  # (..., n, d_ff) @ (d_ff, d_model) -> (..., n, d_model)
    return check.finite("FFN(X) = max(0, X W_1 + b_1) W_2 + b_2", out,
                        {"X": X, "W_1": W_1, "b_1": b_1, "W_2": W_2, "b_2": b_2})


def layer_norm(X, gamma, beta, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm(x) = gamma * (x - mean) / sqrt(var + eps) + beta, over the last axis (biased var).

    Rows so large that var overflows (|x| above about 1e154) are first divided by their
    largest |x|: the same result, computed without leaving float64's range.
    """
    X, gamma, beta = check.layer_norm(X, gamma, beta, eps)
    with np.errstate(over="ignore", invalid="ignore"):
        mean = X.mean(axis=-1, keepdims=True)  # (..., n, 1)
        var = X.var(axis=-1, keepdims=True)  # (..., n, 1), divides by d_model (as PyTorch)
        if np.all(np.isfinite(mean)) and np.all(np.isfinite(var)):
            out = gamma * (X - mean) / np.sqrt(var + eps) + beta
        else:
            out = gamma * _standardise_huge(X, eps) + beta
    return check.finite("gamma * (X - mean) / sqrt(var + eps) + beta", out,
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

    def __call__(self, X_q, X_kv, mask=None, mask_name="mask"):
        """multi_head_attention with these weights: (output (..., n, d_model), weights (..., h, n, m))."""
        return multi_head_attention(X_q, X_kv, self.W_Q, self.W_K, self.W_V, self.W_O,
                                    self.num_heads, mask, mask_name=mask_name)


@dataclass(frozen=True)
class FFNParams:
    """Weights of the FFN: W_1 (d_model, d_ff), b_1 (d_ff,), W_2 (d_ff, d_model), b_2 (d_model,)."""

    W_1: np.ndarray
    b_1: np.ndarray
    W_2: np.ndarray
    b_2: np.ndarray

    def __call__(self, X):
        """feed_forward with these weights."""
        return feed_forward(X, self.W_1, self.b_1, self.W_2, self.b_2)


@dataclass(frozen=True)
class LayerNormParams:
    """Gain and bias of a layer norm, both (d_model,)."""

    gamma: np.ndarray
    beta: np.ndarray

    def __call__(self, X):
        """layer_norm with this gain and bias."""
        return layer_norm(X, self.gamma, self.beta)


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


def init_attention_params(d_model: int, num_heads: int, rng: np.random.Generator,
                          d_k: int | None = None, d_v: int | None = None) -> AttentionParams:
    """Random W_Q, W_K, W_V, W_O with std 1/sqrt(fan_in); d_k = d_v = d_model / h by default."""
    check.rng(rng)
    d_model, h = check.positive_int("d_model", d_model), check.positive_int("num_heads", num_heads)
    if (d_k is None or d_v is None) and d_model % h:
        raise ValueError(f"d_model = {d_model} is not divisible by num_heads = {h}; "
                         "choose h among the divisors of d_model or pass d_k and d_v")
    d_k = d_model // h if d_k is None else check.positive_int("d_k", d_k)
    d_v = d_model // h if d_v is None else check.positive_int("d_v", d_v)
    return AttentionParams(W_Q=rng.normal(0, d_model ** -0.5, size=(d_model, h * d_k)),
                           W_K=rng.normal(0, d_model ** -0.5, size=(d_model, h * d_k)),
                           W_V=rng.normal(0, d_model ** -0.5, size=(d_model, h * d_v)),
                           W_O=rng.normal(0, (h * d_v) ** -0.5, size=(h * d_v, d_model)),
                           num_heads=h)


def init_ffn_params(d_model: int, d_ff: int, rng: np.random.Generator) -> FFNParams:
    """Random W_1, W_2 with std 1/sqrt(fan_in) and zero biases."""
    check.rng(rng)
    d_model, d_ff = check.positive_int("d_model", d_model), check.positive_int("d_ff", d_ff)
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


def _residual(X, sublayer_out, what: str) -> np.ndarray:
    """X + Sublayer(X), the residual connection; (..., n, d_model) + (..., n, d_model)."""
    with np.errstate(over="ignore", invalid="ignore"):
        S = X + sublayer_out
    return check.finite(what, S, {"input": X, "sublayer": sublayer_out})


def encoder_layer(X, params: EncoderLayerParams, mask=None) -> np.ndarray:
    """Post-norm: H = LN(X + MHA(X, X)); Y = LN(H + FFN(H)). X : (..., n, d_model)."""
    X = check.as_array("X", X, min_ndim=2)
    check.params(params, EncoderLayerParams, "init_encoder_layer")
    p = params
    H = p.norm1(_residual(X, p.self_attn(X, X, mask)[0], "X + MHA(X, X)"))  # (..., n, d_model)
    return p.norm2(_residual(H, p.ffn(H), "H + FFN(H)"))  # (..., n, d_model)


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
    Y, memory = check.as_array("Y", Y, min_ndim=2), check.as_array("memory", memory, min_ndim=2)
    check.params(params, DecoderLayerParams, "init_decoder_layer")
    check.same_d_model(Y, memory)
    p = params
    if self_mask is None:
        self_mask = causal_mask(Y.shape[-2]) if Y.shape[-2] else None
    self_out, self_w = p.self_attn(Y, Y, self_mask, "self_mask")
    A = p.norm1(_residual(Y, self_out, "Y + MHA(Y, Y)"))  # (..., n, d_model)
    cross_out, cross_w = p.cross_attn(A, memory, cross_mask, "cross_mask")
    B = p.norm2(_residual(A, cross_out, "A + MHA(A, memory)"))  # (..., n, d_model)
    out = p.norm3(_residual(B, p.ffn(B), "B + FFN(B)"))  # (..., n, d_model)
    return (out, self_w, cross_w) if return_weights else out


def encode(X, layers: list[EncoderLayerParams], mask=None) -> np.ndarray:
    """Run X (..., n, d_model) through a stack of encoder layers."""
    X = check.as_array("X", X, min_ndim=2)
    for p in check.layers(layers, EncoderLayerParams):
        X = encoder_layer(X, p, mask)
    return X


def decode(Y, memory, layers: list[DecoderLayerParams], self_mask=None,
           cross_mask=None) -> np.ndarray:
    """Run Y (..., n, d_model) through a stack of decoder layers, all reading the same memory."""
    Y = check.as_array("Y", Y, min_ndim=2)
    for p in check.layers(layers, DecoderLayerParams):
        Y = decoder_layer(Y, memory, p, self_mask, cross_mask)
    return Y


# --------------------------------------------------------------------------
# 8. The cost of attention, and tiled attention with an online softmax
# --------------------------------------------------------------------------

def attention_cost(n: int, m: int | None = None, d_k: int = 64, d_v: int | None = None,
                   h: int = 1, bytes_per_number: int = 8) -> dict[str, int]:
    """Exact counts for one attention call: score entries h*n*m, their bytes, multiply-adds."""
    n, m, d_k, d_v, h, bytes_per_number = check.cost(n, m, d_k, d_v, h, bytes_per_number)
    entries = h * n * m
    return {
        "score_entries": entries,                       # one per (query, key) pair and head
        "score_bytes": entries * bytes_per_number,      # memory of one (h, n, m) matrix
        "multiply_adds": entries * d_k + entries * d_v,  # Q K^T, then weights @ V
    }


def tiled_attention(Q, K, V, block_size: int, mask=None, window: int | None = None) -> np.ndarray:
    """softmax(Q K^T / sqrt(d_k) + M) V, block by block with a running (online) softmax.

    Never holds more than a (block_size, block_size) tile of scores per batch entry.
    For each query block it keeps, per row, the running max r, the running sum
    l = sum exp(s - r) and the running numerator acc = sum exp(s - r) v; when a new
    tile raises the max to r', old sums are rescaled by exp(r - r'). Equal to
    scaled_dot_product_attention to float64 round-off. Returns (..., n, d_v).
    window : also apply sliding_window_mask(n, window, m), tile by tile, and visit only the key
    tiles inside the band: keys p0 - window + 1 .. p1 for the queries at positions p0..p1
    (notebook 14), about n * window scores instead of n * m.
    """
    Q, K, V, M = check.attention(Q, K, V, mask)
    b, w = check.positive_int("block_size", block_size), None if window is None else check.positive_int("window", window)
    (n, d_k), (m, d_v) = Q.shape[-2:], V.shape[-2:]
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    M = None if M is None else np.broadcast_to(M, (*batch, n, m))  # a view, no copy
    out = np.empty((*batch, n, d_v))
    for i in range(0, n, b):
        q = Q[..., i:i + b, :] / np.sqrt(d_k)  # (..., b_q, d_k), scaled once
        run_max = np.full((*batch, q.shape[-2], 1), -np.inf)  # r, per row
        run_sum, acc = np.zeros_like(run_max), np.zeros((*batch, q.shape[-2], d_v))  # l; sum exp(s - r) v
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is explained by the checks
            for j in _key_tiles(i + m - n, q.shape[-2], m, b, w):  # all m keys, or the band's
                s = q @ np.swapaxes(K[..., j:j + b, :], -1, -2)  # (..., b_q, d_k) @ (..., d_k, b_k) -> (..., b_q, b_k)
                s = s + _tile_mask(M, w, i, j, s.shape[-2:], m - n)  # M's tile, -inf outside the window
                new_max = np.maximum(run_max, s.max(axis=-1, keepdims=True))  # (..., b_q, 1)
                check.tile_max(new_max, i, (*batch, n, m), Q, K, M)  # NaN or +inf: an overflow
                safe_max = np.where(new_max == -np.inf, 0.0, new_max)  # rows still all -inf: shift by 0
                rescale = np.exp(run_max - safe_max)  # (..., b_q, 1), exp(-inf) = 0 at the start
                p = np.exp(s - safe_max)  # (..., b_q, b_k)
                run_sum = run_sum * rescale + p.sum(axis=-1, keepdims=True)
                acc = acc * rescale + p @ V[..., j:j + b, :]  # (..., b_q, b_k) @ (..., b_k, d_v) -> (..., b_q, d_v)
                run_max = new_max
        check.tile_sums(run_sum, i, (*batch, n, m), Q, K, M, w)  # a row with no weight: say why
        out[..., i:i + b, :] = check.tile_output(acc / run_sum, V)  # (..., b_q, d_v)
    return out


def _key_tiles(p0: int, b_q: int, m: int, b: int, w: int | None) -> range:
    """Where the key tiles of the queries at positions p0 .. p0 + b_q - 1 start: all m keys, or
    with a window w only keys p0 - w + 1 .. p0 + b_q - 1 (the later ones are hidden anyway)."""
    return range(0, m, b) if w is None else range(max(0, p0 - w + 1), p0 + b_q, b)


def _tile_mask(M, w: int | None, i: int, j: int, tile: tuple[int, int], offset: int):
    """The (b_q, b_k) tile at query row i, key j of the mask M (0 without one), plus -inf
    where key j' is outside the window p - w + 1 .. p of the query at position p = i' + offset."""
    out = 0.0 if M is None else M[..., i:i + tile[0], j:j + tile[1]]
    if w is None:
        return out
    back = np.arange(i, i + tile[0])[:, None] + offset - np.arange(j, j + tile[1])  # (b_q, b_k): p - j'
    return out + np.where((back >= 0) & (back < w), 0.0, -np.inf)


# Notebooks 10 and 11 as handed out before attention_learning.py existed call the learning
# functions as ac.<name>; those spellings keep working (CONTRIBUTING.md, "Layout").
_MOVED_TO_LEARNING = {
    "softmax_backward", "attention_backward", "MultiHeadGrads", "multi_head_attention_backward",
    "layer_norm_backward", "feed_forward_backward", "embedding", "embedding_backward",
    "softmax_cross_entropy", "AdamState", "adam_init", "adam_step", "LMConfig", "init_lm",
    "LMSteps", "lm_forward", "lm_backward",
}


def __getattr__(name: str):
    if name in _MOVED_TO_LEARNING:
        import attention_learning
        return getattr(attention_learning, name)
    raise AttributeError(f"module 'attention_core' has no attribute {name!r}")
