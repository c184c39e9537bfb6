"""Build the course's JupyterLab extension (labextension/): `python3 dev.py labextension`.

The extension is prebuilt with JupyterLab's own builder (@jupyterlab/builder, webpack) into
labextension/prebuilt/, which is committed: a learner's `python3 dev.py setup` puts it where
JupyterLab finds it (dev.py, _install_labextension) and needs no Node.js. Only a change to the
extension's sources (SOURCES) needs a rebuild, here, with npm; `dev.py labextension` then
copies the new build into .venv (the other environments get it at their next dev.py command,
the hub's at its next `python3 dev.py hub --setup`). The build records a digest of the sources it was built
from (SOURCES_FILE); tests/test_labextension.py fails when the sources have changed since.

Run with the course's venv (dev.py does): the builder reads the installed JupyterLab's
package list (its staging folder) for the packages an extension shares with JupyterLab.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTENSION = ROOT / "labextension"
PREBUILT = EXTENSION / "prebuilt"
NAME = "attention-notebooks-jupyterlab"   # labextension/package.json's name
# What the build is made from: the plugin, the script it shares with the slides, npm's files
SOURCES = (EXTENSION / "index.js",
           ROOT / "presentation/voila/templates/course-slides/static/widget-names.js",
           EXTENSION / "package.json", EXTENSION / "package-lock.json")
SOURCES_FILE = EXTENSION / "prebuilt.sha256"   # beside prebuilt/, which holds only what is installed
BUILDER = EXTENSION / "node_modules/@jupyterlab/builder/lib/build-labextension.js"


def sources_digest() -> str:
    """One sha256 over the sources, each under its path in the repository (LF line ends, so
    that a checkout with CRLF gives the same digest)."""
    h = hashlib.sha256()
    for path in SOURCES:
        h.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        h.update(path.read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return h.hexdigest()


def build() -> None:
    npm, node = shutil.which("npm"), shutil.which("node")
    if not npm or not node:
        raise SystemExit("npm and Node.js are needed to rebuild the JupyterLab extension (Debian: "
                         "apt-get install npm). Using the course needs neither: the build is "
                         "committed in labextension/prebuilt/.")
    import jupyterlab  # the venv's JupyterLab (dev.py runs this with .venv's python)

    staging = Path(jupyterlab.__file__).parent / "staging"
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=EXTENSION,
                   check=True)
    # the builder writes into prebuilt/ (package.json's outputDir): the last build is kept
    # aside until the new one is made, and put back if it fails (every dev.py command copies
    # prebuilt/ into its environment)
    kept = EXTENSION / "prebuilt.last"
    shutil.rmtree(kept, ignore_errors=True)
    PREBUILT.rename(kept)
    try:
        subprocess.run([node, str(BUILDER), "--core-path", str(staging), "."], cwd=EXTENSION,
                       check=True)
    except BaseException:
        shutil.rmtree(PREBUILT, ignore_errors=True)
        kept.rename(PREBUILT)
        raise
    shutil.rmtree(kept)
    SOURCES_FILE.write_text(sources_digest() + "\n")
    print(f"Built {PREBUILT.relative_to(ROOT)}/ (JupyterLab {jupyterlab.__version__}'s builder "
          "list); commit it with its sources.")


if __name__ == "__main__":
    build()
    sys.exit(0)
