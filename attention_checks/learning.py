"""attention_checks.learning: the checks of attention_learning.

Upstream gradients, softmax outputs, token ids and the embedding table, cross-entropy's targets,
Adam's parameters, gradients and state, and the one-layer language model's config, parameters,
tokens, causal mask and saved steps.
"""

from __future__ import annotations

import numpy as np

from .arrays import as_array, positive_int
from .masks import as_mask

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
