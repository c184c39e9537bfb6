"""A class on one server (hub/): a real JupyterHub on 127.0.0.1 with two simulated students.

The module starts the hub of hub/jupyterhub_config.py (free ports, its own temp folder, its own
state) as a new service user an-hub-<random> (sudospawner, its sudoers rule) with new Unix users
an-student-<random>-1 and -2 of one class group, each with a PAM password of their own, and lets
both students at once
(hub/students.py, one thread each) log in through the hub (student 2 clicks the course link
first and logs in where the hub sends them), open the course's nbgitpuller link (file:// URL of
a bare copy of this clone's HEAD), pull the course, run notebook 03 top to bottom
over the kernel websocket through the hub's proxy and move its d_k slider through the widget's
comm. The tests then check:

- each student got a server and their own copy in their own home (mode 700);
- notebook 03 ran without an error and every slider move brought a new figure and text;
- each kernel imported attention_core and course/ from its own student's copy: student 1 edits
  course/__init__.py (through the contents API, as in JupyterLab) before running the notebook
  and only student 1's kernel sees the edit;
- the students are isolated: each server and kernel runs as the student's Unix user; student 2's
  kernel cannot read student 1's home; student 2's login cannot reach student 1's server;
- every server the hub started listens on 127.0.0.1 only;
- the JupyterLab defaults of the hub's env (overrides.json: no news pop-up, and the ja_JP locale
  when set up with --lang ja) reach the students' servers;
- updating the course mid-term (a new commit in the repository, the link clicked again) merges
  the teacher's changes and keeps the student's own edit (nbgitpuller's merge);
- a third student in Debian's Chromium logs in through the hub's form, gets JupyterLab (in
  Japanese with --lang ja), runs notebook 03 from the Run menu and moves the slider by keyboard,
  with no request beyond 127.0.0.1 (skips without Chromium; fails with REQUIRE_BROWSER=1);
- a term's safety: A's password does not log in as B; A's session (every cookie it holds)
  cannot reach B's files, kernels, kernel websocket or server through the server's or the hub's
  API (each request also sent for A's own server, where it must succeed); a runaway kernel gets
  MemoryError at the per-process limit while B's kernel answers within 1 s; two kernels of A
  that together pass A's own memory limit (A's cgroup) lose the runaway one, which JupyterLab
  is told has died, while A's other kernel, A's server and B's kernel keep answering; A cannot
  raise their cgroup's limit, make one below it or move into the root's, the class's or B's;
  a second hub with a 10 s idle time culls an idle server; no hub process (hub, proxy, culler)
  runs as root or in group root; the configuration refuses to start without a login of one's
  own;
- the graded track (nbgrader's exchange, hub/nbgrader_config.py): a teacher of the same class
  releases an assignment from the formgrader in their own server; both students fetch it,
  answer and submit through JupyterLab's Assignments panel (its REST API); the teacher collects,
  autogrades and releases feedback; the scores are exactly what the answers deserve, the release
  holds nothing of the teacher's source, each student's feedback is their own, and one student
  reaches neither the other's submission or feedback nor the teacher's source or formgrader;
- at the end every process the test started is gone and the users, the group and the sudoers
  rule are removed (also on failure).

Needs root (useradd), the hub's venv and its proxy: `python3 dev.py hub --setup`. Without them
the tests skip; with REQUIRE_HUB=1 (CI) they fail instead.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from required import require

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hub"))
import accounts  # noqa: E402  (hub/ is not a package: its files are the hub's, not the course's)
import grading  # noqa: E402
import hubctl  # noqa: E402
import hubenv  # noqa: E402
import localserver  # noqa: E402
import students  # noqa: E402

pytestmark = [pytest.mark.hub, pytest.mark.own_venv]   # the hub's venv

NOTEBOOK = hubctl.NOTEBOOK_03
MOVES = 4
MARKER = "MARKER_" + secrets.token_hex(4)


def _require_hub() -> None:
    reasons = hubctl.problems()
    require("; ".join(reasons) if reasons else None, "REQUIRE_HUB", "the hub test cannot run")


PROBE = """import json, os, attention_core, course
print("PROBE " + json.dumps({"uid": os.getuid(), "core": attention_core.__file__,
                             "course": course.__file__, "marker": getattr(course, %r, None),
                             "cwd": os.getcwd()}))"""

PEEK = """import json
seen = {}
for what, path in (("list", %r), ("read", %r)):
    try:
        seen[what] = len(open(path, "rb").read()) if what == "read" else os.listdir(path)
    except OSError as exc:
        seen[what] = type(exc).__name__
