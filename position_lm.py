"""position_lm: notebook 12's small language model, with its positions given in one of three ways.

Notebook 10's one-layer model (attention_learning's lm_forward) with its learned positional
table P removed and positions entering as a scheme says: "sinusoidal" (the table of notebook 06
added to the embeddings), "rope" (the queries and keys of every head rotated) or "alibi" (a bias
-s_r (i - j) on head r's scores), or "none" (only the causal mask tells the rows apart, the
baseline). Notebook 12's experiment trains it on "repeat the token k back" and tests it past the
training length.

Read top to bottom:

1. the model            SCHEMES, init_params, forward (its steps), backward (every gradient)
2. the experiment       repeat_batch (the task), train (Adam), accuracy_by_position, top_offsets

forward and backward are written with attention_core's and attention_learning's functions,
which check their inputs; backward's RoPE step is the rotation by minus the angle, checked by
finite differences in tests/test_nb12_rope_and_alibi.py.
"""

from __future__ import annotations

import numpy as np

import attention_core as ac
import attention_learning as al

__all__ = ["SCHEMES", "init_params", "forward", "backward", "repeat_batch", "train",
           "accuracy_by_position", "top_offsets"]

SCHEMES = ("sinusoidal", "rope", "alibi", "none")  # "none": no position at all, the baseline


def init_params(vocab_size: int, d_model: int, d_ff: int, rng: np.random.Generator) -> dict:
    """Parameters as al.init_lm draws them, without the learned positional table P."""
    config = al.LMConfig(vocab_size=vocab_size, n_ctx=1, d_model=d_model, d_ff=d_ff)
    params = al.init_lm(config, rng)
    del params["P"]
    return params


def forward(p: dict, tokens: np.ndarray, scheme: str, h: int, slopes=None) -> dict:
    """logits = LN_2(H + FFN(H)) W_U, H = LN_1(X + MHA(X)), positions entering as `scheme` says:
    sinusoidal: X = E[tokens] + PE; rope: Q and K of every head rotated; alibi: a bias
    -s_r (i - j) on head r's scores, s = ac.alibi_slopes(h) unless `slopes` (h,) is given;
    none: no position anywhere (only the causal mask tells the rows apart)."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    n = tokens.shape[-1]
    X = al.embedding(tokens, p["E"])  # (B, n, d_model)
    if scheme == "sinusoidal":
        X = X + ac.sinusoidal_positional_encoding(n, X.shape[-1])  # (B, n, d) + (n, d)
    Q = ac.split_heads(X @ p["W_Q"], h)  # (B, n, d) @ (d, d) -> (B, h, n, d_k)
    K = ac.split_heads(X @ p["W_K"], h)  # (B, h, n, d_k)
    V = ac.split_heads(X @ p["W_V"], h)  # (B, h, n, d_v)
    if scheme == "rope":
        Q, K = ac.rope(Q), ac.rope(K)  # (B, h, n, d_k): pair j rotated by position * theta_j
    M = ac.causal_mask(n) + (_alibi(h, n, slopes) if scheme == "alibi" else 0.0)  # (n, n) or (h, n, n)
    O, weights = ac.scaled_dot_product_attention(Q, K, V, M)  # (B, h, n, d_v), (B, h, n, n)
    C = ac.merge_heads(O)  # (B, n, d)
    attn = C @ p["W_O"]  # (B, n, d)
    H = ac.layer_norm(X + attn, p["gamma_1"], p["beta_1"])
    F = ac.feed_forward(H, p["W_1"], p["b_1"], p["W_2"], p["b_2"])
    Y = ac.layer_norm(H + F, p["gamma_2"], p["beta_2"])
    logits = Y @ p["W_U"]  # (B, n, d) @ (d, vocab) -> (B, n, vocab)
    return dict(tokens=tokens, X=X, Q=Q, K=K, V=V, M=M, C=C, attn=attn, H=H, F=F, Y=Y,
                weights=weights, logits=logits, scheme=scheme, h=h)


def _alibi(h: int, n: int, slopes=None) -> np.ndarray:
    """ALiBi's bias (h, n, n), with the paper's slopes or with `slopes` (h,) of one's own."""
    if slopes is None:
        return ac.alibi_bias(h, n)
    s = np.asarray(slopes, dtype=float)
    if s.shape != (h,):
        raise ValueError(f"slopes must have shape ({h},), one per head, got {s.shape}")
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    return -s[:, None, None] * (i - j)  # (h, n, n)


def _outer(A: np.ndarray, dB: np.ndarray) -> np.ndarray:
    """A^T dB summed over batch and rows: (..., d_in) x (..., d_out) -> (d_in, d_out)."""
    return A.reshape(-1, A.shape[-1]).T @ dB.reshape(-1, dB.shape[-1])


