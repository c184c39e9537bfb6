"""attention_learning: the backward passes against centred finite differences.

Every gradient is checked the same way: pick a random "upstream gradient" R, define the
scalar L = sum(R * forward(inputs)), and compare the backward function's answer for dL/dx
with (L(x + h e_i) - L(x - h e_i)) / 2h for every entry i of every input, in float64.
Masks, batch axes and broadcasting are included; so are the whole language model of
notebooks 10 and 11, Adam, and the errors on bad input.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_core as ac
import attention_learning as al

H = 1e-6  # finite-difference step; the gradients below are O(1), so central differences agree to ~1e-9


def numeric_grad(f, x):
    """Centred finite differences of the scalar f() with respect to the array x (changed in place)."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + H
        up = f()
        x[i] = old - H
        down = f()
        x[i] = old
        g[i] = (up - down) / (2 * H)
    return g


def assert_close(analytic, numeric, tol=1e-6):
    assert analytic.shape == numeric.shape
    scale = max(1.0, np.abs(numeric).max())
    assert np.abs(analytic - numeric).max() <= tol * scale, np.abs(analytic - numeric).max()


# --- softmax ---------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_backward_matches_finite_differences(axis):
    rng = np.random.default_rng(0)
    x, R = rng.normal(size=(3, 4, 5)), rng.normal(size=(3, 4, 5))
    p = ac.softmax(x, axis=axis)
    dx = al.softmax_backward(p, R, axis=axis)
    assert_close(dx, numeric_grad(lambda: np.sum(R * ac.softmax(x, axis=axis)), x))
    assert np.allclose(dx.sum(axis=axis), 0.0)  # p sums to 1: moving every x_j equally changes nothing


def test_softmax_backward_is_the_jacobian_of_notebook_03():
    rng = np.random.default_rng(1)
    p, dp = ac.softmax(rng.normal(size=6)), rng.normal(size=6)
    J = np.diag(p) - np.outer(p, p)  # (m, m), symmetric
    assert np.allclose(al.softmax_backward(p, dp), dp @ J)


def test_softmax_backward_with_blocked_entries_gives_them_zero():
    x = np.array([[0.3, -np.inf, 1.2, -np.inf]])
    p = ac.softmax(x)
    dx = al.softmax_backward(p, np.array([[1.0, 5.0, -2.0, 3.0]]))
    assert dx[0, 1] == 0.0 and dx[0, 3] == 0.0


# --- attention ---------------------------------------------------------------------------

def _attention_case(seed, batch=(), n=3, m=4, d_k=2, d_v=3):
    rng = np.random.default_rng(seed)
    Q, K = rng.normal(size=(*batch, n, d_k)), rng.normal(size=(*batch, m, d_k))
    V, R = rng.normal(size=(*batch, m, d_v)), rng.normal(size=(*batch, n, d_v))
    return Q, K, V, R


def _check_attention_grads(Q, K, V, R, mask=None):
    def L():
        return np.sum(R * ac.scaled_dot_product_attention(Q, K, V, mask)[0])
    dQ, dK, dV = al.attention_backward(Q, K, V, R, mask)
    for analytic, x in ((dQ, Q), (dK, K), (dV, V)):
        assert_close(analytic, numeric_grad(L, x))


def test_attention_backward_no_mask():
    _check_attention_grads(*_attention_case(0))


def test_attention_backward_causal_mask_and_batch():
    Q, K, V, R = _attention_case(1, batch=(2,), n=4, m=4)
    _check_attention_grads(Q, K, V, R, ac.causal_mask(4))


def test_attention_backward_padding_mask_two_batch_axes():
    Q, K, V, R = _attention_case(2, batch=(2, 3), n=3, m=5)
    mask = ac.padding_mask([5, 2, 3], m=5)  # (3, 1, m) broadcasts over the first batch axis
    _check_attention_grads(Q, K, V, R, mask)
    dQ, dK, dV = al.attention_backward(Q, K, V, R, mask)
    assert np.all(dK[:, 1, 2:] == 0) and np.all(dV[:, 1, 2:] == 0)  # padded keys learn nothing


