"""House rules of the notebooks, checked on the committed files.

Strict nbval compares stored outputs with a fresh run, but a notebook that was
never executed has nothing stored and passes silently. These tests make sure
every notebook was executed in order in one fresh kernel, stores no error it
should not, and keeps the rules that nbval cannot see.
"""

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import attention_core as ac
import attention_learning as al

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
NAME = re.compile(r"^(\d\d)_[a-z0-9_]+\.ipynb$")


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _src(cell):
    return "".join(cell.get("source", ""))


def _tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def _code(path):
    return [c for c in _cells(path) if c["cell_type"] == "code" and "skip-execution" not in _tags(c)]


def test_there_are_notebooks_and_they_are_numbered_in_order():
    assert NOTEBOOKS, "no notebooks found in notebooks/"
    numbers = []
    for p in NOTEBOOKS:
        m = NAME.match(p.name)
        assert m, f"{p.name}: notebooks are named NN_topic.ipynb (lower case, underscores)"
        numbers.append(int(m.group(1)))
    assert numbers == list(range(len(numbers))), f"numbers {numbers} are not 00, 01, ... in order"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_executed_in_order_in_one_fresh_kernel(path):
    counts = [c.get("execution_count") for c in _code(path)]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: execution counts {counts} are not 1..N; regenerate with "
        "`python3 dev.py regenerate`")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_stored_errors_or_warnings(path):
    for i, c in enumerate(_code(path), 1):
        for o in c.get("outputs", []):
            if o["output_type"] == "error":
                assert "raises-exception" in _tags(c), (
                    f"{path.name} code cell {i} stores an error {o.get('ename')} but is not "
                    "tagged raises-exception")
            if o.get("name") == "stderr":
                assert "Warning" not in "".join(o.get("text", "")), (
                    f"{path.name} code cell {i} prints a warning on stderr")
        if "raises-exception" in _tags(c):
            assert any(o["output_type"] == "error" for o in c.get("outputs", [])), (
                f"{path.name} code cell {i} is tagged raises-exception but stores no error")


# The words describe() writes in English (course/describe/): none is left in a Japanese figure's
ENGLISH_DESCRIPTION = re.compile(r"\b(?:heatmap|against|rising|falling|turning|largest|panels?|"
                                 r"curves?|bars|points|arrows|diagram)\b")