def backward(p: dict, s: dict, dlogits: np.ndarray) -> dict:
    """Gradients of every parameter given dL/dlogits: the forward's steps in reverse.

    RoPE's gradient is the rotation transposed, the rotation by minus the angle:
    dQ = rope(dQ~, -positions). tests/test_nb12_rope_and_alibi.py checks it by finite differences.
    """
    h, n = s["h"], s["tokens"].shape[-1]
    g = {"W_U": _outer(s["Y"], dlogits)}
    dY = dlogits @ p["W_U"].T  # (B, n, vocab) @ (vocab, d) -> (B, n, d)
    dZ2, g["gamma_2"], g["beta_2"] = al.layer_norm_backward(s["H"] + s["F"], p["gamma_2"], dY)
    dH, g["W_1"], g["b_1"], g["W_2"], g["b_2"] = al.feed_forward_backward(
        s["H"], p["W_1"], p["b_1"], p["W_2"], p["b_2"], dZ2)
    dZ1, g["gamma_1"], g["beta_1"] = al.layer_norm_backward(s["X"] + s["attn"], p["gamma_1"], dH + dZ2)
    g["W_O"] = _outer(s["C"], dZ1)
    dO = ac.split_heads(dZ1 @ p["W_O"].T, h)  # (B, n, d) -> (B, h, n, d_v)
    dQ, dK, dV = al.attention_backward(s["Q"], s["K"], s["V"], dO, s["M"])  # (B, h, n, d_k) each
    if s["scheme"] == "rope":
        back = -np.arange(n)  # R(p)^T = R(-p)
        dQ, dK = ac.rope(dQ, back), ac.rope(dK, back)
    dQ, dK, dV = ac.merge_heads(dQ), ac.merge_heads(dK), ac.merge_heads(dV)  # (B, n, d) each
    g["W_Q"], g["W_K"], g["W_V"] = _outer(s["X"], dQ), _outer(s["X"], dK), _outer(s["X"], dV)
    dX = dZ1 + dQ @ p["W_Q"].T + dK @ p["W_K"].T + dV @ p["W_V"].T  # residual + three uses of X
    g["E"] = al.embedding_backward(s["tokens"], dX, p["E"].shape[0])
    return {name: g[name] for name in p}


def repeat_batch(rng: np.random.Generator, size: int, n: int, vocab_size: int, k: int):
    """Random tokens and targets: target[i] = tokens[i - k], ignored (-100) for i < k."""
    tokens = rng.integers(0, vocab_size, size=(size, n))  # (size, n)
    targets = np.full((size, n), -100)
    targets[:, k:] = tokens[:, :-k]
    return tokens, targets


def train(scheme: str, seed: int, *, vocab_size: int = 16, d_model: int = 32, d_ff: int = 64,
          h: int = 2, k: int = 3, n_train: int = 16, steps: int = 200, batch_size: int = 16,
          lr: float = 1e-2, slopes=None) -> dict:
    """Adam on repeat_batch sequences of length n_train; returns the parameters."""
    rng = np.random.default_rng(seed)
    p = init_params(vocab_size, d_model, d_ff, rng)
    state = al.adam_init(p)
    for _step in range(steps):
        tokens, targets = repeat_batch(rng, batch_size, n_train, vocab_size, k)
        s = forward(p, tokens, scheme, h, slopes)
        _loss, dlogits = al.softmax_cross_entropy(s["logits"], targets)
        p, state = al.adam_step(p, backward(p, s, dlogits), state, lr=lr)
    return p


def accuracy_by_position(p: dict, tokens, targets, scheme: str, h: int, k: int, slopes=None) -> dict:
    """Per position i: the accuracy, and the mean weight the heads give the key k back (NaN for i < k)."""
    s = forward(p, tokens, scheme, h, slopes)
    counted = targets != -100  # (B, n)
    right = (s["logits"].argmax(-1) == targets) & counted
    n = tokens.shape[-1]
    with np.errstate(invalid="ignore"):
        accuracy = np.where(counted.any(0), right.sum(0) / counted.sum(0), np.nan)  # (n,)
    i = np.arange(k, n)
    on_key = np.full(n, np.nan)
    on_key[k:] = s["weights"][:, :, i, i - k].max(axis=1).mean(axis=0)  # the best head, per row
    return {"accuracy": accuracy, "weight_k_back": on_key}


def top_offsets(weights: np.ndarray, i: int, count: int = 3) -> list[tuple[int, float]]:
    """The offsets i - j that draw the most weight from query i, averaged over batch and heads.

    weights : (B, h, n, n) attention weights. Returns [(offset, mean weight), ...], largest first.
    """
    mean = weights[:, :, i, :i + 1].mean(axis=(0, 1))  # (i + 1,) weights of query i over keys 0..i
    return [(i - int(j), float(mean[j])) for j in np.argsort(mean)[::-1][:count]]