def test_attention_backward_broadcast_inputs_sum_back_to_their_shape():
    rng = np.random.default_rng(3)
    Q = rng.normal(size=(2, 3, 2))  # a batch of queries against one shared K and V
    K, V = rng.normal(size=(4, 2)), rng.normal(size=(1, 4, 3))
    R = rng.normal(size=(2, 3, 3))
    dQ, dK, dV = al.attention_backward(Q, K, V, R)
    assert dQ.shape == Q.shape and dK.shape == K.shape and dV.shape == V.shape
    _check_attention_grads(Q, K, V, R)


def test_attention_backward_dscores_is_the_gradient_at_the_softmax_input():
    Q, K, V, R = _attention_case(4, batch=(2,))
    mask = np.where(np.arange(4)[None, :] > np.arange(3)[:, None] + 1, -np.inf, 0.0)  # (n, m)
    S = ac.attention_steps(Q, K, V, mask).masked.copy()  # (..., n, m) softmax input
    *_, dS = al.attention_backward(Q, K, V, R, mask, return_dscores=True)
    finite = np.isfinite(S)
    S = np.where(finite, S, -1e300)  # blocked: so negative that exp() is 0 even after +-H
    numeric = numeric_grad(lambda: np.sum(R * (ac.softmax(S) @ V)), S)
    assert_close(np.where(finite, dS, 0.0), np.where(finite, numeric, 0.0))
    assert np.all(dS[~finite] == 0.0)


def test_attention_backward_with_scale_chain_rule():
    # dQ = dS K / sqrt(d_k): the factor appears in the backward pass as in the forward
    Q, K, V, R = _attention_case(5, d_k=16)
    dQ, dK, _, dS = al.attention_backward(Q, K, V, R, return_dscores=True)
    assert np.allclose(dQ, dS @ K / 4.0) and np.allclose(dK, dS.T @ Q / 4.0)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(1, 4), st.integers(1, 3),
       st.integers(1, 3), st.sampled_from([0.3, 1.0, 3.0]))
def test_attention_backward_property(seed, n, m, d_k, d_v, size):
    Q, K, V, R = _attention_case(seed, n=n, m=m, d_k=d_k, d_v=d_v)
    _check_attention_grads(size * Q, K, V, R)


# --- multi-head attention ------------------------------------------------------------------

def _mha_case(seed, batch=(), n=3, m=4, d_model=6, h=2, d_k=2, d_v=3):
    rng = np.random.default_rng(seed)
    X_q, X_kv = rng.normal(size=(*batch, n, d_model)), rng.normal(size=(*batch, m, d_model))
    W_Q, W_K = rng.normal(size=(d_model, h * d_k)), rng.normal(size=(d_model, h * d_k))
    W_V, W_O = rng.normal(size=(d_model, h * d_v)), rng.normal(size=(h * d_v, d_model))
    R = rng.normal(size=(*batch, n, d_model))
    return X_q, X_kv, W_Q, W_K, W_V, W_O, h, R


@pytest.mark.parametrize("masked", [False, True])
def test_multi_head_attention_backward_cross_attention(masked):
    X_q, X_kv, W_Q, W_K, W_V, W_O, h, R = _mha_case(6, batch=(2,))
    mask = ac.padding_mask([4, 3], m=4) if masked else None  # (batch, 1, m)

    def L():
        return np.sum(R * ac.multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, h, mask)[0])
    g = al.multi_head_attention_backward(X_q, X_kv, W_Q, W_K, W_V, W_O, h, R, mask)
    for analytic, x in ((g.dX_q, X_q), (g.dX_kv, X_kv), (g.dW_Q, W_Q), (g.dW_K, W_K),
                        (g.dW_V, W_V), (g.dW_O, W_O)):
        assert_close(analytic, numeric_grad(L, x))
    assert g.dscores.shape == (2, h, 3, 4)


def test_multi_head_attention_backward_self_attention_adds_both_paths():
    X, _, W_Q, W_K, W_V, W_O, h, R = _mha_case(7, n=4, m=4)
    mask = ac.causal_mask(4)

    def L():
        return np.sum(R * ac.multi_head_attention(X, X, W_Q, W_K, W_V, W_O, h, mask)[0])
    g = al.multi_head_attention_backward(X, X, W_Q, W_K, W_V, W_O, h, R, mask)
    assert_close(g.dX_q + g.dX_kv, numeric_grad(L, X))


