#!/usr/bin/env python3
"""One entry point for the course: set up, open, test, regenerate, benchmark.

    python3 dev.py lab             # create .venv with the course if needed, open JupyterLab
    python3 dev.py test            # .venv with the course and the test tooling, run every test
    python3 dev.py test --lowest   # the same tests in .venv-lowest, with the lowest versions
                                   # that requirements.txt and requirements-test.txt allow
    python3 dev.py regenerate      # re-execute notebooks in place (stored outputs)
    python3 dev.py bench           # performance benchmarks (not part of `test`)
    python3 dev.py setup [--lowest]  # only install (what `test` would use)
    python3 dev.py setup --graded  # .venv-graded: the course with nbgrader (tests/test_graded.py)
    python3 dev.py site            # static HTML edition of the notebooks in build/site/
    python3 dev.py hub             # a class on one server: JupyterHub on 127.0.0.1 (hub/README.md)
    python3 dev.py classroom       # instructor key (build/key/) and teacher's guide (docs/)
    python3 dev.py classroom assignments DIR  # graded track: nbgrader course folder, outside the repo
    python3 dev.py classroom assignments DIR --lang ja  # the same, the students' side in Japanese
    python3 dev.py present         # slideshow with live sliders (Voila, reveal.js) on 127.0.0.1
    python3 dev.py ja              # Japanese edition: update catalogs, build and run notebooks/ja/
    python3 dev.py lab --lang ja   # JupyterLab in Japanese on the Japanese edition
    python3 dev.py labextension    # rebuild the course's JupyterLab extension (needs npm)

Only the standard library is used here, so it runs on a fresh Python 3.11+ (Linux, macOS or
Windows). Extra arguments after `test` go to pytest; after `regenerate`, notebook paths.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
LOWEST_VENV = ROOT / ".venv-lowest"
NOTEBOOKS = ROOT / "notebooks"
REQUIREMENTS = ("requirements.txt", "requirements-test.txt")

# Same environment for the test run, the kernels it starts and regeneration: deterministic
# hashing and time zone (kernels keep their inline plot backend). The root conftest.py sets the
# same for a plain `pytest`, from this dict.
# OPENBLAS_CORETYPE: numpy's OpenBLAS is built for every x86-64 CPU (DYNAMIC_ARCH) and picks its
# kernels at run time: SkylakeX (AVX-512) on the Intel Xeon machines here, Haswell (AVX2) on the
# AMD EPYC ones. Their sums round differently, and notebook 10's unscaled d_k = 512 training turns
# that round-off into different printed accuracies. Haswell's kernels run on both, so the stored
# outputs are computed, and compared, with them everywhere (other CPUs ignore the variable).
DETERMINISTIC_ENV = {"PYTHONHASHSEED": "0", "TZ": "UTC",
                     "PYDEVD_DISABLE_FILE_VALIDATION": "1", "OPENBLAS_CORETYPE": "Haswell"}
# What a test run adds (the root conftest.py): one BLAS thread in every kernel, against outputs
# stored with the default count by `regenerate`; strict nbval then checks both at once.
TEST_THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def venv_bin(env_dir: Path) -> Path:
    """The folder of a virtual environment's executables: Scripts on Windows, bin elsewhere
    (the rule of the standard library's venv module)."""
    return env_dir / ("Scripts" if sys.platform == "win32" else "bin")


def venv_python(env_dir: Path) -> Path:
    """The virtual environment's own interpreter."""
    return venv_bin(env_dir) / ("python.exe" if sys.platform == "win32" else "python")


# A range's lower bound, as the requirement files write it: `name>=X.Y` (the `,<X+1` part does
# not matter here) or an exact pin `name==X.Y.Z`.
_LOWER = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:>=|==)\s*([0-9][0-9A-Za-z.]*)")


def lowest_pins(texts: list[str]) -> list[str]:
    """`name==lower bound` for every requirement line, e.g. `numpy>=2.0,<3` -> `numpy==2.0`."""
    pins = []
    for text in texts:
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = _LOWER.match(line)
            if not m:
                raise SystemExit(f"no lower bound in requirement {line!r}: write `name>=X.Y,<X+1`")
            pins.append(f"{m.group(1)}=={m.group(2)}")
    return pins


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


