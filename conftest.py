"""pytest configuration for the whole repository: tests/ and notebooks/ alike.

A plain `pytest` from the repository root runs like `python3 dev.py test`: the options are in
pyproject.toml ([tool.pytest.ini_options] addopts: nbval), and this file gives every process
the run starts (the notebook kernels, which inherit os.environ) the deterministic environment
dev.py sets. PYTHONHASHSEED only takes effect in a process that starts after it is set: that
holds for the kernels.
"""

import os
import time
from pathlib import Path

from dev import DETERMINISTIC_ENV

os.environ.update(DETERMINISTIC_ENV)
if hasattr(time, "tzset"):  # TZ for this process too (not on Windows)
    time.tzset()


def pytest_configure(config):
    # nbval opens the sanitize file relative to the current folder; pyproject.toml names it
    # relative to the repository root, so `pytest` works from any folder of the clone.
    path = getattr(config.option, "nbval_sanitize_with", None)
    if path and not Path(path).is_absolute() and not Path(path).exists():
        config.option.nbval_sanitize_with = str(config.rootpath / path)
