"""Property tests of attention_core: what must hold for every input, not just one example."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_core as ac

settings.register_profile("course", max_examples=60, deadline=None, derandomize=True)
settings.load_profile("course")

sizes = st.integers(min_value=1, max_value=7)
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def _qkv(seed, n, m, d_k, d_v, scale=1.0):
    rng = np.random.default_rng(seed)
    return (scale * rng.normal(size=(n, d_k)), scale * rng.normal(size=(m, d_k)),
            rng.normal(size=(m, d_v)))


@given(seeds, sizes, sizes, sizes, sizes, st.sampled_from([0.1, 1.0, 30.0]))
def test_weights_are_a_distribution_over_keys(seed, n, m, d_k, d_v, scale):
    Q, K, V = _qkv(seed, n, m, d_k, d_v, scale)
    out, w = ac.scaled_dot_product_attention(Q, K, V)
    assert w.shape == (n, m) and out.shape == (n, d_v)
    assert np.all(w >= 0)
    assert np.allclose(w.sum(axis=-1), 1.0)
    # a convex combination of value rows stays within their per-feature range
    assert np.all(out <= V.max(axis=0) + 1e-9) and np.all(out >= V.min(axis=0) - 1e-9)


@given(seeds, sizes, st.floats(min_value=-1e3, max_value=1e3))
def test_softmax_ignores_a_constant_added_to_a_row(seed, m, c):
    x = np.random.default_rng(seed).normal(size=(3, m)) * 5
    assert np.allclose(ac.softmax(x + c), ac.softmax(x))
    shifted = x.copy()
    shifted[1] += c  # one row only
    assert np.allclose(ac.softmax(shifted), ac.softmax(x))


@given(seeds, sizes, sizes)
def test_self_attention_is_permutation_equivariant(seed, n, d):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W_Q, W_K, W_V = (rng.normal(size=(d, d)) for _ in range(3))
    perm = rng.permutation(n)
    out, _ = ac.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)
    out_p, _ = ac.scaled_dot_product_attention(X[perm] @ W_Q, X[perm] @ W_K, X[perm] @ W_V)
    assert np.allclose(out_p, out[perm])


@given(seeds, st.integers(min_value=2, max_value=8), sizes)
def test_causal_prefix_consistency(seed, n, d):
    Q, K, V = _qkv(seed, n, n, d, d)
    full, _ = ac.scaled_dot_product_attention(Q, K, V, ac.causal_mask(n))
    for t in range(1, n + 1):  # position t-1 sees exactly the first t tokens
        prefix, _ = ac.scaled_dot_product_attention(Q[:t], K[:t], V[:t], ac.causal_mask(t))
        assert np.allclose(full[:t], prefix)


@given(seeds, st.integers(min_value=2, max_value=6), sizes)
def test_causal_mask_does_not_leak_the_future(seed, n, d):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X2 = X.copy()
    X2[-1] = rng.normal(size=d) * 10  # change only the last token
    a, _ = ac.scaled_dot_product_attention(X, X, X, ac.causal_mask(n))
    b, _ = ac.scaled_dot_product_attention(X2, X2, X2, ac.causal_mask(n))
    assert np.allclose(a[:-1], b[:-1])


@given(seeds, st.sampled_from([(12, 1), (12, 2), (12, 3), (12, 4), (12, 6), (8, 8)]), sizes)
def test_big_projection_split_into_heads_equals_per_head_projections(seed, dh, n):
    d_model, h = dh
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d_model))
    p = ac.init_attention_params(d_model, h, rng)
    out, w = ac.multi_head_attention(X, X, p.W_Q, p.W_K, p.W_V, p.W_O, h)
    d = d_model // h
    heads = []
    for r in range(h):  # head r: its own small (d_model, d) projections
        cols = slice(r * d, (r + 1) * d)
        o_r, w_r = ac.scaled_dot_product_attention(X @ p.W_Q[:, cols], X @ p.W_K[:, cols],
                                                   X @ p.W_V[:, cols])
        assert np.allclose(w[r], w_r)
        heads.append(o_r)
    assert np.allclose(out, np.concatenate(heads, axis=-1) @ p.W_O)


@given(st.integers(min_value=0, max_value=200), st.integers(min_value=-50, max_value=50),
       st.sampled_from([2, 4, 16, 64]))
def test_positional_shift_is_a_rotation_depending_on_the_offset_only(pos, k, d_model):
    pe = ac.sinusoidal_positional_encoding(pos + 60, d_model)
    R = ac.positional_shift_matrix(k, d_model)
    assert np.allclose(R @ R.T, np.eye(d_model))  # orthogonal: a rotation
    assert np.isclose(np.linalg.det(R), 1.0)
    if 0 <= pos + k < len(pe):
        assert np.allclose(pe[pos] @ R, pe[pos + k], atol=1e-9)
    other = ac.sinusoidal_positional_encoding(pos + 200, d_model)[pos + 100]
    expected = ac.sinusoidal_positional_encoding(pos + 200 + abs(k), d_model)[pos + 100 + k]
    assert np.allclose(other @ R, expected, atol=1e-9)  # same R at another position


@given(seeds, st.integers(min_value=1, max_value=40), st.integers(min_value=1, max_value=40),
       st.integers(min_value=1, max_value=17), st.booleans())
def test_tiled_equals_naive(seed, n, m, block, causal):
    if causal:
        m = n
    Q, K, V = _qkv(seed, n, m, 5, 3, scale=3.0)
    mask = ac.causal_mask(n) if causal else None
    naive, _ = ac.scaled_dot_product_attention(Q, K, V, mask)
    assert np.allclose(ac.tiled_attention(Q, K, V, block, mask), naive, rtol=1e-12, atol=1e-12)


@given(seeds, st.integers(min_value=1, max_value=6))
def test_tiled_equals_naive_with_batch_and_padding(seed, block):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(3, 9, 4)), rng.normal(size=(3, 9, 4)), rng.normal(size=(3, 9, 2))
    mask = ac.padding_mask(rng.integers(1, 10, size=3), 9) + ac.causal_mask(9)
    naive, _ = ac.scaled_dot_product_attention(Q, K, V, mask)
    assert np.allclose(ac.tiled_attention(Q, K, V, block, mask), naive, rtol=1e-12, atol=1e-12)


@given(seeds, sizes, st.integers(min_value=1, max_value=4))
def test_ffn_is_position_wise(seed, n, d):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    p = ac.init_ffn_params(d, 4 * d, rng)
    Y = ac.feed_forward(X, p.W_1, p.b_1, p.W_2, p.b_2)
    for i in range(n):  # each output row depends on its own input row only
        alone = ac.feed_forward(X[i:i + 1], p.W_1, p.b_1, p.W_2, p.b_2)
        assert np.allclose(Y[i], alone[0])


@given(seeds, sizes, st.integers(min_value=2, max_value=9))
def test_layer_norm_rows_have_mean_0_and_var_1(seed, n, d):
    X = np.random.default_rng(seed).normal(size=(n, d)) * 3 + 7
    Y = ac.layer_norm(X, np.ones(d), np.zeros(d))
    assert np.allclose(Y.mean(axis=-1), 0.0, atol=1e-9)
    assert np.allclose(Y.var(axis=-1), X.var(axis=-1) / (X.var(axis=-1) + 1e-5))


@given(seeds, sizes, sizes, sizes, st.booleans())
def test_lean_attention_equals_the_step_by_step_one(seed, n, d_k, d_v, causal):
    Q, K, V = _qkv(seed, n, n, d_k, d_v, scale=2.0)
    mask = ac.causal_mask(n) if causal else None
    out, w = ac.scaled_dot_product_attention(Q, K, V, mask)
    steps = ac.attention_steps(Q, K, V, mask)
    assert np.allclose(out, steps.output, rtol=1e-12, atol=1e-12)
    assert np.allclose(w, steps.weights, rtol=1e-12, atol=1e-12)
