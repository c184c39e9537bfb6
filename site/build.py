"""Build the static edition: every notebook as a web page, from its stored outputs.

Run by `python3 dev.py site` with the site's own environment (.venv-site, from
requirements-site.txt), after `npm ci --prefix site` has brought MathJax 3:

1. copies of notebooks/[0-9][0-9]_*.ipynb go to build/site-src/, in which each widget
   output (it cannot work without a kernel, and would show nothing or `VBox(...)`) is
   replaced by a one-line note on what the live figure does, made from the cell's own
   `with_controls(...)` call, followed by the same controls over the figure's frames, which
   site/frames.py drew in advance with the notebook's own callback (site/_static/live-frames.js
   switches them in the page, no kernel and no network);
2. build/site-src/_toc.yml lists them in course order (00 is the start page), next to
   site/_config.yml, site/_static/ and the few MathJax files the pages load;
3. Jupyter Book builds them without executing anything; the HTML goes to build/site/
   (index.html redirects to 00_start_here.html).

The Japanese edition (notebooks/ja/, built by `python3 dev.py ja`) is built the same way into
build/site/ja/ from build/site-src-ja/ (Sphinx language ja, widget notes in Japanese, links to
notebooks it does not have yet going to the English pages), and each page of either edition
that has a counterpart in the other links to it.

Files are rewritten only when their content changes, so Sphinx rebuilds only the
pages whose notebook changed; a change to what every page shows (the list of notebooks,
a title, the styles, MathJax) rebuilds them all. Extra arguments go to `jupyter-book build`.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))   # course/alt_text.py: standard library only, shared with the slides
import translate  # noqa: E402  (scripts/: the Japanese edition's catalogs, read one way)
from course import alt_text  # noqa: E402

SITE = ROOT / "site"
NOTEBOOKS = ROOT / "notebooks"
SRC = ROOT / "build" / "site-src"
OUT = ROOT / "build" / "site"
MATHJAX = SITE / "node_modules" / "mathjax" / "es5"
# What tex-mml-chtml.js loads: itself, TeX extensions it autoloads on demand (\boldsymbol,
# \cancel, ...), and its fonts. Nothing else of the 24 MB package is needed.
MATHJAX_PARTS = ["tex-mml-chtml.js", "input/tex/extensions", "output/chtml/fonts/woff-v2",
                 "../LICENSE"]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# The live figures' frames (site/frames.py), drawn with the course's own interpreter: .venv, or
# COURSE_PYTHON (dev.py passes it); per edition, one folder per notebook. On the site they are
# each edition's _live/NN_topic/.
FRAMES = ROOT / "build" / "site-frames"
LIVE = "_live"
COURSE_PYTHON = Path(os.environ.get("COURSE_PYTHON") or ROOT / ".venv" / "bin" / "python")
LAB = "python3 dev.py lab"


class Edition(NamedTuple):
    lang: str
    notebooks: Path   # where its notebooks are
    src: Path         # the Jupyter Book source folder made from them
    out: Path         # the HTML


EDITIONS = (Edition("en", NOTEBOOKS, SRC, OUT),
            Edition("ja", NOTEBOOKS / "ja", ROOT / "build" / "site-src-ja", OUT / "ja"))
# The link at the top of a page to the same notebook in the other edition.
EDITION_LINK = {"en": ("ja/{name}.html", "日本語版", "ja"), "ja": ("../{name}.html", "English", "en")}


# --------------------------------------------------------------------------
# Widget cells: a note instead of a widget that needs a kernel
# --------------------------------------------------------------------------

# What a person does with each kind of control: (singular, plural) with {} for the labels.
ACTIONS = [
    (lambda k: k.endswith("Slider"), ("move the {} slider", "move the {} sliders")),
    (lambda k: k in {"Dropdown", "Select", "SelectMultiple", "Combobox"},
     ("choose the {}", "choose the {}")),
    (lambda k: k in {"ToggleButtons", "RadioButtons"},
     ("pick the {} with its buttons", "pick the {} with their buttons")),
    (lambda k: k in {"Checkbox", "ToggleButton"}, ("switch {} on or off", "switch {} on or off")),
    (lambda k: k.endswith("Text") or k == "Textarea", ("type a {}", "type the {}")),
    (lambda k: True, ("change the {}", "change the {}")),
]


def _phrases(controls: list[tuple[str, str]]) -> list[str]:
    """[(kind, label)] -> e.g. ['move the pos and d_model sliders'], in order of appearance."""
    groups: dict[int, list[str]] = {}
    for kind, label in controls:
        groups.setdefault(next(i for i, (match, _) in enumerate(ACTIONS) if match(kind)),
                          []).append(label)
    return [ACTIONS[i][1][len(labels) > 1].format(_join(labels)) for i, labels in groups.items()]


# The same in Japanese, for the Japanese edition: (kind test, (plain, -tari form)) with {} for
# the labels: "A を選ぶと" for one kind of control, "A を選んだり、B を動かしたりすると" for more.
ACTIONS_JA = [
    (lambda k: k.endswith("Slider"), ("{} のスライダーを動かす", "{} のスライダーを動かしたり")),
    (lambda k: k in {"Dropdown", "Select", "SelectMultiple", "Combobox"},
     ("{} を選ぶ", "{} を選んだり")),
    (lambda k: k in {"ToggleButtons", "RadioButtons"}, ("{} をボタンで選ぶ", "{} をボタンで選んだり")),
    (lambda k: k in {"Checkbox", "ToggleButton"}, ("{} を切り替える", "{} を切り替えたり")),
    (lambda k: k.endswith("Text") or k == "Textarea", ("{} を入力する", "{} を入力したり")),
    (lambda k: True, ("{} を変える", "{} を変えたり")),
]


@functools.cache
def _catalog_ja():
    """The course's Japanese catalog, read as scripts/translate.py reads it (Babel, Sphinx's own
    dependency, is in .venv-site)."""
    return translate.read_catalog(ROOT / "locale" / "ja" / "LC_MESSAGES" / "course.po")


def _control_label_ja(label: str) -> str:
    """A control's label as the Japanese edition shows it: course.live.with_controls() translates
    it with the course's catalog (locale/ja/LC_MESSAGES/course.po), as gettext would: a missing,
    empty or fuzzy translation leaves the English; symbols stay as they are."""
    return translate.translation(_catalog_ja(), label) or label


def _phrases_ja(controls: list[tuple[str, str]]) -> list[str]:
    """One phrase, ending in と: what to do with the controls, in order of appearance."""
    groups: dict[int, list[str]] = {}
    for kind, label in controls:
        groups.setdefault(next(i for i, (match, _) in enumerate(ACTIONS_JA) if match(kind)),
                          []).append(f"`{_control_label_ja(label)}`")
    forms = [(ACTIONS_JA[i][1][0].format(" と ".join(labels)),
              ACTIONS_JA[i][1][1].format(" と ".join(labels))) for i, labels in groups.items()]
    if len(forms) == 1:
        return [forms[0][0] + "と"]
    return ["、".join(tari for _, tari in forms) + "すると"]


def _controls(source: str, lang: str = "en") -> tuple[str | None, list[str]] | None:
    """(name of the live object, what to do with its controls) from its with_controls(...) call."""
    try:
        tree = ast.parse(source)
    except SyntaxError:   # IPython syntax (magics): fall back to the generic note
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id",
                                                       getattr(node.func, "attr", None)) == "with_controls"):
            continue
        live = node.args[0].id if node.args and isinstance(node.args[0], ast.Name) else None
        controls = []
        for kw in node.keywords:
            if kw.arg is None:
                continue
            value = kw.value
            kind = ""
            label = kw.arg
            if isinstance(value, ast.Call):
                kind = getattr(value.func, "attr", getattr(value.func, "id", ""))
                for inner in value.keywords:
                    if (inner.arg == "description" and isinstance(inner.value, ast.Constant)
                            and isinstance(inner.value.value, str) and inner.value.value):
                        label = inner.value.value
            controls.append((kind, label))
        return live, (_phrases_ja if lang == "ja" else _phrases)(controls)
    return None


def _join(phrases: list[str]) -> str:
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


def widget_note_ja(cell, next_code_cell, drawn: bool = False) -> str:
    """widget_note in Japanese, for the pages of the Japanese edition."""
    found = _controls(cell.source, "ja")
    live, phrases = found if found else (None, [])
    what = phrases[0] if phrases else "コントロールを操作すると"
    text = f"インタラクティブな図: JupyterLab (`{LAB} --lang ja`) で {what}、図が描き直されます"
    if drawn:
        return text + "。このページでは、ノートブック自身のコードで前もって描いた図を、下のコントロールで切り替えられます。"
    if live and next_code_cell is not None and f"{live}.update(" in next_code_cell.source:
        return text + "。カーネルのないこのページでは、次のセルが一つの設定での数値を示しています。"
    return text + "。実行中のカーネルが必要なので、このページでは動きません。"


def widget_note(cell, next_code_cell, drawn: bool = False) -> str:
    """One line: what the live figure lets you do and where to open it (drawn: and that the
    page switches between its frames drawn in advance)."""
    found = _controls(cell.source)
    live, phrases = found if found else (None, [])
    what = f"{_join(phrases)} to redraw it" if phrases else "use its controls to redraw it"
    text = f"Live figure: in JupyterLab (`{LAB}`), {what}"
    if drawn:
        return text + (". On this page its frames were drawn in advance by the notebook's own "
                       "code: the controls below switch between them.")
    if live and next_code_cell is not None and f"{live}.update(" in next_code_cell.source:
        return text + ". Without a kernel, as here, the next cell prints what it shows for one setting."
    return text + "; it needs a running kernel, which this page does not have."


def note_html(text: str) -> str:
    body = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))
    body = body.replace("Live figure:", "<strong>Live figure</strong>:", 1)
    body = body.replace("インタラクティブな図:", "<strong>インタラクティブな図</strong>:", 1)
    return f'<p class="live-figure-note">{body}</p>'


# --------------------------------------------------------------------------
# Live figures without a kernel: the notebook's controls over frames drawn in advance
# --------------------------------------------------------------------------

def draw_frames(notebooks: list[Path]) -> None:
    """Draw (or keep, when their inputs did not change) the frames of these notebooks' live
    figures, every edition's in one pool of processes."""
    env = dict(os.environ, MPLBACKEND="agg",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    if not COURSE_PYTHON.exists():
        sys.exit(f"{COURSE_PYTHON} is missing: the live figures' frames are drawn with the "
                 "course's interpreter (python3 dev.py site makes it)")
    run = subprocess.run([COURSE_PYTHON, SITE / "frames.py", FRAMES, *notebooks], env=env)
    if run.returncode:
        sys.exit(f"drawing the live figures' frames failed ({run.returncode})")


def frames_of(edition: Edition, name: str) -> dict | None:
    path = FRAMES / edition.lang / name / "frames.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


# The links at the top of a page with live figures, one per figure: a keyboard user reaches a
# figure's controls in a few presses of Tab and Enter instead of Tab through every formula (each
# is a Tab stop: MathJax's menu and explorer, which screen-reader users need) and every code
# block's copy button before it: up to 150 presses on 14 of the 28 pages with live figures.
LIVE_NAV = {"en": ("Live figures on this page", "Live figures on this page:"),
            "ja": ("このページのインタラクティブな図", "このページのインタラクティブな図:")}


def live_nav_html(figures: list[tuple[int, str, list[str]]], lang: str) -> str:
    """The links to a page's live figures: (its number k, its label, its controls' labels)."""
    esc = functools.partial(html.escape, quote=True)
    name, lead = LIVE_NAV[lang]
    links = " · ".join(f'<a href="#live-{k}">{esc(label)}: {esc(", ".join(controls))}</a>'
                       for k, label, controls in figures)
    return (f'<nav class="course-live-nav" aria-label="{esc(name)}"><p>{esc(lead)} {links}</p>'
            '</nav>')


SUBSET_NOTE = {
    "en": "{label}: drawn in advance for {values} only ({count} of its {total} values); "
          "in JupyterLab the kernel draws every value.",
    "ja": "{label}: 前もって描いたのは {values} の {count} 値だけです (全 {total} 値のうち)。"
          "JupyterLab ではカーネルがすべての値を描きます。",
}


def live_html(widget: dict, name: str, number: int, lang: str, label: str = "") -> str:
    """The notebook's controls (same labels, values and default) over the widget's frames.

    site/_static/live-frames.js switches the frame and its text when a control changes; without
    script the default frame stays. Sliders are range inputs over the drawn values (a readout
    beside them), lists are selects, buttons are radio groups: all native, keyboard-operable,
    named by their label. label: how the frames' alt begins (alt_text.live_figure_label), before
    the text the callback printed for the values shown.
    """
    uid = f"live-{number}"
    esc = functools.partial(html.escape, quote=True)
    rows, notes = [], []
    for i, c in enumerate(widget["controls"]):
        cid, default, drawn, labels = f"{uid}-{i}", c["default"], c["drawn"], c["labels"]
        label = esc(c["label"])
        if c["kind"].endswith("Slider"):
            rows.append(
                f'<div class="live-frames-control"><label for="{cid}">{label}</label> '
                f'<input type="range" id="{cid}" data-control="{i}" min="0" '
                f'max="{len(drawn) - 1}" step="1" value="{drawn.index(default)}" '
                f'aria-valuetext="{esc(labels[default])}"> '
                f'<output for="{cid}" class="live-frames-readout">{esc(labels[default])}</output></div>')
        elif c["kind"] in {"Dropdown", "Select"}:
            options = "".join(f'<option value="{j}"{" selected" if j == default else ""}>'
                              f'{esc(labels[j])}</option>' for j in drawn)
            rows.append(f'<div class="live-frames-control"><label for="{cid}">{label}</label> '
                        f'<select id="{cid}" data-control="{i}">{options}</select></div>')
        else:   # ToggleButtons, RadioButtons: one choice among buttons
            buttons = "".join(
                f'<label><input type="radio" name="{cid}" value="{j}"'
                f'{" checked" if j == default else ""}> {esc(labels[j])}</label>' for j in drawn)
            rows.append(f'<fieldset class="live-frames-control" data-control="{i}">'
                        f'<legend>{label}</legend>{buttons}</fieldset>')
        if len(drawn) < len(labels):
            notes.append(SUBSET_NOTE[lang].format(
                label=c["label"], values=", ".join(labels[j] for j in drawn), count=len(drawn),
                total=len(labels)))
    key = "-".join(str(c["default"]) for c in widget["controls"])
    first = widget["frames"][key]
    data = {"controls": [{x: c[x] for x in ("name", "label", "labels", "values", "default",
                                             "drawn")} for c in widget["controls"]],
            "frames": {k: [f["png"], f["text"], f["words"]] for k, f in widget["frames"].items()},
            "alt": label}
    script = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    width, height = widget["size"]
    subset = "".join(f'<p class="live-frames-subset">{esc(n)}</p>' for n in notes)
    # the figure in words (course.describe), as live-frames.js writes it for every frame
    alt = f"{label}: {first['words']}" if label else first["words"]
    # tabindex -1: the page's link to it (live_nav_html) moves the focus here, and Tab goes on
    # to its first control
    return (f'<div class="live-frames" id="{uid}" tabindex="-1" data-frames="{LIVE}/{name}/" '
            f'data-shown="{key}">'
            f'<script type="application/json" class="live-frames-data">{script}</script>'
            f'<div class="live-frames-controls">{"".join(rows)}</div>{subset}'
            f'<pre class="live-frames-text" aria-live="polite">{esc(first["text"])}</pre>'
            f'<img class="live-frames-image" src="{LIVE}/{name}/{first["png"]}" '
            f'alt="{esc(alt)}" width="{width}" height="{height}"></div>')


# A Japanese notebook links a notebook that is not translated yet as ../NN_topic.ipynb (the
# English one, scripts/translate.py): on the site that is the English page, outside this book.
OUTSIDE_LINK = re.compile(r"\[([^\]]+)\]\(\.\./(\d\d_[a-z0-9_]+)\.ipynb(#[^)\s]*)?\)")


def static_copy(path: Path, lang: str = "en", counterpart: str | None = None,
                frames: dict | None = None):
    """The notebook with each widget output replaced by its note (HTML, and plain text).

    counterpart: the name of the same notebook in the other edition, linked at the top.
    frames: its live figures' frames (site/frames.py's frames.json): each note is followed by
    the controls over them.
    """
    drawn = {w["cell"]: w for w in (frames or {}).get("widgets", [])}
    nb = nbformat.read(path, as_version=4)
    note_of = widget_note_ja if lang == "ja" else widget_note
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = OUTSIDE_LINK.sub(
                lambda m: f'<a href="../{m.group(2)}.html{m.group(3) or ""}">{m.group(1)}</a>',
                cell.source)
    for i, cell in enumerate(nb.cells):   # each stored figure's alt (myst-nb's cell option)
        outputs = []
        for o in cell.get("outputs", []):
            outputs.append(o)
            # The kernel's <img alt> of a figure (course.figures.figure_html, for JupyterLab):
            # myst-nb would prefer it to the PNG and inline it; the page shows the PNG, as a
            # file, with the alt below, which also names the figure's section. The full words
            # that may follow the <img> (a <details>) stay, as an output of their own after it
            shown = str(o.get("data", {}).get("text/html", ""))
            if "image/png" in o.get("data", {}) and shown.startswith(alt_text.FIGURE_IMG):
                del o["data"]["text/html"]
                details = shown[shown.find("<details"):] if "<details" in shown else ""
                if details:
                    outputs.append(nbformat.v4.new_output(
                        "display_data", data={"text/html": details}))
        if cell.cell_type == "code":
            cell.outputs = outputs
        if cell.cell_type == "code" and any(m.startswith("image/") for o in cell.get("outputs", [])
                                            for m in o.get("data", {})):
            cell.metadata.setdefault("mystnb", {}).setdefault("image", {})["alt"] = \
                alt_text.figure_alt(nb.cells, i, lang)
    if counterpart:
        href, label, hreflang = EDITION_LINK[lang]
        # A fixed id: nbformat would make a random one, rewriting every page's copy on every
        # build, and Sphinx would rebuild every page when no notebook changed
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(
            f'<p class="course-edition-link"><a href="{href.format(name=counterpart)}" '
            f'hreflang="{hreflang}" lang="{hreflang}">{label}</a></p>', id="course-edition-link"))
    code = [c for c in nb.cells if c.cell_type == "code"]
    figures = []
    for k, cell in enumerate(code):
        if not any(WIDGET_MIME in o.get("data", {}) for o in cell.get("outputs", [])):
            continue
        note = note_of(cell, code[k + 1] if k + 1 < len(code) else None, k in drawn)
        shown = note_html(note)
        if k in drawn:
            label = alt_text.live_figure_label(nb.cells, nb.cells.index(cell), lang)
            shown += live_html(drawn[k], path.stem, k, lang, label)
            figures.append((k, label, [c["label"] for c in drawn[k]["controls"]]))
        cell.outputs = [o for o in cell.outputs if WIDGET_MIME not in o.get("data", {})] + [
            nbformat.v4.new_output("display_data", data={"text/html": shown, "text/plain": note})]
    if figures:   # after the link to the other edition, before the notebook's own first cell
        nb.cells.insert(1 if counterpart else 0, nbformat.v4.new_markdown_cell(
            live_nav_html(figures, lang), id="course-live-nav"))
    return nb


