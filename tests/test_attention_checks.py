"""The checks of attention_checks/, as a learner meets them through attention_core and
attention_learning: each bad input gets a ValueError that names the argument (never a NaN, an
inf or a warning), and results that float64 cannot hold are explained where they arise."""

import warnings
from fractions import Fraction

import numpy as np
import pytest

import attention_core as ac

# The worked example of notebook 02 (seed 004), as in tests/test_core.py
Z = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
W_K = np.array([[1.0, 1.0], [1.0, -1.0]])
W_V = np.array([[2.0, 0.0], [0.0, 3.0]])
# ---------------------------------------------------------------- bad input

def _raises(match, fn, *args, **kwargs):
    """fn(*args, **kwargs) raises a ValueError matching `match`, and warns nothing first."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning instead of (or before) the error fails
        with pytest.raises(ValueError, match=match) as info:
            fn(*args, **kwargs)
    return str(info.value)


def _quiet(fn, *args, **kwargs):
    """fn(*args, **kwargs), failing on any warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kwargs)


def test_mismatched_inner_dimensions_name_the_shapes():
    msg = _raises("Q and K", ac.scaled_dot_product_attention,
                  np.ones((3, 4)), np.ones((5, 2)), np.ones((5, 2)))
    assert "(3, 4)" in msg and "(5, 2)" in msg
    msg = _raises("K and V", ac.scaled_dot_product_attention,
                  np.ones((3, 2)), np.ones((5, 2)), np.ones((4, 2)))
    assert "(5, 2)" in msg and "(4, 2)" in msg


def test_heads_must_divide_d_model():
    X = np.ones((2, 6))
    msg = _raises("num_heads = 4", ac.multi_head_attention, X, X, np.ones((6, 6)),
                  np.ones((6, 6)), np.ones((6, 6)), np.ones((6, 6)), 4)
    assert "(6, 6)" in msg
    _raises("not divisible by num_heads = 4", ac.init_attention_params, 6, 4,
            np.random.default_rng(0))


def test_wrong_W_O_shape_is_named():
    X = np.ones((2, 4))
    msg = _raises("W_O must have shape", ac.multi_head_attention, X, X, np.ones((4, 4)),
                  np.ones((4, 4)), np.ones((4, 4)), np.ones((2, 4)), 2)
    assert "(4, 4)" in msg and "(2, 4)" in msg


def test_odd_d_model_positional_encoding():
    _raises("d_model must be even.*d_model = 5", ac.sinusoidal_positional_encoding, 10, 5)
    _raises("d_model must be even", ac.positional_shift_matrix, 1, 7)
    _raises("num_positions must be a positive integer", ac.sinusoidal_positional_encoding, 0, 4)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_inputs(bad):
    Q = np.ones((2, 2))
    Q[1, 0] = bad
    msg = _raises("Q contains", ac.scaled_dot_product_attention, Q, np.ones((2, 2)), np.ones((2, 2)))
    assert "(1, 0)" in msg
    with pytest.raises(ValueError, match="X contains"):
        ac.layer_norm(_x_with(bad), np.ones(2), np.zeros(2))


def _x_with(bad):
    X = np.zeros((2, 2))
    X[0, 1] = bad
    return X


def test_nan_in_softmax_and_mask():
    _raises("NaN or \\+inf", ac.softmax, [1.0, np.nan])
    msg = _raises("NaN or \\+inf", ac.scaled_dot_product_attention, np.ones((2, 2)),
                  np.ones((2, 2)), np.ones((2, 2)), np.array([[0, np.nan], [0, 0]]))
    assert "at index (0, 1)" in msg
    _raises("mask may only hold.*inf at index \\(1, 0\\)", ac.attention_weights,
            np.ones((2, 2)), np.ones((2, 2)), np.array([[0, -np.inf], [np.inf, 0]]))