def test_multi_head_dscores_equal_per_head_attention_backward():
    X_q, X_kv, W_Q, W_K, W_V, W_O, h, R = _mha_case(8)
    g = al.multi_head_attention_backward(X_q, X_kv, W_Q, W_K, W_V, W_O, h, R)
    Q, K, V = (ac.split_heads(X @ W, h) for X, W in ((X_q, W_Q), (X_kv, W_K), (X_kv, W_V)))
    dC = ac.split_heads(R @ W_O.T, h)  # (h, n, d_v)
    *_, dS = al.attention_backward(Q, K, V, dC, return_dscores=True)
    assert np.allclose(g.dscores, dS)


# --- layer norm, FFN, embedding, loss -------------------------------------------------------------

def test_layer_norm_backward():
    rng = np.random.default_rng(9)
    X, gamma, beta = rng.normal(size=(2, 3, 5)), rng.normal(size=5), rng.normal(size=5)
    R = rng.normal(size=(2, 3, 5))

    def L():
        return np.sum(R * ac.layer_norm(X, gamma, beta))
    dX, dgamma, dbeta = al.layer_norm_backward(X, gamma, R)
    for analytic, x in ((dX, X), (dgamma, gamma), (dbeta, beta)):
        assert_close(analytic, numeric_grad(L, x))
    assert np.allclose(dX.sum(axis=-1), 0.0)  # shifting a whole row changes nothing after LN


def test_feed_forward_backward():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(2, 3, 4))
    W_1, b_1, W_2, b_2 = rng.normal(size=(4, 6)), rng.normal(size=6), rng.normal(size=(6, 4)), rng.normal(size=4)
    R = rng.normal(size=(2, 3, 4))

    def L():
        return np.sum(R * ac.feed_forward(X, W_1, b_1, W_2, b_2))
    grads = al.feed_forward_backward(X, W_1, b_1, W_2, b_2, R)
    for analytic, x in zip(grads, (X, W_1, b_1, W_2, b_2), strict=True):
        assert_close(analytic, numeric_grad(L, x))


def test_embedding_and_its_backward_add_up_repeated_tokens():
    rng = np.random.default_rng(11)
    E, tokens = rng.normal(size=(5, 3)), np.array([[0, 2, 2], [4, 0, 2]])
    R = rng.normal(size=(2, 3, 3))
    assert np.array_equal(al.embedding(tokens, E), E[tokens])
    dE = al.embedding_backward(tokens, R, vocab_size=5)
    assert_close(dE, numeric_grad(lambda: np.sum(R * al.embedding(tokens, E)), E))
    assert np.allclose(dE[2], R[0, 1] + R[0, 2] + R[1, 2]) and np.all(dE[[1, 3]] == 0)


def test_softmax_cross_entropy_value_and_gradient():
    rng = np.random.default_rng(12)
    logits = rng.normal(size=(2, 4, 5)) * 3
    targets = np.array([[1, 4, -100, 0], [-100, -100, 2, 3]])
    loss, dlogits = al.softmax_cross_entropy(logits, targets)
    counted = [(0, 0), (0, 1), (0, 3), (1, 2), (1, 3)]
    by_hand = -np.mean([np.log(ac.softmax(logits[i])[targets[i]]) for i in counted])
    assert np.isclose(loss, by_hand)
    assert_close(dlogits, numeric_grad(lambda: al.softmax_cross_entropy(logits, targets)[0], logits))
    assert np.all(dlogits[0, 2] == 0) and np.allclose(dlogits.sum(axis=-1), 0.0)
    with np.errstate(over="raise"):  # stable for huge logits
        big, _ = al.softmax_cross_entropy(np.array([[1e4, 0.0]]), np.array([1]))
    assert np.isclose(big, 1e4)


