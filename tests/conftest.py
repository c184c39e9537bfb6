"""Shared pytest configuration.

With REQUIRE_NO_SKIPS=1 (set by .ci/run) a skipped test fails the run: in CI
every check is expected to execute, and a skip reported as a pass would hide
a missing install step (torch, Chromium).
"""

import os

import matplotlib
import pytest

matplotlib.use("Agg")  # tests draw figures off screen

import matplotlib.pyplot as plt  # after choosing the backend

from course import figures

figures.use_course_style()  # what every notebook's first cell does: same resolution and fonts


@pytest.fixture(autouse=True)
def _close_figures():
    """Every test starts without the figures of the tests before it."""
    yield
    plt.close("all")


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("REQUIRE_NO_SKIPS") != "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if skipped:
        reporter.write_line(f"REQUIRE_NO_SKIPS=1: {len(skipped)} test(s) were skipped:", red=True)
        for rep in skipped:
            reporter.write_line(f"  {rep.nodeid}: {rep.longrepr[-1] if isinstance(rep.longrepr, tuple) else rep.longrepr}")
        session.exitstatus = 1