print("PEEK " + json.dumps(seen))"""


def _line(out: list[str], tag: str) -> dict:
    for line in "".join(out).splitlines():
        if line.startswith(tag + " "):
            return json.loads(line[len(tag) + 1:])
    raise AssertionError(f"no {tag} line in {out}")


@pytest.fixture(scope="module")
def classroom():
    _require_hub()
    tag = secrets.token_hex(3)
    names = [f"{accounts.STUDENT_PREFIX}{tag}-{k}" for k in (1, 2)]
    browser_student = f"{accounts.STUDENT_PREFIX}{tag}-b"  # only ever in the real browser
    teacher = f"{accounts.TEACHER_PREFIX}{tag}"  # the graded track's teacher (nbgrader)
    hub_user, group = f"{accounts.HUB_USER_PREFIX}{tag}", f"{accounts.CLASS_GROUP_PREFIX}{tag}"
    passwords = {n: accounts.new_password() for n in [*names, browser_student, teacher]}
    tmp = Path(tempfile.mkdtemp(prefix="an-hub-test-"))
    tmp.chmod(0o755)  # the students clone the course from here; the hub's state stays 700
    bare = tmp / "course.git"
    created: list[str] = []
    hub = None
    hub_user_made = False
    leftovers: dict = {}
    try:
        repo = hubctl.publish_course(bare)
        accounts.create_hub_user(hub_user, group)
        hub_user_made = True
        for name in [*names, browser_student, teacher]:
            accounts.create_student(name, trust=[bare], group=group, password=passwords[name])
            created.append(name)
        # each one's memory cgroup, by the command hub/README.md gives a teacher
        assert hubctl.main(["--limit-memory", *created]) == 0
        homes = {n: Path(pwd.getpwnam(n).pw_dir) for n in names}
        uids = {n: pwd.getpwnam(n).pw_uid for n in names}
        exchange = tmp / "exchange"   # the teacher's ~/.jupyter and the exchange, as on a server
        assert hubctl.main(["--teacher", teacher, "--exchange", str(exchange)]) == 0
        course_dir = Path(pwd.getpwnam(teacher).pw_dir) / "course"
        hub = hubctl.Hub(tmp / "state", [*names, browser_student, teacher], hub_user,
                         settings={"AN_NBGRADER_EXCHANGE": str(exchange)})
        hub.start()
        link = hubctl.course_link(hub.url, repo, notebook=NOTEBOOK)
        seen: dict = {n: {} for n in names}

        def after_pull(s: students.Student) -> None:
            if s.name != names[0]:
                return
            # student 1 edits their own course/__init__.py, as in JupyterLab's editor
            path = f"{hubctl.COURSE_FOLDER}/course/__init__.py"
            r = s.api("GET", f"/api/contents/{path}", params={"content": "1"})
            r.raise_for_status()
            text = r.json()["content"] + f"\n{MARKER} = True  # student 1's own edit\n"
            r = s.api("PUT", f"/api/contents/{path}",
                      json={"type": "file", "format": "text", "content": text})
            r.raise_for_status()

        def after(s: students.Student) -> None:
            other = names[1] if s.name == names[0] else names[0]
            _, out = s.execute(PROBE % MARKER)
            seen[s.name]["probe"] = _line(out, "PROBE")
            _, out = s.execute("import os\n" + PEEK % (
                str(homes[other]), str(homes[other] / hubctl.COURSE_FOLDER / NOTEBOOK)))
            seen[s.name]["peek"] = _line(out, "PEEK")
            _, out = s.execute("import json, os\nfrom ipykernel.connect import get_connection_info\n"
                               "print('URL', json.dumps([os.environ.get('JUPYTERHUB_SERVICE_URL'), "
                               "json.loads(get_connection_info())['transport']]))")
            # the server's own URL, and how its kernel talks to it, from the kernel
            seen[s.name]["server_url"], seen[s.name]["transport"] = _line(out, "URL")
            seen[s.name]["pids"] = accounts.pids_of_uid(uids[s.name])
            seen[s.name]["sockets"] = accounts.listening_sockets(
                hub.own_pids() + seen[s.name]["pids"])
            # the other student's server, with this student's login: its API, and its JupyterLab
            # page (through the OAuth round trip, where the hub decides who may enter)
            seen[s.name]["other_server"] = []
            for path in (f"api/contents/{hubctl.COURSE_FOLDER}", "lab"):
                r = s.http.get(f"{hub.url}/user/{other}/{path}", timeout=60)
                seen[s.name]["other_server"].append((r.status_code, r.url))
            r = s.api("GET", "/lab/api/settings/@jupyterlab/translation-extension:plugin")
            seen[s.name]["locale_default"] = (
                r.json()["schema"]["properties"]["locale"].get("default") if r.ok else r.status_code)
            r = s.api("GET", "/lab/api/translations/")
            seen[s.name]["languages"] = sorted(r.json().get("data", {})) if r.ok else r.status_code

        t0 = time.perf_counter()
        results = students.run_class(hub.url, names, passwords, link, repo, "main",
                                     hubctl.COURSE_FOLDER, NOTEBOOK, moves=MOVES, think_s=0.1,
                                     after_pull=after_pull, after=after,
                                     link_first={names[1]})  # student 2 clicks before logging in
        yield SimpleNamespace(hub=hub, names=names, browser_student=browser_student,
                              homes=homes, uids=uids, repo=repo, bare=bare, passwords=passwords,
                              hub_user=hub_user, group=group, teacher=teacher,
                              course_dir=course_dir, exchange=exchange,
                              tmp=tmp, link=link, results={r.name: r for r in results},
                              seen=seen, took=time.perf_counter() - t0)
    finally:
        hub_pids = hub.own_pids() if hub else []
        if hub is not None:
            hub.stop()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and any(
                    accounts.pids_of_uid(pwd.getpwnam(n).pw_uid) for n in created):
                time.sleep(0.2)  # the hub stops each server; each server its kernels
            leftovers = {n: accounts.pids_of_uid(pwd.getpwnam(n).pw_uid) for n in created}
            leftovers["hub/proxy"] = [p for p in hub_pids if _alive(p)]
        for name in created:
            accounts.remove_student(name)   # also stops what was left, by pid, and its cgroup
        if hub_user_made:
            accounts.remove_hub_user(hub_user, group)
        shutil.rmtree(tmp, ignore_errors=True)
    gone = [n for n in [*created, hub_user] if _user_exists(n)]
    cgroups = [n for n in created if accounts.memory_cgroup(n).exists()]
    assert not cgroups, f"memory cgroups left behind: {cgroups}"
    assert not (accounts.SUDOERS_DIR / hub_user).exists(), "the sudoers rule was left behind"
    assert not gone, f"users not removed: {gone}"
    assert not any(leftovers.values()), f"processes left running after the hub stopped: {leftovers}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def test_each_student_gets_a_server_and_an_own_copy(classroom):
    for name in classroom.names:
        r = classroom.results[name]
        assert not [e for e in r.errors if "cell" not in e], r.errors
        assert r.ready_s is not None and r.pull_s is not None, r
        home = classroom.homes[name]
        assert (home.stat().st_mode & 0o777) == 0o700, oct(home.stat().st_mode)
        copy = home / hubctl.COURSE_FOLDER
        assert (copy / NOTEBOOK).is_file() and (copy / "attention_core.py").is_file()
        assert copy.stat().st_uid == classroom.uids[name], "the copy belongs to the student"


def test_notebook_03_runs_and_the_slider_redraws(classroom):
    nb = json.loads((ROOT / NOTEBOOK).read_text(encoding="utf-8"))
    code_cells = sum(c["cell_type"] == "code" for c in nb["cells"])
    for name in classroom.names:
        r = classroom.results[name]
        assert r.errors == [], r.errors
        assert r.cells == code_cells
        assert len(r.slider_ms) == MOVES and all(ms > 0 for ms in r.slider_ms), r.slider_ms
        # every move: the text names the new d_k, and the figure is the one of that d_k
        png_of: dict[str, set] = {}
        for label, text, png_sha in r.slider_shown:
            assert f"d_k = {label}," in text, (label, text)
            png_of.setdefault(label, set()).add(png_sha)
        assert all(len(shas) == 1 for shas in png_of.values()), png_of
        assert len({next(iter(shas)) for shas in png_of.values()}) == len(png_of) >= 3, png_of


def test_each_kernel_imports_its_own_students_copy(classroom):
    one, two = classroom.names
    for name in classroom.names:
        probe = classroom.seen[name]["probe"]
        copy = classroom.homes[name] / hubctl.COURSE_FOLDER
        assert probe["core"] == str(copy / "attention_core.py"), probe
        assert probe["course"] == str(copy / "course" / "__init__.py"), probe
        assert probe["cwd"] == str(copy / "notebooks"), probe
    assert classroom.seen[one]["probe"]["marker"] is True, "student 1 does not see their own edit"
    assert classroom.seen[two]["probe"]["marker"] is None, "student 2 sees student 1's edit"


def test_students_are_isolated(classroom):
    one, two = classroom.names
    for name, other in ((one, two), (two, one)):
        seen = classroom.seen[name]
        assert seen["probe"]["uid"] == classroom.uids[name], "the kernel runs as the student"
        assert len(seen["pids"]) >= 2, f"server and kernel as {name}: {seen['pids']}"
        assert seen["peek"] == {"list": "PermissionError", "read": "PermissionError"}, seen["peek"]
        for status, url in seen["other_server"]:
            assert status == 403, f"{name} reached {other}'s server: {status} {url}"


def test_every_server_listens_on_loopback_only(classroom):
    for name in classroom.names:
        sockets = classroom.seen[name]["sockets"]
        assert sockets, "no listening socket found (hub, proxy, server, kernel)"
        wrong = [s for s in sockets if s[1] not in ("127.0.0.1", "::1")]
        assert not wrong, f"listening beyond 127.0.0.1: {wrong}"


def test_each_server_listens_below_the_ephemeral_range(classroom):
    # hub/classspawner.py: a port no kernel socket can take before the server binds it
    # (jupyterhub/jupyterhub#3005), and another for each student
    ephemeral, ports = localserver.ephemeral_ports(), {}
    for name in classroom.names:
        url = classroom.seen[name]["server_url"]
        assert url and url.startswith("http://127.0.0.1:"), url
        port = int(url.split(":")[2].split("/")[0])
        assert port < ephemeral.start, f"{name}'s server on {port}, in the ephemeral range {ephemeral}"
        listening = {p for _, _, p in classroom.seen[name]["sockets"]}
        assert port in listening, f"{name}'s server is not listening on {port}: {listening}"
        ports[name] = port
    assert len(set(ports.values())) == len(ports), ports
    # and the hub's own three (hub/hubctl.py's Hub: public, the hub's API, the proxy's API)
    hub = classroom.hub
    own = {"public": hub.port, "hub": hub.hub_port, "proxy API": hub.proxy_api_port}
    assert all(p < ephemeral.start for p in own.values()), f"hub ports {own}, ephemeral {ephemeral}"
    listening = {p for _, _, p in accounts.listening_sockets(hub.own_pids())}
    assert set(own.values()) <= listening, f"the hub's ports {own}, listening: {listening}"


def test_kernels_talk_to_their_server_over_unix_sockets(classroom):
    # hub/jupyterhub_config.py: no kernel port that another kernel could take first
    for name in classroom.names:
        assert classroom.seen[name]["transport"] == "ipc", (name, classroom.seen[name]["transport"])


def test_jupyterlab_defaults_reach_the_students(classroom):
    env = hubctl.env_dir()
    overrides = json.loads((env / "share/jupyter/lab/settings/overrides.json").read_text())
    assert overrides["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    lang = hubctl.env_lang(env)
    for name in classroom.names:
        seen = classroom.seen[name]
        if lang == "ja":
            assert overrides["@jupyterlab/translation-extension:plugin"]["locale"] == "ja_JP"
            assert seen["locale_default"] == "ja_JP", seen["locale_default"]
            assert "ja_JP" in seen["languages"], seen["languages"]
        else:
            assert "@jupyterlab/translation-extension:plugin" not in overrides
            assert seen["locale_default"] != "ja_JP"
    if lang == "ja":
        subprocess.run([str(env / "bin" / "python"), "-c", "import jupyterlab_language_pack_ja_JP"],
                       check=True)


def test_course_update_keeps_the_students_work(classroom):
    """The teacher pushes a commit; student 1 clicks the link again: both changes are there."""
    work = classroom.tmp / "teacher"
    subprocess.run(["git", "clone", "--quiet", str(classroom.bare), str(work)], check=True)
    init = work / "course" / "__init__.py"
    init.write_text("# (Updated mid-term.)\n" + init.read_text())
    (work / "UPDATE.md").write_text("Week 5: a new exercise.\n")
    git = ["git", "-C", str(work), "-c", "user.name=Teacher", "-c", "user.email=teacher@localhost"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "--quiet", "-m", "mid-term update"], check=True)
    subprocess.run([*git, "push", "--quiet", "origin", "HEAD:main"], check=True)

    one = classroom.names[0]
    s = students.Student(classroom.hub.url, one, classroom.passwords[one])
    try:
        s.login()
        s.open_link(classroom.link)  # the server is running: straight to nbgitpuller's page
        log = s.pull(classroom.repo, "main", hubctl.COURSE_FOLDER)
        r = s.api("GET", f"/api/contents/{hubctl.COURSE_FOLDER}/course/__init__.py",
                  params={"content": "1"})
        r.raise_for_status()
        text = r.json()["content"]
        r = s.api("GET", f"/api/contents/{hubctl.COURSE_FOLDER}/UPDATE.md", params={"content": "1"})
    finally:
        s.close()
    assert r.status_code == 200 and "Week 5" in r.json()["content"], "the new file did not arrive"
    assert "(Updated mid-term.)" in text, "the teacher's change did not arrive:\n" + "\n".join(log)
    assert MARKER in text, "the student's own edit was lost:\n" + "\n".join(log)


def test_a_students_password_does_not_log_in_as_another(classroom):
    one, two = classroom.names
    hub, passwords = classroom.hub, classroom.passwords
    own = students.Student(hub.url, two, passwords[two])
    try:
        assert own.login().status_code == 302  # the control: the same form, the right password
    finally:
        own.close()
    for name, password in ((two, passwords[one]), (one, passwords[two]), (two, "")):
        s = students.Student(hub.url, name, password)
        try:
            with pytest.raises(students.StudentError, match="login answered 403"):
                s.login()
            assert s.http.get(f"{hub.url}/hub/api/user", timeout=60).status_code == 403
        finally:
            s.close()


def _all_cookies(s: students.Student) -> str:
    """Every cookie the student's browser holds, whatever its path: the most a forged request can send."""
    return "; ".join(f"{c.name}={c.value}" for c in s.http.cookies)


