"""tests/stored_notebook.py, which the tests of notebooks 10-14 use, can fail: each of its checks
rejects a notebook stored with the fault it is there to catch."""

import re

import nbformat
import pytest

from stored_notebook import assert_checks_unanswered, code_cells, stored_text

CHECK = 'answer = ...\nnb04.check_mask(answer)\n# Stuck? nb04.hint("04.mask")'


def _stream(name, text):
    return nbformat.v4.new_output("stream", name=name, text=text)


def _verdict(text):
    return nbformat.v4.new_output("execute_result", data={"text/plain": text}, execution_count=1)


def _notebook(tmp_path, *, check_shows="Not answered yet: set `answer`", stderr=False, checks=2):
    """A stored notebook: a markdown cell, a cell that prints, `checks` check cells."""
    printed = nbformat.v4.new_code_cell("print('weights sum to 1: True')")
    printed.outputs = [_stream("stdout", "weights sum to 1: True\n")]
    if stderr:
        printed.outputs.append(_stream("stderr", "RuntimeWarning: overflow in exp\n"))
    cells = [nbformat.v4.new_markdown_cell("The sum is printed, not `answer = ...` here."), printed]
    for _ in range(checks):
        cell = nbformat.v4.new_code_cell(CHECK)
        cell.outputs = [_verdict(check_shows)]
        cells.append(cell)
    path = tmp_path / "99_example.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def test_the_stored_notebook_helpers_read_code_cells_and_their_printed_text(tmp_path):
    path = _notebook(tmp_path, stderr=True)
    assert [c["cell_type"] for c in code_cells(path)] == ["code"] * 3  # the markdown cell is not
    assert stored_text(path) == "weights sum to 1: True\nRuntimeWarning: overflow in exp\n"


def test_the_shared_unanswered_check_passes_a_notebook_handed_out_open(tmp_path):
    assert_checks_unanswered(_notebook(tmp_path), 2)  # the markdown's `answer = ...` is no check


@pytest.mark.parametrize("fault, message", [
    ({"stderr": True}, "code cells [0] (counted from 0) wrote to stderr"),
    ({"check_shows": "Correct: every row sums to 1"}, "a self-check is stored answered"),
    ({"checks": 1}, "1 self-check cells, expected 2"),
], ids=["stderr", "answered", "count"])
def test_the_shared_unanswered_check_finds_a_notebook_stored_wrong(tmp_path, fault, message):
    with pytest.raises(AssertionError, match=re.escape(message)):
        assert_checks_unanswered(_notebook(tmp_path, **fault), 2)
