"""The Japanese edition: complete, in step with the English source, and built, never edited.

For every notebook of the edition (scripts/translate.py, EDITION["ja"]) these fail when a
markdown cell of the English notebook has no translation or a fuzzy one (its English changed
after it was translated), when notebooks/ja/NN_topic.ipynb is not what the English notebook and
the catalog make now, or when a translation lost a formula, a piece of code or a link. For the
modules they fail when a text marked with _() has no up-to-date translation in
locale/ja/LC_MESSAGES/course.po, or course.po is not what a kernel compiles and reads. Strict nbval
executes notebooks/ja/*.ipynb like the English notebooks and compares their outputs.

The fix is always the same command: `python3 dev.py ja` (docs/japanese-edition.md).
"""

from __future__ import annotations

import json
import os
import re
import string
from pathlib import Path

import nbformat
import pytest

from course import i18n

ROOT = Path(__file__).resolve().parents[1]
from scripts import translate  # noqa: E402

LANG = "ja"
EDITION = list(translate.EDITION[LANG])
ENGLISH = translate.english_notebooks()
FIX = "run `python3 dev.py ja` (docs/japanese-edition.md)"


def _catalog(name: str):
    return translate.read_catalog(translate.notebook_catalog_path(name, LANG))


def _translated(catalog):
    return [m for m in catalog if m.id and m.string and not m.fuzzy]


# --- what is still to do -------------------------------------------------------------------

def test_every_notebook_is_in_the_japanese_edition():
    """A notebook comes with its Japanese edition in the same change: fails naming the rest."""
    todo = [name for name in ENGLISH if name not in EDITION]
    assert not todo, (f"{len(todo)} of {len(ENGLISH)} notebooks are not in the Japanese edition "
                      f"(EDITION['ja'] in scripts/translate.py): {', '.join(todo)}")


def test_every_course_module_marks_its_texts():
    """Every module a learner sees text from uses _(): fails naming the rest."""
    # live.py shows no text of its own; registry.py's errors are for whoever adds an entry;
    # alt_text.py's one word is in both languages in it (FIGURE): it writes the alt of a page in
    # the notebook's language, not in the language the process runs in, which _() follows;
    # colour_check.py speaks only to the test run (stderr under nbval), never to a learner
    nothing_to_translate = {"__init__", "i18n", "live", "registry", "alt_text", "colour_check",
                            "common"}   # (describe/common.py: how an axes is read, no words)
    todo = [p.relative_to(ROOT / "course").as_posix()
            for p in sorted([*(ROOT / "course").glob("*.py"), *(ROOT / "course").glob("*/*.py")])
            if p.stem not in nothing_to_translate
            and "from course.i18n import" not in p.read_text(encoding="utf-8")]
    assert not todo, f"modules whose texts are not marked with _(): {', '.join(todo)}"


def test_the_edition_is_what_is_listed():
    assert set(EDITION) <= set(ENGLISH), (
        f"EDITION['ja'] names notebooks that do not exist: {sorted(set(EDITION) - set(ENGLISH))}")
    built = sorted(p.stem for p in (ROOT / "notebooks" / LANG).glob("*.ipynb"))
    assert built == sorted(EDITION), f"notebooks/ja/ holds {built}, EDITION['ja'] says {EDITION}: {FIX}"


# --- notebooks ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", EDITION)
def test_every_markdown_cell_has_an_up_to_date_translation(name):
    built = translate.build_notebook(name, LANG)
    lines = [f"cell {u.index} ({u.cell_id}): {'fuzzy, the English changed' if u.fuzzy else 'no translation'}"
             f": {u.first_line!r}" for u in built.untranslated]
    assert not lines, (
        f"notebooks/{name}.ipynb has {len(lines)} markdown cell(s) without an up-to-date "
        f"translation in {translate.notebook_catalog_path(name, LANG).relative_to(ROOT)}:\n"
        + "\n".join(lines) + f"\nTranslate them (remove `#, fuzzy` when done), then {FIX}")


