"""Cross-check attention_core against PyTorch's reference implementations (float64, CPU).

torch is optional for learners; where it is absent these tests skip with the reason.
CI installs it (pip install torch==2.13.0) and sets REQUIRE_TORCH=1, under which a
missing torch is a failure, not a skip.
"""

import numpy as np
import pytest

import attention_core as ac
from required import torch_or_skip

torch, F = torch_or_skip()


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


def test_steps_weights_and_tiled_attention_match_torch():
    rng = np.random.default_rng(5)
    Q, K, V = rng.normal(size=(2, 6, 4)), rng.normal(size=(2, 9, 4)), rng.normal(size=(2, 9, 3))
    mask = ac.padding_mask([9, 5], 9)  # (2, 1, 9): the second sequence hides its last 4 keys
    ref = F.scaled_dot_product_attention(t(Q), t(K), t(V), attn_mask=t(mask)).numpy()
    ref_w = torch.softmax(t(Q) @ t(K).transpose(-1, -2) / 2.0 + t(mask), -1).numpy()  # sqrt(4) = 2
    steps = ac.attention_steps(Q, K, V, mask)
    assert np.allclose(steps.scores, (t(Q) @ t(K).transpose(-1, -2)).numpy(), atol=1e-12)
    assert np.allclose(steps.weights, ref_w, atol=1e-12) and np.allclose(steps.output, ref, atol=1e-12)
    assert np.allclose(ac.attention_weights(Q, K, mask), ref_w, atol=1e-12)
    for block_size in (1, 4, 16):
        assert np.allclose(ac.tiled_attention(Q, K, V, block_size, mask), ref, atol=1e-12)


def test_banded_tiled_attention_matches_torch_with_the_window_mask():
    """tiled_attention(window=) (notebook 14) skips the tiles outside the band: torch's
    scaled_dot_product_attention with the same band as a boolean mask gives the same output."""
    rng = np.random.default_rng(14)
    for n, m, window, block_size in ((12, 12, 3, 4), (5, 11, 4, 2), (16, 16, 1, 5), (9, 9, 20, 4)):
        Q, K, V = rng.normal(size=(2, n, 4)), rng.normal(size=(2, m, 4)), rng.normal(size=(2, m, 3))
        ones = torch.ones(n, m, dtype=torch.bool)
        band = ones.tril(m - n) & ~ones.tril(m - n - window)  # True where a query may attend
        ref = F.scaled_dot_product_attention(t(Q), t(K), t(V), attn_mask=band).numpy()
        assert np.allclose(ac.tiled_attention(Q, K, V, block_size, window=window), ref, atol=1e-12)
        pad = ac.padding_mask([m, m - 1 if window > 1 else m], m)  # and a mask added to the band
        ref = F.scaled_dot_product_attention(t(Q), t(K), t(V), attn_mask=band & torch.isfinite(t(pad))).numpy()
        assert np.allclose(ac.tiled_attention(Q, K, V, block_size, pad, window=window), ref, atol=1e-12)


def test_split_and_merge_heads_are_torchs_view_and_transpose():
    X = np.arange(2 * 5 * 12, dtype=float).reshape(2, 5, 12)  # (batch, n, h*d) with h = 3, d = 4
    heads = t(X).view(2, 5, 3, 4).transpose(1, 2)  # (batch, h, n, d), as nanoGPT splits heads
    assert np.array_equal(ac.split_heads(X, 3), heads.numpy())
    assert np.array_equal(ac.merge_heads(heads.numpy()), heads.transpose(1, 2).reshape(2, 5, 12).numpy())