def test_mask_of_wrong_shape():
    Q = np.ones((3, 2))
    msg = _raises("mask of shape \\(2, 2\\)", ac.scaled_dot_product_attention, Q, Q, Q,
                  ac.causal_mask(2))
    assert "(3, 3)" in msg
    # broadcastable but enlarging the (n, m) axes is refused too
    _raises("enlarge", ac.scaled_dot_product_attention, np.ones((1, 2)), np.ones((1, 2)),
            np.ones((1, 2)), np.zeros((3, 1)))


def test_fully_masked_row_is_named():
    Q = np.ones((3, 2))
    mask = np.zeros((3, 3))
    mask[1] = -np.inf
    msg = _raises("query row \\(1,\\)", ac.scaled_dot_product_attention, Q, Q, Q, mask)
    assert "undefined" in msg
    _raises("query row \\(1,\\)", ac.tiled_attention, Q, Q, Q, 2, mask)
    _raises("-inf everywhere along axis -1;", ac.softmax, [-np.inf, -np.inf])
    mask[2] = -np.inf  # two empty rows: both are named
    _raises(r"query rows \(1,\), \(2,\) ", ac.scaled_dot_product_attention, Q, Q, Q, mask)
    batch_mask = np.zeros((2, 3, 3))
    batch_mask[1, 2] = -np.inf
    _raises("query row \\(1, 2\\)", ac.tiled_attention, np.ones((2, 3, 2)), np.ones((2, 3, 2)),
            np.ones((2, 3, 2)), 2, batch_mask)


def test_bad_mask_arguments():
    _raises("n must be a positive integer", ac.causal_mask, 0)
    _raises("lengths", ac.padding_mask, [[1, 2]], 3)
    _raises("every length must be in 1..m = 1..3, got \\[4\\]", ac.padding_mask, [4], 3)
    _raises("block_size", ac.tiled_attention, np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), 0)


def test_ffn_and_layer_norm_shapes_named():
    msg = _raises("W_1", ac.feed_forward, np.ones((2, 4)), np.ones((3, 8)), np.ones(8),
                  np.ones((8, 4)), np.ones(4))
    assert "(3, 8)" in msg
    _raises("gamma and beta", ac.layer_norm, np.ones((2, 4)), np.ones(3), np.zeros(4))


def test_bad_input_changes_nothing():
    Q = np.arange(6.0).reshape(3, 2)
    before = Q.copy()
    mask = np.full((3, 3), -np.inf)
    with pytest.raises(ValueError):
        ac.scaled_dot_product_attention(Q, Q, Q, mask)
    assert np.array_equal(Q, before) and np.all(mask == -np.inf)


def test_attention_weights_and_decoder_weights_agree_with_the_rest():
    rng = np.random.default_rng(5)
    Q, K = rng.normal(size=(3, 4)), rng.normal(size=(5, 4))
    assert np.allclose(ac.attention_weights(Q, K), ac.attention_steps(Q, K, np.ones((5, 1))).weights)
    _raises("Q and K", ac.attention_weights, np.ones((3, 4)), np.ones((5, 2)))
    p = ac.init_decoder_layer(8, 2, 16, rng)
    Y, memory = rng.normal(size=(4, 8)), rng.normal(size=(6, 8))
    out, self_w, cross_w = ac.decoder_layer(Y, memory, p, return_weights=True)
    assert np.allclose(out, ac.decoder_layer(Y, memory, p))
    assert self_w.shape == (2, 4, 4) and cross_w.shape == (2, 4, 6)
    assert np.allclose(np.triu(self_w, 1), 0.0)  # causal by default


# ------------------------------------------- silent or misleading results, tried as a new user

def _mha(X_q, X_kv, p, mask=None):
    return ac.multi_head_attention(X_q, X_kv, p.W_Q, p.W_K, p.W_V, p.W_O, p.num_heads, mask)


BLOCKED = np.triu(np.ones((4, 4), bool), 1)  # True above the diagonal: the future


@pytest.mark.parametrize("call", ["sdpa", "weights", "steps", "tiled", "mha", "encoder",
                                  "decoder self", "decoder cross"])
