"""No reply to a wrong answer contains the expected answer (issue 21), in English and in Japanese.

For every question of the QUESTIONS registry a case below calls its check as the notebook does
(with inputs of the same kind). Each check gets a set of wrong answers: the named mistakes the check
itself compares with (caught by spying on check_value / _check_number), and generic slips of the
expected answer (x1.1, +1, negated, x10, transposed, one entry changed, wrong shape, off by one).
Every one must get a non-correct verdict, and the message must not contain the expected answer in
any form a reader would recognise (revealing(): a number in digits, decimals, scientific notation or
words, an array's entries or a run of them, a shape however written, True/False or a letter where
the reply states it), nor a case's own giveaway phrases. revealing() has its own tests below it,
and test_a_reply_that_leaks_is_caught shows that each case fails when its reply adds the answer.

A question added to the registry without a case here fails test_every_question_has_a_case.
"""

import re
import warnings
from typing import NamedTuple

import numpy as np
import pytest

import attention_core as ac
from course import checks, i18n
from course import nb01_qkv_projections as nb01
from course import nb02_worked_example_3x2 as nb02
from course import nb03_scaling_and_softmax_saturation as nb03
from course import nb04_masking as nb04
from course import nb05_multi_head_attention as nb05
from course import nb06_positional_encoding as nb06
from course import nb07_feed_forward_network as nb07
from course import nb08_transformer_block as nb08
from course import nb09_cost_of_attention as nb09
from course import nb10_learning_to_attend as nb10
from course import nb11_generating_and_kv_cache as nb11
from course import nb12_rope_and_alibi as nb12
from course import nb13_grouped_query_attention as nb13
from course import nb14_sliding_window_attention as nb14

rng = np.random.default_rng(21)
_n = rng.normal
Q00, K00 = _n(size=(3, 4)), _n(size=(5, 4))
Q01, K01, V01 = _n(size=(3, 4)), _n(size=(3, 4)), _n(size=(3, 2))
Q02 = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
K02 = np.array([[1.0, 1.0], [1.0, -1.0], [2.0, 0.0]])
V02 = np.array([[2.0, 0.0], [0.0, 3.0], [2.0, 3.0]])
BOOKS = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [1, 0, 1, 0], [0, 0, 1, 1], [0, 0, 0, 1]], float)
Q03, K03 = _n(size=(2, 4)), _n(size=(3, 4))
Q04, K04 = _n(size=(5, 4)), _n(size=(5, 4))
Qb, Kb, Vb = _n(size=(3, 4, 4)), _n(size=(3, 4, 4)), _n(size=(3, 4, 2))
PAD = ac.padding_mask([4, 2, 3], m=4)
X05 = _n(size=(3, 4))
P05 = ac.init_attention_params(4, 2, np.random.default_rng(7))
Y06, PERM = _n(size=(4, 3)), np.array([2, 0, 3, 1])
X07, W1, b1, W2, b2 = _n(size=(2, 2)), _n(size=(2, 3)), _n(size=(3,)), _n(size=(3, 2)), _n(size=(2,))
MEMORY, Y08, A108, X08 = _n(size=(5, 4)), _n(size=(3, 4)), _n(size=(3, 4)), _n(size=(5, 4))
X_LN = np.array([[1.0, 2.0, 3.0, 6.0], [0.0, -1.0, 1.0, 0.0], [2.0, 2.0, 0.0, 0.0]])
x10, dp10 = np.array([[1.0, 0.0, -1.0], [0.5, 2.0, 0.5]]), np.array([[1.0, -2.0, 0.5], [0.0, 1.0, 3.0]])
Q10, K10, V10, dO10 = _n(size=(3, 4)), _n(size=(3, 4)), _n(size=(3, 2)), _n(size=(3, 2))
q11, Kold, Vold, knew, vnew = _n(size=(1, 4)), _n(size=(4, 4)), _n(size=(4, 3)), _n(size=(1, 4)), _n(size=(1, 3))
Q13, K13, V13 = _n(size=(4, 3, 2)), _n(size=(2, 5, 2)), _n(size=(2, 5, 3))


def _cached_output():
    K, V = np.concatenate([Kold, knew]), np.concatenate([Vold, vnew])
    return ac.scaled_dot_product_attention(q11, K, V)[0]


def _ffn_params():
    return 2 * 512 * 2048 + 2048 + 512


t100 = np.arange(1, 101)

_r12 = np.random.default_rng(12)  # notebook 12's check cells
X12, WQ12, WK12, WV12 = _r12.normal(size=(5, 8)), _r12.normal(size=(8, 4)), _r12.normal(size=(8, 4)), _r12.normal(size=(8, 4))
_r13 = np.random.default_rng(13)
Kc12, Vc12 = ac.rope(_r13.normal(size=(4, 4))), _r13.normal(size=(4, 4))
q12, k12, v12 = _r13.normal(size=(1, 4)), _r13.normal(size=(1, 4)), _r13.normal(size=(1, 4))


def _rope_cached_output():
    K = np.concatenate([Kc12, ac.rope(k12, positions=[4])])
    return ac.scaled_dot_product_attention(ac.rope(q12, positions=[4]), K, np.concatenate([Vc12, v12]))[0]


