"""Build the static edition: every notebook as a web page, from its stored outputs.

Run by `python3 dev.py site` with the site's own environment (.venv-site, from
requirements-site.txt), after `npm ci --prefix site` has brought MathJax 3:

1. copies of notebooks/[0-9][0-9]_*.ipynb go to build/site-src/, in which each widget
   output (it cannot work without a kernel, and would show nothing or `VBox(...)`) is
   replaced by a one-line note on what the live figure does, made from the cell's own
   `interactive(...)` call;
2. build/site-src/_toc.yml lists them in course order (00 is the start page), next to
   site/_config.yml, site/_static/ and the few MathJax files the pages load;
3. Jupyter Book builds them without executing anything; the HTML goes to build/site/
   (index.html redirects to 00_start_here.html).

Files are rewritten only when their content changes, so Sphinx rebuilds only the
pages whose notebook changed; a change to what every page shows (the list of notebooks,
a title, the styles, MathJax) rebuilds them all. Extra arguments go to `jupyter-book build`.
"""

from __future__ import annotations

import ast
import hashlib
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
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
LAB = "python3 dev.py lab"


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


def _controls(source: str) -> tuple[str | None, list[str]] | None:
    """(name of the live object, what to do with its controls) from its interactive(...) call."""
    try:
        tree = ast.parse(source)
    except SyntaxError:   # IPython syntax (magics): fall back to the generic note
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id",
                                                       getattr(node.func, "attr", None)) == "interactive"):
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
        return live, _phrases(controls)
    return None


def _join(phrases: list[str]) -> str:
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


def widget_note(cell, next_code_cell) -> str:
    """One line: what the live figure lets you do and where to open it."""
    found = _controls(cell.source)
    live, phrases = found if found else (None, [])
    what = f"{_join(phrases)} to redraw it" if phrases else "use its controls to redraw it"
    text = f"Live figure: in JupyterLab (`{LAB}`), {what}"
    if live and next_code_cell is not None and f"{live}.update(" in next_code_cell.source:
        return text + ". Without a kernel, as here, the next cell prints what it shows for one setting."
    return text + "; it needs a running kernel, which this page does not have."


def note_html(text: str) -> str:
    body = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))
    body = body.replace("Live figure:", "<strong>Live figure</strong>:", 1)
    return f'<p class="live-figure-note">{body}</p>'


def static_copy(path: Path):
    """The notebook with each widget output replaced by its note (HTML, and plain text)."""
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    for k, cell in enumerate(code):
        if not any(WIDGET_MIME in o.get("data", {}) for o in cell.get("outputs", [])):
            continue
        note = widget_note(cell, code[k + 1] if k + 1 < len(code) else None)
        cell.outputs = [o for o in cell.outputs if WIDGET_MIME not in o.get("data", {})] + [
            nbformat.v4.new_output("display_data",
                                   data={"text/html": note_html(note), "text/plain": note})]
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


def _shared_inputs_hash(names: list[str]) -> str:
    """What every page shows besides its own notebook: styles, MathJax, the list of
    notebooks and their titles (sidebar, previous/next links)."""
    h = hashlib.sha256()
    for folder in (SRC / "_static", SRC / "_extra"):
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                h.update(f.relative_to(SRC).as_posix().encode() + b"\0" + f.read_bytes())
    h.update((SRC / "_toc.yml").read_bytes())
    for name in names:
        nb = nbformat.read(SRC / f"{name}.ipynb", as_version=4)
        title = next((line for c in nb.cells if c.cell_type == "markdown"
                      for line in c.source.splitlines() if line.startswith("#")), "")
        h.update(f"{name}\0{title}\0".encode())
    return h.hexdigest()


def prepare() -> list[str]:
    """Fill build/site-src; return the notebooks' names."""
    names = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    if not names:
        sys.exit(f"no notebooks/[0-9][0-9]_*.ipynb in {NOTEBOOKS}")
    if not (MATHJAX / "tex-mml-chtml.js").exists():
        sys.exit(f"MathJax is missing ({MATHJAX}); run `npm ci --prefix site` "
                 "(python3 dev.py site does it)")
    SRC.mkdir(parents=True, exist_ok=True)
    for name in names:
        nb = static_copy(NOTEBOOKS / f"{name}.ipynb")
        _write_if_changed(SRC / f"{name}.ipynb", (nbformat.writes(nb) + "\n").encode())
    for old in SRC.glob("*.ipynb"):
        if old.stem not in names:   # a notebook renamed or removed
            old.unlink()
    toc = ["# Generated by site/build.py from notebooks/[0-9][0-9]_*.ipynb: do not edit.",
           "format: jb-book", f"root: {names[0]}"]
    if names[1:]:
        toc += ["chapters:"] + [f"- file: {name}" for name in names[1:]]
    _write_if_changed(SRC / "_toc.yml", ("\n".join(toc) + "\n").encode())
    _write_if_changed(SRC / "_config.yml", (SITE / "_config.yml").read_bytes())
    _sync_tree(SITE / "_static", SRC / "_static")
    # Not in _static/: Jupyter Book adds every .js found there to every page, which would
    # load each MathJax extension up front. html_extra_path copies _extra/ into the output.
    mathjax = SRC / "_extra" / "_static" / "mathjax"
    want = set()
    for part in MATHJAX_PARTS:   # same layout as in es5/: MathJax finds its fonts from its URL
        rel = part.removeprefix("../")
        want.add(rel.split("/")[0])
        _sync_tree(MATHJAX / part, mathjax / rel)
    for old in mathjax.iterdir():
        if old.name not in want:
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    return names


def main(argv: list[str]) -> int:
    names = prepare()
    jb = Path(sys.executable).parent / "jupyter-book"
    # Sphinx rewrites only the pages whose own source changed (and copies static files only
    # then, never deleting any): when what all pages share has changed, start afresh
    stamp, shared = SRC / "_build" / ".shared-inputs-sha256", _shared_inputs_hash(names)
    if not (stamp.exists() and stamp.read_text() == shared):
        shutil.rmtree(SRC / "_build", ignore_errors=True)
    # -W: a warning (a broken link between notebooks, say) fails the build
    # Its own summary names build/site-src/_build: shown only when the build fails
    run = subprocess.run([jb, "build", SRC, "--builder", "html", "-W", "--keep-going", "--quiet",
                          *argv], stdout=subprocess.PIPE, text=True)
    if run.returncode:
        print(run.stdout)
        return run.returncode
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(shared)
    if OUT.exists():
        shutil.rmtree(OUT)
    shutil.copytree(SRC / "_build" / "html", OUT)
    print(f"Static edition of {len(names)} notebooks: {OUT.relative_to(ROOT)}/index.html "
          f"(open it in a browser, or serve the folder from any static host)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
