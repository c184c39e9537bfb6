#!/usr/bin/env python3
"""The course's JupyterHub: set up its environment, start a hub on 127.0.0.1, make the links.

    python3 dev.py hub --setup [--lang ja]   # the hub's venv + its proxy (npm), then exit
    python3 dev.py hub [--students 3]        # a trial hub on http://127.0.0.1:8000 until Ctrl+C
    python3 dev.py hub --link [NOTEBOOK]     # the nbgitpuller link that hands out the course
    python3 dev.py hub --teacher USER        # the graded track: USER's formgrader, nbgrader's exchange
    python3 dev.py hub --limit-memory USER ...  # each student's memory cgroup (root; after a reboot too)

It and the files beside it that it imports use the standard library only, like dev.py (it runs
before any venv exists): hubenv.py (the hub's venv and proxy, `--setup`, and why a hub cannot start
here), grading.py (nbgrader on the hub: the teacher's settings, the exchange), localserver.py
(the server process: port, start, wait, stop) and accounts.py (the Unix users: the hub's service
user and its sudoers rule, the students). tests/test_hub.py and scripts/bench_hub.py import them
to start hubs of their own. hub/README.md is the teacher's guide.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote, urlencode

import accounts  # beside this file (hub/ is on sys.path): the Unix users, the sudoers rule
from grading import make_exchange, setup_teacher  # beside this file too
from hubenv import (PROXY, env_dir, env_lang, is_root, problems, setup,
                    student_cgroups_here)
from localserver import LocalServer, free_port_outside_ephemeral

HUB_DIR = Path(__file__).resolve().parent
ROOT = HUB_DIR.parent
CONFIG = HUB_DIR / "jupyterhub_config.py"
COURSE_FOLDER = "attention-notebooks"  # nbgitpuller's targetPath: every copy is ~/attention-notebooks
NOTEBOOK_03 = "notebooks/03_scaling_and_softmax_saturation.ipynb"
HUB_START_S = 120
MEM_LIMIT = str(2 * 2**30)  # bytes per process of a student's server (hub/README.md, "Limits")
STUDENT_MEMORY = "1.5G"     # all of one student's processes together (hub/README.md, "Limits")


def size_bytes(size: str) -> int:
    """'1.5G', '512M', '1600000000' -> bytes (a ValueError names anything else)."""
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    text = size.strip().upper().removesuffix("B").removesuffix("I")
    try:
        value = float(text[:-1]) * units[text[-1]] if text[-1:] in units else float(text)
    except (ValueError, IndexError):
        raise ValueError(f"size={size!r}: give bytes or a size such as 1.5G or 800M") from None
    if not 0 < value < 2**63:  # also NaN and inf
        raise ValueError(f"size={size!r}: must be more than 0 and finite")
    return int(value)


# --------------------------------------------------------------------------------------------
# The nbgitpuller link
# --------------------------------------------------------------------------------------------

def default_repo_url() -> str:
    """The public repository (the `origin` remote, as https), else this clone as file://."""
    out = subprocess.run(["git", "-C", str(ROOT), "remote", "get-url", "origin"],
                         capture_output=True, text=True)
    url = out.stdout.strip()
    if url.startswith("git@") and ":" in url:      # git@host:owner/name.git -> https://host/owner/name
        host, path = url[4:].split(":", 1)
        url = f"https://{host}/{path}"
    if url.endswith(".git") and url.startswith("http"):
        url = url[:-4]
    return url or ROOT.as_uri()


def course_link(hub_url: str, repo: str, branch: str = "main", notebook: str | None = None,
                app: str = "lab") -> str:
    """The link a student clicks: log in, get a server, get (or update) ~/attention-notebooks.

    Opens `notebook` (a path inside the repository, e.g. notebooks/03_....ipynb) in JupyterLab,
    or the course's first notebook.
    """
    notebook = notebook or "notebooks/00_start_here.ipynb"
    query = urlencode({"repo": repo, "branch": branch, "targetPath": COURSE_FOLDER,
                       "urlpath": f"{app}/tree/{COURSE_FOLDER}/{notebook}"}, quote_via=quote)
    return f"{hub_url.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def publish_course(dest: Path, branch: str = "main") -> str:
    """A bare repository at `dest` with this clone's HEAD as `branch`; returns its file:// URL.

    nbgitpuller clones and pulls it as each student, so it sits in a folder every user can read.
    """
    subprocess.run(["git", "init", "--quiet", "--bare", str(dest)], check=True)
    subprocess.run(["git", "-C", str(ROOT), "push", "--quiet", str(dest), f"HEAD:refs/heads/{branch}"],
                   check=True)
    subprocess.run(["git", "-C", str(dest), "symbolic-ref", "HEAD", f"refs/heads/{branch}"], check=True)
    for p in [dest, *dest.rglob("*")]:
        p.chmod(p.stat().st_mode | (0o755 if p.is_dir() else 0o644))
    return dest.as_uri()


