"""The classroom edition, part 4: the graded track's nbgrader course folder (issue 26).

    python3 dev.py classroom assignments DIR

writes an nbgrader course folder into DIR, which must lie outside the repository: the teacher's
source (solutions, hidden tests, rubrics) must not be committed with the course. It holds

    DIR/nbgrader_config.py                         the course's settings (the per-cell timeout)
    DIR/README.md                                  what the folder is and how to grade with it
    DIR/source/<assignment>/<assignment>.ipynb     one source notebook per assignment

and nothing else: the gradebook, release/, submitted/, autograded/ and feedback/ are nbgrader's
(`nbgrader generate_assignment`, `autograde`, ...). Running the command again rewrites these
files and leaves everything of nbgrader's alone. The items are in scripts/graded_items.py.

Each source notebook: a header, the read-only setup cell, and per item a read-only task cell,
then either a solution cell and a read-only autograded test cell (visible tests, then the hidden
ones between ### BEGIN HIDDEN TESTS / ### END HIDDEN TESTS), or one manually graded markdown
answer cell whose solution region holds the model answer and the rubric. Every graded cell has
its points.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.graded_items import ASSIGNMENTS, DERIVE, EXPERIMENT, FILL, Assignment, Item  # noqa: E402

SCHEMA_VERSION = 3      # nbgrader's cell metadata schema (0.9)
CELL_TIMEOUT = 20       # seconds per cell when grading: an endless loop gets 0 for its item
BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"

KIND_TEXT = {
    FILL: "computed, graded automatically",
    EXPERIMENT: "an experiment: write the code and run it, graded automatically",
    DERIVE: "a derivation in words and formulas, graded by hand",
}

TIMEOUT_TEXT = (f"this cell ran for more than {CELL_TIMEOUT} s and was stopped "
                "(an endless loop?)")
CONFIG = f'''\
# nbgrader's configuration of this course folder, written by `python3 dev.py classroom
# assignments` of attention-notebooks; running it again rewrites this file.
c = get_config()  # noqa: F821 (nbgrader provides it)
TIMEOUT_TEXT = {TIMEOUT_TEXT!r}

c.CourseDirectory.course_id = "attention-notebooks"
# Seconds each cell may run while grading: a submission that loops forever is interrupted there,
# its item gets 0 and the grading run goes on with the next cell.
c.Execute.timeout = {CELL_TIMEOUT}
c.Execute.interrupt_on_timeout = True
c.Execute.error_on_timeout = {{"ename": "CellTimeoutError", "evalue": TIMEOUT_TEXT,
                              "traceback": ["CellTimeoutError: " + TIMEOUT_TEXT]}}
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Feedback shows the graded notebook. Without this it would show the hidden tests (nbgrader puts
# them back for grading) and, in a failing test's traceback, the line that failed: so the hidden
# tests are cleared again and each error is shown as its last line, the test's own message.
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor, Preprocessor  # noqa: E402
from nbgrader.preprocessors import ClearHiddenTests, GetGrades  # noqa: E402


class ErrorLineOnly(Preprocessor):
    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output["traceback"] = [f"{{output['ename']}}: {{output['evalue']}}"]
        return cell, resources


c.ErrorLineOnly.enabled = True  # nbconvert's own preprocessors are off until enabled
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, ErrorLineOnly,
                                    CSSHTMLHeaderPreprocessor]
''' + """
# A submitted notebook nbgrader cannot read (not JSON: cut off or damaged while it was saved)
# would stop the grading of that student: autograde would end with an error, the student's items
# would wait for a manual grade with nothing to grade, and there would be no feedback. Before
# grading, such a file is kept beside it as NAME.ipynb.unreadable and replaced by the released
# notebook, unanswered, with a first cell that says so: every item gets 0 and the feedback tells
# the student why.
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import nbformat  # noqa: E402
from nbformat.reader import NotJSONError  # noqa: E402

UNREADABLE_TEXT = ("**Your notebook could not be read when it was graded:** the file you "
                   "submitted is {reason}. It was graded as the released notebook, unanswered: "
                   "0 points for every item. Your file is kept for your teacher as {kept}; "
                   "ask them about submitting again.")


def replace_unreadable(assignment, student, notebooks):
    for name in notebooks:  # submitted/<student>/<assignment>/<notebook>.ipynb
        path = Path(name)
        try:
            nbformat.read(path, as_version=4)
            continue
        except (NotJSONError, UnicodeDecodeError):
            reason = "not valid JSON (cut off or damaged when it was saved)"
        except Exception as e:  # noqa: BLE001 - whatever keeps nbformat from reading it
            reason = f"not a notebook nbformat can read ({type(e).__name__})"
        folder = path.parent.name
        released = [root / "release" / folder / path.name for root in (path.parents[3], Path.cwd())]
        released = next((r for r in released if r.is_file()), None)
        if released is None:
            print(f"[attention-notebooks] {path}: {reason}, and no released notebook to put in "
                  "its place (run nbgrader generate_assignment): nbgrader will report it",
                  file=sys.stderr)
            continue
        kept = path.with_name(path.name + ".unreadable")
        path.replace(kept)
        nb = nbformat.read(released, as_version=4)
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(
            UNREADABLE_TEXT.format(reason=reason, kept=kept.name)))
        nbformat.write(nb, path)
        print(f"[attention-notebooks] {path}: {reason}; kept as {kept.name} and graded as the "
              "released notebook, unanswered (0 points)", file=sys.stderr)


c.Autograde.pre_convert_hook = replace_unreadable
"""

README = """\
# The graded track of attention-notebooks: the teacher's source

