#!/usr/bin/env python3
"""The course's JupyterHub: set up its environment, start a hub on 127.0.0.1, make the links.

    python3 dev.py hub --setup [--lang ja]   # the hub's venv + its proxy (npm), then exit
    python3 dev.py hub [--students 3]        # a trial hub on http://127.0.0.1:8000 until Ctrl+C
    python3 dev.py hub --link [NOTEBOOK]     # the nbgitpuller link that hands out the course
    python3 dev.py hub --teacher USER        # the graded track: USER's formgrader, nbgrader's exchange
    python3 dev.py hub --limit-memory USER ...  # each student's memory cgroup (root; after a reboot too)

Standard library only, like dev.py (it runs before any venv exists), and the two files beside
it that it imports: localserver.py (the server process: port, start, wait, stop) and accounts.py
(the Unix users: the hub's service user and its sudoers rule, the students). tests/test_hub.py
and scripts/bench_hub.py import them to start hubs of their own. hub/README.md is the teacher's
guide.

Where things go: as root (a class server) the venv is /opt/attention-notebooks-hub/venv, outside
any home folder, because every student's Unix user must be able to run it (a venv under /root
or made from a Python under /root fails for them); as another user, hub/.venv-hub beside this
file. AN_HUB_ENV=<dir> chooses another place.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
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
from localserver import LocalServer, free_port  # beside this file too

HUB_DIR = Path(__file__).resolve().parent
ROOT = HUB_DIR.parent
CONFIG = HUB_DIR / "jupyterhub_config.py"
REQUIREMENTS = HUB_DIR / "requirements-hub.txt"
PROXY = HUB_DIR / "node_modules" / ".bin" / "configurable-http-proxy"
COURSE_FOLDER = "attention-notebooks"  # nbgitpuller's targetPath: every copy is ~/attention-notebooks
WRAPPER = HUB_DIR / "sudospawner-singleuser"  # sudospawner's hook: memory limit, PYTHONPATH
LABEXTENSION = ROOT / "labextension" / "prebuilt"   # the course's JupyterLab extension, built
NOTEBOOK_03 = "notebooks/03_scaling_and_softmax_saturation.ipynb"
JA_PACK = "jupyterlab-language-pack-ja-JP>=4.5.post3,<5"
NOTIFICATIONS = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                                   "checkForUpdates": False}}
JA_LOCALE = {"@jupyterlab/translation-extension:plugin": {"locale": "ja_JP"}}
HUB_START_S = 120
# The graded track (nbgrader, hub/README.md): its settings for everyone (hub/nbgrader_config.py),
# and which of its JupyterLab panels and server parts a student's server has. Students: the
# Assignments panel (fetch, submit, fetch feedback) and Validate. The formgrader (release,
# collect, autograde, feedback), the Create Assignment panel and the course list are the teacher's.
NBGRADER_CONFIG = HUB_DIR / "nbgrader_config.py"
COURSE_ID = "attention-notebooks"   # c.CourseDirectory.course_id of hub/nbgrader_config.py
TEACHER_LAB_ONLY = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                    "@jupyter/nbgrader:course-list")
TEACHER_SERVER_ONLY = ("nbgrader.server_extensions.formgrader",
                       "nbgrader.server_extensions.course_list")
TEACHER_TURNS_ON = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment")
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


def is_root() -> bool:
    return os.geteuid() == 0


def env_dir() -> Path:
    if os.environ.get("AN_HUB_ENV"):
        return Path(os.environ["AN_HUB_ENV"]).resolve()
    return Path("/opt/attention-notebooks-hub/venv") if is_root() else HUB_DIR / ".venv-hub"


def _stamp_path(env: Path) -> Path:
    return env / ".an-hub-installed"


def _want_stamp() -> str:
    h = hashlib.sha256()
    for path in (REQUIREMENTS, ROOT / "requirements.txt"):
        h.update(path.read_bytes())
    return h.hexdigest()


def env_lang(env: Path | None = None) -> str:
    """'ja' if the env was set up with the Japanese interface, else 'en'."""
    env = env or env_dir()
    try:
        return json.loads(_stamp_path(env).read_text()).get("lang", "en")
    except (OSError, ValueError):
        return "en"


def _others_can_run(path: Path) -> bool:
    """Every folder above `path` can be entered by other users, and `path` is readable/executable."""
    path = path.resolve()
    if not os.stat(path).st_mode & 0o005:
        return False
    return all(os.stat(p).st_mode & 0o001 for p in path.parents)


def _base_python() -> str:
    """As root: Debian's /usr/bin/python3 (its files are readable by every user); else this one."""
    if is_root() and Path("/usr/bin/python3").exists():
        out = subprocess.run(["/usr/bin/python3", "-c", "import sys; print(sys.version_info >= (3, 11))"],
                             capture_output=True, text=True)
        if out.stdout.strip() == "True":
            return "/usr/bin/python3"
    return sys.executable


