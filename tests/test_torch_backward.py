"""Cross-check the backward passes of attention_core against PyTorch autograd (float64, CPU).

The finite-difference tests (tests/test_learning.py) check each gradient against the
forward function it belongs to; these check them against an independent implementation.
torch is optional for learners; where it is absent these tests skip with the reason.
CI installs it (pip install torch==2.13.0) and sets REQUIRE_TORCH=1, under which a
missing torch is a failure, not a skip.
"""

import numpy as np
import pytest

import attention_core as ac
from required import torch_or_skip
import attention_learning as al

torch, F = torch_or_skip()


def leaf(x):
    return torch.tensor(np.asarray(x, dtype=np.float64), requires_grad=True)


def grads_of(loss, *tensors):
    loss.backward()
    return [t.grad.numpy() for t in tensors]


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_backward_matches_autograd(axis):
    rng = np.random.default_rng(0)
    x, R = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    tx = leaf(x)
    (ref,) = grads_of((torch.softmax(tx, axis) * torch.from_numpy(R)).sum(), tx)
    assert np.allclose(al.softmax_backward(ac.softmax(x, axis), R, axis), ref, atol=1e-12)


@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding"])
def test_attention_backward_matches_sdpa_autograd(mask_kind):
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))
    R = rng.normal(size=(2, 5, 3))
    mask = {"none": None, "causal": ac.causal_mask(5), "padding": ac.padding_mask([5, 3], 5)}[mask_kind]
    tq, tk, tv = leaf(Q), leaf(K), leaf(V)
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=None if mask is None else torch.from_numpy(mask))
    ref = grads_of((out * torch.from_numpy(R)).sum(), tq, tk, tv)
    for ours, theirs in zip(al.attention_backward(Q, K, V, R, mask), ref, strict=True):
        assert np.allclose(ours, theirs, atol=1e-12)


def test_multi_head_attention_backward_matches_autograd():
    rng = np.random.default_rng(2)
    d_model, h, n, m = 12, 3, 4, 6
    p = ac.init_attention_params(d_model, h, rng)
    X_q, X_kv, R = rng.normal(size=(2, n, d_model)), rng.normal(size=(2, m, d_model)), rng.normal(size=(2, n, d_model))
    mask = ac.padding_mask([6, 4], m)
    mha = torch.nn.MultiheadAttention(d_model, h, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():  # torch keeps (out, in) weights for x @ W^T: ours transposed
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([p.W_Q, p.W_K, p.W_V], axis=1).T))
        mha.out_proj.weight.copy_(torch.from_numpy(p.W_O.T))
    tq, tkv = leaf(X_q), leaf(X_kv)
    out, _ = mha(tq, tkv, tkv, key_padding_mask=torch.from_numpy(np.isinf(mask[:, 0])))
    (out * torch.from_numpy(R)).sum().backward()
    g = al.multi_head_attention_backward(X_q, X_kv, p.W_Q, p.W_K, p.W_V, p.W_O, h, R, mask)
    in_proj = mha.in_proj_weight.grad.numpy().T  # (d_model, 3 d_model): W_Q | W_K | W_V
    assert np.allclose(g.dX_q, tq.grad.numpy(), atol=1e-12)
    assert np.allclose(g.dX_kv, tkv.grad.numpy(), atol=1e-12)
    assert np.allclose(np.concatenate([g.dW_Q, g.dW_K, g.dW_V], axis=1), in_proj, atol=1e-12)
    assert np.allclose(g.dW_O, mha.out_proj.weight.grad.numpy().T, atol=1e-12)


def test_layer_norm_and_feed_forward_backward_match_autograd():
    rng = np.random.default_rng(3)
    X, R = rng.normal(size=(2, 3, 6)), rng.normal(size=(2, 3, 6))
    gamma, beta = rng.normal(size=6), rng.normal(size=6)
    tX, tg, tb = leaf(X), leaf(gamma), leaf(beta)
    ref = grads_of((F.layer_norm(tX, (6,), tg, tb, eps=1e-5) * torch.from_numpy(R)).sum(), tX, tg, tb)
    for ours, theirs in zip(al.layer_norm_backward(X, gamma, R), ref, strict=True):
        assert np.allclose(ours, theirs, atol=1e-12)
    W_1, b_1, W_2, b_2 = rng.normal(size=(6, 10)), rng.normal(size=10), rng.normal(size=(10, 6)), rng.normal(size=6)
    t = [leaf(a) for a in (X, W_1, b_1, W_2, b_2)]
    out = torch.relu(t[0] @ t[1] + t[2]) @ t[3] + t[4]
    ref = grads_of((out * torch.from_numpy(R)).sum(), *t)
    for ours, theirs in zip(al.feed_forward_backward(X, W_1, b_1, W_2, b_2, R), ref, strict=True):
        assert np.allclose(ours, theirs, atol=1e-12)


