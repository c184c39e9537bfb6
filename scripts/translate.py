"""Translated editions, kept in step with the English source (run via `python3 dev.py ja`).

The English notebooks and modules are the source; a translated edition is built from them and
from gettext PO catalogs, never edited by hand. For each language (only "ja" so far):

- locale/<lang>/notebooks/NN_topic.po: one entry per distinct markdown cell of
  notebooks/NN_topic.ipynb, msgid = the cell's exact English source, msgstr = its translation
  (no msgctxt: identical cells of one notebook share one translation);
- locale/<lang>/LC_MESSAGES/course.po: the texts the course modules mark with _() (course/i18n.py),
  extracted with Babel; the kernel that first needs it compiles course.mo beside it (gettext's
  form; course/i18n.py), which is not in the repository;
- locale/<lang>/LC_MESSAGES/graded.po: what a student of the graded track reads (the texts of
  scripts/classroom_graded.py's student_texts(): the assignments' headers, titles, tasks, setup
  comments, the tests' messages and the grading's notes; msgctxt the assignment or the
  item's grade_id), which `python3 dev.py classroom assignments DIR --lang <lang>` reads;
  nothing compiles it;
- notebooks/<lang>/NN_topic.ipynb: the English notebook with every markdown cell replaced by its
  translation and the first code cell switching the modules' language; code cells are otherwise
  identical, and the outputs come from executing it (scripts/regenerate.py), never from a file.

Commands (dev.py runs them in .venv, then re-executes the built notebooks):

    translate.py update [NN_topic ...]   catalogs from the current English sources (Babel's
                                         Catalog.update: new or changed texts come in untranslated
                                         or fuzzy, with the old English as `#| msgid`; texts that
                                         are gone become obsolete `#~` entries); named notebooks
                                         get a catalog if they have none
    translate.py build                   write notebooks/<lang>/ for EDITION
    translate.py status                  what is translated, fuzzy or missing, per notebook

A text counts as translated when its msgstr is not empty and it is not marked fuzzy. A fuzzy
entry means the English changed after it was translated: fix the msgstr, then delete the
`#, fuzzy` line and the `#| msgid` lines above it.
"""

from __future__ import annotations

import ast
import io
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_file
from babel.messages.pofile import denormalize, normalize, read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LOCALE = ROOT / "locale"
DOMAIN = "course"
PROJECT = "attention-notebooks"

# The notebooks of each translated edition: every markdown cell of these must have an up-to-date
# translation (tests/test_translations.py fails otherwise). A notebook joins when its catalog is
# complete; the edition is not finished until every notebooks/NN_topic.ipynb is listed here.
EDITION = {
    "ja": ("00_start_here", "01_qkv_projections", "02_worked_example_3x2",
           "03_scaling_and_softmax_saturation", "04_masking", "05_multi_head_attention",
           "06_positional_encoding", "07_feed_forward_network", "08_transformer_block",
           "09_cost_of_attention", "10_learning_to_attend", "11_generating_and_kv_cache",
           "12_rope_and_alibi", "13_grouped_query_attention", "14_sliding_window_attention"),
}

# Where the course modules mark texts with _() and N_() (course/i18n.py).
MODULE_SOURCES = ("course/*.py", "course/*/*.py")

# What the first code cell of a translated notebook gains: the import after its imports, the
# call at its end. From there on the course modules speak the notebook's language.
SWITCH_IMPORT = "from course import i18n"
SWITCH_CALL = {
    "ja": 'i18n.use_language("ja")  # 日本語版: 図・ウィジェット・チェックの文言を日本語で表示',
}

HEADER = {
    "ja": ("Japanese translation of attention-notebooks ({what}).\n"
           "Edit only the msgstr texts; `python3 dev.py ja` updates the msgids from the English\n"
           "sources and rebuilds the Japanese edition (docs/japanese-edition.md)."),
}

# Babel can write the previous msgid of a fuzzy entry (`#| msgid`) but not read it back
# (python-babel/babel#206: the lines come back as user comments, and its writer re-wraps a
# multi-line msgid into an invalid one). The old English is what a translator needs to see what
# changed, so _write_previous / _read_previous keep it in the standard gettext form.
PO_OPTIONS = dict(width=0, include_previous=False, include_lineno=False, sort_output=False)
LINK = re.compile(r"\]\((\d\d_[a-z0-9_]+)\.ipynb(#[^)\s]*)?\)")