@contextlib.contextmanager
def _lock(env: Path):
    """One setup at a time per env (several worktrees or test runs may share the root one)."""
    env.parent.mkdir(parents=True, exist_ok=True)
    with open(env.parent / f".{env.name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _write_overrides(env: Path, lang: str) -> Path:
    """JupyterLab defaults for every student: no news pop-up (it calls out), and the locale."""
    settings = env / "share" / "jupyter" / "lab" / "settings"
    settings.mkdir(parents=True, exist_ok=True)
    overrides = dict(NOTIFICATIONS, **(JA_LOCALE if lang == "ja" else {}))
    path = settings / "overrides.json"
    path.write_text(json.dumps(overrides, indent=2) + "\n")
    return path


def setup(lang: str | None = None, quiet: bool = False) -> Path:
    """Create/refresh the hub's venv (requirements-hub.txt, no course install) and the proxy."""
    env = env_dir()
    lang = lang or env_lang(env)
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True))
    with _lock(env):
        if not (env / "bin" / "python").exists():
            base = _base_python()
            say(f"Creating the hub's venv {env} (from {base}) ...")
            env.parent.mkdir(parents=True, exist_ok=True)
            env.parent.chmod(0o755)
            subprocess.run([base, "-m", "venv", str(env)], check=True)
        want = {"requirements": _want_stamp(), "lang": lang}
        try:
            have = json.loads(_stamp_path(env).read_text())
        except (OSError, ValueError):
            have = {}
        if have != want:
            say(f"Installing hub/requirements-hub.txt into {env} (first time: a few minutes) ...")
            pip = [str(env / "bin" / "python"), "-m", "pip", "install", "--quiet",
                   "--disable-pip-version-check"]
            subprocess.run([*pip, "-r", str(REQUIREMENTS)], check=True)
            if lang == "ja":
                subprocess.run([*pip, JA_PACK], check=True)
            elif have.get("lang") == "ja":
                subprocess.run([str(env / "bin" / "python"), "-m", "pip", "uninstall", "--quiet",
                                "-y", "jupyterlab-language-pack-ja-JP"], check=True)
            _write_overrides(env, lang)
            _stamp_path(env).write_text(json.dumps(want))
        _install_wrapper(env)
        _install_labextension(env)
        _install_nbgrader_config(env)
        if is_root() and not _others_can_run(env / "bin" / "python"):
            raise SystemExit(f"{env}/bin/python cannot be run by other users (a folder above it "
                             "is closed): the students' servers would fail. Set AN_HUB_ENV to a "
                             "folder under /opt or /srv and run --setup again.")
    lock = HUB_DIR / "package-lock.json"
    marker = HUB_DIR / "node_modules" / ".an-hub-lock"
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()
    if not PROXY.exists() or not marker.exists() or marker.read_text() != digest:
        if not shutil.which("npm"):
            raise SystemExit("npm not found: the hub's proxy (configurable-http-proxy) is an npm "
                             "package. Install Node.js 20+ with npm (Debian: apt-get install npm).")
        say("Installing configurable-http-proxy (hub/package-lock.json) ...")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HUB_DIR,
                       check=True)
        marker.write_text(digest)
    return env


