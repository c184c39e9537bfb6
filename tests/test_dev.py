"""dev.py and the requirement files: the interpreter path on every OS, honest version ranges."""

import re
import sys
import tomllib
import venv
from pathlib import Path

import pytest

import dev

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("platform, parts", [
    ("linux", ("bin", "python")),
    ("darwin", ("bin", "python")),
    ("win32", ("Scripts", "python.exe")),
])
def test_venv_interpreter_path_per_platform(monkeypatch, platform, parts):
    monkeypatch.setattr(sys, "platform", platform)
    env = Path("some") / ".venv"
    assert dev.venv_bin(env) == env / parts[0]
    assert dev.venv_python(env) == env.joinpath(*parts)


def test_venv_interpreter_path_matches_a_real_venv_here(tmp_path):
    venv.EnvBuilder(with_pip=False).create(tmp_path / "env")
    assert dev.venv_python(tmp_path / "env").is_file()


def test_lowest_pins_take_each_lower_bound():
    text = "# comment\nnumpy>=2.0,<3   # why\n\nnbval>=0.11,<0.12\nruff==0.17.6\n"
    assert dev.lowest_pins([text]) == ["numpy==2.0", "nbval==0.11", "ruff==0.17.6"]
    with pytest.raises(SystemExit, match="no lower bound"):
        dev.lowest_pins(["numpy<3\n"])


def _requirements():
    for name in (*dev.REQUIREMENTS, "requirements-graded.txt"):  # and the graded track's nbgrader
        for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                yield name, line


@pytest.mark.parametrize("name, line", list(_requirements()), ids=lambda x: x)
def test_every_range_stays_within_one_major(name, line):
    """`>=X.Y,<X+1` (for 0.x: `>=0.Y,<0.Y+1`), or an exact pin; nothing that spans two majors."""
    if re.fullmatch(r"[A-Za-z0-9._-]+==[0-9][0-9.]*", line):
        return
    # a post-release lower bound (jupyterlab-language-pack-ja-JP>=4.5.post3) is the same major
    m = re.fullmatch(r"[A-Za-z0-9._-]+>=(\d+)\.(\d+)(?:\.\d+)?(?:\.post\d+)?,<(\d+)(?:\.(\d+))?",
                     line)
    assert m, f"{name}: {line!r} is not `name>=X.Y,<X+1`"
    major, minor, upper_major, upper_minor = m.groups()
    if major == "0":
        assert (upper_major, upper_minor) == ("0", str(int(minor) + 1)), f"{name}: {line!r}"
    else:
        assert upper_major == str(int(major) + 1) and upper_minor is None, f"{name}: {line!r}"