def english_notebooks() -> list[str]:
    return sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def notebook_catalog_path(name: str, lang: str) -> Path:
    return LOCALE / lang / "notebooks" / f"{name}.po"


def module_catalog_path(lang: str) -> Path:
    return LOCALE / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def translated_notebook_path(name: str, lang: str) -> Path:
    return NOTEBOOKS / lang / f"{name}.ipynb"


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# --------------------------------------------------------------------------
# Templates: what the English sources say now
# --------------------------------------------------------------------------

def _new_catalog(lang: str | None, what: str) -> Catalog:
    header = HEADER.get(lang or "ja", HEADER["ja"]).format(what=what)
    return Catalog(locale=lang, domain=DOMAIN, project=PROJECT, version="",
                   copyright_holder="the attention-notebooks authors",
                   last_translator="the attention-notebooks authors",
                   language_team="the attention-notebooks authors",
                   header_comment="\n".join(f"# {line}".rstrip() for line in header.splitlines()),
                   fuzzy=False)


def notebook_template(name: str) -> Catalog:
    """One message per distinct markdown cell of notebooks/<name>.ipynb, in cell order."""
    path = NOTEBOOKS / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    template = _new_catalog(None, f"notebook {name}")
    for cell in nb.cells:
        if cell.cell_type != "markdown" or not cell.source.strip():
            continue
        message = template.get(cell.source)
        if message is None:
            template.add(cell.source, locations=[(_rel(path), None)],
                         auto_comments=[f"cell {cell.get('id', '?')}"])
        else:
            message.auto_comments.append(f"cell {cell.get('id', '?')}")
    return template


