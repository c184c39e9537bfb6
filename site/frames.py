"""Draw the live figures' frames for the static edition, with the notebooks' own callbacks.

Run by site/build.py with the course's interpreter (.venv), not the site's: the frames must be
what the kernel draws, so they are drawn with the same numpy, matplotlib and Pillow that the
notebooks run on (the site's tools would need their own copies, of possibly other versions).

For one notebook: its code cells run in order in an IPython shell in this process (from the
notebook's folder; matplotlib's Agg backend: the inline backend of a kernel changes no rc
setting, and the live figures draw on their own Agg canvas either way), up to its last widget cell,
with course.live.with_controls wrapped so that each call records its LiveFigure and controls
before doing what it always does. Then, for every combination of the controls' values (or a
documented subset, THIN), `live.render(**values)` gives the text and the PNG the kernel's widget
shows, and course.describe the figure in words (the image's alt; the kernel's widget writes
the same words, hidden, after its text); each PNG is stored, as lossless WebP (webp()), under
its content's hash (identical frames are one file) and a manifest, frames.json, lists the
controls (kind, label, values' labels, default) and the frames.

    .venv/bin/python site/frames.py OUT_DIR NOTEBOOK [NOTEBOOK ...]   # OUT_DIR/{en,ja}/NN_topic/

Each notebook is drawn in a fresh process forked from this one (the course's imports done once,
no state shared between notebooks), two at a time. A notebook whose frames.json records the same
inputs (its bytes, the course's modules, this file) is skipped: nothing is redrawn.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import math
import multiprocessing
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# At most this many frames per live figure: beyond it, the slider with the most values drawn is
# thinned to every 2nd, 4th, ... value of its range, until the product fits (see thin()).
MAX_FRAMES = 400
# A slider of more values than this is thinned first, whatever the product.
MAX_VALUES = 25
WORKERS = 2


def course_code() -> list[Path]:
    """The course's own modules: those pyproject.toml installs (py-modules and packages)."""
    import tomllib

    found = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = found["tool"]["setuptools"]
    return ([ROOT / f"{name}.py" for name in setuptools.get("py-modules", [])]
            + [f for name in setuptools.get("packages", []) for f in (ROOT / name).rglob("*.py")])


def drawing_versions() -> str:
    """The interpreter and the libraries that draw the frames (run in the course's interpreter):
    frames drawn by another environment (.venv against .venv-lowest) are not kept."""
    from importlib.metadata import version

    return " ".join([sys.version.split()[0]]
                    + [f"{name}=={version(name)}" for name in ("numpy", "matplotlib", "pillow",
                                                               "ipywidgets", "ipython")])


