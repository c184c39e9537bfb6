"""Past the training length (issue 22, notebook 12): sinusoidal absolute positions, RoPE, ALiBi.

One-layer, decoder-only numpy language models (notebook 10's architecture, post-norm, h heads),
trained on a relative-position task, "repeat the token k places back" (target at position i is
the token at i - k; positions i < k predict nothing), on sequences of length n_train, then
tested on longer sequences. The three models differ only in where positions enter:

- "sinusoidal": X = E[tokens] + PE (Vaswani et al. 2017; the fixed table, defined at any length)
- "rope":       Q and K of every head rotated by ac.rope (Su et al. 2021, split-halves layout)
- "alibi":      ac.alibi_bias added to the causal mask (Press et al. 2022)

Run:  python3 scripts/positions_nb12.py [--k N]   (prints the table notebook 12 quotes; k = 3)

Measured (2026-12-01, seeds 0-2, identical under 1 and 2 BLAS threads), accuracy at the
positions >= 16 that training never reached, k = 3: sinusoidal 0.28-0.35 at n = 32 and
0.15-0.16 at n = 128; RoPE 0.64-0.77 and 0.23-0.33; ALiBi 0.21-0.22 at every length, and only
0.27-0.28 at the training length itself. In this one-layer model the embeddings carry no
position under ALiBi, so a score can rank keys by recency but cannot single out the key exactly
k back among random tokens: the task is one ALiBi cannot express here, not a measurement of its
extrapolation. One task, one size, 600 steps, three seeds: it does not show how deeper models,
other tasks or longer training behave.

The backward pass is written with the core's pieces; RoPE's gradient is the rotation
transposed, which is the rotation by minus the angle: dQ = rope(dQ_rotated, -positions).
tests/test_positions.py checks it by finite differences. It is meant to move into the
companion course/nb12_rope_and_alibi.py once notebook 12 exists.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import attention_core as ac

MODES = ("sinusoidal", "rope", "alibi")


def init_params(vocab_size: int, d_model: int, d_ff: int, rng: np.random.Generator) -> dict:
    """Parameters as ac.init_lm, without the learned positional table P."""
    d = d_model
    return {"E": rng.normal(0, 0.5 ** 0.5, size=(vocab_size, d)),
            "W_Q": rng.normal(0, d ** -0.5, size=(d, d)), "W_K": rng.normal(0, d ** -0.5, size=(d, d)),
            "W_V": rng.normal(0, d ** -0.5, size=(d, d)), "W_O": rng.normal(0, d ** -0.5, size=(d, d)),
            "gamma_1": np.ones(d), "beta_1": np.zeros(d),
            "W_1": rng.normal(0, d ** -0.5, size=(d, d_ff)), "b_1": np.zeros(d_ff),
            "W_2": rng.normal(0, d_ff ** -0.5, size=(d_ff, d)), "b_2": np.zeros(d),
            "gamma_2": np.ones(d), "beta_2": np.zeros(d),
            "W_U": rng.normal(0, d ** -0.5, size=(d, vocab_size))}


def _mask(mode: str, h: int, n: int) -> np.ndarray:
    M = ac.causal_mask(n)  # (n, n)
    return M + ac.alibi_bias(h, n) if mode == "alibi" else M  # (h, n, n) or (n, n)


def forward(p: dict, tokens: np.ndarray, mode: str, h: int) -> dict:
    """logits = LN_2(H + FFN(H)) W_U, H = LN_1(X + MHA(X)), positions entering as `mode` says."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    n = tokens.shape[-1]
    X = ac.embedding(tokens, p["E"])  # (B, n, d)
    if mode == "sinusoidal":
        X = X + ac.sinusoidal_positional_encoding(n, X.shape[-1])  # (B, n, d) + (n, d)
    Q = ac.split_heads(X @ p["W_Q"], h)  # (B, n, d) @ (d, d) -> (B, h, n, d_k)
    K = ac.split_heads(X @ p["W_K"], h)  # (B, h, n, d_k)
    V = ac.split_heads(X @ p["W_V"], h)  # (B, h, n, d_k)
    if mode == "rope":
        Q, K = ac.rope(Q), ac.rope(K)  # (B, h, n, d_k): rotated by position * theta_j
    M = _mask(mode, h, n)
    O, _w = ac.scaled_dot_product_attention(Q, K, V, M)  # (B, h, n, d_k)
    C = ac.merge_heads(O)  # (B, n, d)
    attn = C @ p["W_O"]  # (B, n, d)
    H = ac.layer_norm(X + attn, p["gamma_1"], p["beta_1"])
    F = ac.feed_forward(H, p["W_1"], p["b_1"], p["W_2"], p["b_2"])
    Y = ac.layer_norm(H + F, p["gamma_2"], p["beta_2"])
    logits = Y @ p["W_U"]  # (B, n, d) @ (d, V) -> (B, n, V)
    return dict(tokens=tokens, X=X, Q=Q, K=K, V=V, M=M, C=C, attn=attn, H=H, F=F, Y=Y,
                logits=logits, mode=mode, h=h)


def _outer(A: np.ndarray, dB: np.ndarray) -> np.ndarray:
    """A^T dB summed over batch and rows: (..., d_in) x (..., d_out) -> (d_in, d_out)."""
    return A.reshape(-1, A.shape[-1]).T @ dB.reshape(-1, dB.shape[-1])