def test_a_students_session_cannot_reach_anothers_server(classroom):
    """A's session, with every cookie A holds, against B's server (REST API, contents, kernels,
    the kernel's websocket) and the hub's API for B; each request is also sent for A's own
    server, where it must succeed (else a 403 would prove nothing)."""
    import requests
    import websocket

    one, two = classroom.names
    hub = classroom.hub
    a = students.Student(hub.url, one, classroom.passwords[one])
    b = students.Student(hub.url, two, classroom.passwords[two])
    try:
        for s in (a, b):
            s.login()
            s.open_link(classroom.link)  # the running server: its cookie, through OAuth
        b_kernels = b.api("GET", "/api/kernels").json()
        assert b_kernels, "B's kernel from the class is still running"
        b_kernel = b_kernels[0]["id"]
        a_kernel = a.api("GET", "/api/kernels").json()[0]["id"]
        headers = {"Cookie": _all_cookies(a), "X-XSRFToken": a.xsrf()}
        hub_headers = {"Cookie": _all_cookies(a),
                       "X-XSRFToken": a.http.cookies.get("_xsrf", path="/hub/") or ""}
        folder = hubctl.COURSE_FOLDER

        def send(method, url, **kw):
            return requests.request(method, url, headers=kw.pop("headers", headers),
                                    allow_redirects=False, timeout=60, **kw)

        checks = [  # (what, method, path under /user/<name>, {kernel: ...}, json)
            ("list B's files", "GET", f"/api/contents/{folder}", None),
            ("read B's notebook", "GET", f"/api/contents/{folder}/{NOTEBOOK}", None),
            ("write into B's home", "PUT", f"/api/contents/{folder}/INTRUDER.txt",
             {"type": "file", "format": "text", "content": "A was here"}),
            ("list B's kernels", "GET", "/api/kernels", None),
            ("list B's sessions", "GET", "/api/sessions", None),
            ("start a kernel on B's server", "POST", "/api/kernels", {"name": "python3"}),
            ("interrupt B's kernel", "POST", "/api/kernels/{kernel}/interrupt", None),
        ]
        refused = {}
        for what, method, path, body in checks:
            mine = send(method, f"{a.base}{path.format(kernel=a_kernel)}", json=body)
            assert 200 <= mine.status_code < 300, f"control failed: A cannot {what} on A's own " \
                f"server ({mine.status_code})"
            theirs = send(method, f"{b.base}{path.format(kernel=b_kernel)}", json=body)
            refused[what] = theirs.status_code
            if mine.status_code == 201 and method == "POST" and path == "/api/kernels":
                send("DELETE", f"{a.base}/api/kernels/{mine.json()['id']}")
        send("DELETE", f"{a.base}/api/contents/{folder}/INTRUDER.txt")
        # the kernel's websocket: the handshake itself
        ws_path = "/api/kernels/{kernel}/channels?session_id=x"
        for who, base, kernel in (("A", a.base, a_kernel), ("B", b.base, b_kernel)):
            url = base.replace("http://", "ws://", 1) + ws_path.format(kernel=kernel)
            try:
                websocket.create_connection(url, timeout=60, cookie=headers["Cookie"]).close()
                refused[f"websocket to {who}'s kernel"] = 101
            except websocket.WebSocketBadStatusException as exc:
                refused[f"websocket to {who}'s kernel"] = exc.status_code
        assert refused.pop("websocket to A's kernel") == 101, "control: A's own kernel's websocket"
        # the hub's REST API: B's user record, B's server (start, stop), a token for B
        mine = send("GET", f"{hub.url}/hub/api/users/{one}", headers=hub_headers)
        assert mine.status_code == 200, f"control: A reads A's own user record ({mine.status_code})"
        for what, method, path in (("read B's user record", "GET", f"/users/{two}"),
                                   ("stop B's server", "DELETE", f"/users/{two}/server"),
                                   ("start B's server", "POST", f"/users/{two}/server"),
                                   ("make a token for B", "POST", f"/users/{two}/tokens")):
            refused[what] = send(method, f"{hub.url}/hub/api{path}", headers=hub_headers,
                                 json={}).status_code
        kernels_after = [k["id"] for k in b.api("GET", "/api/kernels").json()]
        b_files = b.api("GET", f"/api/contents/{folder}/INTRUDER.txt").status_code
        b_server = b.http.get(f"{hub.url}/hub/api/user", timeout=60,
                              headers={"X-XSRFToken": b.http.cookies.get("_xsrf", path="/hub/")})
    finally:
        a.close()
        b.close()
    let_through = {what: code for what, code in refused.items()
                   if not (code in (401, 403, 404) or 300 <= code < 400)}
    assert not let_through, f"A's session reached B's: {let_through}"
    assert b_kernel in kernels_after and b_files == 404, (kernels_after, b_files)
    assert b_server.json()["servers"][""]["ready"], "B's server was stopped"


