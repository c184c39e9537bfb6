#!/usr/bin/env python3
"""One entry point for the course: set up, open, test, regenerate, benchmark.

    python3 dev.py lab          # create .venv if needed, open JupyterLab on the course
    python3 dev.py test         # create .venv if needed, run every test and notebook
    python3 dev.py regenerate   # re-execute notebooks in place (stored outputs)
    python3 dev.py bench        # performance benchmarks (not part of `test`)
    python3 dev.py site         # static HTML edition of the notebooks in build/site/
    python3 dev.py ja           # Japanese edition: update catalogs, build and run notebooks/ja/
    python3 dev.py lab --lang ja  # JupyterLab in Japanese on the Japanese edition

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
    if args[:2] == ["--lang", "ja"]:
        return cmd_lab_ja(args[2:])
    # Jupyter makes a random token and prints the URL that carries it; never disable it.
    print("Starting JupyterLab on 127.0.0.1; open the http://127.0.0.1:...?token=... URL it "
          "prints. Stop it with Ctrl+C.", flush=True)
    as_root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []  # containers
    return subprocess.call([PY, "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1",
                            f"--ServerApp.root_dir={ROOT}",
                            "--LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb",
                            *as_root, *args], env=_env())


# The Japanese edition (README, "The Japanese edition"). JupyterLab's own interface comes in
# Japanese from jupyterlab-language-pack-ja-JP (requirements.txt) with the default locale set in
# a config folder used by this command only: jupyterlab_server layers
# <config dir>/labconfig/default_setting_overrides.json over <sys.prefix>/share/jupyter/lab/
# settings/overrides.json, so the English `lab`, the tests and .venv's own overrides stay as they
# are (a learner can still switch in Settings > Language).
JA_LAB_CONFIG = VENV / "etc" / "jupyter-ja"


def cmd_lab_ja(args: list[str]) -> int:
    overrides = JA_LAB_CONFIG / "labconfig" / "default_setting_overrides.json"
    overrides.parent.mkdir(parents=True, exist_ok=True)
    overrides.write_text(json.dumps({"@jupyterlab/translation-extension:plugin":
                                     {"locale": "ja_JP"}}, indent=2))
    env = _env()
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
        p for p in (str(JA_LAB_CONFIG), env.get("JUPYTER_CONFIG_PATH")) if p)
    start = "notebooks/ja/00_start_here.ipynb"
    if not (ROOT / start).exists():
        sys.exit(f"{start} is missing: build the Japanese edition with `python3 dev.py ja`")
    print("JupyterLab を日本語で 127.0.0.1 に起動します。表示される http://127.0.0.1:...?token=... "
          "の URL を開いてください (Ctrl+C で終了)。", flush=True)
    as_root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    return subprocess.call([PY, "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1",
                            f"--ServerApp.root_dir={ROOT}", f"--LabApp.default_url=/lab/tree/{start}",
                            *as_root, *args], env=env)


def cmd_ja(args: list[str]) -> int:
    """update the catalogs, build notebooks/ja/ (and course.mo), then execute the built notebooks.

    `ja update [NN_topic ...]` and `ja status` run only that step; `ja --no-run` skips executing.
    """
    ensure_env()
    translate = [PY, ROOT / "scripts" / "translate.py"]
    if args[:1] in (["update"], ["status"], ["build"]):
        return subprocess.call([*translate, *args], cwd=ROOT, env=_env())
    if args not in ([], ["--no-run"]):
        print(cmd_ja.__doc__)
        return 2
    code = subprocess.call([*translate, "update"], cwd=ROOT, env=_env())
    code = subprocess.call([*translate, "build"], cwd=ROOT, env=_env()) or code
    built = sorted(str(p) for p in (NOTEBOOKS / "ja").glob("[0-9][0-9]_*.ipynb"))
    if args != ["--no-run"] and built:
        code = subprocess.call([PY, ROOT / "scripts" / "regenerate.py", *built], cwd=ROOT,
                               env=_env()) or code
    return code


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


def main(argv: list[str]) -> int:
    commands = {"lab": cmd_lab, "test": cmd_test, "regenerate": cmd_regenerate,
                "bench": cmd_bench, "setup": lambda a: ensure_env() or 0,
                "site": cmd_site, "ja": cmd_ja}
    if not argv or argv[0] not in commands:
        print(__doc__)
        return 2
    return commands[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