def test_embedding_and_cross_entropy_match_autograd():
    rng = np.random.default_rng(4)
    E, tokens, R = rng.normal(size=(7, 3)), rng.integers(0, 7, size=(2, 5)), rng.normal(size=(2, 5, 3))
    tE = leaf(E)
    (ref,) = grads_of((F.embedding(torch.from_numpy(tokens), tE) * torch.from_numpy(R)).sum(), tE)
    assert np.allclose(al.embedding(tokens, E), F.embedding(torch.from_numpy(tokens), tE).detach().numpy())
    assert np.allclose(al.embedding_backward(tokens, R, 7), ref, atol=1e-12)
    logits, targets = rng.normal(size=(2, 5, 7)) * 2, rng.integers(0, 7, size=(2, 5))
    targets[0, :2] = -100
    tl = leaf(logits)
    ref_loss = F.cross_entropy(tl.reshape(-1, 7), torch.from_numpy(targets).reshape(-1), ignore_index=-100)
    (ref,) = grads_of(ref_loss, tl)
    loss, dlogits = al.softmax_cross_entropy(logits, targets)
    assert np.isclose(loss, ref_loss.item(), atol=1e-12) and np.allclose(dlogits, ref, atol=1e-12)


def test_adam_matches_torch_optim_adam():
    rng = np.random.default_rng(5)
    w0, target = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    params, state = {"w": w0}, al.adam_init({"w": w0})
    tw = leaf(w0)
    opt = torch.optim.Adam([tw], lr=0.05, betas=(0.9, 0.999), eps=1e-8)
    for _ in range(20):
        grad = 2 * (params["w"] - target) ** 3 + np.sin(params["w"])  # any gradient will do
        params, state = al.adam_step(params, {"w": grad}, state, lr=0.05)
        opt.zero_grad()
        tw.grad = torch.from_numpy(2 * (tw.detach().numpy() - target) ** 3 + np.sin(tw.detach().numpy()))
        opt.step()
    assert np.allclose(params["w"], tw.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize("scaled", [True, False])
def test_language_model_gradients_match_autograd(scaled):
    """The whole one-layer model written again in torch, differentiated by autograd."""
    config = al.LMConfig(vocab_size=6, n_ctx=7, d_model=8, num_heads=2, d_ff=16, d_k=5,
                         scale_scores=scaled)
    rng = np.random.default_rng(6)
    params = al.init_lm(config, rng)
    tokens, targets = rng.integers(0, 6, size=(3, 6)), rng.integers(0, 6, size=(3, 6))
    targets[:, :2] = -100
    steps = al.lm_forward(params, tokens, config)
    loss, dlogits = al.softmax_cross_entropy(steps.logits, targets)
    grads, _ = al.lm_backward(params, steps, dlogits, config)

    t = {k: leaf(v) for k, v in params.items()}
    n, h, d_k = 6, 2, 5
    X = t["E"][torch.from_numpy(tokens)] + t["P"][:n]  # (batch, n, d_model)

    def heads(Z):  # (batch, n, h*d) -> (batch, h, n, d)
        return Z.reshape(3, n, h, -1).transpose(1, 2)
    Q, K, V = heads(X @ t["W_Q"]), heads(X @ t["W_K"]), heads(X @ t["W_V"])
    S = Q @ K.transpose(-1, -2) / (np.sqrt(d_k) if scaled else 1.0)
    S = S + torch.from_numpy(ac.causal_mask(n))
    attn = (torch.softmax(S, -1) @ V).transpose(1, 2).reshape(3, n, -1) @ t["W_O"]
    H_ = F.layer_norm(X + attn, (8,), t["gamma_1"], t["beta_1"])
    Y = F.layer_norm(H_ + torch.relu(H_ @ t["W_1"] + t["b_1"]) @ t["W_2"] + t["b_2"], (8,),
                     t["gamma_2"], t["beta_2"])
    ref = F.cross_entropy((Y @ t["W_U"]).reshape(-1, 6), torch.from_numpy(targets).reshape(-1),
                          ignore_index=-100)
    ref.backward()
    assert np.isclose(loss, ref.item(), atol=1e-12)
    for name, g in grads.items():
        assert np.allclose(g, t[name].grad.numpy(), atol=1e-10), name


def test_grouped_query_attention_backward_matches_autograd_with_enable_gqa():
    rng = np.random.default_rng(23)
    d_model, h, h_kv, d_k, n = 8, 4, 2, 2, 5
    X = rng.normal(size=(2, n, d_model))
    W_Q, W_O = rng.normal(size=(d_model, h * d_k)), rng.normal(size=(h * d_k, d_model))
    W_K, W_V = rng.normal(size=(d_model, h_kv * d_k)), rng.normal(size=(d_model, h_kv * d_k))
    R, mask = rng.normal(size=(2, n, d_model)), ac.causal_mask(n)
    tX, tQ, tK, tV, tO = (leaf(a) for a in (X, W_Q, W_K, W_V, W_O))

    def heads(A, k):  # (batch, n, k*d) -> (batch, k, n, d), as torch models split heads
        return A.view(2, n, k, d_k).transpose(1, 2)
    out = F.scaled_dot_product_attention(heads(tX @ tQ, h), heads(tX @ tK, h_kv), heads(tX @ tV, h_kv),
                                         attn_mask=torch.from_numpy(mask), enable_gqa=True)
    ((out.transpose(1, 2).reshape(2, n, h * d_k) @ tO) * torch.from_numpy(R)).sum().backward()
    g = al.multi_head_attention_backward(X, X, W_Q, W_K, W_V, W_O, h, R, mask, num_kv_heads=h_kv)
    assert np.allclose(g.dX_q + g.dX_kv, tX.grad.numpy(), atol=1e-12)
    for ours, theirs in ((g.dW_Q, tQ), (g.dW_K, tK), (g.dW_V, tV), (g.dW_O, tO)):
        assert np.allclose(ours, theirs.grad.numpy(), atol=1e-12)