# Notebook 03's numbers stay in memory: an allocation beyond the limit fails in that kernel only.
RUNAWAY = """import numpy as np
runaway = []
while True:
    runaway.append(np.ones(2**23))   # 64 MiB more each time, and touched"""


def test_a_runaway_kernel_hits_the_limit_while_another_answers(classroom):
    import threading

    one, two = classroom.names
    hub = classroom.hub
    a = students.Student(hub.url, one, classroom.passwords[one])
    b = students.Student(hub.url, two, classroom.passwords[two])
    pings: list[float] = []
    try:
        for s in (a, b):
            s.login()
            s.open_link(classroom.link)
            s.open_notebook(f"{hubctl.COURSE_FOLDER}/{NOTEBOOK}")  # the kernel already running
        _, out = a.execute("import os; print('PID', os.getpid())")
        pid = int("".join(out).split()[1])
        limits = Path(f"/proc/{pid}/limits").read_text()
        done: dict = {}

        def run_away():
            t0 = time.perf_counter()
            try:
                done["status"], done["out"] = a.execute(RUNAWAY)
            except Exception as exc:  # reported by the asserts below
                done["status"], done["out"] = "raised", [repr(exc)]
            done["s"] = time.perf_counter() - t0

        runner = threading.Thread(target=run_away)
        runner.start()
        while runner.is_alive() or not pings:
            t0 = time.perf_counter()
            status, out = b.execute("print(6 * 7)")
            assert status == "ok" and "".join(out) == "42\n", out
            pings.append(time.perf_counter() - t0)
        runner.join()
        after_status, after_out = a.execute("print(len(runaway)); del runaway")
    finally:
        a.close()
        b.close()
    limit = int(hub.environ()["AN_HUB_MEM_LIMIT"])
    assert any(line.startswith("Max address space") and f"{limit}" in line
               for line in limits.splitlines()), limits
    assert done["status"] == "error" and any("MemoryError" in o for o in done["out"]), done
    assert after_status == "ok", after_out  # A's kernel lives on, with its other variables
    assert 0 < int(after_out[0]) * 64 < limit / 2**20, after_out
    peak = int((accounts.memory_cgroup(one) / "memory.max_usage_in_bytes").read_text())
    print(f"\nrunaway kernel stopped after {done['s']:.1f} s at {int(after_out[0]) * 64} MiB "
          f"(limit {limit / 2**30:.1f} GiB; A's processes at most {peak / 2**20:.0f} MiB "
          f"together); B's kernel answered {len(pings)} times, slowest {max(pings) * 1e3:.0f} ms")
    assert len(pings) >= 1 and max(pings) < 1.0, pings


# Each kernel of A stays under the per-process limit; together they pass A's own (A's cgroup).
HOLD_MIB = 256


def _cgroup_of(pid: int) -> str:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            return path
    return ""


