"""The shared self-checks and the registry of named mistakes: each classic mistake fed in must be named."""

import ast
import re
import string
from pathlib import Path

import numpy as np
import pytest

import attention_core as ac
from course import checks

ROOT = Path(__file__).resolve().parent.parent
rng = np.random.default_rng(7)
Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
Qs, Ks, Vs = rng.normal(size=(4, 8)), rng.normal(size=(4, 8)), rng.normal(size=(4, 2))
MASK = ac.causal_mask(4)
D_K = 8


def S(q=Qs, k=Ks):
    return q @ k.T


def test_unanswered_right_and_unknown():
    assert checks.check_weights(..., Q, K).status == checks.UNANSWERED
    assert "Not answered yet" in repr(checks.check_weights(..., Q, K))
    _, w = ac.scaled_dot_product_attention(Q, K, V)
    assert checks.check_weights(w, Q, K).ok
    v = checks.check_weights(w + 0.01, Q, K)
    assert v.status == checks.WRONG and v.mistake is None and "index" in v.message
    v = checks.check_weights(w[:, :3], Q, K)
    assert v.status == checks.WRONG and "shape" in v.message
    assert checks.check_weights("abc", Q, K).status == checks.WRONG


@pytest.mark.parametrize("key, wrong", [
    ("softmax_wrong_axis", lambda: ac.softmax(S() / np.sqrt(D_K), axis=0)),
    ("scale_after_softmax", lambda: ac.softmax(S()) / np.sqrt(D_K)),
    ("no_scaling", lambda: ac.softmax(S())),
    ("divide_by_d_k", lambda: ac.softmax(S() / D_K)),
    ("transposed_weights", lambda: ac.softmax(S() / np.sqrt(D_K)).T),
])
def test_weight_mistakes_are_named(key, wrong):
    v = checks.check_weights(wrong(), Qs, Ks)
    assert v.mistake == key, v.message
    assert checks.MISTAKES[key].label in v.message


@pytest.mark.parametrize("key, wrong", [
    # zeroing the blocked values per query gives the same output as zeroing the weights after
    # the softmax: check_attention names it the V-masking bug, the one the curriculum names
    # (check_weights tells the two apart: test_mask_after_softmax_is_named_for_weights)
    ("mask_on_values", lambda: (ac.softmax(S() / np.sqrt(D_K)) * np.isfinite(MASK)) @ Vs),
    ("mask_missing", lambda: ac.softmax(S() / np.sqrt(D_K)) @ Vs),
    ("no_scaling", lambda: ac.softmax(S() + MASK) @ Vs),
])
def test_masked_output_mistakes_are_named(key, wrong):
    v = checks.check_attention(wrong(), Qs, Ks, Vs, MASK)
    assert v.mistake == key, v.message


def test_mask_after_softmax_is_named_for_weights():
    wrong = ac.softmax(S() / np.sqrt(D_K)) * np.isfinite(MASK)
    assert checks.check_weights(wrong, Qs, Ks, MASK).mistake == "mask_after_softmax"


# --- tolerances and messages --------------------------------------------------

def test_answers_rounded_to_4_decimals_are_correct():
    _, w = ac.scaled_dot_product_attention(Q, K, V)
    assert checks.check_weights(np.round(w, 4), Q, K).ok
    assert checks.check_value(0.5403, np.cos(1.0), "cos(1)").ok


@pytest.mark.parametrize("answer, expected, how", [
    (0.10004, 0.1, "too large"), ([0.5, 0.29998], [0.5, 0.3], "too small"),
    (1e6 + 1, 1e6 + 3, "too small"), (-1.5e9, 1.5e9 + 1e4, "of the wrong sign"),
    (0.5, 64.0, "too small by more than a factor of 10"), ([1.0, 300.0], [1.0, 2.0],
                                                            "too large by more than a factor of 10"),
    (np.nan, 1.0, "not a number (NaN)")])