@pytest.mark.parametrize("path", NOTEBOOKS + sorted((ROOT / "notebooks" / "ja").glob("*.ipynb")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_stored_figure_is_described_in_words_in_its_language(path):
    """Issue 27: a figure's text/plain is its description (course/describe/, made the
    figure's text by use_course_style), the alt of its image on the site and the slides; its
    text/html, which JupyterLab draws instead of the PNG, is the same PNG with those words as
    its alt (course.figures.figure_html), and the full words below it where the alt is short
    of them."""
    import html
    from tests.figure_texts import JAPANESE

    japanese = path.parent.name == "ja"
    for i, c in enumerate(_code(path), 1):
        for o in c.get("outputs", []):
            if "image/png" not in o.get("data", {}):
                continue
            text = "".join(o["data"].get("text/plain", ""))
            assert text and not text.startswith("<"), (
                f"{path.name} code cell {i}: a figure stored without its description: {text!r}")
            assert "no data." not in text and "データなし" not in text, (
                f"{path.name} code cell {i}: a panel described as empty: {text!r}")
            if japanese:
                assert JAPANESE.search(text) and not ENGLISH_DESCRIPTION.search(text), (
                    f"{path.name} code cell {i}: the description is not in Japanese: {text!r}")
            png = "".join(o["data"]["image/png"]).replace("\n", "")
            img = re.fullmatch(r'<img src="data:image/png;base64,([^"]*)" alt="([^"]*)">'
                               r'(?:<details class="course-figure-words"><summary>[^<]+</summary>'
                               r'<p>([^<]+)</p></details>)?',
                               "".join(o["data"].get("text/html", "")))
            assert img, f"{path.name} code cell {i}: a figure without its <img alt> (text/html)"
            assert img.group(1).replace("\n", "") == png, (
                f"{path.name} code cell {i}: the <img alt> shows another PNG than the figure's")
            assert html.unescape(img.group(2)) == " ".join(text.split()), (
                f"{path.name} code cell {i}: the <img>'s alt is not the figure's words")
            full = html.unescape(img.group(3) or "")
            assert not full or len(full) > len(" ".join(text.split())), (
                f"{path.name} code cell {i}: the full words say no more than the alt")
            if japanese and full:
                assert JAPANESE.search(full) and not ENGLISH_DESCRIPTION.search(full), (
                    f"{path.name} code cell {i}: the full words are not in Japanese")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_ignored_outputs_are_few_and_explained(path):
    code = _code(path)
    ignored = [c for c in code if "NBVAL_IGNORE_OUTPUT" in _src(c)]
    assert len(ignored) <= max(2, len(code) // 4), (
        f"{path.name}: {len(ignored)} of {len(code)} code cells are not compared")
    for c in ignored:
        lines = _src(c).splitlines()
        # nbval only honours the marker when the comment is exactly "# NBVAL_IGNORE_OUTPUT"
        assert lines[0].strip() == "# NBVAL_IGNORE_OUTPUT", (
            f"{path.name}: '{lines[0]}' - the marker must stand alone on the first line")
        assert len(lines) > 1 and re.match(r"#\s*\S", lines[1].strip()), (
            f"{path.name}: say on the second line, as a comment, why the output is not compared")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_prose_outweighs_code_and_cells_are_short(path):
    cells = _cells(path)
    md = sum(len(_src(c)) for c in cells if c["cell_type"] == "markdown")
    code = sum(len(_src(c)) for c in cells if c["cell_type"] == "code")
    assert md >= code, f"{path.name}: {md} characters of markdown < {code} of code"
    for c in cells:
        if c["cell_type"] == "code":
            lines = [x for x in _src(c).splitlines() if x.strip() and not x.strip().startswith("#")]
            assert len(lines) <= 15, f"{path.name}: a code cell has {len(lines)} lines:\n{_src(c)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_core_function_is_redefined(path):
    core = set(ac.__all__) | set(al.__all__)
    for c in _code(path):
        src = "\n".join(x for x in _src(c).splitlines() if not x.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                assert node.name not in core, (
                    f"{path.name} redefines {node.name} of attention_core or attention_learning; "
                    "import it instead")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_imports_need_no_path_hacks(path):
    for c in _code(path):
        assert "sys.path" not in _src(c), (
            f"{path.name} edits sys.path; the course modules are installed (pip install -e .)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_widgets_are_wired_by_with_controls_not_its_old_name(path):
    """course.live.interactive is kept only for copies handed out before it was renamed: beside
    ipywidgets.interactive (another function), the notebooks use course.live.with_controls."""
    for c in _code(path):
        assert not re.search(r"(?<![\w.])interactive\(|import interactive\b", _src(c)), (
            f"{path.name}: {_src(c)[:80]!r} calls course.live's old name; use with_controls")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_widget_state_or_foreign_kernel(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["metadata"].get("kernelspec", {}).get("name") == "python3"
    assert "widgets" not in nb["metadata"], f"{path.name} stores widget state (regenerate it)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_streams_are_whole(path):
    """`dev.py regenerate` merges the pieces one print can arrive in, so diffs stay readable."""
    for i, cell in enumerate(_code(path)):
        outs = cell.get("outputs", [])
        for a, b in zip(outs, outs[1:], strict=False):
            assert not (a["output_type"] == b["output_type"] == "stream" and a["name"] == b["name"]), (
                f"{path.name} code cell {i}: consecutive {a['name']} pieces; regenerate the notebook")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_listed_in_readme_and_start_here(path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"notebooks/{path.name}" in readme, f"{path.name} is missing from the README table"
    if path.name != "00_start_here.ipynb":
        start = "".join(_src(c) for c in _cells(ROOT / "notebooks" / "00_start_here.ipynb"))
        assert path.name in start, f"{path.name} is missing from the map in 00_start_here"


TEACHING = [p for p in NOTEBOOKS if p.name != "00_start_here.ipynb"]


@pytest.mark.parametrize("path", TEACHING, ids=lambda p: p.name)
def test_teaching_notebook_structure(path):
    """Goals at the top, a widget, a figure, two or more unanswered self-checks, prev/next links."""
    cells = _cells(path)
    assert "goal" in "".join(_src(c) for c in cells[:3]).lower(), f"{path.name}: no learning goals"
    code = _code(path)
    widgets = [c for c in code if "with_controls(" in _src(c)]
    assert widgets, f"{path.name} has no widget"
    for c in widgets:  # the widget view's model id differs each run: not compared, said why
        assert _src(c).startswith("# NBVAL_IGNORE_OUTPUT\n#"), f"{path.name}: {_src(c)[:80]}"
    assert any("image/png" in o.get("data", {}) for c in code for o in c["outputs"]), (
        f"{path.name} stores no figure: readers without a kernel see none")
    checks = [c for c in code if "answer = ..." in _src(c)]
    assert len(checks) >= 2, f"{path.name}: {len(checks)} self-check(s), want two or more"
    for c in checks:  # committed state: unanswered, and it says so
        shown = "".join("".join(o.get("data", {}).get("text/plain", "")) for o in c["outputs"])
        assert shown.startswith("Not answered yet"), f"{path.name}: check shows {shown[:80]!r}"
    number = int(path.name[:2])
    links = re.findall(r"\((\d\d)_[a-z0-9_]+\.ipynb\)", _src(cells[-1]))
    assert f"{number - 1:02d}" in links, f"{path.name}: no link back to notebook {number - 1:02d}"
    if path != NOTEBOOKS[-1]:
        assert f"{number + 1:02d}" in links, f"{path.name}: no link on to notebook {number + 1:02d}"


# --- one room per notebook: notebook, companion module, test file ------------------------------

COMPANIONS = sorted((ROOT / "course").glob("nb[0-9][0-9]_*.py"))
NOTEBOOK_TESTS = sorted((ROOT / "tests").glob("test_nb[0-9][0-9]_*.py"))


@pytest.mark.parametrize("path", TEACHING, ids=lambda p: p.name)
def test_every_teaching_notebook_has_its_companion_and_test_file(path):
    """notebooks/NN_topic.ipynb <-> course/nbNN_topic.py <-> tests/test_nbNN_topic.py."""
    companion = ROOT / "course" / f"nb{path.stem}.py"
    tests = ROOT / "tests" / f"test_nb{path.stem}.py"
    assert companion.exists(), f"{path.name}: its companion course/{companion.name} is missing"
    assert tests.exists(), f"{path.name}: its test file tests/{tests.name} is missing"
    first = _src(_code(path)[0])
    assert f"from course import nb{path.stem} as nb{path.stem[:2]}" in first, (
        f"{path.name}: the first code cell must import its companion as nb{path.stem[:2]}")
    assert "figures.use_course_style()" in first, (
        f"{path.name}: the first code cell must apply the figure style (figures.use_course_style())")
    others = {m.group(1) for c in _code(path) for m in re.finditer(r"\bcourse\.nb(\d\d)_", _src(c))}
    others |= {m.group(1) for c in _code(path)
               for m in re.finditer(r"from course import nb(\d\d)_", _src(c))}
    assert others <= {path.stem[:2]}, f"{path.name} uses another notebook's companion: {others}"


@pytest.mark.parametrize("path", COMPANIONS + NOTEBOOK_TESTS, ids=lambda p: p.name)
def test_every_companion_and_test_file_belongs_to_a_notebook(path):
    stem = path.stem.removeprefix("test_").removeprefix("nb")
    assert (ROOT / "notebooks" / f"{stem}.ipynb").exists(), (
        f"{path.relative_to(ROOT)} is named after notebooks/{stem}.ipynb, which does not exist")


def test_course_modules_change_nothing_on_import():
    """Importing the companions changes no matplotlib setting: only use_course_style() does."""
    modules = ["course." + p.stem for p in sorted((ROOT / "course").glob("*.py"))]
    code = ("import matplotlib; before = dict(matplotlib.rcParams)\n"
            f"for name in {modules!r}: __import__(name)\n"
            "changed = sorted(k for k, v in matplotlib.rcParams.items() if before[k] != v)\n"
            "assert not changed, changed\n"
            "from course import figures; figures.use_course_style()\n"
            "assert matplotlib.rcParams['figure.dpi'] == figures.COURSE_STYLE['figure.dpi']\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr[-2000:]