def test_a_boolean_mask_is_refused_and_the_error_says_how_to_convert_it(call):
    rng = np.random.default_rng(10)
    Q, X = rng.normal(size=(4, 3)), rng.normal(size=(4, 6))
    p = ac.init_attention_params(6, 2, rng)
    calls = {
        "sdpa": lambda: ac.scaled_dot_product_attention(Q, Q, Q, mask=BLOCKED),
        "weights": lambda: ac.attention_weights(Q, Q, mask=BLOCKED),
        "steps": lambda: ac.attention_steps(Q, Q, Q, mask=BLOCKED),
        "tiled": lambda: ac.tiled_attention(Q, Q, Q, 2, mask=BLOCKED),
        "mha": lambda: _mha(X, X, p, BLOCKED),
        "encoder": lambda: ac.encoder_layer(X, ac.init_encoder_layer(6, 2, 8, rng), BLOCKED),
        "decoder self": lambda: ac.decoder_layer(X, X, ac.init_decoder_layer(6, 2, 8, rng),
                                                 self_mask=BLOCKED),
        "decoder cross": lambda: ac.decoder_layer(X, X, ac.init_decoder_layer(6, 2, 8, rng),
                                                  cross_mask=BLOCKED),
    }
    msg = _raises("is boolean", calls[call])
    name = call.split()[-1] + "_mask" if call.startswith("decoder") else "mask"
    assert msg.startswith(f"{name} is boolean (shape (4, 4))")
    assert "F.scaled_dot_product_attention" in msg and "nn.MultiheadAttention" in msg
    assert "True = may attend" in msg and "True = may NOT attend" in msg
    assert "np.where(allowed, 0.0, -np.inf)" in msg and "np.where(blocked, -np.inf, 0.0)" in msg


def test_the_conversions_the_boolean_error_gives_are_right():
    blocked, allowed = BLOCKED, ~BLOCKED
    assert np.array_equal(np.where(blocked, -np.inf, 0.0), ac.causal_mask(4))
    assert np.array_equal(np.where(allowed, 0.0, -np.inf), ac.causal_mask(4))


@pytest.mark.parametrize("indicator", [BLOCKED.astype(float), BLOCKED.astype(int),
                                       (~BLOCKED).astype(float), np.ones((4, 4))])
def test_a_0_1_indicator_mask_is_refused(indicator):
    Q = np.random.default_rng(11).normal(size=(4, 3))
    msg = _raises("holds only 0 and 1", ac.scaled_dot_product_attention, Q, Q, Q, indicator)
    assert "blocks nothing" in msg and "np.where(blocked, -np.inf, 0.0)" in msg


def test_additive_masks_with_finite_values_still_work():
    Q = np.random.default_rng(12).normal(size=(4, 3))
    big_negative = np.where(BLOCKED, -1e9, 0.0)  # the "large negative number" of notebook 04
    _, w = _quiet(ac.scaled_dot_product_attention, Q, Q, Q, big_negative)
    assert np.allclose(np.triu(w, 1), 0.0)
    _, w0 = _quiet(ac.scaled_dot_product_attention, Q, Q, Q, np.zeros((4, 4), dtype=int))
    assert np.allclose(w0, ac.attention_weights(Q, Q))


# overflow of Q K^T: entries around 1e200 give scores around 1e400

def _overflowing(sign=1.0):
    Q = np.array([[1e200, 0.0], [0.0, 1.0]])
    K = np.array([[sign * 1e200, 1.0], [sign * 1e200, 2.0]])  # row 0: scores +-1e400, row 1: 1, 2
    return Q, K, np.ones((2, 3))


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("masked", [False, True])
def test_overflow_of_the_scores_is_named_not_blamed_on_the_mask(sign, masked):
    Q, K, V = _overflowing(sign)
    mask = np.zeros((2, 2)) if masked else None
    for fn in (lambda: ac.scaled_dot_product_attention(Q, K, V, mask),
               lambda: ac.attention_weights(Q, K, mask), lambda: ac.attention_steps(Q, K, V, mask),
               lambda: ac.tiled_attention(Q, K, V, 1, mask)):
        msg = _raises("^Q K\\^T overflowed", fn)
        assert "query row (0,)" in msg and "1e+200" in msg and "blocks" not in msg


