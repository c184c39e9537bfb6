"""The graded track's items (issue 26): what `python3 dev.py classroom assignments DIR` writes.

One assignment per notebook, each with items of three kinds:

- FILL: a value to compute in one or a few lines, autograded: a visible test (shape, type, a
  property) and hidden tests (the value itself);
- DERIVE: a derivation answered in words and formulas, graded by hand against the rubric the
  item carries (its points are the rubric's);
- EXPERIMENT: write a function, run it, autograded by visible and hidden tests that try it on
  inputs the student does not see (edge cases included).

Every item differs from the notebook's own self-check questions: no worked solution of
checks.QUESTIONS passes its tests (tests/test_no_reveal.py runs each of them against each item),
and its solution and hidden tests appear only in the teacher's source, never in what students
get (tests/test_graded.py searches the released notebooks for each).

This module is under scripts/, which the course's package does not install: a student's
environment (the hub's venv) cannot import it. The repository itself is public, though, and so
are these solutions: a class that needs answers no one can look up changes the items in its
private copy (the generator does not vary them yet).

Each solution cell holds its own `### BEGIN SOLUTION` / `### END SOLUTION` markers, placed where
the student's stub should stand (inside a function's body, the signature stays visible).

The assignments are in scripts/graded/, one module per notebook; this module gathers them.
"""

from __future__ import annotations

from scripts.graded import (
    a01_qkv_projections,
    a02_worked_example_3x2,
    a03_scaling_and_softmax_saturation,
    a04_masking,
    a05_multi_head_attention,
    a06_positional_encoding,
    a07_feed_forward_network,
    a08_transformer_block,
    a09_cost_of_attention,
    a10_learning_to_attend,
    a11_generating_and_kv_cache,
    a12_rope_and_alibi,
    a13_grouped_query_attention,
    a14_sliding_window_attention,
)
from scripts.graded.items import DERIVE, EXPERIMENT, FILL, KINDS, Assignment, Item

__all__ = ["ASSIGNMENTS", "DERIVE", "EXPERIMENT", "FILL", "KINDS", "Assignment", "Item"]

ASSIGNMENTS = tuple(m.ASSIGNMENT for m in (
    a01_qkv_projections,
    a02_worked_example_3x2,
    a03_scaling_and_softmax_saturation,
    a04_masking,
    a05_multi_head_attention,
    a06_positional_encoding,
    a07_feed_forward_network,
    a08_transformer_block,
    a09_cost_of_attention,
    a10_learning_to_attend,
    a11_generating_and_kv_cache,
    a12_rope_and_alibi,
    a13_grouped_query_attention,
    a14_sliding_window_attention))
