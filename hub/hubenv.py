"""The hub's environment: its venv (hub/requirements-hub.txt, the course's JupyterLab extension,
the students' JupyterLab settings, sudospawner's wrapper, nbgrader's settings) and its proxy
(npm), made by `python3 dev.py hub --setup`; and why a hub with isolated students cannot start
on this machine (problems). Standard library only, like hubctl.py, which uses it.

Where it goes: as root (a class server) the venv is /opt/attention-notebooks-hub/venv, outside
any home folder, because every student's Unix user must be able to run it (a venv under /root
or made from a Python under /root fails for them); as another user, hub/.venv-hub beside this
file. AN_HUB_ENV=<dir> chooses another place.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import accounts  # beside this file (hub/ is on sys.path): the Unix users, the sudoers rule
from grading import NBGRADER_CONFIG, install_nbgrader_config  # beside this file too

HUB_DIR = Path(__file__).resolve().parent
ROOT = HUB_DIR.parent
REQUIREMENTS = HUB_DIR / "requirements-hub.txt"
PROXY = HUB_DIR / "node_modules" / ".bin" / "configurable-http-proxy"
WRAPPER = HUB_DIR / "sudospawner-singleuser"  # sudospawner's hook: memory limit, PYTHONPATH
LABEXTENSION = ROOT / "labextension" / "prebuilt"   # the course's JupyterLab extension, built
JA_PACK = "jupyterlab-language-pack-ja-JP>=4.5.post3,<5"
NOTIFICATIONS = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                                   "checkForUpdates": False}}
JA_LOCALE = {"@jupyterlab/translation-extension:plugin": {"locale": "ja_JP"}}


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
        install_nbgrader_config(env)
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