def test_a_students_kernels_together_hit_their_own_limit(classroom):
    import threading

    one, two = classroom.names
    hub = classroom.hub
    cgroup = accounts.memory_cgroup(one)
    limit = int((cgroup / "memory.limit_in_bytes").read_text())
    assert limit == hubctl.size_bytes(hubctl.STUDENT_MEMORY), limit
    kills_before = int(dict(line.split() for line in
                            (cgroup / "memory.oom_control").read_text().splitlines())["oom_kill"])
    a = students.Student(hub.url, one, classroom.passwords[one])
    a2 = students.Student(hub.url, one, classroom.passwords[one])  # A's second notebook and kernel
    b = students.Student(hub.url, two, classroom.passwords[two])
    pings: list[float] = []
    try:
        for s, path in ((a, NOTEBOOK), (a2, "notebooks/00_start_here.ipynb"), (b, NOTEBOOK)):
            s.login()
            s.open_link(classroom.link)
            s.open_notebook(f"{hubctl.COURSE_FOLDER}/{path}")
        assert a.kernel_id != a2.kernel_id
        status, out = a.execute(f"import numpy as np, os\nhold = np.ones({HOLD_MIB} * 2**17)\n"
                                "print('PID', os.getpid())")
        assert status == "ok", out
        pid = int("".join(out).split()[1])
        _, out = a2.execute("import os; print('PID', os.getpid())")
        pid2 = int("".join(out).split()[1])
        in_cgroups = {p: _cgroup_of(p) for p in (pid, pid2)}
        done: dict = {}

        def run_away():  # A's second kernel allocates until it is stopped
            t0 = time.perf_counter()
            msg_id = a2._send("shell", "execute_request", {
                "code": RUNAWAY, "silent": False, "store_history": True, "user_expressions": {},
                "allow_stdin": False, "stop_on_error": True})
            try:
                end = a2._wait(lambda m: (m["msg_type"] == "status" and m["content"][
                    "execution_state"] in ("restarting", "dead")) or (
                    m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "error"))
                done["end"] = (end["msg_type"], end["content"].get("execution_state")
                               or end["content"].get("ename"))
            except Exception as exc:  # reported by the asserts below
                done["end"] = ("raised", repr(exc))
            done["s"] = time.perf_counter() - t0

        runner = threading.Thread(target=run_away)
        runner.start()
        while runner.is_alive() or not pings:
            t0 = time.perf_counter()
            status, out = b.execute("print(6 * 7)")
            assert status == "ok" and "".join(out) == "42\n", out
            pings.append(time.perf_counter() - t0)
        runner.join()
        after_status, after_out = a.execute("print(hold.size // 2**17)")
        server = a.api("GET", "/api/status")
    finally:
        for s in (a, a2, b):
            s.close()
    kills = int(dict(line.split() for line in
                     (cgroup / "memory.oom_control").read_text().splitlines())["oom_kill"])
    expected = f"/{accounts.CGROUP_PARENT}/{one}"
    assert in_cgroups == {pid: expected, pid2: expected}, in_cgroups
    # the runaway kernel was stopped (JupyterLab hears "restarting": its dialog says the kernel
    # died), not given a MemoryError: it stayed under the per-process limit
    assert done["end"] == ("status", "restarting"), done
    assert not Path(f"/proc/{pid2}").exists() or _alive(pid2) is False, "the runaway kernel lives"
    assert kills > kills_before, (kills_before, kills)
    assert after_status == "ok" and after_out == [f"{HOLD_MIB}\n"], after_out  # A's other kernel
    assert server.status_code == 200, server.status_code                      # and A's server
    peak = int((cgroup / "memory.max_usage_in_bytes").read_text())
    print(f"\nA's runaway kernel stopped after {done['s']:.1f} s, A's processes at most "
          f"{peak / 2**20:.0f} MiB together (limit {limit / 2**20:.0f} MiB); B's kernel answered "
          f"{len(pings)} times, slowest {max(pings) * 1e3:.0f} ms")
    assert len(pings) >= 1 and max(pings) < 1.0, pings


def test_no_hub_process_runs_as_root(classroom):
    hub_user = pwd.getpwnam(classroom.hub_user)
    seen = {}
    for pid in classroom.hub.processes():
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue  # ended meanwhile (a sudo of a spawn)
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields["State"].split()[0] == "Z":
            continue  # ended, not yet reaped: runs nothing (CI saw a sudo in that state)
        with contextlib.suppress(OSError):
            if Path(os.readlink(f"/proc/{pid}/exe")).name == "sudo":
                # sudospawner's one privileged step, by design: setuid root, started by the hub
                # (its real uid is the service user's) to run sudospawner as a student
                real_uid = int(fields["Uid"].split()[0])
                assert real_uid == hub_user.pw_uid, f"{pid} {cmdline}: sudo with real uid {real_uid}"
                continue
        seen[pid] = (cmdline, [int(x) for x in fields["Uid"].split()],
                     [int(x) for x in fields["Gid"].split()],
                     {int(x) for x in fields["Groups"].split()})
    what = " | ".join(c for c, *_ in seen.values())
    for part in ("jupyterhub", "configurable-http-proxy", "jupyterhub_idle_culler"):
        assert part in what, f"{part} is not among the hub's processes: {what}"
    for pid, (cmdline, uids, gids, groups) in seen.items():
        assert uids == [hub_user.pw_uid] * 4, f"{pid} {cmdline}: Uid {uids}"
        assert 0 not in gids and 0 not in groups, f"{pid} {cmdline}: Gid {gids}, groups {groups}"


def test_a_hub_without_a_login_of_ones_own_is_refused(classroom):
    env = classroom.hub.environ()
    for value in (None, "dummy"):
        env.pop("AN_HUB_AUTHENTICATOR", None)
        if value:
            env["AN_HUB_AUTHENTICATOR"] = value
        out = subprocess.run([str(hubctl.env_dir() / "bin" / "jupyterhub"), "-f", str(hubctl.CONFIG)],
                             env=env, cwd=classroom.tmp, capture_output=True, text=True, timeout=120)
        assert out.returncode != 0, out.stdout[-2000:]
        assert "refusing to start a class hub" in out.stderr and "AN_HUB_AUTHENTICATOR=pam" in out.stderr, \
            out.stderr[-2000:]



