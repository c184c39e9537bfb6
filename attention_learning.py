"""attention_learning: how attention learns, in readable numpy (notebooks 10 and 11).

Read top to bottom in the order of the course:

1. backward passes      softmax_backward, attention_backward, multi_head_attention_backward,
                        layer_norm_backward, feed_forward_backward                  (notebook 10)
2. tokens and the loss  embedding, embedding_backward, softmax_cross_entropy        (notebook 10)
3. the optimiser        adam_init, adam_step                                        (notebook 10)
4. a language model     LMConfig, init_lm, lm_forward, lm_backward           (notebooks 10, 11)

Each *_backward takes the inputs of its forward function (in attention_core.py) plus
dY = dL/dY, the gradient of a scalar loss L with respect to the forward's output, and returns
the gradients with respect to the inputs (the vector-Jacobian product). Where the forward
broadcast an input over batch axes, its gradient is summed back to the input's own shape.
Every input check is in attention_checks/ (these in attention_checks/learning.py), with the same
messages as the forward's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import attention_checks as check
import attention_core as ac

__all__ = [
    "softmax_backward", "attention_backward", "MultiHeadGrads", "multi_head_attention_backward",
    "layer_norm_backward", "feed_forward_backward", "embedding", "embedding_backward",
    "softmax_cross_entropy", "AdamState", "adam_init", "adam_step", "LMConfig", "init_lm",
    "LMSteps", "lm_forward", "lm_backward",
]


def _unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum grad over the axes that broadcasting added or stretched, back to `shape`."""
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra))) if extra > 0 else grad
    stretched = tuple(i for i, s in enumerate(shape) if s == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad


def _sum_outer(X: np.ndarray, dY: np.ndarray) -> np.ndarray:
    """X^T dY summed over the batch: the gradient of a weight W in Y = X W. (d_in, d_out).

    One small product per batch entry, then a sum: one big (d_in, batch*rows) product would
    be split over BLAS threads, which is slower for these sizes on a busy machine.
    """
    X = np.broadcast_to(X, dY.shape[:-1] + X.shape[-1:])  # (..., rows, d_in)
    per_entry = np.swapaxes(X, -1, -2) @ dY  # (..., d_in, rows) @ (..., rows, d_out) -> (..., d_in, d_out)
    return per_entry.reshape(-1, *per_entry.shape[-2:]).sum(axis=0)  # (d_in, d_out)


# --------------------------------------------------------------------------
# 1. Backward passes
# --------------------------------------------------------------------------

def softmax_backward(p, dp, axis: int = -1) -> np.ndarray:
    """dx = p * (dp - sum_j p_j dp_j): the gradient through p = softmax(x) along `axis`.

    The Jacobian is dp_i/dx_j = p_i (delta_ij - p_j), i.e. J = diag(p) - p^T p for p a row
    vector (notebook 03); it is symmetric, so dL/dx = dL/dp J, which is the formula above.
    p is the softmax OUTPUT (entries >= 0, each slice summing to 1), dp = dL/dp has its shape.
    """
    p, dp = check.softmax_output(p, dp, axis)
    return p * (dp - np.sum(p * dp, axis=axis, keepdims=True))


def _attention_grads(Q, K, V, A, dO):
    """The formulas of attention_backward, for checked inputs and the weights A = softmax(S)."""
    dV = np.swapaxes(A, -1, -2) @ dO  # (..., m, n) @ (..., n, d_v) -> (..., m, d_v)
    dA = dO @ np.swapaxes(V, -1, -2)  # (..., n, d_v) @ (..., d_v, m) -> (..., n, m)
    dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))  # softmax_backward(A, dA), (..., n, m)
    dQ = dS @ K / np.sqrt(Q.shape[-1])  # (..., n, m) @ (..., m, d_k) -> (..., n, d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / np.sqrt(Q.shape[-1])  # (..., m, n) @ (..., n, d_k) -> (..., m, d_k)
    return dQ, dK, dV, dS


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
    Q, K, V, _ = check.attention(Q, K, V, None)
    A = ac.attention_weights(Q, K, mask)  # (..., n, m), recomputed from the inputs
    dO = check.grad_like("dO", dO, (*A.shape[:-1], V.shape[-1]))  # (..., n, d_v)
    dQ, dK, dV, dS = _attention_grads(Q, K, V, A, dO)
    grads = (_unbroadcast(dQ, Q.shape), _unbroadcast(dK, K.shape), _unbroadcast(dV, V.shape))
    return (*grads, dS) if return_dscores else grads


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