@pytest.mark.parametrize("name", EDITION)
def test_japanese_notebook_is_what_the_build_makes(name):
    reason = translate.stale_reason(name, LANG)
    assert reason is None, f"{reason}: the Japanese notebooks are built, never edited; {FIX}"


@pytest.mark.parametrize("name", EDITION)
def test_catalog_lists_exactly_the_cells_of_the_english_notebook(name):
    template = {m.id for m in translate.notebook_template(name) if m.id}
    have = {m.id for m in _catalog(name) if m.id}
    assert have == template, (
        f"{translate.notebook_catalog_path(name, LANG).relative_to(ROOT)} is not up to date with "
        f"notebooks/{name}.ipynb ({len(template - have)} new, {len(have - template)} gone): {FIX}")


@pytest.mark.parametrize("name", EDITION)
def test_japanese_notebook_was_executed_in_one_fresh_kernel(name):
    """Strict nbval passes a never-executed notebook silently; regenerate leaves counts 1..N."""
    nb = json.loads(translate.translated_notebook_path(name, LANG).read_text(encoding="utf-8"))
    counts = [c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code"]
    assert counts == list(range(1, len(counts) + 1)), f"execution counts {counts}: {FIX}"
    assert "widgets" not in nb["metadata"], f"notebooks/ja/{name}.ipynb stores widget state"


_MATH = re.compile(r"\$\$.+?\$\$|\$[^$]+\$", re.S)
_CODE = re.compile(r"`[^`\n]+`")
_FENCED = re.compile(r"^\s*```.*?^\s*```", re.S | re.M)  # a quoted program output is not prose
_LINK = re.compile(r"\]\(([^)\s]+)\)")
# The words of a formula (\\text{...}) are prose: translated, and in Japanese word order they
# often move ("for all d_k" becomes "d_k について"), with the punctuation around them. What must
# stay the same is the mathematics, so a formula is compared without its \\text{...} parts.
_TEXT_IN_MATH = re.compile(r"\\text\{[^{}]*\}")


def _math(text: str) -> set[str]:
    """Formulas, whitespace-insensitive, without their words (\\text{...}: translated prose)."""
    bare = (re.sub(r"\s+", "", _TEXT_IN_MATH.sub("", m)) for m in _MATH.findall(text))
    return {re.sub(r"[.,;:]+(\$+)$", r"\1", f) for f in bare}  # a sentence's full stop aside


def _headings(text: str) -> list[int]:
    return [len(line) - len(line.lstrip("#")) for line in text.splitlines()
            if re.match(r"#{1,6} ", line)]


@pytest.mark.parametrize("name", EDITION)
def test_translations_keep_the_formulas_code_links_and_headings(name):
    """LaTeX unchanged (words in \\text{} aside), every code span and link kept, same headings."""
    problems = []
    for m in _translated(_catalog(name)):
        cell = m.id.splitlines()[0][:60]
        if _math(m.id) != _math(m.string):
            problems.append(f"{cell!r}: formulas differ: only in English "
                            f"{sorted(_math(m.id) - _math(m.string))}, only in Japanese "
                            f"{sorted(_math(m.string) - _math(m.id))}")
        lost = set(_CODE.findall(m.id)) - set(_CODE.findall(m.string))
        if lost:
            problems.append(f"{cell!r}: code lost in the translation: {sorted(lost)}")
        if set(_LINK.findall(m.id)) != set(_LINK.findall(m.string)):
            problems.append(f"{cell!r}: links differ: {sorted(set(_LINK.findall(m.id)))} vs "
                            f"{sorted(set(_LINK.findall(m.string)))}")
        if _headings(m.id) != _headings(m.string):
            problems.append(f"{cell!r}: headings {_headings(m.id)} became {_headings(m.string)}")
    assert not problems, "\n".join(problems)


# Latin words a Japanese sentence may keep: names, and the labels the code prints in English.
_ALLOWED_LATIN = re.compile(r"attention-notebooks|Transformer|PyTorch|JupyterLab|numpy|Python|Hugging Face|"
                            r"FFN|KV|True|False|assert")
# A citation keeps its authors and the paper's title as published: "Vaswani et al., 2017,
# *Attention Is All You Need*", or with one author "Shazeer, 2019, *Fast Transformer Decoding: ...*".
_CITATION = re.compile(r"[A-Z][A-Za-z-]+(?: et al\.)?, \d{4}(?:, \*[^*]+\*)?")
# A key term's English name in parentheses after the Japanese one, at its first use (the house
# style): "スケールド・ドットプロダクト・アテンション (scaled dot-product attention)"; at most five words,
# Beside another note in the same parentheses too: "(非数、not a number)"; and a published title
# in italics: "*Attention Is All You Need*".
_GLOSS = re.compile(r"(?<=[(、])(?:[A-Za-z][A-Za-z'-]*)(?: [A-Za-z][A-Za-z'-]*){0,4}(?=[)、。])"
                    r"|\*[A-Z][A-Za-z'-]*(?: [A-Za-z][A-Za-z'-]*)*\*")
_WORD = r"[A-Za-z]+(?:-[A-Za-z]+)*"
_LATIN_RUN = re.compile(rf"{_WORD}(?: +{_WORD}){{2,}}")   # three or more words in a row


def english_left(text: str) -> list[str]:
    """Runs of three or more Latin words in the prose (code, math, links and names removed)."""
    prose = _CODE.sub(" ", _MATH.sub(" ", _FENCED.sub(" ", text)))
    prose = _LINK.sub("]", prose)
    prose = re.sub(r"<[^>]+>", " ", prose)
    prose = _CITATION.sub(" ", prose)
    prose = _GLOSS.sub(" ", prose)
    prose = _ALLOWED_LATIN.sub(" ", prose)
    return _LATIN_RUN.findall(prose)


@pytest.mark.parametrize("name", EDITION)
def test_no_english_sentences_left_in_the_prose(name):
    left = {m.id.splitlines()[0][:60]: english_left(m.string) for m in _translated(_catalog(name))}
    left = {cell: runs for cell, runs in left.items() if runs}
    assert not left, f"English left in the Japanese prose of {name}: {left}"


# --- module texts ---------------------------------------------------------------------------

def test_every_module_text_has_an_up_to_date_translation():
    missing, fuzzy = translate.module_status(LANG)
    assert not (missing or fuzzy), (
        f"{translate.module_catalog_path(LANG).relative_to(ROOT)}: {len(missing)} text(s) of the "
        f"modules untranslated, {len(fuzzy)} fuzzy (changed after they were translated):\n"
        + "\n".join(repr(t[:100]) for t in missing + fuzzy)
        + f"\nRun `python3 dev.py ja update`, translate them, then {FIX}")


def test_module_catalog_lists_exactly_the_marked_texts():
    template = {(m.id, m.context) for m in translate.module_template() if m.id}
    catalog = translate.read_catalog(translate.module_catalog_path(LANG))
    have = {(m.id, m.context) for m in catalog if m.id}
    assert have == template, (f"course.po is not up to date with the modules ({len(template - have)}"
                              f" new, {len(have - template)} gone): {FIX}")


def test_updating_the_catalogs_again_changes_nothing():
    """`dev.py ja update` on catalogs that are up to date writes the bytes they already have: it
    used to drop the first line of seven stale `# | msgid` comments in course.po on every run."""
    path = translate.module_catalog_path(LANG)
    again = translate.po_bytes(translate.updated(path, translate.module_template(), LANG,
                                                 "messages of the course modules"))
    assert again == path.read_bytes(), f"{path.relative_to(ROOT)} changes when updated again"
    for name in EDITION:
        path = translate.notebook_catalog_path(name, LANG)
        again = translate.po_bytes(translate.updated(path, translate.notebook_template(name), LANG,
                                                     f"notebook {name}"), markdown=True)
        assert again == path.read_bytes(), f"{path.relative_to(ROOT)} changes when updated again"


def test_a_fuzzy_entry_keeps_its_old_english_through_a_write_and_a_read(tmp_path):
    """`#| msgid` (the English a fuzzy translation was made for) survives, over several lines."""
    from babel.messages.catalog import Catalog

    catalog = Catalog(locale=LANG)
    old = "a long old English text " * 6
    catalog.add("the new English text", "訳", flags={"fuzzy"}, previous_id=[old])
    path = tmp_path / "x.po"
    path.write_bytes(translate.po_bytes(catalog))
    again = translate.read_catalog(path).get("the new English text")
    assert again.fuzzy and again.previous_id == [old] and not again.user_comments
    assert translate.po_bytes(translate.read_catalog(path)) == path.read_bytes()


def _copy_of_the_catalog(tmp_path, monkeypatch) -> Path:
    """locale/ja/LC_MESSAGES/course.po alone in a folder of its own, as a fresh clone has it."""
    po = tmp_path / LANG / "LC_MESSAGES" / "course.po"
    po.parent.mkdir(parents=True)
    po.write_bytes(i18n.catalog_path(LANG).read_bytes())
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    return po


def _japanese(text: str) -> str:
    with i18n.language_as(LANG):
        return i18n._(text)


def test_a_fresh_clone_compiles_its_catalog_on_first_use(tmp_path, monkeypatch):
    """No course.mo in the repository: the first use_language("ja") compiles course.po beside
    itself, and what the modules then say is what course.po says."""
    po = _copy_of_the_catalog(tmp_path, monkeypatch)
    catalog = translate.read_catalog(po)
    wanted = {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy
              and isinstance(m.id, str) and not m.context}
    assert len(wanted) > 500
    assert not po.with_suffix(".mo").exists()
    with i18n.language_as(LANG):
        said = {msgid: i18n._(msgid) for msgid in wanted}
    assert said == wanted
    assert po.with_suffix(".mo").exists()
    assert sorted(p.name for p in po.parent.iterdir()) == ["course.mo", "course.po"]  # no temporary left


def test_a_changed_catalog_is_compiled_again(tmp_path, monkeypatch):
    """course.po newer than course.mo (a pull, a translator's fix): the next kernel compiles it."""
    po = _copy_of_the_catalog(tmp_path, monkeypatch)
    msgid = "attention weights A"
    before = _japanese(msgid)
    assert before != msgid
    mo_time = po.with_suffix(".mo").stat().st_mtime_ns
    po.write_text(po.read_text(encoding="utf-8").replace(f'msgstr "{before}"', 'msgstr "重み A (新)"', 1),
                  encoding="utf-8")
    os.utime(po, ns=(mo_time + 10**9, mo_time + 10**9))
    assert _japanese(msgid) == "重み A (新)"


def test_a_read_only_course_folder_still_speaks_japanese(tmp_path, monkeypatch):
    """Where course.mo cannot be written, the compiled catalog serves from memory."""
    po = _copy_of_the_catalog(tmp_path, monkeypatch)

    def refuse(path, data):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(i18n, "_write_atomically", refuse)
    assert _japanese("attention weights A") != "attention weights A"
    assert not po.with_suffix(".mo").exists()


def test_a_missing_catalog_is_an_error_not_english(tmp_path, monkeypatch):
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match="ja catalog"):
        i18n.use_language(LANG)
    assert i18n.language() == "en"