# --------------------------------------------------------------------------------------------
# A hub process
# --------------------------------------------------------------------------------------------

class Hub(LocalServer):
    """JupyterHub (jupyterhub_config.py) on 127.0.0.1 with free ports and its own state folder,
    run as the service user `hub_user` (accounts.create_hub_user), with PAM logins for `users`.

    `settings`: more AN_HUB_* variables for jupyterhub_config.py (AN_HUB_CULL_IDLE_S=...).
    """

    name = "JupyterHub"
    no_log = "(no hub log)"
    log_lines = 60
    log_mode = "w"
    start_s = HUB_START_S
    port_attempts = 1      # the port is the teacher's (--port) or free; a taken one fails
    stop_s = 60            # the hub stops every student's server first
    die_with_parent = False

    def __init__(self, state: Path, users: list[str], hub_user: str, port: int | None = None,
                 env: Path | None = None, settings: dict | None = None):
        self.state = state
        self.users = users
        self.hub_user = hub_user
        self.settings = dict(settings or {})
        self.env = env or env_dir()
        # Its three ports below the ephemeral range, as each student's server's: a port found
        # with a bind to port 0 was once taken, before the hub bound it, by a kernel's ZeroMQ
        # socket of another test (the proxy got ZeroMQ's greeting from the hub's API port)
        ports = [port] if port else []
        while len(ports) < 3:
            ports.append(free_port_outside_ephemeral(avoid=ports))
        self.hub_port, self.proxy_api_port = ports[1:]
        super().__init__(state / "jupyterhub.log", ports[0])

    @property
    def url(self) -> str:
        return self.base

    def command(self) -> list[str]:
        return [str(self.env / "bin" / "jupyterhub"), "-f", str(CONFIG)]

    def cwd(self) -> Path:
        return self.state

    def environ(self) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "PYTHON", "VIRTUAL_ENV"))}
        env.update(AN_HUB_ENV=str(self.env), AN_HUB_STATE=str(self.state),
                   AN_HUB_PORT=str(self.port), AN_HUB_HUB_PORT=str(self.hub_port),
                   AN_HUB_PROXY_API_PORT=str(self.proxy_api_port), AN_HUB_PROXY=str(PROXY),
                   AN_HUB_USERS=",".join(self.users), AN_HUB_AUTHENTICATOR="pam",
                   AN_HUB_COURSE_FOLDER=COURSE_FOLDER, HOME=str(self.state), USER=self.hub_user,
                   LOGNAME=self.hub_user)
        env.update({"AN_HUB_MEM_LIMIT": MEM_LIMIT, "AN_HUB_STUDENT_CGROUP": accounts.CGROUP_PARENT,
                    **self.settings})
        env["PATH"] = os.pathsep.join([str(self.env / "bin"), env.get("PATH", "/usr/bin:/bin")])
        return env

    def answers(self) -> bool:
        with urllib.request.urlopen(f"{self.url}/hub/api/", timeout=5) as resp:
            return resp.status == 200

    def popen_kwargs(self) -> dict:
        """The service user, its own group and `shadow` (PAM), none of root's groups."""
        entry = pwd.getpwnam(self.hub_user)
        return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": ["shadow"]}

    def start(self) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        self.state.chmod(0o700)  # the cookie secret and the database: the hub's alone
        entry = pwd.getpwnam(self.hub_user)
        os.chown(self.state, entry.pw_uid, entry.pw_gid)
        super().start()

    def processes(self) -> list[int]:
        """The hub and every process under it (its proxy, the idle culler, sudo while it runs)."""
        if not self.proc or self.proc.poll() is not None:
            return []
        children: dict[int, list[int]] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(stat.parent.name))
        found, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo.extend(children.get(pid, []))
        return found

    def own_pids(self) -> list[int]:
        """The hub and its proxy (the students' servers run as the students: see accounts.pids_of_uid)."""
        pids = [self.proc.pid] if self.proc and self.proc.poll() is None else []
        with contextlib.suppress(OSError, ValueError):
            pid = int((self.state / "proxy.pid").read_text())
            os.kill(pid, 0)
            pids.append(pid)
        return pids

    def stop(self) -> None:
        """SIGTERM: the hub stops every student's server and its proxy; then kill what is left."""
        proxy = None
        with contextlib.suppress(OSError, ValueError):
            proxy = int((self.state / "proxy.pid").read_text())
        super().stop()
        if proxy is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proxy, signal.SIGTERM)