def inputs_hash(notebook: Path) -> str:
    """What a notebook's frames depend on: the notebook, the course's code and catalogs, this
    drawer, and the versions that draw them."""
    h = hashlib.sha256(notebook.read_bytes())
    h.update(drawing_versions().encode() + b"\0")
    for f in sorted([*course_code(), Path(__file__), *(ROOT / "locale").rglob("*.po")]):
        h.update(f.relative_to(ROOT).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


# --------------------------------------------------------------------------
# Controls: what the page offers, read from the ipywidgets objects themselves
# --------------------------------------------------------------------------

def describe(name: str, control) -> dict:
    """A control as the page shows it: kind, label, the labels and values of its options, default."""
    import ipywidgets as widgets

    kind = type(control).__name__
    if isinstance(control, (widgets.IntSlider, widgets.BoundedIntText)):
        values = list(range(control.min, control.max + 1, control.step))
        labels = [str(v) for v in values]
        default = values.index(control.value)
    elif hasattr(control, "_options_values"):   # SelectionSlider, Dropdown, ToggleButtons, ...
        values = list(control._options_values)
        labels = [str(label) for label in control._options_labels]
        default = control.index
    else:
        raise NotImplementedError(f"no static form for a {kind} ({name})")
    return {"name": name, "kind": kind, "label": control.description or name,
            "labels": labels, "values": values, "default": default}


def thin(controls: list[dict], required: list[list[int]]) -> list[list[int]]:
    """The option indices drawn for each control: all of them while the grid is small.

    A slider (never a button or a list) of more than MAX_VALUES values, then the slider of most
    drawn values while the product exceeds MAX_FRAMES, keeps only every k-th value of its range
    (k = 2, 4, 8, ...: both ends when they fall on the step), plus its required values: the
    default and the values a later cell of the notebook shows (`required`, indices per control).
    """
    steps = [1] * len(controls)

    def drawn(i):
        n = len(controls[i]["values"])
        keep = set(range(0, n, steps[i])) | {n - 1}
        return sorted(keep | set(required[i]))

    sliders = [i for i, c in enumerate(controls) if c["kind"].endswith("Slider")]
    for i in sliders:
        while len(range(0, len(controls[i]["values"]), steps[i])) > MAX_VALUES:
            steps[i] *= 2
    while math.prod(len(drawn(i)) for i in range(len(controls))) > MAX_FRAMES and sliders:
        i = max(sliders, key=lambda j: len(drawn(j)))
        if len(drawn(i)) <= 2:
            break
        steps[i] *= 2
    return [drawn(i) for i in range(len(controls))]


def webp(rgba) -> bytes:
    """A canvas's pixels (Agg's RGBA buffer) as lossless WebP: the kernel's PNG's pixels in
    about a third of its bytes.

    Lossless WebP at Pillow's method 1 (10-12 ms a frame here) is 18-23 KB for the course's
    live figures (about 1340 x 400-500 px), against 55-75 KB for their PNG (zlib level 1,
    course.figures); method 0 doubles the size, method 2 and up save a few percent for two
    to eight times the time. Same resolution as in the notebook (the course's 120 dpi): the
    page shows exactly the pixels the kernel shows (tests/test_site.py compares them).
    """
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.asarray(rgba)).save(buf, format="webp", **WEBP_OPTIONS)
    return buf.getvalue()


WEBP_OPTIONS = {"lossless": True, "method": 1, "quality": 10}


# --------------------------------------------------------------------------
# Running a notebook up to its widgets
# --------------------------------------------------------------------------

def _later_values(source: str, live_name: str | None, names: list[str]) -> list[dict]:
    """The keyword values of `live.update(...)` calls in a cell (literals only)."""
    import ast

    found = []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return found
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "update" and isinstance(node.func.value, ast.Name)
                and node.func.value.id == live_name):
            try:
                found.append({kw.arg: ast.literal_eval(kw.value) for kw in node.keywords
                              if kw.arg in names})
            except ValueError:
                continue
    return found


def _live_name(source: str) -> str | None:
    import ast

    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "with_controls"
                and node.args and isinstance(node.args[0], ast.Name)):
            return node.args[0].id
    return None


def widget_cells(nb) -> list[int]:
    """Indices (among code cells) of the cells whose stored output is a widget."""
    mime = "application/vnd.jupyter.widget-view+json"
    code = [c for c in nb.cells if c.cell_type == "code"]
    return [k for k, c in enumerate(code) if any(mime in o.get("data", {}) for o in c.outputs)]


def run_up_to_widgets(path: Path):
    """Run the notebook's code cells up to its last widget cell: [(cell index, live, controls)]."""
    import nbformat
    from IPython.core.interactiveshell import InteractiveShell

    import course.live

    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    wanted = widget_cells(nb)
    if not wanted:
        return nb, []
    recorded = []
    original = course.live.with_controls

    def recording(live, **controls):
        recorded.append((live, controls))
        return original(live, **controls)

    course.live.with_controls = course.live.interactive = recording
    os.chdir(path.parent)
    shell = InteractiveShell.instance()
    found = []
    for k, cell in enumerate(code[: wanted[-1] + 1]):
        before = len(recorded)
        with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):  # its prints
            result = shell.run_cell(cell.source, store_history=False, silent=True)
        if not result.success and "raises-exception" not in cell.metadata.get("tags", []):
            raise RuntimeError(f"{path.name}: code cell {k + 1} failed: "
                               f"{result.error_before_exec or result.error_in_exec!r}")
        if k in wanted:
            if len(recorded) != before + 1:
                raise RuntimeError(f"{path.name}: widget cell {k + 1} made "
                                   f"{len(recorded) - before} with_controls calls, not one")
            found.append((k, *recorded[-1]))
    return nb, found


