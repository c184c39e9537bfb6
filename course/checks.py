"""Self-checks: the Verdict a check returns, and the one registry of named mistakes.

A learner writes an answer in code and passes it to a check. The check
compares it with what ``attention_core`` computes and returns a ``Verdict``
whose text is shown as the cell's output:

- the answer is still ``...`` (the committed state): "Not answered yet ...";
- it matches: "Correct ...";
- it matches what a classic mistake produces (softmax over the wrong axis,
  scaling after softmax, no scaling, dividing by d_k, masking V instead of the
  scores, transposed weights, wrong W_O shape, ...): the mistake is named and
  explained;
- otherwise: where the largest difference is, and what to look at.

Checks never raise on a wrong answer, so a notebook always runs to the end.

The checks shared by several notebooks (attention weights and outputs) are here;
each notebook's own checks are in its companion module, course/nbNN_topic.py.
Every mistake a check can name is an entry of ``MISTAKES``.

Every self-check question has an entry in ``QUESTIONS``: a hint and a worked solution, which
a learner asks for, after trying, with ``hint("04.causal_mask")`` and
``solution("04.causal_mask")`` (each companion offers both: ``nb04.hint``). The instructor
key (scripts/classroom.py) is built from the same solutions.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

import attention_core as ac

UNANSWERED = "unanswered"
CORRECT = "correct"
MISTAKE = "mistake"
WRONG = "wrong"


@dataclass(frozen=True)
class Verdict:
    """Result of a check: status, the message shown, and the recognised mistake (if any)."""

    status: str
    message: str
    mistake: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == CORRECT

    def __repr__(self) -> str:
        return self.message

    def __str__(self) -> str:
        return self.message


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
        "softmax over the wrong axis",
        "softmax must run along each row (over the keys, axis=-1) so that every "
        "query's weights sum to 1; yours normalises each column (over the queries)."),
    "scale_after_softmax": Mistake(
        "03",
        "scaling after softmax",
        "divide the scores by sqrt(d_k) BEFORE the softmax; dividing the weights "
        "afterwards leaves rows that no longer sum to 1 and does not prevent saturation."),
    "no_scaling": Mistake(
        "03",
        "no scaling",
        "the scores must be divided by sqrt(d_k) before the softmax; without it "
        "Var[q.k] = d_k and the softmax saturates for large d_k."),
    "divide_by_d_k": Mistake(
        "03",
        "dividing by d_k instead of sqrt(d_k)",
        "the standard deviation of q.k is sqrt(d_k), so the scale is 1/sqrt(d_k); "
        "dividing by d_k shrinks the scores too much and flattens the weights."),
    "mask_on_values": Mistake(
        "04",
        "masking V instead of the scores",
        "the mask must be added to the scores before the softmax; zeroing the "
        "blocked values leaves the blocked keys in the softmax, so the remaining "
        "weights no longer sum to 1 and the positions still compete."),
    "mask_after_softmax": Mistake(
        "04",
        "masking after the softmax",
        "zeroing weights after the softmax leaves rows that do not sum to 1; add the "
        "mask (0 / -inf) to the scores before the softmax."),
    "mask_missing": Mistake(
        "04",
        "no mask",
        "this is the unmasked result: add the mask (0 where allowed, -inf where "
        "not) to the scaled scores before the softmax."),
    "transposed_weights": Mistake(
        "02",
        "transposed weights",
        "rows are queries and columns are keys: A = softmax(Q K^T / sqrt(d_k)) has shape "
        "(n, m) and its ROWS sum to 1; yours is the transpose A^T, whose columns sum to 1."),
    "transposed_scores": Mistake(
        "02",
        "transposed scores",
        "S = Q K^T has shape (n, m), query i and key j at row i, column j; yours starts from "
        "K Q^T = S^T, shape (m, n), with the keys in the rows."),
    "W_O_uses_d_k": Mistake(
        "05",
        "wrong W_O shape: (h*d_k, d_model)",
        "W_O multiplies the concatenated VALUE heads, so its first dimension is h*d_v, "
        "not h*d_k (they differ whenever d_k != d_v)."),
    "W_O_transposed": Mistake(
        "05",
        "wrong W_O shape: transposed",
        "with row vectors, Concat(heads) (n, h*d_v) @ W_O must give (n, d_model), so W_O "
        "is (h*d_v, d_model), not (d_model, h*d_v)."),
    "W_O_single_head": Mistake(
        "05",
        "wrong W_O shape: one head's width",
        "W_O reads all heads at once: its first dimension is h*d_v, not d_v."),
    "no_W_O": Mistake(
        "05",
        "W_O left out",
        "the concatenated heads (n, h*d_v) must still be multiplied by W_O "
        "(h*d_v, d_model) to mix the heads and return to d_model."),
    # --- 01 Q, K, V projections ---
    "weight_shapes": Mistake(
        "01",
        "the shapes of the weight matrices",
        "(d_model, d_k), (d_model, d_k), (d_model, d_v) are W_Q, W_K, W_V; Q = X W_Q has one "
        "row per token, so Q and K are (n, d_k) and V is (n, d_v)."),
    "V_uses_d_k": Mistake(
        "01",
        "V with width d_k",
        "V = X W_V takes its width from W_V, which is (d_model, d_v): V is (n, d_v), and d_v "
        "need not equal d_k."),
    "column_convention": Mistake(
        "01",
        "the column (transposed) convention",
        "this course uses row vectors: each token is a ROW, so Q = X W_Q is (n, d_k), not (d_k, n)."),
    "no_projection": Mistake(
        "01",
        "the width of X",
        "the projections change the width: X is (n, d_model), but Q, K are (n, d_k) and V is "
        "(n, d_v)."),
    "library_picked_one_book": Mistake(
        "01",
        "picking the single best book",
        "attention does not choose one book{tie}: it mixes all of them, each with weight "
        "softmax(q k_j / sqrt(d_k)) > 0."),
    "library_hard_max": Mistake(
        "01",
        "the hard maximum (argmax) instead of the softmax",
        "sharing the weight equally among the {count} best books is what a hard maximum "
        "does: the softmax of scores scaled up without limit. Softmax is a SOFT maximum: the "
        "best books get the most, but every book, even a weaker match, keeps a weight "
        "exp(s_j / sqrt(d_k)) / sum_l exp(s_l / sqrt(d_k)) > 0."),
    "library_no_softmax": Mistake(
        "01",
        "the scaled scores without the softmax",
        "the scaled scores q k_j^T / sqrt(d_k) still have to go through the softmax to become "
        "positive weights that sum to 1."),
    "scores_compare_values": Mistake(
        "01",
        "comparing V with V",
        "the scores compare what each position looks for with how every position can be found: "
        "S = Q K^T, queries with keys. The values are what the weights mix afterwards, O = A V; "
        "V V^T only says how alike the contents are, not what any token is looking for."),
    "scores_compare_queries": Mistake(
        "01",
        "comparing Q with Q",
        "Q Q^T compares the queries with each other, as if the keys were the queries (the Q = K "
        "shortcut of section 5, with its symmetric scores); the scores pair every query with "
        "every KEY: S = Q K^T."),
    # --- 02 The worked 3x2 example ---
    "hand_softmax_down_columns": Mistake(
        "02",
        "softmax down the columns",
        "each weight must be divided by the sum over its ROW (the same query, all keys): "
        "a_ij = exp(s~_ij) / sum_l exp(s~_il); yours divides by a column sum."),
    "hand_column_of_A": Mistake(
        "02",
        "softmax down the columns (or column {i} of A)",
        "each weight must be divided by the sum over its ROW (the same query, all keys): "
        "a_ij = exp(s~_ij) / sum_l exp(s~_il). Yours either divides by a column sum or reads "
        "column {i} of A instead of row {i}: S is symmetric here, so both slips give the same "
        "numbers."),
    "hand_exp_not_normalised": Mistake(
        "02",
        "exp() without dividing by the sum",
        "softmax divides each exp(s~_ij) by the row's sum so the weights add up to 1."),
    "hand_no_softmax": Mistake(
        "02",
        "the scaled scores without the softmax",
        "the scaled scores s~_ij = s_ij / sqrt(d_k) still go through exp and the division "
        "by the row sum."),
    "hand_mixed_keys": Mistake(
        "02",
        "mixing the keys instead of the values",
        "the weights decide HOW MUCH of each token to take; what is taken is the value v_j, "
        "not the key k_j."),
    "hand_plain_mean": Mistake(
        "02",
        "the plain average of the values",
        "the values are averaged WITH the attention weights a_ij, not with equal weights 1/m."),
    # --- 03 Scaling and softmax saturation ---
    "var_std_for_variance": Mistake(
        "03",
        "the standard deviation sqrt(d_k)",
        "the variance of a sum of d_k independent terms q_i k_i, each of variance 1, is d_k; "
        "sqrt(d_k) is its standard deviation."),
    "var_after_scaling": Mistake(
        "03",
        "the variance after scaling",
        "each term q_i k_i has variance 1, but there are d_k of them and the variances of "
        "independent terms add up: Var[q.k] = d_k."),
    "var_before_scaling": Mistake(
        "03",
        "the variance before scaling",
        "dividing q.k by sqrt(d_k) divides its variance by (sqrt(d_k))^2 = d_k, so d_k "
        "becomes 1."),
    "var_divided_by_sqrt": Mistake(
        "03",
        "dividing the variance by sqrt(d_k) once",
        "Var[X / c] = Var[X] / c^2: with c = sqrt(d_k) the variance d_k is divided by d_k, "
        "not by sqrt(d_k)."),
    "why_scale_length_myth": Mistake(  # the check words it: that is the myth '<label>'. <why>
        "03",
        "it only normalises vector length",
        "dividing the score by sqrt(d_k) leaves q and k as they are (their length is about "
        "sqrt(d_k) each, and q.k / sqrt(d_k) is not a cosine); it fixes the spread of the "
        "scores, Var = 1."),
    "why_scale_row_sums": Mistake(  # the check shows only the why
        "03",
        "the scale makes each row sum to 1",
        "the softmax already makes every row sum to 1, with or without the scale. The scale "
        "changes how peaked the row is."),
    # --- 04 Masking ---
    "mask_lower_triangle": Mistake(
        "04",
        "a mask that hides the past",
        "query i may see keys j <= i: the -inf entries belong ABOVE the diagonal "
        "(np.triu(..., k=1)), not below it."),
    "mask_hides_diagonal": Mistake(
        "04",
        "a mask that also hides the diagonal",
        "every position may attend to itself; use k=1 in np.triu so the diagonal stays 0 "
        "(otherwise row 0 blocks every key)."),
    "mask_multiplicative": Mistake(
        "04",
        "a 0/1 (multiplicative) mask",
        "our masks are ADDED to the scores: 0 where a key may be seen, -inf where it may not. "
        "A 1/0 mask added to the scores hides nothing."),
    "mask_boolean_blocked": Mistake(
        "04",
        "a True/False 'is blocked' matrix",
        "turn it into an additive mask: np.where(blocked, -np.inf, 0.0)."),
    # the next two are not bugs but another convention: check_causal_mask says so in its verdict
    "mask_large_negative": Mistake(
        "04",
        "a finite -1e9 instead of -inf",
        "here it gives exactly the same weights (exp(-1e9) underflows to 0). It differs only on "
        "a row blocked everywhere: added to the scores, -1e9 leaves that row with the unmasked "
        "weights (the softmax ignores a constant added to a whole row), where -inf gives 0/0, "
        "which attention_core reports as an error (a plain softmax returns NaN). Much "
        "production code prefers a finite value, which keeps such rows free of NaN, but takes it "
        "from the dtype (torch.finfo(dtype).min): -1e9 overflows to -inf in float16. A "
        "trade-off, not a bug; this question asks for the course's -np.inf."),
    "mask_finfo_min": Mistake(
        "04",
        "np.finfo(float).min instead of -inf",
        "the most negative float64 is finite, so here it gives exactly the same weights. It "
        "differs only on a row blocked everywhere: every score plus np.finfo(float).min rounds to "
        "np.finfo(float).min, so that row gets uniform weights, where -inf gives 0/0 "
        "(attention_core's error, a plain softmax's NaN). It is what much production code uses "
        "(torch.finfo(dtype).min): a trade-off, not a bug; this question asks for the course's "
        "-np.inf."),
    "mask_times_inf": Mistake(
        "04",
        "multiplying by -inf",
        "0 x -inf is NaN, not 0: np.triu(np.ones((n, n)), 1) * -np.inf puts NaN on and below "
        "the diagonal, and one NaN turns a whole softmax row into NaN. "
        "Use np.where(blocked, -np.inf, 0.0)."),
    # --- 05 Multi-head attention ---
    "mha_scaled_by_d_model": Mistake(
        "05",
        "scaling every head by {scale}",
        "each head compares queries and keys of width d_k = {d_k}, so each head divides its "
        "scores by sqrt(d_k) = sqrt({d_k}), not by {scale} = sqrt({d_model})."),
    "mha_scaled_by_h_d_k": Mistake(
        "05",
        "scaling every head by sqrt(h*d_k)",
        "each head compares queries and keys of width d_k = {d_k}, so each head divides its "
        "scores by sqrt(d_k) = sqrt({d_k}), not by sqrt(h*d_k) = sqrt({width})."),
    "mha_not_split": Mistake(
        "05",
        "one head of width h*d_k (no split into heads)",
        "split Q, K and V into h = {h} heads of width d_k = {d_k} (ac.split_heads), run "
        "attention in each head on its own, then concatenate. One head of width h*d_k = {width} "
        "has one softmax per query, so every feature is mixed with the same weights instead of "
        "each head choosing its own."),
    "mha_counted_h_times": Mistake(
        "05",
        "counting every weight matrix h times",
        "the h heads SHARE the columns of W_Q, W_K, W_V: each head has (d_model, d_k) = "
        "({d_model}, {d_k}) matrices, and h of them make one (d_model, h*d_k) = "
        "({d_model}, {d_model}) matrix, not h of them."),
    "mha_forgot_W_O": Mistake(
        "05",
        "forgetting W_O",
        "besides W_Q, W_K, W_V there is the output matrix W_O of shape (h*d_v, d_model) = "
        "({d_model}, {d_model})."),
    "mha_one_head_only": Mistake(
        "05",
        "counting one head's W_Q, W_K, W_V",
        "every one of the h = {h} heads has its own (d_model, d_k) blocks: together "
        "3 * d_model * h*d_k = 3 * d_model^2, plus W_O."),
    "mha_with_biases": Mistake(
        "05",
        "adding biases",
        "attention_core's multi_head_attention has no bias vectors (nor does this question); "
        "with a bias after each of the four matrices you would add 4 * d_model, but count only "
        "the weight matrices here."),
    # --- 06 Positional encoding ---
    "pe_swapped_sin_cos": Mistake(
        "06",
        "swapping sin and cos",
        "even dimensions 2i get sin, odd dimensions 2i+1 get cos; dim = {dim} is {parity}."),
    "pe_exponent_i": Mistake(
        "06",
        "the exponent i/d_model",
        "the exponent is 2i/d_model with the pair index i = {i} (here 2i/d_model = "
        "{two_i}/{d_model}), not i/d_model."),
    "pe_exponent_dim": Mistake(
        "06",
        "using the dimension index dim in place of 2i",
        "both dimensions of a pair share one frequency: dim = {dim} belongs to pair i = {i}, so "
        "the exponent is 2i/d_model = {two_i}/{d_model}, not {dim}/{d_model}."),
    "pe_positions_from_1": Mistake(
        "06",
        "counting positions from 1",
        "positions start at pos = 0 (the first token), as the rows of "
        "ac.sinusoidal_positional_encoding do."),
    "pe_pair_index_rounded_up": Mistake(
        "06",
        "the pair index i = ceil(dim/2) = {i_up}",
        "the pair index rounds DOWN: dim = {dim} = 2i + 1 gives i = dim // 2 = {i}, so the "
        "exponent is 2i/d_model = {two_i}/{d_model}, not {two_i_up}/{d_model}."),
    "pe_not_permuted": Mistake(
        "06",
        "the unpermuted output",
        "self-attention without positions is permutation-EQUIVARIANT, not invariant: the output "
        "rows move together with the input rows."),
    "pe_inverse_permutation": Mistake(
        "06",
        "the inverse permutation",
        "row r of the new input is X[perm[r]], so row r of the new output is Y[perm[r]]: index "
        "with perm, not with argsort(perm)."),
    # --- 07 Feed-forward network ---
    "ffn_no_biases": Mistake(
        "07",
        "forgetting the biases",
        "FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 also learns b_1 (d_ff numbers) and b_2 "
        "(d_model numbers): the count is 2 d_model d_ff + d_ff + d_model."),
    "ffn_one_bias": Mistake(
        "07",
        "counting only one of the two biases",
        "there are two bias vectors, b_1 of shape (d_ff,) and b_2 of shape (d_model,); "
        "count both."),
    "ffn_counted_like_attention": Mistake(
        "07",
        "counting the FFN like attention (4 d_model^2)",
        "attention has four d_model x d_model matrices (W_Q, W_K, W_V, W_O); the FFN has two "
        "matrices, W_1 (d_model, d_ff) and W_2 (d_ff, d_model), with d_ff = 4 d_model, so "
        "2 d_model d_ff = 8 d_model^2, plus the biases d_ff + d_model."),
    "ffn_square_weights": Mistake(
        "07",
        "using d_model x d_model weights",
        "the hidden layer is wider than the model: W_1 is (d_model, d_ff), not (d_model, d_model)."),
    "ffn_relu_after_W_2": Mistake(
        "07",
        "the ReLU applied after W_2",
        "the ReLU acts on the d_ff hidden units, between the two linear maps: "
        "max(0, x W_1 + b_1), then W_2 and b_2. Applied at the end it clips the output "
        "to >= 0 and leaves the two linear maps joined into one."),
    "ffn_no_relu": Mistake(
        "07",
        "leaving out the ReLU",
        "without max(0, .) the two layers collapse into a single linear map "
        "x (W_1 W_2) + (b_1 W_2 + b_2); the ReLU on the hidden units is the non-linearity."),
    "ffn_missing_b_1": Mistake(
        "07",
        "a missing b_1",
        "add the hidden bias b_1 before the ReLU: max(0, x W_1 + b_1). It moves where each "
        "hidden unit switches on."),
    "ffn_missing_b_2": Mistake(
        "07",
        "a missing b_2",
        "add the output bias b_2 at the very end: ... W_2 + b_2."),
    # --- 08 The Transformer block ---
    "kv_from_decoder": Mistake(
        "08",
        "taking K and V from the decoder",
        "in cross-attention (encoder-decoder attention) only the queries come from the decoder; "
        "the keys and values come from the encoder output (memory), so that every decoder "
        "position can read the source sentence. K and V from the decoder would just be the "
        "decoder's self-attention a second time."),
    "kv_from_encoder_input": Mistake(
        "08",
        "taking K and V from the encoder's input embeddings",
        "K and V come from the encoder's OUTPUT (after its last layer), the same memory for "
        "every decoder layer, not from the source embeddings."),
    "cross_weights_transposed": Mistake(
        "08",
        "the transposed shape",
        "rows are queries and columns are keys: the n decoder positions ask and the m encoder "
        "positions answer, so one head's weights are (n, m), each row summing to 1 over the "
        "m source positions; (m, n) is the transpose."),
    "cross_weights_square": Mistake(
        "08",
        "a square shape",
        "only self-attention is square; cross-attention compares n decoder queries with m "
        "encoder keys, so its weights are (n, m)."),
    "layer_norm_columns": Mistake(
        "08",
        "normalising the columns",
        "layer norm works on each token (row) separately: mean and variance over its d_model "
        "features, axis=-1. Normalising each feature over the positions (axis=0) mixes "
        "tokens, like batch norm over the sequence."),
    "layer_norm_unbiased_var": Mistake(
        "08",
        "the unbiased variance (ddof=1)",
        "layer norm divides the sum of squares by d_model (biased variance: np.var's default, "
        "and what PyTorch's LayerNorm uses), not by d_model - 1."),
    "layer_norm_std_only": Mistake(
        "08",
        "not subtracting the mean",
        "layer norm first centres each row, x - mean(x), then divides by sqrt(var + eps)."),
    "cross_weights_all_heads": Mistake(
        "08",
        "the shape of all h = {h} heads, (h, n, m)",
        "the question asks for one head, whose weights are (n, m) = {one_head}."),
    "cross_weights_leading_1": Mistake(
        "08",
        "a leading 1",
        "an extra axis of length one; one head's weights are the matrix (n, m) = {one_head}."),
    # --- 09 The cost of attention ---
    "cost_forgot_heads": Mistake(
        "09",
        "one head only (n*n)",
        "every head has its own n x n score matrix, so multiply by h = {h}."),
    "cost_size_of_Q": Mistake(
        "09",
        "the size of Q (h*n*d_k)",
        "n*d_k counts the numbers in Q or K; the score matrix has one entry per "
        "(query, key) pair{per_head}: n*n, whatever d_k is."),
    "cost_size_of_one_head_Q": Mistake(
        "09",
        "the size of one head's Q (n*d_k)",
        "n*d_k counts the numbers in Q or K; the score matrix has one entry per "
        "(query, key) pair: n*n per head, whatever d_k is."),
    "cost_linear_in_n_per_head": Mistake(
        "09",
        "adding the positions (2n per head)",
        "queries and keys are paired, not added: n queries times n keys = n*n pairs per head."),
    "cost_linear_in_n": Mistake(
        "09",
        "adding the positions (2n)",
        "queries and keys are paired, not added: n queries times n keys = n*n pairs per head, "
        "times h = {h} heads."),
    "cost_float32_bytes": Mistake(
        "09",
        "4 bytes per number (float32)",
        "numpy's default float is float64, 8 bytes per number; 4 bytes is float32."),
    "cost_megabytes": Mistake(
        "09",
        "megabytes (MB, 10**6 bytes)",
        "the question asks for MiB: 1 MiB = 2**20 = 1,048,576 bytes, a little more than "
        "1 MB = 1,000,000 bytes, so the MiB number is smaller."),
    "cost_float32_bytes_and_megabytes": Mistake(
        "09",
        "4 bytes per number and MB",
        "float64 takes 8 bytes per number, and 1 MiB = 2**20 bytes (not 10**6)."),
    "cost_bytes_not_mib": Mistake(
        "09",
        "leaving the answer in bytes",
        "that is the number of bytes; divide by 2**20 = 1,048,576 to get MiB."),
    "cost_entries_not_bytes": Mistake(
        "09",
        "counting entries instead of bytes",
        "each float64 entry takes 8 bytes; multiply the entries by 8 before dividing by 2**20."),
    "cost_gib_not_mib": Mistake(
        "09",
        "GiB (2**30 bytes)",
        "that is the size in GiB; the question asks for MiB (2**20 bytes)."),
    "cost_linear_growth": Mistake(
        "09",
        "linear growth ({factor}x)",
        "there is one score per (query, key) pair: {factor}x the queries times {factor}x the "
        "keys is {square}x the pairs."),
    "cost_cubic_growth": Mistake(
        "09",
        "cubic growth ({cube}x)",
        "the score matrix has two axes (queries and keys), so it grows with the square of n."),
    "online_no_rescale": Mistake(
        "09",
        "adding without rescaling the old sum",
        "the old sum l was measured against the old maximum r; when the maximum rises to r' "
        "every old term exp(s - r) must become exp(s - r'), so multiply l by exp(r - r')."),
    "online_rescale_inverted": Mistake(
        "09",
        "rescaling by exp(r' - r)",
        "the factor is exp(r - r') <= 1: the old terms shrink when the maximum rises."),
    "online_old_max_kept": Mistake(
        "09",
        "keeping the old maximum r",
        "the new running maximum is r' = max(r, max s); measure every term, old and new, "
        "against r' so no exp() can overflow."),
    "cost_heads_main_cost": Mistake(
        "09",
        "treating the head count as the main cost",
        "with d_k = d_v = d_model / h more heads are narrower heads, so all heads together do "
        "h n^2 (d_k + d_v) = 2 n^2 d_model multiply-adds, the same for h = {h_from} and "
        "h = {h_to}. On long inputs it is the n^2 pairs that cost: doubling n multiplies the "
        "work by 4. (The number of score entries, h n^2, does grow with h; the arithmetic does "
        "not.)"),
    "cost_heads_one_head": Mistake(
        "09",
        "counting one head's work only",
        "one of {h_to} heads has d_k = d_model / {h_to} and does {h_from}/{h_to} of the work of "
        "one of {h_from} heads, but there are {h_to} of them: all heads together still do "
        "2 n^2 d_model multiply-adds."),
    # --- 10 Learning to attend ---
    "softmax_backward_diagonal_only": Mistake(
        "10",
        "only the diagonal of the Jacobian",
        "p * dp keeps diag(p) and drops the - p^T p part: every weight depends on every input "
        "through the shared denominator, so dx = p * (dp - sum_j p_j dp_j)."),
    "softmax_backward_missing_p": Mistake(
        "10",
        "forgetting the factor p",
        "the Jacobian entry is p_i (delta_ij - p_j): dx = p * (dp - sum_j p_j dp_j), with the "
        "factor p in front; dp - sum_j p_j dp_j alone is missing it."),
    "softmax_backward_wrong_axis": Mistake(
        "10",
        "the sum over the wrong axis",
        "each row of weights is its own softmax (over the keys), so the sum p . dp runs along "
        "the row, axis=-1, keepdims=True; summing down the columns mixes different queries."),
    "softmax_backward_used_scores": Mistake(
        "10",
        "using the scores instead of the weights",
        "the formula needs the softmax OUTPUT p (the weights), not its input x: "
        "dx = p * (dp - sum_j p_j dp_j) with p = softmax(x)."),
    "dQ_no_scale": Mistake(
        "10",
        "forgetting 1/sqrt(d_k) in the backward pass",
        "the scores are Q K^T / sqrt(d_k), so the chain rule brings the same factor back: "
        "dQ = dS K / sqrt(d_k)."),
    "dQ_skips_softmax": Mistake(
        "10",
        "skipping the softmax",
        "dA = dO V^T is the gradient of the weights A, not of the scores S; go through the "
        "softmax first, dS = A * (dA - rowsum(A * dA)), then dQ = dS K / sqrt(d_k)."),
    "dQ_is_dK": Mistake(
        "10",
        "the gradient of K instead of Q",
        "dS^T Q / sqrt(d_k) is dK (one row per key); for the queries multiply dS, one row per "
        "query, by K: dQ = dS K / sqrt(d_k)."),
    "dQ_transposed_scores": Mistake(
        "10",
        "the transposed score gradient",
        "dS has one row per query (n, m), like S; dQ = dS K / sqrt(d_k) uses it as it is, "
        "without a transpose."),
    "reversal_attends_itself": Mistake(
        "10",
        "a query that reads its own position",
        "position i holds an output digit already written; the digit to predict next is in "
        "the input part of the sequence, at the mirror position 2L - 1 - i."),
    "reversal_off_by_one": Mistake(
        "10",
        "off by one: the digit already at position i",
        "position i predicts the token at position i + 1, so it must read the digit that "
        "comes next in the reversed output; 2L - i is where the digit at position i itself "
        "came from. The answer is 2L - 1 - i."),
    "reversal_copy": Mistake(
        "10",
        "the copying pattern",
        "i - L is the key a copying task would read (the same order); reversing reads the "
        "input from its end, key 2L - 1 - i."),
    "reversal_previous_token": Mistake(
        "10",
        "the previous token",
        "i - 1 is the previous position, the pattern of a 'previous token' head; the task "
        "needs the mirror image in the input, 2L - 1 - i."),
    # --- 11 Generating, and the KV cache ---
    "cache_no_heads": Mistake(
        "11",
        "the cache without its head axis",
        "every head has its own keys: the cache of one layer is (h, t, d_k), one (t, d_k) "
        "block per head."),
    "cache_transposed": Mistake(
        "11",
        "a transposed cache",
        "keys are stored one row per position, as K is (m, d_k) in the forward pass: "
        "(h, t, d_k), not (h, d_k, t)."),
    "cache_off_by_one": Mistake(
        "11",
        "off by one",
        "after t tokens have gone through the model the cache holds t keys: the prompt's and "
        "every generated token's, including the newest one."),
    "cache_d_model": Mistake(
        "11",
        "d_model instead of d_k",
        "the cache stores keys after W_K and the split into heads: each is d_k wide, not "
        "d_model."),
    "cache_new_key_missing": Mistake(
        "11",
        "attending only to the older tokens",
        "append the new token's key and value to the cache BEFORE the attention: a position "
        "may attend to itself (the causal mask keeps the diagonal)."),
    "cache_row_masked": Mistake(
        "11",
        "a causal mask on the single new row",
        "the new query is the LAST position: it may see every cached key. causal_mask(t)[0] "
        "is the mask of the FIRST position and hides all keys but one."),
    "cache_no_scaling": Mistake(
        "11",
        "no 1/sqrt(d_k)",
        "the cached step computes the same attention as the full pass: "
        "softmax(q K^T / sqrt(d_k)) V."),
    "recompute_count_last_step_only": Mistake(
        "11",
        "counting only the last step",
        "without a cache EVERY step recomputes its whole prefix: step t compares t queries "
        "with t keys, t^2 score entries, and the steps add up."),
    "cache_count_quadratic": Mistake(
        "11",
        "the cost of a full recompute",
        "with a cache only the new query is compared with the t cached keys: t score entries "
        "at step t, not t^2."),
    "count_off_by_one": Mistake(
        "11",
        "off by one in the sum",
        "the steps run over t = 1, ..., T (the first token sees one key, the last sees T): "
        "check the first and the last term of your sum."),
})


def is_unanswered(answer) -> bool:
    return answer is ... or answer is None


def unanswered(what: str) -> Verdict:
    return Verdict(UNANSWERED, f"Not answered yet: replace `...` with your {what} and run "
                               "the cell again.")


def as_float(answer):
    try:
        return np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return None


def sentence(why: str) -> str:
    """why as a sentence: a capital first letter, unless it starts with a symbol (n*d_k, x, q.k)."""
    word = re.match(r"[a-z]+(?=[\s,;:-]|$)", why)  # "self-attention ..." counts as a word
    if word and (len(word.group()) > 1 or word.group() == "a"):
        return why[0].upper() + why[1:]
    return why


def count_in_quotes(answer: str) -> Verdict:
    """A count typed as a string: say so, and show the number if the string holds one."""
    try:
        number = int(answer.replace(",", "").replace("_", "").strip())
    except ValueError:
        return Verdict(WRONG, f"Your answer {answer!r} is a string (text in quotes); give the "
                              "count as a number, without quotes.")
    return Verdict(WRONG, f"Your answer {answer!r} is a string (text in quotes), not a number; "
                          f"write it without quotes: answer = {number}.")


def _fmt_tol(atol: float) -> str:
    """1e-4, not 0.0001."""
    mantissa, exponent = f"{atol:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _fmt_pair(expected: float, got: float) -> tuple[str, str]:
    """expected and got with just enough digits to tell them apart.

    Numbers below 10,000 start with 4 decimals; larger ones (np.finfo(float).min) and inf/NaN
    start in g format, so they never print with hundreds of digits.
    """
    small = all(abs(x) < 1e4 for x in (expected, got))
    for fmt in (".4f" if small else ".4g", ".6g", ".10g", ".17g"):
        e, g = format(expected, fmt), format(got, fmt)
        if e != g:
            break
    return e, g


def _close(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    return a.shape == b.shape and np.allclose(a, b, atol=atol, rtol=1e-6, equal_nan=True)


def check_value(answer, expected, what: str, mistakes: Mapping | None = None,
                atol: float = 1e-4, hint: str = "", context: Mapping | None = None) -> Verdict:
    """Compare answer with expected; if wrong, name the mistake whose value it matches.

    mistakes: {key: value}, each key one of MISTAKES, each value what that mistake gives here;
    context fills the {placeholders} of their texts. A mistake whose value is within atol of
    expected is never named: it is not a mistake here.
    """
    if is_unanswered(answer):
        return unanswered(what)
    a, e = as_float(answer), np.asarray(expected, dtype=float)
    if a is None:
        return Verdict(WRONG, f"Your {what} is a {type(answer).__name__}, not numbers; "
                              f"expected an array of shape {e.shape}.")
    if _close(a, e, atol):
        return _correct(what, e, atol)
    for key, value in (mistakes or {}).items():
        v = np.asarray(value, dtype=float)
        if _close(a, v, atol) and not _close(v, e, atol):
            label, why = named(key, **(context or {}))
            return Verdict(MISTAKE, f"Not quite: this is the classic mistake \"{label}\". "
                                    f"{sentence(why)}", key)
    if a.shape != e.shape:
        return Verdict(WRONG, f"Wrong shape: your {what} has shape {a.shape}, expected "
                              f"{e.shape}. {hint}".rstrip())
    return _wrong(a, e, what, atol, hint)


def _correct(what: str, e: np.ndarray, atol: float) -> Verdict:
    """A number is quoted back; for an array, its shape."""
    if e.ndim == 0:
        value = f"{float(e):.6g}" if abs(e) < 1e6 else f"{float(e):.10g}"
        return Verdict(CORRECT, f"Correct: the {what} is {value} (within {_fmt_tol(atol)}).")
    return Verdict(CORRECT, f"Correct: your answer for the {what} matches attention_core "
                            f"(shape {e.shape}, within {_fmt_tol(atol)}).")


def _wrong(a: np.ndarray, e: np.ndarray, what: str, atol: float, hint: str) -> Verdict:
    """Where the answer is furthest off (a NaN counts as infinitely far), shown so the numbers differ."""
    with np.errstate(invalid="ignore"):  # inf - inf: equal infinities are not off at all
        diff = np.where((a == e) | (np.isnan(a) & np.isnan(e)), 0.0, np.abs(a - e))
    diff = np.where(np.isnan(diff), np.inf, diff)
    idx = tuple(int(i) for i in np.unravel_index(np.argmax(diff), diff.shape))
    expected, got = _fmt_pair(float(e[idx]), float(a[idx]))
    tolerance = f"answers within {_fmt_tol(atol)} count as correct"
    if e.ndim == 0:
        return Verdict(WRONG, f"Not quite: your answer for the {what} is {got}, expected {expected} "
                              f"({tolerance}). {hint}".rstrip())
    return Verdict(WRONG, f"Not quite: your answer for the {what} differs from attention_core by up to "
                          f"{float(diff[idx]):.3g} at index {idx} (expected {expected}, got {got}; "
                          f"{tolerance}). {hint}".rstrip())


def weight_mistakes(Q, K, mask=None) -> dict:
    """Weights produced by each classic mistake, for the same Q, K, mask."""
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2)  # (..., n, d_k) @ (..., d_k, m) -> (..., n, m)
    M = 0.0 if mask is None else np.asarray(mask, dtype=float)
    right = ac.softmax(S / np.sqrt(d_k) + M, axis=-1)
    out = {}
    try:
        out["softmax_wrong_axis"] = ac.softmax(S / np.sqrt(d_k) + M, axis=-2)
    except ValueError:  # a column blocked everywhere: this mistake cannot be formed
        pass
    out["scale_after_softmax"] = ac.softmax(S + M, axis=-1) / np.sqrt(d_k)
    out["no_scaling"] = ac.softmax(S + M, axis=-1)
    out["divide_by_d_k"] = ac.softmax(S / d_k + M, axis=-1)
    if mask is not None:
        unmasked = ac.softmax(S / np.sqrt(d_k), axis=-1)
        out["mask_after_softmax"] = unmasked * np.isfinite(M)
        out["mask_missing"] = unmasked
    out["transposed_weights"] = np.swapaxes(right, -1, -2)  # A^T, (..., m, n)
    if mask is None:  # the weights of K Q^T, (..., m, n): softmax over the queries
        out["transposed_scores"] = ac.softmax(np.swapaxes(S, -1, -2) / np.sqrt(d_k), axis=-1)
    return out


def check_weights(answer, Q, K, mask=None) -> Verdict:
    """Check attention weights A = softmax(Q K^T / sqrt(d_k) + M) (rows over keys)."""
    right = ac.attention_weights(Q, K, mask)
    return check_value(answer, right, "attention weights A", weight_mistakes(Q, K, mask))


def check_attention(answer, Q, K, V, mask=None) -> Verdict:
    """Check the attention output softmax(Q K^T / sqrt(d_k) + M) V, diagnosing the classic mistakes."""
    output, _ = ac.scaled_dot_product_attention(Q, K, V, mask)
    V = np.asarray(V, dtype=float)
    mistakes = {k: w @ V for k, w in weight_mistakes(Q, K, mask).items()
                if w.shape[-1] == V.shape[-2]}
    if mask is not None:
        # the "mask V" bug: softmax over all keys, then zero the blocked values per query
        d_k = np.shape(Q)[-1]
        unmasked = ac.softmax(np.asarray(Q, float) @ np.swapaxes(np.asarray(K, float), -1, -2)
                              / np.sqrt(d_k), axis=-1)
        allowed = np.isfinite(np.broadcast_to(np.asarray(mask, float), unmasked.shape))
        mistakes = {"mask_on_values": (unmasked * allowed) @ V, **mistakes}
    return check_value(answer, output, "attention output", mistakes)


def named(key: str, **context) -> tuple[str, str]:
    """(label, why) of the registered mistake `key`, its {placeholders} filled from context."""
    m = MISTAKES[key]
    return m.label.format(**context), m.why.format(**context)


# --- hints and worked solutions: one registry entry per self-check question ----------------------

class Question(NamedTuple):
    """The help of one self-check question, shown only when the learner asks for it."""

    hint: str  # a nudge towards the method; never the answer itself
    # What a learner writes in the check cell: the expression that replaces the `...` of
    # `answer = ...`, or, where one expression would be hard to read, a few lines that replace the
    # whole `answer = ...` line and end with `answer = <expression>`.
    solution: str
    why: str  # the worked explanation shown with the solution


# Every self-check cell of every notebook has one entry here, keyed "NN.name" (NN: its notebook),
# and names its key in a comment line of the cell: `# Stuck? ... nbNN.hint("NN.name") ...`. The
# instructor key (`python3 dev.py classroom key`) puts each solution in place of `...` and runs the
# notebooks: every check must then say Correct. A read-only mapping, like MISTAKES.
QUESTIONS: Mapping[str, Question] = MappingProxyType({
    # --- 00 Start here ---
    "00.weights": Question(
        "Three steps: the scores Q K^T, one per (query, key) pair, so of shape (n, m) = (3, 5); "
        "divide them by sqrt(d_k); then the softmax along each row, over the keys. Which axis of "
        "a (3, 5) array runs over the keys?",
        "ac.softmax(Q @ K.T / np.sqrt(d_k), axis=-1)",
        "Q @ K.T pairs every query (a row of Q) with every key (a row of K): (3, 4) @ (4, 5) -> "
        "(3, 5). Dividing by sqrt(d_k) = 2 keeps the scores' spread the same for every width "
        "(notebook 03). axis=-1, the last axis, runs over the keys, so each query's row of weights "
        "sums to 1; axis=0 would normalise over the queries, a mistake the check names."),
    # --- 01 Q, K, V projections ---
    "01.qkv_shapes": Question(
        "Each token is one row, so Q, K and V all have n rows. Their widths come from the "
        "matrices they are multiplied by: W_Q and W_K are (d_model, d_k), W_V is (d_model, d_v).",
        "((5, 4), (5, 4), (5, 3))",
        "Q = X W_Q: (n, d_model) @ (d_model, d_k) -> (n, d_k) = (5, 4), and K the same; V = X W_V: "
        "(n, d_model) @ (d_model, d_v) -> (n, d_v) = (5, 3). d_model = 8 disappears in the "
        "product: it is the width the matrices read, not the width they write."),
    "01.symmetric_scores": Question(
        "Transpose S = Q Q^T with the rule (AB)^T = B^T A^T. Does the result depend on what X "
        "(and hence Q) is?",
        "True",
        "S^T = (Q Q^T)^T = (Q^T)^T Q^T = Q Q^T = S for every Q, hence for every X: token i scores "
        "token j exactly as j scores i. With separate W_Q and W_K the scores are "
        "S = X W_Q W_K^T X^T, symmetric for every X only if W_Q W_K^T is."),
    "01.library_weights": Question(
        "The scores are dot products of q = (1, 0, 0, 1) with the rows of K_books: small whole "
        "numbers. Then the scale sqrt(d_k) with d_k = 4, then the softmax over the five books. "
        "Equal scores get equal weights, and no weight is 0.",
        'ac.softmax(queries["cost of a cat"] @ K_books.T / np.sqrt(4))',
        "The scores q K^T are 2, 0, 2, 0, 2 (Cat care, Cat myths and Pet budget each share one "
        "subject with the query), scaled by 1/sqrt(4): 1, 0, 1, 0, 1. The softmax gives "
        "e / (3e + 2) = 0.2677 to each of the three tied books and 1 / (3e + 2) = 0.0985 to Dog "
        "training and Astronomy: a blend of all five, with no single winner."),
    "01.raw_scores": Question(
        "Row i of S says how much query i matches every key: each entry pairs a ROW of Q with a "
        "row of K. Which two of Q, K, V are compared, and which one is only mixed afterwards?",
        "Q @ K.T",
        "S = Q K^T, shape (n, m) = (3, 3): entry (i, j) is q_i . k_j, query i against key j. "
        "V is not compared with anything: it is what the weights mix once the scores have gone "
        "through the scaling and the softmax. V V^T would compare the contents with each other, "
        "and K Q^T is the transpose, with the keys in the rows."),
    # --- 02 The worked 3x2 example ---
    "02.weight_row": Question(
        "The query of は, q_2 = (0, 1), picks the second coordinate of every key, so the scores "
        "s_2j are the second column of K. Divide them by sqrt(2), take e^x of each, and divide "
        "each by the sum of the three.",
        "[0.5760, 0.1400, 0.2840]",
        "K has the rows (1, 1), (1, -1), (2, 0), so s_21, s_22, s_23 = 1, -1, 0 and the scaled "
        "scores are 0.7071, -0.7071, 0. Their exponentials are 2.0281, 0.4931 and 1, with the sum "
        "3.5212; divided by it: 0.5760, 0.1400, 0.2840, which add up to 1. In closed form "
        "a_21 = e^(1/sqrt 2) / (e^(1/sqrt 2) + e^(-1/sqrt 2) + 1)."),
    "02.output_row": Question(
        "The weights of question 1 say how much of each token to take; what is taken is the "
        "token's VALUE, a row of V: (2, 0), (0, 3), (2, 3). Add the three values, each multiplied "
        "by its weight.",
        "[1.7200, 1.2720]",
        "o_2 = 0.5760 (2, 0) + 0.1400 (0, 3) + 0.2840 (2, 3) = (1.1520 + 0 + 0.5680, "
        "0 + 0.4200 + 0.8520) = (1.7200, 1.2720). With unrounded weights it is (1.7199, 1.2721), "
        "row 2 of O = A V; the check accepts both (3 decimals)."),
    # --- 03 Scaling and softmax saturation ---
    "03.dot_product_variance": Question(
        "The score q.k is a sum of d_k terms q_i k_i. What is the variance of one such product of two "
        "independent numbers with mean 0 and variance 1, and what happens to the variances when "
        "independent terms are added?",
        "64",
        "Each term has Var[q_i k_i] = E[q_i^2] E[k_i^2] = 1 * 1 = 1 (mean 0 and independence), "
        "and the variances of independent terms add up: Var[q.k] = d_k = 64. Its standard "
        "deviation, sqrt(64) = 8, is the typical size of a raw score."),
    "03.scaled_variance": Question(
        "Dividing a random variable by a constant c divides its variance by c^2. Here the "
        "variable is q.k, with the variance of question 1, and c = sqrt(d_k).",
        "1",
        "Var[q.k / sqrt(d_k)] = Var[q.k] / (sqrt(d_k))^2 = d_k / d_k = 1, for every d_k: that is "
        "the whole reason for the factor 1/sqrt(d_k)."),
    "03.weights": Question(
        "The same three steps as always, with the Q, K and d_k this cell defines (d_k = 4, no "
        "longer 512): scores Q K^T of shape (n, m) = (2, 3), the scale, then the softmax over "
        "each row. Where does the scale go, before or after the softmax?",
        "ac.softmax(Q @ K.T / np.sqrt(d_k), axis=-1)",
        "The cell redefines Q (2, 4), K (3, 4) and d_k = 4, so Q @ K.T is (2, 3), one row per "
        "query. The scale comes before the softmax (after it the rows no longer sum to 1), it is "
        "sqrt(d_k) = 2 and not d_k = 4, and axis=-1 normalises each query's row over the keys."),
    "03.why_scale": Question(
        "Which of the three does the scale change: the length of q and k, the spread of the "
        "scores, or the row sums of the weights? And which of them does the softmax already take "
        "care of on its own?",
        '"b"',
        "Var[q.k] = d_k, so without the scale the scores spread like sqrt(d_k) and the softmax "
        "saturates: nearly one-hot weights and a vanishing Jacobian (section 5). Dividing by "
        "sqrt(d_k) brings the variance back to 1 for every d_k. (a) is the length myth: q and k "
        "are left as they are, and q.k / sqrt(d_k) is not a cosine. (c) is what the softmax does "
        "by itself, with or without the scale."),
    # --- 04 Masking ---
    "04.causal_mask": Question(
        "Query i may see the keys j <= i. Start from a True/False matrix that is True exactly "
        "where a key is in the future (j > i: np.triu has an offset k for that), then turn True "
        "into -np.inf and False into 0.0.",
        "np.where(np.triu(np.ones((5, 5), dtype=bool), k=1), -np.inf, 0.0)",
        "np.triu(..., k=1) is True strictly above the diagonal, where the keys are in the future; "
        "np.where puts -inf there and 0 everywhere else, so the diagonal (each position sees "
        "itself) and everything below it stay 0. Multiplying by -np.inf instead would give NaN "
        "wherever the entry is 0 (0 x -inf), and -1e9 would hide a fully masked row silently."),
    "04.masked_weights": Question(
        "The order is scores, scale, mask, softmax: the mask M is added to the scaled scores, "
        "before the softmax sees them.",
        "ac.softmax(Q @ K.T / np.sqrt(d_k) + M, axis=-1)",
        "Q @ K.T / sqrt(3) is (4, 4); adding M puts -inf above the diagonal, so the softmax gives "
        "those keys exactly e^(-inf) = 0 and spreads each row over the keys j <= i: the first row "
        "is [1, 0, 0, 0]. Zeroing the weights after the softmax instead leaves rows that do not "
        "sum to 1."),
    "04.padded_output": Question(
        "The core function ac.scaled_dot_product_attention takes the mask as an argument and "
        "returns a pair (output, weights): which one is asked for? The mask is the padding mask "
        "of section 3, built from `lengths`.",
        "ac.scaled_dot_product_attention(Q_b, K_b, V_b, mask=ac.padding_mask(lengths, m=4))[0]",
        "The padding mask has the shape (batch, 1, m): for every query it hides the padded KEYS "
        "of its item, and it broadcasts to (batch, n, m) = (3, 4, 4). The function adds it to the "
        "scaled scores before the softmax; [0] is the output, (batch, n, d_v) = (3, 4, 2). "
        "Zeroing the padded values instead would leave the padded keys in every softmax."),
    # --- 05 Multi-head attention ---
    "05.W_O_shape": Question(
        "W_O multiplies Concat(head_1, ..., head_h) and must give back rows of width d_model. "
        "How wide is that concatenation: h times the width of what each head outputs. Does a "
        "head output queries, keys or values?",
        "(20, 16)",
        "Each head outputs (n, d_v) = (n, 5); four of them side by side are (n, h*d_v) = (n, 20). "
        "With row vectors (n, 20) @ W_O must give (n, d_model) = (n, 16), so W_O is "
        "(h*d_v, d_model) = (20, 16). h*d_k = 12 is the width of the concatenated queries, which "
        "W_O never sees."),
    "05.multi_head": Question(
        "Project X_q with P.W_Q, P.W_K and P.W_V, cut each result into h = 2 heads "
        "(ac.split_heads), run attention in every head on its own, put the heads back side by "
        "side (ac.merge_heads) and do not forget the last matrix.",
        "ac.merge_heads(ac.scaled_dot_product_attention(\n"
        "    ac.split_heads(X_q @ P.W_Q, 2),\n"
        "    ac.split_heads(X_q @ P.W_K, 2),\n"
        "    ac.split_heads(X_q @ P.W_V, 2),\n"
        ")[0]) @ P.W_O",
        "X_q @ P.W_Q is (n, h*d_k) = (3, 4); split_heads makes it (h, n, d_k) = (2, 3, 2), and "
        "the same for K and V. scaled_dot_product_attention works along the leading head axis, "
        "every head with its own softmax and its own scale sqrt(d_k) = sqrt(2); [0] is its "
        "output (2, 3, 2). merge_heads concatenates the heads to (n, h*d_v) = (3, 4), and W_O "
        "(4, 4) mixes them back to d_model. This is the loop over heads of sections 1-2, and "
        "ac.multi_head_attention(X_q, X_q, P.W_Q, P.W_K, P.W_V, P.W_O, 2)[0] gives the same."),
    "05.param_count": Question(
        "Count the entries of the four matrices: W_Q, W_K, W_V are (d_model, h*d_k) and W_O is "
        "(h*d_v, d_model). With d_k = d_v = d_model / h, what is h*d_k?",
        "4 * 512 * 512",
        "h*d_k = h*d_v = 8 * 64 = 512 = d_model, so all four matrices are 512 x 512: "
        "4 * 512^2 = 1,048,576 weights. The heads divide these matrices' columns among them, so "
        "the count is the same for every h."),
    # --- 06 Positional encoding ---
    "06.pe_entry": Question(
        "Dimension 3 = 2i + 1 is odd, which decides between sin and cos, and it belongs to the "
        "pair i = 3 // 2. The angle is pos / 10000^(2i / d_model): work out the exponent first.",
        "np.cos(10 / 10000 ** (2 * 1 / 8))",
        "Dimension 3 is odd: PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)) with i = 1, so the "
        "exponent is 2/8 = 0.25 and 10000^0.25 = 10. The angle is 10 / 10 = 1 radian and "
        "PE(10, 3) = cos(1) = 0.5403. Dimension 2, the other half of the pair, is sin(1)."),
    "06.permuted_output": Question(
        "Self-attention without positions is permutation-equivariant: reorder the input rows, "
        "and the output rows are reordered the same way. Row r of the new input is X[perm[r]]; "
        "which row of Y is its output?",
        "Y[perm]",
        "Row r of the new input is the old token perm[r], and attention treats a token the same "
        "wherever it stands, so row r of the new output is that token's old output, Y[perm[r]]: "
        "the whole matrix is Y[perm]. Y itself would mean nothing moves (invariance), and "
        "Y[np.argsort(perm)] applies the inverse permutation."),
    # --- 07 Feed-forward network ---
    "07.ffn_param_count": Question(
        "The FFN learns four arrays: W_1 (d_model, d_ff), b_1 (d_ff,), W_2 (d_ff, d_model) and "
        "b_2 (d_model,). Add up their sizes.",
        "2 * 512 * 2048 + 2048 + 512",
        "W_1 and W_2 hold 512 * 2048 = 1,048,576 numbers each, b_1 holds 2048 and b_2 512: "
        "2,097,152 + 2,560 = 2,099,712, about 8 d_model^2, twice attention's "
        "4 d_model^2 = 1,048,576."),
    "07.ffn_output": Question(
        "Row by row: widen with W_1 and b_1 (the first row gives (-0.5, -2, 3), as the question "
        "says), switch off the negative hidden units, then come back with W_2 and b_2. Where "
        "exactly does the ReLU go?",
        "np.maximum(0, X_tiny @ W_1t + b_1t) @ W_2t + b_2t",
        "Row 1: (-0.5, -2, 3) becomes (0, 0, 3) after the ReLU; times W_2 that is 3 (1, -1) = "
        "(3, -3), plus b_2 = (0.5, -1): (3.5, -4). Row 2: x = (0, 1) gives (1.5, 2, -2), then "
        "(1.5, 2, 0), then 1.5 (1, 2) + 2 (-1, 1) = (-0.5, 5), plus b_2: (0, 4). The ReLU acts on "
        "the d_ff hidden units between the two linear maps; b_1 goes before it, b_2 at the end."),
    # --- 08 The Transformer block ---
    "08.cross_kv_source": Question(
        "Cross-attention is how each decoder position reads the source sentence. Which of the "
        "four arrays holds the source sentence after the encoder has worked on it?",
        "memory",
        "In cross-attention only the queries come from the decoder (A1, after its masked "
        "self-attention); the keys and values come from the encoder output, memory, of shape "
        "(m, d_model) = (5, 8), the same for every decoder layer. Y or A1 would make it a second "
        "self-attention, and X, the source embeddings, would skip the encoder."),
    "08.cross_weights_shape": Question(
        "Rows are queries, columns are keys. In cross-attention, who asks: the n = 4 decoder "
        "positions or the m = 5 encoder positions? And the question is about one head.",
        "(4, 5)",
        "The n = 4 decoder positions are the queries (rows) and the m = 5 encoder positions the "
        "keys (columns): one head's weights are (n, m) = (4, 5), each row a distribution over "
        "the five source tokens. All h heads together would be (h, n, m)."),
    "08.layer_norm": Question(
        "Layer norm treats each row (token) on its own: its mean and its variance over the "
        "d_model features. Use axis=-1 with keepdims=True so the (3, 1) statistics broadcast, "
        "and keep eps inside the square root.",
        "(X_ln - X_ln.mean(axis=-1, keepdims=True)) / np.sqrt(X_ln.var(axis=-1, keepdims=True) "
        "+ 1e-5)",
        "The first row (1, 2, 3, 6) has mean 3 and variance (4 + 1 + 0 + 9) / 4 = 3.5, so its "
        "layer norm is (-2, -1, 0, 3) / sqrt(3.5 + 1e-5) = (-1.0690, -0.5345, 0, 1.6036). np.var "
        "divides by d_model (ddof=0), as layer norm does; axis=0 would normalise each feature "
        "over the tokens instead."),
    # --- 09 The cost of attention ---
    "09.score_entries": Question(
        "Every head forms its own score matrix with one entry per (query, key) pair. How many "
        "pairs do n queries and n keys make, and how many heads are there? d_k is a red herring.",
        "12 * 2000 * 2000",
        "One head: n * n = 2000 * 2000 = 4,000,000 pairs; twelve heads: 48,000,000 score "
        "entries. d_k = 64 is the length of each dot product (the work per entry), not the "
        "number of entries."),
    "09.score_mib": Question(
        "Entries times bytes per entry, divided by the bytes of one MiB. One head, float64, and "
        "a MiB is a power of two, not a million.",
        "3072 * 3072 * 8 / 2**20",
        "3072^2 = 9,437,184 entries of 8 bytes are 75,497,472 bytes; divided by "
        "2^20 = 1,048,576 that is exactly 72 MiB (75.5 MB in powers of ten; 36 MiB in float32)."),
    "09.growth_ratio": Question(
        "The score matrix is n x n. Write down its number of entries for n and for 2n, and "
        "divide.",
        "4",
        "(2n)^2 / n^2 = 4: twice the queries times twice the keys is four times the pairs, "
        "whatever n is. The time grows the same way, since every entry costs one dot product."),
    "09.online_sum": Question(
        "The new block raises the running maximum. The old sum l = 1.2 was measured against the "
        "old maximum r = 3: what must happen to each of its terms e^(s - r) once the maximum is "
        "r' = 4? Then add the new terms, measured against r'.",
        "1.2 * np.exp(3.0 - 4.0) + np.exp(4.0 - 4.0) + np.exp(2.0 - 4.0) + np.exp(-1.0 - 4.0)",
        "r' = max(3.0, 4.0) = 4.0. Every old term e^(s - 3) becomes e^(s - 4) = e^(s - 3) e^(-1), "
        "so the old sum shrinks to 1.2 e^(-1) = 0.4415. The new terms are e^0 + e^(-2) + e^(-5) "
        "= 1 + 0.1353 + 0.0067 = 1.1421, so l' = 1.5836."),
    "09.heads_cost_ratio": Question(
        "With d_k = d_v = d_model / h, each head works on narrower vectors. Write the multiply-adds "
        "of all heads together as h * n^2 * (d_k + d_v) and put d_k = d_v = d_model / h in.",
        "ac.attention_cost(3000, d_k=32, h=24)['multiply_adds'] "
        "/ ac.attention_cost(3000, d_k=64, h=12)['multiply_adds']",
        "h n^2 (d_k + d_v) = h n^2 (2 d_model / h) = 2 n^2 d_model: the h cancels, so the factor "
        "is 1. Doubling the heads halves each head's width; on long inputs the cost is the n^2 of "
        "the score matrix, whatever h is (only the memory of the weights, h n^2, grows with h)."),
    # --- 10 Learning to attend ---
    "10.softmax_backward": Question(
        "Every weight p_j of a row depends on every score of that row through the shared "
        "denominator, so the gradient of one score collects the upstream dp of the whole row. "
        "The formula is in the question: which array is p, and along which axis is the row sum?",
        "p = ac.softmax(x)  # (2, 3), the weights: each row sums to 1\n"
        "answer = p * (dp - np.sum(p * dp, axis=-1, keepdims=True))",
        "The Jacobian of one row's softmax is diag(p) - p^T p, so dx_i = p_i (dp_i - sum_j p_j "
        "dp_j): the weights p, not the scores x, times the upstream gradient minus its "
        "p-weighted mean. np.sum(..., axis=-1, keepdims=True) takes that mean within each row "
        "(shape (2, 1), so it broadcasts back over the row). Keeping only p * dp drops the "
        "shared denominator; summing down the columns mixes the two rows."),
    "10.attention_dQ": Question(
        "Go backwards through the forward pass O = A V, A = softmax(S), S = Q K^T / sqrt(d_k): "
        "first the gradient of the weights A, then through the softmax to the scores S (the "
        "formula of question 1), then to Q. Section 1 has the five formulas.",
        "A = ac.attention_weights(Q2, K2)  # (n, m) = (3, 3), the forward pass's weights\n"
        "dA = dO2 @ V2.T  # (n, d_v) @ (d_v, m) -> (n, m)\n"
        "dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))  # through the softmax\n"
        "answer = dS @ K2 / np.sqrt(4)  # (n, m) @ (m, d_k) -> (n, d_k)",
        "O = A V gives dA = dO V^T, one entry per (query, key). The softmax of each row turns it "
        "into dS = A * (dA - rowsum(A * dA)), the gradient of the scores. S = Q K^T / sqrt(d_k) "
        "is linear in Q, so dQ = dS K / sqrt(d_k): the same factor 1/sqrt(d_k) as in the "
        "forward pass. dS^T Q / sqrt(d_k) would be dK, and dA K / sqrt(d_k) skips the softmax."),
    "10.reversal_key": Question(
        "Write the sequence out with its positions: the digits x_0..x_5 at 0..5, the separator "
        "at 6, then the reversed digits. Which token comes at position i + 1 = 9, and where "
        "does that digit stand in the input?",
        "3",
        "The reversed digits follow the separator: position 7 holds x_5, position 8 holds x_4 "
        "and position 9 holds x_3. The query at i = 8 predicts the token at position 9, so it "
        "must read x_3, at input position 3 = 2L - 1 - i = 11 - 8. Reading 2L - i = 4 (x_4) is "
        "the off-by-one of next-token prediction: that digit is already at position 8."),
    # --- 11 Generating, and the KV cache ---
    "11.cache_shape": Question(
        "Every head keeps its own keys, one row per position that has gone through the model "
        "(the prompt's and the generated ones, the newest included), each of the head's width.",
        "(2, 10, 16)",
        "7 prompt tokens and 3 generated ones make t = 10 cached positions. Each of the h = 2 "
        "heads has its own (t, d_k) block of keys, so cache[\"K\"] is (h, t, d_k) = (2, 10, 16). "
        "d_model = 32 is the width before W_K and the split into heads."),
    "11.cached_attention": Question(
        "The new position may attend to every cached position and to itself: put its key and "
        "value at the end of the cache first, then run ordinary attention for the one new "
        "query. Does it need a mask?",
        "ac.scaled_dot_product_attention(\n"
        "    q, np.concatenate([K_old, k_new]), np.concatenate([V_old, v_new])\n"
        ")[0]",
        "np.concatenate stacks the rows: K is (t, d_k) = (5, 4) with the new key last, V is "
        "(5, 3). The new query is the last position, so the causal mask allows it every key and "
        "none is needed; [0] is the output (1, d_v) = (1, 3). Attending with K_old, V_old alone "
        "would leave out the new token itself, and causal_mask(5)[0] is the mask of the FIRST "
        "position, which hides all keys but one."),
    "11.total_score_entries": Question(
        "Without a cache, step t runs attention over the whole prefix of t positions again: t "
        "queries, each against t keys. Add that up over t = 1..T.",
        "sum(t * t for t in range(1, 101))",
        "Step t computes t * t score entries, so the total is 1 + 4 + 9 + ... + 100^2 = "
        "T (T + 1) (2T + 1) / 6 = 100 * 101 * 201 / 6 = 338,350. With the cache step t computes "
        "only the new query's t entries, sum t = 5,050; counting only the last step gives "
        "100^2 = 10,000."),
})


def _caller(key: str) -> str:
    """How a notebook calls hint/solution: through its companion (nb04.hint), or checks.hint."""
    companion = any(Path(__file__).parent.glob(f"nb{key[:2]}_*.py"))
    return f"nb{key[:2]}" if companion else "checks"


def _question(key: str) -> Question | None:
    if key in QUESTIONS:
        return QUESTIONS[key]
    same = sorted(k for k in QUESTIONS if k[:2] == str(key)[:2])
    print(f"There is no self-check question {key!r}." + (
        f" The questions of notebook {key[:2]} are: {', '.join(same)}." if same else
        " Keys look like \"04.causal_mask\": the notebook's number, a dot and a name."))
    return None


def _paragraph(text: str) -> str:
    return textwrap.fill(text, width=96, break_on_hyphens=False, break_long_words=False)


def hint(key: str) -> None:
    """Print the hint of self-check question `key` (e.g. "04.causal_mask"); nothing is given away."""
    q = _question(key)
    if q is None:
        return
    print(_paragraph(f"Hint ({key}): {q.hint}"))
    print()
    print(_paragraph(f'Try again with this in mind. Still stuck? {_caller(key)}.solution("{key}") '
                     "shows a worked solution."))


def answer_lines(code: str) -> str:
    """A solution as it stands in the check cell: `answer = <expression>`, or its own lines."""
    try:
        compile(code, "<solution>", "eval")
    except SyntaxError:  # lines ending with `answer = ...`
        return code
    return f"answer = {code}"


def solution(key: str) -> None:
    """Print the worked solution of self-check question `key`: the code for `...` and why."""
    q = _question(key)
    if q is None:
        return
    print(f"Worked solution ({key}): the code to write in the check cell\n")
    print(textwrap.indent(answer_lines(q.solution), "    "))
    print()
    print(_paragraph(q.why))
    print()
    print(_paragraph("Type it in place of `answer = ...` (typing it yourself helps more than "
                     "pasting) and run the cell again: the check says Correct."))