# --------------------------------------------------------------------------------------------
# The trial hub (python3 dev.py hub)
# --------------------------------------------------------------------------------------------

def _interrupt(*_):
    raise KeyboardInterrupt


def _trial(args) -> int:
    if not is_root():  # a hub whose students are all one Unix user is no class hub
        raise SystemExit("cannot start the class hub: not root (a Unix user per student, the "
                         "hub's service user and its sudoers rule): sudo python3 dev.py hub")
    env = setup(args.lang)
    reasons = problems()
    if reasons:
        raise SystemExit("cannot start the class hub: " + "; ".join(reasons))
    memory = _student_memory(args)
    why_not = student_cgroups_here()
    if why_not:   # a trial still runs, with the limit per process; a class gets TLJH's or ours
        print(f"Note: no memory limit for each student as a whole in this trial: {why_not}. "
              f"Each process is still limited to {int(MEM_LIMIT) / 2**30:g}G of address space "
              "(hub/README.md, 'Limits').", flush=True)
        memory = None
    tmp = Path(tempfile.mkdtemp(prefix="an-hub-trial-"))
    tmp.chmod(0o755)  # the students clone the course from here
    names = [f"{accounts.STUDENT_PREFIX}{k}" for k in range(1, args.students + 1)]
    teacher = f"{accounts.TEACHER_PREFIX}trial"  # the graded track's formgrader
    hub_user, group = f"{accounts.HUB_USER_PREFIX}trial", f"{accounts.CLASS_GROUP_PREFIX}trial"
    passwords = {name: accounts.new_password() for name in [*names, teacher]}
    created: list[str] = []
    hub = None
    hub_user_made = False
    try:
        repo = publish_course(tmp / "course.git")
        for name in [*names, teacher, hub_user]:
            try:
                pwd.getpwnam(name)
                raise SystemExit(f"a user {name} exists already (an earlier trial?); remove it "
                                 f"with `userdel -r {name}`")
            except KeyError:
                pass
        accounts.create_hub_user(hub_user, group, env)
        hub_user_made = True
        for name in [*names, teacher]:
            accounts.create_student(name, trust=[tmp / "course.git"], group=group,
                                    password=passwords[name], memory=memory)
            created.append(name)
        course = setup_teacher(teacher)
        make_exchange(tmp / "exchange", teacher)
        hub = Hub(tmp / "state", [*names, teacher], hub_user, port=args.port, env=env,
                  settings={"AN_NBGRADER_EXCHANGE": str(tmp / "exchange"),
                            **({"AN_HUB_STUDENT_CGROUP": ""} if why_not else {})})
        hub.start()
        link = course_link(hub.url, repo)
        print(f"\nJupyterHub is running on {hub.url} as the user {hub_user} (log: {hub.log_path}).\n"
              + ("" if why_not else f"Each student's processes together may use "
                 f"{args.student_memory} of memory, each process {int(MEM_LIMIT) / 2**30:g}G of "
                 "address space (hub/README.md, Limits).\n")
              + "Each student's login (printed only now; PAM checks the Unix password):\n"
              + "".join(f"  {name}  {passwords[name]}\n" for name in names)
              + f"The teacher's login, for the graded track (nbgrader's formgrader):\n"
              f"  {teacher}  {passwords[teacher]}\n"
              "Each is a Unix user of their own, removed again when you stop the hub.\n"
              f"\nThe course for a student (opens the first notebook):\n  {link}\n"
              f"Notebook 03 only:\n  {course_link(hub.url, repo, notebook=NOTEBOOK_03)}\n"
              f"\nThe graded track: the teacher opens the course link too, then writes the course "
              f"folder in a terminal of their JupyterLab:\n"
              f"  python ~/{COURSE_FOLDER}/scripts/classroom.py assignments {course}\n"
              f"and grades in the formgrader, in a tab of its own:\n  {hub.url}/user/{teacher}/formgrader\n"
              f"Students fetch and submit in JupyterLab's Assignments panel (menu Nbgrader, Assignment List).\n"
              f"\nStop with Ctrl+C.", flush=True)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # all end in the cleanup below,
            signal.signal(sig, _interrupt)                          # even if SIGINT was ignored
        while hub.proc.poll() is None:
            time.sleep(1)
        print(f"JupyterHub exited with {hub.proc.returncode}:\n{hub.log_tail()}")
        return 1
    except KeyboardInterrupt:
        print("\nStopping the hub and removing the students ...", flush=True)
        return 0
    finally:
        if hub is not None:
            hub.stop()
        for name in created:
            accounts.remove_student(name)
        if hub_user_made:
            accounts.remove_hub_user(hub_user, group)
        shutil.rmtree(tmp, ignore_errors=True)