def _install_labextension(env: Path) -> None:
    """The course's JupyterLab extension (labextension/: it names each slider's handle and live
    figure) where every student's JupyterLab finds a prebuilt one. The hub's venv has no course
    package to bring it (the students import their own copy of the course)."""
    name = json.loads((LABEXTENSION / "package.json").read_text())["name"]
    dest = env / "share" / "jupyter" / "labextensions" / name
    files = sorted(p.relative_to(LABEXTENSION) for p in LABEXTENSION.rglob("*") if p.is_file())
    have = sorted(p.relative_to(dest) for p in dest.rglob("*") if p.is_file()) if dest.is_dir() else []
    if not dest.is_symlink() and have == files and all(
            (dest / f).read_bytes() == (LABEXTENSION / f).read_bytes() for f in files):
        return
    if dest.is_symlink() or dest.is_file():   # (Voila refuses a file a link leads outside)
        dest.unlink()
    elif dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(LABEXTENSION, dest)
    for path in (dest, *dest.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)   # every student's server reads it


def _install_wrapper(env: Path) -> None:
    """sudospawner-singleuser beside sudospawner: what its mediator starts as the student."""
    dest = env / "bin" / WRAPPER.name
    if not dest.exists() or dest.read_bytes() != WRAPPER.read_bytes():
        shutil.copyfile(WRAPPER, dest)
    dest.chmod(0o755)


def _write_json(path: Path, update: dict) -> None:
    """Merge `update` into the JSON object at `path` (one level deep), leaving other keys."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    for key, value in update.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def _server_extension_file(config_dir: Path, name: str, on: bool) -> None:
    """What `jupyter server extension enable/disable` writes: <config>/jupyter_server_config.d/
    <name>.json. Written here because the command validates before it writes and, for --user,
    reads only the user's folder, so it refuses to turn on for one user an extension that is
    installed for the environment ("could not be found", jupyter_server 2.x)."""
    _write_json(config_dir / "jupyter_server_config.d" / f"{name}.json",
                {"ServerApp": {"jpserver_extensions": {name: on}}})


def _install_nbgrader_config(env: Path) -> None:
    """nbgrader for everyone: hub/nbgrader_config.py into the env's config, and the teacher's
    parts off at the env's level (nbgrader's installation guide, "Disabling extensions"), not
    locked, so that the teacher's ~/.jupyter turns them on again (setup_teacher)."""
    etc = env / "etc" / "jupyter"
    etc.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(NBGRADER_CONFIG, etc / "nbgrader_config.py")
    page = etc / "labconfig" / "page_config.json"
    _write_json(page, {"disabledExtensions": dict.fromkeys(TEACHER_LAB_ONLY, True)})
    data = json.loads(page.read_text())
    locked = {k: v for k, v in data.get("lockedExtensions", {}).items() if k not in TEACHER_LAB_ONLY}
    data["lockedExtensions"] = locked  # `labextension disable` locks; a lock stops the teacher's
    page.write_text(json.dumps(data, indent=2) + "\n")
    for name in TEACHER_SERVER_ONLY:
        _server_extension_file(etc, name, False)


def setup_teacher(name: str, course_dir: str = "course") -> Path:
    """The teacher's own ~/.jupyter: the formgrader and the Create Assignment panel on, and
    nbgrader's course folder ~/<course_dir> (nbgrader's "One Class, One Grader": the formgrader
    runs in the teacher's own server); the home made mode 700. Returns the course folder's path
    (not created: the teacher puts the course there, `python3 dev.py classroom assignments`)."""
    entry = pwd.getpwnam(name)
    home = Path(entry.pw_dir)
    home.chmod(0o700)   # the course folder holds the solutions; Debian's useradd makes homes 755
    config = home / ".jupyter"
    course = home / course_dir
    config.mkdir(exist_ok=True)
    (config / "nbgrader_config.py").write_text(
        "# The teacher's course folder: the formgrader and nbgrader's commands use it wherever\n"
        "# they run (hub/hubctl.py, setup_teacher). The formgrader does not read the folder's own\n"
        "# nbgrader_config.py (nbgrader reads the one of the folder it is started in, and the\n"
        "# server starts in the home): loaded here, or its feedback would show the hidden tests\n"
        "# and grading would have no cell timeout.\n"
        f"c = get_config()  # noqa: F821\nc.CourseDirectory.root = {str(course)!r}\n"
        f"load_subconfig('nbgrader_config.py', path={str(course)!r})  # noqa: F821\n")
    _write_json(config / "labconfig" / "page_config.json",
                {"disabledExtensions": dict.fromkeys(TEACHER_TURNS_ON, False)})
    _server_extension_file(config, "nbgrader.server_extensions.formgrader", True)
    for path in [config, *config.rglob("*")]:
        os.chown(path, entry.pw_uid, entry.pw_gid)
    return course


