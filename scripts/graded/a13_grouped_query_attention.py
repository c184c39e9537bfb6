"""Assignment 13 of the graded track: Grouped-query and multi-query attention (notebooks/13_grouped_query_attention.ipynb)."""

from __future__ import annotations

from scripts.graded.items import DERIVE, EXPERIMENT, FILL, Assignment, Item, code

ASSIGNMENT = Assignment(
    "13_grouped_query_attention", "Grouped-query and multi-query attention",
    code("""
import numpy as np

import attention_core as ac

rng = np.random.default_rng(2613)
h, h_kv, t, d_k, d_v = 8, 2, 6, 4, 3
q = rng.normal(size=(h, d_k))               # (h, d_k): the new token's query, one row per query head
K_cache = rng.normal(size=(h_kv, t, d_k))   # (h_kv, t, d_k): the cached keys, the new one included
V_cache = rng.normal(size=(h_kv, t, d_v))   # (h_kv, t, d_v)
D_MODEL, H, H_KV, D_HEAD = 4096, 32, 8, 128  # the counting item: a Llama-3-8B-sized layer
"""),
    (
        Item("nb13_param_saving", FILL,
             "An attention layer with D_MODEL = 4096, H = 32 query heads, H_KV = 8 key/value heads "
             "and d_k = d_v = D_HEAD = 128, no biases. Assign to `attn_params` the number of "
             "weights of its W_Q, W_K, W_V and W_O, and to `param_saving` the fraction of the "
             "weights it saves against multi-head attention with the same D_MODEL, H and D_HEAD "
             "(a number between 0 and 1). Compare it with the fraction of the KV cache it saves.",
             code("""
### BEGIN SOLUTION
attn_params = D_MODEL * H * D_HEAD + 2 * D_MODEL * H_KV * D_HEAD + H * D_HEAD * D_MODEL   # W_Q; W_K, W_V; W_O
param_saving = 1 - attn_params / (4 * D_MODEL * H * D_HEAD)   # multi-head: four (4096, 4096) matrices
### END SOLUTION
"""),
             answers=("attn_params", "param_saving"), points=3,
             visible=code("""
assert float(attn_params).is_integer() and attn_params > 0, "a count of weights is a positive whole number"
assert np.ndim(param_saving) == 0 and 0 < float(param_saving) < 1, "param_saving is a fraction between 0 and 1"
"""),
             hidden=code("""
_mha = 4 * 4096 ** 2
_kv = 2 * 4096 * 8 * 128
assert attn_params != 4096 ** 2 + 3 * _kv // 2, "W_O maps the 32 query heads' outputs back: it keeps its (h d_v, d_model) shape"
assert attn_params == 2 * 4096 ** 2 + _kv, "not the weights of W_Q, W_K, W_V and W_O"
assert not np.isclose(float(param_saving), 0.75), "0.75 is what the KV cache saves (h_kv / h = 1/4): W_Q and W_O do not shrink"
assert not np.isclose(float(param_saving), 1 - (3 * 4096 ** 2 + _kv / 2) / _mha), "both W_K and W_V shrink"
assert np.isclose(float(param_saving), 1 - (2 * 4096 ** 2 + _kv) / _mha, rtol=1e-9), "not the fraction of the weights saved"
""")),
        Item("nb13_decode_step", EXPERIMENT,
             "A decoding step reads the whole cache, so a kernel reads each key/value head once "
             "for its g = h / h_kv query heads instead of repeating it. Write "
             "`gqa_decode_step(q, K_cache, V_cache)`: q (h, d_k) is one new token's query in "
             "every head, K_cache (h_kv, t, d_k) and V_cache (h_kv, t, d_v) the cache; return "
             "the (h, d_v) attention output of every query head, query head r reading key/value "
             "head r // g, WITHOUT np.repeat: group the rows of q as (h_kv, g, d_k) and attend "
             "each group over its own key/value head. Run it on q, K_cache, V_cache as `o_step`.",
             code("""
def gqa_decode_step(q, K_cache, V_cache):
    ### BEGIN SOLUTION
    groups = q.reshape(K_cache.shape[0], -1, q.shape[-1])   # (h, d_k) -> (h_kv, g, d_k): heads k g .. k g + g - 1
    o, _ = ac.scaled_dot_product_attention(groups, K_cache, V_cache)   # (h_kv, g, d_k) @ (h_kv, d_k, t) -> ... (h_kv, g, d_v)
    return o.reshape(q.shape[0], V_cache.shape[-1])         # (h_kv, g, d_v) -> (h, d_v)
    ### END SOLUTION


### BEGIN SOLUTION
o_step = gqa_decode_step(q, K_cache, V_cache)
### END SOLUTION
print("o_step:", o_step.shape)
"""),
             answers=("gqa_decode_step", "o_step"), points=4,
             visible=code("""
assert np.shape(o_step) == (h, d_v), "one output row of d_v numbers per query head"
"""),
             hidden=code("""
_gqa = lambda a, B, C: ac.grouped_query_attention(a[:, None, :], B, C)[0][:, 0, :]
_wrong_order = ac.scaled_dot_product_attention(q.reshape(4, 2, 4).swapaxes(0, 1), K_cache, V_cache)[0].swapaxes(0, 1).reshape(8, 3)
assert not np.allclose(o_step, _wrong_order), "query head r reads key/value head r // g, not r mod h_kv: heads 0..3 share head 0"
assert np.allclose(o_step, _gqa(q, K_cache, V_cache)), "o_step is not grouped-query attention of the new query"
_g = np.random.default_rng(47)
_q, _K, _V = _g.normal(size=(6, 5)), _g.normal(size=(3, 4, 5)), _g.normal(size=(3, 4, 2))
assert np.allclose(gqa_decode_step(_q, _K, _V), _gqa(_q, _K, _V)), "h = 6, h_kv = 3, d_k = 5: scale by sqrt(d_k) of a head"
assert np.allclose(gqa_decode_step(_q, _K[:1], _V[:1]), _gqa(_q, _K[:1], _V[:1])), "h_kv = 1: multi-query attention"
_K6, _V6 = _g.normal(size=(6, 4, 5)), _g.normal(size=(6, 4, 2))
assert np.allclose(gqa_decode_step(_q, _K6, _V6), _gqa(_q, _K6, _V6)), "h_kv = h: multi-head attention"
assert np.allclose(gqa_decode_step(_q, _K[:, :1], _V[:, :1]), np.repeat(_V[:, 0], 2, axis=0)), "a cache of one position: every head copies its value"
""")),
        Item("nb13_tied_heads", DERIVE,
             "Let a layer have h query heads and h_kv key/value heads, g = h / h_kv, and write "
             "W_K^(k) for the k-th block of d_k columns of its W_K (d_model, h_kv d_k), the same "
             "for W_V. (a) Show that it computes exactly what multi-head attention computes with "
             "the (d_model, h d_k) matrix whose r-th block is W_K^(r // g) (the same for W_V). "
             "(b) With d_k = d_v = d_model / h, write the attention's weights and the cache per "
             "token as fractions of multi-head attention's, as functions of h_kv / h, and say "
             "which one goes to 0 as h_kv / h does. (c) Converting a trained multi-head model, "
             "one replaces the g key heads of a group by their mean. Show that query head r's "
             "scores become the mean of its scores against the g old keys of its group, and "
             "explain why that is not its old scores, nor does the mean commute with the "
             "softmax, so that the converted model needs some training.",
             "(a) Multi-head head $r$ uses $K_r = X W_K^{(r)}$ with $W_K^{(r)} := W_K^{(r // g)}$, "
             "i.e. $K_r = X W_K^{(r//g)}$, which is the key/value head $r // g$ that grouped "
             "attention gives head $r$; the same for $V$, while $Q_r$ and $W_O$ are the same "
             "matrices: each head's softmax and output, hence the concatenation and $W_O$, agree. "
             "(b) Weights: $(2 h + 2 h_{kv}) d_k d_{model} / (4 h d_k d_{model}) = "
             "\\tfrac12 + \\tfrac12 h_{kv}/h$; cache: $2 h_{kv} d_k / (2 h d_k) = h_{kv} / h$. "
             "The cache goes to 0 with $h_{kv}/h$, the weights only to one half (W_Q and W_O "
             "keep their size). "
             "(c) The pooled key is $\\bar k = \\frac1g \\sum_{r'} k_{r'}$, so $q_r \\cdot \\bar k = "
             "\\frac1g \\sum_{r'} q_r \\cdot k_{r'}$: the mean of the scores of $q_r$ against the "
             "group's keys. Head $r$ was trained with $q_r \\cdot k_r$ only; the other keys "
             "$k_{r'}$ were never meant for $q_r$, so the mean differs from its old score unless "
             "the group's keys were equal. And $\\mathrm{softmax}(\\frac1g \\sum s_{r'}) \\ne "
             "\\frac1g \\sum \\mathrm{softmax}(s_{r'})$ (the softmax is not linear), so the "
             "weights change too: the output changes, and a little further training (uptraining) "
             "adapts $W_Q$ and the rest to the shared heads.",
             rubric=((1, "(a) head r of the multi-head layer with the tied blocks has the keys "
                         "and values of head r // g: every head's output, hence the layer's, "
                         "is the same."),
                     (1, "(b) weights 1/2 + h_kv / (2h) of multi-head attention, cache h_kv / h; "
                         "only the cache goes to 0."),
                     (1, "(c) q_r . mean(k) is the mean of q_r's scores against the group's keys, "
                         "not q_r . k_r, and the softmax is not linear: training is needed.")))),
)
