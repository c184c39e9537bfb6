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
- otherwise: what is off (which entries, the sign, the order of magnitude, too large or too
  small), never the expected value; the worked solution is there on request.

Checks never raise on a wrong answer, so a notebook always runs to the end.

The checks shared by several notebooks (attention weights and outputs) are here;
each notebook's own checks are in its companion module, course/nbNN_topic.py.
Every mistake a check can name is an entry of ``MISTAKES``, every question one of ``QUESTIONS``:
a hint and a worked solution. A notebook's own entries are at the end of its companion, the
shared ones in course/mistakes.py and course/questions.py, which gather them all. A learner
asks for the help, after trying, with ``hint("04.causal_mask")`` and
``solution("04.causal_mask")`` (each companion offers both: ``nb04.hint``). The instructor
key (scripts/classroom_key.py) is built from the same solutions.

Every text a learner sees comes out in the learner's language (course/i18n.py): the messages here
are translated with _() when a check runs, and the registry texts, marked with N_(), where they
are shown (named, hint, solution). The {placeholders} are filled after the translation, so that a
translation can put them in its own word order.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import attention_core as ac
from course.i18n import _, language
from course.mistakes import MISTAKES, Mistake  # noqa: F401  (the registry, re-exported)
from course.questions import QUESTIONS, Question  # noqa: F401  (likewise)

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




def is_unanswered(answer) -> bool:
    return answer is ... or answer is None


def unanswered(what: str) -> Verdict:
    return Verdict(UNANSWERED, _("Not answered yet: replace `...` with your {what} and run "
                                 "the cell again.").format(what=what))


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
        return Verdict(WRONG, _("Your answer {answer!r} is a string (text in quotes); give the "
                                "count as a number, without quotes.").format(answer=answer))
    return Verdict(WRONG, _("Your answer {answer!r} is a string (text in quotes), not a number; "
                            "write it without quotes: answer = {number}.").format(answer=answer,
                                                                                  number=number))


def _fmt_tol(atol: float) -> str:
    """1e-4, not 0.0001."""
    mantissa, exponent = f"{atol:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _close(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    return a.shape == b.shape and np.allclose(a, b, atol=atol, rtol=1e-6, equal_nan=True)


def check_value(answer, expected, what: str, mistakes: Mapping | None = None,
                atol: float = 1e-4, hint: str = "", context: Mapping | None = None) -> Verdict:
    """Compare answer with expected; if wrong, name the mistake whose value it matches.

    mistakes: {key: value}, each key one of MISTAKES, each value what that mistake gives here;
    context fills the {placeholders} of their texts. A mistake whose value is within atol of
    expected is never named: it is not a mistake here. what and hint are shown as they are given:
    in the learner's language, _("...") when the check is called.
    """
    if is_unanswered(answer):
        return unanswered(what)
    a, e = as_float(answer), np.asarray(expected, dtype=float)
    if a is None:
        return Verdict(WRONG, _("Your {what} is a {type}, not numbers; expected an array of "
                                "shape {shape}.").format(what=what, type=type(answer).__name__,
                                                         shape=e.shape))
    if _close(a, e, atol):
        return _correct(what, e, atol)
    for key, value in (mistakes or {}).items():
        v = np.asarray(value, dtype=float)
        if _close(a, v, atol) and not _close(v, e, atol):
            label, why = named(key, **(context or {}))
            return Verdict(MISTAKE, _('Not quite: this is the classic mistake "{label}". {why}')
                           .format(label=label, why=sentence(why)), key)
    if a.shape != e.shape:
        return Verdict(WRONG, _("Wrong shape: your {what} has shape {got}, expected {expected}. "
                                "{hint}").format(what=what, got=a.shape, expected=e.shape,
                                                 hint=hint).rstrip())
    return _wrong(a, e, what, atol, hint)


def _correct(what: str, e: np.ndarray, atol: float) -> Verdict:
    """A number is quoted back; for an array, its shape."""
    within = _fmt_tol(atol)
    if e.ndim == 0:
        value = f"{float(e):.6g}" if abs(e) < 1e6 else f"{float(e):.10g}"
        message = _("Correct: the {what} is {value} (within {atol}).")
        return Verdict(CORRECT, message.format(what=what, value=value, atol=within))
    message = _("Correct: your answer for the {what} matches attention_core (shape {shape}, "
                "within {atol}).")
    return Verdict(CORRECT, message.format(what=what, shape=e.shape, atol=within))


def _how_off(got: float, expected: float) -> str:
    """What is off about one number, without the expected value: sign, order of magnitude, direction."""
    if np.isnan(got):
        return _("not a number (NaN)")
    if np.isinf(got) and not np.isinf(expected):
        return _("infinite where a finite number is expected")
    if np.isinf(expected) and not np.isinf(got):
        return _("finite where the expected entry is infinite")
    if np.isinf(got):  # both infinite: only the sign can differ
        return _("infinite with the wrong sign")
    if expected != 0 and got != 0 and np.sign(got) != np.sign(expected):
        return _("of the wrong sign")
    if expected != 0 and got != 0 and not 0.1 <= abs(got / expected) <= 10:
        return (_("too large by more than a factor of 10") if abs(got) > abs(expected)
                else _("too small by more than a factor of 10"))
    return _("too large") if got > expected else _("too small")