def test_a_student_cannot_raise_leave_or_share_their_cgroup(classroom):
    """As student A (sudo -u, a shell of A's own): A's cgroup takes A's shell; A cannot write its
    limit, make a cgroup below it, or move into the root's, the class's or B's cgroup."""
    one, two = classroom.names
    mine, theirs = accounts.memory_cgroup(one), accounts.memory_cgroup(two)

    def as_a(script: str) -> subprocess.CompletedProcess:
        return subprocess.run(["sudo", "-u", one, "/bin/sh", "-c", script], capture_output=True,
                              text=True, timeout=60, cwd="/")

    entered = as_a(f"echo $$ > {mine / 'tasks'} && cat /proc/self/cgroup")
    assert entered.returncode == 0 and f"memory:/{accounts.CGROUP_PARENT}/{one}" in entered.stdout, \
        (entered.stdout, entered.stderr)   # the way in the hook uses works, so the refusals mean something
    limit = (mine / "memory.limit_in_bytes").read_text()
    refused = {
        "raise the limit": as_a(f"echo {2**40} > {mine / 'memory.limit_in_bytes'}"),
        "a cgroup below": as_a(f"mkdir {mine / 'mine'}"),
        "the root's": as_a(f"echo $$ > {accounts.CGROUP_MEMORY / 'tasks'}"),
        "the class's": as_a(f"echo $$ > {mine.parent / 'tasks'}"),
        "B's": as_a(f"echo $$ > {theirs / 'tasks'}"),
        "B's procs": as_a(f"echo $$ > {theirs / 'cgroup.procs'}"),
    }
    let_through = {what: r.stderr for what, r in refused.items()
                   if r.returncode == 0 or "Permission denied" not in r.stderr}
    assert not let_through, let_through
    assert (mine / "memory.limit_in_bytes").read_text() == limit and not (mine / "mine").exists()


def test_without_cgroup_v1_the_trial_says_so_and_limits_each_process(monkeypatch, tmp_path):
    """A machine with no cgroup v1 memory controller (cgroup v2, systemd): the trial still runs,
    with the per-process limit, and says why there is no limit per student."""
    assert hubctl.student_cgroups_here() is None   # this machine: the students' cgroups
    monkeypatch.setattr(accounts, "CGROUP_MEMORY", tmp_path / "no-such-mount")
    assert "cgroup v1" in hubctl.student_cgroups_here()
    assert not any("cgcreate" in p for p in hubctl.problems())   # not asked for there
    monkeypatch.setattr(accounts, "CGROUP_PARENT", "")
    assert "AN_HUB_STUDENT_CGROUP is empty" in hubctl.student_cgroups_here()


