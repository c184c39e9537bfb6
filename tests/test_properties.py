"""Property tests of attention_core: what must hold for every input, not just one example.

Reproducible: every test runs with derandomize=True (its examples are derived from the test
itself, the same on every machine and in CI) and without an example database, so a failure
in CI fails the same way locally; hypothesis prints the falsifying example and a
@reproduce_failure blob. The settings are applied per test, not as a global profile, so
other test files are not affected. About 2000 generated cases in total (about 9 s of CPU).
"""

import os
import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_core as ac


# A longer, random run (new examples every time; a failure prints its @reproduce_failure blob):
#   PROPERTY_EXAMPLES=20 PROPERTY_RANDOM=1 .venv/bin/pytest -n 0 tests/test_properties.py
LONGER = int(os.environ.get("PROPERTY_EXAMPLES", "1"))
RANDOM = os.environ.get("PROPERTY_RANDOM") == "1"


def course(max_examples: int = 60):
    """The settings of every property test here: deterministic (unless PROPERTY_RANDOM=1), no
    database, no deadline; PROPERTY_EXAMPLES multiplies the number of examples."""
    return settings(max_examples=max_examples * LONGER, deadline=None, derandomize=not RANDOM,
                    database=None, print_blob=True)


sizes = st.integers(min_value=1, max_value=7)
small = st.floats(min_value=-10, max_value=10, allow_nan=False, allow_infinity=False)


def arrays(shape, elements=small, varied=True):
    """A float64 array of `shape` whose every entry hypothesis draws (and shrinks) on its own:
    fill=nothing() keeps it from filling most entries with one repeated value. varied=False
    (for large weight matrices) lets hypothesis fill, which keeps the examples small."""
    return hnp.arrays(np.float64, shape, elements=elements, fill=None if not varied else st.nothing())


@st.composite
def qkv(draw, n=None, m=None, d_k=None, d_v=None, elements=small):
    n, m = n or draw(sizes), m or draw(sizes)
    d_k, d_v = d_k or draw(sizes), d_v or draw(sizes)
    return (draw(arrays((n, d_k), elements)), draw(arrays((m, d_k), elements)),
            draw(arrays((m, d_v), elements)))


@course()
@given(qkv(elements=st.floats(-30, 30)))
def test_weights_are_a_distribution_over_keys(inputs):
    Q, K, V = inputs
    out, w = ac.scaled_dot_product_attention(Q, K, V)
    assert w.shape == (len(Q), len(K)) and out.shape == (len(Q), V.shape[1])
    assert np.all(w >= 0)
    assert np.allclose(w.sum(axis=-1), 1.0)
    # a convex combination of value rows stays within their per-feature range
    assert np.all(out <= V.max(axis=0) + 1e-9) and np.all(out >= V.min(axis=0) - 1e-9)


@course()
@given(st.data(), sizes, st.floats(min_value=-1e3, max_value=1e3))
def test_softmax_ignores_a_constant_added_to_a_row(data, m, c):
    x = data.draw(arrays((3, m), st.floats(-50, 50)))
    assert np.allclose(ac.softmax(x + c), ac.softmax(x))
    shifted = x.copy()
    shifted[1] += c  # one row only
    assert np.allclose(ac.softmax(shifted), ac.softmax(x))


@course()
@given(st.data(), sizes, sizes)
def test_self_attention_is_permutation_equivariant(data, n, d):
    X = data.draw(arrays((n, d), st.floats(-3, 3)))
    W_Q, W_K, W_V = (data.draw(arrays((d, d), st.floats(-3, 3))) for _ in range(3))
    perm = np.array(data.draw(st.permutations(range(n))))
    out, _ = ac.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)
    out_p, _ = ac.scaled_dot_product_attention(X[perm] @ W_Q, X[perm] @ W_K, X[perm] @ W_V)
    assert np.allclose(out_p, out[perm])


