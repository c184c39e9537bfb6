"""The classroom edition: help on request, the instructor key, the teacher's guide.

Every self-check cell names its question on its "# Stuck?" line; every question has a hint and a
worked solution; nothing in the committed notebooks shows them; the instructor key, built from the
same registry, runs with every check Correct; and the committed teacher's guide is exactly what
its generator writes from the notebooks, their run times and checks.MISTAKES.
"""

import importlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from course import checks

ROOT = Path(__file__).resolve().parent.parent
from scripts import classroom, classroom_key, regenerate  # noqa: E402  (ROOT first)
NOTEBOOKS = classroom.notebook_paths()


def _read(path):
    return nbformat.read(path, as_version=4)


def _who(number):
    """How notebook `number` calls hint/solution: its companion, or checks (00 has none)."""
    return f"nb{number}" if any((ROOT / "course").glob(f"nb{number}_*.py")) else "checks"


# --- one question per check cell, each with a hint and a worked solution ---------------------

@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_check_cell_names_a_registered_question_of_its_notebook(path):
    nb, number = _read(path), path.name[:2]
    cells = classroom.check_cells(nb)
    assert cells, f"{path.name} has no self-check cell"
    for i, key in cells:
        source = nb.cells[i].source
        assert key, (f"{path.name}: this check cell has no line '# Stuck? ... "
                     f'{_who(number)}.hint("{number}.name") ...\':\n{source}')
        assert key in checks.QUESTIONS, f"{path.name}: {key!r} is not in checks.QUESTIONS"
        assert key.startswith(f"{number}."), f"{path.name}: {key!r} belongs to another notebook"
        hint, solution = classroom.STUCK.search(source), classroom.STUCK_SOLUTION.search(source)
        assert hint.group("who") == _who(number), (
            f"{path.name}: call {_who(number)}.hint, the name this notebook has, not "
            f"{hint.group('who')}.hint")
        assert solution and solution.group("key") == key and solution.group("who") == _who(number), (
            f"{path.name}: the line after '# Stuck?' offers {_who(number)}.solution({key!r}):\n"
            f"{source}")
        last = source.splitlines()[-2:]
        assert classroom.STUCK.match(last[0]) and classroom.STUCK_SOLUTION.match(last[1]), (
            f"{path.name}: the two '# Stuck?' comment lines end the check cell:\n{source}")


def test_every_question_belongs_to_exactly_one_check_cell():
    named = [key for p in NOTEBOOKS for _, key in classroom.check_cells(_read(p))]
    assert len(named) == len(set(named)), f"a question is named by two check cells: {named}"
    assert sorted(named) == sorted(checks.QUESTIONS), (
        f"registered but asked by no check cell: {sorted(set(checks.QUESTIONS) - set(named))}")


@pytest.mark.parametrize("key", sorted(checks.QUESTIONS))
def test_every_question_has_a_hint_and_a_worked_solution(key):
    q = checks.QUESTIONS[key]
    assert re.fullmatch(r"\d\d\.[A-Za-z_]\w*", key), f"{key!r}: keys are 'NN.name'"
    for field in ("hint", "solution", "why"):
        assert getattr(q, field).strip(), f"{key}: no {field}"
    assert classroom.solution_is_well_formed(q.solution), (
        f"{key}: a solution is the expression that replaces the `...` of `answer = ...`, or lines "
        f"ending with `answer = <expression>`: {q.solution!r}")
    solution = "".join(q.solution.split())
    if len(solution) > 3:  # a bare number like 4 may well occur in a hint
        assert solution not in "".join(q.hint.split()), f"{key}: the hint gives the answer away"
    for text in (q.hint, q.why):  # sentences: a capital first letter unless it starts with a symbol
        assert checks.sentence(text) == text and text.rstrip().endswith((".", "?", ")")), (
            f"{key}: {text!r}")


def test_the_registry_of_questions_is_read_only():
    with pytest.raises(TypeError):
        checks.QUESTIONS["00.new"] = checks.Question("hint", "1", "why")  # type: ignore[index]


@pytest.mark.parametrize("number", sorted({p.name[:2] for p in NOTEBOOKS if _who(p.name[:2]) != "checks"}))
def test_every_companion_offers_hint_and_solution(number):
    companion = importlib.import_module(f"course.{next((ROOT / 'course').glob(f'nb{number}_*.py')).stem}")
    assert companion.hint is checks.hint and companion.solution is checks.solution