def test_adam_first_step_moves_every_entry_by_lr_and_changes_nothing_in_place():
    params = {"w": np.array([1.0, -2.0, 3.0])}
    grads = {"w": np.array([0.5, -1e-3, 20.0])}
    state = al.adam_init(params)
    new, state2 = al.adam_step(params, grads, state, lr=0.1)
    # step 1: mhat = g and vhat = g^2, so every entry moves by lr * g / (|g| + eps) ~ lr * sign(g)
    assert np.allclose(new["w"], [0.9, -1.9, 2.9], atol=1e-6)
    assert np.array_equal(params["w"], [1.0, -2.0, 3.0]) and state.step == 0 and state2.step == 1
    assert np.all(state.m["w"] == 0)


def test_adam_minimises_a_quadratic():
    target = np.array([3.0, -1.0])
    params, state = {"w": np.zeros(2)}, al.adam_init({"w": np.zeros(2)})
    for _ in range(300):
        params, state = al.adam_step(params, {"w": 2 * (params["w"] - target)}, state, lr=0.1)
    assert np.allclose(params["w"], target, atol=1e-2)


# --- the whole language model ---------------------------------------------------------------

@pytest.fixture(params=[True, False], ids=["scaled", "unscaled"])
def small_lm(request):
    config = al.LMConfig(vocab_size=5, n_ctx=6, d_model=8, num_heads=2, d_ff=12, d_k=3,
                         scale_scores=request.param)
    rng = np.random.default_rng(13)
    params = {k: v + 0.1 * rng.normal(size=v.shape) for k, v in al.init_lm(config, rng).items()}
    tokens = rng.integers(0, 5, size=(3, 5))
    targets = rng.integers(0, 5, size=(3, 5))
    targets[:, :2] = -100
    return config, params, tokens, targets


def test_lm_forward_is_an_encoder_layer_with_a_causal_mask(small_lm):
    config, p, tokens, _ = small_lm
    steps = al.lm_forward(p, tokens, config)
    c = np.sqrt(config.head_width) if not config.scale_scores else 1.0
    layer = ac.EncoderLayerParams(
        ac.AttentionParams(p["W_Q"] * c, p["W_K"], p["W_V"], p["W_O"], config.num_heads),
        ac.LayerNormParams(p["gamma_1"], p["beta_1"]), ac.FFNParams(p["W_1"], p["b_1"], p["W_2"], p["b_2"]),
        ac.LayerNormParams(p["gamma_2"], p["beta_2"]))
    X = p["E"][tokens] + p["P"][:5]
    assert np.allclose(steps.logits, ac.encoder_layer(X, layer, ac.causal_mask(5)) @ p["W_U"])
    assert steps.weights.shape == (3, 2, 5, 5) and np.all(np.triu(steps.weights, 1) == 0)


def test_lm_without_scaling_uses_raw_scores(small_lm):
    config, p, tokens, _ = small_lm
    steps = al.lm_forward(p, tokens, config)
    X = steps.X
    Q, K = ac.split_heads(X @ p["W_Q"], 2), ac.split_heads(X @ p["W_K"], 2)
    S = Q @ np.swapaxes(K, -1, -2)  # (batch, h, n, n), raw
    if config.scale_scores:
        S = S / np.sqrt(config.head_width)
    assert np.allclose(steps.weights, ac.softmax(S + ac.causal_mask(5)))


def test_lm_is_causal(small_lm):
    config, p, tokens, _ = small_lm
    changed = tokens.copy()
    changed[:, 3] = (changed[:, 3] + 1) % 5
    a, b = al.lm_forward(p, tokens, config).logits, al.lm_forward(p, changed, config).logits
    assert np.allclose(a[:, :3], b[:, :3]) and not np.allclose(a[:, 3], b[:, 3])


def test_lm_backward_matches_finite_differences_for_every_parameter(small_lm):
    config, p, tokens, targets = small_lm
    steps = al.lm_forward(p, tokens, config)
    _, dlogits = al.softmax_cross_entropy(steps.logits, targets)
    grads, dscores = al.lm_backward(p, steps, dlogits, config)
    assert set(grads) == set(p) and dscores.shape == (3, 2, 5, 5)

    def L():
        return al.softmax_cross_entropy(al.lm_forward(p, tokens, config).logits, targets)[0]
    for name in p:
        assert_close(grads[name], numeric_grad(L, p[name]))
    assert np.all(grads["P"][5:] == 0)  # the unused last row of P


