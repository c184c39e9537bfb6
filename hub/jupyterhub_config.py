"""JupyterHub for a class on one server: each student logs in with a login of their own, gets
their own server running as their own Unix user, with a memory limit, and their own copy of the
course from an nbgitpuller link; idle servers are stopped.

`python3 dev.py hub` (a trial hub on 127.0.0.1), tests/test_hub.py and scripts/bench_hub.py start
JupyterHub with this file, which loads jupyterhub_config.d/attention-notebooks.py (the course's
part, the file TLJH and Zero to JupyterHub install). On a server of your own, install both
(hub/README.md says how) and set the AN_HUB_* variables below.

What it sets up:

- everything listens on 127.0.0.1 (the hub, its proxy, every student's server and kernel);
  a real server puts TLS in front (TLJH and Zero to JupyterHub do that for you);
- a login of one's own: AN_HUB_AUTHENTICATOR (pam: the students' Unix passwords); without it the
  hub refuses to start, and never with a shared password;
- an unprivileged hub: JupyterHub and its proxy run as an ordinary service user (not root), in the
  groups `shadow` (PAM reads /etc/shadow) and no other; sudospawner starts each student's server
  as that student, through one sudoers rule (`python3 dev.py hub` writes it; hub/README.md);
- each student is a Unix user of their own: their server and kernels run as that user, in a home
  folder only they can read (mode 700);
- limits: all of a student's processes together (the server, every kernel) use at most the
  limit of their own memory cgroup, memory:AN_HUB_STUDENT_CGROUP/<student>, which root makes for
  each student (`sudo python3 dev.py hub --limit-memory ...`); without one the student's server
  does not start, and without the parent the hub does not (AN_HUB_STUDENT_CGROUP empty: no such
  limit). Beyond it the largest of them, a kernel, is stopped. And every process may map at most
  AN_HUB_MEM_LIMIT (RLIMIT_AS: an allocation beyond it raises MemoryError in that kernel alone);
  jupyterhub-idle-culler stops a server idle for AN_HUB_CULL_IDLE_S seconds;
- the graded track: nbgrader's exchange at AN_NBGRADER_EXCHANGE (hub/nbgrader_config.py);
- the environment every student runs is one venv (AN_HUB_ENV, installed by
  `python3 dev.py hub --setup` from hub/requirements-hub.txt). The course is NOT installed in
  it: PYTHONPATH points each student's kernel at their own copy, ~/attention-notebooks.
"""

import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821  (JupyterHub defines get_config when it loads this file)

