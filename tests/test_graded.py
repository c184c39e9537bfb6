"""The graded track (issue 26): the nbgrader course folder, graded by the real nbgrader.

`python3 dev.py classroom assignments DIR` writes the teacher's source (scripts/classroom_graded.py,
items in scripts/graded_items.py). The first tests read what it writes; the last one runs the
nbgrader CLI on it in a temporary folder: generate_assignment, four students' submissions (all
correct; one item wrong and one left empty; one item that raises, one that loops forever, one
wrong whose test cell was emptied; a notebook saved broken, not valid JSON),
autograde, and checks every item's score exactly, what the released notebooks do not contain,
and that the timed-out and failing cells and the broken notebook got zero while the grading run
went on.

nbgrader is not in .venv (it brings the `notebook` package): the test uses the nbgrader of the
interpreter running it if it has one, else .venv-graded (`python3 dev.py setup --graded`). Without
either it skips; with REQUIRE_NBGRADER=1 (CI) it fails instead.
"""

from __future__ import annotations

import ast
import html
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from required import require

ROOT = Path(__file__).resolve().parent.parent
from scripts import classroom_graded as graded  # noqa: E402  (ROOT first)
from scripts.graded_items import ASSIGNMENTS, DERIVE, KINDS  # noqa: E402

ITEMS = [(a, item) for a in ASSIGNMENTS for item in a.items]
BEGIN, END = graded.BEGIN_SOLUTION, graded.END_SOLUTION


def _course(tmp_path) -> Path:
    out = tmp_path / "course"
    assert graded.main(str(out)) == 0
    return out


def _source(course: Path, name: str):
    return nbformat.read(course / "source" / name / f"{name}.ipynb", as_version=4)


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


# --- what the command writes -----------------------------------------------------------------

