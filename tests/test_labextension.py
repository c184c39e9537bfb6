"""The course's JupyterLab extension (labextension/; issue 27): it names what ipywidgets leaves
without a name in JupyterLab, each slider's handle and each live figure. What it does in
JupyterLab is tested there (tests/test_browser.py: the keyboard walk hears the handle's name,
every live figure's alt is its words, axe-core finds no unnamed slider or image); here, that the
committed build is the build of its sources and that the course's install brings it."""

import json
import re
import subprocess
import sys
from pathlib import Path

from scripts import labextension

PREBUILT = labextension.PREBUILT


def test_the_committed_build_is_built_from_the_sources_as_they_are():
    recorded = labextension.SOURCES_FILE.read_text().strip()
    assert recorded == labextension.sources_digest(), (
        "labextension/ or widget-names.js changed since labextension/prebuilt/ was built: run "
        "`python3 dev.py labextension` (needs npm) and commit prebuilt/ with the change")


def test_the_build_is_complete():
    meta = json.loads((PREBUILT / "package.json").read_text())
    assert meta["name"] == labextension.NAME
    load = PREBUILT / meta["jupyterlab"]["_build"]["load"]
    assert load.is_file(), f"{load} (JupyterLab's entry to the extension) is missing"
    entry = load.read_text()
    chunks = [p.name for p in (PREBUILT / "static").glob("[0-9]*.js")]
    assert chunks and all(c.split(".")[1] in entry for c in chunks), (
        f"remoteEntry does not load every chunk in prebuilt/static: {chunks}")
    # and the build is of these sources (beyond the recorded digest): the plugin and the script
    # it runs, by strings a minifier keeps
    built = "".join((PREBUILT / "static" / c).read_text() for c in chunks)
    for needle in ("attention-notebooks-jupyterlab:widget-names", "MutationObserver",
                   ".widget-slider .noUi-handle[role=slider]", "img.live-figure-image",
                   ".live-figure-words"):
        assert needle in built, f"the build has no {needle!r}"


def test_jupyterlab_finds_it_in_the_course_environment():
    """dev.py's environments (.venv, .venv-lowest, .venv-graded) have it where JupyterLab finds
    prebuilt extensions, the files of the build, and JupyterLab lists it as enabled and OK."""
    installed = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / labextension.NAME
    wanted = sorted(p.relative_to(PREBUILT).as_posix() for p in PREBUILT.rglob("*") if p.is_file())
    have = sorted(p.relative_to(installed).as_posix() for p in installed.rglob("*") if p.is_file())
    assert have == wanted, f"{installed}: {have}, not the build's {wanted} (run python3 dev.py setup)"
    assert all((installed / f).read_bytes() == (PREBUILT / f).read_bytes() for f in wanted)
    listed = subprocess.run([Path(sys.executable).parent / "jupyter", "labextension", "list"],
                            capture_output=True, text=True, check=True)
    lines = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout + listed.stderr).splitlines()
    version = "v" + json.loads((PREBUILT / "package.json").read_text())["version"]
    assert any(line.split() == [labextension.NAME, version, "enabled", "OK"] for line in lines), (
        "\n".join(lines))
