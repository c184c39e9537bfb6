"""The one registry of every classic mistake a self-check can name (data only).

Checks (course/checks.py and each notebook's companion) refer to a mistake by its key and fill
in the numbers of the case at hand; the teacher's guide lists them per notebook. Read-only.

The labels and explanations are built at import time, so they are only marked with N_() here;
checks.named() translates them when a verdict is made (course/i18n.py), then fills them in.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from course.i18n import N_


class Mistake(NamedTuple):
    """A classic mistake a check can recognise: where it is taught, its name, and why it is wrong."""

    notebook: str  # "04": the notebook whose checks diagnose it (the teacher's guide groups by it)
    label: str  # quoted in the verdict: 'this is the classic mistake "<label>"'
    why: str  # the explanation; {placeholders} are filled in by the check (str.format)


# Every named mistake of every check, in one place, built once: checks refer to a mistake by its
# key and fill in the numbers of the case at hand. A read-only mapping, so nothing can change it.
MISTAKES: Mapping[str, Mistake] = MappingProxyType({
    # --- the classic mistakes of scaled dot-product attention (several notebooks) ---
    "softmax_wrong_axis": Mistake(
        "03",
        N_("softmax over the wrong axis"),
        N_("softmax must run along each row (over the keys, axis=-1) so that every "
           "query's weights sum to 1; yours normalises each column (over the queries).")),
    "scale_after_softmax": Mistake(
        "03",
        N_("scaling after softmax"),
        N_("divide the scores by sqrt(d_k) BEFORE the softmax; dividing the weights "
           "afterwards leaves rows that no longer sum to 1 and does not prevent saturation.")),
    "no_scaling": Mistake(
        "03",
        N_("no scaling"),
        N_("the scores must be divided by sqrt(d_k) before the softmax; without it "
           "Var[q.k] = d_k and the softmax saturates for large d_k.")),
    "divide_by_d_k": Mistake(
        "03",
        N_("dividing by d_k instead of sqrt(d_k)"),
        N_("the standard deviation of q.k is sqrt(d_k), so the scale is 1/sqrt(d_k); "
           "dividing by d_k shrinks the scores too much and flattens the weights.")),
    "mask_on_values": Mistake(
        "04",
        N_("masking V instead of the scores"),
        N_("the mask must be added to the scores before the softmax; zeroing the "
           "blocked values leaves the blocked keys in the softmax, so the remaining "
           "weights no longer sum to 1 and the positions still compete.")),
    "mask_after_softmax": Mistake(
        "04",
        N_("masking after the softmax"),
        N_("zeroing weights after the softmax leaves rows that do not sum to 1; add the "
           "mask (0 / -inf) to the scores before the softmax.")),
    "mask_missing": Mistake(
        "04",
        N_("no mask"),
        N_("this is the unmasked result: add the mask (0 where allowed, -inf where "
           "not) to the scaled scores before the softmax.")),
    "transposed_weights": Mistake(
        "02",
        N_("transposed weights"),
        N_("rows are queries and columns are keys: A = softmax(Q K^T / sqrt(d_k)) has shape "
           "(n, m) and its ROWS sum to 1; yours is the transpose A^T, whose columns sum to 1.")),
    "transposed_scores": Mistake(
        "02",
        N_("transposed scores"),
        N_("S = Q K^T has shape (n, m), query i and key j at row i, column j; yours starts from "
           "K Q^T = S^T, shape (m, n), with the keys in the rows.")),
    "W_O_uses_d_k": Mistake(
        "05",
        N_("wrong W_O shape: (h*d_k, d_model)"),
        N_("W_O multiplies the concatenated VALUE heads, so its first dimension is h*d_v, "
           "not h*d_k (they differ whenever d_k != d_v).")),
    "W_O_transposed": Mistake(
        "05",
        N_("wrong W_O shape: transposed"),
        N_("with row vectors, Concat(heads) (n, h*d_v) @ W_O must give (n, d_model), so W_O "
           "is (h*d_v, d_model), not (d_model, h*d_v).")),
    "W_O_single_head": Mistake(
        "05",
        N_("wrong W_O shape: one head's width"),
        N_("W_O reads all heads at once: its first dimension is h*d_v, not d_v.")),
    "no_W_O": Mistake(
        "05",
        N_("W_O left out"),
        N_("the concatenated heads (n, h*d_v) must still be multiplied by W_O "
           "(h*d_v, d_model) to mix the heads and return to d_model.")),
    # --- 01 Q, K, V projections ---
    "weight_shapes": Mistake(
        "01",
        N_("the shapes of the weight matrices"),
        N_("(d_model, d_k), (d_model, d_k), (d_model, d_v) are W_Q, W_K, W_V; Q = X W_Q has one "
           "row per token, so Q and K are (n, d_k) and V is (n, d_v).")),
    "V_uses_d_k": Mistake(
        "01",
        N_("V with width d_k"),
        N_("V = X W_V takes its width from W_V, which is (d_model, d_v): V is (n, d_v), and d_v "
           "need not equal d_k.")),
    "column_convention": Mistake(
        "01",
        N_("the column (transposed) convention"),
        N_("this course uses row vectors: each token is a ROW, so Q = X W_Q is (n, d_k), not "
           "(d_k, n).")),
    "no_projection": Mistake(
        "01",
        N_("the width of X"),
        N_("the projections change the width: X is (n, d_model), but Q, K are (n, d_k) and V is "
           "(n, d_v).")),
    "library_picked_one_book": Mistake(
        "01",
        N_("picking the single best book"),
        N_("attention does not choose one book{tie}: it mixes all of them, each with weight "
           "softmax(q k_j / sqrt(d_k)) > 0.")),
    "library_hard_max": Mistake(
        "01",
        N_("the hard maximum (argmax) instead of the softmax"),
        N_("sharing the weight equally among the {count} best books is what a hard maximum "
           "does: the softmax of scores scaled up without limit. Softmax is a SOFT maximum: the "
           "best books get the most, but every book, even a weaker match, keeps a weight "
           "exp(s_j / sqrt(d_k)) / sum_l exp(s_l / sqrt(d_k)) > 0.")),
    "library_no_softmax": Mistake(
        "01",
        N_("the scaled scores without the softmax"),
        N_("the scaled scores q k_j^T / sqrt(d_k) still have to go through the softmax to become "
           "positive weights that sum to 1.")),
    "scores_compare_values": Mistake(
        "01",
        N_("comparing V with V"),
        N_("the scores compare what each position looks for with how every position can be found: "
           "S = Q K^T, queries with keys. The values are what the weights mix afterwards, O = A V; "
           "V V^T only says how alike the contents are, not what any token is looking for.")),
    "scores_compare_queries": Mistake(
        "01",
        N_("comparing Q with Q"),
        N_("Q Q^T compares the queries with each other, as if the keys were the queries (the Q = K "
           "shortcut of section 5, with its symmetric scores); the scores pair every query with "
           "every KEY: S = Q K^T.")),
    # --- 02 The worked 3x2 example ---
    "hand_softmax_down_columns": Mistake(
        "02",
        N_("softmax down the columns"),
        N_("each weight must be divided by the sum over its ROW (the same query, all keys): "
           "a_ij = exp(s~_ij) / sum_l exp(s~_il); yours divides by a column sum.")),
    "hand_column_of_A": Mistake(
        "02",
        N_("softmax down the columns (or column {i} of A)"),
        N_("each weight must be divided by the sum over its ROW (the same query, all keys): "
           "a_ij = exp(s~_ij) / sum_l exp(s~_il). Yours either divides by a column sum or reads "
           "column {i} of A instead of row {i}: S is symmetric here, so both slips give the same "
           "numbers.")),
    "hand_exp_not_normalised": Mistake(
        "02",
        N_("exp() without dividing by the sum"),
        N_("softmax divides each exp(s~_ij) by the row's sum so the weights add up to 1.")),
    "hand_no_softmax": Mistake(
        "02",
        N_("the scaled scores without the softmax"),
        N_("the scaled scores s~_ij = s_ij / sqrt(d_k) still go through exp and the division "
           "by the row sum.")),
    "hand_mixed_keys": Mistake(
        "02",
        N_("mixing the keys instead of the values"),
        N_("the weights decide HOW MUCH of each token to take; what is taken is the value v_j, "
           "not the key k_j.")),
    "hand_plain_mean": Mistake(
        "02",
        N_("the plain average of the values"),
        N_("the values are averaged WITH the attention weights a_ij, not with equal weights 1/m.")),
    # --- 03 Scaling and softmax saturation ---
    "var_std_for_variance": Mistake(
        "03",
        N_("the standard deviation sqrt(d_k)"),
        N_("the variance of a sum of d_k independent terms q_i k_i, each of variance 1, is d_k; "
           "sqrt(d_k) is its standard deviation.")),
    "var_after_scaling": Mistake(
        "03",
        N_("the variance after scaling"),
        N_("each term q_i k_i has variance 1, but there are d_k of them and the variances of "
           "independent terms add up: Var[q.k] = d_k.")),
    "var_before_scaling": Mistake(
        "03",
        N_("the variance before scaling"),
        N_("dividing q.k by sqrt(d_k) divides its variance by (sqrt(d_k))^2 = d_k, so d_k "
           "becomes 1.")),
    "var_divided_by_sqrt": Mistake(
        "03",
        N_("dividing the variance by sqrt(d_k) once"),
        N_("Var[X / c] = Var[X] / c^2: with c = sqrt(d_k) the variance d_k is divided by d_k, "
           "not by sqrt(d_k).")),
    "why_scale_length_myth": Mistake(  # the check words it: that is the myth '<label>'. <why>
        "03",
        N_("it only normalises vector length"),
        N_("dividing the score by sqrt(d_k) leaves q and k as they are (their length is about "
           "sqrt(d_k) each, and q.k / sqrt(d_k) is not a cosine); it fixes the spread of the "
           "scores, Var = 1.")),
    "why_scale_row_sums": Mistake(  # the check shows only the why
        "03",
        N_("the scale makes each row sum to 1"),
        N_("the softmax already makes every row sum to 1, with or without the scale. The scale "
           "changes how peaked the row is.")),
    # --- 04 Masking ---
    "mask_lower_triangle": Mistake(
        "04",
        N_("a mask that hides the past"),
        N_("query i may see keys j <= i: the -inf entries belong ABOVE the diagonal "
           "(np.triu(..., k=1)), not below it.")),
    "mask_hides_diagonal": Mistake(
        "04",
        N_("a mask that also hides the diagonal"),
        N_("every position may attend to itself; use k=1 in np.triu so the diagonal stays 0 "
           "(otherwise row 0 blocks every key).")),
    "mask_multiplicative": Mistake(
        "04",
        N_("a 0/1 (multiplicative) mask"),
        N_("our masks are ADDED to the scores: 0 where a key may be seen, -inf where it may not. "
           "A 1/0 mask added to the scores hides nothing.")),
    "mask_boolean_blocked": Mistake(
        "04",
        N_("a True/False 'is blocked' matrix"),
        N_("turn it into an additive mask: np.where(blocked, -np.inf, 0.0).")),
    # the next two are not bugs but another convention: check_causal_mask says so in its verdict
    "mask_large_negative": Mistake(
        "04",
        N_("a finite -1e9 instead of -inf"),
        N_("here it gives exactly the same weights (exp(-1e9) underflows to 0). It differs only on "
           "a row blocked everywhere: added to the scores, -1e9 leaves that row with the unmasked "
           "weights (the softmax ignores a constant added to a whole row), where -inf gives 0/0, "
           "which attention_core reports as an error (a plain softmax returns NaN). Much "
           "production code prefers a finite value, which keeps such rows free of NaN, but takes "
           "it from the dtype (torch.finfo(dtype).min): -1e9 overflows to -inf in float16. A "
           "trade-off, not a bug; this question asks for the course's -np.inf.")),
    "mask_finfo_min": Mistake(
        "04",
        N_("np.finfo(float).min instead of -inf"),
        N_("the most negative float64 is finite, so here it gives exactly the same weights. It "
           "differs only on a row blocked everywhere: every score plus np.finfo(float).min rounds "
           "to np.finfo(float).min, so that row gets uniform weights, where -inf gives 0/0 "
           "(attention_core's error, a plain softmax's NaN). It is what much production code uses "
           "(torch.finfo(dtype).min): a trade-off, not a bug; this question asks for the course's "
           "-np.inf.")),
    "mask_times_inf": Mistake(
        "04",
        N_("multiplying by -inf"),
        N_("0 x -inf is NaN, not 0: np.triu(np.ones((n, n)), 1) * -np.inf puts NaN on and below "
           "the diagonal, and one NaN turns a whole softmax row into NaN. "
           "Use np.where(blocked, -np.inf, 0.0).")),
    # --- 05 Multi-head attention ---
    "mha_scaled_by_d_model": Mistake(
        "05",
        N_("scaling every head by {scale}"),
        N_("each head compares queries and keys of width d_k = {d_k}, so each head divides its "
           "scores by sqrt(d_k) = sqrt({d_k}), not by {scale} = sqrt({d_model}).")),
    "mha_scaled_by_h_d_k": Mistake(
        "05",
        N_("scaling every head by sqrt(h*d_k)"),
        N_("each head compares queries and keys of width d_k = {d_k}, so each head divides its "
           "scores by sqrt(d_k) = sqrt({d_k}), not by sqrt(h*d_k) = sqrt({width}).")),
    "mha_not_split": Mistake(
        "05",
        N_("one head of width h*d_k (no split into heads)"),
        N_("split Q, K and V into h = {h} heads of width d_k = {d_k} (ac.split_heads), run "
           "attention in each head on its own, then concatenate. One head of width h*d_k = {width} "
           "has one softmax per query, so every feature is mixed with the same weights instead of "
           "each head choosing its own.")),
    "mha_counted_h_times": Mistake(
        "05",
        N_("counting every weight matrix h times"),
        N_("the h heads SHARE the columns of W_Q, W_K, W_V: each head has (d_model, d_k) = "
           "({d_model}, {d_k}) matrices, and h of them make one (d_model, h*d_k) = "
           "({d_model}, {d_model}) matrix, not h of them.")),
    "mha_forgot_W_O": Mistake(
        "05",
        N_("forgetting W_O"),
        N_("besides W_Q, W_K, W_V there is the output matrix W_O of shape (h*d_v, d_model) = "
           "({d_model}, {d_model}).")),
    "mha_one_head_only": Mistake(
        "05",
        N_("counting one head's W_Q, W_K, W_V"),
        N_("every one of the h = {h} heads has its own (d_model, d_k) blocks: together "
           "3 * d_model * h*d_k = 3 * d_model^2, plus W_O.")),
    "mha_with_biases": Mistake(
        "05",
        N_("adding biases"),
        N_("attention_core's multi_head_attention has no bias vectors (nor does this question); "
           "with a bias after each of the four matrices you would add 4 * d_model, but count only "
           "the weight matrices here.")),
    # --- 06 Positional encoding ---
    "pe_swapped_sin_cos": Mistake(
        "06",
        N_("swapping sin and cos"),
        N_("even dimensions 2i get sin, odd dimensions 2i+1 get cos; dim = {dim} is {parity}.")),
    "pe_exponent_i": Mistake(
        "06",
        N_("the exponent i/d_model"),
        N_("the exponent is 2i/d_model with the pair index i = {i} (here 2i/d_model = "
           "{two_i}/{d_model}), not i/d_model.")),
    "pe_exponent_dim": Mistake(
        "06",
        N_("using the dimension index dim in place of 2i"),
        N_("both dimensions of a pair share one frequency: dim = {dim} belongs to pair i = {i}, so "
           "the exponent is 2i/d_model = {two_i}/{d_model}, not {dim}/{d_model}.")),
    "pe_positions_from_1": Mistake(
        "06",
        N_("counting positions from 1"),
        N_("positions start at pos = 0 (the first token), as the rows of "
           "ac.sinusoidal_positional_encoding do.")),
    "pe_pair_index_rounded_up": Mistake(
        "06",
        N_("the pair index i = ceil(dim/2) = {i_up}"),
        N_("the pair index rounds DOWN: dim = {dim} = 2i + 1 gives i = dim // 2 = {i}, so the "
           "exponent is 2i/d_model = {two_i}/{d_model}, not {two_i_up}/{d_model}.")),
    "pe_not_permuted": Mistake(
        "06",
        N_("the unpermuted output"),
        N_("self-attention without positions is permutation-EQUIVARIANT, not invariant: the output "
           "rows move together with the input rows.")),
    "pe_inverse_permutation": Mistake(
        "06",
        N_("the inverse permutation"),
        N_("row r of the new input is X[perm[r]], so row r of the new output is Y[perm[r]]: index "
           "with perm, not with argsort(perm).")),
    # --- 07 Feed-forward network ---
    "ffn_no_biases": Mistake(
        "07",
        N_("forgetting the biases"),
        N_("FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 also learns b_1 (d_ff numbers) and b_2 "
           "(d_model numbers): the count is 2 d_model d_ff + d_ff + d_model.")),
    "ffn_one_bias": Mistake(
        "07",
        N_("counting only one of the two biases"),
        N_("there are two bias vectors, b_1 of shape (d_ff,) and b_2 of shape (d_model,); "
           "count both.")),
    "ffn_counted_like_attention": Mistake(
        "07",
        N_("counting the FFN like attention (4 d_model^2)"),
        N_("attention has four d_model x d_model matrices (W_Q, W_K, W_V, W_O); the FFN has two "
           "matrices, W_1 (d_model, d_ff) and W_2 (d_ff, d_model), with d_ff = 4 d_model, so "
           "2 d_model d_ff = 8 d_model^2, plus the biases d_ff + d_model.")),
    "ffn_square_weights": Mistake(
        "07",
        N_("using d_model x d_model weights"),
        N_("the hidden layer is wider than the model: W_1 is (d_model, d_ff), not "
           "(d_model, d_model).")),
    "ffn_relu_after_W_2": Mistake(
        "07",
        N_("the ReLU applied after W_2"),
        N_("the ReLU acts on the d_ff hidden units, between the two linear maps: "
           "max(0, x W_1 + b_1), then W_2 and b_2. Applied at the end it clips the output "
           "to >= 0 and leaves the two linear maps joined into one.")),
    "ffn_no_relu": Mistake(
        "07",
        N_("leaving out the ReLU"),
        N_("without max(0, .) the two layers collapse into a single linear map "
           "x (W_1 W_2) + (b_1 W_2 + b_2); the ReLU on the hidden units is the non-linearity.")),
    "ffn_missing_b_1": Mistake(
        "07",
        N_("a missing b_1"),
        N_("add the hidden bias b_1 before the ReLU: max(0, x W_1 + b_1). It moves where each "
           "hidden unit switches on.")),
    "ffn_missing_b_2": Mistake(
        "07",
        N_("a missing b_2"),
        N_("add the output bias b_2 at the very end: ... W_2 + b_2.")),
    # --- 08 The Transformer block ---
    "kv_from_decoder": Mistake(
        "08",
        N_("taking K and V from the decoder"),
        N_("in cross-attention (encoder-decoder attention) only the queries come from the decoder; "
           "the keys and values come from the encoder output (memory), so that every decoder "
           "position can read the source sentence. K and V from the decoder would just be the "
           "decoder's self-attention a second time.")),
    "kv_from_encoder_input": Mistake(
        "08",
        N_("taking K and V from the encoder's input embeddings"),
        N_("K and V come from the encoder's OUTPUT (after its last layer), the same memory for "
           "every decoder layer, not from the source embeddings.")),
    "cross_weights_transposed": Mistake(
        "08",
        N_("the transposed shape"),
        N_("rows are queries and columns are keys: the n decoder positions ask and the m encoder "
           "positions answer, so one head's weights are (n, m), each row summing to 1 over the "
           "m source positions; (m, n) is the transpose.")),
    "cross_weights_square": Mistake(
        "08",
        N_("a square shape"),
        N_("only self-attention is square; cross-attention compares n decoder queries with m "
           "encoder keys, so its weights are (n, m).")),
    "layer_norm_columns": Mistake(
        "08",
        N_("normalising the columns"),
        N_("layer norm works on each token (row) separately: mean and variance over its d_model "
           "features, axis=-1. Normalising each feature over the positions (axis=0) mixes "
           "tokens, like batch norm over the sequence.")),
    "layer_norm_unbiased_var": Mistake(
        "08",
        N_("the unbiased variance (ddof=1)"),
        N_("layer norm divides the sum of squares by d_model (biased variance: np.var's default, "
           "and what PyTorch's LayerNorm uses), not by d_model - 1.")),
    "layer_norm_std_only": Mistake(
        "08",
        N_("not subtracting the mean"),
        N_("layer norm first centres each row, x - mean(x), then divides by sqrt(var + eps).")),
    "cross_weights_all_heads": Mistake(
        "08",
        N_("the shape of all h = {h} heads, (h, n, m)"),
        N_("the question asks for one head, whose weights are one matrix (n, m), without the head "
           "axis.")),
    "cross_weights_leading_1": Mistake(
        "08",
        N_("a leading 1"),
        N_("an extra axis of length one; one head's weights are the matrix (n, m).")),
    # --- 09 The cost of attention ---
    "cost_forgot_heads": Mistake(
        "09",
        N_("one head only (n*n)"),
        N_("every head has its own n x n score matrix, so multiply by h = {h}.")),
    "cost_size_of_Q": Mistake(
        "09",
        N_("the size of Q (h*n*d_k)"),
        N_("n*d_k counts the numbers in Q or K; the score matrix has one entry per "
           "(query, key) pair{per_head}: n*n, whatever d_k is.")),
    "cost_size_of_one_head_Q": Mistake(
        "09",
        N_("the size of one head's Q (n*d_k)"),
        N_("n*d_k counts the numbers in Q or K; the score matrix has one entry per "
           "(query, key) pair: n*n per head, whatever d_k is.")),
    "cost_linear_in_n_per_head": Mistake(
        "09",
        N_("adding the positions (2n per head)"),
        N_("queries and keys are paired, not added: n queries times n keys = n*n pairs per head.")),
    "cost_linear_in_n": Mistake(
        "09",
        N_("adding the positions (2n)"),
        N_("queries and keys are paired, not added: n queries times n keys = n*n pairs per head, "
           "times h = {h} heads.")),
    "cost_float32_bytes": Mistake(
        "09",
        N_("4 bytes per number (float32)"),
        N_("numpy's default float is float64, 8 bytes per number; 4 bytes is float32.")),
    "cost_megabytes": Mistake(
        "09",
        N_("megabytes (MB, 10**6 bytes)"),
        N_("the question asks for MiB: 1 MiB = 2**20 = 1,048,576 bytes, a little more than "
           "1 MB = 1,000,000 bytes, so the MiB number is smaller.")),
    "cost_float32_bytes_and_megabytes": Mistake(
        "09",
        N_("4 bytes per number and MB"),
        N_("float64 takes 8 bytes per number, and 1 MiB = 2**20 bytes (not 10**6).")),
    "cost_bytes_not_mib": Mistake(
        "09",
        N_("leaving the answer in bytes"),
        N_("that is the number of bytes; divide by 2**20 = 1,048,576 to get MiB.")),
    "cost_entries_not_bytes": Mistake(
        "09",
        N_("counting entries instead of bytes"),
        N_("each float64 entry takes 8 bytes; multiply the entries by 8 before dividing by "
           "2**20.")),
    "cost_gib_not_mib": Mistake(
        "09",
        N_("GiB (2**30 bytes)"),
        N_("that is the size in GiB; the question asks for MiB (2**20 bytes).")),
    "cost_linear_growth": Mistake(
        "09",
        N_("linear growth ({factor}x)"),
        N_("there is one score per (query, key) pair: {factor}x the queries AND {factor}x the "
           "keys, and every query is paired with every key.")),
    "cost_cubic_growth": Mistake(
        "09",
        N_("cubic growth ({cube}x)"),
        N_("the score matrix has two axes (queries and keys), so it grows with the square of n.")),
    "online_no_rescale": Mistake(
        "09",
        N_("adding without rescaling the old sum"),
        N_("the old sum l was measured against the old maximum r; when the maximum rises to r' "
           "every old term exp(s - r) must become exp(s - r'), so multiply l by exp(r - r').")),
    "online_rescale_inverted": Mistake(
        "09",
        N_("rescaling by exp(r' - r)"),
        N_("the factor is exp(r - r') <= 1: the old terms shrink when the maximum rises.")),
    "online_old_max_kept": Mistake(
        "09",
        N_("keeping the old maximum r"),
        N_("the new running maximum is r' = max(r, max s); measure every term, old and new, "
           "against r' so no exp() can overflow.")),
    "cost_heads_main_cost": Mistake(
        "09",
        N_("treating the head count as the main cost"),
        N_("with d_k = d_v = d_model / h more heads are narrower heads, so all heads together do "
           "h n^2 (d_k + d_v) multiply-adds: put d_k = d_v = d_model / h in it and see what "
           "is left of h. On long inputs it is the n^2 pairs that cost: doubling n multiplies the "
           "work by 4. (The number of score entries, h n^2, does grow with h; the arithmetic does "
           "not.)")),
    "cost_heads_one_head": Mistake(
        "09",
        N_("counting one head's work only"),
        N_("one of {h_to} heads has d_k = d_model / {h_to} and does {h_from}/{h_to} of the work of "
           "one of {h_from} heads, but there are {h_to} of them: count the work of all heads "
           "together.")),
    # --- 10 Learning to attend ---
    "softmax_backward_diagonal_only": Mistake(
        "10",
        N_("only the diagonal of the Jacobian"),
        N_("p * dp keeps diag(p) and drops the - p p^T part (p as a column vector): every weight depends on every input "
           "through the shared denominator, so dx = p * (dp - sum_j p_j dp_j).")),
    "softmax_backward_missing_p": Mistake(
        "10",
        N_("forgetting the factor p"),
        N_("the Jacobian entry is p_i (delta_ij - p_j): dx = p * (dp - sum_j p_j dp_j), with the "
           "factor p in front; dp - sum_j p_j dp_j alone is missing it.")),
    "softmax_backward_wrong_axis": Mistake(
        "10",
        N_("the sum over the wrong axis"),
        N_("each row of weights is its own softmax (over the keys), so the sum p . dp runs along "
           "the row, axis=-1, keepdims=True; summing down the columns mixes different queries.")),
    "softmax_backward_used_scores": Mistake(
        "10",
        N_("using the scores instead of the weights"),
        N_("the formula needs the softmax OUTPUT p (the weights), not its input x: "
           "dx = p * (dp - sum_j p_j dp_j) with p = softmax(x).")),
    "dQ_no_scale": Mistake(
        "10",
        N_("forgetting 1/sqrt(d_k) in the backward pass"),
        N_("the scores are Q K^T / sqrt(d_k), so the chain rule brings the same factor back: "
           "dQ = dS K / sqrt(d_k).")),
    "dQ_skips_softmax": Mistake(
        "10",
        N_("skipping the softmax"),
        N_("dA = dO V^T is the gradient of the weights A, not of the scores S; go through the "
           "softmax first, dS = A * (dA - rowsum(A * dA)), then dQ = dS K / sqrt(d_k).")),
    "dQ_is_dK": Mistake(
        "10",
        N_("the gradient of K instead of Q"),
        N_("dS^T Q / sqrt(d_k) is dK (one row per key); for the queries multiply dS, one row per "
           "query, by K: dQ = dS K / sqrt(d_k).")),
    "dQ_transposed_scores": Mistake(
        "10",
        N_("the transposed score gradient"),
        N_("dS has one row per query (n, m), like S; dQ = dS K / sqrt(d_k) uses it as it is, "
           "without a transpose.")),
    "reversal_attends_itself": Mistake(
        "10",
        N_("a query that reads its own position"),
        N_("position i holds an output digit already written; the digit to predict next is in "
           "the input part of the sequence, at its mirror position.")),
    "reversal_off_by_one": Mistake(
        "10",
        N_("off by one: the digit already at position i"),
        N_("position i predicts the token at position i + 1, so it must read the digit that "
           "comes next in the reversed output; 2L - i is where the digit at position i itself "
           "came from: one position further.")),
    "reversal_copy": Mistake(
        "10",
        N_("the copying pattern"),
        N_("i - L is the key a copying task would read (the same order); reversing reads the "
           "input from its end.")),
    "reversal_previous_token": Mistake(
        "10",
        N_("the previous token"),
        N_("i - 1 is the previous position, the pattern of a 'previous token' head; the task "
           "needs the mirror image in the input.")),
    "adam_small_gradient_stops": Mistake(
        "10",
        N_("a small gradient means Adam stops moving"),
        N_("plain gradient descent moves by lr * g per step. Adam divides the running mean of g by the "
           "root of the running mean of g^2, so a gradient that stays the same size moves its "
           "parameter by about lr per step, whether g is 1e-2 or 1e-6; only g near eps = 1e-8, "
           "or a gradient that changes sign, slows it.")),
    # --- 11 Generating, and the KV cache ---
    "cache_no_heads": Mistake(
        "11",
        N_("the cache without its head axis"),
        N_("every head has its own keys: the cache of one layer is (h, t, d_k), one (t, d_k) "
           "block per head.")),
    "cache_transposed": Mistake(
        "11",
        N_("a transposed cache"),
        N_("keys are stored one row per position, as K is (m, d_k) in the forward pass: "
           "(h, t, d_k), not (h, d_k, t).")),
    "cache_off_by_one": Mistake(
        "11",
        N_("off by one"),
        N_("after t tokens have gone through the model the cache holds t keys: the prompt's and "
           "every generated token's, including the newest one.")),
    "cache_d_model": Mistake(
        "11",
        N_("d_model instead of d_k"),
        N_("the cache stores keys after W_K and the split into heads: each is d_k wide, not "
           "d_model.")),
    "cache_new_key_missing": Mistake(
        "11",
        N_("attending only to the older tokens"),
        N_("append the new token's key and value to the cache BEFORE the attention: a position "
           "may attend to itself (the causal mask keeps the diagonal).")),
    "cache_row_masked": Mistake(
        "11",
        N_("a causal mask on the single new row"),
        N_("the new query is the LAST position: it may see every cached key. causal_mask(t)[0] "
           "is the mask of the FIRST position and hides all keys but one.")),
    "cache_no_scaling": Mistake(
        "11",
        N_("no 1/sqrt(d_k)"),
        N_("the cached step computes the same attention as the full pass: "
           "softmax(q K^T / sqrt(d_k)) V.")),
    "recompute_count_last_step_only": Mistake(
        "11",
        N_("counting only the last step"),
        N_("without a cache EVERY step recomputes its whole prefix: step t compares t queries "
           "with t keys, t^2 score entries, and the steps add up.")),
    "cache_count_quadratic": Mistake(
        "11",
        N_("the cost of a full recompute"),
        N_("with a cache only the new query is compared with the t cached keys: t score entries "
           "at step t, not t^2.")),
    "recompute_count_cached": Mistake(
        "11",
        N_("the cached count where the recomputed one is asked"),
        N_("without a cache every step recomputes ALL its t queries, not only the new one: "
           "t^2 score entries at step t, not t.")),
    "weight_is_explanation": Mistake(
        "11",
        N_("an attention weight is an explanation"),
        N_("a weight says where a head reads, not that the answer depends on what it reads. In "
           "this notebook each head alone puts its largest weight on the right key on most rows, "
           "yet zeroing either head costs only a few points of accuracy: the other reads the "
           "same key. Only an intervention (zero the head, change the token) tests dependence.")),
    "cache_saves_memory": Mistake(
        "11",
        N_("the KV cache saves memory"),
        N_("the cache trades memory for time: it keeps 2 * layers * h * t * d_k numbers per "
           "sequence (0.5 MiB per token for Llama 2 7B in float16) so as not to recompute them; "
           "recomputing needs no cache at all.")),
    "count_off_by_one": Mistake(
        "11",
        N_("off by one in the sum"),
        N_("the steps run over t = 1, ..., T (the first token sees one key, the last sees T): "
           "check the first and the last term of your sum.")),
    # --- 12 Positions by rotation (RoPE) and by distance (ALiBi) ---
    "rope_wrong_layout": Mistake(
        "12",
        N_("the other RoPE layout"),
        N_("ac.rope pairs feature j with feature j + d/2 (split halves, as GPT-NeoX and Hugging "
           "Face's Llama do); interleaved=True pairs 2j with 2j + 1. The same numbers in the other "
           "layout rotate other pairs at other speeds: only position 0, which is not rotated, "
           "comes out the same.")),
    "rope_rotate_v": Mistake(
        "12",
        N_("rotating the values too"),
        N_("RoPE rotates the queries and the keys, so that their dot products see the offset; the "
           "values are what the weights average, and stay as X W_V.")),
    "rope_after_attention": Mistake(
        "12",
        N_("rotating after attention instead of before the scores"),
        N_("the rotation must act on q and k BEFORE their dot products: rotating the output (or "
           "anything after the scores) leaves the weights blind to position.")),
    "rope_theta_d": Mistake(
        "12",
        N_("theta computed with d where d/2 belongs"),
        N_("theta_j = base^(-2j/d) = base^(-j/(d/2)) for the d/2 pairs j = 0..d/2 - 1; base^(-j/d) "
           "makes every pair turn too fast, the slowest only about base^(1/2) times slower "
           "than the fastest.")),
    "rope_missing": Mistake(
        "12",
        N_("no rotation at all"),
        N_("that is plain causal attention: rotate Q and K with ac.rope before the scores.")),
    "rope_query_only": Mistake(
        "12",
        N_("rotating only the queries"),
        N_("the score depends on m - n only when BOTH sides are rotated, the query by m and the key "
           "by n; with the keys unrotated it depends on the query's absolute position.")),
    "rope_key_only": Mistake(
        "12",
        N_("rotating only the keys"),
        N_("the score depends on m - n only when BOTH sides are rotated, the query by m and the key "
           "by n; with the queries unrotated it depends on the key's absolute position.")),
    "rope_on_embeddings": Mistake(
        "12",
        N_("rotating X before the projections"),
        N_("rotate the queries and keys AFTER W_Q and W_K: a rotation of x does not pass through "
           "a learned matrix, so (x R) W_Q is not (x W_Q) R and the offset property is lost.")),
    "rope_cache_rotated_twice": Mistake(
        "12",
        N_("rotating the cache again"),
        N_("the cached keys were rotated once, at their own positions, when they were stored: "
           "rotate only the new token's query and key (at position {t}), not the cache.")),
    "rope_cache_offset": Mistake(
        "12",
        N_("forgetting the cache offset"),
        N_("the new token is at position {t}, not 0: rotate its query and key with "
           "positions=[{t}]. Rotated as position 0 on every step, its offsets to the cached keys "
           "come out wrong by t.")),
    "rope_cache_query_offset": Mistake(
        "12",
        N_("the new query rotated as position 0"),
        N_("the query of the token at position {t} must be rotated by {t} too (positions=[{t}]), "
           "like its key: the score sees the difference of the two positions.")),
    "rope_cache_key_unrotated": Mistake(
        "12",
        N_("the new key cached unrotated"),
        N_("every key in the cache is rotated once, at its own position, before it is stored: the "
           "new token's key needs positions=[{t}] as well.")),
    "alibi_geometric_any_h": Mistake(
        "12",
        N_("the geometric sequence for a head count that is not a power of two"),
        N_("2^(-8(r+1)/h) is ALiBi's rule only when h is a power of two. For h = {heads}: the slopes "
           "of the largest power of two p < h, then every other slope of 2p heads for the "
           "remaining h - p heads.")),
    "alibi_slopes_from_zero": Mistake(
        "12",
        N_("slopes starting at 2^0"),
        N_("the first head's slope is 2^(-8/p), not 1, with p the largest power of two <= h: the "
           "exponent runs over r + 1 = 1..p.")),
    "alibi_slopes_reversed": Mistake(
        "12",
        N_("the slopes in reverse order"),
        N_("head 0 has the steepest slope and the slopes fall from there; the order matters once "
           "a checkpoint's heads are trained with them.")),
    "alibi_slopes_sorted": Mistake(
        "12",
        N_("the slopes sorted"),
        N_("for {heads} heads the paper's rule does not give a falling sequence: the first p "
           "heads take the slopes of p heads, and the extra heads the in-between slopes of 2p "
           "heads, after them. Keep that order.")),
    "alibi_other_half": Mistake(
        "12",
        N_("every other slope from the second"),
        N_("the extra heads take the 1st, 3rd, 5th, ... slope of 2p heads: those lie between the "
           "p heads' slopes. From the second, 2p heads' slopes repeat slopes the first p heads "
           "already have.")),
    "alibi_slope_sign": Mistake(
        "12",
        N_("a slope with the wrong sign"),
        N_("the bias is -s_r (i - j) with s_r > 0: a penalty that grows with the distance. With "
           "the sign flipped, far keys are rewarded.")),
    "rope_inverse_permutation": Mistake(
        "12",
        N_("the column order of the other direction"),
        N_("W_Q[:, perm] puts old column perm[c] at new column c. The interleaved code reads pair "
           "j from columns 2j and 2j + 1, so those must receive the checkpoint's columns j and "
           "j + d/2; your order sends them the other way (it is the order for converting "
           "interleaved weights to split halves).")),
    # --- 13 Grouped-query and multi-query attention ---
    "gqa_heads_tiled": Mistake(
        "13",
        N_("K/V heads repeated in the wrong order (r % h_kv)"),
        N_("query head r reads K/V head r // (h / h_kv): the heads of one group are neighbours, "
           "so np.repeat(K, h // h_kv, axis=-3) gives K/V heads 0, 0, 1, 1 for h = 4, h_kv = 2. "
           "np.tile gives 0, 1, 0, 1 (head r % h_kv), which pairs query heads with another "
           "group's keys: a model trained one way computes something else the other way.")),
    "gqa_first_kv_head_only": Mistake(
        "13",
        N_("every query head reading K/V head 0"),
        N_("that is multi-query attention with the first head's keys; with h_kv key/value heads "
           "each group of h / h_kv query heads has its own.")),
    "mask_top_left_with_cache": Mistake(
        "13",
        N_("the top-left causal mask with a cache (torch's is_causal=True for n != m)"),
        N_("the n new queries are the LAST n of the m positions: query i sits at position "
           "i + m - n and sees keys 0 .. i + m - n. The top-left mask lets query i see only keys "
           "0 .. i, as if the new queries came first, and hides most of the cache from them. "
           "ac.causal_mask(n, m) (torch: causal_lower_right) is aligned at the bottom right.")),
    "kv_cache_query_heads": Mistake(
        "13",
        N_("counting the query heads h instead of the K/V heads h_kv"),
        N_("the cache holds keys and values, and there are only h_kv of those heads; the queries "
           "of the h heads are used once and never cached.")),
    "kv_cache_keys_only": Mistake(
        "13",
        N_("keys only, no values"),
        N_("the cache holds a key AND a value per position and K/V head: the factor 2.")),
    "kv_cache_one_layer": Mistake(
        "13",
        N_("one layer only"),
        N_("every layer has its own keys and values, so its own cache: multiply by the layers.")),
    "kv_cache_in_kib": Mistake(
        "13",
        N_("kibibytes instead of bytes"),
        N_("that is the count in KiB (bytes / 1,024); the question asks for bytes.")),
    "kv_cache_in_bits": Mistake(
        "13",
        N_("bits instead of bytes"),
        N_("that is the count in bits (8 per byte); the question asks for bytes.")),
    "gqa_fewer_scores": Mistake(
        "13",
        N_("sharing K/V heads computes fewer scores"),
        N_("each of the h query heads still compares its n queries with all m keys, h * n * m "
           "scores as in multi-head attention; sharing saves the K/V projections, the cache and "
           "the memory traffic of reading it, not the score arithmetic.")),
    # --- 14 Sliding windows and attention sinks ---
    "window_off_by_one": Mistake(
        "14",
        N_("a window of window + 1 keys"),
        N_("a window of w means w keys, the query's own position included: p - w + 1 .. p. "
           "Keys p - w .. p are w + 1.")),
    "window_off_by_one_short": Mistake(
        "14",
        N_("a window of window - 1 keys"),
        N_("a window of w means w keys, the query's own position included: p - w + 1 .. p. "
           "Leaving the query itself out, or stopping at p - w + 2, keeps only w - 1.")),
    "window_not_causal": Mistake(
        "14",
        N_("a window that is not causal"),
        N_("|i - j| < w is a band on both sides of the diagonal: each query also sees the next "
           "w - 1 tokens. A decoder's window must also hide the future: j <= i as well as "
           "j > i - w.")),
    "window_future_visible": Mistake(
        "14",
        N_("a window without its causal edge"),
        N_("j > i - w alone cuts off the old keys but lets every query see all later ones. The "
           "window is the causal mask AND the lower edge: i - w < j <= i.")),
    "reach_off_by_one": Mistake(
        "14",
        N_("L w instead of L (w - 1)"),
        N_("each layer moves information back at most w - 1 positions (the window includes the "
           "query itself, which moves it by 0), so L layers reach L (w - 1) back. L w is right "
           "only for a window of w + 1 positions, i - w .. i: the literal reading of Mistral 7B's "
           "paper, whose 32 x 4096 counts such a window.")),
    "reach_one_layer": Mistake(
        "14",
        N_("the reach of one layer"),
        N_("w - 1 is what one layer reaches. Layer 2 reads layer 1's outputs, which already "
           "mix w positions each: the reach adds up over the layers.")),
    "evict_sinks": Mistake(
        "14",
        N_("evicting the sinks"),
        N_("with s sinks the first s positions are never evicted: the cache holds positions "
           "0..s-1 and the most recent w, s + w rows. A plain rolling cache evicts them.")),
    "cache_window_off_by_one": Mistake(
        "14",
        N_("a window of the wrong length in the cache"),
        N_("the most recent w positions after position t are t - w + 1 .. t, the newest "
           "included: w of them.")),
})