def test_each_dependency_is_declared_once():
    """pyproject.toml reads its dependencies from the requirement files instead of a copy."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "dependencies" not in project["project"]
    dynamic = project["tool"]["setuptools"]["dynamic"]
    assert dynamic["dependencies"] == {"file": ["requirements.txt"]}
    assert dynamic["optional-dependencies"]["test"] == {"file": ["requirements-test.txt"]}
    assert dynamic["optional-dependencies"]["graded"] == {"file": ["requirements-graded.txt"]}
    assert "requirements-graded.txt" in dev.GRADED_FILES, "dev.py setup --graded reinstalls on a change"
    names = [re.match(r"[A-Za-z0-9._-]+", line).group(0).lower() for _, line in _requirements()]
    assert len(names) == len(set(names)), f"a package is listed twice: {sorted(names)}"


def _root_conftest():
    import importlib.util
    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_kernel_that_does_not_answer_is_started_once_more_then_fails(monkeypatch):
    import nbval.kernel as nbval_kernel
    root_conftest = _root_conftest()
    calls = []

    def flaky(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1 or kwargs.get("always_fail"):
            raise RuntimeError("Kernel didn't respond in 60 seconds")
        return "km", "kc"

    monkeypatch.setattr(nbval_kernel, "start_new_kernel", flaky)
    root_conftest._start_a_kernel_once_more_if_it_does_not_answer()
    assert nbval_kernel.start_new_kernel() == ("km", "kc") and len(calls) == 2
    with pytest.raises(RuntimeError, match="didn't respond"):
        nbval_kernel.start_new_kernel(always_fail=True)   # twice: the notebook still fails
    assert len(calls) == 4


def test_the_scheduler_keeps_notebooks_and_shared_setups_in_one_worker():
    """One unit per notebook (its cells share a kernel) and per file of ONE_WORKER_FILES (they
    share a hub, a server or a site build); every other test is a unit of its own."""
    import types
    root_conftest = _root_conftest()
    option = types.SimpleNamespace(loadscopereorder=True)
    config = types.SimpleNamespace(option=option, getoption=lambda name: "loadfile",
                                   getvalue=lambda name: ["2*popen"])
    scheduler = root_conftest.pytest_xdist_make_scheduler(config, None)
    assert option.loadscopereorder is False, "xdist would reorder the units by their size"
    scope = scheduler._split_scope
    assert scope("notebooks/04_masking.ipynb::Cell 3") == "notebooks/04_masking.ipynb"
    assert scope("notebooks/ja/04_masking.ipynb::Cell 0") == "notebooks/ja/04_masking.ipynb"
    for path in root_conftest.ONE_WORKER_FILES:
        assert scope(f"{path}::test_x[a]") == scope(f"{path}::test_y") == path
    browser = "tests/test_browser.py::test_notebook_in_jupyterlab[04_masking.ipynb]"
    assert scope(browser) == browser
    config.getoption = lambda name: "load"
    assert root_conftest.pytest_xdist_make_scheduler(config, None) is None, "--dist load as given"


def test_the_longest_files_come_first_and_the_rest_keep_their_order():
    root_conftest = _root_conftest()
    for path in {*root_conftest.LONGEST_FIRST, *root_conftest.ONE_WORKER_FILES}:
        assert (ROOT / path).is_file(), f"{path} is named in conftest.py but does not exist"
    ids = ["notebooks/00_start_here.ipynb::Cell 0", "tests/test_core.py::test_a",
           "tests/test_browser.py::test_notebook_in_jupyterlab[00]", "notebooks/00_start_here.ipynb::Cell 1",
           "tests/test_present.py::test_p", "tests/test_core.py::test_b", "tests/test_site.py::test_s"]
    items = [type("Item", (), {"nodeid": i})() for i in ids]
    root_conftest.pytest_collection_modifyitems(None, items)
    assert [i.nodeid for i in items] == [
        "tests/test_present.py::test_p", "tests/test_site.py::test_s",
        "tests/test_browser.py::test_notebook_in_jupyterlab[00]",
        "notebooks/00_start_here.ipynb::Cell 0", "tests/test_core.py::test_a",
        "notebooks/00_start_here.ipynb::Cell 1", "tests/test_core.py::test_b"]


def test_the_upstream_code_the_root_conftest_patches_still_calls_what_it_patches():
    """The root conftest.py replaces nbval.kernel.start_new_kernel (no supported hook exists for
    a kernel that never answers: treebeardtech/nbmake#129) and overrides xdist's private
    LoadScopeScheduling._split_scope (the supported `--dist loadgroup` silently stops grouping
    with pytest 9.2: pytest-dev/pytest-xdist#1386). If either upstream stops calling what is
    patched, the patch would quietly do nothing: this fails instead."""
    import inspect

    import nbval.kernel
    from xdist.scheduler import LoadScopeScheduling

    assert "start_new_kernel(" in inspect.getsource(nbval.kernel.RunningKernel.__init__), (
        "nbval no longer starts its kernels through nbval.kernel.start_new_kernel")
    source = inspect.getsource(LoadScopeScheduling)
    assert source.count("self._split_scope(") >= 2, (
        "xdist's LoadScopeScheduling no longer asks _split_scope for each test's unit")
