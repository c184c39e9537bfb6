"""Helpers for tests/test_browser.py: a throw-away JupyterLab server and a notebook page driver.

Everything waits for a state (kernel idle, prompts numbered, image loaded, output
changed), never for a fixed time: the CPU is shared and timings vary a lot.

Selectors (JupyterLab 4.6, ipywidgets 8.1), kept here in one place:

- kernel status   #jp-main-statusbar span[title^='Change kernel']  "Python 3 (ipykernel) | Idle"
- menus           .lm-MenuBar-itemLabel (Edit, Run) then .lm-Menu li[data-command='...']
- cells           .jp-Notebook .jp-Cell (.jp-CodeCell), prompt .jp-InputArea-prompt "[3]:"
- error output    .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']
                  whose text is a traceback (plain stderr uses the same mime type)
- widget failure  "Error displaying widget" / "Loading widget..." (jupyterlab-manager)
- live figure     .widget-vbox:has(> .live-figure-text), its controls in the first child
                  box, text .live-figure-text pre, image img.live-figure-image (blob: URL)
- controls        .widget-slider (.noUi-handle[role=slider], .widget-readout),
                  .widget-dropdown select, .widget-toggle-buttons button,
                  .widget-select select, .widget-radio input, .widget-checkbox input,
                  standalone .widget-toggle-button, .widget-text input / textarea
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hub"))
from localserver import LocalServer  # noqa: E402  (hub/: hubctl.py starts its hub with it too)

CHROMIUM = "/usr/bin/chromium"
# Without the networking flags Chromium keeps calling out (component updates, sync, ...).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]

# Upper bounds only: every wait returns as soon as its state is reached.
PAGE_LOAD_MS = 120_000
KERNEL_IDLE_MS = 120_000
RUN_ALL_MS = 600_000
# Long waits poll every POLL_MS instead of at every animation frame (Playwright's default):
# a page whose rendering the browser throttles (busy machine, a background window) would
# otherwise re-check its condition rarely or never. Latencies are still measured per frame.
POLL_MS = 100
CELLS_ATTACHED_MS = 30_000  # wait_all_cells_attached
WIDGETS_MS = 120_000
CONTROL_MS = 90_000

KERNEL_STATUS = "#jp-main-statusbar span[title^='Change kernel']"
PROMPTS = ".jp-Notebook .jp-CodeCell .jp-InputArea-prompt"   # the code cells' [n]: prompts
STDERR_OUTPUT = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
LIVE_BOX = ".jupyter-widgets.widget-vbox:has(> .live-figure-text)"
# What shows focus on a control: a change in any of these when it gets the focus by keyboard
FOCUS_STYLE_JS = """(el) => { const s = getComputedStyle(el);
  return [s.outlineStyle, s.outlineWidth, s.outlineColor, s.boxShadow, s.backgroundColor,
          s.borderColor].join('|'); }"""


def tab_to(page, el, limit: int) -> int | None:
    """Press Tab until el has the focus: how many presses it took, or None after `limit`."""
    presses = 0
    while presses < limit and not el.evaluate("e => document.activeElement === e"):
        page.keyboard.press("Tab")
        presses += 1
    return presses if el.evaluate("e => document.activeElement === e") else None


def shows_focus(el, unfocused: str) -> bool:
    """el, focused by keyboard, is :focus-visible and looks other than `unfocused` (its
    FOCUS_STYLE_JS before it had the focus)."""
    return el.evaluate("e => e.matches(':focus-visible')") and el.evaluate(FOCUS_STYLE_JS) != unfocused


# Anything a person can operate; used to find controls nobody wired to a live figure.
CONTROL_SELECTOR = (".widget-slider, .widget-dropdown, .widget-toggle-buttons, .widget-select, "
                    ".widget-radio, .widget-checkbox, .widget-text, .widget-textarea, "
                    ".jupyter-button, .widget-play, .widget-colorpicker, .widget-datepicker")

TRACEBACK_RE = re.compile(r"Traceback \(most recent call last\)|^\s*Cell In\[\d+\], line \d+"
                          r"|^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b",
                          re.MULTILINE)
LIVE_CALL_RE = re.compile(r"^[^#\n]*\bwith_controls\(", re.MULTILINE)
NOTIFICATION_SETTINGS = {"fetchNews": "false", "checkForUpdates": False}
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}


def notebook_names(notebook_dir: Path) -> list[str]:
    """The notebooks there are, relative to notebook_dir: its own and those of its language
    folders (the Japanese edition, notebooks/ja/), e.g. "04_masking.ipynb", "ja/01_qkv_projections.ipynb"."""
    paths = [*notebook_dir.glob("*.ipynb"), *notebook_dir.glob("[a-z][a-z]/*.ipynb")]
    return sorted(p.relative_to(notebook_dir).as_posix() for p in paths)


# Controls the browser test drives without reading a label: keys on a slider's handle, digits in
# its readout. A list or a row of buttons is driven by choosing an option by its (translated) text.
SLIDERS = frozenset({"IntSlider", "FloatSlider", "SelectionSlider", "FloatLogSlider"})


def live_controls(path: Path) -> set[str]:
    """The ipywidgets classes of the controls a notebook's `with_controls(...)` cells build."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return {kind for c in nb["cells"] if c["cell_type"] == "code"
            for src in ["".join(c["source"])] if "with_controls(" in src
            for kind in re.findall(r"widgets\.(\w+)\(", src)}


def drives_differently(notebook_dir: Path, name: str) -> bool:
    """Whether the browser drives a translated notebook differently from its English one.

    A translated notebook runs the English code (scripts/translate.py builds its code cells from
    the English ones; tests/test_translations.py keeps the committed edition equal to a fresh
    build), so in JupyterLab it differs only in its prose and in the texts its kernel prints and
    draws. With sliders only, the browser drives it with the same keys and digits as the English
    one; its Japanese callback texts are drawn at every value by the site's frames
    (tests/test_site.py) and nbval runs every cell of it. With a list or buttons, the browser
    picks options by their translated texts: that it must do in the edition's language.
    """
    return bool(live_controls(notebook_dir / name) - SLIDERS)


def browser_notebooks(notebook_dir: Path, every_edition: bool = False) -> list[str]:
    """The notebooks test_browser.py runs: every English one, and of the other editions those the
    browser drives differently (drives_differently); every_edition: all of them."""
    return [n for n in notebook_names(notebook_dir)
            if "/" not in n or every_edition or drives_differently(notebook_dir, n)]


def artifact_stem(name: str) -> str:
    """Screenshot prefix of a notebook: "04_masking", "ja-01_qkv_projections"."""
    return name.removesuffix(".ipynb").replace("/", "-")


