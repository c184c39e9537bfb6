"""End-to-end: every notebook in a real JupyterLab in a real (headless) Chromium.

nbval proves that the kernel re-runs a notebook and prints the same thing; it cannot
see whether a slider renders, moves and redraws its plot, which is what a learner does.
For every notebook this test:

- opens it in JupyterLab (own server on 127.0.0.1, random port and token, isolated
  home and settings, a temp copy of the notebooks) with a fresh kernel, waits for the kernel
  to be idle, clears the stored outputs and runs all cells through the Run menu. JupyterLab
  loads once per worker and each notebook is opened in it with the app's own command and
  closed unsaved afterwards (bh.LabPage: loading the app took 8 of the 12 s per notebook);
  after a failure the next notebook gets a newly loaded page;
- asserts that no cell shows a traceback except the cells tagged ``raises-exception``
  (read from the .ipynb; those must show theirs), that every widget rendered
  (no "Error displaying widget", none stuck at "Loading widget...");
- drives one slider per notebook with the keyboard alone (Escape, arrow keys to its cell, Tab
  to its handle, which must show the focus, an arrow key: bh.NotebookRun.keyboard_only);
- moves every control of every ``with_controls`` figure the way a person does
  (keyboard on a slider handle, typing into its readout, choosing a dropdown option,
  clicking another toggle button) and asserts that the figure's text and image both
  change, recording the time from the key/click to the updated output;
- on one notebook of each language (A11Y_NOTEBOOKS), runs axe-core on the page once the
  controls have moved: no serious or critical violation except JupyterLab's own (LAB_KNOWN,
  each on the elements it names, with its upstream issue), no other one the README does not
  list (tests/accessibility.py);
- saves screenshots (before / after moving the controls) to artifacts/browser/;
- fails if the page made any request that is not to 127.0.0.1 / localhost / data: / blob:.

Latencies go to artifacts/browser/latency.json and a table in the terminal summary.
Without /usr/bin/chromium the test skips (install: apt-get install chromium); with
REQUIRE_BROWSER=1 (CI) it fails instead. BROWSER_TEST_NOTEBOOKS=<dir> points it at
other notebooks (default: notebooks/); of its language folders (notebooks/ja/, the Japanese
edition), the notebooks with a list or buttons among their controls are tested too (the others
run the English code with sliders only: bh.drives_differently says why that needs no second
run), and with BROWSER_TEST_EVERY_EDITION=1 all of them.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from required import require

import accessibility as a11y
import browser_helpers as bh

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = Path(os.environ.get("BROWSER_TEST_NOTEBOOKS", ROOT / "notebooks")).resolve()
ARTIFACTS = ROOT / "artifacts" / "browser"
# Every English notebook, and the Japanese ones the browser drives differently (with a list or
# buttons: bh.drives_differently says why the others need no second run); BROWSER_TEST_EVERY_EDITION=1
# runs every Japanese notebook too.
NOTEBOOKS = bh.browser_notebooks(NOTEBOOK_DIR, os.environ.get("BROWSER_TEST_EVERY_EDITION") == "1")
# Under pytest-xdist: the same id in every worker of one run, and this worker's name.
# axe-core runs on one notebook of each language, once its cells have run and its controls moved
A11Y_NOTEBOOKS = ("04_masking.ipynb", "ja/04_masking.ipynb")
# Serious violations that are JupyterLab's or ipywidgets', not the course's (README, "Accessibility")
LAB_KNOWN = (
    a11y.Known("aria-allowed-attr", "jp-button", "jupyterlab/jupyterlab#16891"),
    a11y.Known("aria-required-children", ".jp-WindowedPanel-viewport", "jupyterlab/jupyterlab#14765"),
    a11y.Known("aria-input-field-name", ".cm-editor", "jupyterlab/jupyterlab#10347"),
)
# (a slider's handle and a live figure's ipywidgets Image, which ipywidgets leaves without a name
# and an alt, are named by the course's JupyterLab extension, labextension/: no excuse for them)
# The figures JupyterLab has drawn in the outputs (of the cells attached to the page: the test
# waits for all): an image/png drawn alone, without an alt, and each <img> drawn from a text/html
FIGURE_IMAGES_JS = """() => ({
  bare: document.querySelectorAll('.jp-OutputArea-output.jp-RenderedImage img').length,
  shown: [...document.querySelectorAll('.jp-OutputArea-output.jp-RenderedHTMLCommon img')].map(
    i => ({src: (i.getAttribute('src') || '').slice(0, 40), alt: i.getAttribute('alt'),
           broken: i.complete && i.naturalWidth === 0})),
  live: [...document.querySelectorAll('img.live-figure-image')].map(i => {
    const words = i.parentElement.querySelector(':scope > .live-figure-text .live-figure-words');
    return {alt: i.getAttribute('alt'), words: words ? words.textContent.trim() : null};
  })})"""
XDIST_RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID")
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")

pytestmark = pytest.mark.browser


def figure_alt_problems(page, name: str, expected: int) -> list[str]:
    """Issue 27: JupyterLab draws each figure from its text/html, an <img> whose alt is the
    figure in words (course.figures.figure_html), not from its bare PNG, which has no alt; as
    many as the `expected` figures the notebook stores (every cell attached to the page)."""
    seen = page.evaluate(FIGURE_IMAGES_JS)
    problems = [f"{name}: {seen['bare']} figure(s) drawn from their PNG alone, without an alt"
                ] if seen["bare"] else []
    problems += [f"{name}: a figure <img src={i['src']!r}> in JupyterLab has {why}"
                 for i in seen["shown"] if (why := a11y.alt_problem(i["alt"]))]
    problems += [f"{name}: a figure <img src={i['src']!r}> in JupyterLab is not drawn: "
                 "its src is broken (or was cut by the sanitizer)" for i in seen["shown"] if i["broken"]]
    if len(seen["shown"]) + seen["bare"] != expected:
        problems.append(f"{name}: {len(seen['shown']) + seen['bare']} figure(s) drawn in "
                        f"JupyterLab, the notebook stores {expected}")
    # a live figure (an ipywidgets Image): its alt is its words as they are now, given by the
    # course's JupyterLab extension (labextension/) and kept up to date as its controls move
    for k, live in enumerate(seen["live"]):
        if (why := a11y.alt_problem(live["alt"])) or live["alt"] != live["words"]:
            problems.append(f"{name}: live figure {k + 1} in JupyterLab has "
                            f"{why or 'an alt that is not its words as they are now'} "
                            f"(alt {(live['alt'] or '')[:60]!r}, words {(live['words'] or '')[:60]!r})")
    return problems


def _require_browser() -> None:
    require(bh.browser_unavailable_reason(), "REQUIRE_BROWSER", "the browser test cannot run")


class _LatencyReport:
    """Collects every control change of the session; writes latency.json, prints a table."""

    def __init__(self):
        self.rows: list[dict] = []
        self.notebooks: dict[str, dict] = {}
        self.meta: dict = {}
        self.lines: list[str] = []

    def write(self) -> Path | None:
        """Write latency.json; under pytest-xdist, merged with what other workers of this run wrote.

        With --dist load / loadgroup the notebooks may be spread over workers, each with its
        own module fixtures: without the merge the last one to finish would overwrite the
        others' rows. A lock file serialises the workers; the file is replaced atomically, so
        scripts/bench_browser.py never reads half of it.
        """
        if not self.rows:
            return None
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / "latency.json"
        data = {**self.meta, "notebooks": dict(self.notebooks), "changes": list(self.rows)}
        with open(ARTIFACTS / ".latency.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if XDIST_RUN:
                data["xdist_run"] = XDIST_RUN
                try:
                    old = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    old = {}
                if old.get("xdist_run") == XDIST_RUN:   # another worker of this run: keep its rows
                    data["notebooks"] = {**old["notebooks"], **data["notebooks"]}
                    mine = set(self.notebooks)
                    data["changes"] = sorted(
                        [r for r in old["changes"] if r["notebook"] not in mine] + data["changes"],
                        key=lambda r: r["notebook"])   # stable: each notebook's order is kept
            tmp = path.with_name(f".latency.{os.getpid()}.json")
            tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            os.replace(tmp, path)
        self.lines = [f"control change -> updated text and image (ms), written to "
                      f"{path.relative_to(ROOT)}:",
                      f"{'notebook':34} {'control':18} {'from -> to':26} {'ms':>8} {'text':>7} {'image':>7}"]
        def num(x):
            return "-" if x is None else f"{x:.0f}"

        for r in data["changes"]:
            ft = f"{r['from']} -> {r['to']}"
            ms = "FAILED" if r["ms"] is None else num(r["ms"])
            self.lines.append(f"{bh.artifact_stem(r['notebook'])[:34]:34} {r['control'][:18]:18} "
                              f"{ft[:26]:26} {ms:>8} {num(r['text_ms']):>7} {num(r['image_ms']):>7}")
        ok = sorted(r["ms"] for r in data["changes"] if r["ms"] is not None)
        if ok:
            self.lines.append(f"{len(ok)} changes: median {ok[len(ok) // 2]:.0f} ms, "
                              f"max {ok[-1]:.0f} ms")
        return path

    # pytest hook, called because the fixture registers this object as a plugin
    def pytest_terminal_summary(self, terminalreporter):
        if self.lines:
            terminalreporter.section("browser test: control latency")
            for line in self.lines:
                terminalreporter.write_line(line)


@pytest.fixture(scope="module")
def latency_report(request):
    report = _LatencyReport()
    request.config.pluginmanager.register(report, "browser-latency-report")
    yield report
    report.write()


@pytest.fixture(scope="module")
def lab_server():
    _require_browser()
    tmp = Path(tempfile.mkdtemp(prefix="browser-test-"))
    server = bh.LabServer(tmp, ROOT, NOTEBOOK_DIR)
    try:
        server.start()
        settings = server.notification_settings()
        assert settings.get("fetchNews") == "false" and settings.get("checkForUpdates") is False, (
            f"the JupyterLab news/update pop-up is not switched off: {settings}")
        yield server
    finally:
        server.stop()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        if server.log_path.exists():   # one per xdist worker: each has its own server
            log_name = f"jupyter-server-{XDIST_WORKER}.log" if XDIST_WORKER else "jupyter-server.log"
            shutil.copy(server.log_path, ARTIFACTS / log_name)
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def chromium():
    """One headless Chromium for the module (Playwright's sync API allows one per thread)."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=bh.CHROMIUM, args=bh.CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def browser(lab_server, latency_report, chromium):
    version = subprocess.run([bh.CHROMIUM, "--version"], capture_output=True, text=True)
    latency_report.meta = {
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "chromium": chromium.version or version.stdout.strip(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "notebooks": str(NOTEBOOK_DIR),
        "what": "ms from the user event (keydown/click/change) to both the new text and the "
                "new image being shown; text_ms / image_ms separately; wall_ms from Python",
    }
    return chromium


@pytest.fixture(scope="module")
def lab_page(lab_server, browser, latency_report):
    """One JupyterLab page for the module's notebooks (bh.LabPage): the app loads once."""
    lab = bh.LabPage(browser, lab_server)
    try:
        yield lab
    finally:
        latency_report.meta["jupyterlab_loads_s"] = [round(t, 2) for t in lab.load_s]
        lab.close()


@pytest.mark.skipif(not NOTEBOOKS, reason=f"no notebooks in {NOTEBOOK_DIR}")
@pytest.mark.parametrize("name", NOTEBOOKS or ["(none)"])
def test_notebook_in_jupyterlab(name, lab_server, lab_page, latency_report):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob(f"{bh.artifact_stem(name)}-*.png"):
        old.unlink(missing_ok=True)   # another run may share the folder
    lab_server.shutdown_kernels()   # a fresh kernel for every notebook
    expectations = bh.read_expectations(lab_server.nb_dir / name)  # the copy being served

    lab_page.begin()   # JupyterLab loaded (once per module, or again after a failure)
    page = lab_page.page
    run = bh.NotebookRun(page, lab_server, name, expectations, ARTIFACTS)
    problems: list[str] = []
    failed = False
    t_test = time.perf_counter()
    try:
        run.open(lab_page)
        kernels = [k["id"] for k in lab_server.kernels()]
        assert len(kernels) == 1 and kernels[0] not in lab_page.kernels_seen, (
            f"{name} is not running on a kernel of its own: {kernels} "
            f"(kernels of earlier notebooks: {sorted(lab_page.kernels_seen)})")
        lab_page.kernels_seen.update(kernels)
        # the stored outputs as a learner first sees them, untrusted: HTML sanitized; every
        # cell attached (JupyterLab attaches the cells out of view when the browser is idle)
        stored = bh.stored_figures(lab_server.nb_dir / name)
        run.wait_all_cells_attached()
        problems += figure_alt_problems(page, f"{name} as stored", expected=stored)
        run.run_all()
        run.wait_widgets()
        if run.widget_state != "done":
            problems.append(f"widgets did not all render: {run.widget_state}")
        problems += run.cell_problems()
        problems += run.stray_controls()
        boxes = run.boxes = run.live_boxes()
        run.screenshot("1-before", boxes)
        if not problems:
            t = time.perf_counter()
            with_slider = [k for k, b in enumerate(boxes)
                           if b.locator(".widget-slider .noUi-handle[role=slider]").count()]
            if boxes and not with_slider:
                problems.append("no live figure with a slider to drive by keyboard only")
            elif with_slider:
                problems += run.keyboard_only(with_slider[0], boxes[with_slider[0]])
            for k, box in enumerate(boxes):
                problems += run.exercise(k, box)
            run.timings["controls_s"] = time.perf_counter() - t
            run.screenshot("2-after", boxes)
            problems += [f"after moving the controls: {p}" for p in run.cell_problems()]
        problems += figure_alt_problems(page, name, expected=stored)
        if name in A11Y_NOTEBOOKS:
            t = time.perf_counter()
            problems += a11y.axe_problems(page, f"{name} in JupyterLab", "test_browser.py",
                                          known=LAB_KNOWN)
            run.timings["axe_s"] = time.perf_counter() - t
    except Exception:
        failed = True
        with contextlib.suppress(Exception):   # the page may be gone; keep the real error
            page.screenshot(path=str(ARTIFACTS / f"{run.stem}-failure.png"))
        raise
    finally:
        latency_report.rows += [c.record() | c.extra for c in run.changes]
        latency_report.notebooks[name] = {
            "live_figures": len(run.boxes), "changes": len(run.changes),
            **{k: round(v, 2) for k, v in run.timings.items()},
            "total_s": round(time.perf_counter() - t_test, 2)}
        lab_page.end(failed=failed or bool(problems))
        lab_server.shutdown_kernels()

    requests, console_errors = list(lab_page.requests), list(lab_page.console_errors)
    remote = sorted({u for u in requests if not bh.is_local_url(u)})
    if remote:
        problems.append("the page needed the network: " + ", ".join(remote[:10]))
    if problems:
        page_errors = "\n".join(console_errors[-5:])
        trace = "\n".join(getattr(run, "run_trace", []))
        pytest.fail(f"{name}:\n- " + "\n- ".join(problems)
                    + (f"\n(how Run All went:\n{trace})" if trace else "")
                    + (f"\n(browser console errors, last 5:\n{page_errors})" if page_errors else "")
                    + f"\nscreenshots: {ARTIFACTS.relative_to(ROOT)}/{run.stem}-*.png",
                    pytrace=False)


def test_a_japanese_notebook_left_out_is_driven_as_its_english_one():
    """What bh.drives_differently relies on: a Japanese notebook the browser test leaves out runs
    the English notebook's code (its first cell, which switches the language, aside) and has
    sliders only; the notebook with axe-core's Japanese check is run."""
    assert set(A11Y_NOTEBOOKS) <= set(NOTEBOOKS)
    if os.environ.get("BROWSER_TEST_EVERY_EDITION") == "1" or NOTEBOOK_DIR != ROOT / "notebooks":
        return
    left = [n for n in bh.notebook_names(NOTEBOOK_DIR) if n not in NOTEBOOKS]
    assert left and all(n.startswith("ja/") for n in left), left
    for name in left:
        english = NOTEBOOK_DIR / name.removeprefix("ja/")
        code = [[c["source"] for c in json.loads(p.read_text(encoding="utf-8"))["cells"]
                 if c["cell_type"] == "code"][1:] for p in (english, NOTEBOOK_DIR / name)]
        assert code[0] == code[1], f"{name} does not run the code of {english.name}"
        assert bh.live_controls(NOTEBOOK_DIR / name) <= bh.SLIDERS, name


def test_drives_differently_reads_the_controls_a_notebook_builds(tmp_path):
    def notebook(source: str) -> str:
        (tmp_path / "ja").mkdir(exist_ok=True)
        (tmp_path / "ja" / "x.ipynb").write_text(json.dumps({"cells": [
            {"cell_type": "code", "source": [source], "metadata": {}, "outputs": []}]}))
        return "ja/x.ipynb"
    assert not bh.drives_differently(tmp_path, notebook(
        "with_controls(live, d_k=widgets.SelectionSlider(options=[1, 2]), n=widgets.IntSlider())"))
    assert bh.drives_differently(tmp_path, notebook(
        "with_controls(live, mask=widgets.ToggleButtons(options=['none', 'causal']))"))
    assert not bh.drives_differently(tmp_path, notebook("widgets.Dropdown(options=[1])  # no live figure"))


def test_run_state_reads_each_wait_afresh(chromium):
    """RUN_STATE_JS on a page that looks like JupyterLab 4.5 after an expected error: cells left
    queued ([*]) with the kernel idle. It counts as stopped only once the same picture has held
    for 10 s within one wait; a clock left from an earlier wait must not call the next run
    stopped before it starts (that rerun the queued cells twice in CI, and the second, aborted
    copy cleared the expected error of ja/04's cell 56)."""
    page_html = """
      <div id="jp-main-statusbar"><span title="Change kernel">Python 3 (ipykernel) | Idle</span></div>
      <div class="jp-Notebook">
        <div class="jp-CodeCell"><div class="jp-InputArea-prompt">[1]:</div>
          <div class="jp-OutputArea-output" data-mime-type="application/vnd.jupyter.stderr">
            Traceback (most recent call last)</div></div>
        <div class="jp-CodeCell"><div class="jp-InputArea-prompt">[*]:</div></div>
        <div class="jp-CodeCell"><div class="jp-InputArea-prompt">[*]:</div></div>
      </div>"""
    arg = [bh.KERNEL_STATUS, bh.STDERR_OUTPUT, bh.TRACEBACK_RE.pattern]
    page = chromium.new_page()
    try:
        page.set_content(page_html)

        def state():
            return page.evaluate(bh.RUN_STATE_JS, arg)

        assert state() is False                      # the picture is new: the clock starts
        page.evaluate("() => { window.__stuckSince = Date.now() - 11000; }")
        assert state() == "stopped"                  # held for 11 s: a stop
        page.evaluate(bh.RESET_RUN_STATE_JS)          # the next wait (the cells were rerun)
        assert state() is False                      # same picture, but a fresh clock
        page.evaluate("() => { window.__stuckSince = Date.now() - 11000; }")
        page.evaluate("""() => { document.querySelector('#jp-main-statusbar span')
                                 .textContent = 'Python 3 (ipykernel) | Busy'; }""")
        assert state() is False                      # the kernel works: not stuck
        page.evaluate("""() => { document.querySelector('#jp-main-statusbar span')
                                 .textContent = 'Python 3 (ipykernel) | Idle'; }""")
        assert state() is False                      # idle again: the clock starts again
        page.evaluate("""() => { document.querySelectorAll('.jp-InputArea-prompt')
                                 .forEach((p, i) => { if (i) p.textContent = '[ ]:'; }); }""")
        assert state() == "stopped"                  # JupyterLab 4.6's picture: at once
    finally:
        page.close()


def test_figure_alt_problems_finds_a_bare_png_an_img_without_words_and_a_broken_one(chromium):
    """figure_alt_problems on a page that looks like JupyterLab's outputs: a figure drawn from
    its PNG alone, one <img> drawn from a text/html without an alt, one whose src is broken."""
    png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAAB"
           "JRU5ErkJggg==")   # one white pixel
    page = chromium.new_page()
    try:
        page.set_content(
            '<div class="jp-OutputArea-output jp-RenderedImage">'
            f'<img src="data:image/png;base64,{png}"></div>'
            '<div class="jp-OutputArea-output jp-RenderedHTMLCommon">'
            f'<img src="data:image/png;base64,{png}" alt="a heatmap of 3 × 3 values"></div>'
            '<div class="jp-OutputArea-output jp-RenderedHTMLCommon">'
            f'<img src="data:image/png;base64,{png}"></div>'
            '<div class="jp-OutputArea-output jp-RenderedHTMLCommon">'
            '<img src="data:image/png;base64,bm90IGEgcG5n" alt="a curve"></div>')
        page.wait_for_function("() => [...document.images].every(i => i.complete)")
        problems = figure_alt_problems(page, "sample", expected=4)
        assert len(problems) == 3, problems
        assert "1 figure(s) drawn from their PNG alone" in problems[0]
        assert "has no alt" in problems[1] and "is not drawn" in problems[2]
        page.set_content("<p>no figure in view</p>")
        assert figure_alt_problems(page, "sample", expected=0) == []
        assert "0 figure(s) drawn in JupyterLab, the notebook stores 2" in figure_alt_problems(
            page, "sample", expected=2)[0]
    finally:
        page.close()


def test_widget_names_names_a_handle_and_a_live_figure(chromium):
    """The script the course's JupyterLab extension runs (and the slides include), on a page like
    ipywidgets' outputs: a slider's handle gets its label as its name, a live figure's image its
    words as its alt (the hidden words are then hidden from a screen reader, which would read
    them twice); figure_alt_problems sees a live figure without an alt, or with stale words."""
    page = chromium.new_page()
    try:
        page.set_content(
            '<div class="widget-vbox"><div class="widget-slider"><label class="widget-label">'
            'd_k</label><div class="noUi-handle" role="slider" aria-valuenow="4"></div></div>'
            '<div class="widget-html live-figure-text"><div class="widget-html-content"><pre>'
            'max weight 0.9</pre><p class="live-figure-words">a heatmap of 3 × 3 attention '
            'weights</p></div></div><img class="live-figure-image"></div>')
        assert "has no alt" in figure_alt_problems(page, "sample", expected=0)[0]
        page.add_script_tag(path=str(ROOT / "presentation/voila/templates/course-slides/static"
                                     "/widget-names.js"))
        page.evaluate("() => courseNameWidgets(document.body)")
        assert page.get_attribute(".noUi-handle", "aria-label") == "d_k"
        assert page.get_attribute("img", "alt") == "a heatmap of 3 × 3 attention weights"
        assert page.get_attribute(".live-figure-words", "aria-hidden") == "true"
        assert figure_alt_problems(page, "sample", expected=0) == []
        page.evaluate("() => { document.querySelector('.live-figure-words').textContent = "
                      "'a heatmap of 4 × 4 attention weights'; }")
        assert "not its words as they are now" in figure_alt_problems(page, "s", 0)[0]
        page.evaluate("() => courseNameWidgets(document.body)")
        assert page.get_attribute("img", "alt") == "a heatmap of 4 × 4 attention weights"
        # a description emptied: ipywidgets hides its label, which keeps the old text
        page.evaluate("() => { document.querySelector('.widget-label').style.display = 'none';"
                      " courseNameWidgets(document.body); }")
        assert page.get_attribute(".noUi-handle", "aria-label") is None
    finally:
        page.close()