def test_every_registry_text_is_marked_for_translation():
    """A mistake or question added without N_() around its texts would stay English in Japanese."""
    from course import checks

    marked = {m.id for m in translate.module_template() if m.id}
    texts = ([t for m in checks.MISTAKES.values() for t in (m.label, m.why)]
             + [t for q in checks.QUESTIONS.values() for t in (q.hint, q.why)])
    assert [t for t in texts if t not in marked] == []


def _fields(text: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}


def test_module_translations_keep_the_format_fields():
    """A translation must fill in the same {fields}, or the message raises or loses a number."""
    catalog = translate.read_catalog(translate.module_catalog_path(LANG))
    bad = [(m.id, m.string) for m in catalog if m.id and m.string
           and _fields(m.id) != _fields(m.string)]
    assert not bad, f"format fields differ: {bad}"


# --- the switch itself ----------------------------------------------------------------------

def test_english_until_asked_and_japanese_after():
    assert i18n.language() == "en"
    assert i18n._("attention weights A") == "attention weights A"
    with i18n.language_as("ja"):
        assert i18n.language() == "ja"
        assert i18n._("attention weights A") == "注意重み A"
        assert i18n._("a text nobody translated") == "a text nobody translated"
    assert i18n._("attention weights A") == "attention weights A"