def _wrong(a: np.ndarray, e: np.ndarray, what: str, atol: float, hint: str) -> Verdict:
    """What is off (which entries, how: sign, order of magnitude, direction), never the expected
    value: a learner who is told the number can type it without understanding it (issue 21)."""
    with np.errstate(invalid="ignore"):  # inf - inf: equal infinities are not off at all
        diff = np.where((a == e) | (np.isnan(a) & np.isnan(e)), 0.0, np.abs(a - e))
    diff = np.where(np.isnan(diff), np.inf, diff)
    off = ~np.isclose(a, e, atol=atol, rtol=1e-6, equal_nan=True)
    idx = tuple(int(i) for i in np.unravel_index(np.argmax(diff), diff.shape))
    how = _how_off(float(a[idx]), float(e[idx]))
    tolerance = _("answers within {atol} count as correct").format(atol=_fmt_tol(atol))
    if e.ndim == 0:
        message = _("Not quite: your answer for the {what}, {got}, is {how} ({tolerance}). {hint}")
        return Verdict(WRONG, message.format(what=what, got=repr(float(a)), how=how,
                                             tolerance=tolerance,
                                             hint=hint).rstrip())
    wrong = [tuple(int(i) for i in w) for w in np.argwhere(off)]
    shown = ", ".join(str(w) for w in wrong[:3]) + (", ..." if len(wrong) > 3 else "")
    message = _("Not quite: your answer for the {what} differs from attention_core in {count} of "
                "its {size} entries (at {indices}); the furthest off, at index {index}, is {how} "
                "({tolerance}). {hint}")
    return Verdict(WRONG, message.format(what=what, count=len(wrong), size=e.size, indices=shown,
                                         index=idx, how=how, tolerance=tolerance,
                                         hint=hint).rstrip())


def shape_off(got: tuple, right: tuple) -> str:
    """What is off about a shape, without the expected shape: the number of axes, or which axes
    are too long or too short (axis 0 first)."""
    if len(got) != len(right):
        return _("it has {got} axes where {right} are expected").format(got=len(got),
                                                                       right=len(right))
    parts = [(_("axis {axis} is too long") if g > r else _("axis {axis} is too short"))
             .format(axis=axis) for axis, (g, r) in enumerate(zip(got, right, strict=True)) if g != r]
    return _(", ").join(parts)


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
    return check_value(answer, right, _("attention weights A"), weight_mistakes(Q, K, mask))


def check_attention(answer, Q, K, V, mask=None) -> Verdict:
    """Check the attention output softmax(Q K^T / sqrt(d_k) + M) V, diagnosing the classic mistakes."""
    output = ac.scaled_dot_product_attention(Q, K, V, mask)[0]
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
    return check_value(answer, output, _("attention output"), mistakes)


def named(key: str, **context) -> tuple[str, str]:
    """(label, why) of the registered mistake `key` in the learner's language, its {placeholders}
    filled from context after the translation."""
    m = MISTAKES[key]
    return _(m.label).format(**context), _(m.why).format(**context)


# --- hints and worked solutions: one registry entry per self-check question ----------------------



def _caller(key: str) -> str:
    """How a notebook calls hint/solution: through its companion (nb04.hint), or checks.hint."""
    companion = any(Path(__file__).parent.glob(f"nb{key[:2]}_*.py"))
    return f"nb{key[:2]}" if companion else "checks"


def _question(key: str) -> Question | None:
    if key in QUESTIONS:
        return QUESTIONS[key]
    same = sorted(k for k in QUESTIONS if k[:2] == str(key)[:2])
    if same:
        print(_("There is no self-check question {key!r}. The questions of notebook {nn} are: "
                "{keys}.").format(key=key, nn=key[:2], keys=", ".join(same)))
    else:
        print(_('There is no self-check question {key!r}. Keys look like "04.causal_mask": the '
                "notebook's number, a dot and a name.").format(key=key))
    return None


UNSPACED = ("ja",)  # languages written without spaces between words


def _paragraph(text: str) -> str:
    """text wrapped at 96 characters; a language without spaces is left to the notebook to wrap."""
    if language() in UNSPACED:
        return text
    return textwrap.fill(text, width=96, break_on_hyphens=False, break_long_words=False)


def hint(key: str) -> None:
    """Print the hint of self-check question `key` (e.g. "04.causal_mask"); nothing is given away."""
    q = _question(key)
    if q is None:
        return
    print(_paragraph(_("Hint ({key}): {hint}").format(key=key, hint=_(q.hint))))
    print()
    print(_paragraph(_('Try again with this in mind. Still stuck? {caller}.solution("{key}") '
                       "shows a worked solution.").format(caller=_caller(key), key=key)))


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
    print(_("Worked solution ({key}): the code to write in the check cell").format(key=key))
    print()
    print(textwrap.indent(answer_lines(q.solution), "    "))  # code: the same in every language
    print()
    print(_paragraph(_(q.why)))
    print()
    print(_paragraph(_("Type it in place of `answer = ...` (typing it yourself helps more than "
                       "pasting) and run the cell again: the check says Correct.")))
