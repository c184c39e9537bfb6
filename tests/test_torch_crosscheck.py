"""Cross-check attention_core against PyTorch's reference implementations (float64, CPU).

torch is optional for learners; where it is absent these tests skip with the reason.
CI installs it (pip install torch==2.13.0) and sets REQUIRE_TORCH=1, under which a
missing torch is a failure, not a skip.
"""

import os

import numpy as np
import pytest

import attention_core as ac

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

if torch is None:
    reason = "torch is not installed; install the CPU build with: .venv/bin/pip install torch==2.13.0"
    if os.environ.get("REQUIRE_TORCH") == "1":
        pytest.fail(f"REQUIRE_TORCH=1 but {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def t(x):
    return torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64))


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention_matches_torch(causal):
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(2, 7, 5)), rng.normal(size=(2, 7, 5)), rng.normal(size=(2, 7, 3))
    mask = ac.causal_mask(7) if causal else None
    out, w = ac.scaled_dot_product_attention(Q, K, V, mask)
    ref = F.scaled_dot_product_attention(t(Q), t(K), t(V), is_causal=causal)
    ref_masked = F.scaled_dot_product_attention(t(Q), t(K), t(V),
                                                attn_mask=None if mask is None else t(mask))
    assert np.allclose(out, ref.numpy(), atol=1e-12)
    assert np.allclose(out, ref_masked.numpy(), atol=1e-12)  # additive float mask, same meaning
    assert np.allclose(w, torch.softmax(t(Q) @ t(K).transpose(-1, -2) / np.sqrt(5)
                                        + (0 if mask is None else t(mask)), -1).numpy())


def test_multi_head_attention_matches_nn_multiheadattention():
    rng = np.random.default_rng(1)
    d_model, h, n, m = 12, 3, 4, 6
    p = ac.init_attention_params(d_model, h, rng)
    Xq, Xkv = rng.normal(size=(n, d_model)), rng.normal(size=(m, d_model))
    mha = torch.nn.MultiheadAttention(d_model, h, bias=False, batch_first=True,
                                      dtype=torch.float64)
    with torch.no_grad():  # torch stores weights as (out, in) for x @ W^T: ours transposed
        mha.in_proj_weight.copy_(t(np.concatenate([p.W_Q, p.W_K, p.W_V], axis=1).T))
        mha.out_proj.weight.copy_(t(p.W_O.T))
    mask = ac.padding_mask([4], m)  # (1, 1, m): hide the last two keys
    out, w = ac.multi_head_attention(Xq[None], Xkv[None], p.W_Q, p.W_K, p.W_V, p.W_O, h, mask)
    ref, ref_w = mha(t(Xq[None]), t(Xkv[None]), t(Xkv[None]),
                     key_padding_mask=torch.from_numpy(np.isinf(mask[:, 0])),
                     average_attn_weights=False)
    assert np.allclose(out, ref.detach().numpy(), atol=1e-12)
    assert np.allclose(w, ref_w.detach().numpy(), atol=1e-12)


def test_layer_norm_matches_torch():
    rng = np.random.default_rng(2)
    X, gamma, beta = rng.normal(size=(3, 5, 8)), rng.normal(size=8), rng.normal(size=8)
    ln = torch.nn.LayerNorm(8, eps=1e-5, dtype=torch.float64)
    with torch.no_grad():
        ln.weight.copy_(t(gamma))
        ln.bias.copy_(t(beta))
    assert np.allclose(ac.layer_norm(X, gamma, beta), ln(t(X)).detach().numpy(), atol=1e-12)


def _random_norm(rng, d_model):
    """gamma and beta far from (1, 0), so a swapped or missing norm cannot hide."""
    return ac.LayerNormParams(gamma=rng.uniform(0.5, 2.0, d_model) * rng.choice([-1, 1], d_model),
                              beta=rng.normal(size=d_model))


def _random_ffn(rng, d_model, d_ff):
    p = ac.init_ffn_params(d_model, d_ff, rng)
    return ac.FFNParams(p.W_1, rng.normal(size=d_ff), p.W_2, rng.normal(size=d_model))


