"""What the benchmark changes in the kernels it times, from outside the course's modules.

A learner who reads course/figures.py or course/live.py meets only the course; the benchmark
patches the two functions it needs from here, in its own kernels:

- item 1b (bench_nbval.py) times the notebooks at the course's former resolution (80 dpi,
  11 pt): an IPython startup file in a temporary IPYTHONDIR (`old_resolution_env`) makes
  `figures.use_course_style()` apply OLD_RESOLUTION after the course's style, in every kernel of
  that timing run only;
- item 2 (bench_widgets.py) sweeps every widget a notebook made: a cell run before the
  notebook's first (`RECORD_WIDGETS_CELL`) wraps `course.live.with_controls`, which the notebooks
  import by name after it, so that each call is recorded in `_bench_widgets` as (live figure,
  controls).

tests/test_live.py runs both on the real modules.
"""

from __future__ import annotations

from pathlib import Path

# The resolution and fonts the course had before its figures were made for a projector.
OLD_RESOLUTION = {
    "figure.dpi": 80,
    "font.size": 11,
    "axes.titlesize": 12,
    "figure.titlesize": "large",
    "xtick.labelsize": "medium",
    "ytick.labelsize": "medium",
    "legend.fontsize": "medium",
    "legend.title_fontsize": None,
}

OLD_RESOLUTION_STARTUP = f'''
import matplotlib as _matplotlib
from course import figures as _figures


def _old_resolution(use_course_style):
    def old_resolution_style():
        use_course_style()
        _matplotlib.rcParams.update({OLD_RESOLUTION!r})
    return old_resolution_style


_figures.use_course_style = _old_resolution(_figures.use_course_style)
'''


def old_resolution_env(ipython_dir: Path, env: dict) -> dict:
    """`env` for kernels that draw at OLD_RESOLUTION: IPYTHONDIR=ipython_dir (a new folder)."""
    startup = ipython_dir / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-old-resolution.py").write_text(OLD_RESOLUTION_STARTUP, encoding="utf-8")
    return dict(env, IPYTHONDIR=str(ipython_dir))


RECORD_WIDGETS_CELL = r'''
import course.live as _live

_bench_widgets = []   # (LiveFigure, {keyword: control}) of every with_controls() call, in order


def _recording(with_controls):
    def recording_with_controls(live, **controls):
        box = with_controls(live, **controls)
        _bench_widgets.append((live, controls))
        return box
    return recording_with_controls


_live.with_controls = _recording(_live.with_controls)
'''
