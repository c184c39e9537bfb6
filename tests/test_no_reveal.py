"""No reply to a wrong answer contains the expected answer (issue 21), in English and in Japanese.

For every question of the QUESTIONS registry a case below calls its check as the notebook does
(with inputs of the same kind). Each check gets a set of wrong answers: the named mistakes the check
itself compares with (caught by spying on check_value / _check_number), and generic slips of the
expected answer (x1.1, +1, negated, x10, transposed, one entry changed, wrong shape, off by one).
Every one must get a non-correct verdict, and the message must not contain the expected answer as
the messages format numbers (2 to 6 decimals, whole numbers as they are, with or without
thousands separators, shapes as tuples), nor a case's own giveaway phrases.

A question added to the registry without a case here fails test_every_question_has_a_case.
"""

import re
import warnings

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
    "03.why_scale": (nb03.check_why_scale, "b", ["a", "c", "d"], [], []),
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


def _shown_forms(x) -> set[str]:
    """How a message would print x: 2-6 decimals, whole numbers with or without separators."""
    if isinstance(x, tuple):
        return {str(x)}
    x = float(x)
    if not np.isfinite(x):
        return set()
    forms = {f"{x:.{k}f}" for k in range(2, 7)}
    if abs(x) >= 1e4:
        forms |= {f"{x:.4g}", f"{x:.6g}", f"{x:,.6g}"}
    if x.is_integer():
        forms = {f"{x:.{k}f}" for k in (1, 2, 4)} | ({f"{x:.4g}", f"{x:.6g}"} if abs(x) >= 1e4 else set())
        if abs(x) >= 10:  # a one-digit whole number is in every message ("axis 1", "1e-4")
            forms |= {f"{int(x)}", f"{int(x):,}"}
    return {f for f in forms if f.strip("-0.") != ""}  # 0.00 says nothing


def _forbidden(expected, answer) -> set[str]:
    if isinstance(expected, tuple):
        forms = {str(expected)}
        if all(isinstance(s, tuple) for s in expected):
            forms |= {", ".join(str(s) for s in expected)}
        return forms - {str(answer)} - ({str(s) for s in answer} if isinstance(answer, tuple) else set())
    if isinstance(expected, (bool, str)):
        return set()
    e = np.asarray(expected, dtype=float)
    if e.ndim > 0 and np.all(np.isfinite(e) <= (e == np.round(e))) and np.all(np.abs(e[np.isfinite(e)]) < 10):
        return set()  # a mask of 0 and -inf, small whole numbers: nothing to tell apart from text
    forms = set().union(*(_shown_forms(v) for v in e.ravel()))
    try:
        a = np.asarray(answer, dtype=float)
        forms -= set().union(set(), *(_shown_forms(v) for v in a.ravel()))  # the answer's own numbers
    except (TypeError, ValueError):
        pass
    return forms


def _reveals(message: str, expected, answer, givens, tells) -> list[str]:
    for given in givens:
        message = message.replace(given, "")
    found = [t for t in tells if t in message]
    for form in _forbidden(expected, answer):
        if form.startswith("(") and form in message:
            found.append(form)
        elif re.search(r"(?<![\d.,])" + re.escape(form) + r"(?![\d.e]|,\d)", message):
            found.append(form)
    return found


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
            leaks = _reveals(v.message, expected, answer, givens, tells)
            assert not leaks, f"{key} [{lang}] answer {answer!r} is told {leaks}: {v.message}"
            exercised += 1
            japanese += bool(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", v.message))
    assert exercised >= 3, f"{key}: only {exercised} wrong answers were tried"
    if lang == "ja":  # the Japanese run read Japanese replies, not the English fallback
        assert japanese == exercised, f"{key}: {exercised - japanese} replies not in Japanese"


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
