"""The classroom edition, part 4: the graded track's nbgrader course folder (issue 26).

    python3 dev.py classroom assignments DIR [--lang ja]

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

With --lang ja everything a student reads is in Japanese: the titles, the header, each item's
heading and task, the setup cell's comments, the stub of a derivation's answer, and in the
feedback each failing test's message (FEEDBACK_TEXTS of nbgrader_config.py, applied by
ErrorLineOnly) and the notes the grading adds (a cell stopped by the timeout, a notebook that
could not be read). The code, the
grade_ids, the points, the tests and the solutions are the English ones, so the grading is the
same. The translations are in locale/ja/LC_MESSAGES/graded.po (`python3 dev.py ja update` keeps
it in step with STUDENT_TEXTS and the items: student_texts()); a text with no translation, or a
fuzzy one, stops the command before it writes anything, naming the text (UntranslatedError):
never an English text in a Japanese assignment. What only the teacher reads (the model answers,
the rubrics, the README, the grading's log lines, the graded notebooks) stays English. A test's
message is code: in the released notebook, where a student runs the visible tests, it is English.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts import translate  # noqa: E402
from scripts.graded_items import ASSIGNMENTS, DERIVE, EXPERIMENT, FILL, Assignment, Item  # noqa: E402

SCHEMA_VERSION = 3      # nbgrader's cell metadata schema (0.9)
CELL_TIMEOUT = 20       # seconds per cell when grading: an endless loop gets 0 for its item
BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"

LANGUAGES = ("en", "ja")   # the students' languages: each but English has its graded.po

# What the generator writes around the items that a student reads, in English: each is the msgid
# of its translation (no context); named fields, so that a translation may reorder them.
HEADER_TEXT = ("# Graded assignment {number}: {title}\n\n"
               "{items} items, {points} points ({auto} graded automatically, {manual} by hand). "
               "Run the setup cell first. Write your code in place of "
               "`raise NotImplementedError()` and your derivations in place of {stub}; "
               "do not delete, copy or move cells. The test cells below your answers check a few "
               "things you can see; more tests run when your work is graded. Save before you "
               "submit.")
ITEM_HEADING = "### Item {number}: {kind} ({points} points)"
KIND_TEXT = {
    FILL: "computed, graded automatically",
    EXPERIMENT: "an experiment: write the code and run it, graded automatically",
    DERIVE: "a derivation in words and formulas, graded by hand",
}
TEXT_STUB = "YOUR ANSWER HERE"      # what a derivation's answer cell holds when released
TIMEOUT_FORMAT = "this cell ran for more than {seconds} s and was stopped (an endless loop?)"
UNREADABLE_TEXT = ("**Your notebook could not be read when it was graded:** the file you "
                   "submitted is {reason}. It was graded as the released notebook, unanswered: "
                   "0 points for every item. Your file is kept for your teacher as {kept}; "
                   "ask them about submitting again.")
UNREADABLE_JSON = "not valid JSON (cut off or damaged when it was saved)"
UNREADABLE_OTHER = "not a notebook nbformat can read ({error})"
STUDENT_TEXTS = (HEADER_TEXT, ITEM_HEADING, *KIND_TEXT.values(), TEXT_STUB, TIMEOUT_FORMAT,
                 UNREADABLE_TEXT, UNREADABLE_JSON, UNREADABLE_OTHER)

TIMEOUT_TEXT = TIMEOUT_FORMAT.format(seconds=CELL_TIMEOUT)   # the English one

CONFIG_HEAD = """\
# nbgrader's configuration of this course folder, written by `python3 dev.py classroom
# assignments` of attention-notebooks; running it again rewrites this file.
c = get_config()  # noqa: F821 (nbgrader provides it)
TIMEOUT_TEXT = {timeout!r}

