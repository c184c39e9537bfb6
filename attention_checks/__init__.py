"""attention_checks: every input check of attention_core and attention_learning, in one package.

The maths modules call one check per public function, at its top, and read as the formulas; the
checks are here, with the messages a learner sees. Each bad input raises ValueError naming the
argument and the shapes or values it got. Results that float64 cannot hold (a score that
overflows, a row that the mask blocks entirely) can only be found after computing: the maths
detects them where they arise and the functions here explain them.

The maths modules `import attention_checks as check` and call `check.attention(...)` and so on:
every check is named here, and written in the file of its topic, in the order of the course:

1. arrays.py                numbers and arrays: as_numbers, as_array, positive_int, finite_real,
                            finite (an overflow after computing)
2. masks.py                 as_mask (additive only: boolean and 0/1 masks are refused),
                            query_key_sizes (queries the last n of m positions), lengths
3. scaled_dot_product.py    softmax_input, attention, scores (explains rows softmax cannot take)
4. multi_head_attention.py  heads, grouped, multi_head (forward and backward share it),
                            projections
5. positions.py             positional (sinusoidal), rope
6. encoder_decoder.py       feed_forward, layer_norm; rng, params, layers, same_d_model
7. tiled.py                 cost, tile_max, tile_sums, tile_output
8. learning.py              grad_like, softmax_output, layer_norm_backward, tokens,
                            embedding_table, embedding_grad, targets, adam, lm_config, is_config,
                            lm, lm_mask, steps
"""

from .arrays import as_array, as_numbers, finite, finite_real, positive_int
from .encoder_decoder import feed_forward, layer_norm, layers, params, rng, same_d_model
from .learning import (adam, embedding_grad, embedding_table, grad_like, is_config, layer_norm_backward,
                       lm, lm_config, lm_mask, softmax_output, steps, targets, tokens)
from .masks import BOOL_MASK_HELP, as_mask, lengths, query_key_sizes
from .multi_head_attention import grouped, heads, multi_head, projections
from .positions import positional, rope
from .scaled_dot_product import attention, scores, softmax_input
from .tiled import cost, tile_max, tile_output, tile_sums

__all__ = [
    "as_numbers", "as_array", "positive_int", "finite_real", "finite",
    "BOOL_MASK_HELP", "as_mask", "query_key_sizes", "lengths",
    "softmax_input", "attention", "scores",
    "heads", "multi_head", "grouped", "projections",
    "positional", "rope",
    "feed_forward", "layer_norm", "rng", "params", "layers", "same_d_model",
    "cost", "tile_max", "tile_sums", "tile_output",
    "grad_like", "softmax_output", "layer_norm_backward", "tokens", "embedding_table",
    "embedding_grad", "targets", "adam", "lm_config", "is_config", "lm", "lm_mask", "steps",
]