# key: (check(answer) -> Verdict, expected answer, extra wrong answers, givens the message may
#       quote (the question's own parameters), phrases that give the answer away)
CASES = {
    "00.weights": (lambda a: checks.check_weights(a, Q00, K00),
                   ac.attention_weights(Q00, K00), [], [], []),
    "01.qkv_shapes": (lambda a: nb01.check_qkv_shapes(a, n=5, d_model=8, d_k=4, d_v=3),
                      ((5, 4), (5, 4), (5, 3)),
                      [((8, 4), (8, 4), (8, 3)), ((5, 4), (5, 4), (5, 4)), ((4, 5), (4, 5), (3, 5)),
                       ((5, 8),) * 3, ((5, 4), (5, 3), (5, 4)), ((5, 3), (5, 3), (5, 4)),
                       ((6, 4), (6, 4), (6, 3)), ((5, 4), (5, 4), (5, 2))], [], []),
    "01.symmetric_scores": (nb01.check_symmetric_scores, True, [False, "no", 0], [],
                            ["always symmetric", "いつでも対称", "= Q Q^T = S"]),
    "01.library_weights": (lambda a: nb01.check_library_weights(a, np.array([1.0, 0, 0, 1]), BOOKS),
                           ac.attention_weights(np.array([[1.0, 0, 0, 1]]), BOOKS)[0], [], [], []),
    "01.raw_scores": (lambda a: nb01.check_raw_scores(a, Q01, K01, V01), Q01 @ K01.T, [], [], []),
    "02.weight_row": (lambda a: nb02.check_weight_row(a, Q02, K02, i=1),
                      ac.attention_weights(Q02, K02)[1], [], [], []),
    "02.output_row": (lambda a: nb02.check_output_row(a, Q02, K02, V02, i=1),
                      ac.scaled_dot_product_attention(Q02, K02, V02)[0][1], [], [], []),
    "03.dot_product_variance": (lambda a: nb03.check_dot_product_variance(a, d_k=64), 64,
                                [8, 1, 63, 65, 128, 4096], ["d_k = 64"], []),
    "03.scaled_variance": (lambda a: nb03.check_dot_product_variance(a, d_k=64, scaled=True), 1,
                           [64, 8, 0, 2, 0.5], ["d_k = 64"], []),
    "03.weights": (lambda a: checks.check_weights(a, Q03, K03), ac.attention_weights(Q03, K03),
                   [], [], []),
    "03.why_scale": (nb03.check_why_scale, "b", ["a", "c", "d"], [],
                     ["Var = 1", "spread of the scores", "how peaked", "ばらつき", "尖る"]),
    "04.causal_mask": (lambda a: nb04.check_causal_mask(a, n=5), ac.causal_mask(5),
                       [np.where(np.triu(np.ones((5, 5)), 1) > 0, -np.inf, 1.0)], [], []),
    "04.masked_weights": (lambda a: checks.check_weights(a, Q04, K04, mask=ac.causal_mask(5)),
                          ac.attention_weights(Q04, K04, ac.causal_mask(5)), [], [], []),
    "04.padded_output": (lambda a: checks.check_attention(a, Qb, Kb, Vb, mask=PAD),
                         ac.scaled_dot_product_attention(Qb, Kb, Vb, PAD)[0], [], [], []),
    "05.W_O_shape": (lambda a: nb05.check_W_O_shape(a, d_model=16, h=4, d_k=3, d_v=5), (20, 16),
                     [(12, 16), (16, 20), (5, 16), (20, 15), (21, 16), (16, 16), (20, 16, 1)],
                     [], []),
    "05.multi_head": (lambda a: nb05.check_multi_head(a, X05, P05.W_Q, P05.W_K, P05.W_V, P05.W_O,
                                                      num_heads=2),
                      ac.multi_head_attention(X05, X05, P05.W_Q, P05.W_K, P05.W_V, P05.W_O, 2)[0],
                      [], [], []),
    "05.param_count": (lambda a: nb05.check_mha_param_count(a, d_model=512, h=8), 4 * 512 ** 2,
                       [3 * 512 ** 2, 8 * 4 * 512 ** 2, 4 * 512 ** 2 + 4 * 512], ["512"], []),
    "06.pe_entry": (lambda a: nb06.check_pe_entry(a, pos=10, dim=3, d_model=8),
                    float(ac.sinusoidal_positional_encoding(11, 8)[10, 3]), [], [], []),
    "06.permuted_output": (lambda a: nb06.check_permuted_output(a, Y06, PERM), Y06[PERM], [], [], []),
    "07.ffn_param_count": (lambda a: nb07.check_ffn_param_count(a, d_model=512, d_ff=2048),
                           _ffn_params(), [2 * 512 * 2048, 4 * 512 ** 2], ["512", "2048", "2,048"],
                           []),
    "07.ffn_output": (lambda a: nb07.check_ffn_output(a, X07, W1, b1, W2, b2),
                      ac.feed_forward(X07, W1, b1, W2, b2), [], [], []),
    "08.cross_kv_source": (lambda a: nb08.check_cross_kv_source(a, MEMORY, decoder_states=(Y08, A108),
                                                                encoder_input=X08),
                           MEMORY, [Y08, A108, X08], [], []),
    "08.cross_weights_shape": (lambda a: nb08.check_cross_weights_shape(a, n=3, m=5), (3, 5),
                               [(5, 3), (3, 3), (5, 5), (8, 3, 5), (1, 3, 5), (3, 4), (2, 5),
                                (3, 5, 2), (15,)], [], []),
    "08.layer_norm": (lambda a: nb08.check_layer_norm(a, X_LN),
                      ac.layer_norm(X_LN, np.ones(4), np.zeros(4)), [], [], []),
    "09.score_entries": (lambda a: nb09.check_score_entries(a, n=2000, h=12, d_k=64),
                         12 * 2000 * 2000, [], ["2000", "2,000"], []),
    "09.score_mib": (lambda a: nb09.check_score_mib(a, n=3072), 8 * 3072 ** 2 / 2 ** 20, [],
                     ["3072", "3,072"], []),
    "09.growth_ratio": (lambda a: nb09.check_growth_ratio(a, factor=2), 4, [2, 8, 3, 5], [], []),
    "09.online_sum": (lambda a: nb09.check_online_sum(a, r=3.0, l=1.2, s_block=[4.0, 2.0, -1.0]),
                      1.2 * np.exp(-1.0) + np.exp([0.0, -2.0, -5.0]).sum(), [], [], []),
    "09.heads_cost_ratio": (lambda a: nb09.check_heads_cost_ratio(a, n=3000, d_model=768, h_from=12,
                                                                  h_to=24),
                            1, [2, 0.5, 4, 0], [], ["the same for h = 12 and h = 24", "h = 12 でも h = 24 でも同じ"]),
    "10.softmax_backward": (lambda a: nb10.check_softmax_backward(a, x10, dp10),
                            ac.softmax(x10) * (dp10 - np.sum(ac.softmax(x10) * dp10, axis=-1,
                                                             keepdims=True)), [], [], []),
    "10.attention_dQ": (lambda a: nb10.check_attention_dQ(a, Q10, K10, V10, dO10),
                        ac.attention_backward(Q10, K10, V10, dO10)[0]
                        if hasattr(ac, "attention_backward") else None, [], [], []),
    "10.adam_small_gradient": (lambda a: nb10.check_adam_small_gradient(a),
                               10 * 3e-3 * 1e-6 / (1e-6 + 1e-8), [3e-8, 0.3, 0.003, 1.0],
                               ["1e-8", "eps"], []),
    "10.reversal_key": (lambda a: nb10.check_reversal_key(a, i=13, L=12), 10,
                        [11, 13, 1, 12, 9, 0, 23], [], ["2L - 1 - i"]),
    "11.cache_shape": (lambda a: nb11.check_cache_shape(a, h=2, t=10, d_k=16, d_model=32), (2, 10, 16),
                       [(10, 16), (10, 32), (2, 16, 10), (2, 9, 16), (2, 11, 16), (2, 10, 32),
                        (3, 10, 16), (2, 10, 8), (2, 10)], [], []),
    "11.cached_attention": (lambda a: nb11.check_cached_attention(a, q11, Kold, Vold, knew, vnew),
                            _cached_output(), [], [], []),
    "11.weight_explains": (nb11.check_weight_explains, False, [True, np.True_, 1, "False"], [],
                           ["Correct: False", "正解: False"]),
    "11.cache_saves_memory": (nb11.check_cache_saves_memory, False, [True, np.True_, 1, "False"], [],
                              ["Correct: False", "正解: False"]),
    "11.total_score_entries": (lambda a: nb11.check_total_score_entries(a, T=100, cached=False),
                               int(np.sum(t100 ** 2)), [int(np.sum(t100)), 100 * 100], ["T = 100"],
                               []),
    "12.rope_attention": (lambda a: nb12.check_rope_attention(a, X12, WQ12, WK12, WV12),
                          ac.scaled_dot_product_attention(ac.rope(X12 @ WQ12), ac.rope(X12 @ WK12),
                                                          X12 @ WV12, ac.causal_mask(5))[0], [], [], []),
    "12.rope_cached_query": (lambda a: nb12.check_rope_cached_query(a, q12, k12, v12, Kc12, Vc12, t=4),
                             _rope_cached_output(), [], ["positions=[4]", "position 4"], []),
    "12.alibi_slopes": (lambda a: nb12.check_alibi_slopes(a, num_heads=12), ac.alibi_slopes(12),
                        [ac.alibi_slopes(16)[:12], ac.alibi_slopes(8)], ["h = 12"], []),
    "12.layout_permutation": (lambda a: nb12.check_layout_permutation(a, d=8),
                              np.array([0, 4, 1, 5, 2, 6, 3, 7]),
                              [np.arange(8), [0, 2, 4, 6, 1, 3, 5, 7], [4, 0, 5, 1, 6, 2, 7, 3],
                               [0, 4, 1, 5, 2, 6, 3, 3]], [], ["0, 4, 1, 5", "[0 4 1 5"]),
    "13.grouped_output": (lambda a: nb13.check_grouped_output(a, Q13, K13, V13),
                          ac.grouped_query_attention(Q13, K13, V13)[0], [], [], []),
    "13.cached_mask": (lambda a: nb13.check_cached_mask(a, n=3, m=7), ac.causal_mask(3, 7),
                       [np.zeros((3, 7)), ac.causal_mask(3), ac.causal_mask(7),
                        np.where(np.isfinite(ac.causal_mask(3, 7)), 0.0, -1e9)], [], []),
    "13.cache_bytes_per_token": (lambda a: nb13.check_cache_bytes_per_token(
        a, layers=28, h=28, h_kv=4, d_k=128, bytes_per_number=2), 2 * 28 * 4 * 128 * 2,
        [57344 // 2, 57344 * 7, 57344 // 28, 57344 * 8, 56, 0.125, 0], [], []),
    "13.fewer_scores": (nb13.check_fewer_scores, False, [True, np.True_, 1, "False"], [],
                        ["Correct: False", "正解: False"]),
    "14.window_mask": (lambda a: nb14.check_window_mask(a, n=7, window=4), ac.sliding_window_mask(7, 4),
                       [ac.sliding_window_mask(7, 5), ac.sliding_window_mask(7, 3), ac.causal_mask(7),
                        np.isfinite(ac.sliding_window_mask(7, 4)).astype(float)], [], []),
    "14.receptive_field": (lambda a: nb14.check_reach(a, layers=32, window=4096), 131040,
                           [131072, 4095, 4096, 131039, 130000], [], []),
    "14.cache_positions": (lambda a: nb14.check_cache_positions(a, t=30, window=8, sinks=4),
                           [0, 1, 2, 3, *range(23, 31)], [list(range(23, 31)), list(range(19, 31)),
                                                          [0, 1, 2, 3, *range(22, 31)],
                                                          [1, 2, 3, 4, *range(23, 31)], [0, 1, 2, 3, *range(24, 32)]],
                           [], []),
}


# the options of a multiple-choice question, as the notebook prints them (in the reply's language)
CHOICES = {"03.why_scale": nb03.WHY_SCALE_CHOICES}


def _dq_expected():
    Q, K, V, dO = Q10, K10, V10, dO10
    A = ac.attention_weights(Q, K)
    dA = dO @ V.T
    dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))
    return dS @ K / np.sqrt(Q.shape[-1])