# --------------------------------------------------------------------------
# Source folder
# --------------------------------------------------------------------------

def _write_if_changed(path: Path, data: bytes) -> bool:
    if path.exists() and path.read_bytes() == data:
        return False   # keep the mtime: Sphinx re-reads only changed sources
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def _sync_tree(src: Path, dst: Path) -> None:
    """Make dst a copy of src (a file or a folder)."""
    if src.is_file():
        _write_if_changed(dst, src.read_bytes())
        return
    want = {f.relative_to(src) for f in src.rglob("*") if f.is_file()}
    for rel in sorted(want):
        _write_if_changed(dst / rel, (src / rel).read_bytes())
    for f in list(dst.rglob("*")) if dst.exists() else []:
        if f.is_file() and f.relative_to(dst) not in want:
            f.unlink()


def _shared_inputs_hash(src: Path, names: list[str]) -> str:
    """What every page shows besides its own notebook: styles, MathJax, the list of
    notebooks and their titles (sidebar, previous/next links)."""
    h = hashlib.sha256()
    for folder in (src / "_static", src / "_extra"):
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                h.update(f.relative_to(src).as_posix().encode() + b"\0" + f.read_bytes())
    h.update((src / "_toc.yml").read_bytes())
    h.update((src / "_config.yml").read_bytes())
    for name in names:
        nb = nbformat.read(src / f"{name}.ipynb", as_version=4)
        title = next((line for c in nb.cells if c.cell_type == "markdown"
                      for line in c.source.splitlines() if line.startswith("#")), "")
        h.update(f"{name}\0{title}\0".encode())
    return h.hexdigest()