def test_the_course_folder_must_lie_outside_the_repository(tmp_path, capsys):
    for inside in (ROOT / "build" / "graded", ROOT, ROOT / "notebooks" / ".." / "x"):
        assert graded.main(str(inside)) == 2
        assert "inside the repository" in capsys.readouterr().err
        assert not inside.exists() or inside == ROOT
    link = tmp_path / "link"
    link.symlink_to(ROOT / "build", target_is_directory=True)
    assert graded.main(str(link / "graded")) == 2, "a link into the repository is inside it"
    done = subprocess.run([sys.executable, ROOT / "scripts" / "classroom.py", "assignments",
                           ROOT / "build" / "graded"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "inside the repository" in done.stderr


def test_the_folder_is_an_nbgrader_course(tmp_path):
    course = _course(tmp_path)
    config = (course / "nbgrader_config.py").read_text(encoding="utf-8")
    assert f"c.Execute.timeout = {graded.CELL_TIMEOUT}" in config
    compile(config, "nbgrader_config.py", "exec")
    assert "PRIVATE repository" in " ".join((course / "README.md").read_text(encoding="utf-8").split())
    assert sorted(p.name for p in (course / "source").iterdir()) == sorted(a.name for a in ASSIGNMENTS)


def test_writing_again_rewrites_the_same_files_and_leaves_nbgrader_s_alone(tmp_path):
    course = _course(tmp_path)
    before = {p: p.read_bytes() for p in course.rglob("*") if p.is_file()}
    (course / "gradebook.db").write_bytes(b"the teacher's grades")
    (course / "source" / "04_masking" / "data.csv").write_text("1,2\n")
    assert graded.main(str(course)) == 0
    after = {p: p.read_bytes() for p in course.rglob("*") if p.is_file()}
    assert after.pop(course / "gradebook.db") == b"the teacher's grades"
    assert after.pop(course / "source" / "04_masking" / "data.csv") == b"1,2\n"
    assert after == before, "the same files, byte for byte"


def test_every_graded_cell_has_points_a_solution_and_its_tests(tmp_path):
    course = _course(tmp_path)
    for a in ASSIGNMENTS:
        nb = _source(course, a.name)
        nbformat.validate(nb)
        ids = [_meta(c)["grade_id"] for c in nb.cells]
        assert all(_meta(c) for c in nb.cells) and len(ids) == len(set(ids)), a.name
        cells = {_meta(c)["grade_id"]: c for c in nb.cells}
        for item in a.items:
            graded_cell = _meta(cells[item.name])
            assert graded_cell["grade"] and graded_cell["points"] == item.score > 0, item.name
            if item.kind == DERIVE:
                c = cells[item.name]
                assert c.cell_type == "markdown" and graded_cell["solution"]
                assert c.source.startswith(BEGIN) and c.source.endswith(END)
                assert "**Rubric" in c.source and len(item.rubric) >= 3
                continue
            answer, tests = cells[f"{item.name}_answer"], cells[item.name]
            assert _meta(answer)["solution"] and not _meta(answer)["grade"]
            assert answer.source.count(BEGIN) == answer.source.count(END) >= 1
            assert tests.cell_type == "code" and _meta(tests)["locked"]
            visible, hidden = tests.source.split(graded.BEGIN_HIDDEN)
            assert visible.strip() and "assert" in visible, f"{item.name}: no visible test"
            assert hidden.count("assert") >= 1 and hidden.rstrip().endswith(graded.END_HIDDEN)
    kinds = [item.kind for _, item in ITEMS]
    assert all(kinds.count(k) >= len(ASSIGNMENTS) for k in KINDS), "each kind in each assignment"
    for a in ASSIGNMENTS:
        assert {i.kind for i in a.items} == set(KINDS), a.name


def test_every_test_says_what_failed():
    """A failing test is the feedback a student reads (nbgrader shows its last line only, see
    nbgrader_config.py): each assert carries a message, none with the expected value."""
    for _, item in ITEMS:
        for part in (item.visible, item.hidden):
            for node in ast.walk(ast.parse(part or "pass")):
                if isinstance(node, ast.Assert):
                    assert isinstance(node.msg, ast.Constant) and isinstance(node.msg.value, str), (
                        f"{item.name}: {ast.unparse(node)} has no message")


# --- nbgrader itself ------------------------------------------------------------------------

def _nbgrader_bin() -> Path | None:
    if importlib.util.find_spec("nbgrader") is not None:
        return Path(sys.executable).parent
    venv_bin = ROOT / ".venv-graded" / ("Scripts" if sys.platform == "win32" else "bin")
    return venv_bin if (venv_bin / "nbgrader").exists() else None


def _env(bin_dir: Path) -> dict:
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=str(ROOT))  # nbgrader's kernels grade against this checkout's modules
    return env


def _nbgrader(bin_dir: Path, course: Path, *args: str) -> str:
    done = subprocess.run([bin_dir / "nbgrader", *args], cwd=course, env=_env(bin_dir),
                          capture_output=True, text=True, timeout=900)
    log = done.stdout + done.stderr
    assert done.returncode == 0, f"nbgrader {' '.join(args)}:\n{log[-20000:]}"  # one log of all assignments
    return log


def _regions(source: str, begin: str, end: str) -> list[str]:
    """The lines inside begin/end regions."""
    out, inside = [], False
    for line in source.splitlines():
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif inside:
            out.append(line)
    return out


def _secrets(nb) -> set[str]:
    """Every line of the source's solutions, rubrics and hidden tests that is not also shown."""
    secret, shown = set(), set()
    for cell in nb.cells:
        hidden = _regions(cell.source, BEGIN, END) + _regions(cell.source, graded.BEGIN_HIDDEN,
                                                              graded.END_HIDDEN)
        secret |= {line.strip() for line in hidden}
        shown |= {line.strip() for line in cell.source.splitlines() if line not in hidden}
    return {s for s in secret - shown if len(s) >= 6}


def _expected_numbers(a) -> set[str]:
    """The answers' numbers as a page would print them (3 and 4 decimals), whole numbers aside."""
    forms: set[str] = set()
    for item in a.items:
        if item.kind == DERIVE:
            continue
        ns: dict = {}
        exec(a.setup, ns)  # noqa: S102 - the course's own item code
        exec(graded.unmarked(item.solution), ns)  # noqa: S102
        for name in item.answers:
            try:
                values = np.asarray(ns[name], dtype=float).ravel()
            except (TypeError, ValueError):  # a function
                continue
            forms |= {f"{x:.{k}f}" for x in values if np.isfinite(x) and not float(x).is_integer()
                      for k in (3, 4)}
    return forms


def _submission(release, source, answers: dict) -> nbformat.NotebookNode:
    """The released notebook answered: by default with the source's solution of every cell;
    answers[grade_id] is another source for that cell (a test cell too), None leaves it as
    released."""
    nb = json.loads(json.dumps(release))
    solutions = {_meta(c)["grade_id"]: c.source for c in source.cells if _meta(c).get("solution")}
    for cell in nb["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id not in solutions and grade_id not in answers:
            continue
        answer = answers[grade_id] if grade_id in answers else graded.unmarked(solutions[grade_id])
        if answer is not None:
            cell["source"] = answer
    return nbformat.from_dict(nb)


def _scores(bin_dir: Path, course: Path) -> dict:
    """{(student, assignment, grade_id): (auto_score, needs_manual_grade, max_score)}."""
    code = ("import json\nfrom nbgrader.api import Gradebook\nout = []\n"
            "with Gradebook('sqlite:///gradebook.db') as gb:\n"
            "    for s in gb.students:\n"
            "        for sub in s.submissions:\n"
            "            for nb in sub.notebooks:\n"
            "                for g in nb.grades:\n"
            "                    out.append([s.id, sub.assignment.name, g.name, g.auto_score,\n"
            "                                g.needs_manual_grade, g.max_score])\n"
            "print(json.dumps(out))\n")
    done = subprocess.run([bin_dir / "python", "-c", code], cwd=course, env=_env(bin_dir),
                          capture_output=True, text=True, timeout=120, check=True)
    return {(s, a, g): (auto, manual, top) for s, a, g, auto, manual, top in json.loads(done.stdout)}


# What the second and third students hand in instead of the solution (None: left as released).
BEN = {"02_worked_example_3x2": {  # one item wrong (the visible test passes), one left empty
    "nb02_third_row_answer": ("Q, K, V = Z @ W_Q, Z @ W_K, Z @ W_V\n"
                              "a_3 = ac.attention_weights(Q, K)[1]   # the second row, not the third\n"
                              "o_3 = a_3 @ V"),
    "nb02_shift": None}}
# The endless loop waits instead of spinning: the timeout stops it alike (nbclient interrupts the
# kernel), and its CELL_TIMEOUT seconds do not take a core from the rest of the test run.
CY = {"04_masking": {  # an endless loop, then a correct item: the grading goes on after it
    "nb04_batch_mask_answer": ("M_batch = ac.causal_mask(3)\nimport time\n"
                               "while True:\n    time.sleep(0.05)"),
    "nb04_fully_masked": "Every entry is NaN; I did not finish the rest."},
      "01_qkv_projections": {  # an answer that raises; a wrong one whose tests were deleted
    "nb01_asymmetry_answer": "asymmetry = np.abs(S - S.T).max()   # S was never defined",
    "nb01_is_projection_answer": ("def is_projection(W, tol=1e-9):\n    return True\n\n"
                                  "P_cols = W_Q @ np.linalg.pinv(W_Q)"),
    "nb01_is_projection": "pass  # the tests are gone: nbgrader grades with the source's"}}
# The fourth student's notebook was cut off while it was saved: not JSON. nbgrader alone would
# fail that student's grading (autograde exits 1, the items wait for a manual grade with nothing
# to grade, no feedback); the course folder's config puts the released notebook in its place.
BROKEN = "02_worked_example_3x2"
WRONG = {("ben", "02_worked_example_3x2", "nb02_third_row"), ("ben", "02_worked_example_3x2", "nb02_shift"),
         ("cy", "04_masking", "nb04_batch_mask"), ("cy", "01_qkv_projections", "nb01_asymmetry"),
         ("cy", "01_qkv_projections", "nb01_is_projection")} | {
    ("dan", BROKEN, item.name) for a in ASSIGNMENTS if a.name == BROKEN for item in a.items}


def expected_grades(students: dict, wrong: set) -> dict:
    """{(student, assignment, grade_id): (auto_score, needs_manual_grade)} that nbgrader must give
    `students` ({student: {assignment: answers}}) whose items `wrong` are wrong or left empty."""
    expected = {}
    for student, work in students.items():
        for name in work:
            for item in next(a for a in ASSIGNMENTS if a.name == name).items:
                key = (student, name, item.name)
                if item.kind == DERIVE:  # left as released: 0 at once; answered: for the teacher
                    expected[key] = (0.0, False) if key in wrong else (None, True)
                else:
                    expected[key] = (0.0 if key in wrong else float(item.points), False)
    return expected


@pytest.mark.own_venv   # nbgrader's kernels run .venv-graded: `dev.py test --lowest` leaves it out
def test_nbgrader_releases_no_answer_and_grades_exactly(tmp_path):
    bin_dir = _nbgrader_bin()
    require(None if bin_dir else "nbgrader is not installed: python3 dev.py setup --graded "
            "(the course and requirements-graded.txt in .venv-graded)", "REQUIRE_NBGRADER",
            "the graded-track test cannot run")
    course = _course(tmp_path)
    releases, sources = {}, {}
    # One nbgrader process per step for every assignment (its id is a glob, "*", as the guide
    # says): each process costs some 2 s to start, 42 of them about 80 s of the test.
    _nbgrader(bin_dir, course, "generate_assignment", "*")
    for a in ASSIGNMENTS:
        releases[a.name] = nbformat.read(course / "release" / a.name / f"{a.name}.ipynb", as_version=4)
        sources[a.name] = _source(course, a.name)

    # the released notebooks: no solution, rubric or hidden test, not even one line of them
    for name, release in releases.items():
        text = "\n".join(c.source for c in release.cells)
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", "Model answer", "Rubric"):
            assert marker not in text, f"{name}: {marker!r} released"
        secrets = _secrets(sources[name])
        assert len(secrets) >= 10, f"{name}: the search would find nothing ({len(secrets)} lines)"
        leaked = sorted(s for s in secrets if s in text)
        assert not leaked, f"{name} releases lines of the teacher's source: {leaked}"
        stubs = sum(c.source.count(BEGIN) for c in sources[name].cells if c.cell_type == "code")
        numbers = sorted(n for n in _expected_numbers(next(a for a in ASSIGNMENTS if a.name == name))
                         if n in text)
        assert not numbers, f"{name} releases expected values: {numbers}"
        code = "\n".join(c.source for c in release.cells if c.cell_type == "code")
        assert code.count("raise NotImplementedError()") == stubs, f"{name}: one stub per solution"

    students = {"ada": {a.name: {} for a in ASSIGNMENTS}, "ben": BEN, "cy": CY, "dan": {BROKEN: {}}}
    for student, work in students.items():
        for name, answers in work.items():
            folder = course / "submitted" / student / name
            folder.mkdir(parents=True)
            nbformat.write(_submission(releases[name], sources[name], answers), folder / f"{name}.ipynb")
    broken = course / "submitted" / "dan" / BROKEN / f"{BROKEN}.ipynb"
    cut_off = broken.read_bytes()[: broken.stat().st_size // 2]
    broken.write_bytes(cut_off)
    log = _nbgrader(bin_dir, course, "autograde", "*", "--create")
    said = (os.path.join("dan", BROKEN, f"{BROKEN}.ipynb") + ": not valid JSON (cut off or "
            f"damaged when it was saved); kept as {BROKEN}.ipynb.unreadable")   # the hook's line
    assert said in log, log[-3000:]
    assert broken.with_name(broken.name + ".unreadable").read_bytes() == cut_off, "the teacher keeps the file"

    scores = _scores(bin_dir, course)
    got = {key: (auto, manual) for key, (auto, manual, _) in scores.items()}
    assert got == expected_grades(students, WRONG)
    for (_, name, grade_id), (_, _, top) in scores.items():
        item = next(i for a in ASSIGNMENTS if a.name == name for i in a.items if i.name == grade_id)
        assert top == item.score

    # the feedback lines the students will read, and the timeout that ended the endless loop
    def graded_cells(student, name):
        nb = nbformat.read(course / "autograded" / student / name / f"{name}.ipynb", as_version=4)
        return {_meta(c).get("grade_id"): c for c in nb.cells}

    ben = graded_cells("ben", "02_worked_example_3x2")
    assert "a_3 is not the third row of the weights" in json.dumps(ben["nb02_third_row"].outputs)
    cy = graded_cells("cy", "04_masking")
    loop = json.dumps(cy["nb04_batch_mask_answer"].outputs)
    assert graded.TIMEOUT_TEXT in loop, loop[:2000]
    assert not any(o.get("output_type") == "error" for o in cy["nb04_leaks"].outputs)
    assert "NameError" in json.dumps(graded_cells("cy", "01_qkv_projections")["nb01_asymmetry"].outputs)
    note = nbformat.read(course / "autograded" / "dan" / BROKEN / f"{BROKEN}.ipynb", as_version=4).cells[0]
    assert "could not be read" in note.source and not _meta(note), "the first cell says why, ungraded"

    # feedback: each error as its test's message, no hidden test, no traceback quoting one
    _nbgrader(bin_dir, course, "generate_feedback", "*")
    hidden = {name: {line.strip() for c in source.cells
                     for line in _regions(c.source, graded.BEGIN_HIDDEN, graded.END_HIDDEN)
                     if len(line.strip()) >= 6} for name, source in sources.items()}
    shown = {}
    for student, work in students.items():
        for name in work:
            page = (course / "feedback" / student / name / f"{name}.html").read_text(encoding="utf-8")
            text = html.unescape(re.sub(r"<[^>]+>", "", page[page.index("<body"):]))
            assert "HIDDEN TESTS" not in text and "Traceback" not in text, (student, name)
            leaked = sorted(line for line in hidden[name] if line in text)
            assert not leaked, f"{student}'s feedback on {name} shows hidden tests: {leaked}"
            visible = next(i for a in ASSIGNMENTS if a.name == name for i in a.items
                           if i.visible).visible.splitlines()[0]
            assert visible in text, "the search reads the page's text: the visible tests are in it"
            shown[student, name] = text
    assert "AssertionError: a_3 is not the third row of the weights" in shown["ben", "02_worked_example_3x2"]
    assert "NameError: name 'S' is not defined" in shown["cy", "01_qkv_projections"]
    assert f"CellTimeoutError: {graded.TIMEOUT_TEXT}" in shown["cy", "04_masking"]
    assert "Your notebook could not be read when it was graded: the file you submitted is not " \
        "valid JSON" in " ".join(shown["dan", BROKEN].split())
    shutil.rmtree(course / "autograded")  # tmp_path holds it otherwise; nothing else reads it