def test_overflow_with_a_mask_that_blocks_the_row_is_still_the_masks_fault():
    Q, K, V = _overflowing(-1.0)  # row 0 overflows to -inf, and the mask blocks row 0 anyway
    mask = np.array([[-np.inf, -np.inf], [0.0, 0.0]])
    _raises("the mask blocks every key for query row \\(0,\\)", ac.scaled_dot_product_attention,
            Q, K, V, mask)
    _raises("the mask blocks every key for query row \\(0,\\)", ac.tiled_attention, Q, K, V, 1, mask)


def test_scores_that_overflow_to_minus_inf_next_to_a_finite_one_get_weight_0():
    Q = np.array([[1e200, 1.0]])
    K = np.array([[-1e200, 0.0], [0.0, 1.0]])  # scores -1e400 (-inf in float64) and 1
    out, w = _quiet(ac.scaled_dot_product_attention, Q, K, np.array([[5.0], [7.0]]))
    assert np.array_equal(w, [[0.0, 1.0]]) and np.array_equal(out, [[7.0]])  # exp(-1e400) = 0


def test_overflow_inside_multi_head_attention_and_the_layers_is_named():
    rng = np.random.default_rng(13)
    p = ac.init_attention_params(4, 2, rng)
    X = rng.normal(size=(3, 4)) * 1e200
    _raises("^\\(X_q W_Q\\) \\(X_kv W_K\\)\\^T overflowed", _mha, X, X, p)
    big_W_Q = ac.AttentionParams(p.W_Q * 1e200, p.W_K, p.W_V, p.W_O, 2)
    msg = _raises("^X_q @ W_Q overflowed", _mha, X, X / 1e200, big_W_Q)
    assert "|X_q| up to" in msg and "|W_Q| up to" in msg
    _raises("overflowed", ac.encoder_layer, X, ac.init_encoder_layer(4, 2, 8, rng))
    # a residual sum beyond float64: uniform weights (W_Q = W_K = 0), V = X, W_O = I
    zero, eye = np.zeros((4, 4)), np.eye(4)
    params = ac.init_encoder_layer(4, 1, 8, rng)
    params = ac.EncoderLayerParams(ac.AttentionParams(zero, zero, eye, eye, 1), params.norm1,
                                   params.ffn, params.norm2)
    _raises("^X \\+ MHA\\(X, X\\) overflowed", ac.encoder_layer, np.full((2, 4), 1.5e308), params)


def test_overflow_in_the_ffn_and_tiled_sums_is_named():
    X = np.array([[1e300, 1.0]])
    _raises("^FFN\\(X\\).*overflowed", ac.feed_forward, X, np.full((2, 3), 1e10), np.zeros(3),
            np.ones((3, 2)), np.zeros(2))
    V = np.full((4, 1), 1.7e308)  # convex combinations are fine; a running sum of 4 is not
    Q = np.zeros((1, 2))
    out, _ = _quiet(ac.scaled_dot_product_attention, Q, np.zeros((4, 2)), V)
    assert np.allclose(out, 1.7e308)
    _raises("running sum.*overflowed", ac.tiled_attention, Q, np.zeros((4, 2)), V, 4)


