"""Assignment 14 of the graded track: Sliding windows and attention sinks (notebooks/14_sliding_window_attention.ipynb)."""

from __future__ import annotations

from scripts.graded.items import DERIVE, EXPERIMENT, FILL, Assignment, Item, code

ASSIGNMENT = Assignment(
    "14_sliding_window_attention", "Sliding windows and attention sinks",
    code("""
import numpy as np

import attention_core as ac

rng = np.random.default_rng(2614)
T, w, d_k, d_v = 14, 5, 4, 3
Q = rng.normal(size=(T, d_k))   # (T, d_k): positions 0..13
K = rng.normal(size=(T, d_k))   # (T, d_k)
V = rng.normal(size=(T, d_v))   # (T, d_v)
# A ring buffer of w = 5 slots after position 13 (slot = position % w): the positions in its slots,
# in memory order. Position 13 went into slot 3 and overwrote position 8.
slot_positions = np.array([10, 11, 12, 13, 9])
N, W, CHUNK = 5000, 4096, 512   # the counting item: Mistral 7B's window
"""),
    (
        Item("nb14_band_entries", FILL,
             "Sliding-window attention with W = 4096 (a query sees the last 4096 positions, "
             "itself included). Assign to `band_entries` the number of score entries the mask "
             "leaves visible when N = 5000 positions go through at once, and to "
             "`chunk_entries` the visible entries when, with the first 4488 positions in a cache, "
             "the last CHUNK = 512 positions go through as one chunk of new queries over all "
             "5000 keys.",
             code("""
### BEGIN SOLUTION
band_entries = sum(min(p + 1, W) for p in range(N))          # position p sees keys max(0, p - W + 1) .. p
chunk_entries = sum(min(p + 1, W) for p in range(N - CHUNK, N))   # the chunk's queries are the LAST 512
### END SOLUTION
"""),
             answers=("band_entries", "chunk_entries"), points=3,
             visible=code("""
assert float(band_entries).is_integer() and float(chunk_entries).is_integer(), "two whole numbers"
assert 0 < chunk_entries < band_entries, "the chunk is part of the whole pass"
"""),
             hidden=code("""
_causal = 5000 * 5001 // 2
assert band_entries != 5000 * 4096, "the first 4095 positions see fewer than W keys"
assert band_entries != _causal, "that is the causal mask: the window hides keys older than W"
assert band_entries != 5000 * 4096 - 4096 * 4097 // 2, "off by one: position p < W sees p + 1 keys, itself included"
assert band_entries == 5000 * 4096 - 4096 * 4095 // 2, "not the entries the window leaves visible"
assert chunk_entries != 512 * 513 // 2, "the new queries are the last 512 of 5000 positions, not the first (bottom-right alignment)"
assert chunk_entries == 512 * 4096, "not the visible entries of the chunk"
""")),
        Item("nb14_position_mask", EXPERIMENT,
             "In a ring buffer the keys lie in slot order, not in position order, and a slot may "
             "still be empty. Write `position_window_mask(q_pos, k_pos, window)`: the additive "
             "(n, m) mask for queries at the positions q_pos (length n) over keys at the "
             "positions k_pos (length m, any order, -1 for an empty slot): 0 where key position "
             "j satisfies q - window < j <= q for the query's position q, -inf elsewhere and for "
             "every empty slot. Both may be lists. Then attend the query at position 13 over the "
             "ring buffer's keys and values as they lie in slot_positions' order, and keep its "
             "output, shape (1, d_v), as `ring_output`.",
             code("""
def position_window_mask(q_pos, k_pos, window):
    ### BEGIN SOLUTION
    p = np.asarray(q_pos)[:, None]   # (n, 1): each query's position
    j = np.asarray(k_pos)[None, :]   # (1, m): each slot's position, -1 if empty
    return np.where((j >= 0) & (j <= p) & (j > p - window), 0.0, -np.inf)   # (n, m)
    ### END SOLUTION


### BEGIN SOLUTION
ring_K, ring_V = K[slot_positions], V[slot_positions]   # (w, d_k), (w, d_v): the buffer, slot by slot
ring_output = ac.scaled_dot_product_attention(Q[13:14], ring_K, ring_V,
                                              position_window_mask([13], slot_positions, w))[0]
### END SOLUTION
print("ring_output:", ring_output)
"""),
             answers=("position_window_mask", "ring_output"), points=4,
             visible=code("""
assert np.shape(ring_output) == (1, d_v), "one query, d_v = 3 numbers"
assert np.shape(position_window_mask([0, 1], [0, 1, 2], 2)) == (2, 3), "one row per query, one column per key"
"""),
             hidden=code("""
_band = ac.scaled_dot_product_attention(Q, K, V, ac.sliding_window_mask(T, w))[0]
assert np.allclose(ring_output, _band[13:]), "ring_output is not the window attention output of position 13"
_same = lambda a, b: np.array_equal(np.asarray(a, dtype=float), b)
assert _same(position_window_mask(range(7), range(7), 3), ac.sliding_window_mask(7, 3)), "positions in order: the window mask"
assert _same(position_window_mask(np.arange(4, 9), np.arange(9), 3), ac.sliding_window_mask(5, 3, 9)), "queries at 4..8 over keys 0..8"
_inf = -np.inf
assert _same(position_window_mask([7], [4, 5, 6, 7, 8], 3), [[_inf, 0, 0, 0, _inf]]), "off by one: the window holds w positions, the query's own included"
assert _same(position_window_mask([7], [8, 3, 6], 3), [[_inf, _inf, 0]]), "keys in any order: each by its position"
assert _same(position_window_mask([2], [0, 1, 2, -1, -1], 5), [[0, 0, 0, _inf, _inf]]), "an empty slot (-1) is never seen"
assert _same(position_window_mask([3, 4], [0, 1, 2, 3, 4], 1), [[_inf, _inf, _inf, 0, _inf], [_inf, _inf, _inf, _inf, 0]]), "window 1: each query sees only itself"
assert _same(position_window_mask(range(4), range(4), 10), ac.causal_mask(4)), "a window wider than the sequence is the causal mask"
""")),
        Item("nb14_window_reach", DERIVE,
             "(a) Prove by induction that after L layers of sliding-window attention with window "
             "w (each followed by position-wise sublayers), the output at position p depends on "
             "the inputs at positions p - L (w - 1), ..., p only, and give an example in which it "
             "does depend on the input at p - L (w - 1). (b) Show that causal window attention "
             "over n positions leaves n w - w (w - 1) / 2 score entries visible (n >= w), and "
             "that the ratio of the causal mask's count to this one grows like n / (2w). "
             "(c) A rolling cache writes position t into slot t mod w. Explain why attending over "
             "the w slots, in slot order, gives exactly the window's output (why the order of the "
             "slots does not matter, and why overwriting slot t mod w loses nothing).",
             "(a) Layer 1: row $p$ attends to keys $p - w + 1..p$, so it depends on inputs "
             "$p - (w - 1)..p$; the position-wise sublayers keep that. If after $L$ layers row "
             "$q$ depends on inputs $q - L(w-1)..q$, layer $L + 1$'s row $p$ reads rows "
             "$p - w + 1..p$ of layer $L$, which depend on inputs from "
             "$p - w + 1 - L(w - 1) = p - (L + 1)(w - 1)$ on. It can depend on the farthest one: "
             "with weights that make each position attend only to the key $w - 1$ back (scores "
             "$-\\infty$-like elsewhere), the value at $p - L(w-1)$ is carried $w - 1$ positions "
             "per layer to $p$ (e.g. $w = 2$, one step back per layer). "
             "(b) Position $p$ sees $\\min(p + 1, w)$ keys: $\\sum_{p=0}^{w-2} (p + 1) + (n - w + "
             "1) w = w (w - 1) / 2 + n w - w^2 + w = n w - w (w - 1) / 2$. The causal count is "
             "$n (n + 1) / 2$; their ratio $\\frac{n (n + 1) / 2}{n w - w (w - 1) / 2} \\to "
             "\\frac{n}{2 w}$ for $n \\gg w$. "
             "(c) Attention is a sum over keys, $\\sum_j a_j v_j$ with $a_j \\propto e^{s_j}$: "
             "permuting keys and values together permutes the terms and changes nothing, so the "
             "slot order does not matter. After position $t$ is written, slots $t \\bmod w$ for the "
             "last $w$ positions $t - w + 1..t$ are distinct (they are $w$ consecutive integers "
             "mod $w$) and hold exactly the keys the query at $t$ may see; the overwritten "
             "position $t - w$ is outside the window of $t$ and of every later query.",
             rubric=((1, "(a) the induction step from L to L + 1 layers (w - 1 more positions), "
                         "and an example of weights that carry the farthest input to p."),
                     (1, "(b) the count sum_p min(p + 1, w) = n w - w (w - 1) / 2, and the ratio "
                         "n (n + 1) / 2 over it tending to n / (2w)."),
                     (1, "(c) attention is invariant to permuting keys with their values; the "
                         "w slots hold the last w positions, and the overwritten t - w is never "
                         "read again.")))),
)