def test_lm_with_a_window_mask_matches_the_encoder_layer_and_its_gradients(small_lm):
    """lm_forward(mask=) (notebook 14): the layer with that mask, and lm_backward uses the same."""
    config, p, tokens, targets = small_lm
    M = ac.sliding_window_mask(5, 2)
    steps = al.lm_forward(p, tokens, config, mask=M)
    X = p["E"][tokens] + p["P"][:5]
    Q, K = ac.split_heads(X @ p["W_Q"], 2), ac.split_heads(X @ p["W_K"], 2)
    S = Q @ np.swapaxes(K, -1, -2) / (np.sqrt(config.head_width) if config.scale_scores else 1.0)
    assert np.allclose(steps.weights, ac.softmax(S + M)) and np.array_equal(steps.mask, M)
    assert np.all(steps.weights[..., np.isinf(M)] == 0)
    assert al.lm_forward(p, tokens, config, mask=ac.causal_mask(5)).logits == pytest.approx(
        al.lm_forward(p, tokens, config).logits)
    _, dlogits = al.softmax_cross_entropy(steps.logits, targets)
    grads, dscores = al.lm_backward(p, steps, dlogits, config)
    assert np.all(dscores[..., np.isinf(M)] == 0)

    def L():
        return al.softmax_cross_entropy(al.lm_forward(p, tokens, config, mask=M).logits, targets)[0]
    for name in ("W_Q", "W_K", "E", "P"):
        assert_close(grads[name], numeric_grad(L, p[name]))


def test_lm_refuses_a_mask_that_is_not_causal(small_lm):
    config, p, tokens, _ = small_lm
    both_sides = np.where(np.abs(np.arange(5)[:, None] - np.arange(5)) < 2, 0.0, -np.inf)
    with pytest.raises(ValueError, match="mask lets query 0 see the later key 1"):
        al.lm_forward(p, tokens, config, mask=both_sides)
    with pytest.raises(ValueError, match="mask of shape"):
        al.lm_forward(p, tokens, config, mask=ac.causal_mask(4))
    with pytest.raises(ValueError, match="boolean"):
        al.lm_forward(p, tokens, config, mask=np.tril(np.ones((5, 5), dtype=bool)))


def test_lm_dscores_is_zero_above_the_diagonal(small_lm):
    config, p, tokens, targets = small_lm
    steps = al.lm_forward(p, tokens, config)
    _, dscores = al.lm_backward(p, steps, al.softmax_cross_entropy(steps.logits, targets)[1], config)
    assert np.all(np.triu(dscores, 1) == 0)


def test_training_the_lm_lowers_the_loss():
    config = al.LMConfig(vocab_size=4, n_ctx=4, d_model=8, d_ff=16)
    params = al.init_lm(config, np.random.default_rng(0))
    state = al.adam_init(params)
    tokens = np.array([[0, 1, 2, 3], [3, 2, 1, 0]])
    targets = np.roll(tokens, -1, axis=1)
    losses = []
    for _ in range(30):
        steps = al.lm_forward(params, tokens, config)
        loss, dlogits = al.softmax_cross_entropy(steps.logits, targets)
        params, state = al.adam_step(params, al.lm_backward(params, steps, dlogits, config)[0], state, 1e-2)
        losses.append(loss)
    assert losses[-1] < 0.5 * losses[0]


# --- bad input ---------------------------------------------------------------------------------

def _raises(match, f, *args, **kwargs):
    with pytest.raises(ValueError, match=match) as e:
        f(*args, **kwargs)
    return str(e.value)