def test_empty_key_axis_or_empty_d_k_is_refused():
    Q = np.ones((3, 2))
    for fn in (ac.scaled_dot_product_attention, ac.attention_steps,
               lambda Q, K, V: ac.tiled_attention(Q, K, V, 2)):
        _raises("K has m = 0 key positions \\(shape \\(0, 2\\)\\)", fn, Q, np.ones((0, 2)),
                np.ones((0, 4)))
        _raises("d_k = 0", fn, np.ones((3, 0)), np.ones((5, 0)), np.ones((5, 4)))
    _raises("m = 0", ac.attention_weights, Q, np.ones((0, 2)))
    _raises("d_k = 0", ac.attention_weights, np.ones((3, 0)), np.ones((5, 0)))
    p = ac.init_attention_params(2, 1, np.random.default_rng(0))
    _raises("X_kv has m = 0", _mha, Q, np.ones((0, 2)), p)
    _raises("W_Q and W_K have 0 columns", ac.multi_head_attention, Q, Q, np.ones((2, 0)),
            np.ones((2, 0)), p.W_V, p.W_O, 1)
    _raises("length 0", ac.softmax, np.ones((3, 0)))
    _raises("d_model = 0", ac.layer_norm, np.ones((3, 0)), np.ones(0), np.ones(0))


def test_empty_queries_values_or_batch_give_empty_results():
    rng = np.random.default_rng(14)
    K, V = rng.normal(size=(5, 2)), rng.normal(size=(5, 4))
    out, w = _quiet(ac.scaled_dot_product_attention, np.ones((0, 2)), K, V)
    assert out.shape == (0, 4) and w.shape == (0, 5)
    assert _quiet(ac.tiled_attention, np.ones((0, 2)), K, V, 2).shape == (0, 4)
    out, w = _quiet(ac.scaled_dot_product_attention, np.ones((3, 2)), K, np.ones((5, 0)))
    assert out.shape == (3, 0) and np.allclose(w.sum(axis=-1), 1.0)
    out, w = _quiet(ac.scaled_dot_product_attention, np.ones((0, 3, 2)), np.ones((0, 5, 2)),
                    np.ones((0, 5, 4)), np.zeros((3, 5)))
    assert out.shape == (0, 3, 4) and w.shape == (0, 3, 5)
    assert _quiet(ac.softmax, np.ones((0, 3))).shape == (0, 3)


def test_a_mask_may_not_enlarge_the_batch():
    rng = np.random.default_rng(15)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    for fn in (ac.scaled_dot_product_attention, ac.attention_steps,
               lambda Q, K, V, M: ac.tiled_attention(Q, K, V, 2, M)):
        msg = _raises("would enlarge", fn, Q, K, V, np.zeros((2, 3, 5)))
        assert "(2, 3, 5)" in msg and "(3, 5)" in msg
        _raises("would enlarge", fn, Q, K, V, np.zeros((1, 3, 5)))  # no new axes either
    _raises("would enlarge", ac.attention_weights, Q, K, np.zeros((2, 3, 5)))
    _raises("would enlarge", ac.scaled_dot_product_attention, Q, K, V,
            ac.padding_mask([5], 5))  # (1, 1, m): for one sequence use [0]
    out, _ = _quiet(ac.scaled_dot_product_attention, Q, K, V, ac.padding_mask([5], 5)[0])
    assert out.shape == (3, 2)


def test_a_mask_may_fill_in_batch_axes_that_only_V_has():
    rng = np.random.default_rng(16)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(2, 5, 2))
    mask = ac.padding_mask([5, 2], 5)  # (2, 1, 5): one padding per batch entry of V
    out, w = _quiet(ac.scaled_dot_product_attention, Q, K, V, mask)
    assert out.shape == (2, 3, 2) and w.shape == (2, 3, 5)
    for b in range(2):
        ref, _ = ac.scaled_dot_product_attention(Q, K, V[b], mask[b])
        assert np.allclose(out[b], ref)
    assert np.allclose(ac.tiled_attention(Q, K, V, 2, mask), out, atol=1e-12)