@course()
@given(st.data(), st.integers(min_value=2, max_value=8), sizes)
def test_causal_prefix_consistency(data, n, d):
    Q, K, V = data.draw(qkv(n, n, d, d))
    full, _ = ac.scaled_dot_product_attention(Q, K, V, ac.causal_mask(n))
    for t in range(1, n + 1):  # position t-1 sees exactly the first t tokens
        prefix, _ = ac.scaled_dot_product_attention(Q[:t], K[:t], V[:t], ac.causal_mask(t))
        assert np.allclose(full[:t], prefix)


@course()
@given(st.data(), st.integers(min_value=2, max_value=6), sizes)
def test_causal_mask_does_not_leak_the_future(data, n, d):
    X = data.draw(arrays((n, d)))
    X2 = X.copy()
    X2[-1] = data.draw(arrays((d,), st.floats(-100, 100)))  # change only the last token
    a, _ = ac.scaled_dot_product_attention(X, X, X, ac.causal_mask(n))
    b, _ = ac.scaled_dot_product_attention(X2, X2, X2, ac.causal_mask(n))
    assert np.allclose(a[:-1], b[:-1])


@course()
@given(st.data(), st.sampled_from([(12, 1), (12, 2), (12, 3), (12, 4), (12, 6), (8, 8)]), sizes)
def test_big_projection_split_into_heads_equals_per_head_projections(data, dh, n):
    d_model, h = dh
    X = data.draw(arrays((n, d_model), st.floats(-3, 3)))
    W_Q, W_K, W_V, W_O = (data.draw(arrays((d_model, d_model), st.floats(-1, 1), varied=False))
                          for _ in range(4))
    out, w = ac.multi_head_attention(X, X, W_Q, W_K, W_V, W_O, h)
    d = d_model // h
    heads = []
    for r in range(h):  # head r: its own small (d_model, d) projections
        cols = slice(r * d, (r + 1) * d)
        o_r, w_r = ac.scaled_dot_product_attention(X @ W_Q[:, cols], X @ W_K[:, cols], X @ W_V[:, cols])
        assert np.allclose(w[r], w_r)
        heads.append(o_r)
    assert np.allclose(out, np.concatenate(heads, axis=-1) @ W_O)


@course()
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


@course()
@given(st.data(), st.integers(min_value=1, max_value=40), st.integers(min_value=1, max_value=40),
       st.integers(min_value=1, max_value=17), st.booleans())
def test_tiled_equals_naive(data, n, m, block, causal):
    if causal:
        m = n
    Q, K, V = data.draw(qkv(n, m, 5, 3, elements=st.floats(-30, 30)))
    mask = ac.causal_mask(n) if causal else None
    naive, _ = ac.scaled_dot_product_attention(Q, K, V, mask)
    assert np.allclose(ac.tiled_attention(Q, K, V, block, mask), naive, rtol=1e-12, atol=1e-12)


@course()
@given(st.data(), st.integers(min_value=1, max_value=6))
def test_tiled_equals_naive_with_batch_and_padding(data, block):
    Q, K, V = data.draw(arrays((3, 9, 4))), data.draw(arrays((3, 9, 4))), data.draw(arrays((3, 9, 2)))
    lengths = data.draw(st.lists(st.integers(1, 9), min_size=3, max_size=3))
    mask = ac.padding_mask(lengths, 9) + ac.causal_mask(9)
    naive, _ = ac.scaled_dot_product_attention(Q, K, V, mask)
    assert np.allclose(ac.tiled_attention(Q, K, V, block, mask), naive, rtol=1e-12, atol=1e-12)


@course()
@given(st.data(), sizes, st.integers(min_value=1, max_value=4))
def test_ffn_is_position_wise(data, n, d):
    X = data.draw(arrays((n, d)))
    W_1, b_1 = data.draw(arrays((d, 4 * d))), data.draw(arrays((4 * d,)))
    W_2, b_2 = data.draw(arrays((4 * d, d))), data.draw(arrays((d,)))
    Y = ac.feed_forward(X, W_1, b_1, W_2, b_2)
    for i in range(n):  # each output row depends on its own input row only
        assert np.allclose(Y[i], ac.feed_forward(X[i:i + 1], W_1, b_1, W_2, b_2)[0])