Written by `python3 dev.py classroom assignments DIR` from the course repository. The notebooks
in `source/` hold the solutions, the hidden tests and the rubrics: keep this folder in a PRIVATE
repository, never in the course's public one. Students get only what
`nbgrader generate_assignment` writes to `release/`.

    nbgrader generate_assignment 01_qkv_projections     # release/: no solution, no hidden test
    nbgrader autograde 01_qkv_projections               # grades submitted/<student>/...
    nbgrader generate_feedback 01_qkv_projections       # feedback/: each failing test's message

A submitted notebook that cannot be read (not JSON: cut off or damaged when it was saved) is
kept beside it as NAME.ipynb.unreadable and graded as the released notebook, unanswered: 0 points
for every item, and the feedback's first cell tells the student why (`nbgrader_config.py`,
replace_unreadable). Without it nbgrader would leave that student ungraded and end with an error.

The derivations are graded by hand (JupyterLab's Formgrader, started from this folder) against
the rubric under each model answer in `source/`, which the grading pages do not show: keep the
source notebook open beside them.

The kernel that grades needs the course's modules (`attention_core`): run nbgrader in an
environment where the course is installed with it, such as the repository's `.venv-graded`
(`python3 dev.py setup --graded`).

Points per assignment: {points}.
"""


def unmarked(source: str) -> str:
    """A solution cell as its solution runs: the source without its BEGIN/END SOLUTION lines."""
    return "\n".join(line for line in source.splitlines()
                     if line.strip() not in (BEGIN_SOLUTION, END_SOLUTION))


def _meta(grade_id: str, *, grade: bool, solution: bool, locked: bool, points: int | None = None,
          task: bool = False) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": SCHEMA_VERSION,
            "solution": solution, "task": task}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def _cell(kind: str, source: str, grade_id: str, **meta):
    new = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    cell = new(source, metadata=_meta(grade_id, **meta))
    cell["id"] = grade_id
    return cell


def rubric_text(item: Item) -> str:
    lines = [f"**Rubric ({item.score} points).**", ""]
    lines += [f"- {p} point{'s' if p != 1 else ''}: {criterion}" for p, criterion in item.rubric]
    return "\n".join(lines)


def item_cells(number: int, item: Item) -> list:
    """The cells of one item: its task, then its answer (and, if autograded, its tests)."""
    task = f"### Item {number}: {KIND_TEXT[item.kind]} ({item.score} points)\n\n{item.task}"
    cells = [_cell("markdown", task, f"{item.name}_task", grade=False, solution=False, locked=True)]
    if item.kind == DERIVE:
        answer = (f"{BEGIN_SOLUTION}\n**Model answer.** {item.solution}\n\n{rubric_text(item)}\n"
                  f"{END_SOLUTION}")
        cells.append(_cell("markdown", answer, item.name, grade=True, solution=True, locked=False,
                           points=item.score))
        return cells
    cells.append(_cell("code", item.solution, f"{item.name}_answer", grade=False, solution=True,
                       locked=False))
    tests = f"{item.visible}\n{BEGIN_HIDDEN}\n{item.hidden}\n{END_HIDDEN}"
    cells.append(_cell("code", tests, item.name, grade=True, solution=False, locked=True,
                       points=item.points))
    return cells


def source_notebook(a: Assignment):
    """The teacher's source notebook of one assignment, with nbgrader's cell metadata."""
    points = sum(item.score for item in a.items)
    auto = sum(item.score for item in a.items if item.kind != DERIVE)
    header = (f"# Graded assignment {a.name[:2]}: {a.title}\n\n"
              f"{len(a.items)} items, {points} points ({auto} graded automatically, "
              f"{points - auto} by hand). Run the setup cell first. Write your code in place of "
              "`raise NotImplementedError()` and your derivations in place of YOUR ANSWER HERE; "
              "do not delete, copy or move cells. The test cells below your answers check a few "
              "things you can see; more tests run when your work is graded. Save before you "
              "submit.")
    cells = [_cell("markdown", header, "header", grade=False, solution=False, locked=True),
             _cell("code", a.setup, "setup", grade=False, solution=False, locked=True)]
    for number, item in enumerate(a.items, 1):
        cells += item_cells(number, item)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python",
                                 "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    return nb


class OutsideError(ValueError):
    """The course folder would be inside the repository."""


def write_course(out: Path, assignments=ASSIGNMENTS) -> list[Path]:
    """Write the nbgrader course folder into `out` (outside the repository); the files written."""
    out = Path(out).expanduser().resolve()
    if out.is_relative_to(ROOT):
        raise OutsideError(
            f"{out} is inside the repository ({ROOT}): the teacher's source holds the solutions "
            "and hidden tests and must not be committed with the course. Give a folder outside "
            "it, e.g. ~/attention-grading, and keep that in a private repository.")
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "nbgrader_config.py", out / "README.md"]
    written[0].write_text(CONFIG, encoding="utf-8")
    points = ", ".join(f"{a.name} {sum(i.score for i in a.items)}" for a in assignments)
    written[1].write_text(README.format(points=points), encoding="utf-8")
    for a in assignments:
        path = out / "source" / a.name / f"{a.name}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(source_notebook(a), path)
        written.append(path)
    return written


def main(out: str) -> int:
    try:
        written = write_course(Path(out))
    except OutsideError as e:
        print(e, file=sys.stderr)
        return 2
    items = [i for a in ASSIGNMENTS for i in a.items]
    print(f"{written[0].parent}: nbgrader course folder, {len(ASSIGNMENTS)} assignments, "
          f"{len(items)} graded items ({sum(i.kind == FILL for i in items)} computed, "
          f"{sum(i.kind == EXPERIMENT for i in items)} experiments, "
          f"{sum(i.kind == DERIVE for i in items)} derivations), "
          f"{sum(i.score for i in items)} points. Keep it in a private repository.")
    return 0