def _student_memory(args) -> int:
    try:
        return size_bytes(args.student_memory)
    except ValueError as exc:
        raise SystemExit(f"--student-memory: {exc}") from None


def limit_memory(args) -> int:
    """--limit-memory USER ...: each user's own memory cgroup, made or its limit changed."""
    if not is_root():
        raise SystemExit("--limit-memory needs root (the cgroups are root's)")
    memory = _student_memory(args)
    for tool in ("cgcreate", "cgset"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} not found: install the Debian package cgroup-tools")
    for name in args.limit_memory:
        try:
            path = accounts.limit_student_memory(name, memory)
        except (ValueError, RuntimeError) as exc:
            raise SystemExit(f"--limit-memory: {exc}") from None
        print(f"{name}: all their processes on the hub together may use {args.student_memory} "
              f"({path})")
    print("A cgroup lasts until the machine restarts: run this again after a reboot, before "
          "the hub starts.")
    return 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python3 dev.py hub", description=__doc__.splitlines()[0])
    ap.add_argument("--setup", action="store_true", help="set up the hub's venv and proxy, then exit")
    ap.add_argument("--lang", choices=["en", "ja"], help="JupyterLab's language for every student "
                    "(ja installs jupyterlab-language-pack-ja-JP and makes ja_JP the default)")
    ap.add_argument("--students", type=int, default=3, help="trial: how many students (default 3)")
    ap.add_argument("--port", type=int, default=8000, help="trial: the hub's port (default 8000)")
    ap.add_argument("--link", nargs="?", const="", metavar="NOTEBOOK",
                    help="print the nbgitpuller link for the course (or for NOTEBOOK, a path such "
                         "as notebooks/03_scaling_and_softmax_saturation.ipynb) and exit")
    ap.add_argument("--teacher", metavar="USER", help="the graded track on a class server: set "
                    "up the Unix user USER (a user of the hub) as the teacher (its ~/.jupyter: the "
                    "formgrader, ~/course) and make nbgrader's exchange (--exchange), then exit")
    ap.add_argument("--exchange", type=Path, default=Path(os.environ.get(
        "AN_NBGRADER_EXCHANGE", "/srv/nbgrader/exchange")), help="--teacher: nbgrader's exchange "
        "folder (default: AN_NBGRADER_EXCHANGE, else /srv/nbgrader/exchange)")
    ap.add_argument("--limit-memory", nargs="+", metavar="USER", help="give each Unix user USER "
                    "(a student of the hub) a memory cgroup of their own, limited to "
                    "--student-memory for all their processes together, then exit (root; again "
                    "after every reboot)")
    ap.add_argument("--student-memory", default=STUDENT_MEMORY, metavar="SIZE",
                    help=f"memory for all of one student's processes together (default "
                         f"{STUDENT_MEMORY}): the trial's students and --limit-memory")
    ap.add_argument("--hub-url", default="http://127.0.0.1:8000", help="--link: the hub's address")
    ap.add_argument("--repo", help="--link: the course's git URL (default: the origin remote)")
    ap.add_argument("--branch", default="main", help="--link: the branch (default main)")
    args = ap.parse_args(argv)
    if args.link is not None:
        repo = args.repo or default_repo_url()
        if repo.startswith("file:"):
            print("(no `origin` remote: this link points at this clone, which only this machine "
                  "can reach; for a class pass --repo https://<host>/<owner>/attention-notebooks)",
                  file=sys.stderr)
        print(course_link(args.hub_url, repo, args.branch, args.link or None))
        return 0
    if args.limit_memory:
        return limit_memory(args)
    if args.teacher:
        if not is_root():
            raise SystemExit("--teacher needs root (the teacher's home, the exchange folder)")
        try:
            course = setup_teacher(args.teacher)
        except KeyError:
            raise SystemExit(f"no Unix user {args.teacher!r}: make the teacher's account first "
                             "(on TLJH: jupyter-<name>, after their first login)") from None
        folder = make_exchange(args.exchange, args.teacher)
        print(f"{args.teacher} is the teacher: their course folder is {course} (put it there: "
              f"hub/README.md, 'The graded track on the hub'), their formgrader at "
              f"/user/<their hub name>/formgrader once their server is started again.\n"
              f"nbgrader's exchange: {args.exchange} (mode 1777), the course's folder {folder} "
              f"owned by {args.teacher}.")
        return 0
    if args.setup:
        env = setup(args.lang)
        print(f"The hub's venv is {env} (language: {env_lang(env)}); start a trial hub with "
              "`python3 dev.py hub`.")
        return 0
    return _trial(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