c.CourseDirectory.course_id = "attention-notebooks"
# Seconds each cell may run while grading: a submission that loops forever is interrupted there,
# its item gets 0 and the grading run goes on with the next cell.
c.Execute.timeout = {seconds}
c.Execute.interrupt_on_timeout = True
c.Execute.error_on_timeout = {{"ename": "CellTimeoutError", "evalue": TIMEOUT_TEXT,
                              "traceback": ["CellTimeoutError: " + TIMEOUT_TEXT]}}
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}}
c.ClearSolutions.text_stub = {stub!r}
"""
CONFIG_FEEDBACK = """
# Feedback shows the graded notebook. Without this it would show the hidden tests (nbgrader puts
# them back for grading) and, in a failing test's traceback, the line that failed: so the hidden
# tests are cleared again and each error is shown as its last line, the test's own message (in
# the students' language: FEEDBACK_TEXTS, at the end; the graded notebook keeps the English).
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor, Preprocessor  # noqa: E402
from nbgrader.preprocessors import ClearHiddenTests, GetGrades  # noqa: E402


class ErrorLineOnly(Preprocessor):
    def preprocess_cell(self, cell, resources, index):
        said = FEEDBACK_TEXTS.get(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id"), {})
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                evalue = said.get(output["evalue"], output["evalue"])
                output["traceback"] = [f"{output['ename']}: {evalue}"]
        return cell, resources


c.ErrorLineOnly.enabled = True  # nbconvert's own preprocessors are off until enabled
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, ErrorLineOnly,
                                    CSSHTMLHeaderPreprocessor]

"""
HOOK_HEAD = """# A submitted notebook nbgrader cannot read (not JSON: cut off or damaged while it was saved)
# would stop the grading of that student: autograde would end with an error, the student's items
# would wait for a manual grade with nothing to grade, and there would be no feedback. Before
# grading, such a file is kept beside it as NAME.ipynb.unreadable and replaced by the released
# notebook, unanswered, with a first cell that says so: every item gets 0 and the feedback tells
# the student why, in the students' language (the log, for the teacher, is in English).
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import nbformat  # noqa: E402
from nbformat.reader import NotJSONError  # noqa: E402

"""
HOOK_TEXTS = """\
UNREADABLE_TEXT = {note!r}
UNREADABLE_REASONS = {{"json": {json!r},
                      "other": {other!r}}}
"""
HOOK_BODY = """

def replace_unreadable(assignment, student, notebooks):
    for name in notebooks:  # submitted/<student>/<assignment>/<notebook>.ipynb
        path = Path(name)
        try:
            nbformat.read(path, as_version=4)
            continue
        except (NotJSONError, UnicodeDecodeError):
            reason = "not valid JSON (cut off or damaged when it was saved)"
            said = UNREADABLE_REASONS["json"]
        except Exception as e:  # noqa: BLE001 - whatever keeps nbformat from reading it
            reason = f"not a notebook nbformat can read ({type(e).__name__})"
            said = UNREADABLE_REASONS["other"].format(error=type(e).__name__)
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
            UNREADABLE_TEXT.format(reason=said, kept=kept.name)))
        nbformat.write(nb, path)
        print(f"[attention-notebooks] {path}: {reason}; kept as {kept.name} and graded as the "
              "released notebook, unanswered (0 points)", file=sys.stderr)


c.Autograde.pre_convert_hook = replace_unreadable
"""


FEEDBACK_HEAD = """
# The tests' messages as the feedback shows them (ErrorLineOnly): grade_id -> the message the test
# raises -> the students' text. Empty in English: the message itself.
"""


def feedback_texts(tr, assignments) -> str:
    """FEEDBACK_TEXTS of nbgrader_config.py: each test message of `assignments` through `tr`."""
    if tr.lang == "en":
        return "FEEDBACK_TEXTS = {}\n"
    lines = ["FEEDBACK_TEXTS = {"]
    for a in assignments:
        for item in a.items:
            if item.kind == DERIVE:
                continue
            lines.append(f"    {item.name!r}: {{")
            lines += [f"        {text!r}: {tr(text, f'{item.name} tests')!r},"
                      for text in assert_messages(item)]
            lines.append("    },")
    return "\n".join([*lines, "}", ""])


def config_text(tr, assignments=ASSIGNMENTS) -> str:
    """nbgrader_config.py, its students' texts in the language of `tr` (a Texts)."""
    return (CONFIG_HEAD.format(timeout=tr(TIMEOUT_FORMAT).format(seconds=CELL_TIMEOUT),
                               seconds=CELL_TIMEOUT, stub=tr(TEXT_STUB))
            + CONFIG_FEEDBACK + HOOK_HEAD
            + HOOK_TEXTS.format(note=tr(UNREADABLE_TEXT), json=tr(UNREADABLE_JSON),
                                other=tr(UNREADABLE_OTHER))
            + HOOK_BODY + FEEDBACK_HEAD + feedback_texts(tr, assignments))

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