def test_bad_input_to_the_backward_passes_is_named():
    p = ac.softmax(np.ones((2, 3)))
    _raises("p and dp must have the same shape", al.softmax_backward, p, np.ones((3, 2)))
    msg = _raises("p must be the softmax output", al.softmax_backward, np.ones((2, 3)), np.ones((2, 3)))
    assert "sums in [3, 3]" in msg  # x passed instead of softmax(x)
    _raises("dp contains nan", al.softmax_backward, p, np.full((2, 3), np.nan))
    Q = np.ones((3, 2))
    msg = _raises("dO must have the shape of the forward output", al.attention_backward, Q, Q,
                  np.ones((3, 4)), np.ones((3, 2)))
    assert "(3, 4)" in msg
    _raises("Q and K", al.attention_backward, np.ones((3, 2)), np.ones((3, 5)), Q, Q)
    _raises("query row", al.attention_backward, Q, Q, Q, Q, np.full((3, 3), -np.inf))
    X, W = np.ones((3, 4)), np.ones((4, 4))
    _raises("W_O must have shape", al.multi_head_attention_backward, X, X, W, W, W, np.ones((2, 4)), 2, X)
    _raises("num_heads", al.multi_head_attention_backward, X, X, W, W, W, W, 0, X)
    _raises("dOut", al.multi_head_attention_backward, X, X, W, W, W, W, 2, np.ones((3, 5)))
    _raises("gamma must have shape", al.layer_norm_backward, X, np.ones(3), X)
    _raises("dY", al.layer_norm_backward, X, np.ones(4), np.ones((4, 4)))
    _raises("W_1", al.feed_forward_backward, X, np.ones((3, 8)), np.ones(8), np.ones((8, 4)), np.ones(4), X)
    _raises("dY", al.feed_forward_backward, X, np.ones((4, 8)), np.ones(8), np.ones((8, 4)), np.ones(4), X[:2])


def test_bad_tokens_targets_and_optimiser_arguments_are_named():
    E = np.ones((5, 3))
    _raises("token ids must be in 0..vocab_size-1 = 0..4, got ids from 0 to 5", al.embedding, [0, 5], E)
    _raises("tokens must be integers", al.embedding, [0.5, 1.0], E)
    _raises("E must be a", al.embedding, [0], np.ones((2, 3, 4)))
    _raises("dX must have shape", al.embedding_backward, [0, 1], np.ones((3, 3)), 5)
    _raises("vocab_size", al.embedding_backward, [0], np.ones((1, 3)), 0)
    logits = np.zeros((2, 3))
    _raises("targets must be integers of shape", al.softmax_cross_entropy, logits, [0, 1, 2])
    _raises("targets must be in 0..2", al.softmax_cross_entropy, logits, [0, 3])
    _raises("every target is ignore_index", al.softmax_cross_entropy, logits, [-100, -100])
    params = {"w": np.zeros(2)}
    _raises("grads must have the keys of params", al.adam_step, params, {"v": np.zeros(2)},
            al.adam_init(params))
    _raises("lr must be positive", al.adam_step, params, params, al.adam_init(params), lr=0.0)
    _raises("grads\\['w'\\] must have the shape of params\\['w'\\], \\(2,\\), got \\(1,\\)",
            al.adam_step, params, {"w": np.zeros(1)}, al.adam_init(params))
    _raises("grads\\['w'\\] contains nan", al.adam_step, params, {"w": np.array([0.0, np.nan])},
            al.adam_init(params))
    _raises("params must be a dict", al.adam_step, [np.zeros(2)], {"w": np.zeros(2)}, al.adam_init(params))
    _raises("state must be the AdamState", al.adam_step, params, params, al.adam_init({"v": np.zeros(2)}))


def test_bad_language_model_arguments_are_named():
    _raises("d_model = 30 is not divisible by num_heads = 4", al.LMConfig, 5, 8, d_model=30, num_heads=4)
    _raises("n_ctx must be a positive integer", al.LMConfig, 5, 0)
    _raises("scale_scores must be True or False", al.LMConfig, 5, 4, scale_scores="no")
    _raises("rng must be a np.random.Generator", al.init_lm, al.LMConfig(5, 4), 0)
    config = al.LMConfig(vocab_size=5, n_ctx=4, d_model=8, d_ff=8)
    params = al.init_lm(config, np.random.default_rng(0))
    _raises("longer than n_ctx = 4", al.lm_forward, params, np.zeros((1, 5), dtype=int), config)
    _raises("params\\['W_U'\\] must have shape \\(8, 5\\)", al.lm_forward,
            {**params, "W_U": np.ones((8, 6))}, [0, 1], config)
    _raises("params must be a dict with the keys", al.lm_forward, {"E": params["E"]}, [0], config)
    _raises("config must be an LMConfig", al.lm_forward, params, [0], {"vocab_size": 5})
    steps = al.lm_forward(params, [[0, 1, 2]], config)
    _raises("dlogits must have the shape", al.lm_backward, params, steps, np.ones((1, 3, 4)), config)
    _raises("steps must be the LMSteps", al.lm_backward, params, steps.logits, np.ones((1, 3, 5)), config)


