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

from dev import DETERMINISTIC_ENV

os.environ.update(DETERMINISTIC_ENV)
if hasattr(time, "tzset"):  # TZ for this process too (not on Windows)
    time.tzset()


def _start_a_kernel_once_more_if_it_does_not_answer() -> None:
    """nbval starts one kernel per notebook. On a busy machine (CI: browsers, servers, a hub and
    their kernels starting at once) a kernel now and then never answers: the TCP port that
    jupyter_client chose was taken before the kernel could bind it (treebeardtech/nbmake#129),
    and nbval then fails every cell of that notebook after 60 s. Start it once more in that case;
    a notebook whose kernel fails twice still fails."""
    try:
        import nbval.kernel as nbval_kernel
    except ImportError:   # nbval is test tooling (requirements-test.txt)
        return
    first_try = nbval_kernel.start_new_kernel
    if getattr(first_try, "retried", False):
        return

    def start_new_kernel(*args, **kwargs):
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


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook (requirements-test.txt)
def pytest_xdist_make_scheduler(config, log):
    """With `--dist loadfile` (pyproject.toml): one work unit per notebook, one per test elsewhere.

    The cells of a notebook share one kernel and depend on each other, so they must run in order
    in one worker, which loadfile guarantees. Test modules need no such thing, and one of them,
    the browser test, takes most of the serial time: as a single unit it would keep one worker
    busy while the other idles. (`--dist loadgroup` with xdist_group marks would say the same,
    but with pytest 9.2 it silently stops grouping: pytest-dev/pytest-xdist#1386.)
    """
    if config.getoption("dist") != "loadfile":
        return None  # any other --dist given on the command line is honoured as it is
    from xdist.scheduler import LoadScopeScheduling

    class NotebookScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if path.endswith(".ipynb") else nodeid

    return NotebookScheduling(config, log)
