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


def test_encoder_layer_matches_torch_post_norm():
    rng = np.random.default_rng(3)
    d_model, h, d_ff, n = 8, 2, 16, 5
    p = ac.init_encoder_layer(d_model, h, d_ff, rng)
    layer = torch.nn.TransformerEncoderLayer(d_model, h, d_ff, dropout=0.0, batch_first=True,
                                             norm_first=False, bias=True, dtype=torch.float64)
    with torch.no_grad():
        a = p.self_attn
        layer.self_attn.in_proj_weight.copy_(t(np.concatenate([a.W_Q, a.W_K, a.W_V], 1).T))
        layer.self_attn.in_proj_bias.zero_()
        layer.self_attn.out_proj.weight.copy_(t(a.W_O.T))
        layer.self_attn.out_proj.bias.zero_()
        layer.linear1.weight.copy_(t(p.ffn.W_1.T))
        layer.linear1.bias.copy_(t(p.ffn.b_1))
        layer.linear2.weight.copy_(t(p.ffn.W_2.T))
        layer.linear2.bias.copy_(t(p.ffn.b_2))
    layer.eval()
    X = rng.normal(size=(1, n, d_model))
    ref = layer(t(X)).detach().numpy()
    assert np.allclose(ac.encoder_layer(X, p), ref, atol=1e-10)
