"""Assignment 11 of the graded track: Generating, and the KV cache (notebooks/11_generating_and_kv_cache.ipynb)."""

from __future__ import annotations

from scripts.graded.items import DERIVE, EXPERIMENT, FILL, Assignment, Item, code

ASSIGNMENT = Assignment(
    "11_generating_and_kv_cache", "Generating, and the KV cache",
    code("""
import numpy as np

import attention_core as ac

rng = np.random.default_rng(2611)
n, d_k, d_v = 6, 4, 3
Q = rng.normal(size=(n, d_k))   # (n, d_k): one query per position, in the order generation meets them
K = rng.normal(size=(n, d_k))   # (n, d_k)
V = rng.normal(size=(n, d_v))   # (n, d_v)
PROMPT, CHUNK, NEW = 40, 8, 10  # the counting item: prompt length, prefill chunk, tokens generated
"""),
    (
        Item("nb11_chunked_prefill", FILL,
             "With a KV cache, a prompt of PROMPT = 40 tokens goes through in chunks of "
             "CHUNK = 8 (a chunked prefill): each chunk's 8 queries are compared with every key "
             "cached before it and with the chunk's own 8 keys, in one score matrix of shape "
             "(8, keys) per head; count every entry of it (the causal mask hides some after they "
             "are formed). The prefill leaves positions 0..39 in the cache; then NEW = 10 tokens "
             "are fed in one at a time, at positions 40, ..., 49, each query against the cache "
             "and its own key. For one head, assign to `prefill_entries` the score entries of the "
             "whole prefill and to `generate_entries` those of the 10 generation steps.",
             code("""
### BEGIN SOLUTION
prefill_entries = sum(CHUNK * (c + CHUNK) for c in range(0, PROMPT, CHUNK))   # c keys cached before the chunk
generate_entries = sum(t + 1 for t in range(PROMPT, PROMPT + NEW))            # position t sees t + 1 keys
### END SOLUTION
"""),
             answers=("prefill_entries", "generate_entries"), points=3,
             visible=code("""
assert float(prefill_entries).is_integer() and float(generate_entries).is_integer(), "two whole numbers"
assert 0 < generate_entries < prefill_entries, "ten one-row steps form fewer entries than the prefill"
"""),
             hidden=code("""
_chunks = [(k + 1) * 8 for k in range(5)]   # the keys each chunk's queries meet
assert prefill_entries != 40 * 40, "not one pass of all 40 queries: each chunk meets only the keys up to its own"
assert prefill_entries != 40 * 41 // 2, "every entry of a chunk's (8, keys) matrix is formed, masked ones too"
assert prefill_entries != 5 * 8 * 8, "a chunk's queries meet the cached keys as well as the chunk's own"
assert prefill_entries == 8 * sum(_chunks), "not the entries of the five chunks' score matrices"
assert generate_entries != sum(range(40, 50)), "off by one: the query at position t also meets its own key"
assert generate_entries != sum(_k * _k for _k in range(41, 51)), "with a cache only the new query is computed, not the whole prefix"
assert generate_entries == sum(range(41, 51)), "not the entries of the ten cached steps"
""")),
        Item("nb11_decode_with_cache", EXPERIMENT,
             "Write `decode_with_cache(Q, K, V)`: the causal attention outputs of the n positions "
             "of Q (n, d_k), K (n, d_k), V (n, d_v), computed as generation computes them: one "
             "position at a time, appending its key and value to a cache and attending with its "
             "query alone over everything cached. Return `(outputs, entries)`: the (n, d_v) "
             "outputs and the number of score entries the loop formed. Run it on Q, K, V above "
             "as `O_cached, entries_cached`, and compare O_cached with one causal pass over all "
             "n positions.",
             code("""
def decode_with_cache(Q, K, V):
    ### BEGIN SOLUTION
    K_cache, V_cache = np.zeros((0, K.shape[1])), np.zeros((0, V.shape[1]))   # empty: no position yet
    outputs, entries = [], 0
    for t in range(Q.shape[0]):
        K_cache = np.concatenate([K_cache, K[t:t + 1]])   # (t + 1, d_k): the new key last
        V_cache = np.concatenate([V_cache, V[t:t + 1]])   # (t + 1, d_v)
        o, a = ac.scaled_dot_product_attention(Q[t:t + 1], K_cache, V_cache)   # (1, d_v), (1, t + 1)
        outputs.append(o[0])
        entries += a.size                                 # the last position sees every cached key
    return np.array(outputs), entries
    ### END SOLUTION


### BEGIN SOLUTION
O_cached, entries_cached = decode_with_cache(Q, K, V)
### END SOLUTION
O_full = ac.scaled_dot_product_attention(Q, K, V, ac.causal_mask(n))[0]   # (n, d_v): one causal pass
print("largest difference from the causal pass:", np.abs(O_cached - O_full).max())
"""),
             answers=("decode_with_cache", "O_cached", "entries_cached"), points=4,
             visible=code("""
assert np.shape(O_cached) == (n, d_v), "one output row of d_v numbers per position"
assert float(entries_cached).is_integer(), "entries_cached is a whole number"
"""),
             hidden=code("""
_causal = lambda A, B, C: ac.scaled_dot_product_attention(A, B, C, ac.causal_mask(len(A)))[0]
assert np.allclose(O_cached, _causal(Q, K, V)), "O_cached is not the causal attention output of Q, K, V"
assert entries_cached != 36, "a cached step computes only the new query's row, not the whole prefix again"
assert entries_cached == 21, "not the score entries of the cached loop over six positions"
_g = np.random.default_rng(41)
_Q, _K, _V = _g.normal(size=(9, 2)), _g.normal(size=(9, 2)), _g.normal(size=(9, 5))
_O, _e = decode_with_cache(_Q, _K, _V)
assert np.allclose(_O, _causal(_Q, _K, _V)), "nine positions, d_k = 2, d_v = 5: not the causal output"
assert int(_e) == 45, "nine positions: not the entries of the cached loop"
_O1, _e1 = decode_with_cache(_Q[:1], _K[:1], _V[:1])
assert np.allclose(_O1, _V[:1]) and int(_e1) == 1, "one position: its only key gets all the weight"
assert np.allclose(decode_with_cache(40 * _Q, 40 * _K, _V)[0], _causal(40 * _Q, 40 * _K, _V)), "large scores: the softmax must not overflow"
""")),
        Item("nb11_prefix_consistency", DERIVE,
             "(a) In one causal attention layer, O = softmax(Q K^T / sqrt(d_k) + M) V with "
             "M the causal mask, show that row j of O depends on the rows 0..j of X only "
             "(Q = X W_Q, K = X W_K, V = X W_V), and hence that appending tokens never changes "
             "an earlier row. (b) A model stacks such layers, each followed by position-wise "
             "sublayers (residual, layer norm, FFN). Prove by induction over the layers that "
             "the keys and values of every layer at position j depend on tokens 0..j only, so "
             "that all of them may be cached. (c) An encoder layer attends without a mask. What "
             "goes wrong if one caches its keys and values while tokens are appended, and what "
             "would a correct step have to recompute?",
             "(a) $o_j = \\sum_i a_{ji} v_i$ with $a_{ji} = 0$ for $i > j$ (the mask adds "
             "$-\\infty$, the softmax gives 0), and $a_{ji}$ for $i \\le j$ is the softmax of "
             "$q_j \\cdot k_i / \\sqrt{d_k}$, $i \\le j$, which holds only $x_0..x_j$ "
             "($q_j = x_j W_Q$, $k_i = x_i W_K$, $v_i = x_i W_V$). A later token adds a key "
             "$i > j$ whose weight in row $j$ is 0, so row $j$ is unchanged. "
             "(b) Induction: the input of layer 1 at position $j$ is $E[y_j] + P_j$, a function of "
             "token $j$. If the input rows $0..j$ of layer $\\ell$ depend on tokens $0..j$ only, "
             "then by (a) its attention row $j$ does, and the position-wise sublayers act on row "
             "$j$ alone, so its output row $j$, the input of layer $\\ell + 1$, does too; its keys "
             "and values at $j$ are that input times $W_K$, $W_V$. Hence every layer's $k_j$, "
             "$v_j$ is final once token $j$ is in, and may be cached. "
             "(c) Without a mask row $j$ attends to every position, later ones included: a new "
             "token changes the outputs of all earlier positions, hence the inputs of the next "
             "layer and its keys and values at every position. Cached keys and values of layers "
             "above the first are stale; a correct step must recompute all positions of every "
             "layer (only the first layer's keys and values, $x_i W_K$, stay valid).",
             rubric=((1, "(a) the mask zeroes a_ji for i > j and the rest uses x_0..x_j only, so "
                         "appending a token leaves row j unchanged."),
                     (1, "(b) the induction over layers: position-wise sublayers keep the "
                         "dependence on 0..j, so every layer's k_j and v_j is final."),
                     (1, "(c) without a mask a new token changes every earlier row, hence the "
                         "next layers' keys and values: all positions must be recomputed.")))),
)