def test_multi_head_attention_refuses_a_per_head_mask():
    rng = np.random.default_rng(17)
    X = rng.normal(size=(4, 6))
    p = ac.init_attention_params(6, 2, rng)
    per_head = np.stack([ac.causal_mask(4), np.zeros((4, 4))])  # (h, n, n)
    msg = _raises("mask of shape \\(2, 4, 4\\) would enlarge", _mha, X, X, p, per_head)
    assert "per-head mask (..., h, n, m) is not supported" in msg
    _raises("per-head", _mha, X[None], X[None], p, per_head[None])  # (1, h, n, n) for (1, n, d)
    Y = rng.normal(size=(4, 6))
    _raises("cross_mask of shape \\(2, 4, 4\\) would enlarge", ac.decoder_layer, Y, X,
            ac.init_decoder_layer(6, 2, 8, rng), cross_mask=per_head)


def test_multi_head_attention_reads_a_3d_mask_as_a_batch_when_the_input_is_batched():
    rng = np.random.default_rng(18)
    X = rng.normal(size=(2, 4, 6))
    p = ac.init_attention_params(6, 2, rng)
    mask = ac.causal_mask(4) + ac.padding_mask([4, 3], 4)  # (batch, n, n)
    out, w = _quiet(_mha, X, X, p, mask)
    assert out.shape == (2, 4, 6) and w.shape == (2, 2, 4, 4)
    for b in range(2):  # batch entry b, both heads, with its own mask
        o_b, w_b = _mha(X[b], X[b], p, mask[b])
        assert np.allclose(out[b], o_b) and np.allclose(w[b], w_b)
    assert np.all(w[1, :, :, 3] == 0.0)


@pytest.mark.parametrize("call, match", [
    (lambda: ac.split_heads(np.ones((4, 6)), 0), "num_heads must be a positive integer, got 0"),
    (lambda: ac.split_heads(np.ones((4, 6)), -2), "num_heads must be a positive integer, got -2"),
    (lambda: ac.split_heads(np.ones((4, 6)), 2.0), "num_heads must be a positive integer, got 2.0"),
    (lambda: ac.split_heads(np.ones(6), 2), "X must have at least 2 dimensions, got shape \\(6,\\)"),
    (lambda: ac.split_heads(np.ones((4, 6)), 4), "last dimension 6 .* not divisible by num_heads = 4"),
    (lambda: ac.merge_heads(np.ones((2, 3))), "X must have at least 3 dimensions, got shape \\(2, 3\\)"),
    (lambda: ac.attention_cost(4, d_k=-1), "d_k must be a positive integer, got -1"),
    (lambda: ac.attention_cost(4, d_v=1.5), "d_v must be a positive integer, got 1.5"),
    (lambda: ac.attention_cost(4, h=0), "h must be a positive integer, got 0"),
    (lambda: ac.attention_cost(4, bytes_per_number=0), "bytes_per_number must be a positive integer"),
    (lambda: ac.attention_cost(4, m=2.5), "m must be a positive integer, got 2.5"),
    (lambda: ac.softmax(np.ones((2, 3)), axis=2), "axis must be an integer in -2..1 .* got 2"),
    (lambda: ac.softmax(np.ones((2, 3)), axis=0.5), "axis must be an integer"),
    (lambda: ac.positional_shift_matrix("1", 4), "k must be a finite real number, got '1'"),
    (lambda: ac.positional_shift_matrix(np.nan, 4), "k must be a finite real number, got nan"),
    (lambda: ac.init_attention_params(4, 2, 0), "rng must be a numpy Generator .* got int"),
    (lambda: ac.init_ffn_params(4, 8, None), "rng must be a numpy Generator"),
    (lambda: ac.layer_norm(np.ones((2, 2)), np.ones(2), np.zeros(2), eps="1e-5"), "eps must be"),
    (lambda: ac.layer_norm(np.ones((2, 2)), np.ones(2), np.zeros(2), eps=np.inf), "eps must be"),
    (lambda: ac.relu(["a"]), "x must be an array of numbers"),
])
def test_public_helpers_check_their_arguments(call, match):
    _raises(match, call)