def test_a_hint_does_not_give_the_answer_and_names_the_next_step(capsys):
    checks.hint("04.causal_mask")
    out = capsys.readouterr().out
    assert out.startswith("Hint (04.causal_mask): ")
    assert 'nb04.solution("04.causal_mask")' in out
    assert checks.QUESTIONS["04.causal_mask"].solution not in out
    checks.hint("00.weights")
    assert 'checks.solution("00.weights")' in capsys.readouterr().out


def test_a_solution_shows_the_answer_line_and_why(capsys):
    checks.solution("05.multi_head")
    out = capsys.readouterr().out
    assert out.startswith("Worked solution (05.multi_head)")
    assert "    answer = ac.merge_heads(" in out and "\n    )[0]) @ P.W_O\n" in out
    assert "X_q @ P.W_Q is (n, h*d_k)" in out and all(len(x) <= 100 for x in out.splitlines())


def test_an_unknown_question_is_explained_not_raised(capsys):
    checks.hint("04.no_such_question")
    out = capsys.readouterr().out
    assert "no self-check question '04.no_such_question'" in out and "04.causal_mask" in out
    checks.solution("nonsense")
    assert 'Keys look like "04.causal_mask"' in capsys.readouterr().out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_committed_notebooks_show_no_hint_or_solution(path):
    """Learners try first: help is printed only when asked for, never stored in an output."""
    shown = json.dumps([c.get("outputs", []) for c in _read(path).cells], ensure_ascii=False)
    assert "Hint (" not in shown and "Worked solution (" not in shown
    for key in (k for k in checks.QUESTIONS if k.startswith(path.name[:2])):
        assert checks.QUESTIONS[key].why[:60] not in shown, f"{path.name} shows the solution of {key}"


# --- the instructor key ------------------------------------------------------------------------

def test_the_key_changes_only_the_check_cells_and_explains_each_solution():
    nb, key = _read(NOTEBOOKS[4]), classroom.key_notebook(NOTEBOOKS[4])
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    key_code = [c.source for c in key.cells if c.cell_type == "code"]
    assert len(code) == len(key_code)
    for before, after in zip(code, key_code, strict=True):
        if "answer = ..." not in before:
            assert before == after
        else:
            assert "answer = ..." not in after and "# Stuck?" not in after
            assert after.startswith("# instructor key: the worked solution of 04.")
    added = len(key.cells) - len(nb.cells)
    assert added == len(classroom.check_cells(nb)), "one explanation cell after each check cell"


