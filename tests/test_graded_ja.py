"""The graded track in Japanese (issue 26): `python3 dev.py classroom assignments DIR --lang ja`.

What a student reads is Japanese (the headers, titles, tasks, the setup cell's comments, the stub
of a derivation's answer, the notes the grading adds); everything the grading runs or records is
the English folder's, byte for byte, so an answer gets the same points in either. These tests
are cheap: they compare the two folders the generator writes, call the broken-notebook hook of
the Japanese nbgrader_config.py directly, and run nbgrader's generate_assignment on one
assignment only (tests/test_graded.py's full autograde run, on the English folder, grades the
same cells). The catalog itself (locale/ja/LC_MESSAGES/graded.po: complete, up to date,
formulas and code kept) is checked in tests/test_translations.py.
"""

from __future__ import annotations

import io
import re
import shutil
import sys
import tokenize
import types
from pathlib import Path

import nbformat
import pytest
from required import require
from test_graded import _meta, _nbgrader, _nbgrader_bin, _secrets

ROOT = Path(__file__).resolve().parent.parent
from scripts import classroom_graded as graded  # noqa: E402  (ROOT first)
from scripts.graded_items import ASSIGNMENTS, DERIVE  # noqa: E402

JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")   # kana and kanji
ONE = "04_masking"   # the assignment nbgrader releases in Japanese


@pytest.fixture(scope="module")
def courses(tmp_path_factory):
    out = tmp_path_factory.mktemp("graded-ja")
    assert graded.main(str(out / "en")) == 0
    assert graded.main(str(out / "ja"), "ja") == 0
    return out / "en", out / "ja"


def _nb(course: Path, name: str):
    return nbformat.read(course / "source" / name / f"{name}.ipynb", as_version=4)


def _code_without_comments(source: str) -> list[tuple[int, str]]:
    return [(tok.type, tok.string) for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type != tokenize.COMMENT]


def test_students_read_japanese_and_the_grading_is_the_english_one(courses):
    en, ja = courses
    for a in ASSIGNMENTS:
        english, japanese = _nb(en, a.name), _nb(ja, a.name)
        nbformat.validate(japanese)
        assert japanese.metadata == english.metadata, a.name
        assert [c.get("id") for c in japanese.cells] == [c.get("id") for c in english.cells]
        derivations = {item.name for item in a.items if item.kind == DERIVE}
        for e, j in zip(english.cells, japanese.cells, strict=True):
            where = f"{a.name}: cell {e.id}"
            assert j.cell_type == e.cell_type and j.metadata == e.metadata, where  # grade_id, points
            if e.id == "setup":   # the comments translated, every other token as it was
                assert _code_without_comments(j.source) == _code_without_comments(e.source), where
                assert j.source.count("\n") == e.source.count("\n"), where
                for ce, cj in zip(graded.comments(e.source), graded.comments(j.source), strict=True):
                    assert cj == ce or JAPANESE.search(cj), f"{where}: {cj!r}"
            elif e.cell_type == "code" or e.id in derivations:   # solutions, tests, model answers
                assert j.source == e.source, where
            else:   # the header and each item's task
                assert JAPANESE.search(j.source), f"{where} has no Japanese: {j.source[:80]!r}"
                assert j.source != e.source, where
    assert _nb(ja, "01_qkv_projections").cells[0].source.startswith(
        "# 採点課題 01: クエリ・キー・バリューの射影\n\n全 3 問、9 点です")
    task = _nb(ja, "01_qkv_projections").cells[2].source
    assert task.startswith("### 問 1: 計算、自動採点 (2 点)\n\n") and "`asymmetry`" in task


def test_the_japanese_config_and_its_notes(courses):
    en, ja = courses
    config = (ja / "nbgrader_config.py").read_text(encoding="utf-8")
    compile(config, "nbgrader_config.py", "exec")
    english = (en / "nbgrader_config.py").read_text(encoding="utf-8")
    assert "c.ClearSolutions.text_stub = 'ここに答えを書いてください'" in config
    assert "TIMEOUT_TEXT = 'このセルは 20 秒を超えて実行されたため、止められました" in config
    assert f"TIMEOUT_TEXT = {graded.TIMEOUT_TEXT!r}" in english
    # the rest is the same program: nbgrader runs the same settings and hook in both folders
    strip = re.compile(r"^(TIMEOUT_TEXT|c\.ClearSolutions\.text_stub|UNREADABLE_TEXT) = .*?$|"
                       r"^(UNREADABLE_REASONS|FEEDBACK_TEXTS) = \{.*?\}$", re.M | re.S)
    assert strip.sub("", config) == strip.sub("", english)
    readme = (ja / "README.md").read_text(encoding="utf-8")
    assert "in Japanese (`--lang ja`)" in readme and "PRIVATE repository" in " ".join(readme.split())