def test_figure_labels_follow_the_language():
    import numpy as np

    from course import figures

    with i18n.language_as("ja"):
        fig, _ = figures.attention_heatmap(np.full((2, 2), 0.5))
    ax = fig.axes[0]
    assert (ax.get_title(), ax.get_xlabel()) == ("注意重み A", "キーの位置 j")


def test_verdicts_hints_and_solutions_follow_the_language(capsys):
    """A named mistake, a hint and a worked solution come out in Japanese inside language_as("ja"),
    their {placeholders} filled after the translation, and in English outside it."""
    from course import checks

    def verdict():  # 2.0 is what this registered mistake gives here; its why has {d_k}, {width}
        return checks.check_value(2.0, 1.0, "x", {"mha_scaled_by_h_d_k": 2.0},
                                  context={"d_k": 4, "width": 16}).message

    def help_shown():
        checks.hint("04.causal_mask")
        checks.solution("04.causal_mask")
        return capsys.readouterr().out

    with i18n.language_as(LANG):
        ja_verdict, ja_help = verdict(), help_shown()
    en_verdict, en_help = verdict(), help_shown()

    assert ja_verdict == ("不正解: これは典型的な間違い「各ヘッドを sqrt(h*d_k) でスケーリングすること」"
                          "です。各ヘッドが比べるのは幅 d_k = 4 のクエリとキーなので、各ヘッドはスコアを "
                          "sqrt(h*d_k) = sqrt(16) ではなく、sqrt(d_k) = sqrt(4) で割ります。")
    assert en_verdict == ('Not quite: this is the classic mistake "scaling every head by '
                          'sqrt(h*d_k)". Each head compares queries and keys of width d_k = 4, so '
                          "each head divides its scores by sqrt(d_k) = sqrt(4), not by "
                          "sqrt(h*d_k) = sqrt(16).")
    assert ja_help.startswith("ヒント (04.causal_mask): クエリ i が見てよいのはキー j <= i です。")
    assert 'nb04.solution("04.causal_mask") で解答例を表示できます。' in ja_help
    assert "解答例 (04.causal_mask): 確認問題のセルに書くコード" in ja_help
    solution_code = "    answer = " + checks.QUESTIONS["04.causal_mask"].solution
    assert solution_code in ja_help.splitlines() and solution_code in en_help.splitlines()
    assert "対角線より真に上" in ja_help and "{" not in ja_help
    assert en_help.startswith("Hint (04.causal_mask): Query i may see the keys j <= i.")
    assert "Worked solution (04.causal_mask)" in en_help and en_help.isascii()


