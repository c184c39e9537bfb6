"""A class on one server (hub/): a real JupyterHub on 127.0.0.1 with two simulated students.

The module starts the hub of hub/jupyterhub_config.py (free ports, its own temp folder, its own
state) with two new Unix users an-student-<random>-1 and -2, and lets both students at once
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
- at the end every process the test started is gone and the users are removed (also on failure).

Needs root (useradd), the hub's venv and its proxy: `python3 dev.py hub --setup`. Without them
the tests skip; with REQUIRE_HUB=1 (CI) they fail instead.
"""

from __future__ import annotations

import json
import os
import pwd
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
import hubctl  # noqa: E402  (hub/ is not a package: its files are the hub's, not the course's)
import students  # noqa: E402

pytestmark = pytest.mark.hub

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
    names = [f"{hubctl.STUDENT_PREFIX}{tag}-{k}" for k in (1, 2)]
    browser_student = f"{hubctl.STUDENT_PREFIX}{tag}-b"  # only ever in the real browser
    tmp = Path(tempfile.mkdtemp(prefix="an-hub-test-"))
    tmp.chmod(0o755)  # the students clone the course from here; the hub's state stays 700
    bare = tmp / "course.git"
    created: list[str] = []
    hub = None
    leftovers: dict = {}
    try:
        repo = hubctl.publish_course(bare)
        for name in [*names, browser_student]:
            hubctl.create_student(name, trust=[bare])
            created.append(name)
        homes = {n: Path(pwd.getpwnam(n).pw_dir) for n in names}
        uids = {n: pwd.getpwnam(n).pw_uid for n in names}
        hub = hubctl.Hub(tmp / "state", [*names, browser_student])
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
            seen[s.name]["pids"] = hubctl.pids_of_uid(uids[s.name])
            seen[s.name]["sockets"] = hubctl.listening_sockets(
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
        results = students.run_class(hub.url, names, hub.password, link, repo, "main",
                                     hubctl.COURSE_FOLDER, NOTEBOOK, moves=MOVES, think_s=0.1,
                                     after_pull=after_pull, after=after,
                                     link_first={names[1]})  # student 2 clicks before logging in
        yield SimpleNamespace(hub=hub, names=names, browser_student=browser_student,
                              homes=homes, uids=uids, repo=repo, bare=bare,
                              tmp=tmp, link=link, results={r.name: r for r in results},
                              seen=seen, took=time.perf_counter() - t0)
    finally:
        hub_pids = hub.own_pids() if hub else []
        if hub is not None:
            hub.stop()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and any(
                    hubctl.pids_of_uid(pwd.getpwnam(n).pw_uid) for n in created):
                time.sleep(0.2)  # the hub stops each server; each server its kernels
            leftovers = {n: hubctl.pids_of_uid(pwd.getpwnam(n).pw_uid) for n in created}
            leftovers["hub/proxy"] = [p for p in hub_pids if _alive(p)]
        for name in created:
            hubctl.remove_student(name)   # also stops what was left, by pid
        shutil.rmtree(tmp, ignore_errors=True)
    gone = [n for n in created if _user_exists(n)]
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
    s = students.Student(classroom.hub.url, one, classroom.hub.password)
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
    name, hub = classroom.browser_student, classroom.hub
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
                page.fill("#password_input", hub.password)
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