def _names(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("[0-9][0-9]_*.ipynb"))


def _config(edition: Edition) -> bytes:
    """site/_config.yml as it is for the English edition; for another, its language and title."""
    text = (SITE / "_config.yml").read_bytes()
    if edition.lang == "en":
        return text
    import yaml   # Jupyter Book's own dependency

    config = yaml.safe_load(text)
    config["title"] = "attention-notebooks 日本語版"
    sphinx = config["sphinx"]["config"]
    sphinx["language"] = edition.lang
    sphinx["html_theme_options"]["search_bar_text"] = "コースを検索..."
    return ("# Generated by site/build.py from site/_config.yml: do not edit.\n"
            + yaml.safe_dump(config, allow_unicode=True, sort_keys=False)).encode()


def prepare(edition: Edition = EDITIONS[0]) -> list[str]:
    """Fill the edition's source folder (build/site-src for English); return the notebooks' names."""
    src, names = edition.src, _names(edition.notebooks)
    if not names:
        sys.exit(f"no notebooks/[0-9][0-9]_*.ipynb in {edition.notebooks}")
    if not (MATHJAX / "tex-mml-chtml.js").exists():
        sys.exit(f"MathJax is missing ({MATHJAX}); run `npm ci --prefix site` "
                 "(python3 dev.py site does it)")
    other = EDITIONS[1] if edition.lang == "en" else EDITIONS[0]
    counterparts = set(_names(other.notebooks))
    src.mkdir(parents=True, exist_ok=True)
    for name in names:
        nb = static_copy(edition.notebooks / f"{name}.ipynb", edition.lang,
                         name if name in counterparts else None, frames_of(edition, name))
        _write_if_changed(src / f"{name}.ipynb", (nbformat.writes(nb) + "\n").encode())
    for old in src.glob("*.ipynb"):
        if old.stem not in names:   # a notebook renamed or removed
            old.unlink()
    toc = [f"# Generated by site/build.py from {edition.notebooks.relative_to(ROOT)}/"
           "[0-9][0-9]_*.ipynb: do not edit.", "format: jb-book", f"root: {names[0]}"]
    if names[1:]:
        toc += ["chapters:"] + [f"- file: {name}" for name in names[1:]]
    _write_if_changed(src / "_toc.yml", ("\n".join(toc) + "\n").encode())
    _write_if_changed(src / "_config.yml", _config(edition))
    _sync_tree(SITE / "_static", src / "_static")
    # Not in _static/: Jupyter Book adds every .js found there to every page, which would
    # load each MathJax extension up front. html_extra_path copies _extra/ into the output.
    mathjax = src / "_extra" / "_static" / "mathjax"
    # /favicon.ico at the site's root: browsers ask for it on pages that name no icon (the
    # index.html redirect), and a 404 there is a console error.
    _write_if_changed(src / "_extra" / "favicon.ico", (SITE / "favicon.ico").read_bytes())
    want = set()
    for part in MATHJAX_PARTS:   # same layout as in es5/: MathJax finds its fonts from its URL
        rel = part.removeprefix("../")
        want.add(rel.split("/")[0])
        _sync_tree(MATHJAX / part, mathjax / rel)
    for old in mathjax.iterdir():
        if old.name not in want:
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    return names