def test_unknown_language_is_refused():
    with pytest.raises(ValueError, match="no course catalog"):
        i18n.use_language("fr")
    assert i18n.language() == "en"


def test_switch_goes_after_the_imports_of_the_first_code_cell():
    source = "import numpy as np\n\nfrom course import checks\n\nnp.set_printoptions(precision=4)"
    assert translate.switch_language(source, LANG).splitlines() == [
        "import numpy as np", "", "from course import checks", "from course import i18n", "",
        "np.set_printoptions(precision=4)", translate.SWITCH_CALL[LANG]]


def test_links_to_notebooks_outside_the_edition_go_to_the_english_ones():
    outside = next((n for n in ENGLISH if n not in EDITION), None)
    text = f"[a]({EDITION[0]}.ipynb) and [b]({outside}.ipynb#part)"
    want = f"[a]({EDITION[0]}.ipynb) and [b](../{outside}.ipynb#part)" if outside else text
    assert translate._links_outside_edition(text, LANG) == want


# --- texts the notebooks pass to the modules ---------------------------------------------------

def _texts_passed_to_the_course(name: str) -> set[str]:
    """String constants with a space that notebook `name`'s code passes to a course module's
    function (nbNN.*, figures.*): as arguments, keywords, or keys of a dict argument."""
    import ast
    nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    found = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        code = "\n".join(line for line in cell.source.splitlines() if not line.startswith(("%", "!")))
        for call in (n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call)):
            owner = getattr(call.func, "value", None)
            if not (isinstance(owner, ast.Name) and re.fullmatch(r"nb\d\d|figures", owner.id)):
                continue
            if call.func.attr in {"hint", "solution"} or call.func.attr.startswith("check"):
                continue  # question keys and answers, not texts shown in a figure
            values = [*call.args, *(k.value for k in call.keywords)]
            values += [k for v in values if isinstance(v, ast.Dict) for k in v.keys]
            values += [e for v in values if isinstance(v, (ast.List, ast.Tuple)) for e in v.elts]
            found |= {v.value for v in values if isinstance(v, ast.Constant)
                      and isinstance(v.value, str) and " " in v.value}
    return found