def test_positional_encoding_and_its_shift_match_the_formula_in_torch():
    n, d_model = 50, 16  # the encoding as the PyTorch tutorials write it (exp/log form of 10000^(-2i/d))
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    div = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-np.log(10000.0) / d_model))
    pe = torch.zeros(n, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
    assert np.allclose(ac.sinusoidal_positional_encoding(n, d_model), pe.numpy(), atol=1e-12)
    R = t(ac.positional_shift_matrix(7, d_model))
    assert np.allclose((pe[:-7] @ R).numpy(), pe[7:].numpy(), atol=1e-10)


def test_relu_and_feed_forward_match_torch():
    rng = np.random.default_rng(6)
    X, p = rng.normal(size=(2, 5, 8)), _random_ffn(rng, 8, 32)
    assert np.array_equal(ac.relu(X), torch.relu(t(X)).numpy())
    ref = F.linear(F.relu(F.linear(t(X), t(p.W_1.T), t(p.b_1))), t(p.W_2.T), t(p.b_2))
    assert np.allclose(ac.feed_forward(X, p.W_1, p.b_1, p.W_2, p.b_2), ref.numpy(), atol=1e-12)


def test_attention_cost_counts_what_torch_computes():
    from torch.utils.flop_counter import FlopCounterMode
    n, m, d_k, d_v, h = 6, 9, 4, 3, 2
    Q, K, V = (torch.zeros(h, rows, d, dtype=torch.float64) for rows, d in ((n, d_k), (m, d_k), (m, d_v)))
    with FlopCounterMode(display=False) as flops:  # counts 2 flops per multiply-add of every matmul
        S = Q @ K.transpose(-1, -2)
        torch.softmax(S, -1) @ V
    cost = ac.attention_cost(n, m, d_k=d_k, d_v=d_v, h=h)
    assert cost["score_entries"] == S.numel()
    assert cost["score_bytes"] == S.numel() * S.element_size()
    assert 2 * cost["multiply_adds"] == flops.get_total_flops()


def _torch_encoder_layer(p: ac.EncoderLayerParams, d_model, h, d_ff):
    layer = torch.nn.TransformerEncoderLayer(d_model, h, d_ff, dropout=0.0, batch_first=True,
                                             norm_first=False, activation="relu", dtype=torch.float64)
    with torch.no_grad():
        _copy_attention(layer.self_attn, p.self_attn)
        _copy_ffn_and_norms(layer, p.ffn, (p.norm1, p.norm2))
    return layer.eval()


def _torch_decoder_layer(p: ac.DecoderLayerParams, d_model, h, d_ff):
    layer = torch.nn.TransformerDecoderLayer(d_model, h, d_ff, dropout=0.0, batch_first=True,
                                             norm_first=False, activation="relu", dtype=torch.float64)
    with torch.no_grad():
        _copy_attention(layer.self_attn, p.self_attn)
        _copy_attention(layer.multihead_attn, p.cross_attn)
        _copy_ffn_and_norms(layer, p.ffn, (p.norm1, p.norm2, p.norm3))
    return layer.eval()


def test_encode_and_decode_are_torchs_layers_in_sequence():
    rng = np.random.default_rng(7)
    d_model, h, d_ff, n, m = 8, 2, 16, 4, 5
    encoders = [ac.init_encoder_layer(d_model, h, d_ff, rng) for _ in range(2)]
    decoders = [ac.init_decoder_layer(d_model, h, d_ff, rng) for _ in range(2)]
    X, Y = rng.normal(size=(2, m, d_model)), rng.normal(size=(2, n, d_model))
    memory = t(X)
    for p in encoders:
        memory = _torch_encoder_layer(p, d_model, h, d_ff)(memory)
    out = t(Y)
    for p in decoders:
        out = _torch_decoder_layer(p, d_model, h, d_ff)(out, memory, tgt_mask=t(ac.causal_mask(n)))
    assert np.allclose(ac.encode(X, encoders), memory.detach().numpy(), atol=1e-10)
    assert np.allclose(ac.decode(Y, ac.encode(X, encoders), decoders), out.detach().numpy(), atol=1e-10)


def test_every_public_function_of_both_modules_is_cross_checked_against_torch():
    """A new function in attention_core or attention_learning gets a torch cross-check here or
    in tests/test_torch_backward.py; classes that only hold results are read through them."""
    import re
    from pathlib import Path

    import attention_learning as al
    here = Path(__file__).parent
    text = (here / "test_torch_crosscheck.py").read_text() + (here / "test_torch_backward.py").read_text()
    holders = {"AttentionSteps", "MultiHeadGrads", "AdamState", "LMSteps", "AttentionParams",
               "FFNParams", "LayerNormParams", "EncoderLayerParams", "DecoderLayerParams"}
    missing = [f"{alias}.{name}" for module, alias in ((ac, "ac"), (al, "al"))
               for name in module.__all__ if name not in holders
               and not re.search(rf"\b{alias}\.{name}\b", text)]
    assert not missing, f"no torch cross-check calls {missing}"


def test_grouped_query_attention_matches_torch_enable_gqa():
    rng = np.random.default_rng(10)
    Q, K, V = rng.normal(size=(2, 8, 5, 4)), rng.normal(size=(2, 2, 7, 4)), rng.normal(size=(2, 2, 7, 3))
    mask = ac.causal_mask(5, 7)
    out, _ = ac.grouped_query_attention(Q, K, V, mask)
    ref = F.scaled_dot_product_attention(t(Q), t(K), t(V), attn_mask=t(mask), enable_gqa=True)
    assert np.allclose(out, ref.numpy(), atol=1e-12)


def test_causal_mask_with_a_cache_is_torchs_lower_right_and_the_window_its_band():
    from torch.nn.attention.bias import causal_lower_right
    rng = np.random.default_rng(11)
    for n, m in ((4, 4), (2, 6), (1, 5)):
        bias = causal_lower_right(n, m)  # True where query i (the last n of m) may see key j
        assert np.array_equal(np.isfinite(ac.causal_mask(n, m)), bias._materialize(torch.device("cpu")).numpy())
        Q, K, V = rng.normal(size=(1, n, 3)), rng.normal(size=(1, m, 3)), rng.normal(size=(1, m, 2))
        ref = F.scaled_dot_product_attention(t(Q), t(K), t(V), attn_mask=bias)
        out, _ = ac.scaled_dot_product_attention(Q, K, V, ac.causal_mask(n, m))
        assert np.allclose(out, ref.numpy(), atol=1e-12)
    n, m, window = 3, 7, 2  # the band as torch builds it: on or below the cache's diagonal, above it minus window
    ones = torch.ones(n, m, dtype=torch.bool)
    band = ones.tril(m - n) & ~ones.tril(m - n - window)
    assert np.array_equal(np.isfinite(ac.sliding_window_mask(n, window, m)), band.numpy())


def test_split_halves_layout_matches_hugging_face_llamas_rotate_half_in_torch():
    """Transcribed from transformers' models/llama/modeling_llama.py (rotate_half,
    apply_rotary_pos_emb, LlamaRotaryEmbedding's inv_freq and emb = cat(freqs, freqs))."""
    def rotate_half(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    rng = np.random.default_rng(7)
    q = rng.normal(size=(2, 3, 11, 8))  # (batch, heads, n, head_dim)
    position_ids = torch.arange(11, dtype=torch.float64)[None] + 5  # a cache offset of 5
    base, dim = 10000.0, 8
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    freqs = position_ids[:, :, None] * inv_freq  # (1, n, dim/2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[:, None], emb.sin()[:, None]  # unsqueeze_dim = 1
    qt = torch.from_numpy(q)
    ref = (qt * cos + rotate_half(qt) * sin).numpy()
    np.testing.assert_allclose(ac.rope(q, np.arange(11) + 5), ref, atol=1e-12)


def test_alibi_as_bloom_builds_it_in_torch_gives_the_same_weights():
    """BLOOM (transformers' models/bloom) adds slope_r * j, the key's position, instead of
    -slope_r * (i - j): the two differ by slope_r * i, the same in every entry of a row, so
    softmax gives the same weights. Its slopes: base^k, k = 1..p, base = 2^(-2^-(log2 p - 3)),
    then every other power of the base for 2p heads, as in the paper."""
    import math
    for h in (8, 6, 12):
        p = 2 ** math.floor(math.log2(h))
        slopes = torch.pow(torch.tensor(2 ** (-(2 ** -(math.log2(p) - 3))), dtype=torch.float64),
                           torch.arange(1, p + 1))
        if p != h:
            extra = torch.tensor(2 ** (-(2 ** -(math.log2(2 * p) - 3))), dtype=torch.float64)
            slopes = torch.cat([slopes, torch.pow(extra, torch.arange(1, 1 + 2 * (h - p), 2))])
        assert np.allclose(ac.alibi_slopes(h), slopes.numpy(), rtol=1e-12)
        n = 7
        S = torch.from_numpy(np.random.default_rng(h).normal(size=(h, n, n)))
        bloom = slopes[:, None, None] * torch.arange(n, dtype=torch.float64)[None, None, :]
        causal = torch.from_numpy(ac.causal_mask(n))
        ours = ac.softmax(S.numpy() + ac.alibi_bias(h, n) + ac.causal_mask(n))
        assert np.allclose(ours, torch.softmax(S + bloom + causal, -1).numpy(), atol=1e-12)
