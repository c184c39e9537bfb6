"""Skip, or fail where CI requires it: the one rule for tests that need something optional.

A learner without torch, Chromium, npm, nbgrader or a hub set-up gets a skip that says what to
install; CI sets REQUIRE_TORCH, REQUIRE_BROWSER, REQUIRE_NBGRADER or REQUIRE_HUB to 1, and then the
same test fails.
"""

from __future__ import annotations

import os

import pytest

TORCH_MISSING = ("torch is not installed; install the CPU build with: "
                 ".venv/bin/pip install torch==2.13.0")


def require(reason: str | None, env_var: str, what: str, *, module_level: bool = False) -> None:
    """Nothing if reason is None; else fail when env_var=1, skip otherwise, saying why."""
    if reason is None:
        return
    if os.environ.get(env_var) == "1":
        pytest.fail(f"{env_var}=1 but {what}: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=module_level)


def torch_or_skip():
    """(torch, torch.nn.functional) for a torch cross-check module, or skip it (fail in CI)."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:  # pragma: no cover - depends on the machine
        require(TORCH_MISSING, "REQUIRE_TORCH", "the PyTorch cross-check cannot run", module_level=True)
    return torch, F