def test_wrong_message_says_what_is_off_without_the_expected_value(answer, expected, how):
    """Issue 21: the direction, sign or order of magnitude, the tolerance, never the value."""
    v = checks.check_value(answer, expected, "x", atol=1e-6)
    assert v.status == checks.WRONG, v.message
    assert how in v.message and "answers within 1e-6 count as correct" in v.message, v.message
    e = float(np.atleast_1d(expected)[-1])
    for shown in {f"{e:.4f}", f"{e:.6f}", repr(e)} - {repr(float(np.atleast_1d(answer)[-1]))}:
        assert not re.search(re.escape(shown) + r"(?!\d)", v.message), v.message


def test_wrong_message_says_which_entries_differ():
    right = np.arange(6.0).reshape(2, 3)
    v = checks.check_value(right + np.array([[0, 0, 1], [0, 0, 0]]), right, "x")
    assert "1 of its 6 entries (at (0, 2))" in v.message and "index (0, 2)" in v.message, v.message


def test_wrong_message_prints_huge_numbers_compactly():
    blocked = np.triu(np.ones((5, 5), dtype=bool))  # the diagonal too, with the most negative float
    v = checks.check_value(np.where(blocked, np.finfo(float).min, 0.0), ac.causal_mask(5), "mask")
    assert v.status == checks.WRONG and len(v.message) < 250, v.message
    assert "finite where the expected entry is infinite" in v.message and "e+308" not in v.message


def test_correct_message_quotes_a_number_and_keeps_an_array_shape():
    v = checks.check_value(0.5403, np.cos(1.0), "PE(pos=10, dim=3)")
    assert v.message == "Correct: the PE(pos=10, dim=3) is 0.540302 (within 1e-4)."
    _, w = ac.scaled_dot_product_attention(Q, K, V)
    assert "(shape (4, 5), within 1e-4)" in checks.check_weights(w, Q, K).message


def test_a_mistake_within_tolerance_of_the_right_answer_is_never_named():
    v = checks.check_value(0.5 + 1.5e-4, 0.5, "x", {"no_scaling": 0.5 + 5e-5}, atol=1e-4)
    assert v.status == checks.WRONG and v.mistake is None, v.message


@pytest.mark.parametrize("why, shown", [
    ("the scores", "The scores"), ("a row", "A row"), ("softmax: rows", "Softmax: rows"),
    ("n*d_k counts", "n*d_k counts"), ("x W_1 + b_1", "x W_1 + b_1"), ("q.k grows", "q.k grows"),
    ("d_k = 4", "d_k = 4"), ("0 x -inf", "0 x -inf"), ("a_ij = 1", "a_ij = 1"),
    ("np.where(...)", "np.where(...)"), ("self-attention without", "Self-attention without")])
def test_only_ordinary_words_are_capitalised(why, shown):
    assert checks.sentence(why) == shown


# --- transposed scores ------------------------------------------------------

def test_transposed_scores_are_named_for_non_square_weights():
    right = ac.attention_weights(Q, K)  # (4, 5)
    assert checks.check_weights(ac.softmax(K @ Q.T / np.sqrt(3)), Q, K).mistake == "transposed_scores"
    assert checks.check_weights(right.T, Q, K).mistake == "transposed_weights"


def test_transposed_scores_are_named_for_square_attention():
    wrong = ac.softmax(S().T / np.sqrt(D_K)) @ Vs
    assert checks.check_attention(wrong, Qs, Ks, Vs).mistake == "transposed_scores"


# --- the registry -------------------------------------------------------------

def test_the_registry_is_read_only():
    with pytest.raises(TypeError):
        checks.MISTAKES["new_mistake"] = checks.Mistake("00", "label", "why")  # type: ignore[index]


COMPANIONS = sorted(ROOT.joinpath("course").glob("nb[0-9][0-9]_*.py"))


def _quoted_in(key: str, path: Path) -> bool:
    return re.search(rf"[\"']{re.escape(key)}[\"']", path.read_text(encoding="utf-8")) is not None