if CASES["10.attention_dQ"][1] is None:
    c = CASES["10.attention_dQ"]
    CASES["10.attention_dQ"] = (c[0], _dq_expected(), *c[2:])

COMPANIONS = (checks, nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09, nb10, nb11, nb12, nb13, nb14)


def test_every_question_has_a_case():
    assert set(CASES) == set(checks.QUESTIONS), "a question without a no-reveal case (or a stale case)"


def _named_mistake_answers(check, expected, monkeypatch) -> list:
    """The values of the mistakes the check compares with: spy on check_value / _check_number."""
    seen = []

    def spy(real):
        def wrapped(answer, right, what, mistakes=None, *args, **kwargs):
            for value in (mistakes or {}).values():
                seen.append(value[0] if isinstance(value, tuple) and len(value) == 2
                            and isinstance(value[1], dict) else value)
            return real(answer, right, what, mistakes, *args, **kwargs)
        return wrapped

    with monkeypatch.context() as m:
        for module in COMPANIONS:
            for name in ("check_value", "_check_number"):
                if hasattr(module, name):
                    m.setattr(module, name, spy(getattr(module, name)))
        assert check(expected).ok, "the case's expected answer must be Correct"
    return seen


def _generic_wrong_answers(expected) -> list:
    if isinstance(expected, (bool, str)) or (isinstance(expected, tuple)):
        return []
    e = np.asarray(expected, dtype=float)
    if e.ndim == 0:
        x = float(e)
        out = [x * 1.1, x + 1, -x - 1, x * 10 + 1, x / 10 + 0.3]
        if x.is_integer():
            out = [int(x) + 1, int(x) - 1, 2 * int(x) + 1, -int(x) - 1]
        return out
    finite = np.where(np.isfinite(e), e, 0.0)
    changed = e.copy()
    changed.flat[changed.size // 2] += 0.5
    out = [e * 1.1 + 0.01, e + 1, -e - 0.1, e * 10 + 1, changed, finite[..., :-1],
           np.concatenate([e, e], axis=0)]
    if e.ndim >= 2:
        out.append(np.swapaxes(e, -1, -2) + (0.0 if e.shape[-1] != e.shape[-2] else 0.2))
    return out


# --- how a reply could give the expected answer away ---------------------------------------------
# One function, revealing(), says which pieces of a reply give the expected answer away; its own
# tests (test_revealing_*) show replies it catches and replies it lets pass, and why.

_NUMBER = re.compile(
    r"(?P<sign>[-+\u2212])?(?P<digits>\d{1,3}(?:,\d{3})+|\d+)(?P<frac>\.\d*)?"
    r"(?:\s?[eE](?P<e>[-+\u2212]?\d+)"  # 2.97e-02
    r"|\s?(?:[x\u00d7\u00b7*]|\\times)\s?10\s?(?:\^|\*\*)\s?[({]?(?P<e10>[-+\u2212]?\d+)[)}]?"  # 2.97 × 10^-2
    r"|\s?[x\u00d7\u00b7]\s?10(?P<sup>[\u207b\u207a]?[\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+))?"  # 2.97×10⁻²
    r"(?P<pct>\s?%)?"
    r"|(?P<isign>[-+\u2212])?(?:np\.)?(?P<inf>inf\b|\u221e)")
_SUPERSCRIPT = str.maketrans("\u207b\u207a\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079",
                             "-+0123456789")
_NAME_CHAR = re.compile(r"[A-Za-z0-9_]")
_WORDS = {2: ["two", "twice", "double", "doubles", "doubled"], 3: ["three", "triple"],
          4: ["four", "quadruple"], 5: ["five"], 6: ["six"], 7: ["seven"], 8: ["eight"],
          9: ["nine"], 10: ["ten"], 11: ["eleven"], 12: ["twelve"], 0.5: ["half"]}
_KANJI = dict(zip(range(2, 11), "二三四五六七八九十", strict=True))
_SHAPE_GAP = re.compile(r"\s*(?:[,x\u00d7*]|by)\s*|\s+")  # (2, 10, 16), 2x10x16, 2 × 10 × 16
_ARRAY_GAP = re.compile(r"[\s,;\[\]]+")  # [0 4 1 5], [[0, -inf], [0, 0]]


class _Number(NamedTuple):
    start: int
    end: int
    value: float
    step: float  # the unit of its last written digit: what it was rounded to
    digits: int  # significant digits written
    decimals: int  # digits after the point, as written (2.97e-02: 2)


def _numbers(message: str) -> list[_Number]:
    """The numbers a reader sees in message, each as a whole: 14 holds no 4, 1e-4 no 4, x_0 and
    W_1 are names, 2L is not 2; 4x (times) and 2x10x16 (a shape) are numbers."""
    found = []
    for m in _NUMBER.finditer(message):
        before = message[max(0, m.start() - 2):m.start()]
        after = message[m.end():m.end() + 1]
        glued_before = before[-1:] and _NAME_CHAR.match(before[-1]) and not (
            before[-1] in "xX" and before[:1].isdigit())
        if glued_before or (before[-1:] == "." and before[:1].isdigit()):
            continue
        if after and _NAME_CHAR.match(after) and after not in "xX":
            continue
        sign = -1.0 if (m["sign"] or m["isign"]) in ("-", "\u2212") else 1.0
        if m["inf"]:
            found.append(_Number(m.start(), m.end(), sign * np.inf, 0.0, 0, 0))
            continue
        whole, frac = m["digits"].replace(",", ""), (m["frac"] or ".")[1:]
        exponent = m["e"] or m["e10"] or (m["sup"].translate(_SUPERSCRIPT) if m["sup"] else "0")
        exponent = int(exponent.replace("\u2212", "-")) - (2 if m["pct"] else 0)
        value = sign * float(f"{whole}.{frac or 0}") * 10.0 ** exponent
        digits = len((whole + frac).lstrip("0")) or 1
        found.append(_Number(m.start(), m.end(), value, 10.0 ** (exponent - len(frac)), digits,
                             len(frac)))
    return found


def _runs(message: str, numbers: list[_Number], gap: re.Pattern) -> list[list[_Number]]:
    """Numbers written one after the other with only `gap` between them: a list, a shape."""
    runs: list[list[_Number]] = []
    for n in numbers:
        if runs and gap.fullmatch(message[runs[-1][-1].end:n.start]):
            runs[-1].append(n)
        else:
            runs.append([n])
    return runs


def _in_a_tuple(message: str, n: _Number) -> bool:
    """n stands inside (...) or [...] with a comma: a shape such as (n, 4), an index (0, 1)."""
    for pattern in (r"\([^()]*,[^()]*\)", r"\[[^\[\]]*,[^\[\]]*\]"):
        if any(m.start() < n.start and n.end <= m.end() for m in re.finditer(pattern, message)):
            return True
    return False


def _tells_number(n: _Number, x: float) -> bool:
    """n, as written, is x: exactly (4 for 4, 0.5 for 0.5), or x rounded to n's last digit when n
    has two significant digits or two decimals (0.03, 2.97e-02, 29.7 % for 0.0297). 0.3 or 3e-2
    for 0.0297 tells only the order of magnitude, which a reply may say. The sign is not needed:
    0.53 gives -0.53 away."""
    if not np.isfinite(x) or not np.isfinite(n.value):
        return False
    if abs(abs(n.value) - abs(x)) <= 1e-9 * abs(x):  # 0 only for 0: not for a tiny 1e-70
        return True
    return n.value != 0 and (n.digits >= 2 or n.decimals >= 2) and \
        abs(abs(n.value) - abs(x)) <= n.step / 2 * (1 + 1e-9)


def _windows(values: np.ndarray) -> set[tuple]:
    """Every three consecutive entries of each row (all of a shorter row), as written in order."""
    rows = np.atleast_2d(values).reshape(-1, np.shape(values)[-1] if np.ndim(values) else 1)
    w = min(3, rows.shape[-1])
    return {tuple(row[i:i + w]) for row in rows.tolist() for i in range(len(row) - w + 1)}


def _revealing_shape(message: str, expected: tuple, answer) -> list[str]:
    shapes = [expected] if not all(isinstance(s, tuple) for s in expected) else list(expected)
    shapes = [tuple(float(x) for x in s) for s in shapes]
    own = set()
    if isinstance(answer, tuple):
        own = {tuple(float(x) for x in s) for s in (answer, *answer) if isinstance(s, tuple)
               and all(isinstance(x, (int, np.integer)) for x in s)}
    found = []
    for run in _runs(message, _numbers(message), _SHAPE_GAP):
        values = tuple(n.value for n in run)
        if values in shapes and values not in own:  # the whole run: (2, 10, 16, 1) is another shape
            found.append(message[run[0].start:run[-1].end])
    return found


def _revealing_choice(message: str, expected, answer, choices) -> list[str]:
    """True/False or a letter: the word itself where the reply states it (not in a list of all
    the options, nor in the answer's own repr), and the chosen option's text."""
    word = str(expected)
    options = ["True", "False"] if isinstance(expected, (bool, np.bool_)) else sorted(choices or ())
    quoted = [r"[\"'\u201c\u300c]?%s[\"'\u201d\u300d]?" % re.escape(o) for o in options]
    every = r"\s*(?:,\s*or|,|or|/|か|、|または)\s*".join(quoted)  # "True or False", '"a", "b" or "c"'
    text = re.sub(every, " ", message) if len(options) > 1 else message
    text = text.replace(repr(answer), " ")  # the answer as the reply quotes it
    if isinstance(expected, (bool, np.bool_)):
        pattern = r"(?<![A-Za-z_])" + word + r"(?![A-Za-z_])"
        found = [m.group() for m in re.finditer(pattern, text, flags=re.IGNORECASE)]
    else:  # a letter: quoted, in brackets, or after "choice", "option", "answer"
        pattern = (r"[\"'\u201c\u300c(]%s[\"'\u201d\u300d)]|(?<![A-Za-z])%s\)|(?i:choice|option|answer|"
                   r"選択肢|答え)\s*%s(?![A-Za-z])") % ((re.escape(word),) * 3)
        found = [m.group() for m in re.finditer(pattern, text)]
    if choices and word in choices:  # a clause of the option's own text
        clauses = [c.strip() for c in re.split(r"[,;、。]", str(choices[word])) if len(c.strip()) >= 12]
        found += [c for c in clauses if c in message]
    return found


def revealing(message: str, expected, answer=None, givens=(), choices=None) -> list[str]:
    """The pieces of `message` (a check's reply to `answer`) that give `expected` away.

    - a number: written whole or as decimals, with or without thousands separators, in scientific
      notation (2.97e-02, 2.97×10^-2, 2.97 × 10⁻²) or as a percentage, rounded to two significant
      digits or two decimals or more (_tells_number); a whole number from 2 to 12 also in words
      (four, 四倍; not "one", which is the article, nor the 1 of 1 ヘッド, its Japanese form); a
      one-digit whole number only as a number of its own (not in 14, 1e-4, x_4, 2L) and not
      inside a shape or an index ((n, 4), (0, 1)), which are not values;
    - an array: each entry that is not a small whole number as above; for an array of whole
      numbers and infinities (masks, permutations, positions), any three of a row's entries
      written in order ([0 4 1 ...], "0, -inf, -inf");
    - a shape: its numbers in order as (2, 10, 16), (2,10,16), [2, 10, 16], 2x10x16, 2 × 10 × 16;
      for a tuple of shapes, each shape;
    - True/False, a letter: the word where the reply states it, and a clause of the option's text.

    What the answer itself holds (its own numbers, shapes, rows, words) and the question's own
    `givens` ("d_k = 64") are not revealing: the learner typed or was given them.
    """
    for given in givens:
        message = message.replace(given, " ")
    if isinstance(expected, (bool, np.bool_, str)):
        return _revealing_choice(message, expected, answer, choices)
    if isinstance(expected, tuple):
        return _revealing_shape(message, expected, answer)
    e = np.asarray(expected, dtype=float)
    try:
        a = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        a = np.array([])
    own = [v for v in a.ravel() if np.isfinite(v)]
    numbers = _numbers(message)
    found = []
    for n in numbers:
        if any(_tells_number(n, v) for v in own):
            continue
        for x in e.ravel():
            small_whole = np.isfinite(x) and x == round(x) and abs(x) < 10
            if e.ndim and small_whole:
                continue  # a 0 or a 1 of an array: in every index; its rows are searched below
            if small_whole and _in_a_tuple(message, n):
                continue
            if x == 1 and re.match(r"\s?(?!倍)[\u30a0-\u30ff\u4e00-\u9fff]", message[n.end:]):
                continue  # 1 ヘッド, 1 冊: the article "one", not searched in English either
            if _tells_number(n, x):
                found.append(message[n.start:n.end])
                break
    if e.ndim == 0 and np.isfinite(e) and float(e) in _WORDS:  # in words
        x = float(e)
        for word in _WORDS[x]:
            found += re.findall(r"(?<![A-Za-z])%s(?![A-Za-z])" % word, message, flags=re.IGNORECASE)
        if x in _KANJI:
            found += re.findall(_KANJI[int(x)] + "[倍つ個]", message)
    if e.ndim and np.all(~np.isfinite(e) | (e == np.round(e))):
        own_windows = _windows(a) if a.ndim and a.size else set()
        for window in _windows(e) - own_windows:
            for run in _runs(message, numbers, _ARRAY_GAP):
                values = [n.value for n in run]
                for i in range(len(values) - len(window) + 1):
                    if tuple(values[i:i + len(window)]) == window:
                        found.append(message[run[i].start:run[i + len(window) - 1].end])
    return found


_GROWTH, _ADAM, _CACHE = 4, 10 * 3e-3 * 1e-6 / (1e-6 + 1e-8), (2, 10, 16)
_PERM, _MASK = np.array([0, 4, 1, 5, 2, 6, 3, 7]), ac.causal_mask(5)


@pytest.mark.parametrize("message, expected, answer", [
    ("Not quite: the factor is 4.", _GROWTH, 2),
    ("Not quite: 2 is linear; the right factor is 4.00.", _GROWTH, 2),
    ("The work grows 4x.", _GROWTH, 8),
    ("仕事量は 4倍 になります。", _GROWTH, 8),
    ("It grows four times.", _GROWTH, 8),
    ("ペアは四倍になります。", _GROWTH, 8),
    ("so d_k becomes 1.", 1, 64),
    ("d_k は 1 になります。", 1, 64),
    ("Adam moves it by 0.0297.", _ADAM, 0.3),
    ("Adam moves it by 2.97e-02.", _ADAM, 0.3),
    ("Adam moves it by 2.970E-2.", _ADAM, 0.3),
    ("Adam moves it by 2.97×10^-2.", _ADAM, 0.3),
    ("Adam moves it by 2.97 x 10**(-2).", _ADAM, 0.3),
    ("Adam moves it by 2.97 × 10⁻².", _ADAM, 0.3),
    ("Adam moves it by 3.0e-2.", _ADAM, 0.3),
    ("Adam moves it by 2.97 % of a unit.", _ADAM, 0.3),
    ("Adam moves it by 0.03.", _ADAM, 0.3),  # two decimals
    ("the sum is -0.53", 0.5312, 0.1),
    ("the sum is 0.53", -0.5312, 0.1),  # the magnitude gives it away
    ("the count is 131,040", 131040, 4096),
    ("the count is 1.3104e5", 131040, 4096),
    ("the count is 1.31e+05", 131040, 4096),
    ("the cache is (2, 10, 16)", _CACHE, (2, 10, 32)),
    ("the cache is (2,10,16)", _CACHE, (2, 10, 32)),
    ("the cache is [2, 10, 16]", _CACHE, (2, 10, 32)),
    ("the cache is 2x10x16", _CACHE, (2, 10, 32)),
    ("the cache is 2 × 10 × 16 numbers", _CACHE, (2, 10, 32)),
    ("V is (5, 3)", ((5, 4), (5, 4), (5, 3)), ((5, 4), (5, 4), (5, 4))),
    ("the order is [0 4 1 5 2 6 3 7]", _PERM, np.arange(8)),
    ("start with 0, 4, 1", _PERM, np.arange(8)),
    ("row 1 is [  0.   0. -inf -inf -inf]", _MASK, np.zeros((5, 5))),
    ("np.array([[0, -np.inf, -np.inf], ...])", _MASK, np.zeros((5, 5))),
    ("the weight 0.7361 is too small", np.array([[0.0034, 0.7361]]), np.array([[0.1, 0.2]])),
    ("The statement is False.", False, True),
    ("答えは False です。", False, True),
    ('The right choice is "b".', "b", "a"),
    ("Choice b is right.", "b", "a"),
    ("(b) is right.", "b", "c"),
    ("because it keeps the variance of the scores at 1", "b", "a"),
])
def test_revealing_finds_the_answer_however_it_is_written(message, expected, answer):
    assert revealing(message, expected, answer, choices=nb03.WHY_SCALE_CHOICES), message


@pytest.mark.parametrize("message, expected, answer", [
    ("answers within 1e-4 count as correct", 4, 2),  # 1e-4 is one number, not a 4
    ("answers within 1e-4 count as correct", 1, 64),
    ("14 of its 24 entries differ", _GROWTH, 2),  # no 4 inside 14 or 24
    ("4.5 is too large", _GROWTH, 4.5),  # the answer's own number
    ("you gave 5; think of the (n, n) grid of pairs", _GROWTH, 5),
    ("the token x_4 and W_1", _GROWTH, 2),  # names
    ("2L - 1 - i is the mirror position", 2, 5),  # 2L is not 2
    ("the scores have shape (n, 4)", _GROWTH, 2),  # a shape the question states
    ("at index (0, 1), (1, 1)", 1, 64),  # indices
    ("「1 ヘッド分の計算だけを数えること」", 1, 0.5),  # the article "one"
    ("one of 24 heads does one head's work", 1, 0.5),
    ("0.3 is off by more than a factor of 10", _ADAM, 3.0),  # one digit: the order of magnitude
    ("it has the right order of magnitude (3e-2)", _ADAM, 0.003),
    ("Not quite: 0.003 has the right order of magnitude", _ADAM, 0.003),
    ("the count 131,000 is about right", 131040, 4096),  # rounded to 3 figures, trailing zeros
    ("you gave (2, 10, 32); axis 2 is too long", _CACHE, (2, 10, 32)),
    ("(12, 10, 16) and (2, 10, 16, 1) are other shapes", _CACHE, (2, 10, 32)),
    ("you gave ((5, 4), (5, 3), (5, 4))", ((5, 4), (5, 4), (5, 3)), ((5, 4), (5, 3), (5, 4))),
    ("a column order uses every index 0..7 exactly once", _PERM, [0, 1, 2, 3, 4, 5, 6, 6]),
    ("differs in 6 of its 8 entries (at (1,), (2,), (3,), ...)", _PERM, np.arange(8)),
    ("0 where a key may be seen, -inf where it may not", _MASK, np.zeros((5, 5))),
    ("your rows [0, 0, 0] are the answer's own", _MASK, np.zeros((5, 5))),
    ("Answer with True or False (no quotes), got 'False'.", False, "False"),
    ("Not quite: transpose S and compare.", False, True),
    ('Answer with one letter, "a", "b" or "c"; got \'d\'.', "b", "d"),
    ("the softmax makes a b-spline", "b", "c"),
])
def test_revealing_lets_a_reply_without_the_answer_pass(message, expected, answer):
    assert not revealing(message, expected, answer, choices=nb03.WHY_SCALE_CHOICES)


def test_revealing_leaves_out_the_questions_own_givens():
    assert revealing("for d_k = 64 the variance is 64", 64, 8) == ["64", "64"]
    assert not revealing("for d_k = 64 the answer differs", 64, 8, givens=["d_k = 64"])


def _reveals(message: str, expected, answer, givens, tells, choices=None) -> list[str]:
    for given in givens:
        message = message.replace(given, " ")
    return [t for t in tells if t in message] + revealing(message, expected, answer, choices=choices)


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("key", sorted(CASES))
def test_no_wrong_answer_is_told_the_expected_answer(key, lang, monkeypatch):
    check, expected, extra, givens, tells = CASES[key]
    with i18n.language_as(lang), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        wrongs = _named_mistake_answers(check, expected, monkeypatch) + _generic_wrong_answers(expected)
        wrongs += extra
        exercised = japanese = 0
        for answer in wrongs:
            try:
                if np.allclose(np.asarray(answer, dtype=float), np.asarray(expected, dtype=float),
                               rtol=0.0, atol=1e-3):
                    continue  # not wrong (a mistake that coincides with the answer here)
            except (TypeError, ValueError):
                pass
            v = check(answer)
            assert v.status in (checks.WRONG, checks.MISTAKE), (key, answer, v.message)
            leaks = _reveals(v.message, expected, answer, givens, tells, CHOICES.get(key))
            assert not leaks, f"{key} [{lang}] answer {answer!r} is told {leaks}: {v.message}"
            exercised += 1
            japanese += bool(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", v.message))
    assert exercised >= 3, f"{key}: only {exercised} wrong answers were tried"
    if lang == "ja":  # the Japanese run read Japanese replies, not the English fallback
        assert japanese == exercised, f"{key}: {exercised - japanese} replies not in Japanese"



def _written(expected, form: str) -> str:
    """The expected answer as a reply could write it: as Python or numpy prints it ("plain"), or
    in scientific notation ("sci"; a shape: 2 x 10 x 16)."""
    if isinstance(expected, (bool, np.bool_)):
        return f"The statement is {expected}."
    if isinstance(expected, str):
        return f'The right choice is "{expected}".'
    if isinstance(expected, tuple):
        return f"The shape is {expected}." if form == "plain" else \
            "The shape is " + " x ".join(str(n) for n in expected) + "."
    e = np.asarray(expected, dtype=float)
    if e.ndim == 0:  # to the last digit: a rounded count would also be the wrong answer's own
        x, places = float(e), max(6, len(f"{abs(e):.0f}") - 1)
        return f"It is {x:.{places}e}." if form == "sci" else f"It is {int(x):,}." if x.is_integer() \
            else f"It is {x:.6g}."
    if form == "sci":
        return "It is " + np.array2string(e, formatter={"float_kind": lambda v: f"{v:.3e}"}) + "."
    return f"It is {np.array2string(e)}."


def _ways(expected) -> list[str]:
    words = isinstance(expected, (bool, np.bool_, str)) or (
        isinstance(expected, tuple) and all(isinstance(s, tuple) for s in expected))
    return ["plain"] if words else ["plain", "sci"]


@pytest.mark.parametrize("key, form", [(k, f) for k in sorted(CASES) for f in _ways(CASES[k][1])])
def test_a_reply_that_leaks_is_caught(key, form):
    """The test can fail: a case's real reply to a wrong answer, with the answer added, is told."""
    check, expected, extra, givens, tells = CASES[key]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for answer in _generic_wrong_answers(expected) + extra:
            if not check(answer).ok:
                break
        reply = check(answer).message
        assert not _reveals(reply, expected, answer, givens, tells, CHOICES.get(key))
        leaked = f"{reply} {_written(expected, form)}"
        assert _reveals(leaked, expected, answer, givens, tells, CHOICES.get(key)), leaked


# --- the graded track (issue 26): no worked solution of the course answers a graded item --------

from scripts import graded_items  # noqa: E402  (the teacher's items, not installed with the course)
from scripts.classroom_graded import unmarked  # noqa: E402

GRADED = [(a, item) for a in graded_items.ASSIGNMENTS for item in a.items]
AUTOGRADED = [(a, item) for a, item in GRADED if item.kind != graded_items.DERIVE]
_ids = [item.name for _, item in AUTOGRADED]


def _graded_namespace(assignment, item, override: dict | None = None) -> dict:
    """The item's setup and solution run, then `override` put in place of some of its answers."""
    ns: dict = {}
    exec(assignment.setup, ns)  # noqa: S102 - the course's own item code
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        exec(unmarked(item.solution), ns)
    ns.update(override or {})
    return ns


def _item_tests(ns: dict, item) -> None:
    exec(f"{item.visible}\n{item.hidden}", ns)  # noqa: S102


@pytest.mark.parametrize("assignment,item", AUTOGRADED, ids=_ids)
def test_a_graded_item_passes_with_its_own_solution(assignment, item, capsys):
    _item_tests(_graded_namespace(assignment, item), item)  # what the next test must not reach


@pytest.mark.parametrize("assignment,item", AUTOGRADED, ids=_ids)
def test_no_worked_solution_of_the_course_passes_a_graded_item(assignment, item, capsys):
    """Each solution that checks.solution() prints, typed in place of each answer the item's tests
    read (the rest answered correctly), fails the item's tests."""
    exercised = 0
    for key, q in checks.QUESTIONS.items():
        ns: dict = {}
        exec(assignment.setup, ns)  # noqa: S102
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(checks.answer_lines(q.solution), ns)  # noqa: S102
        except Exception:  # needs the notebook's own variables: it answers nothing here
            continue
        value = ns["answer"]
        for name in item.answers:
            tried = _graded_namespace(assignment, item, {name: value})
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    _item_tests(tried, item)
            except Exception:  # a failing test (or a TypeError): not answered
                exercised += 1
            else:
                pytest.fail(f"{key}'s worked solution answers {item.name} (as {name})")
    assert exercised >= 5 * len(item.answers), f"{item.name}: only {exercised} solutions could be tried"


@pytest.mark.parametrize("assignment,item", GRADED, ids=[item.name for _, item in GRADED])
def test_the_course_help_holds_no_graded_solution(assignment, item, capsys):
    assert item.name not in checks.QUESTIONS
    checks.solution(item.name)
    checks.hint(item.name)
    assert "There is no self-check question" in capsys.readouterr().out
    if item.kind == graded_items.DERIVE:  # the model answer's sentences
        pieces = [s for s in re.split(r"(?<=\.) ", item.solution) if len(s) >= 25]
    else:
        pieces = [line.split("#")[0].strip() for line in unmarked(item.solution).splitlines()]
        pieces = [p for p in pieces if len(p) >= 12]
    assert pieces, item.name
    help_text = ""
    for lang in ("en", "ja"):  # what hint() and solution() print, in either language
        with i18n.language_as(lang):
            help_text += " ".join(" ".join(f"{i18n._(q.hint)} {q.solution} {i18n._(q.why)}".split())
                                  for q in checks.QUESTIONS.values())
    found = [p for p in pieces if " ".join(p.split()) in help_text]
    assert not found, f"{item.name}: the course's help shows {found}"