def test_the_names_that_moved_here_still_answer_from_attention_core():
    """Notebooks 10 and 11 as handed out before the split call ac.lm_forward and the like."""
    moved = set(al.__all__)
    assert moved == ac._MOVED_TO_LEARNING
    for name in moved:
        assert getattr(ac, name) is getattr(al, name)
    with pytest.raises(AttributeError, match="no attribute 'lm_forwards'"):
        ac.lm_forwards  # noqa: B018 - a misspelling is still an AttributeError


def test_grouped_query_backward_sums_each_key_value_heads_group():
    rng = np.random.default_rng(21)
    d_model, h, h_kv, d_k, d_v, n, m = 6, 4, 2, 2, 3, 3, 5
    X_q, X_kv = rng.normal(size=(2, n, d_model)), rng.normal(size=(2, m, d_model))
    W_Q, W_O = rng.normal(size=(d_model, h * d_k)), rng.normal(size=(h * d_v, d_model))
    W_K, W_V = rng.normal(size=(d_model, h_kv * d_k)), rng.normal(size=(d_model, h_kv * d_v))
    R, mask = rng.normal(size=(2, n, d_model)), ac.padding_mask([5, 2], m)

    def L():
        return np.sum(R * ac.multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, h, mask,
                                                  num_kv_heads=h_kv)[0])
    g = al.multi_head_attention_backward(X_q, X_kv, W_Q, W_K, W_V, W_O, h, R, mask, num_kv_heads=h_kv)
    for analytic, x in ((g.dX_q, X_q), (g.dX_kv, X_kv), (g.dW_Q, W_Q), (g.dW_K, W_K),
                        (g.dW_V, W_V), (g.dW_O, W_O)):
        assert_close(analytic, numeric_grad(L, x))
    assert g.dW_K.shape == (d_model, h_kv * d_k) and g.dscores.shape == (2, h, n, m)


def test_a_grouped_query_language_model_learns_through_the_same_backward():
    config = al.LMConfig(vocab_size=5, n_ctx=6, d_model=8, num_heads=4, num_kv_heads=2, d_ff=12)
    rng = np.random.default_rng(22)
    p = al.init_lm(config, rng)
    assert p["W_K"].shape == (8, 4) and p["W_V"].shape == (8, 4) and p["W_Q"].shape == (8, 8)
    tokens, targets = rng.integers(0, 5, size=(2, 5)), rng.integers(0, 5, size=(2, 5))
    steps = al.lm_forward(p, tokens, config)
    grads, _ = al.lm_backward(p, steps, al.softmax_cross_entropy(steps.logits, targets)[1], config)

    def L():
        return al.softmax_cross_entropy(al.lm_forward(p, tokens, config).logits, targets)[0]
    for name in ("W_Q", "W_K", "W_V", "W_O", "E"):
        assert_close(grads[name], numeric_grad(L, p[name]))
    # the default (num_kv_heads None) draws what it drew before: stored outputs do not move
    a, b = al.LMConfig(5, 6, d_model=8, num_heads=2), al.LMConfig(5, 6, d_model=8, num_heads=2, num_kv_heads=2)
    pa, pb = al.init_lm(a, np.random.default_rng(0)), al.init_lm(b, np.random.default_rng(0))
    assert all(np.array_equal(pa[k], pb[k]) for k in pa)
    _raises("num_heads = 4 is not a multiple of num_kv_heads = 3", al.LMConfig, 5, 4, d_model=8,
            num_heads=4, num_kv_heads=3)