def test_layers_check_their_parameter_bundles():
    rng = np.random.default_rng(19)
    X = rng.normal(size=(3, 4))
    enc, dec = ac.init_encoder_layer(4, 2, 8, rng), ac.init_decoder_layer(4, 2, 8, rng)
    # a decoder bundle has self_attn, norm1, ffn and norm2 too: it must not quietly run
    _raises("params must be EncoderLayerParams .* got DecoderLayerParams", ac.encoder_layer, X, dec)
    _raises("params must be DecoderLayerParams .* got EncoderLayerParams", ac.decoder_layer, X, X, enc)
    _raises("layers must be a list of EncoderLayerParams, got EncoderLayerParams", ac.encode, X, enc)
    _raises("layers must be a list of DecoderLayerParams, got \\[DecoderLayerParams, Encoder",
            ac.decode, X, X, [dec, enc])
    _raises("Y and memory must have the same d_model", ac.decoder_layer, X, np.ones((5, 6)), dec)


@pytest.mark.parametrize("bad, match", [
    ([["1", "2"]], "Q must be an array of numbers, got dtype <U1"),
    (np.array([["1", "2"]], dtype=object), "Q must be an array of numbers, got dtype object"),
    ([[1.0, None]], "Q must be an array of numbers"),
    ([[1.0, 2.0], [3.0]], "Q must be an array of numbers, got list"),
    (np.ones((1, 2)) + 1j, "Q must hold real numbers, got complex values"),
])
def test_things_that_are_not_real_numbers_are_refused(bad, match):
    _raises(match, ac.scaled_dot_product_attention, bad, np.ones((3, 2)), np.ones((3, 2)))


def test_not_numbers_are_refused_everywhere_not_just_in_attention():
    _raises("x must hold real numbers", ac.softmax, [1 + 1j, 0])
    _raises("x must be an array of numbers", ac.softmax, ["1", "2"])
    _raises("mask must be an array of numbers", ac.attention_weights, np.ones((2, 2)),
            np.ones((2, 2)), [["0", "0"], ["0", "0"]])
    _raises("X must hold real numbers", ac.layer_norm, np.ones((1, 2)) * 1j, np.ones(2), np.zeros(2))
    _raises("b_1 must be an array of numbers", ac.feed_forward, np.ones((1, 2)), np.ones((2, 3)),
            ["0", "0", "0"], np.ones((3, 2)), np.zeros(2))


def test_exact_numbers_and_integers_are_numbers():
    Q = [[Fraction(1), Fraction(0)], [Fraction(0), Fraction(1)], [Fraction(1), Fraction(1)]]
    out, _ = _quiet(ac.scaled_dot_product_attention, Q, Z @ W_K, Z @ W_V)
    ref, _ = ac.scaled_dot_product_attention(Z, Z @ W_K, Z @ W_V)
    assert np.array_equal(out, ref)
    assert np.array_equal(_quiet(ac.softmax, [0, 0]), [0.5, 0.5])