def start_build(edition: Edition, argv: list[str]):
    """Start building one edition's HTML into its source folder's _build/html; returns the
    notebooks' names and finish(), which waits for it and returns its return code."""
    names = prepare(edition)
    src = edition.src
    jb = Path(sys.executable).parent / "jupyter-book"
    # Sphinx rewrites only the pages whose own source changed (and copies static files only
    # then, never deleting any): when what all pages share has changed, start afresh
    stamp, shared = src / "_build" / ".shared-inputs-sha256", _shared_inputs_hash(src, names)
    if not (stamp.exists() and stamp.read_text() == shared):
        shutil.rmtree(src / "_build", ignore_errors=True)
    # -W: a warning (a broken link between notebooks, say) fails the build
    # Its own summary names build/site-src/_build: shown only when the build fails
    run = subprocess.Popen([jb, "build", src, "--builder", "html", "-W", "--keep-going",
                            "--quiet", *argv], stdout=subprocess.PIPE, text=True)

    def finish() -> int:
        out, _ = run.communicate()
        if run.returncode:
            print(out)
            return run.returncode
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(shared)
        return 0

    return names, finish


def build(edition: Edition, argv: list[str]) -> tuple[int, list[str]]:
    """Build one edition's HTML into its source folder's _build/html; (return code, names)."""
    names, finish = start_build(edition, argv)
    return finish(), names