@course()
@given(st.data(), sizes, st.integers(min_value=2, max_value=9))
def test_layer_norm_rows_have_mean_0_and_var_1(data, n, d):
    X = data.draw(arrays((n, d), st.floats(-100, 100)))
    Y = ac.layer_norm(X, np.ones(d), np.zeros(d))
    assert np.allclose(Y.mean(axis=-1), 0.0, atol=1e-9)
    assert np.allclose(Y.var(axis=-1), X.var(axis=-1) / (X.var(axis=-1) + 1e-5))


@course()
@given(st.data(), sizes, sizes, sizes, st.booleans())
def test_lean_attention_equals_the_step_by_step_one(data, n, d_k, d_v, causal):
    Q, K, V = data.draw(qkv(n, n, d_k, d_v, elements=st.floats(-20, 20)))
    mask = ac.causal_mask(n) if causal else None
    out, w = ac.scaled_dot_product_attention(Q, K, V, mask)
    steps = ac.attention_steps(Q, K, V, mask)
    assert np.allclose(out, steps.output, rtol=1e-12, atol=1e-12)
    assert np.allclose(w, steps.weights, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ arrays drawn by hypothesis
# Random shapes with 0-2 batch axes that broadcast against each other, entries up to 100 in
# absolute value (so logits q.k / sqrt(d_k) reach 2e4), random -inf patterns with at least
# one open key per query row. Everything shrinks towards small arrays and no mask.

entries = st.floats(min_value=-100, max_value=100, allow_nan=False, allow_infinity=False)


def _open_one_key_per_row(blocked: np.ndarray, open_at: np.ndarray) -> np.ndarray:
    """Unblock key open_at[row] in every row of `blocked` (..., a, b) that blocks all keys."""
    full_rows = blocked.all(axis=-1, keepdims=True)  # (..., a, 1)
    chosen = np.zeros_like(blocked)
    np.put_along_axis(chosen, open_at[..., None], True, axis=-1)
    return blocked & ~(full_rows & chosen)


@st.composite
def masks_for(draw, full_shape):
    """An additive mask that broadcasts to full_shape (..., n, m) without enlarging it.

    Each axis has the full size or 1, leading axes may be left out; -inf where blocked,
    elsewhere 0 or a finite bias <= 0. Every row keeps at least one open key.
    """
    drop = draw(st.integers(min_value=0, max_value=len(full_shape) - 2))
    shape = tuple(draw(st.sampled_from([s, 1])) for s in full_shape[drop:])
    blocked = draw(hnp.arrays(bool, shape))
    open_at = draw(hnp.arrays(np.int64, shape[:-1],
                              elements=st.integers(min_value=0, max_value=shape[-1] - 1)))
    blocked = _open_one_key_per_row(blocked, open_at)
    bias = draw(st.one_of(st.just(np.zeros(shape)),
                          hnp.arrays(np.float64, shape, elements=st.floats(-10, 0))))
    return np.where(blocked, -np.inf, bias)


@st.composite
def attention_inputs(draw, with_mask: bool = True):
    """Q (*bq, n, d_k), K (*bk, m, d_k), V (*bv, m, d_v), mask or None, and the batch shape."""
    batch_shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=2,
                                                          max_side=3))
    (bq, bk, bv), batch = batch_shapes.input_shapes, batch_shapes.result_shape
    n, m = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    d_k, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    Q = draw(arrays((*bq, n, d_k), entries))
    K = draw(arrays((*bk, m, d_k), entries))
    V = draw(arrays((*bv, m, d_v), entries))
    masked = with_mask and draw(st.sampled_from([True, True, False]))  # most cases masked
    mask = draw(masks_for((*batch, n, m))) if masked else None
    return Q, K, V, mask, batch


def _reference_attention(Q, K, V, mask, batch):
    """softmax(Q K^T / sqrt(d_k) + M) V, one batch entry and one query row at a time."""
    n, m, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    Q, K, V = (np.broadcast_to(A, (*batch, *A.shape[-2:])) for A in (Q, K, V))
    M = np.zeros((*batch, n, m)) if mask is None else np.broadcast_to(mask, (*batch, n, m))
    out, weights = np.empty((*batch, n, d_v)), np.empty((*batch, n, m))
    for b in np.ndindex(*batch):
        for i in range(n):
            open_keys = np.flatnonzero(M[b][i] > -np.inf)
            s = np.array([Q[b][i] @ K[b][j] / np.sqrt(Q.shape[-1]) + M[b][i, j] for j in open_keys])
            e = np.exp(s - s.max())
            weights[b][i] = 0.0
            weights[b][i, open_keys] = e / e.sum()
            out[b][i] = weights[b][i, open_keys] @ V[b][open_keys]
    return out, weights