@pytest.mark.parametrize("path", COMPANIONS, ids=lambda p: p.stem)
def test_each_companion_holds_its_own_entries_and_the_registries_gather_them(path):
    """The room of notebook NN: its companion's MISTAKES and QUESTIONS are NN's, all registered."""
    import importlib

    companion, nn = importlib.import_module(f"course.{path.stem}"), path.name[2:4]
    assert companion.MISTAKES and companion.QUESTIONS, f"{path.name} has no entries of its own"
    for key, m in companion.MISTAKES.items():
        assert m.notebook == nn and checks.MISTAKES[key] is m, key
        others = [p.name for p in COMPANIONS if p != path and _quoted_in(key, p)]
        assert not others, f"{key} is named by {others} too: it belongs in course/mistakes.py"
    for key, q in companion.QUESTIONS.items():
        assert key.startswith(f"{nn}.") and checks.QUESTIONS[key] is q, key


def test_the_shared_mistakes_are_named_by_the_shared_checks_or_by_several_notebooks():
    from course import mistakes

    for key in mistakes.SHARED:
        users = [p.name for p in COMPANIONS if _quoted_in(key, p)]
        assert _quoted_in(key, ROOT / "course" / "checks.py") or len(users) > 1, (
            f"{key} is named only by {users}: it belongs at the end of that companion")


def test_the_registries_hold_exactly_the_shared_and_the_companions_entries():
    import importlib

    from course import mistakes, questions

    companions = [importlib.import_module(f"course.{p.stem}") for p in COMPANIONS]
    assert list(checks.MISTAKES) == [*mistakes.SHARED, *(k for c in companions for k in c.MISTAKES)]
    assert list(checks.QUESTIONS) == [*questions.SHARED,
                                      *(k for c in companions for k in c.QUESTIONS)]


def test_a_registry_refuses_a_key_twice_and_an_entry_in_another_notebooks_room():
    from course.registry import Registry

    twice = Registry("MISTAKES", {"mask_lower_triangle": checks.MISTAKES["mask_lower_triangle"]},
                     lambda key, m: m.notebook)
    with pytest.raises(ValueError, match="already registered"):
        twice["mask_lower_triangle"]
    elsewhere = Registry("QUESTIONS", {}, lambda key, q: "99")
    with pytest.raises(ValueError, match="belongs to notebook 99"):
        len(elsewhere)


def test_every_registered_mistake_belongs_to_a_notebook_and_reads_as_a_sentence():
    notebooks = {p.name[:2] for p in ROOT.joinpath("notebooks").glob("[0-9][0-9]_*.ipynb")}
    for key, m in checks.MISTAKES.items():
        assert m.notebook in notebooks, f"{key}: notebook {m.notebook!r} does not exist"
        assert m.label and m.why.rstrip().endswith((".", ")")), f"{key}: {m.why!r}"
        fields = {f for text in (m.label, m.why) for _, f, _, _ in string.Formatter().parse(text) if f}
        checks.named(key, **{f: 1 for f in fields})  # every template fills without error


def _mistake_keys_named_in(path):
    """Keys a companion names: Verdict(MISTAKE, ..., "key") and named("key", ...) with a literal."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = getattr(node.func, "id", getattr(node.func, "attr", None))
        args = node.args
        if func == "Verdict" and len(args) >= 3 and getattr(args[0], "id", None) == "MISTAKE":
            key = args[2]
        elif func == "named" and args:
            key = args[0]
        else:
            continue
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            yield key.value


@pytest.mark.parametrize("path", sorted(ROOT.joinpath("course").glob("*.py")), ids=lambda p: p.name)
def test_every_mistake_a_check_names_is_registered(path):
    missing = sorted(set(_mistake_keys_named_in(path)) - set(checks.MISTAKES))
    assert not missing, f"{path.name} names mistakes that are not in checks.MISTAKES: {missing}"
