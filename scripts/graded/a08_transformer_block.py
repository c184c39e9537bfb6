"""Assignment 08 of the graded track: The Transformer block (notebooks/08_transformer_block.ipynb)."""

from __future__ import annotations

from scripts.graded.items import DERIVE, EXPERIMENT, FILL, Assignment, Item, code

ASSIGNMENT = Assignment(
    "08_transformer_block", "The Transformer block",
    code("""
import numpy as np

import attention_core as ac

rng = np.random.default_rng(2608)
n, d_model, h, d_ff = 5, 8, 2, 16
X = rng.normal(size=(n, d_model))                     # (n, d_model)
layer = ac.init_encoder_layer(d_model, h, d_ff, rng)   # .self_attn, .norm1, .ffn, .norm2
# layer.self_attn: .W_Q, .W_K, .W_V, .W_O, .num_heads; layer.ffn: .W_1, .b_1, .W_2, .b_2;
# layer.norm1, layer.norm2: .gamma, .beta
"""),
    (
        Item("nb08_decoder_params", FILL,
             "One decoder layer as `ac.init_decoder_layer(96, 6, 384, rng)` builds it: "
             "d_model = 96, h = 6 heads, d_ff = 384, attention without biases, the FFN with its "
             "biases, and every layer norm with its gain and bias. Assign to `n_decoder_params` "
             "the number of its parameters: one whole number. Count it first, then check with "
             "the arrays of the layer if you like.",
             code("""
### BEGIN SOLUTION
attention_weights_count = 4 * 96 * 96                 # W_Q, W_K, W_V, W_O: h d_k = h d_v = d_model
ffn_count = 2 * 96 * 384 + 384 + 96                   # W_1, W_2, b_1, b_2
n_decoder_params = 2 * attention_weights_count + ffn_count + 3 * 2 * 96   # self + cross, FFN, 3 norms
### END SOLUTION
"""),
             answers=("n_decoder_params",), points=2,
             visible=code("""
assert float(n_decoder_params).is_integer() and n_decoder_params > 0, "a count of parameters is a positive whole number"
"""),
             hidden=code("""
_p = ac.init_decoder_layer(96, 6, 384, np.random.default_rng(0))
_sizes = [a.size for part in vars(_p).values() for a in vars(part).values() if isinstance(a, np.ndarray)]
assert n_decoder_params != sum(_sizes) - 576, "the three layer norms have a gain and a bias each"
assert n_decoder_params != sum(_sizes) - 4 * 96 ** 2, "a decoder layer has two attentions: masked self-attention and cross-attention"
assert n_decoder_params == sum(_sizes), "not the number of parameters of one decoder layer"
""")),
        Item("nb08_encoder_by_hand", EXPERIMENT,
             "Write `encoder_layer_parts(X, params, mask=None)` returning (H, Y), the two halves "
             "of the post-norm encoder layer: H = LN_1(X + MHA(X, X)) and Y = LN_2(H + FFN(H)), "
             "built from ac.multi_head_attention, ac.feed_forward and ac.layer_norm with the "
             "arrays of `params` (not by calling ac.encoder_layer or the parts of params "
             "directly). X may carry a batch axis in front. Run it on X and `layer` with the "
             "causal mask as `H_c, Y_c`, and look at the mean and standard deviation of each row "
             "of Y_c: why are they what they are?",
             code("""
def encoder_layer_parts(X, params, mask=None):
    ### BEGIN SOLUTION
    sa, f, n1, n2 = params.self_attn, params.ffn, params.norm1, params.norm2
    mixed = ac.multi_head_attention(X, X, sa.W_Q, sa.W_K, sa.W_V, sa.W_O, sa.num_heads, mask)[0]
    H = ac.layer_norm(X + mixed, n1.gamma, n1.beta)            # (..., n, d_model)
    bent = ac.feed_forward(H, f.W_1, f.b_1, f.W_2, f.b_2)      # (..., n, d_model)
    return H, ac.layer_norm(H + bent, n2.gamma, n2.beta)       # (..., n, d_model) each
    ### END SOLUTION


### BEGIN SOLUTION
H_c, Y_c = encoder_layer_parts(X, layer, ac.causal_mask(n))
### END SOLUTION
print("row means:", np.round(Y_c.mean(axis=-1), 6))
print("row stds: ", np.round(Y_c.std(axis=-1), 6))
"""),
             answers=("encoder_layer_parts", "H_c", "Y_c"), points=4,
             visible=code("""
assert np.shape(H_c) == (n, d_model) and np.shape(Y_c) == (n, d_model), "H and Y are (n, d_model)"
"""),
             hidden=code("""
assert np.allclose(Y_c, ac.encoder_layer(X, layer, ac.causal_mask(n))), "Y_c is not the encoder layer's output with the causal mask"
assert np.allclose(H_c, layer.norm1(X + layer.self_attn(X, X, ac.causal_mask(n))[0])), "H_c is not LN_1(X + MHA(X, X))"
_g = np.random.default_rng(29)
_l = ac.init_encoder_layer(6, 3, 10, _g)
_l = ac.EncoderLayerParams(self_attn=_l.self_attn, ffn=_l.ffn,
                           norm1=ac.LayerNormParams(_g.normal(size=6), _g.normal(size=6)),
                           norm2=ac.LayerNormParams(_g.normal(size=6), _g.normal(size=6)))
_X = _g.normal(size=(2, 4, 6))
_H, _Y = encoder_layer_parts(_X, _l)
assert np.shape(_Y) == (2, 4, 6), "a batch of two sequences: (2, n, d_model)"
assert np.allclose(_Y, ac.encoder_layer(_X, _l)), "with other gains and biases (norm1 and norm2 differ) the output is wrong"
assert np.allclose(_H, _l.norm1(_X + _l.self_attn(_X, _X)[0])), "H is not LN_1(X + MHA(X, X)) for gains and biases of the layer"
_M = ac.padding_mask([4, 2], m=4)
assert np.allclose(encoder_layer_parts(_X, _l, _M)[1], ac.encoder_layer(_X, _l, _M)), "a padding mask must reach the attention"
""")),
        Item("nb08_layer_norm_invariance", DERIVE,
             "Take gamma = 1 and beta = 0, and write LN(x) = (x - mu) / sqrt(sigma^2 + eps) for "
             "a row x of d_model numbers with mean mu and (biased) variance sigma^2. (a) Show that "
             "LN(x) has mean 0 and variance sigma^2 / (sigma^2 + eps). (b) Show that "
             "LN(a x + b) = LN(x) for every number a > 0 and every number b added to all "
             "entries, when eps = 0; what happens for a < 0? (c) Use (b) to explain why the rows "
             "of a post-norm layer's output cannot grow from layer to layer, and what is "
             "different in the residual stream of a pre-norm layer.",
             "(a) $\\frac{1}{d}\\sum_j (x_j - \\mu) = \\mu - \\mu = 0$, so the mean of LN(x) is 0; "
             "its variance is $\\frac{1}{d}\\sum_j (x_j - \\mu)^2 / (\\sigma^2 + \\epsilon) = "
             "\\sigma^2 / (\\sigma^2 + \\epsilon)$, just below 1. (b) $a x + b$ has mean "
             "$a \\mu + b$ and variance $a^2 \\sigma^2$, so $LN(a x + b) = (a x + b - a\\mu - b) / "
             "\\sqrt{a^2 \\sigma^2} = a (x - \\mu) / (|a| \\sigma)$: that is $LN(x)$ for "
             "$a > 0$ and $-LN(x)$ for $a < 0$. (c) Every post-norm sublayer ends in a layer "
             "norm, so each output row is gamma times a row of mean 0 and variance about 1 (norm "
             "about $\\sqrt{d_{model}}$), plus beta, whatever the size of its input: nothing "
             "accumulates across layers. In pre-norm, $x + F(LN(x))$ adds each sublayer's output "
             "to an un-normalised stream, so its norm can grow with depth (only a final layer "
             "norm rescales it).",
             rubric=((1, "(a) the mean is 0 and the variance sigma^2 / (sigma^2 + eps), shown "
                         "from the definitions."),
                     (1, "(b) mean a mu + b and variance a^2 sigma^2 give LN(ax + b) = "
                         "sign(a) LN(x)."),
                     (1, "(c) post-norm: every output row is re-normalised (norm about "
                         "sqrt(d_model)), so nothing grows; pre-norm adds to an un-normalised "
                         "residual stream that can grow with depth.")))),
)
