"""The graded track on the hub (nbgrader, hub/README.md): nbgrader's settings for everyone in
the hub's venv, the teacher's own settings (the formgrader on), and nbgrader's exchange.
Standard library only; hubctl.py (--teacher) and hubenv.py (--setup) use it.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
from pathlib import Path

HUB_DIR = Path(__file__).resolve().parent

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


def install_nbgrader_config(env: Path) -> None:
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
        "# they run (hub/grading.py, setup_teacher). The formgrader does not read the folder's own\n"
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
