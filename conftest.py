"""pytest configuration for the whole repository: tests/ and notebooks/ alike.

A plain `pytest` from the repository root runs like `python3 dev.py test`: the options are in
pyproject.toml ([tool.pytest.ini_options] addopts: nbval, xdist), and this file gives every
process of the run (this one, the xdist workers and the notebook kernels they start, which
inherit os.environ) the deterministic environment dev.py sets. PYTHONHASHSEED only takes effect
in a process that starts after it is set: that holds for the workers and the kernels.
"""

import os
import sys
import time
from pathlib import Path

import pytest

from dev import DETERMINISTIC_ENV, TEST_THREADS, simd_env

os.environ.update(DETERMINISTIC_ENV)
os.environ.update(simd_env(sys.executable))   # numpy's AVX2 loops on every CPU (dev.py)
# Every kernel of a test run (nbval's, the instructor key's, the browser's and Voila's) computes
# with ONE BLAS thread, while `dev.py regenerate` stores the outputs with the default count (one
# per core, 2 on the course's machine): so strict nbval itself checks that no printed number
# depends on the thread count, and no notebook is executed a second time for that
# (tests/test_thread_counts.py). One thread per kernel also keeps the xdist workers' kernels
# from competing for the same cores.
os.environ.update(TEST_THREADS)
if hasattr(time, "tzset"):  # TZ for this process too (not on Windows)
    time.tzset()


COLOUR_CHECK_ENV = "COURSE_CHECK_COLOURS"   # course.colour_check.ENV (not imported: no matplotlib here)


def _start_a_kernel_once_more_if_it_does_not_answer() -> None:
    """nbval starts one kernel per notebook. On a busy machine (CI: browsers, servers, a hub and
    their kernels starting at once) a kernel now and then never answers: the TCP port that
    jupyter_client chose was taken before the kernel could bind it (treebeardtech/nbmake#129),
    and nbval then fails every cell of that notebook after 60 s. Start it once more in that case;
    a notebook whose kernel fails twice still fails. Every kernel it starts also gets
    COURSE_CHECK_COLOURS=1: the colour check of course/colour_check.py on each figure drawn."""
    try:
        import nbval.kernel as nbval_kernel
    except ImportError:   # nbval is test tooling (requirements-test.txt)
        return
    first_try = nbval_kernel.start_new_kernel
    if getattr(first_try, "retried", False):
        return

    def start_new_kernel(*args, **kwargs):
        # every figure nbval's kernels draw is checked for colour-vision deficiency (issue 27):
        # what course/colour_check.py finds goes to stderr, an output the stored notebook lacks
        kwargs.setdefault("env", {**os.environ, COLOUR_CHECK_ENV: "1"})
        try:
            return first_try(*args, **kwargs)
        except RuntimeError as exc:   # "Kernel didn't respond in 60 seconds" (nbval logs it)
            print(f"nbval: {exc}; starting the kernel once more", file=sys.stderr)
            return first_try(*args, **kwargs)

    start_new_kernel.retried = True
    nbval_kernel.start_new_kernel = start_new_kernel


def pytest_configure(config):
    _start_a_kernel_once_more_if_it_does_not_answer()
    # nbval opens the sanitize file relative to the current folder; pyproject.toml names it
    # relative to the repository root, so `pytest` works from any folder of the clone.
    path = getattr(config.option, "nbval_sanitize_with", None)
    if path and not Path(path).is_absolute() and not Path(path).exists():
        config.option.nbval_sanitize_with = str(config.rootpath / path)


# Test files whose tests share one server or one build (module- and session-scoped fixtures: the
# class hub, the Voila server, the static site): all of a file's tests go to one worker, so a run
# starts that hub or server and builds the site once, not once per worker.
ONE_WORKER_FILES = ("tests/test_hub.py", "tests/test_present.py", "tests/test_site.py")

# The longest work first, so that the run ends with short tests on every worker instead of one
# long test on one of them while the others idle (longest-processing-time-first scheduling).
# Measured serially on the course's 2-core machine: present 65 s, site 45 s, hub 29 s, the
# instructor key 16 s, the browser test 8-11 s per notebook; the graded track's nbgrader run
# 85 s at a load average near 8, 200 s when busier (20 s of it the timeout of an endless loop);
# with 14 assignments and a fourth student (2026-12-03): 155 s at a load near 2, 245 s near 3.
LONGEST_FIRST = ("tests/test_graded.py", "tests/test_present.py", "tests/test_site.py",
                 "tests/test_hub.py", "tests/test_classroom.py", "tests/test_browser.py")


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config, items):
    """Put LONGEST_FIRST's files first, in that order; the rest keep theirs (a stable sort, so a
    notebook's cells and a file's tests stay in order). Serial runs get the same order."""
    rank = {path: k for k, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_file_of(item.nodeid), len(rank)))


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook (requirements-test.txt)
def pytest_xdist_make_scheduler(config, log):
    """With `--dist loadfile` (pyproject.toml): one work unit per notebook and per file of
    ONE_WORKER_FILES, one per test elsewhere, handed out in collection order.

    The cells of a notebook share one kernel and depend on each other, so they must run in order
    in one worker, which loadfile guarantees. Other test modules need no such thing, and one of
    them, the browser test, takes most of the serial time: as a single unit it would keep one
    worker busy while the other idles. (`--dist loadgroup` with xdist_group marks would say the
    same, but with pytest 9.2 it silently stops grouping: pytest-dev/pytest-xdist#1386.)
    """
    if config.getoption("dist") != "loadfile":
        return None  # any other --dist given on the command line is honoured as it is
    from xdist.scheduler import LoadScopeScheduling

    # xdist would hand out the units with the most tests first; keep the order set above.
    config.option.loadscopereorder = False

    class NotebookScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = _file_of(nodeid)
            return path if path.endswith(".ipynb") or path in ONE_WORKER_FILES else nodeid

    return NotebookScheduling(config, log)