@pytest.mark.parametrize("name", ENGLISH)
def test_texts_a_notebook_passes_to_the_modules_are_in_the_catalog(name):
    """A title a notebook's code gives a course function is shown with i18n.shown, so it must be a
    msgid (marked with N_() in the companion's NOTEBOOK_TITLES), or the Japanese figure shows it
    in English."""
    catalog = translate.read_catalog(translate.module_catalog_path(LANG))
    missing = sorted(t for t in _texts_passed_to_the_course(name) if not translate.translation(catalog, t))
    assert not missing, (f"notebooks/{name}.ipynb passes texts to the course modules that have no "
                         f"translation: {missing}; mark them with N_() in the companion's "
                         f"NOTEBOOK_TITLES and translate them ({FIX})")


# --- the graded track (locale/ja/LC_MESSAGES/graded.po) --------------------------------------

def test_every_graded_text_has_an_up_to_date_translation():
    """What a student of the Japanese graded track reads (scripts/classroom_graded.py); the
    generator refuses to write a Japanese course folder otherwise (tests/test_graded_ja.py)."""
    missing, fuzzy = translate.graded_status(LANG)
    assert not (missing or fuzzy), (
        f"{translate.graded_catalog_path(LANG).relative_to(ROOT)}: {len(missing)} text(s) "
        f"untranslated, {len(fuzzy)} fuzzy:\n" + "\n".join(missing + fuzzy)
        + f"\nRun `python3 dev.py ja update`, translate them, then {FIX}")


def test_graded_catalog_lists_exactly_the_students_texts_and_updating_changes_nothing():
    path = translate.graded_catalog_path(LANG)
    catalog = translate.read_catalog(path)
    template = {(m.id, m.context) for m in translate.graded_template() if m.id}
    assert {(m.id, m.context) for m in catalog if m.id} == template, f"graded.po is stale: {FIX}"
    again = translate.po_bytes(translate.updated(path, translate.graded_template(), LANG,
                                                 "the graded track's assignments and feedback"),
                               markdown=True)
    assert again == path.read_bytes(), f"{path.relative_to(ROOT)} changes when updated again"


def test_graded_translations_keep_the_maths_code_and_fields():
    """Formulas ($...$), code spans, headings and the generator's {fields} as in the English; no
    English sentence left (ASCII formulas of the tasks, such as `t mod w`, aside)."""
    problems = []
    for m in _translated(translate.read_catalog(translate.graded_catalog_path(LANG))):
        where = f"{m.context or 'generator'}: {m.id.splitlines()[0][:50]!r}"
        if _math(m.id) != _math(m.string):
            problems.append(f"{where}: formulas differ")
        lost = set(_CODE.findall(m.id)) - set(_CODE.findall(m.string))
        if lost:
            problems.append(f"{where}: code lost: {sorted(lost)}")
        if _headings(m.id) != _headings(m.string):
            problems.append(f"{where}: headings {_headings(m.id)} became {_headings(m.string)}")
        if m.context is None and _fields(m.id) != _fields(m.string):
            problems.append(f"{where}: fields {_fields(m.id)} became {_fields(m.string)}")
        left = [run for run in english_left(m.string) if max(map(len, run.split())) > 3]
        if left:
            problems.append(f"{where}: English left: {left}")
    assert not problems, "\n".join(problems)