# --- the students' language ------------------------------------------------------------------

class UntranslatedError(ValueError):
    """A text a student would read has no usable translation (missing, empty or fuzzy)."""


def comments(source: str) -> list[str]:
    """The texts of the `#` comments of a code cell, in order (without `#` and its space)."""
    return [tok.string[1:].strip() for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type == tokenize.COMMENT]


def assert_messages(item: Item) -> list[str]:
    """The messages of an autograded item's asserts, visible and hidden, each once, in order:
    what its feedback shows when a test fails."""
    found = [node.msg.value for part in (item.visible, item.hidden)
             for node in ast.walk(ast.parse(part or "pass"))
             if isinstance(node, ast.Assert) and isinstance(node.msg, ast.Constant)]
    return list(dict.fromkeys(found))


def student_texts(assignments=ASSIGNMENTS) -> list[tuple[str, str | None, str]]:
    """Every text a student reads, as (English, context, where): the msgids of graded.po.

    The generator's own texts have no context; an assignment's title and its setup cell's
    comments have the assignment's name ("04_masking", "04_masking setup"), a task its item's
    grade_id, a test's message (which the feedback shows) "<grade_id> tests". Model answers and rubrics are not here: students never see them."""
    texts = [(text, None, "scripts/classroom_graded.py") for text in STUDENT_TEXTS]
    for a in assignments:
        where = f"scripts/graded/a{a.name}.py"
        texts.append((a.title, a.name, f"{where}: title"))
        texts += [(text, f"{a.name} setup", f"{where}: setup comment")
                  for text in dict.fromkeys(comments(a.setup))]
        texts += [(item.task, item.name, f"{where}: task") for item in a.items]
        texts += [(text, f"{item.name} tests", f"{where}: a test's message (feedback)")
                  for item in a.items for text in assert_messages(item)]
    return texts


class Texts:
    """The students' texts in one language: tr(english, context) is its translation.

    English gives the text itself. Another language looks it up in its graded.po and notes each
    text it has no usable translation of (missing, empty or fuzzy: scripts/translate.py), giving
    the English meanwhile; check() then raises UntranslatedError naming all of them."""

    def __init__(self, lang: str = "en", catalog: Path | None = None):
        if lang not in LANGUAGES:
            raise ValueError(f"no graded track in {lang!r}; languages: {', '.join(LANGUAGES)}")
        self.lang, self.missing = lang, []
        self.path = catalog or translate.graded_catalog_path(lang)
        self.catalog = None
        if lang != "en":
            if not self.path.exists():
                raise UntranslatedError(f"{self.path} is missing: run `python3 dev.py ja update` "
                                        "and translate it (docs/japanese-edition.md)")
            self.catalog = translate.read_catalog(self.path)

    def __call__(self, text: str, context: str | None = None) -> str:
        if self.catalog is None:
            return text
        found = translate.translation(self.catalog, text, context)
        if found is None:
            message = self.catalog.get(text, context)
            state = "fuzzy" if message is not None and message.fuzzy and message.string else \
                "untranslated"
            self.missing.append((context or "the generator's text", state, text))
            return text
        return found

    def check(self) -> None:
        if self.missing:
            lines = [f"  {where} ({state}): {text.splitlines()[0][:70]!r}"
                     for where, state, text in self.missing]
            raise UntranslatedError(
                f"{len(self.missing)} text(s) a student reads have no up-to-date {self.lang} "
                f"translation in {self.path} (the assignments would be partly English):\n"
                + "\n".join(lines) + "\nRun `python3 dev.py ja update`, translate them and delete "
                "their `#, fuzzy` lines (docs/japanese-edition.md).")


def with_comments(source: str, tr, context: str) -> str:
    """A code cell with each `#` comment translated, every other character as it was."""
    lines = source.split("\n")
    found = [tok for tok in tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type == tokenize.COMMENT]
    for tok in reversed(found):   # from the end: earlier positions stay valid
        row, col = tok.start
        line = lines[row - 1]
        lines[row - 1] = line[:col] + "# " + tr(tok.string[1:].strip(), context) + \
            line[tok.end[1]:]
    return "\n".join(lines)