def ensure_env(test: bool = True, lowest: bool = False) -> Path:
    """Create the environment and install the repo (editable) with its dependencies, once per
    change of the requirement files. test=False (dev.py lab): only the course. lowest: the
    separate .venv-lowest with every direct dependency at its lower bound (their own
    dependencies resolve as usual). Returns the environment's folder."""
    if sys.version_info < (3, 11):
        sys.exit(f"Python 3.11 or newer is needed, this is {sys.version.split()[0]}")
    env_dir = LOWEST_VENV if lowest else VENV
    py = venv_python(env_dir)
    if not py.exists():
        print(f"Creating {env_dir} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(env_dir)
    _install_labextension(env_dir)
    stamp = env_dir / ".installed-requirements"
    want = _requirements_hash()
    have = _read_stamp(stamp)
    if have.get("hash") == want and (have.get("test") or not test):
        return env_dir
    test = test or lowest  # the lowest-versions environment exists to run the tests
    target = f"{ROOT}[test]" if test else str(ROOT)
    pins = []
    if lowest:
        pins = lowest_pins([(ROOT / n).read_text(encoding="utf-8") for n in REQUIREMENTS])
        print("Lowest allowed versions: " + " ".join(pins), flush=True)
    print(f"Installing into {env_dir.name} (first run takes a few minutes) ...", flush=True)
    subprocess.run([py, "-m", "pip", "install", "--quiet", "-e", target, *pins], check=True)
    _quiet_jupyterlab(env_dir)
    stamp.write_text(json.dumps({"hash": want, "test": test}))
    return env_dir


LABEXTENSION = ROOT / "labextension" / "prebuilt"   # the course's JupyterLab extension, built


def _install_labextension(env_dir: Path) -> None:
    """The course's JupyterLab extension (labextension/) where the venv's JupyterLab finds
    prebuilt extensions, {prefix}/share/jupyter/labextensions/<its name>, refreshed whenever the
    build changes: pip's editable install of the course copies no data files. A copy, not a
    link: Voila's server refuses (403) a file that a link leads outside its folder."""
    name = json.loads((LABEXTENSION / "package.json").read_text(encoding="utf-8"))["name"]
    dest = env_dir / "share" / "jupyter" / "labextensions" / name
    files = sorted(p.relative_to(LABEXTENSION) for p in LABEXTENSION.rglob("*") if p.is_file())
    if not dest.is_symlink() and dest.is_dir() and files == sorted(
            p.relative_to(dest) for p in dest.rglob("*") if p.is_file()) and all(
            (dest / f).read_bytes() == (LABEXTENSION / f).read_bytes() for f in files):
        return
    if dest.is_symlink() or dest.is_file():
        dest.unlink()
    elif dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(LABEXTENSION, dest)


def _quiet_jupyterlab(env_dir: Path) -> None:
    """Switch off JupyterLab's news/update pop-up (it covers the page, and it calls out)."""
    settings = env_dir / "share" / "jupyter" / "lab" / "settings"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "overrides.json").write_text(json.dumps({
        "@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                         "checkForUpdates": False}}, indent=2))


# numpy chooses its own SIMD loops (exp, log, tanh, sums) by CPU when it is imported, as OpenBLAS
# does: AVX-512 loops on the Xeons, AVX2 ones on the EPYCs, and their last bits differ. Notebook
# 10's unscaled training amplifies them (its score gap printed 1.9e+02 on one, 2.1e+02 on the
# other). NPY_DISABLE_CPU_FEATURES switches the AVX-512 loops off, so every machine with AVX2
# computes with the same ones. Its names are numpy's own and differ between versions (AVX512F,
# AVX512_SKX ... in 2.0; X86_V4, AVX512_ICL, AVX512_SPR in 2.4), and numpy refuses to import with
# a name it does not dispatch: so they are read from the interpreter that runs the kernels.
_DISPATCHED = ("from numpy._core._multiarray_umath import __cpu_dispatch__; "
               "print(' '.join(__cpu_dispatch__))")


def avx512_names(dispatched: list[str]) -> list[str]:
    """The AVX-512 targets among numpy's dispatched ones (its `__cpu_dispatch__`)."""
    return [name for name in dispatched if name.startswith("AVX512") or name == "X86_V4"]


def simd_env(python: Path | str) -> dict:
    """{"NPY_DISABLE_CPU_FEATURES": ...} for the numpy of `python` (empty without AVX-512 targets)."""
    key = str(python)
    if key not in _SIMD_ENV:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("NPY_")}
        out = subprocess.run([key, "-c", _DISPATCHED], capture_output=True, text=True, env=clean)
        if out.returncode != 0:
            raise RuntimeError(f"cannot read numpy's SIMD targets with {key}:\n{out.stderr}")
        names = avx512_names(out.stdout.split())
        _SIMD_ENV[key] = {"NPY_DISABLE_CPU_FEATURES": " ".join(names)} if names else {}
    return _SIMD_ENV[key]


_SIMD_ENV: dict[str, dict] = {}


def _env(env_dir: Path = VENV) -> dict:
    env = dict(os.environ, **DETERMINISTIC_ENV, **simd_env(venv_python(env_dir)))
    env["PATH"] = f"{venv_bin(env_dir)}{os.pathsep}{env.get('PATH', '')}"
    return env


def _split_lowest(args: list[str]) -> tuple[bool, list[str]]:
    return "--lowest" in args, [a for a in args if a != "--lowest"]


def cmd_lab(args: list[str]) -> int:
    env_dir = ensure_env(test=False)
    if args[:2] == ["--lang", "ja"]:
        return cmd_lab_ja(env_dir, args[2:])
    # Jupyter makes a random token and prints the URL that carries it; never disable it.
    print("Starting JupyterLab on 127.0.0.1; open the http://127.0.0.1:...?token=... URL it "
          "prints. Stop it with Ctrl+C.", flush=True)
    as_root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []  # containers
    return subprocess.call([venv_python(env_dir), "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1",
                            f"--ServerApp.root_dir={ROOT}",
                            "--LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb",
                            *as_root, *args], env=_env(env_dir))


# The Japanese edition (docs/japanese-edition.md). JupyterLab's own interface comes in
# Japanese from jupyterlab-language-pack-ja-JP (requirements.txt) with the default locale set in
# a config folder used by this command only: jupyterlab_server layers
# <config dir>/labconfig/default_setting_overrides.json over <sys.prefix>/share/jupyter/lab/
# settings/overrides.json, so the English `lab`, the tests and .venv's own overrides stay as they
# are (a learner can still switch in Settings > Language).
JA_LAB_CONFIG = VENV / "etc" / "jupyter-ja"


def cmd_lab_ja(env_dir: Path, args: list[str]) -> int:
    overrides = JA_LAB_CONFIG / "labconfig" / "default_setting_overrides.json"
    overrides.parent.mkdir(parents=True, exist_ok=True)
    overrides.write_text(json.dumps({"@jupyterlab/translation-extension:plugin":
                                     {"locale": "ja_JP"}}, indent=2))
    env = _env(env_dir)
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
        p for p in (str(JA_LAB_CONFIG), env.get("JUPYTER_CONFIG_PATH")) if p)
    start = "notebooks/ja/00_start_here.ipynb"
    if not (ROOT / start).exists():
        sys.exit(f"{start} is missing: build the Japanese edition with `python3 dev.py ja`")
    print("JupyterLab を日本語で 127.0.0.1 に起動します。表示される http://127.0.0.1:...?token=... "
          "の URL を開いてください (Ctrl+C で終了)。", flush=True)
    as_root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    return subprocess.call([venv_python(env_dir), "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1",
                            f"--ServerApp.root_dir={ROOT}", f"--LabApp.default_url=/lab/tree/{start}",
                            *as_root, *args], env=env)


def cmd_ja(args: list[str]) -> int:
    """update the catalogs, build notebooks/ja/, then execute the built notebooks.

    `ja update [NN_topic ...]` and `ja status` run only that step; `ja --no-run` skips executing.
    """
    env_dir = ensure_env(test=True)   # nbclient (requirements-test.txt) executes the built notebooks
    py, env = venv_python(env_dir), _env(env_dir)
    translate = [py, ROOT / "scripts" / "translate.py"]
    if args[:1] in (["update"], ["status"], ["build"]):
        return subprocess.call([*translate, *args], cwd=ROOT, env=env)
    if args not in ([], ["--no-run"]):
        print(cmd_ja.__doc__)
        return 2
    code = subprocess.call([*translate, "update"], cwd=ROOT, env=env)
    code = subprocess.call([*translate, "build"], cwd=ROOT, env=env) or code
    built = sorted(str(p) for p in (NOTEBOOKS / "ja").glob("[0-9][0-9]_*.ipynb"))
    if args != ["--no-run"] and built:
        code = subprocess.call([py, ROOT / "scripts" / "regenerate.py", *built], cwd=ROOT,
                               env=env) or code
    return code


def cmd_test(args: list[str]) -> int:
    """ruff, then pytest with the options of pyproject.toml (nbval, xdist): a plain `pytest`
    from the repository root runs exactly the same."""
    lowest, args = _split_lowest(args)
    env_dir = ensure_env(test=True, lowest=lowest)
    py = venv_python(env_dir)
    lint = subprocess.call([py, "-m", "ruff", "check", "--quiet", "."], cwd=ROOT,
                           env=_env(env_dir))
    if lint:
        print("ruff found problems (see above); fix them before the tests count.")
    if lowest and not any(a.startswith("-m") for a in args):
        # The tests marked own_venv test what runs in a venv of its own (the hub's, from
        # hub/requirements-hub.txt; nbgrader's .venv-graded), at the newest versions whatever
        # --lowest installs: none of our lower bounds is exercised there, and --lowest would
        # repeat them to the letter. Not skipped, left out here; `python3 dev.py test` runs them.
        # second_edition: the Japanese decks of the slides test, the same template and code as
        # the English decks, which do run here.
        print("--lowest: leaving out the tests marked own_venv (the hub's, nbgrader's): they run "
              "a venv of their own, the same as in `python3 dev.py test`; and the Japanese slide "
              "decks (second_edition), whose template and code the English decks run here",
              flush=True)
        args = ["-m", "not own_venv and not second_edition", *args]
    code = subprocess.call([py, "-m", "pytest", *args], cwd=ROOT, env=_env(env_dir))
    return code or lint


GRADED_VENV = ROOT / ".venv-graded"
GRADED_FILES = ("requirements.txt", "requirements-graded.txt", "pyproject.toml")


def ensure_graded_env() -> Path:
    """The graded track's nbgrader, apart from .venv (it brings the `notebook` package): the
    course and nbgrader in .venv-graded, where nbgrader's kernels find the course's modules."""
    h = hashlib.sha256()
    for name in GRADED_FILES:
        h.update((ROOT / name).read_bytes())
    py, stamp = venv_python(GRADED_VENV), GRADED_VENV / ".installed-requirements"
    if py.exists() and stamp.exists() and stamp.read_text() == h.hexdigest():
        _install_labextension(GRADED_VENV)
        return GRADED_VENV
    if not py.exists():
        print(f"Creating {GRADED_VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(GRADED_VENV)
    print("Installing the course and nbgrader into .venv-graded ...", flush=True)
    subprocess.run([py, "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[graded]"], check=True)
    _install_labextension(GRADED_VENV)
    stamp.write_text(h.hexdigest())
    return GRADED_VENV


def cmd_setup(args: list[str]) -> int:
    if args == ["--graded"]:
        ensure_graded_env()
        return 0
    lowest, _ = _split_lowest(args)
    ensure_env(test=True, lowest=lowest)
    return 0


def cmd_regenerate(args: list[str]) -> int:
    env_dir = ensure_env(test=True)
    paths = args or sorted(str(p) for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    return subprocess.call([venv_python(env_dir), ROOT / "scripts" / "regenerate.py", *paths],
                           cwd=ROOT, env=_env(env_dir))


def cmd_bench(args: list[str]) -> int:
    env_dir = ensure_env(test=True)
    return subprocess.call([venv_python(env_dir), ROOT / "scripts" / "bench.py", *args],
                           cwd=ROOT, env=_env(env_dir))


SITE_VENV = ROOT / ".venv-site"
SITE_PY = venv_python(SITE_VENV)
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
    # The live figures' frames are drawn by the notebooks' own code, with the course's
    # interpreter and the environment its kernels have (site/frames.py)
    # (COURSE_PYTHON: another course environment, e.g. .venv-lowest in tests/test_site.py)
    given = os.environ.get("COURSE_PYTHON")
    course_py = Path(given) if given else venv_python(ensure_env(test=False))
    if args == ["--setup"]:   # install only (.ci/run)
        return 0
    env = dict(os.environ, **DETERMINISTIC_ENV, **simd_env(course_py), COURSE_PYTHON=str(course_py))
    return subprocess.call([SITE_PY, ROOT / "site" / "build.py", *args], cwd=ROOT, env=env)


def cmd_labextension(args: list[str]) -> int:
    """Rebuild labextension/prebuilt/ after a change to its sources (scripts/labextension.py)."""
    py = venv_python(ensure_env(test=False))
    code = subprocess.call([py, ROOT / "scripts" / "labextension.py", *args], cwd=ROOT)
    if code == 0:   # the new build into .venv at once (the other environments: at their next use)
        _install_labextension(VENV)
    return code


def cmd_hub(args: list[str]) -> int:
    """JupyterHub for a class: --setup [--lang ja], --link [NOTEBOOK], --limit-memory USER ...,
    or a trial hub (hub/README.md).

    The hub runs its own venv, which every student's Unix user must be able to run; hub/hubenv.py
    (standard library, run through hub/hubctl.py) makes it and says where. .venv is not involved.
    """
    proc = subprocess.Popen([sys.executable, ROOT / "hub" / "hubctl.py", *args])
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:  # Ctrl+C reaches the hub too: wait while it stops and cleans up
            continue


def cmd_classroom(args: list[str]) -> int:
    if args[:1] == ["assignments"]:  # its folder is the caller's, the command runs in ROOT
        args = ["assignments", *(str(Path(a).expanduser().resolve())
                                 if not a.startswith("-") and before != "--lang" else a
                                 for before, a in zip(args, args[1:], strict=False))]
    env_dir = ensure_env(test=True)
    return subprocess.call([venv_python(env_dir), ROOT / "scripts" / "classroom.py", *args],
                           cwd=ROOT, env=_env(env_dir))


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
    """Present notebooks as slides with live widgets (docs/presenting.md).

    `present NOTEBOOK` serves that notebook's slides; further arguments go to Voila.
    `present --slides [NOTEBOOK...]` regenerates the slide metadata (scripts/slides.py).
    """
    env_dir = ensure_env(test=False)
    py = venv_python(env_dir)
    if args[:1] == ["--slides"]:
        return subprocess.call([py, ROOT / "scripts" / "slides.py", *args[1:]], cwd=ROOT,
                               env=_env(env_dir))
    if not args or args[0].startswith("-"):
        print("usage: python3 dev.py present notebooks/NN_topic.ipynb [voila options]")
        return 2
    target, rest = args[0], args[1:]
    print("Starting the presentation on 127.0.0.1; open the http://127.0.0.1:...?token=... URL it "
          "prints (arrow keys: next slide; S: speaker notes). Stop it with Ctrl+C.", flush=True)
    return subprocess.call(present_command(py, target, "--token", *rest), cwd=ROOT,
                           env=present_env(_env(env_dir)))


def main(argv: list[str]) -> int:
    commands = {"lab": cmd_lab, "test": cmd_test, "regenerate": cmd_regenerate,
                "bench": cmd_bench, "setup": cmd_setup, "site": cmd_site, "hub": cmd_hub,
                "classroom": cmd_classroom, "present": cmd_present, "ja": cmd_ja,
                "labextension": cmd_labextension}
    if not argv or argv[0] not in commands:
        print(__doc__)
        return 2
    return commands[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
