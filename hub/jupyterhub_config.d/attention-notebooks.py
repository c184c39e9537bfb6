"""The course's part of a JupyterHub configuration: the one file a teacher installs into any hub.

- The Littlest JupyterHub: copy it to /opt/tljh/config/jupyterhub_config.d/ (TLJH loads every
  .py there after its own settings) and `sudo tljh-config reload`.
- Zero to JupyterHub: its text under `hub.extraConfig.attention-notebooks` in config.yaml.
- This repository's one-machine hub (hub/jupyterhub_config.py, which the trial, tests/test_hub.py
  and the benchmark start) loads this same file.

What it sets: each student's kernel imports the course from the student's own copy
(PYTHONPATH=~/attention-notebooks, the nbgitpuller link's targetPath), one click from the link to
the notebook (implicit spawn), JupyterLab, spawn timeouts for a class that logs in at once,
kernels over Unix sockets (no port to race for).
(Who may log in is the hub's own setting: TLJH's `auth.type`, Zero to JupyterHub's `hub.config`,
hub/jupyterhub_config.py's AN_HUB_AUTHENTICATOR. A file loaded with load_subconfig, as this one
is, cannot see those, so the refusal of a shared login lives in hub/jupyterhub_config.py.)
"""

import os
import pwd

# The configuration, c: JupyterHub's loader (load_subconfig: TLJH, hub/jupyterhub_config.py) and
# Zero to JupyterHub (exec() of hub.extraConfig in its own jupyterhub_config.py) both run this file
# with c defined. There get_config is the chart's own, which takes a key: do not call it.
if "c" not in globals():
    c = get_config()  # noqa: F821  (JupyterHub's loader defines get_config)

COURSE_FOLDER = os.environ.get("AN_HUB_COURSE_FOLDER", "attention-notebooks")
def course_root(spawner) -> str:
    """The student's own copy of the course: ~/<targetPath of the nbgitpuller link>.

    The home is the spawner's own (SimpleLocalProcessSpawner), else the one of the student's Unix
    user (TLJH's spawner runs student `x` as `jupyter-x`, its username_template), else the home of
    the docker-stacks images Zero to JupyterHub runs (the student is not a user of the hub's pod).
    """
    home = getattr(spawner, "home_dir", None)
    if not home:
        template = getattr(spawner, "username_template", "{USERNAME}")
        unix_name = template.format(USERNAME=spawner.user.name, USERID=spawner.user.id)
        try:
            home = pwd.getpwnam(unix_name).pw_dir
        except KeyError:
            home = "/home/jovyan"
    return os.path.join(home, COURSE_FOLDER)


# The notebooks import attention_core and course/ from the root of the copy they live in.
c.Spawner.environment.update({"PYTHONPATH": course_root})
# A student who clicks the course link with no server running starts one without a further
# click on "Launch Server" (the hub's page redirects itself after this many seconds).
c.JupyterHub.implicit_spawn_seconds = 1
c.Spawner.default_url = "/lab"
# A class logs in at the same time: on a small machine 20 servers starting at once take more
# than the default 60 s (start) and 30 s (first answer).
c.Spawner.start_timeout = 300
c.Spawner.http_timeout = 300
# Each kernel talks to its server over Unix sockets in the student's own runtime folder (mode
# 700), not TCP ports: jupyter_client finds five ports free and the kernel binds them later; with
# 30 students starting on one machine another kernel took one in between ("Address already in
# use": the kernel died; benchmark item 7). No port, no race, and no other user reaches them.
# ServerKernelManager: the kernels the server starts for its notebooks, and no other. The
# graded track's autograde (nbgrader, through nbclient) starts kernels of its own in the
# teacher's server; with every KernelManager on ipc those get a relative socket path
# ("kernel-ipc-N") in the graded notebook's folder while their client looks in the server's,
# and never answer ("Kernel didn't respond in 60 seconds"). They stay on TCP.
c.Spawner.args.append("--ServerKernelManager.transport=ipc")