def _link(src, dst):
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def main(argv: list[str]) -> int:
    editions = [e for e in EDITIONS if e.lang == "en" or _names(e.notebooks)]   # with notebooks
    start = time.perf_counter()
    draw_frames([e.notebooks / f"{name}.ipynb" for e in editions for name in _names(e.notebooks)])
    drawn = time.perf_counter()
    print(f"Live figures' frames ready in {drawn - start:.1f} s", flush=True)
    # Sphinx uses one core: the editions are built side by side
    started = [(edition, *start_build(edition, argv)) for edition in editions]
    codes = [finish() for _, _, finish in started]   # each waited for, even after a failure
    if any(codes):
        return next(code for code in codes if code)
    built = [(edition, names) for edition, names, _ in started]
    if OUT.exists():
        shutil.rmtree(OUT)
    for edition, names in built:   # English first: the others go into folders inside it
        shutil.copytree(edition.src / "_build" / "html", edition.out)
        for name in names:   # the frames, as hard links where the file system allows
            frames = FRAMES / edition.lang / name
            if any(frames.glob("*.webp")):
                shutil.copytree(frames, edition.out / LIVE / name, copy_function=_link,
                                ignore=shutil.ignore_patterns("frames.json"))
        print(f"Static edition of {len(names)} notebooks ({edition.lang}): "
              f"{edition.out.relative_to(ROOT)}/index.html")
    print(f"Pages built in {time.perf_counter() - drawn:.1f} s")
    print("Open it in a browser, or serve build/site/ from any static host.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