def _strict(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning may stand in for a result
        return fn(*args)


@course(250)
@given(attention_inputs())
def test_attention_equals_a_row_by_row_reference_and_masked_weights_are_exactly_0(inputs):
    Q, K, V, mask, batch = inputs
    out, w = _strict(ac.scaled_dot_product_attention, Q, K, V, mask)
    ref_out, ref_w = _reference_attention(Q, K, V, mask, batch)
    assert out.shape == ref_out.shape and w.shape[-2:] == ref_w.shape[-2:]
    w = np.broadcast_to(w, ref_w.shape)
    assert np.allclose(w, ref_w, rtol=1e-9, atol=1e-12)
    assert np.allclose(out, ref_out, rtol=1e-9, atol=1e-9)
    assert np.all(w >= 0) and np.allclose(w.sum(axis=-1), 1.0)
    if mask is not None:
        assert np.all(w[np.broadcast_to(mask, w.shape) == -np.inf] == 0.0)  # exactly 0


@course(200)
@given(attention_inputs(), st.data())
def test_values_at_masked_keys_cannot_change_the_output(inputs, data):
    Q, K, V, mask, batch = inputs
    n, m = Q.shape[-2], K.shape[-2]
    mask = data.draw(masks_for((*batch, n, m))) if mask is None else mask
    V = np.broadcast_to(V, (*batch, m, V.shape[-1])).copy()  # one V per batch entry
    hidden = np.all(np.broadcast_to(mask, (*batch, n, m)) == -np.inf, axis=-2)  # (*batch, m)
    noise = data.draw(hnp.arrays(np.float64, V.shape, elements=st.floats(-1e6, 1e6)))
    V_changed = np.where(hidden[..., None], noise, V)  # new values only where no query looks
    for attend in (lambda V: ac.scaled_dot_product_attention(Q, K, V, mask)[0],
                   lambda V: ac.tiled_attention(Q, K, V, 2, mask)):
        assert np.array_equal(_strict(attend, V), _strict(attend, V_changed))


@course(250)
@given(attention_inputs(), st.integers(min_value=1, max_value=7))
def test_tiled_equals_naive_with_masks_and_batches(inputs, block_size):
    Q, K, V, mask, _ = inputs
    naive, _ = ac.scaled_dot_product_attention(Q, K, V, mask)
    tiled = _strict(ac.tiled_attention, Q, K, V, block_size, mask)
    assert tiled.shape == naive.shape
    assert np.allclose(tiled, naive, rtol=1e-9, atol=1e-9)


@course(150)
@given(attention_inputs())
def test_the_steps_are_the_lean_computation_with_masks_and_batches(inputs):
    Q, K, V, mask, _ = inputs
    steps = _strict(ac.attention_steps, Q, K, V, mask)
    out, w = ac.scaled_dot_product_attention(Q, K, V, mask)
    assert np.allclose(steps.scaled, steps.scores / np.sqrt(Q.shape[-1]), rtol=1e-15, atol=0)
    assert np.allclose(steps.output, out, rtol=1e-12, atol=1e-12)
    assert np.allclose(steps.weights, w, rtol=1e-12, atol=1e-12)


@st.composite
def logits_and_axis(draw):
    """Logits up to 1e4 in absolute value, with -inf somewhere but never a whole slice."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=6))
    axis = draw(st.integers(min_value=-len(shape), max_value=len(shape) - 1))
    x = draw(hnp.arrays(np.float64, shape, elements=st.floats(-1e4, 1e4)))
    blocked = np.moveaxis(draw(hnp.arrays(bool, shape)), axis, -1)
    open_at = draw(hnp.arrays(np.int64, blocked.shape[:-1],
                              elements=st.integers(0, blocked.shape[-1] - 1)))
    blocked = np.moveaxis(_open_one_key_per_row(blocked, open_at), -1, axis)
    return np.where(blocked, -np.inf, x), axis


@course(200)
@given(logits_and_axis(), st.floats(min_value=-1e4, max_value=1e4))
def test_softmax_of_large_logits_is_a_distribution_that_ignores_a_shift(x_axis, c):
    x, axis = x_axis
    p = _strict(ac.softmax, x, axis)
    assert p.shape == x.shape and np.all(p >= 0)
    assert np.allclose(p.sum(axis=axis), 1.0)
    assert np.all(p[x == -np.inf] == 0.0)
    assert np.allclose(_strict(ac.softmax, x + c, axis), p, atol=1e-12)
    big = np.take_along_axis(x, np.argmax(x, axis=axis, keepdims=True), axis=axis)
    assert np.allclose(p, np.exp(x - big) / np.sum(np.exp(x - big), axis=axis, keepdims=True))


@course(150)
@given(st.data(), st.sampled_from([(4, 1), (4, 2), (6, 3), (6, 2), (8, 4)]))
def test_multi_head_attention_is_per_head_attention_with_masks_and_batches(data, dh):
    d_model, h = dh
    batch = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    n, m = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))
    X_q = data.draw(hnp.arrays(np.float64, (*batch, n, d_model), elements=st.floats(-10, 10)))
    X_kv = data.draw(hnp.arrays(np.float64, (*batch, m, d_model), elements=st.floats(-10, 10)))
    W = [data.draw(hnp.arrays(np.float64, (d_model, d_model), elements=st.floats(-2, 2)))
         for _ in range(4)]
    mask = data.draw(masks_for((*batch, n, m))) if data.draw(st.sampled_from([True, True, False])) else None
    out, w = _strict(ac.multi_head_attention, X_q, X_kv, *W, h, mask)
    d = d_model // h
    heads = []
    for r in range(h):  # head r: its own column block of W_Q, W_K, W_V, the same mask
        cols = slice(r * d, (r + 1) * d)
        o_r, w_r = ac.scaled_dot_product_attention(X_q @ W[0][:, cols], X_kv @ W[1][:, cols],
                                                   X_kv @ W[2][:, cols], mask)
        assert np.allclose(w[..., r, :, :], w_r, rtol=1e-9, atol=1e-12)
        heads.append(o_r)
    assert np.allclose(out, np.concatenate(heads, axis=-1) @ W[3], rtol=1e-9, atol=1e-9)


@course(150)
@given(st.data(), st.integers(min_value=1, max_value=8))
def test_layer_norm_equals_its_formula_and_ignores_the_scale_of_its_input(data, d):
    shape = (*data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4)), d)
    X = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-1e3, 1e3)))
    gamma = data.draw(hnp.arrays(np.float64, (d,), elements=st.floats(-3, 3)))
    beta = data.draw(hnp.arrays(np.float64, (d,), elements=st.floats(-3, 3)))
    Y = _strict(ac.layer_norm, X, gamma, beta)
    mu = X.sum(axis=-1, keepdims=True) / d
    var = ((X - mu) ** 2).sum(axis=-1, keepdims=True) / d  # biased, as PyTorch
    assert np.allclose(Y, gamma * (X - mu) / np.sqrt(var + 1e-5) + beta, rtol=1e-9, atol=1e-9)
    # LN(c X; eps) = LN(X; eps / c^2): with c = 1e250, eps / c^2 is 0 in float64. Compared
    # on rows with a real spread only: on a constant row the reference divides round-off by
    # a standard deviation of round-off.
    spread = np.ptp(X, axis=-1) > 1e-6 * (np.abs(X).max(axis=-1) + 1.0)
    huge = _strict(ac.layer_norm, X * 1e250, gamma, beta)
    assert np.allclose(huge[spread], ac.layer_norm(X, gamma, beta, eps=1e-300)[spread],
                       rtol=1e-9, atol=1e-9)
    assert np.all(np.isfinite(huge))
