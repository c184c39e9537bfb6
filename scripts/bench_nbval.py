"""Bench item 1: strict nbval over notebooks 00-09 against their floor (and, not as a
target, at the course's figure resolution and the former one). bench.py runs it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import nbformat

from bench_hooks import old_resolution_env
from bench_report import NOTEBOOKS, ROOT, diagnostics, pytest_seconds, record


def _nbval_seconds(paths: list[Path], cwd: Path, env: dict | None = None) -> float:
    # The same options for the course and its floors: pyproject's addopts (which also run the
    # notebooks in parallel) are replaced by nbval's flags alone, one process, one kernel at a time.
    return pytest_seconds(["-o", "addopts=", "--nbval", "--nbval-current-env",
                           "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"),
                           "-p", "no:cacheprovider", "-p", "no:randomly", *map(str, paths)],
                          cwd, env, what="nbval")


def bench_resolutions(repeats: int = 2) -> None:
    """Item 1, not a target: the same nbval of 00-09 at the course's resolution and at its former
    one (80 dpi, 11 pt; an IPython startup file of bench_hooks.py applies it), back to back. Only
    the timing run's kernels see it: stored outputs are made at the course's."""
    print("1b. strict nbval over notebooks 00-09 at the course's resolution and at the old one")
    new, old = [], []
    with tempfile.TemporaryDirectory() as ipython_dir:
        old_env = old_resolution_env(Path(ipython_dir), dict(os.environ))
        for _ in range(repeats):
            new.append(_nbval_seconds(FIRST_TEN, ROOT))
            old.append(_nbval_seconds(FIRST_TEN, ROOT, env=old_env))
    print(f"  (resolution) 120 dpi / 12 pt: {min(new):.1f} s; 80 dpi / 11 pt (before): "
          f"{min(old):.1f} s; ratio {min(new) / min(old):.2f} (best of {repeats} each)")
    diagnostics.append(
        f"Item 1, resolution: strict nbval over notebooks 00-09 takes {min(new):.1f} s at the "
        f"course's 120 dpi and 12 pt, {min(old):.1f} s at the former 80 dpi and 11 pt "
        f"({min(new) / min(old):.2f} times; best of {repeats}, back to back).")


# Item 1 measures notebooks 00-09; notebooks added later that train a model or time something
# have budgets of their own.
FIRST_TEN = [p for p in NOTEBOOKS if int(p.name[:2]) <= 9]


def _write_copies(folder: Path, nb, count: int) -> list[Path]:
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    paths = []
    for i in range(count):
        path = folder / f"{i:02d}_floor.ipynb"
        nbformat.write(nb, path)
        paths.append(path)
    return paths


def _plain_floor(folder: Path, count: int) -> list[Path]:
    """The old floor: one-cell notebooks `1 + 1` (a kernel start and stop, nothing else)."""
    cell = nbformat.v4.new_code_cell("1 + 1")
    cell.execution_count = 1
    cell.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "2"},
                                           execution_count=1)]
    return _write_copies(folder, nbformat.v4.new_notebook(cells=[cell]), count)


# The floor of item 1: what every teaching notebook does before it teaches anything (its
# imports and the course's figure style: resolution, fonts incl. the Japanese one, inline
# backend settings), and one small figure like the course's, shown like theirs.
FIGURE_FLOOR_CELLS = [
    "import ipywidgets, matplotlib.pyplot as plt, numpy as np\n"
    "from course import figures\n"
    "\n"
    "figures.use_course_style()",
    "weights = np.array([[0.5, 0.3, 0.2], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])\n"
    "tokens = [\"私\", \"は\", \"猫\"]\n"
    "fig, ax = plt.subplots(figsize=(3.4, 2.6), layout=\"constrained\")\n"
    "im = ax.imshow(weights, cmap=\"Blues\", vmin=0, vmax=1)\n"
    "ax.set_xticks(range(3), tokens)\n"
    "ax.set_yticks(range(3), tokens)\n"
    "ax.set(title=\"attention weights A\", xlabel=\"key position j\", "
    "ylabel=\"query position i\")\n"
    "fig.colorbar(im, ax=ax)\n"
    "plt.show()",
]


def _figure_floor(folder: Path, count: int) -> list[Path]:
    """Notebooks of FIGURE_FLOOR_CELLS, their stored outputs from a real run (as regenerate)."""
    from nbclient import NotebookClient
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in FIGURE_FLOOR_CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    shown = [o for o in nb.cells[-1].outputs if "image/png" in o.get("data", {})]
    if len(shown) != 1 or any(o.output_type == "error" for c in nb.cells for o in c.outputs):
        raise RuntimeError(f"the figure floor did not draw one figure: {nb.cells}")
    return _write_copies(folder, nb, count)


def bench_nbval(repeats: int = 2) -> None:
    print("1. strict nbval over notebooks 00-09 vs as many figure-floor notebooks")
    count = len(FIRST_TEN)
    with tempfile.TemporaryDirectory() as tmp:
        plain, figure = Path(tmp) / "plain", Path(tmp) / "figure"
        plain.mkdir()
        figure.mkdir()
        plain_nbs = _plain_floor(plain, count)
        figure_nbs = _figure_floor(figure, count)
        plain_floor = min(_nbval_seconds(plain_nbs, plain) for _ in range(repeats))
        floor = min(_nbval_seconds(figure_nbs, figure) for _ in range(repeats))
    course = min(_nbval_seconds(FIRST_TEN, ROOT) for _ in range(repeats))
    ratio = course / floor
    record(1, f"{count} notebooks {course:.1f} s vs figure floor {floor:.1f} s",
           f"ratio {ratio:.2f}", "<= 1.5", ratio <= 1.5)
    print(f"  (floors) figure floor {floor:.1f} s; plain floor (`1 + 1`) {plain_floor:.1f} s, "
          f"so the figure floor is {floor / plain_floor:.2f} and the course "
          f"{course / plain_floor:.2f} times the plain one")
    diagnostics.append(
        f"Item 1, both floors: {count} notebooks that import what every teaching notebook "
        f"imports, apply the course's figure style and draw one small heatmap take {floor:.1f} s; "
        f"{count} one-cell `1 + 1` notebooks (the old floor) take {plain_floor:.1f} s. The course "
        f"takes {ratio:.2f} times the first and {course / plain_floor:.2f} times the second.")
