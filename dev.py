#!/usr/bin/env python3
"""One entry point for the course: set up, open, test, regenerate, benchmark.

    python3 dev.py lab          # create .venv with the course if needed, open JupyterLab
    python3 dev.py test         # .venv with the course and the test tooling, run every test
    python3 dev.py regenerate   # re-execute notebooks in place (stored outputs)
    python3 dev.py bench        # performance benchmarks (not part of `test`)

Only the standard library is used here, so it runs on a fresh Python 3.11+ (Linux, macOS or
Windows).
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
STAMP = VENV / ".installed-requirements"
NOTEBOOKS = ROOT / "notebooks"
REQUIREMENTS = ("requirements.txt", "requirements-test.txt")

# Same environment for the test run, the kernels it starts and regeneration: deterministic
# hashing and time zone (kernels keep their inline plot backend). The root conftest.py sets the
# same for a plain `pytest`, from this dict.
DETERMINISTIC_ENV = {"PYTHONHASHSEED": "0", "TZ": "UTC",
                     "PYDEVD_DISABLE_FILE_VALIDATION": "1"}


def venv_bin(env_dir: Path) -> Path:
    """The folder of a virtual environment's executables: Scripts on Windows, bin elsewhere
    (the rule of the standard library's venv module)."""
    return env_dir / ("Scripts" if sys.platform == "win32" else "bin")


def venv_python(env_dir: Path) -> Path:
    """The virtual environment's own interpreter."""
    return venv_bin(env_dir) / ("python.exe" if sys.platform == "win32" else "python")


PY = venv_python(VENV)


def _requirements_hash() -> str:
    h = hashlib.sha256()
    for name in (*REQUIREMENTS, "pyproject.toml"):
        h.update((ROOT / name).read_bytes())
    return h.hexdigest()


def _read_stamp(stamp: Path) -> dict:
    """What was installed last: {"hash": ..., "test": bool}; {} if unknown (or an older stamp)."""
    try:
        return json.loads(stamp.read_text())
    except (OSError, ValueError):
        return {}


def ensure_env(test: bool = True) -> None:
    """Create .venv and install the repo (editable) with its dependencies, once per change of
    the requirement files. test=False (dev.py lab): only the course, no test tooling."""
    if sys.version_info < (3, 11):
        sys.exit(f"Python 3.11 or newer is needed, this is {sys.version.split()[0]}")
    if not PY.exists():
        print(f"Creating {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    want = _requirements_hash()
    have = _read_stamp(STAMP)
    if have.get("hash") == want and (have.get("test") or not test):
        return
    target = f"{ROOT}[test]" if test else str(ROOT)
    print("Installing into .venv (first run takes a few minutes) ...", flush=True)
    subprocess.run([PY, "-m", "pip", "install", "--quiet", "-e", target], check=True)
    _quiet_jupyterlab()
    STAMP.write_text(json.dumps({"hash": want, "test": test}))


def _quiet_jupyterlab() -> None:
    """Switch off JupyterLab's news/update pop-up (it covers the page, and it calls out)."""
    settings = VENV / "share" / "jupyter" / "lab" / "settings"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "overrides.json").write_text(json.dumps({
        "@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                         "checkForUpdates": False}}, indent=2))


def _env() -> dict:
    env = dict(os.environ, **DETERMINISTIC_ENV)
    env["PATH"] = f"{venv_bin(VENV)}{os.pathsep}{env.get('PATH', '')}"
    return env


def cmd_lab(args: list[str]) -> int:
    ensure_env(test=False)
    # Jupyter makes a random token and prints the URL that carries it; never disable it.
    print("Starting JupyterLab on 127.0.0.1; open the http://127.0.0.1:...?token=... URL it "
          "prints. Stop it with Ctrl+C.", flush=True)
    as_root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []  # containers
    return subprocess.call([PY, "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1",
                            f"--ServerApp.root_dir={ROOT}",
                            "--LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb",
                            *as_root, *args], env=_env())


def cmd_test(args: list[str]) -> int:
    """ruff, then pytest with the options of pyproject.toml (nbval, xdist): a plain `pytest`
    from the repository root runs exactly the same."""
    ensure_env()
    lint = subprocess.call([PY, "-m", "ruff", "check", "--quiet", "."], cwd=ROOT, env=_env())
    if lint:
        print("ruff found problems (see above); fix them before the tests count.")
    code = subprocess.call([PY, "-m", "pytest", *args], cwd=ROOT, env=_env())
    return code or lint


def cmd_regenerate(args: list[str]) -> int:
    ensure_env()
    paths = args or sorted(str(p) for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    return subprocess.call([PY, ROOT / "scripts" / "regenerate.py", *paths], cwd=ROOT,
                           env=_env())


def cmd_bench(args: list[str]) -> int:
    ensure_env()
    return subprocess.call([PY, ROOT / "scripts" / "bench.py", *args], cwd=ROOT, env=_env())


def main(argv: list[str]) -> int:
    commands = {"lab": cmd_lab, "test": cmd_test, "regenerate": cmd_regenerate,
                "bench": cmd_bench, "setup": lambda a: ensure_env(test=True) or 0}
    if not argv or argv[0] not in commands:
        print(__doc__)
        return 2
    return commands[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
