"""JupyterHub for a class on one server: each student logs in, gets their own server running as
their own Unix user, and their own copy of the course from an nbgitpuller link.

`python3 dev.py hub` (a trial hub on 127.0.0.1), tests/test_hub.py and scripts/bench_hub.py start
JupyterHub with this file and set the AN_HUB_* variables below. On a real server, copy it (or
the parts you need) into your hub's configuration: hub/README.md says how, for The Littlest
JupyterHub and for Zero to JupyterHub.

What it sets up:

- everything listens on 127.0.0.1 (the hub, its proxy, every student's server and kernel);
  a real server puts TLS in front (TLJH and Zero to JupyterHub do that for you);
- each student is a Unix user of their own (LocalProcessSpawner): their server and kernels run
  as that user, in a home folder only they can read (mode 700);
- the environment every student runs is one venv (AN_HUB_ENV, installed by
  `python3 dev.py hub --setup` from hub/requirements-hub.txt). The course is NOT installed in
  it: PYTHONPATH points each student's kernel at their own copy, ~/attention-notebooks (the
  nbgitpuller link's targetPath), so `import attention_core` and `from course import ...` load
  the modules of the copy the student is working in.
"""

import os
import pwd
import sys
from pathlib import Path

c = get_config()  # noqa: F821  (JupyterHub defines get_config when it loads this file)

HERE = Path(__file__).resolve().parent
ENV = Path(os.environ.get("AN_HUB_ENV", sys.prefix))  # the students' environment
STATE = Path(os.environ.get("AN_HUB_STATE", ".")).resolve()  # db, cookie secret, pid files
COURSE_FOLDER = os.environ.get("AN_HUB_COURSE_FOLDER", "attention-notebooks")

# --- network: 127.0.0.1 only ------------------------------------------------------------------
c.JupyterHub.ip = "127.0.0.1"  # the proxy's public side
c.JupyterHub.port = int(os.environ.get("AN_HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ.get("AN_HUB_HUB_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{os.environ.get('AN_HUB_PROXY_API_PORT', '8001')}"
c.ConfigurableHTTPProxy.command = [
    os.environ.get("AN_HUB_PROXY", str(HERE / "node_modules" / ".bin" / "configurable-http-proxy"))]
c.Spawner.ip = "127.0.0.1"  # each student's server (on a random free port)

# --- state: nothing written next to this file -------------------------------------------------
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")

# --- who may log in ---------------------------------------------------------------------------
# The trial, the test and the benchmark use DummyAuthenticator: any listed user with the one
# shared password. A real class uses real accounts (hub/README.md): "pam" (the students' Unix
# passwords), "nativeauthenticator", "firstuseauthenticator" or an OAuth login.
c.JupyterHub.authenticator_class = os.environ.get("AN_HUB_AUTHENTICATOR", "dummy")
if c.JupyterHub.authenticator_class == "dummy":
    c.DummyAuthenticator.password = os.environ["AN_HUB_PASSWORD"]  # never an open hub
students = sorted(u for u in os.environ.get("AN_HUB_USERS", "").split(",") if u)
if students:
    c.Authenticator.allowed_users = set(students)
admins = {u for u in os.environ.get("AN_HUB_ADMINS", "").split(",") if u}
if admins:
    c.Authenticator.admin_users = admins

# --- every student their own server, as their own Unix user ----------------------------------
c.JupyterHub.spawner_class = os.environ.get("AN_HUB_SPAWNER", "localprocess")
if c.JupyterHub.spawner_class == "simple":
    # Only for trying the hub without root: every student is the same Unix user, so students
    # CAN read each other's files. Never for a class.
    c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "homes" / "{username}")
    if os.geteuid() == 0:
        c.Spawner.args = ["--ServerApp.allow_root=True"]
# A student who clicks the course link with no server running starts one without a further
# click on "Launch Server" (the hub's page redirects itself after this many seconds).
c.JupyterHub.implicit_spawn_seconds = 1
c.Spawner.cmd = [str(ENV / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
# A class logs in at the same time: on a small machine 20 servers starting at once take more
# than the default 60 s (start) and 30 s (first answer).
c.Spawner.start_timeout = 300
c.Spawner.http_timeout = 300


def course_root(spawner) -> str:
    """The student's own copy of the course: ~/<targetPath of the nbgitpuller link>."""
    home = getattr(spawner, "home_dir", None) or pwd.getpwnam(spawner.user.name).pw_dir
    return os.path.join(home, COURSE_FOLDER)


c.Spawner.environment = {
    # The notebooks import attention_core and course/ from the root of the copy they live in.
    "PYTHONPATH": course_root,
    # `python`, `pip` and `jupyter` in a student's terminal and `!pip` in a notebook: the course env
    "PATH": os.pathsep.join([str(ENV / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]),
}