def multi_head_attention_backward(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads: int, dOut,
                                  mask=None, *, num_kv_heads: int | None = None) -> MultiHeadGrads:
    """Gradients of Out = Concat(head_1..head_h) W_O, head_r = Attention(X_q W_r^Q, X_kv W_r^K, X_kv W_r^V).

    Backwards through the forward's steps: dW_O = C^T dOut and dC = dOut W_O^T for the
    concatenation C; split dC into heads; attention_backward in each head; merge; then for
    Q = X_q W_Q: dW_Q = X_q^T dQ, dX_q = dQ W_Q^T (K and V alike, both adding into dX_kv).
    Same arguments as multi_head_attention, plus dOut = dL/dOut (..., n, d_model).
    For self-attention (X_kv is X_q) the gradient of X is dX_q + dX_kv. With num_kv_heads = h_kv,
    a key/value head used by h / h_kv query heads gets the sum of their gradients.
    """
    X_q, X_kv, W_Q, W_K, W_V, W_O, h, h_kv, M = check.multi_head(
        X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask, num_kv_heads=num_kv_heads)
    Q = ac.split_heads(X_q @ W_Q, h)  # (..., n, d_model) @ (d_model, h*d_k) -> (..., h, n, d_k)
    K, V = (np.repeat(ac.split_heads(X_kv @ W, h_kv), h // h_kv, axis=-3) for W in (W_K, W_V))  # (..., h, m, d)
    A = ac.attention_weights(Q, K, M)  # (..., h, n, m); M (..., 1, n, m): every head
    C = ac.merge_heads(A @ V)  # (..., h, n, m) @ (..., h, m, d_v) -> (..., h, n, d_v) -> (..., n, h*d_v)
    dC = (dOut := check.grad_like("dOut", dOut, (*C.shape[:-1], W_O.shape[1]))) @ W_O.T  # (..., n, h*d_v)
    dQ, dK, dV, dS = _attention_grads(Q, K, V, A, ac.split_heads(dC, h))  # in every head
    dK, dV = (d.reshape(*d.shape[:-3], h_kv, h // h_kv, *d.shape[-2:]).sum(axis=-3) for d in (dK, dV))  # per K/V head
    dQ, dK, dV = ac.merge_heads(dQ), ac.merge_heads(dK), ac.merge_heads(dV)  # (..., n or m, h*d or h_kv*d)
    dX_q = dQ @ W_Q.T  # (..., n, h*d_k) @ (h*d_k, d_model) -> (..., n, d_model)
    dX_kv = dK @ W_K.T + dV @ W_V.T  # (..., m, h_kv*d_k) @ (h_kv*d_k, d_model) + the same for V
    return MultiHeadGrads(dX_q=_unbroadcast(dX_q, X_q.shape), dX_kv=_unbroadcast(dX_kv, X_kv.shape),
                          dW_Q=_sum_outer(X_q, dQ), dW_K=_sum_outer(X_kv, dK),
                          dW_V=_sum_outer(X_kv, dV), dW_O=_sum_outer(C, dOut), dscores=dS)


def layer_norm_backward(X, gamma, dY, eps: float = 1e-5):
    """Gradients of Y = gamma * Xhat + beta, Xhat = (X - mean) / sigma, sigma = sqrt(var + eps).

        dbeta = sum dY,   dgamma = sum dY * Xhat,   dXhat = dY * gamma,
        dX = (dXhat - mean(dXhat) - Xhat * mean(dXhat * Xhat)) / sigma    (means over the last axis)

    X : (..., n, d_model), gamma : (d_model,), dY : (..., n, d_model); the sums run over every
    row. Returns (dX, dgamma, dbeta).
    """
    X, gamma, dY = check.layer_norm_backward(X, gamma, dY, eps)
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
    X, W_1, b_1, W_2, b_2 = check.feed_forward(X, W_1, b_1, W_2, b_2)
    dY = check.grad_like("dY", dY, X.shape)
    Z = X @ W_1 + b_1  # (..., n, d_model) @ (d_model, d_ff) -> (..., n, d_ff)
    dZ = (dY @ W_2.T) * (Z > 0)  # (..., n, d_model) @ (d_model, d_ff) -> (..., n, d_ff)
    rows = tuple(range(X.ndim - 1))
    dX = dZ @ W_1.T  # (..., n, d_ff) @ (d_ff, d_model) -> (..., n, d_model)
    return dX, _sum_outer(X, dZ), dZ.sum(axis=rows), _sum_outer(ac.relu(Z), dY), dY.sum(axis=rows)


# --------------------------------------------------------------------------
# 2. Tokens and the loss
# --------------------------------------------------------------------------

def embedding(tokens, E) -> np.ndarray:
    """X[..., i, :] = E[tokens[..., i]]: row lookup in the table E (vocab_size, d_model)."""
    E = check.embedding_table(E)
    return E[check.tokens(tokens, E.shape[0])]  # (..., n) -> (..., n, d_model)


def embedding_backward(tokens, dX, vocab_size: int) -> np.ndarray:
    """dE[v] = sum of dX[..., i, :] over every position i with tokens[..., i] = v. (vocab_size, d_model)."""
    tokens, dX, vocab_size = check.embedding_grad(tokens, dX, vocab_size)
    dE = np.zeros((vocab_size, dX.shape[-1]))
    np.add.at(dE, tokens.ravel(), dX.reshape(-1, dX.shape[-1]))  # a token used twice adds twice
    return dE


def softmax_cross_entropy(logits, targets, ignore_index: int = -100) -> tuple[float, np.ndarray]:
    """L = -(1/N) sum_i log softmax(logits_i)[t_i] over the N counted positions, and dL/dlogits.

        dL/dlogits_i = (softmax(logits_i) - onehot(t_i)) / N      (0 where t_i = ignore_index)

    logits : (..., vocab_size); targets : (...) integer ids, ignore_index where nothing is
    predicted (as in PyTorch's cross_entropy). Returns (loss in nats, dlogits).
    """
    logits, t, counted = check.targets(logits, targets, ignore_index)
    shifted = logits - logits.max(axis=-1, keepdims=True)  # stable log-softmax
    log_p = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))  # (..., vocab)
    safe_t = np.where(counted, t, 0)[..., None]  # (..., 1)
    N = int(counted.sum())
    loss = -float(np.sum(np.take_along_axis(log_p, safe_t, axis=-1)[..., 0] * counted)) / N
    dlogits = np.exp(log_p)  # softmax(logits)
    np.put_along_axis(dlogits, safe_t, np.take_along_axis(dlogits, safe_t, axis=-1) - 1.0, axis=-1)
    return loss, dlogits * counted[..., None] / N


# --------------------------------------------------------------------------
# 3. The optimiser
# --------------------------------------------------------------------------

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
    check.adam(params, grads, state, AdamState, lr)
    t = state.step + 1
    m = {k: beta1 * state.m[k] + (1 - beta1) * grads[k] for k in params}
    v = {k: beta2 * state.v[k] + (1 - beta2) * grads[k] ** 2 for k in params}
    new = {k: params[k] - lr * (m[k] / (1 - beta1 ** t)) / (np.sqrt(v[k] / (1 - beta2 ** t)) + eps)
           for k in params}
    return new, AdamState(t, m, v)


# --------------------------------------------------------------------------
# 4. A one-layer, decoder-only language model: embeddings, one post-norm layer with causal
#    self-attention (ac.encoder_layer with a causal mask), and an unembedding W_U.
# --------------------------------------------------------------------------

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
    num_kv_heads: int | None = None  # h_kv key/value heads shared by the h query heads (notebook 13)

    def __post_init__(self):
        check.lm_config(self)

    @property
    def head_width(self) -> int:
        """d_k of each head."""
        return self.d_model // self.num_heads if self.d_k is None else self.d_k

    @property
    def shapes(self) -> dict[str, tuple[int, ...]]:
        """The shape of every parameter, in the order init_lm draws them (W_Q and W_K last)."""
        d, hk, V = self.d_model, self.num_heads * self.head_width, self.vocab_size
        kv = self.num_heads if self.num_kv_heads is None else self.num_kv_heads
        return {"E": (V, d), "P": (self.n_ctx, d), "W_V": (d, kv * d // self.num_heads), "W_O": (d, d),
                "gamma_1": (d,), "beta_1": (d,), "W_1": (d, self.d_ff), "b_1": (self.d_ff,),
                "W_2": (self.d_ff, d), "b_2": (d,), "gamma_2": (d,), "beta_2": (d,),
                "W_U": (d, V), "W_Q": (d, hk), "W_K": (d, kv * self.head_width)}


def init_lm(config: LMConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random parameters, a dict name -> array (what adam_step updates).

    E (vocab_size, d_model) and P (n_ctx, d_model) with std 1/sqrt(2), so X = E[t] + P[i] has
    entries of variance about 1; the layer as init_encoder_layer (std 1/sqrt(fan_in), gamma = 1,
    beta = 0, zero biases); W_U (d_model, vocab_size) with std 1/sqrt(d_model). W_Q and W_K
    are drawn last: configs that differ only in d_k get the same draw of everything else.
    """
    check.is_config(config, LMConfig)
    check.rng(rng, "a np.random.Generator")
    params = {}
    for name, shape in config.shapes.items():
        if name.startswith(("gamma", "beta", "b_")):
            params[name] = np.ones(shape) if name.startswith("gamma") else np.zeros(shape)
        else:  # std 1/sqrt(2) for the two tables, 1/sqrt(fan_in) for the weights
            params[name] = rng.normal(0, 0.5 ** 0.5 if name in ("E", "P") else shape[0] ** -0.5, size=shape)
    return params


def _query_scale(config: LMConfig) -> float:
    """What the attention multiplies W_Q by: sqrt(d_k) without scaling, which cancels 1/sqrt(d_k)."""
    return 1.0 if config.scale_scores else np.sqrt(config.head_width)


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
    mask: np.ndarray | None = None  # (n, n) the additive mask lm_forward was given; None: causal


def lm_forward(params: dict, tokens, config: LMConfig, mask=None) -> LMSteps:
    """logits = Y W_U, Y = LN_2(H + FFN(H)), H = LN_1(X + MHA(X, X; M)), X = E[tokens] + P[:n].

    tokens : (..., n) ids with n <= n_ctx. The layer is ac.encoder_layer with the causal mask M,
    so logits[..., i, :] (the prediction of token i + 1) depends on tokens 0..i only. mask : an
    additive (n, n) mask in place of the causal one (a sliding window, notebook 14); lm_backward
    uses the same.
    """
    tokens, p = check.lm(params, tokens, config, LMConfig), params
    n = tokens.shape[-1]
    M = ac.causal_mask(n) if mask is None else check.lm_mask(mask, n)  # (n, n)
    X = embedding(tokens, p["E"]) + p["P"][:n]  # (..., n, d_model)
    attn, weights = ac.multi_head_attention(X, X, p["W_Q"] * _query_scale(config), p["W_K"], p["W_V"],
                                            p["W_O"], config.num_heads, M,
                                            num_kv_heads=config.num_kv_heads)
    H = ac.layer_norm(X + attn, p["gamma_1"], p["beta_1"])  # (..., n, d_model)
    F = ac.feed_forward(H, p["W_1"], p["b_1"], p["W_2"], p["b_2"])  # (..., n, d_model)
    Y = ac.layer_norm(H + F, p["gamma_2"], p["beta_2"])  # (..., n, d_model)
    logits = Y @ p["W_U"]  # (..., n, d_model) @ (d_model, vocab_size) -> (..., n, vocab_size)
    return LMSteps(tokens, X, attn, weights, H, F, Y, logits, None if mask is None else M)


def lm_backward(params: dict, steps: LMSteps, dlogits, config: LMConfig
                ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Gradients of every parameter, given the forward's steps and dlogits = dL/dlogits.

    The forward's steps in reverse: W_U, LN_2, FFN (+ its residual), LN_1, attention (+ its
    residual), then the embeddings (P gets the sum over the batch). Returns (grads, dscores):
    grads has the keys of params; dscores (..., h, n, n) is dL/dS at the attention's softmax
    input, the gradient that reaches the scores.
    """
    p, s = params, check.steps(steps, LMSteps)
    tokens = check.lm(params, s.tokens, config, LMConfig)
    g = {"W_U": _sum_outer(s.Y, dlogits := check.grad_like("dlogits", dlogits, s.logits.shape))}
    dZ2, g["gamma_2"], g["beta_2"] = layer_norm_backward(s.H + s.F, p["gamma_2"], dlogits @ p["W_U"].T)
    dH, g["W_1"], g["b_1"], g["W_2"], g["b_2"] = feed_forward_backward(
        s.H, p["W_1"], p["b_1"], p["W_2"], p["b_2"], dZ2)
    dZ1, g["gamma_1"], g["beta_1"] = layer_norm_backward(s.X + s.attn, p["gamma_1"], dH + dZ2)  # + the residual
    mha = multi_head_attention_backward(s.X, s.X, p["W_Q"] * _query_scale(config), p["W_K"], p["W_V"], p["W_O"],
                                        config.num_heads, dZ1, ac.causal_mask(s.X.shape[-2]) if s.mask is None else s.mask, num_kv_heads=config.num_kv_heads)
    g.update(W_Q=mha.dW_Q * _query_scale(config), W_K=mha.dW_K, W_V=mha.dW_V, W_O=mha.dW_O)
    dX = dZ1 + mha.dX_q + mha.dX_kv  # residual + both uses of X (queries, keys and values)
    g["E"] = embedding_backward(tokens, dX, config.vocab_size)
    g["P"] = np.pad(dX.reshape(-1, *dX.shape[-2:]).sum(axis=0),  # (n, d_model), then rows
                    ((0, p["P"].shape[0] - dX.shape[-2]), (0, 0)))  # n..n_ctx-1 of P get 0
    return {k: g[k] for k in params}, mha.dscores