def _config(course: Path, monkeypatch) -> dict:
    """What a course folder's nbgrader_config.py defines, run without nbgrader (in .venv): its
    two nbgrader preprocessors are stand-ins, nbconvert's are real."""
    from traitlets.config import Config

    stand_in = types.ModuleType("nbgrader.preprocessors")
    stand_in.ClearHiddenTests = stand_in.GetGrades = object
    monkeypatch.setitem(sys.modules, "nbgrader", types.ModuleType("nbgrader"))
    monkeypatch.setitem(sys.modules, "nbgrader.preprocessors", stand_in)
    c = Config()
    namespace = {"get_config": lambda: c}
    path = course / "nbgrader_config.py"
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)  # noqa: S102
    assert c.Autograde.pre_convert_hook is namespace["replace_unreadable"]
    return namespace


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_broken_notebook_gets_its_note_in_the_students_language(courses, tmp_path, capsys, lang,
                                                                  monkeypatch):
    course = courses[lang == "ja"]
    hook = _config(course, monkeypatch)["replace_unreadable"]
    root = tmp_path / "course"
    released = root / "release" / ONE / f"{ONE}.ipynb"   # stands in for generate_assignment's
    released.parent.mkdir(parents=True)
    shutil.copy(course / "source" / ONE / f"{ONE}.ipynb", released)
    broken = root / "submitted" / "kai" / ONE / f"{ONE}.ipynb"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(released.read_bytes()[:500])
    hook(ONE, "kai", [str(broken)])
    log = capsys.readouterr().err
    assert "not valid JSON" in log and "kept as" in log, log   # the teacher's log: English
    assert broken.with_name(broken.name + ".unreadable").is_file()
    note = nbformat.read(broken, as_version=4).cells[0]
    assert not _meta(note) and f"{ONE}.ipynb.unreadable" in note.source
    if lang == "ja":
        assert note.source.startswith("**採点のときに、あなたのノートブックを読み込めませんでした:** "
                                      "提出されたファイルは正しい JSON ではありません"), note.source
        assert not re.search(r"[A-Za-z]{4,}", note.source.replace(f"{ONE}.ipynb.unreadable", "")
                             .replace("JSON", "")), "English left in the note"
    else:
        assert note.source.startswith("**Your notebook could not be read when it was graded:** the "
                                      "file you submitted is not valid JSON")
    # a notebook nbformat cannot read for another reason: valid JSON, not a notebook
    broken.write_text('{"cells": 3}', encoding="utf-8")
    hook(ONE, "kai", [str(broken)])
    note = nbformat.read(broken, as_version=4).cells[0].source
    assert ("nbformat で読めるノートブックではありません" if lang == "ja" else
            "not a notebook nbformat can read") in note, note


def test_the_feedback_shows_each_failing_test_in_the_students_language(courses, monkeypatch):
    """ErrorLineOnly (generate_feedback) gives each error as its last line, a test's message in
    the folder's language; the graded notebook, the teacher's, keeps the English message."""
    ja = _config(courses[1], monkeypatch)
    assert _config(courses[0], monkeypatch)["FEEDBACK_TEXTS"] == {}
    items = [i for a in ASSIGNMENTS for i in a.items if i.kind != DERIVE]
    texts = ja["FEEDBACK_TEXTS"]
    assert set(texts) == {i.name for i in items}
    for item in items:
        assert set(texts[item.name]) == set(graded.assert_messages(item)), item.name
        assert all(JAPANESE.search(t) for t in texts[item.name].values()), item.name

    def shown(grade_id, ename, evalue):
        cell = nbformat.v4.new_code_cell("...", metadata={"nbgrader": {"grade_id": grade_id}})
        cell.outputs = [nbformat.v4.new_output("error", ename=ename, evalue=evalue,
                                               traceback=["Traceback ...", "  assert ..."])]
        cell, _ = ja["ErrorLineOnly"]().preprocess_cell(cell, {}, 0)
        return cell.outputs[0]

    out = shown("nb02_third_row", "AssertionError", "a_3 is not the third row of the weights")
    assert out.traceback == ["AssertionError: a_3 は重みの第 3 行ではありません"]
    assert out.evalue == "a_3 is not the third row of the weights", "the graded notebook's own"
    assert shown("nb01_asymmetry", "NameError", "name 'S' is not defined").traceback == [
        "NameError: name 'S' is not defined"]   # Python's own errors: as Python says them
    timeout = shown("nb04_batch_mask_answer", "CellTimeoutError", ja["TIMEOUT_TEXT"]).traceback
    assert timeout == ["CellTimeoutError: このセルは 20 秒を超えて実行されたため、止められました "
                       "(無限ループではありませんか?)"]