def test_layer_norm_of_huge_rows_is_right():
    rng = np.random.default_rng(20)
    X = rng.normal(size=(4, 6))
    gamma, beta = rng.normal(size=6), rng.normal(size=6)
    for scale in (1.8e154, 1e200, 1e307):
        # LN(c x; eps) = LN(x; eps / c^2), and eps / c^2 is 0 in float64 for these c
        ref = ac.layer_norm(X, gamma, beta, eps=1e-300)
        assert np.allclose(_quiet(ac.layer_norm, X * scale, gamma, beta), ref, rtol=1e-12, atol=1e-12)
    assert np.allclose(_quiet(ac.layer_norm, [[1.8e154, -1.8e154]], np.ones(2), np.zeros(2)),
                       [[1.0, -1.0]])
    assert np.allclose(_quiet(ac.layer_norm, [[1.7e308, -1.7e308, 0.0]], np.ones(3), np.zeros(3)),
                       [[np.sqrt(1.5), -np.sqrt(1.5), 0.0]])
    # a constant huge row has no spread: (x - mean) = 0, the output is beta; a zero row too
    mixed = np.array([[1e300, 1e300, 1e300], [0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    got = _quiet(ac.layer_norm, mixed, np.ones(3), np.arange(3.0))
    assert np.array_equal(got[:2], [[0.0, 1.0, 2.0]] * 2)
    assert np.allclose(got[2], ac.layer_norm(mixed[2:], np.ones(3), np.arange(3.0))[0])


def test_layer_norm_says_when_the_output_itself_overflows():
    _raises("^gamma \\* \\(X - mean\\).*overflowed", ac.layer_norm, [[1.0, -1.0]],
            np.full(2, 1e308), np.full(2, 1e308))


def test_softmax_over_axis_0_talks_about_axis_0_not_query_rows():
    x = np.array([[-np.inf, 0.0], [-np.inf, 1.0]])  # column 0 is -inf everywhere
    msg = _raises("-inf everywhere along axis 0 at index \\(0,\\) of the other axes", ac.softmax,
                  x, axis=0)
    assert "query" not in msg and "key" not in msg
    assert np.allclose(ac.softmax(x, axis=-1), [[0.0, 1.0], [0.0, 1.0]])


def test_the_fully_masked_row_message_of_notebook_04_is_unchanged():
    # notebook 04 stores this error; regenerate the notebook if the text changes
    Q = np.random.default_rng(0).normal(size=(4, 3))
    left_pad = np.array([-np.inf, -np.inf, 0.0, 0.0])
    msg = _raises("blocks", ac.scaled_dot_product_attention, Q, Q, Q, ac.causal_mask(4) + left_pad)
    assert msg == ("the mask blocks every key for query rows (0,), (1,) (index over (..., n) of "
                   "scores with shape (4, 4)); softmax of a row that is -inf everywhere is "
                   "undefined (0/0)")


def test_grouped_heads_windows_and_cache_masks_check_their_arguments():
    Q, K = np.ones((4, 3, 2)), np.ones((3, 5, 2))
    _raises("not a multiple of h_kv = 3", ac.grouped_query_attention, Q, K, K)
    _raises("same number of heads h_kv", ac.grouped_query_attention, Q, np.ones((2, 5, 2)), K)
    _raises("Q must have at least 3 dimensions", ac.grouped_query_attention, np.ones((3, 2)), K, K)
    _raises("m = 2 keys is fewer than n = 3 queries", ac.causal_mask, 3, 2)
    _raises("m must be a positive integer", ac.causal_mask, 3, 0)
    _raises("window must be a positive integer, got 0", ac.sliding_window_mask, 4, 0)
    _raises("m = 3 keys is fewer than n = 4", ac.sliding_window_mask, 4, 2, 3)
    X, W = np.ones((3, 8)), np.ones((8, 8))
    _raises("num_heads = 4 is not a multiple of num_kv_heads = 3", ac.multi_head_attention,
            X, X, W, W, W, W, 4, num_kv_heads=3)
    _raises("W_K must have shape \\(d_model, h_kv\\*d_k\\) = \\(8, 4\\)", ac.multi_head_attention,
            X, X, W, W, np.ones((8, 4)), W, 4, num_kv_heads=2)
    _raises("W_O must have shape", ac.multi_head_attention, X, X, W, np.ones((8, 4)),
            np.ones((8, 4)), np.ones((4, 8)), 4, num_kv_heads=2)


def test_banded_tiled_attention_names_a_row_its_mask_and_window_block():
    """tiled_attention(window=) (notebook 14): query 3 sees keys 2, 3 only, and the mask hides
    both; a mask that hides keys outside the window only blocks nothing."""
    Q = np.ones((4, 2))
    mask = np.zeros((4, 4))
    mask[3, 2:] = -np.inf
    _raises("the mask, within the window, blocks every key for query row \\(3,\\)", ac.tiled_attention,
            Q, Q, Q, 2, mask, window=2)
    mask = np.zeros((4, 4))
    mask[3, :2] = -np.inf
    assert np.allclose(ac.tiled_attention(Q, Q, Q, 2, mask, window=2), 1.0)
    _raises("window must be a positive integer", ac.tiled_attention, Q, Q, Q, 2, window=0)