def browser_unavailable_reason() -> str | None:
    """Why the browser test cannot run here, or None when it can."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return (f"Chromium not found at {CHROMIUM}. The browser test drives Debian's Chromium "
                "(playwright's own browser download is not used); install it with "
                "`sudo apt-get update && sudo apt-get install -y chromium`.")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return ("Python playwright is not installed: run `python3 dev.py setup` "
                "(requirements.txt lists it).")
    return None


def is_local_url(url: str) -> bool:
    """data:, blob:, about: and anything served by 127.0.0.1 / localhost."""
    scheme = url.split(":", 1)[0].lower()
    if scheme in {"data", "blob", "about"}:
        return True
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    return host in LOCAL_HOSTS or host == "::1"


# --------------------------------------------------------------------------
# Notebook file: what the .ipynb says the run should show
# --------------------------------------------------------------------------

@dataclass
class CellExpectation:
    index: int             # position among all cells (markdown included)
    cell_type: str
    raises: bool           # tagged raises-exception: its error is expected
    stored_widget: bool    # the stored outputs contain a widget view
    live: bool             # the source calls with_controls(...): a live figure must appear


def stored_figures(path: Path) -> int:
    """How many figures the notebook file stores: outputs with a PNG (each figure of the course
    also has its text/html, an <img> with its words as alt)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return sum("image/png" in o.get("data", {}) for cell in nb["cells"]
               for o in cell.get("outputs", []) or [])


def read_expectations(path: Path) -> list[CellExpectation]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, cell in enumerate(nb["cells"]):
        tags = cell.get("metadata", {}).get("tags", []) or []
        widget = any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                     for o in cell.get("outputs", []) or [])
        source = "".join(cell.get("source", ""))
        live = cell["cell_type"] == "code" and LIVE_CALL_RE.search(source) is not None
        out.append(CellExpectation(i, cell["cell_type"], "raises-exception" in tags, widget, live))
    return out


# --------------------------------------------------------------------------
# JupyterLab server
# --------------------------------------------------------------------------

