#!/usr/bin/env python3
"""One entry point for the course: set up, open, test, regenerate, benchmark.

    python3 dev.py lab          # create .venv if needed, open JupyterLab on the course
    python3 dev.py test         # create .venv if needed, run every test and notebook
    python3 dev.py regenerate   # re-execute notebooks in place (stored outputs)
    python3 dev.py bench        # performance benchmarks (not part of `test`)
    python3 dev.py site         # static HTML edition of the notebooks in build/site/
    python3 dev.py hub          # a class on one server: JupyterHub on 127.0.0.1 (hub/README.md)
    python3 dev.py present      # slideshow with live sliders (Voila, reveal.js) on 127.0.0.1

Only the standard library is used here, so it runs on a fresh Python 3.11+.
Extra arguments after `test` go to pytest; after `regenerate`, notebook paths.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PY = VENV / "bin" / "python"
STAMP = VENV / ".installed-requirements"
NOTEBOOKS = ROOT / "notebooks"

# Same environment for the test run, the kernels it starts and regeneration:
# deterministic hashing and time zone (kernels keep their inline plot backend).
DETERMINISTIC_ENV = {"PYTHONHASHSEED": "0", "TZ": "UTC",
                     "PYDEVD_DISABLE_FILE_VALIDATION": "1"}


def _requirements_hash() -> str:
    h = hashlib.sha256()
    for name in ("requirements.txt", "pyproject.toml"):
        h.update((ROOT / name).read_bytes())
    return h.hexdigest()


def ensure_env() -> None:
    """Create .venv and install requirements.txt plus the repo (editable), once per change."""
    if sys.version_info < (3, 11):
        sys.exit(f"Python 3.11 or newer is needed, this is {sys.version.split()[0]}")
    if not PY.exists():
        print(f"Creating {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    want = _requirements_hash()
    if STAMP.exists() and STAMP.read_text() == want:
        return
    print("Installing requirements into .venv (first run takes a few minutes) ...", flush=True)
    subprocess.run([PY, "-m", "pip", "install", "--quiet", "-r", ROOT / "requirements.txt"],
                   check=True)
    subprocess.run([PY, "-m", "pip", "install", "--quiet", "--no-deps", "-e", ROOT], check=True)
    _quiet_jupyterlab()
    STAMP.write_text(want)


def _quiet_jupyterlab() -> None:
    """Switch off JupyterLab's news/update pop-up (it covers the page, and it calls out)."""
    settings = VENV / "share" / "jupyter" / "lab" / "settings"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "overrides.json").write_text(json.dumps({
        "@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                         "checkForUpdates": False}}, indent=2))


def _env() -> dict:
    env = dict(os.environ, **DETERMINISTIC_ENV)
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def cmd_lab(args: list[str]) -> int:
    ensure_env()
    # Jupyter makes a random token and prints the URL that carries it; never disable it.
    print("Starting JupyterLab on 127.0.0.1; open the http://127.0.0.1:...?token=... URL it "
          "prints. Stop it with Ctrl+C.", flush=True)
    as_root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []  # containers
    return subprocess.call([PY, "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1",
                            f"--ServerApp.root_dir={ROOT}",
                            "--LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb",
                            *as_root, *args], env=_env())


def cmd_test(args: list[str]) -> int:
    ensure_env()
    lint = subprocess.call([PY, "-m", "ruff", "check", "--quiet", "."], cwd=ROOT, env=_env())
    if lint:
        print("ruff found problems (see above); fix them before the tests count.")
    pytest_args = args or ["tests", "notebooks"]
    code = subprocess.call([PY, "-m", "pytest", "--nbval", "--nbval-current-env",
                            "--nbval-sanitize-with", "tests/nbval_sanitize.cfg",
                            "-p", "no:cacheprovider", *pytest_args], cwd=ROOT, env=_env())
    return code or lint


def cmd_regenerate(args: list[str]) -> int:
    ensure_env()
    paths = args or sorted(str(p) for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    return subprocess.call([PY, ROOT / "scripts" / "regenerate.py", *paths], cwd=ROOT,
                           env=_env())


def cmd_bench(args: list[str]) -> int:
    ensure_env()
    return subprocess.call([PY, ROOT / "scripts" / "bench.py", *args], cwd=ROOT, env=_env())


SITE_VENV = ROOT / ".venv-site"
SITE_PY = SITE_VENV / "bin" / "python"
SITE_STAMP = SITE_VENV / ".installed-requirements"
SITE_FILES = ("requirements-site.txt", "site/package.json", "site/package-lock.json")


def ensure_site_env() -> None:
    """The static edition's tools, apart from .venv: Jupyter Book in .venv-site, MathJax from npm."""
    if sys.version_info < (3, 11):
        sys.exit(f"Python 3.11 or newer is needed, this is {sys.version.split()[0]}")
    h = hashlib.sha256()
    for name in SITE_FILES:
        h.update((ROOT / name).read_bytes())
    want = h.hexdigest()
    mathjax = ROOT / "site" / "node_modules" / "mathjax" / "package.json"
    if SITE_PY.exists() and mathjax.exists() and SITE_STAMP.exists() \
            and SITE_STAMP.read_text() == want:
        return
    import shutil

    npm = shutil.which("npm")
    if npm is None:
        sys.exit("npm is needed for the static edition's MathJax (site/package.json): "
                 "install Node.js and npm, e.g. `sudo apt-get install npm`")
    if not SITE_PY.exists():
        print(f"Creating {SITE_VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(SITE_VENV)
    print("Installing the static edition's tools into .venv-site and site/node_modules ...",
          flush=True)
    subprocess.run([SITE_PY, "-m", "pip", "install", "--quiet", "-r",
                    ROOT / "requirements-site.txt"], check=True)
    subprocess.run([npm, "ci", "--prefix", ROOT / "site", "--no-audit", "--no-fund",
                    "--loglevel=error"], check=True)
    SITE_STAMP.write_text(want)


def cmd_site(args: list[str]) -> int:
    ensure_site_env()
    if args == ["--setup"]:   # install only (.ci/run)
        return 0
    return subprocess.call([SITE_PY, ROOT / "site" / "build.py", *args], cwd=ROOT)


def cmd_hub(args: list[str]) -> int:
    """JupyterHub for a class: --setup [--lang ja], --link [NOTEBOOK], or a trial hub (hub/README.md).

    The hub runs its own venv, which every student's Unix user must be able to run; hub/hubctl.py
    (standard library) makes it and says where. .venv is not involved.
    """
    proc = subprocess.Popen([sys.executable, ROOT / "hub" / "hubctl.py", *args])
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:  # Ctrl+C reaches the hub too: wait while it stops and cleans up
            continue


PRESENT_DIR = ROOT / "presentation"   # voila.json and the course-slides template


def present_command(python, target, *args) -> list:
    """Voila on `target` (a notebook, or a folder of them) as dev.py present starts it.

    Also used by tests/test_present.py, so the test presents what the teacher gets.
    """
    return [str(python), "-m", "voila", f"--Voila.config_file_paths={PRESENT_DIR}",
            str(target), *args]


def present_env(env: dict) -> dict:
    """`env` with presentation/ on JUPYTER_PATH, where Voila finds the course-slides template."""
    paths = [str(PRESENT_DIR), *filter(None, [env.get("JUPYTER_PATH")])]
    return {**env, "JUPYTER_PATH": os.pathsep.join(paths)}


def cmd_present(args: list[str]) -> int:
    """Present notebooks as slides with live widgets (README: Presenting in class).

    `present NOTEBOOK` serves that notebook's slides; further arguments go to Voila.
    `present --slides [NOTEBOOK...]` regenerates the slide metadata (scripts/slides.py).
    """
    ensure_env()
    if args[:1] == ["--slides"]:
        return subprocess.call([PY, ROOT / "scripts" / "slides.py", *args[1:]], cwd=ROOT,
                               env=_env())
    if not args or args[0].startswith("-"):
        print("usage: python3 dev.py present notebooks/NN_topic.ipynb [voila options]")
        return 2
    target, rest = args[0], args[1:]
    print("Starting the presentation on 127.0.0.1; open the http://127.0.0.1:...?token=... URL it "
          "prints (arrow keys: next slide; S: speaker notes). Stop it with Ctrl+C.", flush=True)
    return subprocess.call(present_command(PY, target, "--token", *rest), cwd=ROOT,
                           env=present_env(_env()))


def main(argv: list[str]) -> int:
    commands = {"lab": cmd_lab, "test": cmd_test, "regenerate": cmd_regenerate,
                "bench": cmd_bench, "setup": lambda a: ensure_env() or 0,
                "site": cmd_site, "hub": cmd_hub, "present": cmd_present}
    if not argv or argv[0] not in commands:
        print(__doc__)
        return 2
    return commands[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