# --- the notebooks ---------------------------------------------------------------------------

def item_cells(number: int, item: Item, tr=None) -> list:
    """The cells of one item: its task, then its answer (and, if autograded, its tests)."""
    tr = tr or Texts()
    task = (tr(ITEM_HEADING).format(number=number, kind=tr(KIND_TEXT[item.kind]),
                                    points=item.score)
            + f"\n\n{tr(item.task, item.name)}")
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


def source_notebook(a: Assignment, tr=None):
    """The teacher's source notebook of one assignment, with nbgrader's cell metadata."""
    tr = tr or Texts()
    points = sum(item.score for item in a.items)
    auto = sum(item.score for item in a.items if item.kind != DERIVE)
    header = tr(HEADER_TEXT).format(number=a.name[:2], title=tr(a.title, a.name),
                                    items=len(a.items), points=points, auto=auto,
                                    manual=points - auto, stub=tr(TEXT_STUB))
    cells = [_cell("markdown", header, "header", grade=False, solution=False, locked=True),
             _cell("code", with_comments(a.setup, tr, f"{a.name} setup"), "setup", grade=False,
                   solution=False, locked=True)]
    for number, item in enumerate(a.items, 1):
        cells += item_cells(number, item, tr)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python",
                                 "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    return nb


class OutsideError(ValueError):
    """The course folder would be inside the repository."""


README_LANGUAGE = """
The students' texts of this folder are in {language} (`--lang {lang}`): the assignments'
headers, titles, tasks and setup comments, and the notes the grading adds
(`nbgrader_config.py`). The code, grade_ids, points, tests and solutions are those of the
English folder, so an answer gets the same points in either; the model answers and rubrics,
which only you see, are in English.
"""
LANGUAGE_NAMES = {"ja": "Japanese"}


def write_course(out: Path, assignments=ASSIGNMENTS, lang: str = "en",
                 catalog: Path | None = None) -> list[Path]:
    """Write the nbgrader course folder into `out` (outside the repository); the files written.

    lang: the students' language. Raises UntranslatedError, before writing anything, when a text
    they would read has no up-to-date translation in `catalog` (default: locale/<lang>/...)."""
    out = Path(out).expanduser().resolve()
    if out.is_relative_to(ROOT):
        raise OutsideError(
            f"{out} is inside the repository ({ROOT}): the teacher's source holds the solutions "
            "and hidden tests and must not be committed with the course. Give a folder outside "
            "it, e.g. ~/attention-grading, and keep that in a private repository.")
    tr = Texts(lang, catalog)
    config = config_text(tr, assignments)
    notebooks = {a.name: source_notebook(a, tr) for a in assignments}
    tr.check()
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "nbgrader_config.py", out / "README.md"]
    written[0].write_text(config, encoding="utf-8")
    points = ", ".join(f"{a.name} {sum(i.score for i in a.items)}" for a in assignments)
    readme = README.format(points=points)
    if lang != "en":
        readme += README_LANGUAGE.format(language=LANGUAGE_NAMES[lang], lang=lang)
    written[1].write_text(readme, encoding="utf-8")
    for name, nb in notebooks.items():
        path = out / "source" / name / f"{name}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
        written.append(path)
    return written


def main(out: str, lang: str = "en") -> int:
    try:
        written = write_course(Path(out), lang=lang)
    except (OutsideError, UntranslatedError) as e:
        print(e, file=sys.stderr)
        return 2
    items = [i for a in ASSIGNMENTS for i in a.items]
    language = f", the students' texts in {LANGUAGE_NAMES[lang]}" if lang != "en" else ""
    print(f"{written[0].parent}: nbgrader course folder, {len(ASSIGNMENTS)} assignments, "
          f"{len(items)} graded items ({sum(i.kind == FILL for i in items)} computed, "
          f"{sum(i.kind == EXPERIMENT for i in items)} experiments, "
          f"{sum(i.kind == DERIVE for i in items)} derivations), "
          f"{sum(i.score for i in items)} points{language}. Keep it in a private repository.")
    return 0