def make_exchange(root: Path, teacher: str) -> Path:
    """nbgrader's exchange at `root`: mode 1777 (every user writes there, as nbgrader documents,
    and the sticky bit: nobody removes what another made), with the course's folder in it already
    made and owned by the teacher, so that no student can make it first. Returns the course's."""
    entry = pwd.getpwnam(teacher)
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o1777)
    course = root / COURSE_ID
    course.mkdir(exist_ok=True)
    os.chown(course, entry.pw_uid, entry.pw_gid)
    course.chmod(0o755)
    return course


def problems() -> list[str]:
    """Why a hub with isolated students cannot start here (empty: it can)."""
    found = []
    env = env_dir()
    if not is_root():
        found.append("not root: creating a Unix user per student needs root")
    try:
        stamp = json.loads(_stamp_path(env).read_text())
    except (OSError, ValueError):
        stamp = None
    if stamp is None or stamp.get("requirements") != _want_stamp():
        found.append(f"the hub's venv {env} is missing or outdated: run `python3 dev.py hub --setup`")
    if not PROXY.exists():
        found.append(f"{PROXY} is missing: run `python3 dev.py hub --setup` (needs npm)")
    node = shutil.which("node")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout if node else ""
    if not version.startswith("v") or int(version[1:].split(".")[0]) < 20:
        found.append(f"Node.js 20 or newer is needed for the proxy (configurable-http-proxy 5); "
                     f"found {version.strip() or 'none'}")
    if not shutil.which("git"):
        found.append("git is not installed (nbgitpuller runs git)")
    for have, want in ((env / "bin" / WRAPPER.name, WRAPPER),
                       (env / "etc" / "jupyter" / "nbgrader_config.py", NBGRADER_CONFIG)):
        if not have.exists() or have.read_bytes() != want.read_bytes():
            found.append(f"{have} is missing or outdated: run `python3 dev.py hub --setup`")
    tools = [("useradd", "passwd"), ("userdel", "passwd"), ("groupadd", "passwd"),
             ("chpasswd", "passwd"), ("sudo", "sudo"), ("visudo", "sudo"), ("prlimit", "util-linux")]
    if student_cgroups_here() is None:
        tools += [(tool, "cgroup-tools") for tool in ("cgcreate", "cgset", "cgexec", "cgdelete")]
    for tool, package in tools:
        if not shutil.which(tool):
            found.append(f"{tool} not found (Debian package {package})")
    return found


def student_cgroups_here() -> str | None:
    """None where each student gets a memory cgroup of their own; else why not (then only each
    process is limited)."""
    if not accounts.CGROUP_PARENT:
        return "AN_HUB_STUDENT_CGROUP is empty"
    if not accounts.CGROUP_MEMORY.is_dir():
        return (f"{accounts.CGROUP_MEMORY} is not mounted (this machine has no cgroup v1 memory "
                "controller: a systemd machine with cgroup v2, where TLJH limits each student)")
    return None


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
        super().__init__(state / "jupyterhub.log", port)

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
                   AN_HUB_PORT=str(self.port), AN_HUB_HUB_PORT=str(free_port()),
                   AN_HUB_PROXY_API_PORT=str(free_port()), AN_HUB_PROXY=str(PROXY),
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