def test_the_instructor_key_runs_with_every_check_correct(tmp_path):
    """The honest test: build the key with the command a teacher runs, execute every notebook."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, ROOT / "scripts" / "classroom.py", "key",
                           "--out", tmp_path], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    for path in NOTEBOOKS:
        key = _read(tmp_path / path.name)
        verdicts = classroom.verdicts(key)
        assert len(verdicts) == len(classroom.check_cells(_read(path)))
        for name, shown in verdicts:
            assert shown.startswith("Correct"), f"{path.name} {name}: {shown!r}"
        assert not any("answer = ..." in c.source for c in key.cells if c.cell_type == "code")
    print(f"instructor key of {len(NOTEBOOKS)} notebooks: {time.perf_counter() - start:.1f} s")


# --- the teacher's guide -------------------------------------------------------------------------

def test_the_committed_guide_is_a_fresh_generation():
    committed = classroom.GUIDE.read_text(encoding="utf-8")
    assert committed == classroom.guide_text(), (
        "docs/teachers-guide.md is out of date: run `python3 dev.py classroom guide` "
        "(`python3 dev.py regenerate` also rewrites it)")


def test_every_notebook_has_one_measured_run_time():
    times = json.loads(classroom.RUN_TIMES.read_text(encoding="utf-8"))
    japanese = sorted(p.stem for p in (classroom.ROOT / "notebooks" / "ja").glob("[0-9][0-9]_*.ipynb"))
    assert sorted(times) == sorted([p.stem for p in NOTEBOOKS] + [f"ja/{s}" for s in japanese]), (
        "docs/run-times.json: one entry per notebook, English and Japanese")
    for stem, t in times.items():
        assert t["seconds"] > 0 and "cores" in t["machine"] and re.fullmatch(r"\d{4}-\d\d-\d\d", t["date"]), stem


def test_the_misconceptions_are_the_registry_grouped_by_notebook():
    guide = classroom.GUIDE.read_text(encoding="utf-8")
    parts = re.split(r"^### ", guide.split("## Notebook by notebook", 1)[1], flags=re.M)[1:]
    by_number = {part[:2]: part for part in parts}
    for key, m in checks.MISTAKES.items():
        line = (f"- **{m.label.format(**classroom.EXAMPLE)}**: "
                f"{checks.sentence(m.why.format(**classroom.EXAMPLE))}\n")
        assert line in by_number[m.notebook], f"{key} is not listed under {m.notebook}"
        others = [n for n, part in by_number.items() if n != m.notebook and line in part]
        assert not others, f"{key} is listed under {others} too"


def _course_copy(tmp_path, monkeypatch):
    """A copy of notebooks/ the generator reads instead of the real one."""
    copy = tmp_path / "notebooks"
    shutil.copytree(classroom.NOTEBOOKS, copy)
    monkeypatch.setattr(classroom_key, "NOTEBOOKS", copy)  # where notebook_paths() looks
    return copy


def _edit(path, change):
    nb = _read(path)
    change(nb)
    nbformat.write(nb, path)


def test_the_guide_fails_loudly_for_what_a_notebook_lacks(tmp_path, monkeypatch):
    copy = _course_copy(tmp_path, monkeypatch)
    _edit(copy / "04_masking.ipynb", lambda nb: nb.metadata.teaching.pop("discussion"))
    _edit(copy / "05_multi_head_attention.ipynb",
          lambda nb: nb.metadata.teaching.__setitem__("in_class", ["1", "99"]))
    with pytest.raises(classroom.GuideError) as error:
        classroom.guide_text()
    assert "04_masking.ipynb: teaching.discussion needs two or more" in str(error.value)
    assert "05_multi_head_attention.ipynb: teaching.in_class names no section" in str(error.value)
    assert "'99'" in str(error.value)


def test_a_new_notebook_is_picked_up_and_must_bring_its_teaching_notes(tmp_path, monkeypatch):
    copy = _course_copy(tmp_path, monkeypatch)
    new = copy / "10_new_topic.ipynb"
    shutil.copy(copy / "09_cost_of_attention.ipynb", new)
    _edit(new, lambda nb: nb.metadata.pop("teaching"))
    with pytest.raises(classroom.GuideError) as error:
        classroom.guide_text()
    message = str(error.value)
    assert "10_new_topic.ipynb: no `teaching` metadata" in message
    assert "10_new_topic.ipynb: no measured run time" in message


def test_a_session_that_does_not_fit_in_90_minutes_fails(tmp_path, monkeypatch):
    copy = _course_copy(tmp_path, monkeypatch)
    every = [s.id for s in classroom.sections(_read(copy / "09_cost_of_attention.ipynb")) if not s.frame]
    _edit(copy / "09_cost_of_attention.ipynb",
          lambda nb: nb.metadata.teaching.__setitem__("in_class", every))
    with pytest.raises(classroom.GuideError, match=r"session 3 plans \d+ min of class time"):
        classroom.guide_text()


def test_a_notebook_can_be_left_to_self_study(tmp_path, monkeypatch):
    copy = _course_copy(tmp_path, monkeypatch)
    _edit(copy / "09_cost_of_attention.ipynb",
          lambda nb: nb.metadata.teaching.__setitem__("session", "self-study"))
    guide = classroom.guide_text()
    beyond = guide.split("### Beyond the three sessions", 1)[1].split("## Notebook by notebook")[0]
    assert "- 09 The cost of attention (about " in beyond
    assert "### Session 3: notebooks 07, 08\n" in guide


def test_regenerate_records_one_run_time_per_notebook(tmp_path, monkeypatch):
    monkeypatch.setattr(regenerate, "RUN_TIMES", tmp_path / "docs" / "run-times.json")
    regenerate.record_run_time(Path("notebooks/04_masking.ipynb"), 3.14159, 0.5)
    regenerate.record_run_time(Path("notebooks/05_multi_head_attention.ipynb"), 2.0, None)
    regenerate.record_run_time(Path("notebooks/04_masking.ipynb"), 2.71828, 1.25)
    times = json.loads((tmp_path / "docs" / "run-times.json").read_text(encoding="utf-8"))
    assert sorted(times) == ["04_masking", "05_multi_head_attention"]
    assert times["04_masking"]["seconds"] == 2.7 and times["04_masking"]["load_average"] == 1.2
    assert times["05_multi_head_attention"]["load_average"] is None
    assert "cores" in times["04_masking"]["machine"]
