"""The course's hub snippet (hub/jupyterhub_config.d/attention-notebooks.py) as The Littlest
JupyterHub and Zero to JupyterHub load it: the same settings as on this repository's own hub.

tests/test_hub.py runs a real hub that loads the snippet through hub/jupyterhub_config.py. This
file loads it the other two ways (tests/hub_snippet_probe.py, with the hub's Python and its
JupyterHub): what is not tested is a real TLJH or Kubernetes installation.
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest
from required import require

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hub"))
import hubctl  # noqa: E402

pytestmark = [pytest.mark.hub, pytest.mark.own_venv]   # the hub's venv

SNIPPET = ROOT / "hub" / "jupyterhub_config.d" / "attention-notebooks.py"
SAME_EVERYWHERE = {"args": ["--ServerKernelManager.transport=ipc"], "default_url": "/lab",
                   "start_timeout": 300, "http_timeout": 300, "implicit_spawn_seconds": 1}


def test_the_snippet_as_tljh_and_zero_to_jupyterhub_load_it(tmp_path):
    python = hubctl.env_dir() / "bin" / "python"
    require(None if python.exists() else f"no hub venv at {python.parent.parent} "
            "(sudo python3 dev.py hub --setup)", "REQUIRE_HUB", "the snippet cannot be loaded")
    user = pwd.getpwuid(os.getuid())
    run = subprocess.run([str(python), str(ROOT / "tests" / "hub_snippet_probe.py"), str(SNIPPET),
                          str(tmp_path), user.pw_name], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    # TLJH: student ada is the Unix user jupyter-ada (here: this test's own user's home)
    assert seen["tljh"] == {**SAME_EVERYWHERE,
                            "pythonpath": os.path.join(user.pw_dir, hubctl.COURSE_FOLDER)}
    # Zero to JupyterHub: the docker-stacks home in the student's pod
    assert seen["z2jh"] == {**SAME_EVERYWHERE,
                            "pythonpath": f"/home/jovyan/{hubctl.COURSE_FOLDER}"}