def backward(p: dict, s: dict, dlogits: np.ndarray) -> dict:
    """Gradients of every parameter given dL/dlogits: the forward's steps in reverse."""
    h, n = s["h"], s["tokens"].shape[-1]
    g = {"W_U": _outer(s["Y"], dlogits)}
    dY = dlogits @ p["W_U"].T  # (B, n, V) @ (V, d) -> (B, n, d)
    dZ2, g["gamma_2"], g["beta_2"] = ac.layer_norm_backward(s["H"] + s["F"], p["gamma_2"], dY)
    dH, g["W_1"], g["b_1"], g["W_2"], g["b_2"] = ac.feed_forward_backward(
        s["H"], p["W_1"], p["b_1"], p["W_2"], p["b_2"], dZ2)
    dH = dH + dZ2  # residual H + FFN(H)
    dZ1, g["gamma_1"], g["beta_1"] = ac.layer_norm_backward(s["X"] + s["attn"], p["gamma_1"], dH)
    g["W_O"] = _outer(s["C"], dZ1)
    dO = ac.split_heads(dZ1 @ p["W_O"].T, h)  # (B, n, d) -> (B, h, n, d_k)
    dQ, dK, dV = ac.attention_backward(s["Q"], s["K"], s["V"], dO, s["M"])  # (B, h, n, d_k) each
    if s["mode"] == "rope":
        back = -np.arange(n)  # R(p)^T = R(-p): the rotation transposed
        dQ, dK = ac.rope(dQ, back), ac.rope(dK, back)
    dQ, dK, dV = ac.merge_heads(dQ), ac.merge_heads(dK), ac.merge_heads(dV)  # (B, n, d) each
    g["W_Q"], g["W_K"], g["W_V"] = _outer(s["X"], dQ), _outer(s["X"], dK), _outer(s["X"], dV)
    dX = dZ1 + dQ @ p["W_Q"].T + dK @ p["W_K"].T + dV @ p["W_V"].T  # residual + three uses of X
    g["E"] = ac.embedding_backward(s["tokens"], dX, p["E"].shape[0])
    return {k: g[k] for k in p}


def batch(rng: np.random.Generator, size: int, n: int, vocab_size: int, k: int):
    """Random tokens and targets: target[i] = tokens[i - k], ignored (-100) for i < k."""
    tokens = rng.integers(0, vocab_size, size=(size, n))
    targets = np.full((size, n), -100)
    targets[:, k:] = tokens[:, :-k]
    return tokens, targets


def loss_and_accuracy(p, tokens, targets, mode, h, n_train: int):
    """Loss and accuracy over every predicted position, and the accuracy at positions >= n_train."""
    s = forward(p, tokens, mode, h)
    loss, _d = ac.softmax_cross_entropy(s["logits"], targets)
    right = s["logits"].argmax(-1) == targets  # (B, n)
    counted = targets != -100
    beyond = counted.copy()
    beyond[:, :n_train] = False
    acc_beyond = float(np.mean(right[beyond])) if beyond.any() else float("nan")
    return float(loss), float(np.mean(right[counted])), acc_beyond


def train(mode: str, seed: int, *, vocab_size=16, d_model=32, d_ff=64, h=2, k=3, n_train=16,
          steps=600, batch_size=32, lr=3e-3):
    rng = np.random.default_rng(seed)
    p = init_params(vocab_size, d_model, d_ff, rng)
    state = ac.adam_init(p)
    for _step in range(steps):
        tokens, targets = batch(rng, batch_size, n_train, vocab_size, k)
        s = forward(p, tokens, mode, h)
        _loss, dlogits = ac.softmax_cross_entropy(s["logits"], targets)
        p, state = ac.adam_step(p, backward(p, s, dlogits), state, lr=lr)
    return p


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    k = int(argv[argv.index("--k") + 1]) if "--k" in argv else 3  # --k N: repeat N places back
    seeds, lengths, h, n_train = (0, 1, 2), (16, 32, 64, 128), 2, 16
    print(f"task: repeat the token {k} places back; vocab 16, d_model 32, h {h}, d_ff 64, one layer;"
          f" 600 Adam steps of 32 sequences of length {n_train}; test: 256 sequences per length "
          f"(seed 1000); accuracy over positions i >= {k}; seeds {seeds}")
    test_rng = np.random.default_rng(1000)
    tests = {n: batch(test_rng, 256, n, 16, k) for n in lengths}
    print("each cell: loss / accuracy over all predicted positions / accuracy at positions "
          f">= {n_train} only (never seen in training)")
    print(f"{'mode':<11} {'seed':>4} " + " ".join(f"{'n=' + str(n):>20}" for n in lengths))
    for mode in MODES:
        for seed in seeds:
            t0 = time.perf_counter()
            p = train(mode, seed, k=k, h=h, n_train=n_train)
            cells = []
            for n in lengths:
                loss, acc, beyond = loss_and_accuracy(p, *tests[n], mode, h, n_train)
                cells.append(f"{loss:5.3f}/{acc:5.3f}/" + ("  -  " if n <= n_train else f"{beyond:5.3f}"))
            print(f"{mode:<11} {seed:>4} " + " ".join(f"{c:>20}" for c in cells)
                  + f"   [{time.perf_counter() - t0:.1f} s]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