def _catalog_with(tmp_path, changes: dict) -> Path:
    """A copy of graded.po, each (context, English) of `changes` given that msgstr ("" or
    "fuzzy": keeps its translation, marked fuzzy)."""
    from scripts import translate

    catalog = translate.read_catalog(translate.graded_catalog_path("ja"))
    for (context, text), change in changes.items():
        message = catalog.get(text, context)
        if change == "fuzzy":
            message.flags.add("fuzzy")
        elif change is None:
            catalog.delete(text, context)
        else:
            message.string = change
    path = tmp_path / "graded.po"
    path.write_bytes(translate.po_bytes(catalog, markdown=True))
    return path


def test_an_untranslated_or_fuzzy_text_stops_the_japanese_course(tmp_path):
    items = {i.name: i for a in ASSIGNMENTS for i in a.items}
    changes = {("nb04_leaks", items["nb04_leaks"].task): "",
               ("nb09_longest_input tests", "float16 takes 2 bytes per score, not 8"): "fuzzy",
               ("nb07_merged_ffn", items["nb07_merged_ffn"].task): "fuzzy",
               ("12_rope_and_alibi", ASSIGNMENTS[11].title): None,
               (None, graded.UNREADABLE_JSON): ""}
    out = tmp_path / "course"
    with pytest.raises(graded.UntranslatedError) as e:
        graded.write_course(out, lang="ja", catalog=_catalog_with(tmp_path, changes))
    message = str(e.value)
    for where in ("nb04_leaks (untranslated)", "nb07_merged_ffn (fuzzy)",
                  "nb09_longest_input tests (fuzzy)",
                  "12_rope_and_alibi (untranslated)", "the generator's text (untranslated)"):
        assert where in message, message
    assert message.startswith("5 text(s)") and "python3 dev.py ja update" in message
    assert not out.exists(), "nothing is written, not even the config"
    with pytest.raises(graded.UntranslatedError, match="is missing"):
        graded.write_course(out, lang="ja", catalog=tmp_path / "nowhere.po")
    with pytest.raises(ValueError, match="no graded track in 'fr'"):
        graded.write_course(out, lang="fr")


def test_the_command_takes_lang(tmp_path, capsys):
    from scripts import classroom

    assert classroom.main(["assignments", str(tmp_path / "course"), "--lang", "ja"]) == 0
    assert "the students' texts in Japanese" in capsys.readouterr().out
    assert JAPANESE.search(_nb(tmp_path / "course", ONE).cells[0].source)
    with pytest.raises(SystemExit):
        classroom.main(["assignments", str(tmp_path / "fr"), "--lang", "fr"])


@pytest.mark.own_venv   # nbgrader runs in .venv-graded
def test_nbgrader_releases_the_japanese_assignment_without_answers(courses, tmp_path):
    """One generate_assignment: the Japanese folder with the English notebook of the same
    assignment beside the Japanese one (ONE_en.ipynb), so both are released by the same run."""
    bin_dir = _nbgrader_bin()
    require(None if bin_dir else "nbgrader is not installed: python3 dev.py setup --graded",
            "REQUIRE_NBGRADER", "the Japanese release cannot be checked")
    en, ja = courses
    course = tmp_path / "course"
    shutil.copytree(ja, course)
    shutil.copy(en / "source" / ONE / f"{ONE}.ipynb", course / "source" / ONE / f"{ONE}_en.ipynb")
    _nbgrader(bin_dir, course, "generate_assignment", ONE)
    release = course / "release" / ONE
    ja_nb = nbformat.read(release / f"{ONE}.ipynb", as_version=4)
    en_nb = nbformat.read(release / f"{ONE}_en.ipynb", as_version=4)
    text = "\n".join(c.source for c in ja_nb.cells)
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", "Model answer", "Rubric"):
        assert marker not in text, f"{marker!r} released"
    source = _nb(ja, ONE)
    secrets = _secrets(source)
    assert len(secrets) >= 10 and not sorted(s for s in secrets if s in text), \
        "the Japanese release holds lines of the teacher's source"
    answer = next(c for c in ja_nb.cells if _meta(c).get("grade_id") == "nb04_fully_masked")
    assert answer.source == "ここに答えを書いてください", answer.source
    assert "raise NotImplementedError()" in text
    for e, j in zip(en_nb.cells, ja_nb.cells, strict=True):   # the student's code: the English
        same = {k: v for k, v in _meta(e).items() if k != "checksum"}
        assert {k: v for k, v in _meta(j).items() if k != "checksum"} == same, e.id
        if e.cell_type == "code" and e.id != "setup":   # and what nbgrader records of it
            assert j.source == e.source and _meta(j).get("checksum") == _meta(e).get("checksum")
        if e.cell_type == "markdown" and e.id != "nb04_fully_masked":
            assert JAPANESE.search(j.source), e.id