def draw_notebook(path: Path, out: Path, key: str) -> dict:
    """Draw every frame of one notebook into out/ (PNGs named by their hash, and frames.json)."""
    from course.describe import describe as figure_in_words

    start = time.perf_counter()
    nb, found = run_up_to_widgets(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    out.mkdir(parents=True, exist_ok=True)
    widgets_out, files = [], set()
    for k, live, controls in found:
        described = [describe(name, c) for name, c in controls.items()]
        names = [c["name"] for c in described]
        later = _later_values(code[k + 1].source, _live_name(code[k].source), names) \
            if k + 1 < len(code) else []
        required = [[c["default"]] + [c["values"].index(v[c["name"]]) for v in later
                                      if v.get(c["name"]) in c["values"]] for c in described]
        drawn = thin(described, required)
        frames, size = {}, None
        # render() draws the frame and hands the canvas to _encode(), which makes the PNG the
        # kernel sends; here the same pixels are encoded once, as WebP, instead (PNG encoding
        # is three quarters of render()'s time).
        frame: list[bytes] = []
        live._encode = lambda live=live, frame=frame: frame.append(
            webp(live.fig.canvas.buffer_rgba())) or b""
        for combo in itertools.product(*drawn):
            values = {c["name"]: c["values"][i] for c, i in zip(described, combo, strict=True)}
            frame.clear()
            text, _ = live.render(**values)
            words = figure_in_words(live.fig)   # the words the kernel's widget writes too
            image = frame[0]
            size = size or list(live.fig.canvas.get_width_height())
            name = hashlib.sha256(image).hexdigest()[:20] + ".webp"
            if name not in files:
                (out / name).write_bytes(image)
                files.add(name)
            frames["-".join(map(str, combo))] = {"png": name, "text": text, "words": words}
        widgets_out.append({"cell": k, "controls": [
            {**{x: c[x] for x in ("name", "kind", "label", "labels", "default")},
             "values": [v if isinstance(v, (int, float, str)) else str(v) for v in c["values"]],
             "drawn": d} for c, d in zip(described, drawn, strict=True)],
            "size": size, "frames": frames})
    for live in {id(x[1]): x[1] for x in found}.values():
        del live._encode   # the class's own again
    for old in out.glob("*.webp"):
        if old.name not in files:
            old.unlink()
    manifest = {"inputs": key, "notebook": path.name, "widgets": widgets_out,
                "seconds": round(time.perf_counter() - start, 2)}
    (out / "frames.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n",
                                     encoding="utf-8")
    return manifest


def edition_of(notebook: Path) -> str:
    """"ja" for notebooks/ja/NN_topic.ipynb, "en" for notebooks/NN_topic.ipynb."""
    return "ja" if notebook.parent.name == "ja" else "en"


def _child(path: str, out: str, key: str) -> tuple[str, int, float]:
    manifest = draw_notebook(Path(path), Path(out), key)
    return path, sum(len(w["frames"]) for w in manifest["widgets"]), manifest["seconds"]


def _star(job):
    return _child(*job)


def main(argv: list[str]) -> int:
    out_root, notebooks = Path(argv[0]), [Path(p).resolve() for p in argv[1:]]
    todo = []
    for path in notebooks:
        out, key = out_root / edition_of(path) / path.stem, inputs_hash(path)
        manifest = out / "frames.json"
        old = json.loads(manifest.read_text(encoding="utf-8")) if manifest.exists() else {}
        if old.get("inputs") == key:
            continue   # drawn from these very inputs: nothing to redraw
        todo.append((old.get("seconds", 0.0), (str(path), str(out), key)))
    if not todo:
        return 0
    todo = [job for _, job in sorted(todo, key=lambda t: -t[0])]   # the longest first
    # Import what every notebook imports once; each notebook runs in a fresh fork of this.
    os.environ.setdefault("MPLBACKEND", "agg")
    import IPython.core.interactiveshell  # noqa: F401
    import ipywidgets  # noqa: F401
    import matplotlib.pyplot  # noqa: F401
    import nbformat  # noqa: F401

    import course.live  # noqa: F401

    context = multiprocessing.get_context("fork")
    with context.Pool(WORKERS, maxtasksperchild=1) as pool:
        for path, count, seconds in pool.imap_unordered(_star, todo):
            print(f"  {Path(path).parent.name}/{Path(path).stem}: {count} frames in {seconds:.1f} s",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