def _copy_attention(torch_mha, a: ac.AttentionParams):
    """torch stores weights as (out, in) for x @ W^T: ours transposed; no biases in ours."""
    torch_mha.in_proj_weight.copy_(t(np.concatenate([a.W_Q, a.W_K, a.W_V], 1).T))
    torch_mha.in_proj_bias.zero_()
    torch_mha.out_proj.weight.copy_(t(a.W_O.T))
    torch_mha.out_proj.bias.zero_()


def _copy_ffn_and_norms(layer, ffn: ac.FFNParams, norms):
    layer.linear1.weight.copy_(t(ffn.W_1.T))
    layer.linear1.bias.copy_(t(ffn.b_1))
    layer.linear2.weight.copy_(t(ffn.W_2.T))
    layer.linear2.bias.copy_(t(ffn.b_2))
    for k, norm in enumerate(norms, start=1):  # norm1, norm2 (, norm3 in the decoder)
        torch_norm = getattr(layer, f"norm{k}")
        torch_norm.weight.copy_(t(norm.gamma))
        torch_norm.bias.copy_(t(norm.beta))


def test_encoder_layer_matches_torch_post_norm():
    rng = np.random.default_rng(3)
    d_model, h, d_ff, n = 8, 2, 16, 5
    p = ac.init_encoder_layer(d_model, h, d_ff, rng)
    p = ac.EncoderLayerParams(p.self_attn, _random_norm(rng, d_model), _random_ffn(rng, d_model, d_ff),
                              _random_norm(rng, d_model))
    layer = torch.nn.TransformerEncoderLayer(d_model, h, d_ff, dropout=0.0, batch_first=True,
                                             norm_first=False, bias=True, activation="relu",
                                             dtype=torch.float64)
    with torch.no_grad():
        _copy_attention(layer.self_attn, p.self_attn)
        _copy_ffn_and_norms(layer, p.ffn, (p.norm1, p.norm2))
    layer.eval()
    X = rng.normal(size=(2, n, d_model))
    mask = ac.padding_mask([5, 3], n)  # (batch, 1, n): the second sequence has 3 real tokens
    ref = layer(t(X), src_key_padding_mask=t(mask[:, 0])).detach().numpy()  # float: added
    assert np.allclose(ac.encoder_layer(X, p, mask), ref, atol=1e-10)
    assert np.allclose(ac.encoder_layer(X[:1], p), layer(t(X[:1])).detach().numpy(), atol=1e-10)


def test_decoder_layer_matches_torch_post_norm():
    rng = np.random.default_rng(4)
    d_model, h, d_ff, n, m = 8, 2, 16, 4, 6
    p = ac.init_decoder_layer(d_model, h, d_ff, rng)
    p = ac.DecoderLayerParams(p.self_attn, _random_norm(rng, d_model), p.cross_attn,
                              _random_norm(rng, d_model), _random_ffn(rng, d_model, d_ff),
                              _random_norm(rng, d_model))
    layer = torch.nn.TransformerDecoderLayer(d_model, h, d_ff, dropout=0.0, batch_first=True,
                                             norm_first=False, bias=True, activation="relu",
                                             dtype=torch.float64)
    with torch.no_grad():
        _copy_attention(layer.self_attn, p.self_attn)
        _copy_attention(layer.multihead_attn, p.cross_attn)  # cross-attention
        _copy_ffn_and_norms(layer, p.ffn, (p.norm1, p.norm2, p.norm3))
    layer.eval()
    Y, memory = rng.normal(size=(2, n, d_model)), rng.normal(size=(2, m, d_model))
    cross_mask = ac.padding_mask([6, 2], m)  # (batch, 1, m): source padding
    out, self_w, cross_w = ac.decoder_layer(Y, memory, p, cross_mask=cross_mask,
                                            return_weights=True)
    ref = layer(t(Y), t(memory), tgt_mask=t(ac.causal_mask(n)),
                memory_key_padding_mask=t(cross_mask[:, 0])).detach().numpy()  # float: added
    assert np.allclose(out, ref, atol=1e-10)
    assert np.all(self_w[..., np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] == 0)
    assert np.all(cross_w[1, :, :, 2:] == 0)
