"""Every layer of attention_core against an independent step-by-step rebuild, without torch.

The rebuilds below use plain numpy only (never attention_core): loops over rows and heads,
boolean "allowed" patterns instead of additive masks, sums written out. The parameters are
chosen so that a wiring mistake cannot hide:

- every sub-layer has its own weights, and every layer norm its own gamma and beta, far
  from (1, 0), so a swapped norm, a missing residual or a sub-layer reading the wrong input
  changes the output;
- d_k != d_v and n != m, so swapped W_K / W_V or queries and keys from the wrong side either
  fail on shapes or give other numbers;
- FFN biases are non-zero and ReLU cuts part of the hidden units;
- masks block real keys (causal, padding of each batch entry), so a mask that is dropped,
  transposed or applied after softmax shows.

The fast suite (no torch) must catch wiring, formula and mask bugs in every layer on its
own; tests/test_torch_crosscheck.py repeats the encoder and decoder checks against PyTorch.
"""

import numpy as np
import pytest

import attention_core as ac

EPS = 1e-5
TOL = dict(rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------- random, non-trivial parameters

def rand_attention(rng, d_model, h, d_k, d_v) -> ac.AttentionParams:
    return ac.AttentionParams(W_Q=rng.normal(size=(d_model, h * d_k)),
                              W_K=rng.normal(size=(d_model, h * d_k)),
                              W_V=rng.normal(size=(d_model, h * d_v)),
                              W_O=rng.normal(size=(h * d_v, d_model)) / np.sqrt(h * d_v),
                              num_heads=h)


def rand_norm(rng, d_model) -> ac.LayerNormParams:
    sign = rng.choice([-1.0, 1.0], size=d_model)
    return ac.LayerNormParams(gamma=sign * rng.uniform(0.5, 2.0, size=d_model),
                              beta=rng.normal(size=d_model))


def rand_ffn(rng, d_model, d_ff) -> ac.FFNParams:
    return ac.FFNParams(W_1=rng.normal(size=(d_model, d_ff)), b_1=rng.normal(size=d_ff),
                        W_2=rng.normal(size=(d_ff, d_model)) / np.sqrt(d_ff),
                        b_2=rng.normal(size=d_model))


def rand_encoder(rng, d_model=6, h=2, d_k=2, d_v=4, d_ff=10) -> ac.EncoderLayerParams:
    return ac.EncoderLayerParams(rand_attention(rng, d_model, h, d_k, d_v), rand_norm(rng, d_model),
                                 rand_ffn(rng, d_model, d_ff), rand_norm(rng, d_model))


def rand_decoder(rng, d_model=6, h=2, d_k=2, d_v=4, d_ff=10) -> ac.DecoderLayerParams:
    return ac.DecoderLayerParams(rand_attention(rng, d_model, h, d_k, d_v), rand_norm(rng, d_model),
                                 rand_attention(rng, d_model, h, d_k, d_v), rand_norm(rng, d_model),
                                 rand_ffn(rng, d_model, d_ff), rand_norm(rng, d_model))


# ---------------------------------------------------------------- the rebuild, one step at a time

def ref_softmax_row(scores, allowed):
    """Weights of one query row: exp over the allowed keys only, normalised; 0 elsewhere."""
    w = np.zeros(len(scores))
    keys = [j for j in range(len(scores)) if allowed[j]]
    top = max(scores[j] for j in keys)
    for j in keys:
        w[j] = np.exp(scores[j] - top)
    return w / sum(w[j] for j in keys)


def ref_attention(Q, K, V, allowed):
    """One head, one sequence: Q (n, d_k), K (m, d_k), V (m, d_v), allowed (n, m) booleans."""
    n, m, d_k = Q.shape[0], K.shape[0], Q.shape[1]
    weights = np.zeros((n, m))
    out = np.zeros((n, V.shape[1]))
    for i in range(n):
        scores = [sum(Q[i, c] * K[j, c] for c in range(d_k)) / np.sqrt(d_k) for j in range(m)]
        weights[i] = ref_softmax_row(scores, allowed[i])
        for j in range(m):
            out[i] += weights[i, j] * V[j]  # o_i = sum_j a_ij v_j
    return out, weights


def ref_mha(X_q, X_kv, p, allowed):
    """Multi-head attention of one sequence, head by head with its own column block."""
    h = p.num_heads
    d_k, d_v = p.W_Q.shape[1] // h, p.W_V.shape[1] // h
    heads, weights = [], []
    for r in range(h):
        q_cols, v_cols = slice(r * d_k, (r + 1) * d_k), slice(r * d_v, (r + 1) * d_v)
        o, w = ref_attention(X_q @ p.W_Q[:, q_cols], X_kv @ p.W_K[:, q_cols],
                             X_kv @ p.W_V[:, v_cols], allowed)
        heads.append(o)
        weights.append(w)
    return np.hstack(heads) @ p.W_O, np.array(weights)


def ref_layer_norm(X, norm):
    out = np.empty_like(X)
    d = X.shape[-1]
    for i, x in enumerate(X):
        mean = sum(x) / d
        var = sum((v - mean) ** 2 for v in x) / d
        out[i] = norm.gamma * (x - mean) / np.sqrt(var + EPS) + norm.beta
    return out


def ref_ffn(X, f):
    out = np.empty((X.shape[0], f.W_2.shape[1]))
    for i, x in enumerate(X):
        hidden = np.array([max(0.0, v) for v in x @ f.W_1 + f.b_1])
        out[i] = hidden @ f.W_2 + f.b_2
    return out


def ref_encoder_layer(X, p, allowed):
    """Post-norm: H = LN_1(X + MHA(X, X)), out = LN_2(H + FFN(H))."""
    H = ref_layer_norm(X + ref_mha(X, X, p.self_attn, allowed)[0], p.norm1)
    return ref_layer_norm(H + ref_ffn(H, p.ffn), p.norm2)


def ref_decoder_layer(Y, memory, p, self_allowed, cross_allowed):
    """A = LN_1(Y + MHA(Y, Y)), B = LN_2(A + MHA(A, memory)), out = LN_3(B + FFN(B))."""
    self_out, self_w = ref_mha(Y, Y, p.self_attn, self_allowed)
    A = ref_layer_norm(Y + self_out, p.norm1)
    cross_out, cross_w = ref_mha(A, memory, p.cross_attn, cross_allowed)  # Q from A, K V from memory
    B = ref_layer_norm(A + cross_out, p.norm2)
    return ref_layer_norm(B + ref_ffn(B, p.ffn), p.norm3), self_w, cross_w


def causal_allowed(n):
    return np.array([[j <= i for j in range(n)] for i in range(n)])


def padding_allowed(length, n, m):
    return np.array([[j < length for j in range(m)] for _ in range(n)])


# ---------------------------------------------------------------- data

@pytest.fixture
def rng():
    return np.random.default_rng(2024)


LENGTHS = [5, 3]  # batch of 2 source sequences, m = 5, the second padded after 3 keys
N, M, D_MODEL = 4, 5, 6


def _batch(rng, n, d_model=D_MODEL):
    return rng.normal(size=(len(LENGTHS), n, d_model))


# ---------------------------------------------------------------- one layer at a time

def test_scaled_dot_product_attention_and_its_steps(rng):
    Q, K, V = rng.normal(size=(2, N, 3)), rng.normal(size=(2, M, 3)), rng.normal(size=(2, M, 2))
    mask = ac.padding_mask(LENGTHS, M)  # (2, 1, m)
    steps = ac.attention_steps(Q, K, V, mask)
    out, w = ac.scaled_dot_product_attention(Q, K, V, mask)
    for b, length in enumerate(LENGTHS):
        ref_out, ref_w = ref_attention(Q[b], K[b], V[b], padding_allowed(length, N, M))
        assert np.allclose(out[b], ref_out, **TOL) and np.allclose(w[b], ref_w, **TOL)
        assert np.allclose(steps.output[b], ref_out, **TOL)
        assert np.allclose(steps.weights[b], ref_w, **TOL)
        assert np.allclose(steps.scores[b], [[Q[b, i] @ K[b, j] for j in range(M)]
                                             for i in range(N)], **TOL)
        assert np.allclose(steps.scaled[b], steps.scores[b] / np.sqrt(3), **TOL)
        assert np.allclose(ac.tiled_attention(Q, K, V, 2, mask)[b], ref_out, **TOL)


def test_multi_head_cross_attention_with_d_k_unlike_d_v(rng):
    p = rand_attention(rng, D_MODEL, h=2, d_k=2, d_v=4)
    X_q, X_kv = _batch(rng, N), _batch(rng, M)
    out, w = ac.multi_head_attention(X_q, X_kv, p.W_Q, p.W_K, p.W_V, p.W_O, 2,
                                     ac.padding_mask(LENGTHS, M))
    assert out.shape == (2, N, D_MODEL) and w.shape == (2, 2, N, M)
    for b, length in enumerate(LENGTHS):
        ref_out, ref_w = ref_mha(X_q[b], X_kv[b], p, padding_allowed(length, N, M))
        assert np.allclose(out[b], ref_out, **TOL) and np.allclose(w[b], ref_w, **TOL)


def test_multi_head_self_attention_with_a_causal_mask(rng):
    p = rand_attention(rng, D_MODEL, h=3, d_k=3, d_v=1)
    X = rng.normal(size=(N, D_MODEL))
    out, w = ac.multi_head_attention(X, X, p.W_Q, p.W_K, p.W_V, p.W_O, 3, ac.causal_mask(N))
    ref_out, ref_w = ref_mha(X, X, p, causal_allowed(N))
    assert np.allclose(out, ref_out, **TOL) and np.allclose(w, ref_w, **TOL)


def test_feed_forward_with_biases_and_cut_units(rng):
    f = rand_ffn(rng, D_MODEL, 10)
    X = rng.normal(size=(2, N, D_MODEL))
    hidden = X @ f.W_1 + f.b_1
    assert np.any(hidden < 0) and np.any(hidden > 0)  # ReLU really cuts something here
    got = ac.feed_forward(X, f.W_1, f.b_1, f.W_2, f.b_2)
    for b in range(2):
        assert np.allclose(got[b], ref_ffn(X[b], f), **TOL)


def test_layer_norm_with_gamma_and_beta(rng):
    norm = rand_norm(rng, D_MODEL)
    X = rng.normal(size=(2, N, D_MODEL)) * 3 + 1
    got = ac.layer_norm(X, norm.gamma, norm.beta)
    for b in range(2):
        assert np.allclose(got[b], ref_layer_norm(X[b], norm), **TOL)


def test_positional_encoding_entry_by_entry():
    for d_model in (6, 8):
        pe = ac.sinusoidal_positional_encoding(12, d_model)
        for pos in range(12):
            for i in range(d_model // 2):
                angle = pos / 10000 ** (2 * i / d_model)
                assert pe[pos, 2 * i] == pytest.approx(np.sin(angle), abs=1e-12)
                assert pe[pos, 2 * i + 1] == pytest.approx(np.cos(angle), abs=1e-12)


def test_encoder_layer_with_a_padded_batch(rng):
    p = rand_encoder(rng)
    X = _batch(rng, M)
    got = ac.encoder_layer(X, p, ac.padding_mask(LENGTHS, M))
    for b, length in enumerate(LENGTHS):
        assert np.allclose(got[b], ref_encoder_layer(X[b], p, padding_allowed(length, M, M)), **TOL)


def test_encoder_layer_without_a_mask(rng):
    p = rand_encoder(rng, d_model=4, h=1, d_k=3, d_v=2, d_ff=7)
    X = rng.normal(size=(M, 4))
    assert np.allclose(ac.encoder_layer(X, p), ref_encoder_layer(X, p, np.ones((M, M), bool)), **TOL)


def test_decoder_layer_default_causal_self_mask_and_padded_memory(rng):
    p = rand_decoder(rng)
    Y, memory = _batch(rng, N), _batch(rng, M)
    out, self_w, cross_w = ac.decoder_layer(Y, memory, p, cross_mask=ac.padding_mask(LENGTHS, M),
                                            return_weights=True)
    for b, length in enumerate(LENGTHS):
        ref_out, ref_self, ref_cross = ref_decoder_layer(Y[b], memory[b], p, causal_allowed(N),
                                                         padding_allowed(length, N, M))
        assert np.allclose(self_w[b], ref_self, **TOL)
        assert np.allclose(cross_w[b], ref_cross, **TOL)
        assert np.allclose(out[b], ref_out, **TOL)


def test_decoder_layer_with_an_explicit_self_mask(rng):
    p = rand_decoder(rng, d_model=4, h=2, d_k=3, d_v=1, d_ff=5)
    Y, memory = rng.normal(size=(N, 4)), rng.normal(size=(M, 4))
    self_mask = ac.causal_mask(N) + ac.padding_mask([3], N)[0]  # causal, and key 3 is padding
    allowed = causal_allowed(N) & padding_allowed(3, N, N)
    out = ac.decoder_layer(Y, memory, p, self_mask=self_mask)
    ref_out, _, _ = ref_decoder_layer(Y, memory, p, allowed, np.ones((N, M), bool))
    assert np.allclose(out, ref_out, **TOL)


def test_stacks_run_every_layer_once_in_order_with_the_same_memory(rng):
    enc = [rand_encoder(rng) for _ in range(3)]
    dec = [rand_decoder(rng) for _ in range(3)]
    src, tgt = rng.normal(size=(M, D_MODEL)), rng.normal(size=(N, D_MODEL))
    memory = ac.encode(src, enc)
    X = src
    for p in enc:
        X = ref_encoder_layer(X, p, np.ones((M, M), bool))
    assert np.allclose(memory, X, **TOL)
    Y = tgt
    for p in dec:  # every decoder layer reads the encoder's final output
        Y = ref_decoder_layer(Y, X, p, causal_allowed(N), np.ones((N, M), bool))[0]
    assert np.allclose(ac.decode(tgt, memory, dec), Y, **TOL)


def test_the_rebuild_itself_notices_each_wiring_change(rng):
    """The rebuild is only worth something if the parameters make wiring visible: each
    classic mistake, made in the rebuild, must move the output far beyond TOL."""
    p = rand_decoder(rng)
    Y, memory = rng.normal(size=(N, D_MODEL)), rng.normal(size=(M, D_MODEL))
    right = ref_decoder_layer(Y, memory, p, causal_allowed(N), np.ones((N, M), bool))[0]
    A = ref_layer_norm(Y + ref_mha(Y, Y, p.self_attn, causal_allowed(N))[0], p.norm1)
    wrong_query = ref_mha(Y, memory, p.cross_attn, np.ones((N, M), bool))[0]  # Q from Y, not A
    B_wrong = ref_layer_norm(A + wrong_query, p.norm2)
    assert not np.allclose(ref_layer_norm(B_wrong + ref_ffn(B_wrong, p.ffn), p.norm3), right,
                           atol=1e-3)
    swapped = ac.DecoderLayerParams(p.self_attn, p.norm2, p.cross_attn, p.norm1, p.ffn, p.norm3)
    assert not np.allclose(ref_decoder_layer(Y, memory, swapped, causal_allowed(N),
                                             np.ones((N, M), bool))[0], right, atol=1e-3)