class LabServer(LocalServer):
    """JupyterLab on 127.0.0.1 with a random port and token, in an isolated temp home.

    The served root holds copies of the notebooks (root/notebooks/*.ipynb), so saving or
    autosave never touches the repository's; the course modules come from the editable
    install, as for a learner. Port, start (again on another port if the chosen one was taken
    meanwhile), stop and log: hub/localserver.py.
    """

    name = "JupyterLab"

    def __init__(self, tmp: Path, repo_root: Path, notebook_dir: Path):
        self.tmp = tmp
        self.root = tmp / "course"
        self.nb_dir = self.root / "notebooks"
        self.token = secrets.token_hex(24)
        super().__init__(tmp / "jupyter-server.log")
        self._prepare(repo_root, notebook_dir)

    def _prepare(self, repo_root: Path, notebook_dir: Path) -> None:
        self.nb_dir.mkdir(parents=True)
        for name in notebook_names(notebook_dir):
            (self.nb_dir / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(notebook_dir / name, self.nb_dir / name)
        self.dirs = {name: self.tmp / name for name in ("home", "config", "data", "runtime",
                                                          "ipython", "mpl", "workspaces")}
        for d in self.dirs.values():
            d.mkdir()
        # The news / update pop-up covers the page (and calls out): switch it off in the
        # isolated user settings. dev.py writes the same values as an override into .venv.
        settings = (self.dirs["config"] / "lab" / "user-settings" / "@jupyterlab"
                    / "apputils-extension" / "notification.jupyterlab-settings")
        settings.parent.mkdir(parents=True)
        settings.write_text(json.dumps(NOTIFICATION_SETTINGS, indent=2))

    def environ(self) -> dict:
        env = dict(os.environ)
        env.update(HOME=str(self.dirs["home"]), JUPYTER_CONFIG_DIR=str(self.dirs["config"]),
                   JUPYTER_DATA_DIR=str(self.dirs["data"]),
                   JUPYTER_RUNTIME_DIR=str(self.dirs["runtime"]),
                   IPYTHONDIR=str(self.dirs["ipython"]), MPLCONFIGDIR=str(self.dirs["mpl"]),
                   JUPYTERLAB_SETTINGS_DIR=str(self.dirs["config"] / "lab" / "user-settings"),
                   JUPYTERLAB_WORKSPACES_DIR=str(self.dirs["workspaces"]),
                   JUPYTER_PLATFORM_DIRS="0")
        env.pop("JUPYTER_PATH", None)
        env.pop("JUPYTER_CONFIG_PATH", None)
        bindir = str(Path(sys.executable).parent)
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        return env

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={self.root}",
               "--LabApp.news_url=None",
               # window.jupyterapp: LabPage opens each notebook in the running app
               "--LabApp.expose_app_in_browser=True",
               "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        return cmd

    def cwd(self) -> Path:
        return self.root

    def port_taken(self, log: str) -> bool:
        return f"port {self.port} is not available" in log

    def answers(self) -> bool:
        self.api("GET", "/api/status", timeout=5)
        return self._serves_our_port()

    def _serves_our_port(self) -> bool:
        """Our process answers on self.port, not some other server that took the port."""
        info = self.dirs["runtime"] / f"jpserver-{self.proc.pid}.json"
        try:
            return json.loads(info.read_text()).get("port") == self.port
        except (OSError, ValueError):
            return False

    def api(self, method: str, path: str, timeout: float = 30):
        req = urllib.request.Request(self.base + path, method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def kernels(self) -> list[dict]:
        return self.api("GET", "/api/kernels")

    def shutdown_kernels(self) -> None:
        """A fresh kernel per notebook: close every session and kernel through the REST API."""
        for path in [f"/api/sessions/{s['id']}" for s in self.api("GET", "/api/sessions")] + \
                    [f"/api/kernels/{k['id']}" for k in self.kernels()]:
            try:
                self.api("DELETE", path)
            except urllib.error.HTTPError as exc:
                if exc.code != 404:   # 404: already gone with its session
                    raise

    def lab_url(self, workspace: str) -> str:
        return f"{self.base}/lab/workspaces/{quote(workspace)}?token={self.token}"

    def notification_settings(self) -> dict:
        s = self.api("GET", "/lab/api/settings/@jupyterlab/apputils-extension:notification")
        return s.get("settings", {})


# --------------------------------------------------------------------------
# In-page scripts
# --------------------------------------------------------------------------

# Run All is finished when every code cell carries a number and the kernel is idle, or
# when execution stopped at an error (later cells aborted, nothing pending).
RUN_STATE_JS = """([statusSel, stderrSel, tbSource, before]) => {
  const tb = new RegExp(tbSource, 'm');
  const status = (document.querySelector(statusSel)?.textContent || '').trim();
  if (/\\|\\s*(Dead|Unknown)$/.test(status)) return 'kernel ' + status;
  const dlg = document.querySelector('.jp-Dialog');
  if (dlg) return 'dialog: ' + dlg.textContent.trim().slice(0, 300);
  const idle = /\\|\\s*Idle$/.test(status);
  const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputArea-prompt')]
    .map(p => p.textContent.trim());
  // going on after a stop: until the prompts differ from the stop's (for at most 10 s), the run
  // has not started, and the page still shows the previous stop
  if (before !== null && prompts.join(' ') === before && Date.now() - window.__waitStart < 10000)
    return false;
  if (idle && prompts.every(p => /^\\[\\d+\\]:$/.test(p))) return 'done';
  const pending = prompts.some(p => p.includes('*'));
  const errorShown = [...document.querySelectorAll(stderrSel)].some(o => tb.test(o.textContent));
  if (idle && !pending && errorShown && prompts.some(p => p === '[ ]:')) return 'stopped';
  // JupyterLab 4.5 may leave the cells it cancelled after an error marked queued ([*]) with the
  // kernel idle: the same picture for 10 s is a stop too (the loop below runs them again).
  // The clock is the page's own and starts afresh with each wait (wait_run_state resets it):
  // a clock left from the previous stop would call a run that has not started yet stopped.
  const picture = idle && pending && errorShown ? prompts.join(' ') : null;
  if (picture === null || window.__stuckPicture !== picture) {
    window.__stuckPicture = picture;
    window.__stuckSince = Date.now();
    return false;
  }
  return Date.now() - window.__stuckSince >= 10000 ? 'stopped' : false;
}"""

# Each wait for the run state starts the stuck-picture clock afresh.
RESET_RUN_STATE_JS = """() => { window.__stuckPicture = null; window.__stuckSince = null;
                               window.__waitStart = Date.now(); }"""

# Every widget view rendered: no placeholder left, every live figure has text, a loaded image
# and all its controls. WIDGETS_WHY_JS says what is still awaited ('done', 'error' or the
# first thing missing); WIDGETS_STATE_JS is the same test in the form wait_for_function wants.
WIDGETS_WHY_JS = """([liveBoxSel, liveExpected]) => {
  const nb = document.querySelector('.jp-Notebook');
  if (!nb) return 'no .jp-Notebook on the page';
  // at least one live figure per cell that calls with_controls() (no vacuous 'done')
  const boxes = [...nb.querySelectorAll(liveBoxSel)];
  if (boxes.length < liveExpected)
    return boxes.length + ' of ' + liveExpected + ' live figures on the page';
  // outputs only: a notebook's own text may mention these phrases
  const text = [...nb.querySelectorAll('.jp-OutputArea-output')].map(o => o.textContent).join(' ');
  if (text.includes('Error displaying widget')) return 'error';
  const loading = text.split('Loading widget...').length - 1;
  if (loading) return loading + ' output(s) still say Loading widget...';
  for (const [k, box] of boxes.entries()) {
    const where = 'live figure ' + (k + 1) + ': ';
    const t = box.querySelector(':scope > .live-figure-text pre');
    const img = box.querySelector(':scope > img.live-figure-image');
    if (!t || !t.textContent.trim()) return where + 'no text yet';
    if (!img || !img.getAttribute('src')) return where + 'no image yet';
    if (!img.complete || img.naturalWidth === 0) return where + 'image not loaded';
    // every control rendered: a Box holds a bare <div class="lm-Widget"> in a child's place
    // until that child's view exists; a slider can be moved once noUiSlider made its handle
    const placeholder = ch => ch.classList.contains('lm-Widget')
                              && [...ch.classList].every(c => c.startsWith('lm-'));
    for (const b of [box, ...box.querySelectorAll('.widget-box')])
      if ([...b.children].some(placeholder)) return where + 'a control not rendered yet';
    for (const s of box.querySelectorAll('.widget-slider'))
      if (!s.querySelector('.noUi-handle[role=slider][aria-valuenow]'))
        return where + 'a slider without its handle';
  }
  return 'done';
}"""

WIDGETS_STATE_JS = ("(args) => { const w = (" + WIDGETS_WHY_JS + ")(args);"
                    " return w === 'done' || w === 'error' ? w : false; }")


def wait_widgets_rendered(page, live_expected: int, timeout: int = WIDGETS_MS) -> str:
    """Wait until every widget view is rendered: 'done', 'error', or what was still missing."""
    try:
        return page.wait_for_function(WIDGETS_STATE_JS, arg=[LIVE_BOX, live_expected],
                                      timeout=timeout, polling=POLL_MS).json_value()
    except Exception as exc:
        if "Timeout" not in type(exc).__name__:
            raise
        try:
            why = page.evaluate(WIDGETS_WHY_JS, [LIVE_BOX, live_expected])
        except Exception as again:  # the page itself is gone: say so
            why = f"the page did not answer ({type(again).__name__})"
        return f"not within {timeout / 1000:.0f} s: {why}"


CELL_REPORT_JS = """([stderrSel, liveBoxSel]) => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map(c => ({
  code: c.classList.contains('jp-CodeCell'),
  prompt: (c.querySelector('.jp-InputArea-prompt')?.textContent || '').trim(),
  stderr: [...c.querySelectorAll(stderrSel)].map(o => o.textContent),
  widgets: c.querySelectorAll('.jp-OutputArea-output .jupyter-widgets').length,
  liveBoxes: c.querySelectorAll(liveBoxSel).length,
  widgetError: (c.querySelector('.jp-Cell-outputWrapper')?.textContent || '')
                 .includes('Error displaying widget'),
  loading: (c.querySelector('.jp-Cell-outputWrapper')?.textContent || '')
                 .includes('Loading widget...'),
}))"""

# Arm a probe on one live figure: it notes the first user event (t0: keydown, input,
# change, click) and when the text changed and the new image finished loading. Only
# changes after t0 count: one seen before it (a late redraw of an earlier change) becomes
# the new "before" state and is counted in p.stale.
ARM_PROBE_JS = """(box) => {
  const text = box.querySelector(':scope > .live-figure-text');
  const img = box.querySelector(':scope > img.live-figure-image');
  const logItem = document.querySelector('.jp-LogConsoleStatusItem');
  const p = {t0: null, tText: null, tImg: null, done: false, stale: 0,
             text0: text.textContent, src0: img.getAttribute('src'),
             log0: logItem && !logItem.classList.contains('lm-mod-hidden') ? logItem.textContent : ''};
  const now = () => performance.now();
  const start = () => { if (p.t0 === null) p.t0 = now(); };
  const events = ['keydown', 'input', 'change', 'click'];
  const check = () => {
    if (p.t0 === null) {
      if (text.textContent !== p.text0) { p.text0 = text.textContent; p.stale++; }
      if (img.getAttribute('src') !== p.src0) { p.src0 = img.getAttribute('src'); p.stale++; }
      return;
    }
    if (p.tText === null && text.textContent !== p.text0) p.tText = now();
    const src = img.getAttribute('src');
    if (p.tImg === null && src !== p.src0 && img.complete && img.naturalWidth > 0) p.tImg = now();
    if (!p.done && p.tText !== null && p.tImg !== null) {
      p.done = true;
      mo.disconnect();
      img.removeEventListener('load', check);
      for (const e of events) box.removeEventListener(e, start, true);
    }
  };
  const mo = new MutationObserver(check);
  mo.observe(text, {subtree: true, childList: true, characterData: true});
  mo.observe(img, {attributes: true, attributeFilter: ['src']});
  img.addEventListener('load', check);
  for (const e of events) box.addEventListener(e, start, true);
  p.check = check;
  window.__liveProbe = p;
}"""

PROBE_STATE_JS = """() => {
  const p = window.__liveProbe;
  if (p.done) return 'done';
  const logItem = document.querySelector('.jp-LogConsoleStatusItem');
  const log = logItem && !logItem.classList.contains('lm-mod-hidden') ? logItem.textContent : '';
  if (log !== p.log0) return 'log';
  return false;
}"""

PROBE_RESULT_JS = """() => { const p = window.__liveProbe;
  return {t0: p.t0, tText: p.tText, tImg: p.tImg, done: p.done, stale: p.stale}; }"""


def _expect():
    """playwright's expect (imported late: the module loads without playwright, to skip)."""
    from playwright.sync_api import expect
    return expect


def traceback_in(texts: list[str]) -> str | None:
    for t in texts:
        if TRACEBACK_RE.search(t):
            return t
    return None


def short(text: str, n: int = 1200) -> str:
    text = text.strip()
    return text if len(text) <= n else text[: n // 2] + "\n   ...\n" + text[-n // 2:]


# --------------------------------------------------------------------------
# Controls
# --------------------------------------------------------------------------

@dataclass
class Change:
    """One change of one control, as a person makes it, and what it took to redraw."""

    notebook: str
    widget: int
    control: str
    kind: str
    action: str
    from_value: str
    to_value: str
    ms: float | None = None
    text_ms: float | None = None
    image_ms: float | None = None
    problem: str | None = None
    extra: dict = field(default_factory=dict)

    def record(self) -> dict:
        def plain(text: str) -> str:  # ipywidgets shows option labels with no-break spaces
            return text.replace("\xa0", " ")

        return {"notebook": self.notebook, "widget": self.widget, "control": plain(self.control),
                "kind": self.kind, "action": plain(self.action), "from": plain(self.from_value),
                "to": plain(self.to_value), "ms": self.ms, "text_ms": self.text_ms,
                "image_ms": self.image_ms}


# What a control shows as its value: one in-page function (element => string) per kind,
# used both to read the value and to wait until it changed.
SLIDER_VALUE_JS = """el => {
  const shown = e => { if (!e) return false; const r = e.getBoundingClientRect();
                       return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; };
  const readout = el.querySelector('.widget-readout');
  if (shown(readout)) return readout.textContent.trim();
  // with_controls() shows a SelectionSlider's value in a Label beside it (set by the kernel)
  for (let s = el.nextElementSibling; s; s = s.nextElementSibling)
    if (s.classList.contains('live-figure-readout')) return s.textContent.trim();
  return [...el.querySelectorAll('.noUi-handle[role=slider]')]
    .map(h => h.getAttribute('aria-valuetext') || '').join(',');
}"""
SELECT_VALUE_JS = "s => s.selectedIndex >= 0 ? s.options[s.selectedIndex].textContent : ''"
TOGGLE_BUTTONS_VALUE_JS = """el => [...el.querySelectorAll('button.widget-toggle-button')]
  .filter(b => b.classList.contains('mod-active')).map(b => b.textContent.trim()).join(',')"""
RADIO_VALUE_JS = """el => [...el.querySelectorAll('label:has(input[type=radio])')]
  .filter(l => l.querySelector('input[type=radio]').checked).map(l => l.textContent.trim()).join(',')"""
CHECKBOX_VALUE_JS = "cb => cb.checked ? 'True' : 'False'"
TOGGLE_BUTTON_VALUE_JS = "el => el.classList.contains('mod-active') ? 'True' : 'False'"
TEXT_VALUE_JS = "f => f.value"


@dataclass
class ValueReader:
    """Reads the value a control shows, in the page; can wait until it is another one."""

    page: object
    element: object   # a Playwright locator: the argument of js
    js: str

    def __call__(self) -> str:
        return self.element.evaluate(self.js)

    def wait_other_than(self, old: str, timeout_ms: float) -> bool:
        """True as soon as the control shows something else than old; False after timeout_ms."""
        handle = self.element.element_handle()
        try:
            self.page.wait_for_function(f"([el, old]) => ({self.js})(el) !== old",
                                        arg=[handle, old], timeout=timeout_ms)
            return True
        except Exception:  # the caller compares the values and says what is wrong
            return False
        finally:
            handle.dispose()


def control_kind(ctrl) -> str:
    """Classify a control element (a Playwright locator) by its ipywidgets classes."""
    cls = " " + (ctrl.get_attribute("class") or "") + " "
    for name, kind in ((" widget-slider ", "slider"), (" widget-dropdown ", "dropdown"),
                       (" widget-toggle-buttons ", "toggle-buttons"),
                       (" widget-select ", "select"), (" widget-radio ", "radio"),
                       (" widget-checkbox ", "checkbox"), (" widget-toggle-button ", "toggle-button"),
                       (" widget-text ", "text"), (" widget-textarea ", "text")):
        if name in cls:
            return kind
    return "unknown:" + cls.strip()


def control_label(ctrl, kind: str, index: int) -> str:
    label = ctrl.locator(":scope > label.widget-label")
    text = label.first.text_content().strip() if label.count() else ""
    if not text and kind in {"checkbox", "toggle-button"}:
        text = (ctrl.text_content() or "").strip()
    return text or f"{kind} #{index + 1}"


# JS: indices (into root.querySelectorAll(sel)) of the outermost controls under root,
# optionally leaving out those inside a live figure box.
OUTERMOST_CONTROLS_JS = """(root, [sel, excludeSel]) => {
  const all = [...root.querySelectorAll(sel)];
  const keep = [];
  all.forEach((el, i) => {
    let p = el.parentElement, nested = false;
    while (p && p !== root) { if (p.matches(sel)) { nested = true; break; } p = p.parentElement; }
    if (nested) return;
    if (excludeSel && el.closest(excludeSel)) return;
    keep.push(i);
  });
  return keep;
}"""


class LabPage:
    """One JupyterLab page, loaded once, in which notebook after notebook is opened and closed.

    Loading JupyterLab itself (its page and its start-up, about 8 s of the 12 s from the URL to
    an idle kernel here) is the same for every notebook, so one page serves a module's tests:
    each test opens its notebook with the app's own command (docmanager:open, through
    --LabApp.expose_app_in_browser), and closes it unsaved afterwards (its kernel is shut down
    through the REST API, so the next notebook gets a fresh one, as before). The requests and
    console errors are collected per test (`begin`); the first test's include the app's load.
    A test that fails leaves the page `broken`: the next test loads JupyterLab afresh in a new
    context, so one failure does not run into the next notebook.
    """

    VIEWPORT = {"width": 1400, "height": 1000}

    def __init__(self, browser, server: LabServer):
        self.browser = browser
        self.server = server
        self.context = self.page = None
        self.broken = True   # nothing loaded yet
        self.requests: list[str] = []
        self.console_errors: list[str] = []
        self.load_s: list[float] = []   # each load of the app, for the latency report
        self.kernels_seen: set[str] = set()   # every notebook must get a new one

    def _load(self) -> None:
        self.close()
        t = time.perf_counter()
        self.context = self.browser.new_context(viewport=self.VIEWPORT)
        self.context.on("request", lambda r: self.requests.append(r.url))
        self.page = self.context.new_page()
        self.page.on("websocket", lambda ws: self.requests.append(ws.url))
        self.page.on("console", lambda m: self.console_errors.append(m.text)
                     if m.type == "error" else None)
        workspace = f"browser-test-{secrets.token_hex(4)}"  # no layout restored from elsewhere
        self.page.goto(self.server.lab_url(workspace), wait_until="load", timeout=PAGE_LOAD_MS)
        self.page.wait_for_function("() => !!window.jupyterapp", timeout=PAGE_LOAD_MS,
                                    polling=POLL_MS)
        self.page.evaluate("async () => { await window.jupyterapp.restored; }")
        self.broken = False
        self.load_s.append(time.perf_counter() - t)

    def begin(self) -> None:
        """Before a test: a loaded page, and empty lists of requests and console errors."""
        self.requests.clear()
        self.console_errors.clear()
        if self.broken:
            self._load()

    def open_notebook(self, name: str) -> None:
        """Open notebooks/<name> in the app, as the file browser does (a new kernel starts)."""
        self.page.evaluate("""async (path) => { await window.jupyterapp.commands.execute(
            'docmanager:open', {path, factory: 'Notebook'}); }""", f"notebooks/{name}")

    def close_documents(self) -> None:
        """Close every tab of the main area without saving (the served copies stay as they
        were) and wait until no notebook is left in the page."""
        self.page.evaluate("""() => {
          for (const w of Array.from(window.jupyterapp.shell.widgets('main'))) {
            if (w.context) w.context.model.dirty = false;   // no 'Save changes?' dialog
            w.dispose();
          } }""")
        self.page.wait_for_function("() => !document.querySelector('.jp-Notebook')",
                                    timeout=CONTROL_MS, polling=POLL_MS)

    def end(self, failed: bool) -> None:
        """After a test: close its notebook; after a failure, or if closing fails, load anew."""
        if not failed and not self.broken:
            try:
                self.close_documents()
                return
            except Exception:  # the page is in a state we do not know: start again
                pass
        self.broken = True

    def close(self) -> None:
        if self.context is not None:
            try:
                self.context.close()
            except Exception:  # the browser may be gone already
                pass
        self.context = self.page = None
        self.broken = True


class NotebookRun:
    """Drive one notebook in the page of a LabPage: open, run all, check, move every control."""

    def __init__(self, page, server: LabServer, name: str, expectations: list[CellExpectation],
                 artifacts: Path):
        self.page = page
        self.server = server
        self.name = name
        self.stem = artifact_stem(name)
        self.expect = expectations
        self.artifacts = artifacts
        self.changes: list[Change] = []
        self.timings: dict[str, float] = {}
        self._cdp = None
        self.boxes: list = []
        # an upper bound for Playwright's own waits (clicks, focus, ...); its default is 30 s
        page.set_default_timeout(CONTROL_MS)

    # -- opening and running -------------------------------------------------

    def open(self, lab: LabPage) -> None:
        """Open the notebook in the running app of `lab` (its page is self.page)."""
        t = time.perf_counter()
        lab.open_notebook(self.name)
        self.page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=PAGE_LOAD_MS)
        self.wait_kernel_idle()
        self.timings["open_to_idle_s"] = time.perf_counter() - t

    def kernel_status(self) -> str:
        loc = self.page.locator(KERNEL_STATUS)
        return (loc.first.text_content() or "").strip() if loc.count() else "(no kernel status)"

    def wait_kernel_idle(self) -> None:
        js = """([sel]) => {
          const dlg = document.querySelector('.jp-Dialog');
          if (dlg) return 'dialog: ' + dlg.textContent.trim().slice(0, 300);
          const s = (document.querySelector(sel)?.textContent || '').trim();
          if (/\\|\\s*(Dead)$/.test(s)) return 'kernel ' + s;
          return /\\|\\s*Idle$/.test(s) ? 'idle' : false; }"""
        state = self.page.wait_for_function(js, arg=[KERNEL_STATUS],
                                            timeout=KERNEL_IDLE_MS, polling=POLL_MS).json_value()
        assert state == "idle", f"{self.name}: kernel did not become idle: {state}"

    def menu(self, menu: str, command: str) -> None:
        self.page.locator(".lm-MenuBar-itemLabel").filter(
            has_text=re.compile(rf"^{re.escape(menu)}$")).click()
        item = self.page.locator(f".lm-Menu li[data-command='{command}']")
        item.wait_for(state="visible")
        item.click()

    def run_all(self) -> None:
        """Clear the stored outputs (their numbers would look like a finished run), then Run All."""
        self.menu("Edit", "editmenu:clear-all")
        self.page.wait_for_function(
            f"""() => [...document.querySelectorAll('{PROMPTS}')]
                     .every(p => p.textContent.trim() === '[ ]:')""", timeout=WIDGETS_MS, polling=POLL_MS)
        t = time.perf_counter()
        self.menu("Run", "runmenu:run-all")
        state = self.wait_run_state()
        self.run_trace = [f"Run All: {state} at {self.prompt_summary()}"]
        # JupyterLab stops Run All at the first error, even in a cell tagged raises-exception:
        # go on from the first cell that did not run (Run > Run Selected Cell and All Below), as
        # a learner does, so that the cells after an expected error are checked too. Each go
        # must move the first cell not run further down: a click that did not make that cell
        # the active one, or a run that did not start, is tried again (at most twice), and a
        # failure to go on fails the test, because the cells after the error must be checked.
        tries, last = 0, None
        while state == "stopped":
            first = self.first_not_run()
            if first < 0:  # the error was in the last code cell: nothing is left to run
                break
            tries = tries + 1 if first == last else 0
            if tries > 2:
                break
            last = first
            self.activate_code_cell(first)
            before = " ".join(self.prompts())
            self.menu("Run", "notebook:run-all-below")
            state = self.wait_run_state(before)
            self.run_trace.append(f"from code cell {first + 1}: {state} at {self.prompt_summary()}")
        self.timings["run_all_s"] = time.perf_counter() - t
        self.run_state = state
        assert state in {"done", "stopped"}, f"{self.name}: Run All did not finish: {state}"

    def first_not_run(self) -> int:
        """The position among the code cells of the first one with no number ([ ] or [*]), or -1."""
        return self.page.evaluate(f"""() => [...document.querySelectorAll('{PROMPTS}')]
            .findIndex(p => ['[ ]:', '[*]:'].includes(p.textContent.trim()))""")

    def activate_code_cell(self, index: int) -> None:
        """Click the prompt of the code cell at `index` and wait until that cell is the active
        one; a second click if the first did not take (on a busy page it sometimes does not)."""
        is_active = f"""() => document.querySelectorAll('{PROMPTS}')[{index}]
            ?.closest('.jp-Cell')?.classList.contains('jp-mod-active')"""
        for _ in range(2):
            self.page.locator(PROMPTS).nth(index).click(timeout=10_000)
            try:
                self.page.wait_for_function(is_active, timeout=5_000, polling=POLL_MS)
                return
            except Exception as exc:  # try once more; the run that follows shows the outcome
                if "Timeout" not in type(exc).__name__:
                    raise

    def prompt_summary(self) -> str:
        """The code cells' prompts in short: the numbered ones as a count, the rest by position."""
        prompts = self.prompts()
        other = [f"{i + 1}{p}" for i, p in enumerate(prompts) if not re.fullmatch(r"\[\d+\]:", p)]
        return f"{len(prompts) - len(other)} numbered, others: {' '.join(other) or 'none'}"

    def prompts(self) -> list[str]:
        """Every code cell's prompt as shown: '[3]:', '[*]:' or '[ ]:'."""
        return self.page.evaluate(f"""() => [...document.querySelectorAll('{PROMPTS}')]
                                  .map(p => p.textContent.trim())""")

    def wait_run_state(self, before: str | None = None) -> str:
        """Wait until Run All is done or stopped at an error; if it is neither within RUN_ALL_MS,
        say what the page shows (kernel status, every prompt) and keep a screenshot."""
        self.page.evaluate(RESET_RUN_STATE_JS)
        try:
            return self.page.wait_for_function(
                RUN_STATE_JS, arg=[KERNEL_STATUS, STDERR_OUTPUT, TRACEBACK_RE.pattern, before],
                timeout=RUN_ALL_MS, polling=POLL_MS).json_value()
        except Exception as exc:  # a timeout: report the page's state instead
            if "Timeout" not in type(exc).__name__:
                raise
            prompts = self.prompts()
            self.page.screenshot(path=str(self.artifacts / f"{self.stem}-run-all-stuck.png"),
                                 full_page=True)
            return (f"neither done nor stopped after {RUN_ALL_MS / 1000:.0f} s: kernel status "
                    f"{self.kernel_status()!r}, prompts {prompts}, screenshot "
                    f"{self.stem}-run-all-stuck.png")

    def wait_widgets(self) -> None:
        t = time.perf_counter()
        state = wait_widgets_rendered(self.page, self.live_expected())
        self.timings["widgets_s"] = time.perf_counter() - t
        self.widget_state = state

    # -- checks ------------------------------------------------------------------

    def cell_problems(self) -> list[str]:
        """Tracebacks outside raises-exception cells, missing expected errors, widget failures."""
        self.wait_all_cells_attached()
        cells = self.page.evaluate(CELL_REPORT_JS, [STDERR_OUTPUT, LIVE_BOX])
        problems = []
        if len(cells) != len(self.expect):
            return [f"the page shows {len(cells)} cells, the notebook file has {len(self.expect)}"]
        for dom, exp in zip(cells, self.expect, strict=True):
            where = f"cell {exp.index + 1} ({dom['prompt'] or exp.cell_type})"
            if exp.cell_type != "code":
                continue
            tb = traceback_in(dom["stderr"])
            if exp.raises and tb is None:
                problems.append(f"{where} is tagged raises-exception but shows no error")
            if not exp.raises and tb is not None:
                problems.append(f"{where} shows an error:\n{short(tb)}")
            if dom["widgetError"]:
                problems.append(f"{where}: 'Error displaying widget'")
            if dom["loading"]:
                problems.append(f"{where}: a widget is stuck at 'Loading widget...'")
            if exp.stored_widget and dom["widgets"] == 0 and self.run_state == "done":
                problems.append(f"{where} stored a widget view, but none rendered after Run All")
        shown = sum(dom["liveBoxes"] for dom in cells)
        if self.run_state == "done" and shown < self.live_expected():
            problems.append(f"{self.live_expected()} cells call with_controls(), but only {shown} "
                            "live figures rendered")
        return problems

    def wait_all_cells_attached(self) -> None:
        """JupyterLab 4 attaches the cells outside the viewport when the browser is idle (its
        windowing modes 'defer' and 'contentVisibility', the default): on a busy machine the
        last few can still be missing from the page after Run All. Wait for them, scrolling the
        notebook to its end as a reader would; a cell that never appears is reported by
        cell_problems as a count that differs from the notebook file's."""
        js = """([n]) => {
          const cells = document.querySelectorAll('.jp-Notebook .jp-Cell');
          if (cells.length >= n) return true;
          cells[cells.length - 1]?.scrollIntoView({block: 'end'});
          return false; }"""
        try:
            self.page.wait_for_function(js, arg=[len(self.expect)], timeout=CELLS_ATTACHED_MS,
                                        polling=POLL_MS)
        except Exception as exc:  # reported as the count, by cell_problems
            if "Timeout" not in type(exc).__name__:
                raise

    def live_expected(self) -> int:
        return sum(1 for e in self.expect if e.live and not e.raises)

    def stray_controls(self) -> list[str]:
        nb = self.page.locator(".jp-Notebook")
        idx = nb.evaluate(OUTERMOST_CONTROLS_JS, [CONTROL_SELECTOR, LIVE_BOX])
        out = []
        for i in idx:
            ctrl = nb.locator(CONTROL_SELECTOR).nth(i)
            kind = control_kind(ctrl)
            out.append(f"{kind} '{control_label(ctrl, kind, i)}' is not inside an "
                       "with_controls() box: the test cannot tell which output it drives")
        return out

    # -- screenshots --------------------------------------------------------------

    def screenshot(self, tag: str, boxes) -> None:
        if boxes:
            boxes[0].scroll_into_view_if_needed()
        self.page.screenshot(path=str(self.artifacts / f"{self.stem}-{tag}.png"))
        for k, box in enumerate(boxes):
            box.screenshot(path=str(self.artifacts / f"{self.stem}-widget{k + 1}-{tag}.png"))

    # -- controls ---------------------------------------------------------------------

    def live_boxes(self) -> list:
        n = self.page.locator(f".jp-Notebook {LIVE_BOX}").count()
        return [self.page.locator(f".jp-Notebook {LIVE_BOX}").nth(k) for k in range(n)]

    def controls_of(self, box) -> list:
        container = box.locator(":scope > .widget-box").first
        idx = container.evaluate(OUTERMOST_CONTROLS_JS, [CONTROL_SELECTOR, None])
        return [container.locator(CONTROL_SELECTOR).nth(i) for i in idx]

    # JupyterLab's notebook, from the page: the index of its active cell, and of the cell that
    # holds an element (JupyterLab draws only the cells near the window, so not from the DOM)
    ACTIVE_CELL_JS = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
    CELL_OF_JS = """(el) => window.jupyterapp.shell.currentWidget.content.widgets
                                 .findIndex(w => w.node.contains(el))"""
    TAB_LIMIT = 12

    def keyboard_only(self, k: int, box) -> list[str]:
        """The live figure's first slider driven with the keyboard alone (issue 27), as a learner
        without a mouse does: Escape (command mode), ArrowUp/ArrowDown from the active cell to the
        figure's cell, Tab to the slider's handle, which must show that it has the focus, then
        an arrow key; the figure's text and image must change (measured as every change)."""
        handle = box.locator(".widget-slider .noUi-handle[role=slider]").first
        ctrl = handle.locator("xpath=ancestor::div[contains(@class, 'widget-slider')][1]")
        label = control_label(ctrl, "slider", 0)
        self.page.keyboard.press("Escape")
        target = box.evaluate(self.CELL_OF_JS)
        for _ in range(200):
            at = self.page.evaluate(self.ACTIVE_CELL_JS)
            if at == target:
                break
            self.page.keyboard.press("ArrowDown" if at < target else "ArrowUp")
        else:
            return [f"widget {k + 1}: ArrowUp/ArrowDown did not reach its cell ({target})"]
        unfocused = handle.evaluate(FOCUS_STYLE_JS)
        presses = tab_to(self.page, handle, self.TAB_LIMIT)
        if presses is None:
            return [f"widget {k + 1}, slider '{label}': not reached with {self.TAB_LIMIT} presses "
                    "of Tab from its cell"]
        if not shows_focus(handle, unfocused):
            return [f"widget {k + 1}, slider '{label}', reached with Tab: it does not show that it "
                    "has the focus"]
        name = (handle.get_attribute("aria-label") or "").strip()
        if name != label:   # its name, in the edition's language (the course's JupyterLab extension)
            return [f"widget {k + 1}, slider '{label}', reached with Tab: a screen reader hears "
                    f"its handle as {name!r}, not as its label"]
        now = float(handle.get_attribute("aria-valuenow"))
        key = "ArrowLeft" if now >= float(handle.get_attribute("aria-valuemax")) else "ArrowRight"
        value = ValueReader(self.page, ctrl, SLIDER_VALUE_JS)
        c = self._change(k, "slider", label, f"Tab x{presses} to the handle, then {key} "
                         "(keyboard only)", value())
        change = self._measure(k, box, c, lambda: self.page.keyboard.press(key), value=value)
        self.changes.append(change)
        return [change.problem] if change.problem else []

    def exercise(self, k: int, box) -> list[str]:
        problems = []
        for i, ctrl in enumerate(self.controls_of(box)):
            kind = control_kind(ctrl)
            label = control_label(ctrl, kind, i)
            ctrl.scroll_into_view_if_needed()
            if kind.startswith("unknown"):
                problems.append(f"widget {k + 1}: control '{label}' ({kind}) is not supported by "
                                "the browser test; teach tests/browser_helpers.py to move it")
                continue
            if self._disabled(ctrl):
                continue
            for change in getattr(self, "_move_" + kind.replace("-", "_"))(k, box, ctrl, label):
                self.changes.append(change)
                if change.problem:
                    problems.append(change.problem)
                    break   # the control's state is unknown now: its other moves would mislead
        return problems

    def log_console_text(self) -> str:
        """Open the Log Console (where output of widget callbacks goes) and read it."""
        try:
            self.page.locator(".jp-LogConsoleStatusItem").click()
            out = self.page.locator(".jp-LogConsolePanel .jp-OutputArea-output")
            out.last.wait_for(timeout=30_000)
            return "\n".join(t for t in out.all_text_contents() if t.strip())
        except Exception as exc:  # diagnostics only
            return f"(could not read the Log Console: {type(exc).__name__})"

    @staticmethod
    def _disabled(ctrl) -> bool:
        return ctrl.evaluate("""el => !!el.querySelector('[disabled]') ||
                                el.querySelector('.noUi-target')?.hasAttribute('disabled') || false""")

    def _measure(self, k, box, change: Change, act, prepare=None,
                 value: ValueReader | None = None) -> Change:
        """Arm the probe, act like a person, wait until text and image changed; fill change.

        The value shown by the control is read once it differs from change.from_value (or
        after CONTROL_MS): a SelectionSlider's label, for one, is set by the kernel after the
        redraw, so right after the new image it may still show the old value.
        """
        # the kernel has finished with the previous change (its last messages are in)
        self.wait_kernel_idle()
        if prepare:
            prepare()
        box.evaluate(ARM_PROBE_JS)
        t = time.perf_counter()
        act()
        try:
            state = self.page.wait_for_function(PROBE_STATE_JS, timeout=CONTROL_MS).json_value()
        except Exception as exc:  # turned into a clear failure below
            state = f"no redraw within {CONTROL_MS / 1000:.0f} s ({type(exc).__name__})"
        wall_ms = (time.perf_counter() - t) * 1000
        res = self.page.evaluate(PROBE_RESULT_JS)
        if value is not None:
            if state == "done":
                value.wait_other_than(change.from_value, CONTROL_MS)
            change.to_value = value()
        change.extra["wall_ms"] = round(wall_ms, 1)
        if res["stale"]:
            change.extra["stale_redraws"] = res["stale"]
        what = (f"widget {k + 1}, {change.kind} '{change.control}' {change.action} "
                f"({change.from_value!r} -> {change.to_value!r})")
        if state != "done":
            if state == "log":
                state = ("the kernel logged a message (Log Console) instead of redrawing:\n"
                         + short(self.log_console_text(), 1500))
            change.problem = (f"{what}: output did not update: {state}; text changed: "
                              f"{res['tText'] is not None}, image changed: {res['tImg'] is not None}")
            return change
        if change.to_value == change.from_value:
            change.problem = f"{what}: the control's value did not change"
        t0 = res["t0"]
        if t0 is None:
            change.problem = f"{what}: no user event reached the control"
            return change
        change.text_ms = round(res["tText"] - t0, 1)
        change.image_ms = round(res["tImg"] - t0, 1)
        change.ms = round(max(res["tText"], res["tImg"]) - t0, 1)
        return change

    def _change(self, k, kind, label, action, from_value) -> Change:
        return Change(self.name, k + 1, label, kind, action, from_value, from_value)

    def _move_slider(self, k, box, ctrl, label):
        handles = ctrl.locator(".noUi-handle[role=slider]")
        readout = ctrl.locator(".widget-readout")
        # the readout, or the Label with_controls() puts beside a SelectionSlider instead
        value = ValueReader(self.page, ctrl, SLIDER_VALUE_JS)

        if readout.count() == 1 and readout.first.is_visible() and not self._readout_takes_typing(ctrl):
            c = self._change(k, "slider", label, "look at the readout", value())
            c.problem = (f"widget {k + 1}, slider '{label}': its readout can be typed into but "
                         "ignores what is typed (a SelectionSlider's own readout in ipywidgets 8); "
                         "pass it through with_controls(), which shows a read-only label instead")
            yield c
            return
        original = value()
        for j in range(handles.count()):
            h = handles.nth(j)
            now = float(h.get_attribute("aria-valuenow"))
            hi = float(h.get_attribute("aria-valuemax"))
            key = "ArrowLeft" if now >= hi else "ArrowRight"
            c = self._change(k, "slider", label, f"keyboard {key} on handle", value())
            yield self._measure(k, box, c, lambda h=h, key=key: h.press(key),
                                prepare=lambda h=h: self._focus(h), value=value)
        if handles.count() != 1 or value() == original:
            return
        h = handles.first
        if readout.count() == 1 and readout.first.is_visible():
            # type the original value back into the readout, as a person would
            r = readout.first
            c = self._change(k, "slider", label, f"type {original!r} + Enter in readout", value())

            def prepare():
                r.click()
                _expect()(r).to_be_focused(timeout=CONTROL_MS)
                self.page.keyboard.press("ControlOrMeta+a")
                self.page.keyboard.type(original)
                _expect()(r).to_have_text(original, timeout=CONTROL_MS)  # replaced, not appended

            yield self._measure(k, box, c, lambda: self.page.keyboard.press("Enter"),
                                prepare=prepare, value=value)
        else:
            # SelectionSlider: no readout to type into (a read-only label shows its value);
            # jump to the first (or last) option with the keyboard instead
            at_min = float(h.get_attribute("aria-valuenow")) <= float(h.get_attribute("aria-valuemin"))
            key = "End" if at_min else "Home"
            c = self._change(k, "slider", label, f"keyboard {key} on handle", value())
            yield self._measure(k, box, c, lambda: h.press(key), prepare=lambda: self._focus(h),
                                value=value)

    @staticmethod
    def _focus(el) -> None:
        """Focus a control and see it focused, so that the next key goes to it."""
        el.focus()
        _expect()(el).to_be_focused(timeout=CONTROL_MS)

    def _readout_takes_typing(self, ctrl) -> bool:
        """Int/FloatSlider views listen for keydown (Enter) on their readout; SelectionSlider does not.

        Asked from Chromium's DevTools protocol (DOMDebugger.getEventListeners) on the
        widget's element, where ipywidgets delegates its readout events.
        """
        if self._cdp is None:
            self._cdp = self.page.context.new_cdp_session(self.page)
        marker = secrets.token_hex(6)
        ctrl.evaluate("(el, m) => el.setAttribute('data-browser-test', m)", marker)
        try:
            obj = self._cdp.send("Runtime.evaluate", {
                "expression": f"document.querySelector('[data-browser-test=\"{marker}\"]')"})
            listeners = self._cdp.send("DOMDebugger.getEventListeners",
                                       {"objectId": obj["result"]["objectId"]})["listeners"]
            self._cdp.send("Runtime.releaseObject", {"objectId": obj["result"]["objectId"]})
        finally:
            ctrl.evaluate("el => el.removeAttribute('data-browser-test')")
        return any(entry["type"] == "keydown" for entry in listeners)

    def _select_other(self, k, box, ctrl, label, kind):
        sel = ctrl.locator("select").first
        options = sel.evaluate("s => [...s.options].map(o => [o.value, o.textContent])")
        current = sel.evaluate("s => s.selectedIndex")
        if len(options) < 2:
            return
        target = current + 1 if current + 1 < len(options) else current - 1

        value = ValueReader(self.page, sel, SELECT_VALUE_JS)

        c = self._change(k, kind, label, f"select option {options[target][1]!r}", value())
        yield self._measure(k, box, c, lambda: sel.select_option(value=options[target][0]),
                            value=value)

    def _move_dropdown(self, k, box, ctrl, label):
        yield from self._select_other(k, box, ctrl, label, "dropdown")

    def _move_select(self, k, box, ctrl, label):
        yield from self._select_other(k, box, ctrl, label, "select")

    def _move_toggle_buttons(self, k, box, ctrl, label):
        buttons = ctrl.locator("button.widget-toggle-button")
        n = buttons.count()
        texts = [buttons.nth(j).text_content().strip() for j in range(n)]
        active = [j for j in range(n) if "mod-active" in (buttons.nth(j).get_attribute("class") or "")]
        if n < 2:
            return
        target = (active[0] + 1) % n if active else 0

        value = ValueReader(self.page, ctrl, TOGGLE_BUTTONS_VALUE_JS)

        c = self._change(k, "toggle-buttons", label, f"click {texts[target]!r}", value())
        yield self._measure(k, box, c, lambda: buttons.nth(target).click(), value=value)

    def _move_radio(self, k, box, ctrl, label):
        radios = ctrl.locator("input[type=radio]")
        n = radios.count()
        if n < 2:
            return
        current = [j for j in range(n) if radios.nth(j).is_checked()]
        target = (current[0] + 1) % n if current else 0
        labels = ctrl.locator("label:has(input[type=radio])")

        value = ValueReader(self.page, ctrl, RADIO_VALUE_JS)

        c = self._change(k, "radio", label, f"click {labels.nth(target).text_content().strip()!r}",
                         value())
        yield self._measure(k, box, c, lambda: radios.nth(target).click(), value=value)

    def _move_checkbox(self, k, box, ctrl, label):
        cb = ctrl.locator("input[type=checkbox]").first

        value = ValueReader(self.page, cb, CHECKBOX_VALUE_JS)

        c = self._change(k, "checkbox", label, "click", value())
        yield self._measure(k, box, c, lambda: cb.click(), value=value)

    def _move_toggle_button(self, k, box, ctrl, label):
        value = ValueReader(self.page, ctrl, TOGGLE_BUTTON_VALUE_JS)
        c = self._change(k, "toggle-button", label, "click", value())
        yield self._measure(k, box, c, lambda: ctrl.click(), value=value)

    def _move_text(self, k, box, ctrl, label):
        field_ = ctrl.locator("input, textarea").first
        value = ValueReader(self.page, field_, TEXT_VALUE_JS)
        current = value()
        try:
            num = float(current)
        except ValueError:
            target = current + " x"
        else:
            step = float(field_.get_attribute("step") or 1) if (field_.get_attribute("step") or "any") != "any" else 1.0
            hi = field_.get_attribute("max")
            target_num = num - step if hi is not None and num + step > float(hi) else num + step
            target = str(int(target_num)) if target_num.is_integer() and "." not in current else str(target_num)
        c = self._change(k, "text", label, f"type {target!r} + Enter", current)
        def prepare():
            field_.fill(target)
            _expect()(field_).to_have_value(target, timeout=CONTROL_MS)

        yield self._measure(k, box, c, lambda: field_.press("Enter"), prepare=prepare, value=value)
