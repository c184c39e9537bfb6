"""What every assignment of the graded track is made of: the three kinds of item, Item,
Assignment, and code() for the cells' texts (scripts/graded_items.py describes the kinds)."""

from __future__ import annotations

from typing import NamedTuple

FILL, DERIVE, EXPERIMENT = "fill", "derive", "experiment"
KINDS = (FILL, DERIVE, EXPERIMENT)


class Item(NamedTuple):
    name: str               # nbgrader's grade_id of the graded cell, "nbNN_name"
    kind: str               # FILL, DERIVE or EXPERIMENT
    task: str               # markdown: what the student is asked
    solution: str           # the solution cell (code with its markers) or the model answer
    answers: tuple = ()     # autograded: the names the solution defines and the tests read
    visible: str = ""       # autograded: the tests the student sees
    hidden: str = ""        # autograded: the tests only the grading run has
    points: int = 0         # autograded; DERIVE: the sum of its rubric
    rubric: tuple = ()      # DERIVE: (points, criterion) pairs

    @property
    def score(self) -> int:
        return sum(p for p, _ in self.rubric) if self.kind == DERIVE else self.points


class Assignment(NamedTuple):
    name: str       # the assignment's name and its notebook's: the course notebook's stem
    title: str
    setup: str      # the read-only first code cell: imports and the givens
    items: tuple


def code(text: str) -> str:
    return text.strip("\n")
