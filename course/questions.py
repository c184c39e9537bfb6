"""The help of every self-check question: a hint, a worked solution and its explanation (data only).

Shown on request by checks.hint() / checks.solution(); the instructor key fills the solutions in.
Read-only. Each notebook's questions are at the end of its companion (course/nbNN_topic.py, its
dict QUESTIONS); notebook 00, which has no companion, keeps its question here. QUESTIONS gathers
them all (course/registry.py). Hints and explanations are marked with N_() (built at import time) and translated by
checks.hint() / checks.solution() when shown (course/i18n.py); a solution is code, the same in
every language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from course.i18n import N_
from course.registry import Registry


class Question(NamedTuple):
    """The help of one self-check question, shown only when the learner asks for it."""

    hint: str  # a nudge towards the method; never the answer itself
    # What a learner writes in the check cell: the expression that replaces the `...` of
    # `answer = ...`, or, where one expression would be hard to read, a few lines that replace the
    # whole `answer = ...` line and end with `answer = <expression>`.
    solution: str
    why: str  # the worked explanation shown with the solution


# The question of notebook 00 (the map), which has no companion.
SHARED = {
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
}

# Every self-check cell of every notebook has one entry, keyed "NN.name" (NN: its notebook), and
# names its key in a comment line of the cell: `# Stuck? ... nbNN.hint("NN.name") ...`. The
# instructor key (`python3 dev.py classroom key`) puts each solution in place of `...` and runs the
# notebooks: every check must then say Correct. SHARED, then each companion's QUESTIONS, in course
# order, gathered on the first lookup; a read-only mapping, like MISTAKES.
QUESTIONS: Mapping[str, Question] = Registry("QUESTIONS", SHARED, lambda key, q: key[:2])