def test_no_students_cgroup_no_server_and_no_parent_no_hub(classroom):
    """The hook starts a student's server only in their own cgroup; the hub needs the parent."""
    one = classroom.names[0]
    hook = hubctl.env_dir() / "bin" / hubenv.WRAPPER.name
    missing = f"{accounts.CGROUP_PARENT}-missing-{secrets.token_hex(3)}"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(classroom.homes[one]),
           "AN_HUB_MEM_LIMIT_BYTES": str(2**31)}
    runs = {}
    for parent in (accounts.CGROUP_PARENT, missing):
        runs[parent] = subprocess.run(
            ["sudo", "-u", one, "env", f"AN_HUB_STUDENT_CGROUP={parent}", *(
                f"{k}={v}" for k, v in env.items()), str(hook), "--version"],
            capture_output=True, text=True, timeout=120, cwd="/")
    ok, refused = runs[accounts.CGROUP_PARENT], runs[missing]
    assert ok.returncode == 0 and ok.stdout.strip(), (ok.stdout, ok.stderr)  # jupyterhub-singleuser
    assert refused.returncode == 1 and "--limit-memory" in refused.stderr, refused.stderr
    hub_env = {**classroom.hub.environ(), "AN_HUB_STUDENT_CGROUP": missing}
    out = subprocess.run([str(hubctl.env_dir() / "bin" / "jupyterhub"), "-f", str(hubctl.CONFIG)],
                         env=hub_env, cwd=classroom.tmp, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "refusing to start a class hub" in out.stderr \
        and "--limit-memory" in out.stderr, out.stderr[-2000:]


CULL_IDLE_S = 10


def test_an_idle_server_is_culled(classroom):
    """A second hub with the same configuration and a short idle time: a student logs in, gets
    a server, does nothing; the idle culler stops it."""
    name = f"{accounts.STUDENT_PREFIX}{classroom.hub_user.rsplit('-', 1)[-1]}-c"
    password = accounts.new_password()
    hub = None
    try:
        accounts.create_student(name, trust=[classroom.bare], group=classroom.group,
                                password=password,
                                memory=hubctl.size_bytes(hubctl.STUDENT_MEMORY))
        uid = pwd.getpwnam(name).pw_uid
        hub = hubctl.Hub(classroom.tmp / "state-cull", [name], classroom.hub_user,
                         settings={"AN_HUB_CULL_IDLE_S": str(CULL_IDLE_S), "AN_HUB_CULL_EVERY_S": "2"})
        hub.start()
        s = students.Student(hub.url, name, password)
        try:
            s.login()
            s.open_link(f"{hub.url}/hub/user-redirect/lab")
            ready = time.monotonic()
            assert accounts.pids_of_uid(uid), "the student's server is not running"
            user = {}
            while time.monotonic() - ready < CULL_IDLE_S + 120:
                user = s.http.get(f"{hub.url}/hub/api/user", timeout=60, headers={
                    "X-XSRFToken": s.http.cookies.get("_xsrf", path="/hub/")}).json()
                if not user.get("servers") and not accounts.pids_of_uid(uid):
                    break
                time.sleep(1)
            culled_after = time.monotonic() - ready
        finally:
            s.close()
        log = hub.log_tail(400)
    finally:
        if hub is not None:
            hub.stop()
        accounts.remove_student(name)
    print(f"\nidle server culled {culled_after:.0f} s after it was ready (idle time {CULL_IDLE_S} s)")
    assert not user.get("servers"), f"still running after {culled_after:.0f} s: {user}"
    assert culled_after >= CULL_IDLE_S - 2, "stopped before it was idle for the configured time"
    assert f"Culling server {name}" in log, log[-3000:]


# --- the graded track (nbgrader on the hub) ---------------------------------------------------

GRADED = "02_worked_example_3x2"   # the assignment the teacher releases (scripts/graded_items.py)
WRITE_COURSE = """import os, subprocess, sys
done = subprocess.run([sys.executable, os.path.expanduser("~/%s/scripts/classroom.py"),
                       "assignments", os.path.expanduser("~/course")], capture_output=True, text=True)
print("COURSE " + json.dumps([done.returncode, done.stdout[-2000:], done.stderr[-4000:]]))"""
LOOK = """import glob, json
seen = {}
for what, path in %r:
    try:
        if what == "list":
            seen[path] = sorted(os.listdir(path))
        elif what == "glob":
            seen[path] = glob.glob(path)
        else:
            seen[path] = len(open(path, "rb").read())
    except OSError as exc:
        seen[path] = type(exc).__name__
print("LOOK " + json.dumps(seen))"""


def _ok(r, what: str) -> dict:
    """A formgrader or Assignments-panel answer: HTTP 200 and nbgrader's own success flag."""
    assert r.status_code == 200, f"{what}: {r.status_code} {r.text[:2000]}"
    body = r.json()
    assert not isinstance(body, dict) or body.get("success", True), f"{what}: {json.dumps(body)[:6000]}"
    return body


def test_the_graded_track_end_to_end(classroom):
    """nbgrader on the hub, as a class uses it: the teacher (formgrader in their own server)
    writes the course folder and releases an assignment; both students fetch it in their
    JupyterLab's Assignments panel (its REST API), answer (one all correct, one with an item
    wrong and one empty), save and submit; the teacher collects, autogrades, and releases the
    feedback; each student fetches their own. The scores are exactly what the answers deserve;
    the released notebook holds no solution, hidden test or expected value; a student reaches
    neither the other's submission or feedback nor the teacher's source or formgrader."""
    from test_graded import BEN, _expected_numbers, _secrets, _submission, expected_grades
    import nbformat

    from scripts.graded_items import ASSIGNMENTS

    hub, teacher, exchange = classroom.hub, classroom.teacher, classroom.exchange
    ada, ben = classroom.names
    course = exchange / grading.COURSE_ID
    item_of = {i.name: i for a in ASSIGNMENTS if a.name == GRADED for i in a.items}
    t = students.Student(hub.url, teacher, classroom.passwords[teacher])
    s = {n: students.Student(hub.url, n, classroom.passwords[n]) for n in (ada, ben)}
    try:
        assert (classroom.course_dir.parent.stat().st_mode & 0o777) == 0o700, "the teacher's home"
        # the teacher: their own copy of the course (the grading kernels import it), the course
        # folder written in their own kernel, then Generate and Release in the formgrader
        t.login()
        t.open_link(classroom.link)
        t.pull(classroom.repo, "main", hubctl.COURSE_FOLDER)
        t.open_notebook(f"{hubctl.COURSE_FOLDER}/{NOTEBOOK}")
        _, out = t.execute("import json\n" + WRITE_COURSE % hubctl.COURSE_FOLDER)
        code, stdout, stderr = _line(out, "COURSE")
        assert code == 0, stdout + stderr
        assert t.api("GET", "/formgrader").status_code == 200, "the teacher has no formgrader"
        _ok(t.api("POST", f"/formgrader/api/assignment/{GRADED}/assign"), "generate")
        _ok(t.api("POST", f"/formgrader/api/assignment/{GRADED}/release"), "release")

        # what was released: no line of a solution, rubric or hidden test, no expected value
        source = nbformat.read(classroom.course_dir / "source" / GRADED / f"{GRADED}.ipynb", as_version=4)
        released_path = course / "outbound" / GRADED / f"{GRADED}.ipynb"
        released = nbformat.read(released_path, as_version=4)
        text = "\n".join(c.source for c in released.cells)
        secrets = _secrets(source)
        assert len(secrets) >= 10, f"the search would find nothing ({len(secrets)} lines)"
        assert not [x for x in secrets if x in text], "the release holds lines of the teacher's source"
        numbers = _expected_numbers(next(a for a in ASSIGNMENTS if a.name == GRADED))
        assert not [n for n in numbers if n in text], "the release holds expected values"
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text

        # the students: the Assignments panel's list, Fetch, the answers saved, Submit
        answers = {ada: {}, ben: BEN[GRADED]}
        for name, student in s.items():
            student.login()
            student.open_link(classroom.link)
            assert student.api("GET", "/formgrader").status_code == 404, f"{name} has a formgrader"
            listed = _ok(student.api("GET", "/assignments", params={"course_id": grading.COURSE_ID}),
                         "list")["value"]
            assert [(a["assignment_id"], a["status"]) for a in listed] == [(GRADED, "released")], listed
            ids = {"course_id": grading.COURSE_ID, "assignment_id": GRADED}
            _ok(student.api("POST", "/assignments/fetch", json=ids), "fetch")
            path = f"/api/contents/{GRADED}/{GRADED}.ipynb"
            r = student.api("GET", path, params={"content": "1"})
            assert r.status_code == 200, f"{name}: nothing fetched ({r.status_code})"
            fetched = nbformat.from_dict(r.json()["content"])
            assert [c.source for c in fetched.cells] == [c.source for c in released.cells]
            work = _submission(fetched, source, answers[name])
            r = student.api("PUT", path, json={"type": "notebook", "format": "json", "content": work})
            assert r.status_code == 200, r.text[:500]
            after = _ok(student.api("POST", "/assignments/submit", json=ids), "submit")["value"]
            assert any(a.get("status") == "submitted" for a in after), after

        # the teacher: Collect, Autograde each, the grades the formgrader shows, the feedback
        _ok(t.api("POST", f"/formgrader/api/assignment/{GRADED}/collect"), "collect")
        for name in s:
            _ok(t.api("POST", f"/formgrader/api/submission/{GRADED}/{name}/autograde"), f"autograde {name}")
        got, totals = {}, {}
        for sub in _ok(t.api("GET", f"/formgrader/api/submitted_notebooks/{GRADED}/{GRADED}"), "submissions"):
            grades = _ok(t.api("GET", "/formgrader/api/grades", params={"submission_id": sub["id"]}), "grades")
            for g in grades:
                got[sub["student"], GRADED, g["name"]] = (g["auto_score"], g["needs_manual_grade"])
                assert g["max_score"] == item_of[g["name"]].score, g
            totals[sub["student"]] = (sub["score"], sub["max_score"])
        wrong = {(ben, GRADED, "nb02_third_row"), (ben, GRADED, "nb02_shift")}
        expected = expected_grades({name: {GRADED: a} for name, a in answers.items()}, wrong)
        assert got == expected
        assert totals[ada][0] > totals[ben][0] > 0, totals
        _ok(t.api("POST", f"/formgrader/api/assignment/{GRADED}/generate_feedback"), "feedback")
        _ok(t.api("POST", f"/formgrader/api/assignment/{GRADED}/release_feedback"), "release feedback")

        # each student fetches their feedback: their own, and only theirs
        pages = {}
        for name, student in s.items():
            ids = {"course_id": grading.COURSE_ID, "assignment_id": GRADED}
            _ok(student.api("POST", "/assignments/fetch_feedback", json=ids), "fetch feedback")
            folder = student.api("GET", f"/api/contents/{GRADED}/feedback").json()["content"]
            assert len(folder) == 1, f"{name}: {folder}"
            files = student.api("GET", f"/api/contents/{folder[0]['path']}").json()["content"]
            assert [f["name"] for f in files] == [f"{GRADED}.html"], files
            r = student.api("GET", f"/api/contents/{files[0]['path']}",
                            params={"content": "1", "format": "text", "type": "file"})
            page = r.json()["content"]
            pages[name] = html.unescape(re.sub(r"<[^>]+>", "", page[page.index("<body"):]))
        for name, text in pages.items():
            score, top = totals[name]
            assert f"{GRADED} (Score: {score:.1f} / {top:.1f})" in " ".join(text.split()), name
            assert "Traceback" not in text and "HIDDEN TESTS" not in text, name
        assert "a_3 is not the third row of the weights" in pages[ben]
        assert "a_3 is not the third row of the weights" not in pages[ada]

        # a student (B) cannot reach A's submission or feedback, nor the teacher's source
        inbound = sorted((course / "inbound").iterdir())
        assert len(inbound) == 2, inbound
        ada_submission = next(p for p in inbound if p.name.startswith(f"{ada}+"))
        teacher_home = classroom.course_dir.parent
        s[ben].open_notebook(f"{hubctl.COURSE_FOLDER}/{NOTEBOOK}")  # B's kernel from the class
        looks = [("list", str(course / "inbound")), ("list", str(course / "feedback")),
                 ("glob", str(course / "inbound" / f"{ada}+*")),
                 ("list", str(teacher_home)),
                 ("read", str(classroom.course_dir / "source" / GRADED / f"{GRADED}.ipynb")),
                 ("read", str(classroom.course_dir / "gradebook.db")),
                 ("read", str(classroom.homes[ada] / GRADED / f"{GRADED}.ipynb"))]
        _, out = s[ben].execute("import os\n" + LOOK % (looks,))
        seen = _line(out, "LOOK")
        other_formgrader = s[ben].http.get(f"{hub.url}/user/{teacher}/formgrader/api/assignments",
                                           timeout=60)
    finally:
        for student in (t, *s.values()):
            student.close()
    assert seen == {path: ([] if what == "glob" else "PermissionError") for what, path in looks}, seen
    assert other_formgrader.status_code == 403, other_formgrader.status_code
    # what keeps a submission from the others, by nbgrader's design: its folder is readable
    # by its exact name only, which ends in 12 random characters (os.urandom), in a folder that
    # nobody but the teacher can list (others may write into it and enter it: mode -wx)
    student, assignment, _timestamp, random_part = ada_submission.name.split("+")
    assert (student, assignment, len(random_part)) == (ada, GRADED, 12), ada_submission.name
    assert (course / "inbound").stat().st_mode & 0o007 == 0o003


# The kernel's status bar item reads "Python 3 (ipykernel) | Idle"; in Japanese its title and
# its state are translated ("| アイドル").
KERNEL_STATUS_ANY = ("#jp-main-statusbar span[title^='Change kernel'], "
                     "#jp-main-statusbar span[title*='カーネル']")
KERNEL_IDLE_JS = """(sel) => /\\|\\s*(Idle|アイドル)$/.test(
    (document.querySelector(sel)?.textContent || '').trim())"""


def test_a_student_in_a_real_browser(classroom):
    """A third student in Debian's Chromium: the link, the hub's login form, JupyterLab (in
    Japanese when set up with --lang ja), Run All from the menu, three slider moves by keyboard."""
    import browser_helpers as bh

    require(bh.browser_unavailable_reason(), "REQUIRE_BROWSER", "the browser cannot run")
    from playwright.sync_api import sync_playwright

    artifacts = ROOT / "artifacts" / "hub"
    artifacts.mkdir(parents=True, exist_ok=True)
    name = classroom.browser_student
    requests_seen: list[str] = []
    latencies: list[float] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=bh.CHROMIUM, args=bh.CHROMIUM_ARGS,
                                     headless=True)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.on("request", lambda r: requests_seen.append(r.url))
            page = context.new_page()
            page.on("websocket", lambda ws: requests_seen.append(ws.url))
            try:
                page.goto(classroom.link, timeout=bh.PAGE_LOAD_MS)  # not logged in: the form
                page.fill("#username_input", name)
                page.fill("#password_input", classroom.passwords[name])
                page.click("#login_submit")
                # spawn, nbgitpuller's page, then JupyterLab with notebook 03 of the own copy
                page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=300_000)
                page.wait_for_function(KERNEL_IDLE_JS, arg=KERNEL_STATUS_ANY, timeout=300_000)
                menus = page.locator(".lm-MenuBar-itemLabel").all_text_contents()
                page.locator(".lm-MenuBar-item").nth(3).click()  # Run (its label is translated)
                page.locator(".lm-Menu li[data-command='runmenu:run-all']").click()
                box = page.locator(bh.LIVE_BOX).first
                box.wait_for(timeout=300_000)
                image = box.locator("img.live-figure-image")
                page.wait_for_function("""(img) => img.complete && img.naturalWidth > 0""",
                                       arg=image.element_handle(), timeout=bh.WIDGETS_MS)
                box.scroll_into_view_if_needed()
                handle = box.locator(".noUi-handle[role=slider]").first
                # named by its label (its textContent, which the extension reads; its innerText
                # was '' in a CI run), and the figure by its words: the course's JupyterLab
                # extension, which the hub's venv holds (hubenv.setup)
                label = (box.locator(".widget-slider .widget-label").first.text_content()
                         or "").strip()
                assert label and handle.get_attribute("aria-label") == label, (
                    f"the slider's handle is named {handle.get_attribute('aria-label')!r}, not "
                    f"by its label {label!r}: is the course's JupyterLab extension in the hub?")
                assert image.get_attribute("alt"), "the live figure has no alt in the hub"
                for _ in range(3):
                    before = (image.get_attribute("src"), box.locator(".live-figure-text").inner_text())
                    handle.focus()
                    t0 = time.perf_counter()
                    handle.press("ArrowLeft")
                    page.wait_for_function(
                        """([img, src]) => img.getAttribute('src') !== src && img.complete
                                           && img.naturalWidth > 0""",
                        arg=[image.element_handle(), before[0]], timeout=bh.CONTROL_MS)
                    latencies.append(1e3 * (time.perf_counter() - t0))
                    after = box.locator(".live-figure-text").inner_text()
                    assert after != before[1], "the text did not change with the slider"
                page.screenshot(path=str(artifacts / "browser-student.png"))
            except Exception:
                page.screenshot(path=str(artifacts / "browser-student-failure.png"))
                raise
        finally:
            browser.close()
    print(f"\nbrowser student through the hub: slider key -> new image "
          f"{', '.join(f'{ms:.0f}' for ms in latencies)} ms (first includes the first redraw)")
    expected_menu = "ファイル" if hubctl.env_lang() == "ja" else "File"
    assert menus[:1] == [expected_menu], menus
    assert f"/user/{name}/" in page.url and NOTEBOOK.rsplit("/", 1)[-1] in page.url, page.url
    remote = sorted({u for u in requests_seen if not bh.is_local_url(u)})
    assert not remote, f"the page needed the network: {remote[:10]}"
