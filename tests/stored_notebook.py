"""What the tests of the committed notebooks share: their code cells as stored, the text their
cells printed, and the check that every self-check is handed out unanswered.

Each reads the notebook's JSON as committed (outputs included), not a fresh run: nbval compares
a fresh run with these outputs, and these tests say what the outputs must show. Its asserts carry
their own messages (pytest rewrites the asserts of test files only).
"""

from __future__ import annotations

import json
from pathlib import Path

NOT_ANSWERED = "Not answered yet"  # how a check's verdict starts before the learner answers


def code_cells(path: Path) -> list[dict]:
    """The code cells of the committed notebook at `path`, in order, with their outputs."""
    return [c for c in json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code"]


def stored_text(path: Path) -> str:
    """Everything the code cells of the committed notebook printed, in order."""
    return "".join("".join(o.get("text", "")) for c in code_cells(path) for o in c["outputs"])


def assert_checks_unanswered(path: Path, count: int) -> None:
    """Nothing on stderr, `count` self-check cells (`answer = ...`), each showing
    "Not answered yet": the notebook is handed out with its questions open."""
    name = Path(path).name
    cells = code_cells(path)
    noisy = [i for i, c in enumerate(cells) if any(o.get("name") == "stderr" for o in c["outputs"])]
    assert not noisy, f"{name}: code cells {noisy} (counted from 0) wrote to stderr"
    asked = [c for c in cells if "answer = ..." in "".join(c["source"])]
    assert len(asked) == count, f"{name}: {len(asked)} self-check cells, expected {count}"
    for c in asked:
        text = "".join("".join(o["data"]["text/plain"]) for o in c["outputs"] if "data" in o)
        assert text.startswith(NOT_ANSWERED), (
            f"{name}: a self-check is stored answered, it shows {text[:200]!r}")
