"""attention_checks.encoder_decoder: the feed-forward network, layer norm, and the layers.

The FFN's and layer norm's weights, and the encoder and decoder layers' seeds, parameter
bundles and stacks.
"""

from __future__ import annotations

import numbers

import numpy as np

from .arrays import as_array

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