HERE = Path(__file__).resolve().parent
ENV = Path(os.environ.get("AN_HUB_ENV", sys.prefix))  # the students' environment
STATE = Path(os.environ.get("AN_HUB_STATE", ".")).resolve()  # db, cookie secret, pid files
COURSE_FOLDER = os.environ.get("AN_HUB_COURSE_FOLDER", "attention-notebooks")
MEM_LIMIT = os.environ.get("AN_HUB_MEM_LIMIT", "2G")          # per process of a student's server
CULL_IDLE_S = int(os.environ.get("AN_HUB_CULL_IDLE_S", "3600"))  # a lecture's length
CULL_EVERY_S = int(os.environ.get("AN_HUB_CULL_EVERY_S", str(max(1, min(300, CULL_IDLE_S // 2)))))

# --- network: 127.0.0.1 only ------------------------------------------------------------------
c.JupyterHub.ip = "127.0.0.1"  # the proxy's public side
c.JupyterHub.port = int(os.environ.get("AN_HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ.get("AN_HUB_HUB_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{os.environ.get('AN_HUB_PROXY_API_PORT', '8001')}"
c.ConfigurableHTTPProxy.command = [
    os.environ.get("AN_HUB_PROXY", str(HERE / "node_modules" / ".bin" / "configurable-http-proxy"))]
c.Spawner.ip = "127.0.0.1"  # each student's server (on a free port below the ephemeral range)

# --- state: nothing written next to this file -------------------------------------------------
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")

# --- who may log in: a login of one's own -----------------------------------------------------
# An authenticator that lets anyone in, or everyone with one password, is not for a class.
SHARED_LOGINS = ("dummy", "null", "shared")


AUTHENTICATOR = os.environ.get("AN_HUB_AUTHENTICATOR", "")
if not AUTHENTICATOR or any(word in AUTHENTICATOR.lower() for word in SHARED_LOGINS):
    problem = (f"AN_HUB_AUTHENTICATOR={AUTHENTICATOR} gives no login of one's own" if AUTHENTICATOR
               else "no authenticator is configured (AN_HUB_AUTHENTICATOR is not set)")
    raise SystemExit(
        f"attention-notebooks: refusing to start a class hub: {problem}. Give every student a "
        "login of their own: set AN_HUB_AUTHENTICATOR=pam (the students' Unix passwords), or "
        "nativeauthenticator, firstuseauthenticator or your institution's OAuthenticator "
        "(installed into the hub's venv). See hub/README.md, 'Before a real class'.")
c.JupyterHub.authenticator_class = os.environ["AN_HUB_AUTHENTICATOR"]
# pam as the unprivileged service user: reads /etc/shadow through the group `shadow`; opening
# PAM sessions would need root, and JupyterHub does not by default.
c.PAMAuthenticator.open_sessions = False
students = sorted(u for u in os.environ.get("AN_HUB_USERS", "").split(",") if u)
if students:
    c.Authenticator.allowed_users = set(students)
admins = {u for u in os.environ.get("AN_HUB_ADMINS", "").split(",") if u}
if admins:
    c.Authenticator.admin_users = admins

# --- every student their own server, as their own Unix user, started through sudo -------------
# The hub is not root: sudospawner runs `sudo -u <student> <ENV>/bin/sudospawner`, which starts
# <ENV>/bin/sudospawner-singleuser (hub/sudospawner-singleuser, installed by --setup): the memory
# limit, PYTHONPATH to the student's copy (the mediator drops the hub's PYTHONPATH), then
# jupyterhub-singleuser.
# ClassSudoSpawner (hub/classspawner.py) is sudospawner with each server's port chosen below the
# ephemeral range, where no kernel's socket can take it before the server binds it.
sys.path.insert(0, str(HERE))
c.JupyterHub.spawner_class = "classspawner.ClassSudoSpawner"
c.SudoSpawner.sudospawner_path = str(ENV / "bin" / "sudospawner")

# AN_HUB_STUDENT_CGROUP (default attention-notebooks; empty: no limit per student), read by
# accounts.py, which makes the students' cgroups under it, so that both agree
from accounts import CGROUP_MEMORY, CGROUP_PARENT  # noqa: E402  (beside this file)
from hubctl import size_bytes  # noqa: E402  ('2G' -> bytes)
STUDENT_CGROUP = CGROUP_PARENT

# Each student's memory cgroup is root's to make (hub/accounts.py); the hub only checks that the
# class's parent cgroup is there, and sudospawner-singleuser that the student's own is.
if STUDENT_CGROUP and not (CGROUP_MEMORY / STUDENT_CGROUP).is_dir():
    raise SystemExit(
        f"attention-notebooks: refusing to start a class hub: no memory cgroup "
        f"{CGROUP_MEMORY / STUDENT_CGROUP} for the students' limits. Make every student's with "
        "`sudo python3 dev.py hub --limit-memory USER ...` (cgroup v1's memory controller, "
        "Debian package cgroup-tools), or set AN_HUB_STUDENT_CGROUP= (empty) to limit each "
        "process only. See hub/README.md, 'Limits'.")

c.Spawner.environment = {
    # `python`, `pip` and `jupyter` in a student's terminal and `!pip` in a notebook: the course env
    "PATH": os.pathsep.join([str(ENV / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]),
    # read by sudospawner-singleuser
    "AN_HUB_MEM_LIMIT_BYTES": str(size_bytes(MEM_LIMIT)),
    "AN_HUB_STUDENT_CGROUP": STUDENT_CGROUP,
    "AN_HUB_COURSE_FOLDER": COURSE_FOLDER,
}
# The graded track's exchange (hub/nbgrader_config.py reads it; /srv/nbgrader/exchange if unset)
if os.environ.get("AN_NBGRADER_EXCHANGE"):
    c.Spawner.environment["AN_NBGRADER_EXCHANGE"] = os.environ["AN_NBGRADER_EXCHANGE"]

# --- idle servers are stopped -----------------------------------------------------------------
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": [sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={CULL_IDLE_S}",
                f"--cull-every={CULL_EVERY_S}"],
}]
c.JupyterHub.load_roles = [{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]

# --- the course's part: the file TLJH and Zero to JupyterHub install (and the refusal) --------
load_subconfig(str(HERE / "jupyterhub_config.d" / "attention-notebooks.py"))  # noqa: F821