def graded_template() -> Catalog:
    """What a student of the graded track reads (scripts/classroom_graded.py, student_texts)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from scripts.classroom_graded import student_texts

    template = _new_catalog(None, "the graded track's assignments and feedback")
    for text, context, where in student_texts():
        if template.get(text, context) is None:
            template.add(text, context=context, auto_comments=[where])
    return template


def graded_catalog_path(lang: str) -> Path:
    return LOCALE / lang / "LC_MESSAGES" / "graded.po"


def module_template() -> Catalog:
    """Every text the course modules mark for translation (Babel's Python extractor)."""
    template = _new_catalog(None, "messages of the course modules")
    for pattern in MODULE_SOURCES:
        for path in sorted(ROOT.glob(pattern)):
            for lineno, message, comments, context in extract_from_file(
                    "python", path, keywords=DEFAULT_KEYWORDS, comment_tags=("Translators:",),
                    strip_comment_tags=True):
                template.add(message, locations=[(_rel(path), lineno)],
                             auto_comments=comments, context=context)
    return template


# --------------------------------------------------------------------------
# Catalogs: read, update, write
# --------------------------------------------------------------------------

def read_catalog(path: Path) -> Catalog:
    with path.open("rb") as f:
        catalog = read_po(f, abort_invalid=True)
    for message in [*catalog, *catalog.obsolete.values()]:
        _read_previous(message)
    return catalog


def _read_previous(message) -> None:
    """`#| msgid ...` lines, which Babel reads as user comments, back into message.previous_id."""
    previous = [c for c in message.user_comments if c == "|" or c.startswith("| ")]
    if not previous:
        return
    message.user_comments = [c for c in message.user_comments if c not in previous]
    text = "\n".join(c[2:] for c in previous)
    if text.startswith("msgid "):
        message.previous_id = [denormalize(text[len("msgid "):])]


def _write_previous(text: str, catalog: Catalog) -> str:
    """Put `#| msgid "old English"` above every fuzzy entry that knows its old text."""
    for message in catalog:
        if not (message.id and message.fuzzy and message.previous_id):
            continue
        head = "msgid " + normalize(message.id, width=0) + "\n"
        if message.context:
            head = "msgctxt " + normalize(message.context, width=0) + "\n" + head
        old = "msgid " + normalize(message.previous_id[0], width=0)
        text = text.replace("\n" + head, "\n" + "".join(f"#| {line}\n" for line in
                                                     old.split("\n")) + head, 1)
    return text


def po_bytes(catalog: Catalog, markdown: bool = False) -> bytes:
    """The PO file. markdown: the texts are notebook cells, not format strings (Babel flags a
    cell with $\\sqrt{d_k}$ as python-brace-format, and PO editors would then check its braces)."""
    if markdown:
        for message in [*catalog, *catalog.obsolete.values()]:
            message.flags -= {"python-format", "python-brace-format"}
    buf = io.BytesIO()
    write_po(buf, catalog, **PO_OPTIONS)
    text = _write_previous(buf.getvalue().decode("utf-8"), catalog)
    # Babel writes its own version into the header: not a reason to rewrite a catalog
    return re.sub(r'"Generated-By: Babel [^"]*"', r'"Generated-By: Babel\\n"', text).encode("utf-8")


def _write_if_changed(path: Path, data: bytes) -> bool:
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def updated(path: Path, template: Catalog, lang: str, what: str) -> Catalog:
    """The catalog at `path` (a new one if there is none) updated to `template` by Babel."""
    catalog = read_catalog(path) if path.exists() else _new_catalog(lang, what)
    previous = {(m.id, m.context): m.previous_id for m in catalog if m.previous_id}
    catalog.update(template, update_creation_date=False)
    for message in catalog:   # still fuzzy from an earlier update: keep the English it had then
        if message.fuzzy and not message.previous_id:
            message.previous_id = previous.get((message.id, message.context), [])
    return catalog


def update_catalogs(lang: str, new: list[str]) -> list[Path]:
    """Bring the module catalog and every notebook catalog (and those of `new`) up to date."""
    written = []
    path = module_catalog_path(lang)
    if _write_if_changed(path, po_bytes(updated(path, module_template(), lang,
                                                "messages of the course modules"))):
        written.append(path)
    path = graded_catalog_path(lang)
    if _write_if_changed(path, po_bytes(updated(path, graded_template(), lang,
                                                "the graded track's assignments and feedback"),
                                        markdown=True)):
        written.append(path)
    names = set(english_notebooks())
    unknown = sorted(set(new) - names)
    if unknown:
        raise SystemExit(f"no notebooks/{unknown[0]}.ipynb (known: {', '.join(sorted(names))})")
    for name in sorted(names):
        path = notebook_catalog_path(name, lang)
        if not path.exists() and name not in new and name not in EDITION.get(lang, ()):
            continue   # not being translated yet
        catalog = updated(path, notebook_template(name), lang, f"notebook {name}")
        if _write_if_changed(path, po_bytes(catalog, markdown=True)):
            written.append(path)
    return written


def translation(catalog: Catalog, msgid: str, context: str | None = None) -> str | None:
    """The usable translation of `msgid`: None when it is missing, empty or fuzzy."""
    message = catalog.get(msgid, context)
    if message is None or not message.string or message.fuzzy:
        return None
    return message.string


# --------------------------------------------------------------------------
# Building a translated notebook
# --------------------------------------------------------------------------

@dataclass
class Untranslated:
    index: int          # cell position in the notebook (markdown and code)
    cell_id: str
    fuzzy: bool         # there is a translation, of an older English text
    first_line: str


@dataclass
class Built:
    nb: nbformat.NotebookNode
    untranslated: list[Untranslated] = field(default_factory=list)


def _links_outside_edition(text: str, lang: str) -> str:
    """Links to a notebook not in the edition go to the English one (../NN_topic.ipynb)."""
    edition = set(EDITION.get(lang, ()))
    return LINK.sub(lambda m: m.group(0) if m.group(1) in edition
                    else f"](../{m.group(1)}.ipynb{m.group(2) or ''})", text)


def switch_language(source: str, lang: str) -> str:
    """The first code cell with SWITCH_IMPORT after its last import and SWITCH_CALL at its end."""
    imports = [node for node in ast.parse(source).body
               if isinstance(node, (ast.Import, ast.ImportFrom))]
    lines = source.rstrip("\n").split("\n")
    lines.insert(imports[-1].end_lineno if imports else 0, SWITCH_IMPORT)
    return "\n".join(lines + [SWITCH_CALL[lang]])


def build_notebook(name: str, lang: str, previous: nbformat.NotebookNode | None = None) -> Built:
    """The translated notebook as the English notebook and the catalog make it.

    Code cells: the English source (the first one through switch_language). Their outputs
    and execution counts are those of `previous` (the last build) where its cell of the same id
    has the same source, else empty: only executing the notebook makes real outputs.
    """
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    po = notebook_catalog_path(name, lang)
    catalog = read_catalog(po) if po.exists() else _new_catalog(lang, name)
    built = Built(nb)
    old = {c.get("id"): c for c in previous.cells} if previous is not None else {}
    first_code = True
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and cell.source.strip():
            text = translation(catalog, cell.source)
            if text is None:
                message = catalog.get(cell.source)
                fuzzy = message is not None and message.fuzzy and bool(message.string)
                built.untranslated.append(Untranslated(i, cell.get("id", "?"), fuzzy,
                                                       cell.source.splitlines()[0][:70]))
                continue
            cell.source = _links_outside_edition(text, lang)
        elif cell.cell_type == "code":
            if first_code:
                cell.source = switch_language(cell.source, lang)
                first_code = False
            before = old.get(cell.get("id"))
            if before is not None and before.cell_type == "code" and before.source == cell.source:
                cell.outputs, cell.execution_count = before.outputs, before.execution_count
            else:
                cell.outputs, cell.execution_count = [], None
    nb.metadata["translation"] = {
        "language": lang, "source": f"notebooks/{name}.ipynb", "catalog": _rel(po),
        "note": "Built by `python3 dev.py ja` from the English notebook and the catalog: "
                "edit those, never this file."}
    return built


def _same_except_outputs(a: nbformat.NotebookNode, b: nbformat.NotebookNode) -> bool:
    def strip(nb):
        cells = []
        for c in nb.cells:
            c = dict(c)
            c.pop("outputs", None)
            c.pop("execution_count", None)
            cells.append(c)
        return {"metadata": nb.metadata, "nbformat": nb.nbformat,
                "nbformat_minor": nb.nbformat_minor, "cells": cells}
    return strip(a) == strip(b)


def stale_reason(name: str, lang: str) -> str | None:
    """Why notebooks/<lang>/<name>.ipynb is not what the build makes now, or None if it is."""
    path = translated_notebook_path(name, lang)
    if not path.exists():
        return f"{_rel(path)} does not exist"
    committed = nbformat.read(path, as_version=4)
    built = build_notebook(name, lang, committed)
    if built.untranslated:
        return f"{len(built.untranslated)} markdown cell(s) of notebooks/{name}.ipynb have no " \
               "up-to-date translation"
    if not _same_except_outputs(built.nb, committed):
        for k, (want, have) in enumerate(zip(built.nb.cells, committed.cells, strict=False)):
            if want.source != have.source or want.cell_type != have.cell_type \
                    or want.get("metadata") != have.get("metadata"):
                return (f"{_rel(path)} cell {k} ({have.get('id')}) differs from what "
                        f"notebooks/{name}.ipynb and {_rel(notebook_catalog_path(name, lang))} "
                        "make now")
        return f"{_rel(path)} differs from what the build makes now (cells or metadata)"
    return None


def build_edition(lang: str) -> tuple[list[Path], dict[str, Built]]:
    """Write notebooks/<lang>/ for the notebooks of EDITION[lang] whose catalogs are complete.

    Returns the written paths (content other than outputs changed) and every build, so the
    caller can report what is missing. A notebook with a missing translation is not written.
    """
    out_dir = NOTEBOOKS / lang
    written, builds = [], {}
    for name in EDITION.get(lang, ()):
        path = translated_notebook_path(name, lang)
        previous = nbformat.read(path, as_version=4) if path.exists() else None
        built = builds[name] = build_notebook(name, lang, previous)
        if built.untranslated:
            continue
        nbformat.validate(built.nb)
        if previous is not None and _same_except_outputs(built.nb, previous):
            continue
        out_dir.mkdir(parents=True, exist_ok=True)
        nbformat.write(built.nb, path)
        written.append(path)
    for old in sorted(out_dir.glob("*.ipynb")) if out_dir.exists() else []:
        if old.stem not in EDITION.get(lang, ()):
            old.unlink()   # a notebook renamed or taken out of the edition
            written.append(old)
    return written, builds


# --------------------------------------------------------------------------
# Status
# --------------------------------------------------------------------------

def _status(path: Path, template: Catalog, lang: str, name) -> tuple[list[str], list[str]]:
    """(the texts of `template` with no translation in `path`, those whose one is fuzzy), each
    as name(message) says it."""
    catalog = read_catalog(path) if path.exists() else _new_catalog(lang, "")
    missing, fuzzy = [], []
    for message in template:
        if not message.id:
            continue
        have = catalog.get(message.id, message.context)
        if have is None or not have.string or (isinstance(have.string, tuple)
                                              and not all(have.string)):
            missing.append(name(message))
        elif have.fuzzy:
            fuzzy.append(name(message))
    return missing, fuzzy


def module_status(lang: str) -> tuple[list[str], list[str]]:
    """(texts of the modules with no translation, texts whose translation is fuzzy)."""
    return _status(module_catalog_path(lang), module_template(), lang,
                   lambda m: m.id if isinstance(m.id, str) else m.id[0])


def graded_status(lang: str) -> tuple[list[str], list[str]]:
    """(texts of the graded track with no translation, texts whose translation is fuzzy), each
    as "context: its first words" (the context names the item, the assignment or the generator)."""
    return _status(graded_catalog_path(lang), graded_template(), lang,
                   lambda m: f"{m.context or 'generator'}: {m.id.splitlines()[0][:60]}")


def status(lang: str) -> str:
    lines = []
    missing, fuzzy = module_status(lang)
    lines.append(f"modules ({_rel(module_catalog_path(lang))}): "
                 f"{len(missing)} untranslated, {len(fuzzy)} fuzzy")
    missing, fuzzy = graded_status(lang)
    lines.append(f"graded track ({_rel(graded_catalog_path(lang))}): "
                 f"{len(missing)} untranslated, {len(fuzzy)} fuzzy")
    lines += [f"  untranslated: {w}" for w in missing[:20]] + [f"  fuzzy: {w}" for w in fuzzy[:20]]
    edition = EDITION.get(lang, ())
    for name in english_notebooks():
        built = build_notebook(name, lang)
        cells = sum(c.cell_type == "markdown" and bool(c.source.strip()) for c in built.nb.cells)
        todo = built.untranslated
        state = "in the edition" if name in edition else "not in the edition"
        lines.append(f"{name}: {cells - len(todo)}/{cells} markdown cells translated "
                     f"({sum(u.fuzzy for u in todo)} fuzzy), {state}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    lang = "ja"
    if not argv or argv[0] not in {"update", "build", "status"}:
        print(__doc__)
        return 2
    if argv[0] == "update":
        for path in update_catalogs(lang, argv[1:]):
            print(f"updated {_rel(path)}")
        return 0
    if argv[0] == "status":
        print(status(lang))
        return 0
    code = 0
    missing, fuzzy = module_status(lang)
    if missing or fuzzy:
        code = 1
        print(f"{_rel(module_catalog_path(lang))}: {len(missing)} text(s) untranslated, "
              f"{len(fuzzy)} fuzzy; they show in English:", file=sys.stderr)
        for text in (missing + fuzzy)[:20]:
            print(f"  {text[:90]!r}", file=sys.stderr)
    missing, fuzzy = graded_status(lang)
    if missing or fuzzy:
        code = 1
        print(f"{_rel(graded_catalog_path(lang))}: {len(missing)} text(s) untranslated, "
              f"{len(fuzzy)} fuzzy; `dev.py classroom assignments DIR --lang {lang}` refuses "
              "to write the graded track until they are translated:", file=sys.stderr)
        for text in (missing + fuzzy)[:20]:
            print(f"  {text}", file=sys.stderr)
    written, builds = build_edition(lang)
    for path in written:
        print(f"{'wrote' if path.exists() else 'removed'} {_rel(path)}")
    for name, built in builds.items():
        if built.untranslated:
            code = 1
            print(f"{name}: not built, {len(built.untranslated)} markdown cell(s) need a "
                  f"translation in {_rel(notebook_catalog_path(name, lang))}:", file=sys.stderr)
            for u in built.untranslated:
                print(f"  cell {u.index} ({u.cell_id}){' fuzzy' if u.fuzzy else ''}: "
                      f"{u.first_line}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
