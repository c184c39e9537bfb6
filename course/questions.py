"""The help of every self-check question: a hint, a worked solution and its explanation (data only).

Shown on request by checks.hint() / checks.solution(); the instructor key fills the solutions in.
Read-only. Hints and explanations are marked with N_() (built at import time) and translated by
checks.hint() / checks.solution() when shown (course/i18n.py); a solution is code, the same in
every language.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from course.i18n import N_


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
        N_("Three steps: the scores Q K^T, one per (query, key) pair, so of shape (n, m) = (3, 5); "
           "divide them by sqrt(d_k); then the softmax along each row, over the keys. Which axis "
           "of a (3, 5) array runs over the keys?"),
        "ac.softmax(Q @ K.T / np.sqrt(d_k), axis=-1)",
        N_("Q @ K.T pairs every query (a row of Q) with every key (a row of K): (3, 4) @ (4, 5) -> "
           "(3, 5). Dividing by sqrt(d_k) = 2 keeps the scores' spread the same for every width "
           "(notebook 03). axis=-1, the last axis, runs over the keys, so each query's row of "
           "weights sums to 1; axis=0 would normalise over the queries, a mistake the check "
           "names.")),
    # --- 01 Q, K, V projections ---
    "01.qkv_shapes": Question(
        N_("Each token is one row, so Q, K and V all have n rows. Their widths come from the "
           "matrices they are multiplied by: W_Q and W_K are (d_model, d_k), W_V is "
           "(d_model, d_v)."),
        "((5, 4), (5, 4), (5, 3))",
        N_("Q = X W_Q: (n, d_model) @ (d_model, d_k) -> (n, d_k) = (5, 4), and K the same; V = X "
           "W_V: (n, d_model) @ (d_model, d_v) -> (n, d_v) = (5, 3). d_model = 8 disappears in the "
           "product: it is the width the matrices read, not the width they write.")),
    "01.symmetric_scores": Question(
        N_("Transpose S = Q Q^T with the rule (AB)^T = B^T A^T. Does the result depend on what X "
           "(and hence Q) is?"),
        "True",
        N_("S^T = (Q Q^T)^T = (Q^T)^T Q^T = Q Q^T = S for every Q, hence for every X: token i "
           "scores token j exactly as j scores i. With separate W_Q and W_K the scores are S = X "
           "W_Q W_K^T X^T, symmetric for every X only if W_Q W_K^T is.")),
    "01.library_weights": Question(
        N_("The scores are dot products of q = (1, 0, 0, 1) with the rows of K_books: small whole "
           "numbers. Then the scale sqrt(d_k) with d_k = 4, then the softmax over the five books. "
           "Equal scores get equal weights, and no weight is 0."),
        'ac.softmax(queries["cost of a cat"] @ K_books.T / np.sqrt(4))',
        N_("The scores q K^T are 2, 0, 2, 0, 2 (Cat care, Cat myths and Pet budget each share one "
           "subject with the query), scaled by 1/sqrt(4): 1, 0, 1, 0, 1. The softmax gives "
           "e / (3e + 2) = 0.2677 to each of the three tied books and 1 / (3e + 2) = 0.0985 to Dog "
           "training and Astronomy: a blend of all five, with no single winner.")),
    "01.raw_scores": Question(
        N_("Row i of S says how much query i matches every key: each entry pairs a ROW of Q with a "
           "row of K. Which two of Q, K, V are compared, and which one is only mixed afterwards?"),
        "Q @ K.T",
        N_("S = Q K^T, shape (n, m) = (3, 3): entry (i, j) is q_i . k_j, query i against key j. "
           "V is not compared with anything: it is what the weights mix once the scores have gone "
           "through the scaling and the softmax. V V^T would compare the contents with each other, "
           "and K Q^T is the transpose, with the keys in the rows.")),
    # --- 02 The worked 3x2 example ---
    "02.weight_row": Question(
        N_("The query of は, q_2 = (0, 1), picks the second coordinate of every key, so the scores "
           "s_2j are the second column of K. Divide them by sqrt(2), take e^x of each, and divide "
           "each by the sum of the three."),
        "[0.5760, 0.1400, 0.2840]",
        N_("K has the rows (1, 1), (1, -1), (2, 0), so s_21, s_22, s_23 = 1, -1, 0 and the scaled "
           "scores are 0.7071, -0.7071, 0. Their exponentials are 2.0281, 0.4931 and 1, with the "
           "sum 3.5212; divided by it: 0.5760, 0.1400, 0.2840, which add up to 1. In closed form "
           "a_21 = e^(1/sqrt 2) / (e^(1/sqrt 2) + e^(-1/sqrt 2) + 1).")),
    "02.output_row": Question(
        N_("The weights of question 1 say how much of each token to take; what is taken is the "
           "token's VALUE, a row of V: (2, 0), (0, 3), (2, 3). Add the three values, each "
           "multiplied by its weight."),
        "[1.7200, 1.2720]",
        N_("o_2 = 0.5760 (2, 0) + 0.1400 (0, 3) + 0.2840 (2, 3) = (1.1520 + 0 + 0.5680, 0 + 0.4200 "
           "+ 0.8520) = (1.7200, 1.2720). With unrounded weights it is (1.7199, "
           "1.2721), row 2 of O = A V; the check accepts both (3 decimals).")),
    # --- 03 Scaling and softmax saturation ---
    "03.dot_product_variance": Question(
        N_("The score q.k is a sum of d_k terms q_i k_i. What is the variance of one such product "
           "of two independent numbers with mean 0 and variance 1, and what happens to the "
           "variances when independent terms are added?"),
        "64",
        N_("Each term has Var[q_i k_i] = E[q_i^2] E[k_i^2] = 1 * 1 = 1 (mean 0 and independence), "
           "and the variances of independent terms add up: Var[q.k] = d_k = 64. Its standard "
           "deviation, sqrt(64) = 8, is the typical size of a raw score.")),
    "03.scaled_variance": Question(
        N_("Dividing a random variable by a constant c divides its variance by c^2. Here the "
           "variable is q.k, with the variance of question 1, and c = sqrt(d_k)."),
        "1",
        N_("Var[q.k / sqrt(d_k)] = Var[q.k] / (sqrt(d_k))^2 = d_k / d_k = 1, for every d_k: that "
           "is the whole reason for the factor 1/sqrt(d_k).")),
    "03.weights": Question(
        N_("The same three steps as always, with the Q, K and d_k this cell defines (d_k = 4, no "
           "longer 512): scores Q K^T of shape (n, m) = (2, 3), the scale, then the softmax over "
           "each row. Where does the scale go, before or after the softmax?"),
        "ac.softmax(Q @ K.T / np.sqrt(d_k), axis=-1)",
        N_("The cell redefines Q (2, 4), K (3, 4) and d_k = 4, so Q @ K.T is (2, 3), one row per "
           "query. The scale comes before the softmax (after it the rows no longer sum to 1), it "
           "is sqrt(d_k) = 2 and not d_k = 4, and axis=-1 normalises each query's row over the "
           "keys.")),
    "03.why_scale": Question(
        N_("Which of the three does the scale change: the length of q and k, the spread of the "
           "scores, or the row sums of the weights? And which of them does the softmax already "
           "take care of on its own?"),
        '"b"',
        N_("Var[q.k] = d_k, so without the scale the scores spread like sqrt(d_k) and the softmax "
           "saturates: nearly one-hot weights and a vanishing Jacobian (section 5). Dividing by "
           "sqrt(d_k) brings the variance back to 1 for every d_k. (a) is the length myth: q and k "
           "are left as they are, and q.k / sqrt(d_k) is not a cosine. (c) is what the softmax "
           "does by itself, with or without the scale.")),
    # --- 04 Masking ---
    "04.causal_mask": Question(
        N_("Query i may see the keys j <= i. Start from a True/False matrix that is True exactly "
           "where a key is in the future (j > i: np.triu has an offset k for that), then turn True "
           "into -np.inf and False into 0.0."),
        "np.where(np.triu(np.ones((5, 5), dtype=bool), k=1), -np.inf, 0.0)",
        N_("np.triu(..., k=1) is True strictly above the diagonal, where the keys are in the "
           "future; np.where puts -inf there and 0 everywhere else, so the diagonal "
           "(each position sees itself) and everything below it stay 0. Multiplying by -np.inf "
           "instead would give NaN wherever the entry is 0 (0 x -inf), and -1e9 would hide a fully "
           "masked row silently.")),
    "04.masked_weights": Question(
        N_("The order is scores, scale, mask, softmax: the mask M is added to the scaled scores, "
           "before the softmax sees them."),
        "ac.softmax(Q @ K.T / np.sqrt(d_k) + M, axis=-1)",
        N_("Q @ K.T / sqrt(3) is (4, 4); adding M puts -inf above the diagonal, so the softmax "
           "gives those keys exactly e^(-inf) = 0 and spreads each row over the keys j <= i: the "
           "first row is [1, 0, 0, 0]. Zeroing the weights after the softmax instead leaves rows "
           "that do not sum to 1.")),
    "04.padded_output": Question(
        N_("The core function ac.scaled_dot_product_attention takes the mask as an argument and "
           "returns a pair (output, weights): which one is asked for? The mask is the padding mask "
           "of section 3, built from `lengths`."),
        "ac.scaled_dot_product_attention(Q_b, K_b, V_b, mask=ac.padding_mask(lengths, m=4))[0]",
        N_("The padding mask has the shape (batch, 1, m): for every query it hides the padded KEYS "
           "of its item, and it broadcasts to (batch, n, m) = (3, 4, 4). The function adds it to "
           "the scaled scores before the softmax; [0] is the output, (batch, n, d_v) = (3, 4, 2). "
           "Zeroing the padded values instead would leave the padded keys in every softmax.")),
    # --- 05 Multi-head attention ---
    "05.W_O_shape": Question(
        N_("W_O multiplies Concat(head_1, ..., head_h) and must give back rows of width d_model. "
           "How wide is that concatenation: h times the width of what each head outputs. Does a "
           "head output queries, keys or values?"),
        "(20, 16)",
        N_("Each head outputs (n, d_v) = (n, 5); four of them side by side are (n, h*d_v) "
           "= (n, 20). With row vectors (n, 20) @ W_O must give (n, d_model) = (n, 16), so W_O is "
           "(h*d_v, d_model) = (20, 16). h*d_k = 12 is the width of the concatenated queries, "
           "which W_O never sees.")),
    "05.multi_head": Question(
        N_("Project X_q with P.W_Q, P.W_K and P.W_V, cut each result into h = 2 heads "
           "(ac.split_heads), run attention in every head on its own, put the heads back side by "
           "side (ac.merge_heads) and do not forget the last matrix."),
        "ac.merge_heads(ac.scaled_dot_product_attention(\n"
        "    ac.split_heads(X_q @ P.W_Q, 2),\n"
        "    ac.split_heads(X_q @ P.W_K, 2),\n"
        "    ac.split_heads(X_q @ P.W_V, 2),\n"
        ")[0]) @ P.W_O",
        N_("X_q @ P.W_Q is (n, h*d_k) = (3, 4); split_heads makes it (h, n, d_k) = (2, 3, 2), and "
           "the same for K and V. scaled_dot_product_attention works along the leading head axis, "
           "every head with its own softmax and its own scale sqrt(d_k) = sqrt(2); [0] is its "
           "output (2, 3, 2). merge_heads concatenates the heads to (n, h*d_v) = (3, 4), and W_O "
           "(4, 4) mixes them back to d_model. This is the loop over heads of sections 1-2, and "
           "ac.multi_head_attention(X_q, X_q, P.W_Q, P.W_K, P.W_V, P.W_O, 2)[0] gives the same.")),
    "05.param_count": Question(
        N_("Count the entries of the four matrices: W_Q, W_K, W_V are (d_model, h*d_k) and W_O is "
           "(h*d_v, d_model). With d_k = d_v = d_model / h, what is h*d_k?"),
        "4 * 512 * 512",
        N_("h*d_k = h*d_v = 8 * 64 = 512 = d_model, so all four matrices are 512 x 512: "
           "4 * 512^2 = 1,048,576 weights. The heads divide these matrices' columns among them, so "
           "the count is the same for every h.")),
    # --- 06 Positional encoding ---
    "06.pe_entry": Question(
        N_("Dimension 3 = 2i + 1 is odd, which decides between sin and cos, and it belongs to the "
           "pair i = 3 // 2. The angle is pos / 10000^(2i / d_model): work out the exponent "
           "first."),
        "np.cos(10 / 10000 ** (2 * 1 / 8))",
        N_("Dimension 3 is odd: PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)) with i = 1, so the "
           "exponent is 2/8 = 0.25 and 10000^0.25 = 10. The angle is 10 / 10 = 1 radian and "
           "PE(10, 3) = cos(1) = 0.5403. Dimension 2, the other half of the pair, is sin(1).")),
    "06.permuted_output": Question(
        N_("Self-attention without positions is permutation-equivariant: reorder the input rows, "
           "and the output rows are reordered the same way. Row r of the new input is X[perm[r]]; "
           "which row of Y is its output?"),
        "Y[perm]",
        N_("Row r of the new input is the old token perm[r], and attention treats a token the same "
           "wherever it stands, so row r of the new output is that token's old output, Y[perm[r]]: "
           "the whole matrix is Y[perm]. Y itself would mean nothing moves (invariance), and "
           "Y[np.argsort(perm)] applies the inverse permutation.")),
    # --- 07 Feed-forward network ---
    "07.ffn_param_count": Question(
        N_("The FFN learns four arrays: W_1 (d_model, d_ff), b_1 (d_ff,), W_2 (d_ff, d_model) and "
           "b_2 (d_model,). Add up their sizes."),
        "2 * 512 * 2048 + 2048 + 512",
        N_("W_1 and W_2 hold 512 * 2048 = 1,048,576 numbers each, b_1 holds 2048 and b_2 512: "
           "2,097,152 + 2,560 = 2,099,712, about 8 d_model^2, twice attention's "
           "4 d_model^2 = 1,048,576.")),
    "07.ffn_output": Question(
        N_("Row by row: widen with W_1 and b_1 (the first row gives (-0.5, -2, 3), as the question "
           "says), switch off the negative hidden units, then come back with W_2 and b_2. Where "
           "exactly does the ReLU go?"),
        "np.maximum(0, X_tiny @ W_1t + b_1t) @ W_2t + b_2t",
        N_("Row 1: (-0.5, -2, 3) becomes (0, 0, 3) after the ReLU; times W_2 that is 3 (1, -1) "
           "= (3, -3), plus b_2 = (0.5, -1): (3.5, -4). Row 2: x = (0, 1) gives (1.5, 2, -2), then "
           "(1.5, 2, 0), then 1.5 (1, 2) + 2 (-1, 1) = (-0.5, 5), plus b_2: (0, 4). The ReLU acts "
           "on the d_ff hidden units between the two linear maps; b_1 goes before it, b_2 at the "
           "end.")),
    # --- 08 The Transformer block ---
    "08.cross_kv_source": Question(
        N_("Cross-attention is how each decoder position reads the source sentence. Which of the "
           "four arrays holds the source sentence after the encoder has worked on it?"),
        "memory",
        N_("In cross-attention only the queries come from the decoder "
           "(A1, after its masked self-attention); the keys and values come from the encoder "
           "output, memory, of shape (m, d_model) = (5, 8), the same for every decoder layer. Y or "
           "A1 would make it a second self-attention, and X, the source embeddings, would skip the "
           "encoder.")),
    "08.cross_weights_shape": Question(
        N_("Rows are queries, columns are keys. In cross-attention, who asks: the n = 4 decoder "
           "positions or the m = 5 encoder positions? And the question is about one head."),
        "(4, 5)",
        N_("The n = 4 decoder positions are the queries (rows) and the m = 5 encoder positions the "
           "keys (columns): one head's weights are (n, m) = (4, 5), each row a distribution over "
           "the five source tokens. All h heads together would be (h, n, m).")),
    "08.layer_norm": Question(
        N_("Layer norm treats each row (token) on its own: its mean and its variance over the "
           "d_model features. Use axis=-1 with keepdims=True so the (3, 1) statistics broadcast, "
           "and keep eps inside the square root."),
        "(X_ln - X_ln.mean(axis=-1, keepdims=True)) / np.sqrt(X_ln.var(axis=-1, keepdims=True) "
        "+ 1e-5)",
        N_("The first row (1, 2, 3, 6) has mean 3 and variance (4 + 1 + 0 + 9) / 4 = 3.5, so its "
           "layer norm is (-2, -1, 0, 3) / sqrt(3.5 + 1e-5) = (-1.0690, -0.5345, 0, 1.6036). "
           "np.var divides by d_model (ddof=0), as layer norm does; axis=0 would normalise each "
           "feature over the tokens instead.")),
    # --- 09 The cost of attention ---
    "09.score_entries": Question(
        N_("Every head forms its own score matrix with one entry per (query, key) pair. How many "
           "pairs do n queries and n keys make, and how many heads are there? d_k is a red "
           "herring."),
        "12 * 2000 * 2000",
        N_("One head: n * n = 2000 * 2000 = 4,000,000 pairs; twelve heads: 48,000,000 score "
           "entries. d_k = 64 is the length of each dot product (the work per entry), not the "
           "number of entries.")),
    "09.score_mib": Question(
        N_("Entries times bytes per entry, divided by the bytes of one MiB. One head, float64, and "
           "a MiB is a power of two, not a million."),
        "3072 * 3072 * 8 / 2**20",
        N_("3072^2 = 9,437,184 entries of 8 bytes are 75,497,472 bytes; divided by 2^20 "
           "= 1,048,576 that is exactly 72 MiB (75.5 MB in powers of ten; 36 MiB in float32).")),
    "09.growth_ratio": Question(
        N_("The score matrix is n x n. Write down its number of entries for n and for 2n, and "
           "divide."),
        "4",
        N_("(2n)^2 / n^2 = 4: twice the queries times twice the keys is four times the pairs, "
           "whatever n is. The time grows the same way, since every entry costs one dot product.")),
    "09.online_sum": Question(
        N_("The new block raises the running maximum. The old sum l = 1.2 was measured against the "
           "old maximum r = 3: what must happen to each of its terms e^(s - r) once the maximum is "
           "r' = 4? Then add the new terms, measured against r'."),
        "1.2 * np.exp(3.0 - 4.0) + np.exp(4.0 - 4.0) + np.exp(2.0 - 4.0) + np.exp(-1.0 - 4.0)",
        N_("r' = max(3.0, 4.0) = 4.0. Every old term e^(s - 3) becomes e^(s - 4) = e^(s - 3) "
           "e^(-1), so the old sum shrinks to 1.2 e^(-1) = 0.4415. The new terms are e^0 + e^(-2) "
           "+ e^(-5) = 1 + 0.1353 + 0.0067 = 1.1421, so l' = 1.5836.")),
    "09.heads_cost_ratio": Question(
        N_("With d_k = d_v = d_model / h, each head works on narrower vectors. Write the "
           "multiply-adds of all heads together as h * n^2 * (d_k + d_v) and put d_k = d_v "
           "= d_model / h in."),
        "ac.attention_cost(3000, d_k=32, h=24)['multiply_adds'] "
        "/ ac.attention_cost(3000, d_k=64, h=12)['multiply_adds']",
        N_("h n^2 (d_k + d_v) = h n^2 (2 d_model / h) = 2 n^2 d_model: the h cancels, so the "
           "factor is 1. Doubling the heads halves each head's width; on long inputs the cost is "
           "the n^2 of the score matrix, whatever h is (only the memory of the weights, h n^2, "
           "grows with h).")),
    # --- 10 Learning to attend ---
    "10.softmax_backward": Question(
        N_("Every weight p_j of a row depends on every score of that row through the shared "
           "denominator, so the gradient of one score collects the upstream dp of the whole row. "
           "The formula is in the question: which array is p, and along which axis is the row "
           "sum?"),
        "p = ac.softmax(x)  # (2, 3), the weights: each row sums to 1\n"
        "answer = p * (dp - np.sum(p * dp, axis=-1, keepdims=True))",
        N_("The Jacobian of one row's softmax is diag(p) - p p^T (p as a column vector, as in "
           "notebook 03), so dx_i = p_i (dp_i - sum_j p_j "
           "dp_j): the weights p, not the scores x, times the upstream gradient minus its "
           "p-weighted mean. np.sum(..., axis=-1, keepdims=True) takes that mean within each row "
           "(shape (2, 1), so it broadcasts back over the row). Keeping only p * dp drops the "
           "shared denominator; summing down the columns mixes the two rows.")),
    "10.attention_dQ": Question(
        N_("Go backwards through the forward pass O = A V, A = softmax(S), S = Q K^T / sqrt(d_k): "
           "first the gradient of the weights A, then through the softmax to the scores S (the "
           "formula of question 1), then to Q. Section 1 has the five formulas."),
        "A = ac.attention_weights(Q2, K2)  # (n, m) = (3, 3), the forward pass's weights\n"
        "dA = dO2 @ V2.T  # (n, d_v) @ (d_v, m) -> (n, m)\n"
        "dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))  # through the softmax\n"
        "answer = dS @ K2 / np.sqrt(4)  # (n, m) @ (m, d_k) -> (n, d_k)",
        N_("O = A V gives dA = dO V^T, one entry per (query, key). The softmax of each row turns "
           "it into dS = A * (dA - rowsum(A * dA)), the gradient of the scores. S = Q K^T "
           "/ sqrt(d_k) is linear in Q, so dQ = dS K / sqrt(d_k): the same factor 1/sqrt(d_k) as "
           "in the forward pass. dS^T Q / sqrt(d_k) would be dK, and dA K / sqrt(d_k) skips the "
           "softmax.")),
    "10.reversal_key": Question(
        N_("Write the sequence out with its positions: the digits x_0..x_5 at 0..5, the separator "
           "at 6, then the reversed digits. Which token comes at position i + 1 = 9, and where "
           "does that digit stand in the input?"),
        "3",
        N_("The reversed digits follow the separator: position 7 holds x_5, position 8 holds x_4 "
           "and position 9 holds x_3. The query at i = 8 predicts the token at position 9, so it "
           "must read x_3, at input position 3 = 2L - 1 - i = 11 - 8. Reading 2L - i = 4 (x_4) is "
           "the off-by-one of next-token prediction: that digit is already at position 8.")),
    "10.adam_small_gradient": Question(
        N_("Write out one Adam step (section 2) for a gradient g that is the same at every step. "
           "The bias corrections make m_hat = g and v_hat = g^2 exactly, from the first step on. "
           "What is m_hat / (sqrt(v_hat) + eps) then, and how does it depend on the size of g?"),
        "10 * 3e-3 * 1e-6 / (1e-6 + 1e-8)",
        N_("With m_hat = g and sqrt(v_hat) = |g| every step moves w by lr * g / (|g| + eps) = "
           "3e-3 * 1e-6 / (1e-6 + 1e-8) = 0.00297, so ten steps move it by 0.0297: almost the "
           "same as for g = 1e-2. A small gradient does not stop Adam; it rescales each "
           "parameter's step to about lr. 3e-8 (= 10 * lr * g) is what plain gradient descent "
           "would do. The stuck row of section 7 is stuck for another reason: W_Q and W_K are "
           "shared, so their steps follow the rows that do have gradient, and the gradient "
           "towards the right key is 1e-91 against theirs.")),
    # --- 11 Generating, and the KV cache ---
    "11.cache_shape": Question(
        N_("Every head keeps its own keys, one row per position that has gone through the model "
           "(the prompt's and the generated ones, the newest included), each of the head's width."),
        "(2, 10, 16)",
        N_("7 prompt tokens and 3 generated ones make t = 10 cached positions. Each of the h = 2 "
           "heads has its own (t, d_k) block of keys, so cache[\"K\"] is (h, t, d_k) "
           "= (2, 10, 16). d_model = 32 is the width before W_K and the split into heads.")),
    "11.cached_attention": Question(
        N_("The new position may attend to every cached position and to itself: put its key and "
           "value at the end of the cache first, then run ordinary attention for the one new "
           "query. Does it need a mask?"),
        "ac.scaled_dot_product_attention(\n"
        "    q, np.concatenate([K_old, k_new]), np.concatenate([V_old, v_new])\n"
        ")[0]",
        N_("np.concatenate stacks the rows: K is (t, d_k) = (5, 4) with the new key last, V is "
           "(5, 3). The new query is the last position, so the causal mask allows it every key and "
           "none is needed; [0] is the output (1, d_v) = (1, 3). Attending with K_old, V_old alone "
           "would leave out the new token itself, and causal_mask(5)[0] is the mask of the FIRST "
           "position, which hides all keys but one.")),
    "11.total_score_entries": Question(
        N_("Without a cache, step t runs attention over the whole prefix of t positions again: t "
           "queries, each against t keys. Add that up over t = 1..T."),
        "sum(t * t for t in range(1, 101))",
        N_("Step t computes t * t score entries, so the total is 1 + 4 + 9 + ... + 100^2 = "
           "T (T + 1) (2T + 1) / 6 = 100 * 101 * 201 / 6 = 338,350. With the cache step t computes "
           "only the new query's t entries, sum t = 5,050; counting only the last step gives "
           "100^2 = 10,000.")),
    "11.weight_explains": Question(
        N_("Look at the ablation of section 6: what happened to the accuracy when head 1, the "
           "head that is on the right key most often, was zeroed? What else reads that key?"),
        "False",
        N_("Head 1 puts its largest weight on the right key on most answer rows, yet with its "
           "output zeroed the model still answers almost as well, because head 0 reads the same "
           "key: the heads duplicate each other. A weight shows where a head reads; whether the "
           "answer depends on it is a question about what happens without it, which only an "
           "intervention (the ablation, or notebook 10's causal test) answers.")),
    "11.cache_saves_memory": Question(
        N_("What does the cached loop keep between steps that the recomputing loop throws away? "
           "Section 4 counts it in bytes."),
        "False",
        N_("The recomputing loop keeps only the tokens; the cached one keeps every layer's keys "
           "and values, 2 * layers * h * t * d_k numbers per sequence, growing by one row per "
           "token (0.5 MiB per token for Llama 2 7B in float16, 2 GiB at its 4,096-token "
           "context). In exchange each step computes one row instead of t: the cache spends "
           "memory to save time.")),
    # --- 12 Positions by rotation (RoPE) and by distance (ALiBi) ---
    "12.rope_attention": Question(
        N_("Project first (Q = X W_Q, K = X W_K, V = X W_V), then rotate Q and K, each row at its "
           "own position (ac.rope's default positions are 0..n-1), then run causal attention as in "
           "notebook 04. Which of the three is not rotated?"),
        "ac.scaled_dot_product_attention(\n"
        "    ac.rope(X @ W_Q), ac.rope(X @ W_K), X @ W_V, ac.causal_mask(5)\n"
        ")[0]",
        N_("RoPE goes after the projections and before the scores: rope(Q) rope(K)^T / sqrt(d_k) "
           "+ M, with rows 0..4 rotated by their positions. V = X W_V is not rotated: the weights "
           "decide where to read, the values are what is read. [0] is the output (n, d_v) = "
           "(5, 4); [1] would be the weights.")),
    "12.rope_cached_query": Question(
        N_("The new token is the fifth position. Rotate its query and its key at THAT position "
           "(positions=[...]), append the rotated key and the value to the cache, and attend with "
           "the one rotated query. Does it need a mask?"),
        "ac.scaled_dot_product_attention(\n"
        "    ac.rope(q, positions=[4]),\n"
        "    np.concatenate([K_cache, ac.rope(k, positions=[4])]),\n"
        "    np.concatenate([V_cache, v]),\n"
        ")[0]",
        N_("The cached keys were rotated at positions 0-3 when they entered the cache; the new key "
           "and query are rotated at t = 4, so every score sees the offset 4 - n. The new query "
           "is the last position and may see every key: no mask. Without positions=[4], ac.rope "
           "rotates the one row as position 0, the classic cache-offset slip.")),
    "12.alibi_slopes": Question(
        N_("12 is not a power of two. Take the slopes of the largest power of two below it, "
           "p = 8; the other 12 - 8 heads take every other slope of 2p = 16 heads, starting "
           "with the first."),
        "np.concatenate([2.0 ** (-8 * np.arange(1, 9) / 8),\n"
        "                2.0 ** (-8 * np.arange(1, 17) / 16)[0::2][:4]])",
        N_("For p = 8 the slopes are 2^(-1), 2^(-2), ..., 2^(-8). For 16 heads they would be "
           "2^(-0.5), 2^(-1), ..., 2^(-8); every other one from the first is 2^(-0.5), 2^(-1.5), "
           "2^(-2.5), 2^(-3.5) for the last 4 heads: 0.7071, 0.3536, 0.1768, 0.0884 after "
           "0.5, 0.25, ..., 0.0039. The geometric sequence 2^(-8(r+1)/12) is not ALiBi's rule "
           "for 12 heads.")),
    "12.layout_permutation": Question(
        N_("In your code (interleaved) pair j is read from columns 2j and 2j + 1; in the checkpoint "
           "(split halves) pair j is columns j and j + 4. W_Q[:, perm] puts old column perm[c] at "
           "new column c: which old column must land at new column 1? At new column 2?"),
        "np.argsort(np.concatenate([np.arange(0, 8, 2), np.arange(1, 8, 2)]))",
        N_("New column 2j must hold the first feature of pair j, which the checkpoint keeps in "
           "column j, and new column 2j + 1 the second, old column j + 4: perm = [0, 4, 1, 5, 2, "
           "6, 3, 7], the inverse of section 4's pi (np.argsort inverts a permutation). q and k "
           "are permuted alike, so every dot product, and every score, is unchanged. pi itself "
           "is the order for the other direction, interleaved weights into split-halves code, "
           "which Hugging Face's Llama conversion script applies to the rows of q_proj and "
           "k_proj (torch stores W transposed).")),
    "13.grouped_output": Question(
        N_("h = 4 query heads share h_kv = 2 key/value heads, so each K/V head serves a group of "
           "two neighbouring query heads. Make K and V as many heads as Q, in the order that "
           "pairs query head r with K/V head r // 2, then attend as in one multi-head call."),
        "ac.scaled_dot_product_attention(Q, np.repeat(K, 2, axis=0), np.repeat(V, 2, axis=0))[0]",
        N_("np.repeat(K, 2, axis=0) repeats each K/V head in place: heads 0, 0, 1, 1, so query "
           "heads 0 and 1 read K/V head 0 and heads 2 and 3 read K/V head 1, which is r // 2. "
           "Then every head is ordinary scaled dot-product attention, divided by sqrt(d_k) = "
           "sqrt(2), the width of one head. The output has shape (h, n, d_v) = (4, 3, 3) and "
           "equals ac.grouped_query_attention(Q, K, V)[0]. np.tile(K, (2, 1, 1)) would give "
           "0, 1, 0, 1: the wrong pairing.")),
    "13.cached_mask": Question(
        N_("The cache holds 4 positions and 3 new tokens arrive: the queries are at positions 4, "
           "5 and 6, the keys at 0 .. 6. Which keys may the query at position 4 see?"),
        "np.where(np.arange(7)[None, :] > np.arange(4, 7)[:, None], -np.inf, 0.0)",
        N_("Row i is the query at position i + m - n = i + 4. It may see every key up to its own "
           "position: row 0 blocks keys 5 and 6, row 1 blocks key 6, row 2 blocks nothing. That "
           "is ac.causal_mask(3, 7), the last three rows of the 7 x 7 causal mask. The top-left "
           "mask, the first three rows (torch's is_causal=True with n != m), would hide keys "
           "1 .. 6 from the first new query.")),
    "13.cache_bytes_per_token": Question(
        N_("One token adds a key and a value in every layer, in each of the h_kv key/value heads, "
           "d_k numbers each. Which of the given numbers is not part of it?"),
        "2 * 28 * 4 * 128 * 2",
        N_("2 (a key and a value) x 28 layers x h_kv = 4 K/V heads x d_k = 128 numbers x 2 bytes "
           "= 57,344 bytes = 56 KiB per token. The h = 28 query heads do not enter: queries are "
           "not cached. With h_kv = h = 28 it would be seven times as much.")),
    "13.fewer_scores": Question(
        N_("Count the score entries QK^T of one layer: how many query heads compute them, with "
           "how many queries and keys each? Which of these numbers does h_kv change?"),
        "False",
        N_("Every query head r still computes its (n, m) scores against the keys of its group: "
           "h * n * m entries, exactly as many as multi-head attention. Grouping shrinks W_K and "
           "W_V, the keys and values computed, and above all the cache and the bytes read from it "
           "at every generated token; when decoding is limited by memory traffic, as it usually "
           "is, that is where the time goes.")),
    # --- 14 Sliding windows and attention sinks ---
    "14.window_mask": Question(
        N_("Start from ac.causal_mask(7): which keys does it leave to query i? Now also hide the "
           "keys that are too old. How many keys does query 6 see with window 4, itself "
           "included?"),
        "np.where((np.arange(7)[None, :] <= np.arange(7)[:, None])\n"
        "         & (np.arange(7)[None, :] > np.arange(7)[:, None] - 4), 0.0, -np.inf)",
        N_("Query i may see key j when j <= i (causal) and j > i - 4 (not older than the window): "
           "keys i - 3 .. i, four of them. ac.sliding_window_mask(7, 4) is the same mask. "
           "j >= i - 4 would give five keys, and |i - j| < 4 would also let i see i + 1 .. i + 3.")),
    "14.receptive_field": Question(
        N_("Follow the change: after layer 1, which outputs can it have reached (the window "
           "includes the query itself)? Layer 2 reads those outputs. Section 2 measured it for "
           "small windows; the rule does not depend on the size."),
        "32 * (4096 - 1)",
        N_("One layer with window w = 4096 lets position p read p - 4095 .. p, so a change moves "
           "at most w - 1 = 4095 positions per layer; after L = 32 layers, 32 * 4095 = 131,040 "
           "positions. Section 2 measures the same rule layer by layer. 32 * 4096 = 131,072, the "
           "paper's ~131K, counts a window of W + 1 positions (i - W .. i), or the query's own "
           "position as a step: the same ~131K, off by 32.")),
    "14.cache_positions": Question(
        N_("Two kinds of rows: the sinks, which are never evicted, and the most recent window, "
           "which rolls. Write down the newest position and count back, the newest included."),
        "[0, 1, 2, 3] + list(range(23, 31))",
        N_("The s = 4 sinks are positions 0, 1, 2, 3 for ever; the window of w = 8 holds the 8 "
           "most recent positions, 30 - 8 + 1 = 23 .. 30. Twelve rows in all, at every step: "
           "the memory is flat. Without sinks the cache would hold 23 .. 30 only (or the last "
           "12, 19 .. 30, at the same size).")),
})
