"""The static edition (`python3 dev.py site`) in a real (headless) Chromium, offline.

The test builds the site once per session (site/build.py: Jupyter Book from the stored
outputs), serves a copy of build/site on 127.0.0.1 on a free port, and opens every page
with every request to another host aborted and counted. For every page it asserts:

- no console error, no uncaught exception, no failed request (4xx/5xx or aborted),
  no request to another host;
- every equation typeset: each Sphinx math element holds a MathJax container, MathJax
  reports no TeX error, and no raw `$...$`, `$$`, `\\(`, `\\[` or `\\begin{` is left in the
  text outside code;
- every figure stored in the notebook is on the page: the images' bytes (sha256) are
  exactly those of the notebook's image outputs, and each image has loaded; so is every
  stored text output (printed text, plain results such as the self-checks' verdicts);
- where the notebook has a widget, the page shows the live-figure note instead (as many
  notes as widget cells) and no widget placeholder such as `VBox(children=...)`;
- a search box, and previous/next links in course order; the sidebar lists the notebooks
  in course order; index.html opens 00.

Besides: a search from the search box finds the page of the word searched, Japanese
terms are drawn with one of the system CJK fonts named in the site's CSS (no web font),
and no built HTML or CSS file references an asset on another host.

Without /usr/bin/chromium or npm the test skips; with REQUIRE_BROWSER=1 (CI) it fails.
"""

from __future__ import annotations

import base64
import collections
import fcntl
import functools
import hashlib
import html.parser
import json
import re
import shutil
import subprocess
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from required import require

import browser_helpers as bh

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(ROOT.glob("notebooks/[0-9][0-9]_*.ipynb"))
# The Japanese edition (python3 dev.py ja) is built into build/site/ja/ and tested the same way
NOTEBOOKS_JA = sorted(ROOT.glob("notebooks/ja/[0-9][0-9]_*.ipynb"))
BUILT = ROOT / "build" / "site"
SITE_CSS = ROOT / "site" / "_static" / "course-site.css"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/svg+xml")
PAGE_MS = 60_000

pytestmark = pytest.mark.browser


def _require(reason: str | None) -> None:
    require(reason, "REQUIRE_BROWSER", "the site test cannot run")


# --------------------------------------------------------------------------
# What the notebooks say the pages must show
# --------------------------------------------------------------------------

def _notebook_facts(path: Path) -> dict:
    nb = json.loads(path.read_text(encoding="utf-8"))
    images, texts, widgets = [], [], 0
    for cell in nb["cells"]:
        outputs = cell.get("outputs", []) or []
        widgets += any(WIDGET_MIME in o.get("data", {}) for o in outputs)
        for out in outputs:
            data = out.get("data", {})
            text = out.get("text") if out["output_type"] == "stream" else (
                data.get("text/plain") if set(data) == {"text/plain"} else None)
            if text:   # printed text and plain results (self-check verdicts among them)
                texts.append(" ".join("".join(text).split()))
            for mime in IMAGE_MIMES:
                if mime in out.get("data", {}):
                    data = out["data"][mime]
                    data = "".join(data) if isinstance(data, list) else data
                    raw = data.encode() if mime == "image/svg+xml" else base64.b64decode(data)
                    images.append(hashlib.sha256(raw).hexdigest())
                    break   # one figure per output: the first image type that it has
    title = next((line[2:].strip() for cell in nb["cells"] if cell["cell_type"] == "markdown"
                  for line in "".join(cell["source"]).splitlines() if line.startswith("# ")), "")
    return {"images": images, "texts": texts, "widgets": widgets, "title": title}


# --------------------------------------------------------------------------
# Build (once per session, serialised across processes) and serve a copy
# --------------------------------------------------------------------------

@pytest.fixture(scope="session")
def site_dir(tmp_path_factory):
    _require(None if shutil.which("npm") else
             "npm not found: the static edition's MathJax comes from npm "
             "(install Node.js and npm, e.g. `sudo apt-get install npm`)")
    lock_path = ROOT / "build" / ".site-test.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    copy = tmp_path_factory.mktemp("site") / "site"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)   # another test process may build at the same time
        t = time.perf_counter()
        run = subprocess.run([sys.executable, str(ROOT / "dev.py"), "site"], cwd=ROOT,
                             capture_output=True, text=True)
        seconds = time.perf_counter() - t
        if run.returncode:
            pytest.fail(f"`python3 dev.py site` failed ({run.returncode}) after {seconds:.0f} s:\n"
                        f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}", pytrace=False)
        shutil.copytree(BUILT, copy)   # serve a copy: a later build may replace build/site
    return copy


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # the base class's name
        pass


@pytest.fixture(scope="module")
def site_url(site_dir):
    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 functools.partial(_QuietHandler, directory=str(site_dir)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def site_browser():
    _require(bh.browser_unavailable_reason())
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=bh.CHROMIUM, args=bh.CHROMIUM_ARGS,
                                     headless=True)
        try:
            yield browser
        finally:
            browser.close()


class _Visit:
    """A browser context that aborts and records every request to another host."""

    def __init__(self, browser):
        self.external: list[str] = []
        self.failed: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(viewport={"width": 1300, "height": 900})
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))
        self.page.on("requestfailed", self._failed)
        self.page.on("response", lambda r: self.failed.append(f"{r.url} (HTTP {r.status})")
                     if r.status >= 400 else None)

    def _failed(self, request):
        """A failed request, unless the browser only cancelled it (net::ERR_ABORTED) because the
        page went on to another one (index.html forwards at once, while its favicon is loading):
        then the same URL fetched again must load, or it counts after all."""
        if (request.failure == "net::ERR_ABORTED" and bh.is_local_url(request.url)
                and self.context.request.get(request.url).ok):
            return
        self.failed.append(f"{request.url} ({request.failure})")

    def _route(self, route):
        url = route.request.url
        if bh.is_local_url(url):
            route.continue_()
        else:
            self.external.append(url)
            route.abort()

    def problems(self) -> list[str]:
        out = []
        if self.external:
            out.append(f"{len(self.external)} request(s) to another host (aborted): "
                       + ", ".join(sorted(set(self.external))[:5]))
        # an aborted external request also fails; report it once, above
        failed = [f for f in self.failed if not any(f.startswith(u) for u in self.external)]
        if failed:
            out.append("failed requests: " + ", ".join(failed[:5]))
        if self.errors:
            out.append("console errors: " + " | ".join(self.errors[:5]))
        return out

    def close(self):
        self.context.close()


@pytest.fixture
def visit(site_browser):
    v = _Visit(site_browser)
    yield v
    v.close()


# Text of the page outside code, math and scripts: what a reader sees as prose.
PROSE_TEXT_JS = """() => {
  const main = document.querySelector('main') || document.body;
  const clone = main.cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, mjx-container, .MathJax, svg')
       .forEach(e => e.remove());
  return clone.textContent;
}"""
MATH_STATE_JS = """() => {
  const maths = [...document.querySelectorAll('.math')];
  return {
    total: maths.length,
    untypeset: maths.filter(m => !m.querySelector('mjx-container'))
                    .map(m => m.textContent.trim().slice(0, 60)),
    errors: [...document.querySelectorAll('mjx-merror, [data-mjx-error], mjx-assistive-mml [mathcolor=red]')]
              .map(e => (e.getAttribute('data-mjx-error') || e.textContent).slice(0, 60)),
  };
}"""
IMAGES_JS = """() => [...document.querySelectorAll('.cell_output img')].map(i => ({
  src: i.getAttribute('src'), loaded: i.complete && i.naturalWidth > 0}))"""
RAW_TEX = re.compile(r"\$\$|\$[^$\s][^$\n]*\$|\\\(|\\\)|\\\[|\\\]|\\begin\{")


def _load(visit: _Visit, url: str) -> list[str]:
    """Open the page and wait for MathJax to finish typesetting (its script is deferred, so
    by the load event it has run, or failed to load)."""
    visit.page.goto(url, wait_until="load", timeout=PAGE_MS)
    if not visit.page.locator(".math").count():
        return []
    typeset = visit.page.evaluate("""async () => {
        if (!window.MathJax?.startup?.promise) return false;
        await MathJax.startup.promise;
        return true;
    }""")
    return [] if typeset else ["MathJax did not load: its equations stay raw TeX"]


def _file_of(site_dir: Path, page_url: str, src: str) -> Path:
    path = unquote(urlsplit(src).path)
    base = Path(unquote(urlsplit(page_url).path)).parent
    return site_dir / (base / path).as_posix().lstrip("/")


def _edition(nb: Path) -> tuple[list[Path], str]:
    """The notebooks of nb's edition and the folder of its pages ("" or "ja/")."""
    return (NOTEBOOKS_JA, "ja/") if nb.parent.name == "ja" else (NOTEBOOKS, "")


@pytest.mark.skipif(not NOTEBOOKS, reason="no notebooks/[0-9][0-9]_*.ipynb")
@pytest.mark.parametrize("nb", NOTEBOOKS + NOTEBOOKS_JA or [None],
                         ids=lambda p: (_edition(p)[1].replace("/", "-") + p.stem) if p else "none")
def test_notebook_page(nb, site_dir, site_url, visit):
    edition, folder = _edition(nb)
    names = [p.stem for p in edition]
    facts = _notebook_facts(nb)
    url = f"{site_url}{folder}{nb.stem}.html"
    problems = _load(visit, url)
    page = visit.page
    problems += visit.problems()

    math = page.evaluate(MATH_STATE_JS)
    if math["untypeset"]:
        problems.append(f"{len(math['untypeset'])} of {math['total']} equations not typeset, "
                        f"e.g. {math['untypeset'][:3]}")
    if math["errors"]:
        problems.append(f"MathJax errors: {math['errors'][:5]}")
    raw = sorted({m.group() for m in RAW_TEX.finditer(page.evaluate(PROSE_TEXT_JS))})
    if raw:
        problems.append(f"raw TeX left in the text: {raw[:5]}")

    shown = page.evaluate(IMAGES_JS)
    not_loaded = [i["src"] for i in shown if not i["loaded"]]
    if not_loaded:
        problems.append(f"images that did not load: {not_loaded[:5]}")
    on_page = collections.Counter()
    for img in shown:
        f = _file_of(site_dir, url, img["src"])
        on_page[hashlib.sha256(f.read_bytes()).hexdigest() if f.is_file() else img["src"]] += 1
    stored = collections.Counter(facts["images"])
    if on_page != stored:
        problems.append(f"figures: the notebook stores {sum(stored.values())}, the page shows "
                        f"{sum(on_page.values())}; missing {sum((stored - on_page).values())}, "
                        f"not from the notebook {sum((on_page - stored).values())}")

    notes = page.locator(".live-figure-note")
    if notes.count() != facts["widgets"]:
        problems.append(f"{facts['widgets']} widget cell(s) in the notebook, "
                        f"{notes.count()} live-figure note(s) on the page")
    lab, redraw = ("python3 dev.py lab --lang ja", "描き直") if folder else ("python3 dev.py lab",
                                                                           "to redraw it")
    for k in range(notes.count()):
        text = notes.nth(k).text_content()
        if lab not in text or redraw not in text:
            problems.append(f"live-figure note {k + 1} does not say how to use it live: {text!r}")
    other, back = (NOTEBOOKS, "../") if folder else (NOTEBOOKS_JA, "ja/")
    link = page.locator(".course-edition-link a")
    want = f"{back}{nb.stem}.html" if nb.stem in {p.stem for p in other} else None
    got = link.first.get_attribute("href") if link.count() else None
    if got != want:
        problems.append(f"the link to the other edition goes to {got}, not {want}")
    body = page.locator("main").text_content()
    flat = " ".join(body.split())
    missing = [t for t in facts["texts"] if t not in flat]
    if missing:
        problems.append(f"{len(missing)} of {len(facts['texts'])} stored text outputs are not on "
                        f"the page, e.g. {missing[0][:120]!r}")
    for placeholder in ("VBox(children", "HBox(children", "Loading widget", "Error displaying widget"):
        if placeholder in body:
            problems.append(f"a widget placeholder is on the page: {placeholder!r}")

    if not page.locator("input[name=q]").count():
        problems.append("no search box")
    i = names.index(nb.stem)
    for selector, k in (("a.left-prev", i - 1), ("a.right-next", i + 1)):
        link = page.locator(f".prev-next-area {selector}")
        want = f"{names[k]}.html" if 0 <= k < len(names) else None
        got = link.first.get_attribute("href") if link.count() else None
        if got != want:
            problems.append(f"{selector} goes to {got}, not {want}")
    sidebar = [h for h in page.eval_on_selector_all(
        "nav.bd-docs-nav a.reference", "as => as.map(a => a.getAttribute('href'))")]
    want_sidebar = [f"{n}.html" if n != nb.stem else "#" for n in names[1:]]
    if sidebar != want_sidebar:
        problems.append(f"sidebar is not the notebooks in course order: {sidebar}")

    if problems:
        pytest.fail(f"{folder}{nb.stem}.html:\n- " + "\n- ".join(problems), pytrace=False)


def test_index_search_and_other_pages(site_dir, site_url, visit):
    names = [p.stem for p in NOTEBOOKS]
    page = visit.page
    problems = []
    page.goto(f"{site_url}index.html", timeout=PAGE_MS)
    page.wait_for_url(f"**/{names[0]}.html", timeout=PAGE_MS)

    for other in sorted(p.name for p in site_dir.glob("*.html")
                        if p.stem not in names and p.name != "index.html"):
        problems += [f"{other}: {p}" for p in _load(visit, f"{site_url}{other}")]  # search, genindex

    # search from the box, for a word of the last notebook's title
    last = NOTEBOOKS[-1]
    word = max(re.findall(r"[A-Za-z]{4,}", _notebook_facts(last)["title"]) or ["attention"], key=len)
    problems += [f"{names[0]}.html: {p}" for p in _load(visit, f"{site_url}{names[0]}.html")]
    page.locator("button.search-button-field").first.click()
    box = page.locator("input[name=q]:visible").first
    box.fill(word)
    box.press("Enter")
    page.wait_for_url("**/search.html?q=*", timeout=PAGE_MS)
    page.wait_for_selector("#search-results ul.search li a", timeout=PAGE_MS)
    # Sphinx's search adds its results one by one (a timer per result) and writes the count into
    # the summary only when the last is shown: read the list then, not at its first entry
    page.wait_for_function("""() => /\\d/.test(document.querySelector(
        '#search-results .search-summary')?.textContent || '')""", timeout=PAGE_MS, polling=100)
    found = page.eval_on_selector_all("#search-results ul.search li a",
                                      "as => as.map(a => a.getAttribute('href'))")
    if not any(h.split("?")[0].split("#")[0] == f"{last.stem}.html" for h in found):
        problems.append(f"searching {word!r} did not find {last.stem}.html: {found}")

    problems += visit.problems()
    if problems:
        pytest.fail("\n- ".join(["index, search and other pages:", *problems]), pytrace=False)


CJK = re.compile(r"^[\u3040-\u30ff\u3400-\u9fff\uff00-\uffef]+$")
MARK_CJK_JS = """re => {
  const cells = [...document.querySelectorAll('main td, main p, main li, main span')];
  const el = cells.find(e => e.children.length === 0 && new RegExp(re).test(e.textContent.trim()));
  if (!el) return null;
  el.setAttribute('data-site-test', 'cjk');
  return el.textContent.trim();
}"""


def test_japanese_terms_use_a_system_font(site_url, visit):
    """Japanese text is drawn with a CJK font from the site's CSS stack, not a web font."""
    families = re.search(r"--course-cjk-fonts:([^;]+);", SITE_CSS.read_text(encoding="utf-8"))
    assert families, f"{SITE_CSS} defines no --course-cjk-fonts"
    allowed = {f.strip().strip('"') for f in families.group(1).split(",")}
    assert not _load(visit, f"{site_url}{NOTEBOOKS[0].stem}.html")
    text = visit.page.evaluate(MARK_CJK_JS, CJK.pattern)
    assert text, f"{NOTEBOOKS[0].stem}.html has no element whose text is only Japanese"
    cdp = visit.context.new_cdp_session(visit.page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": "[data-site-test=cjk]"})
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})["fonts"]
    used = {f["familyName"] for f in fonts}
    assert fonts and used <= allowed and not any(f["isCustomFont"] for f in fonts), (
        f"{text!r} is drawn with {fonts}, not with one of the CJK system fonts the CSS names "
        f"({sorted(allowed)}); install one, e.g. `sudo apt-get install fonts-ipafont-gothic`")
    assert not visit.problems(), visit.problems()


class _AssetRefs(html.parser.HTMLParser):
    """src / href / data / srcset of elements that make the browser fetch something."""

    FETCHING = {"script": "src", "img": "src", "iframe": "src", "embed": "src", "source": "src",
                "video": "src", "audio": "src", "track": "src", "object": "data", "link": "href",
                "input": "src"}

    def __init__(self):
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "link" and not {"stylesheet", "preload", "icon", "modulepreload", "prefetch",
                                  "manifest", "apple-touch-icon"} & set((attrs.get("rel") or "").split()):
            return
        for name in (self.FETCHING.get(tag), "srcset", "poster"):
            if name and attrs.get(name):
                self.refs.append(attrs[name])


def test_built_files_reference_no_other_host(site_dir):
    remote = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
    css_ref = re.compile(r"url\(\s*['\"]?([^'\")]+)|@import\s+(?:url\()?\s*['\"]([^'\"]+)")
    found = []
    for f in sorted(site_dir.rglob("*.html")):
        parser = _AssetRefs()
        parser.feed(f.read_text(encoding="utf-8", errors="replace"))
        found += [f"{f.relative_to(site_dir)}: {r}" for r in parser.refs
                  for part in r.split(",") if remote.match(part)]
    for f in sorted(site_dir.rglob("*.css")):
        for m in css_ref.finditer(f.read_text(encoding="utf-8", errors="replace")):
            ref = m.group(1) or m.group(2)
            if remote.match(ref):
                found.append(f"{f.relative_to(site_dir)}: {ref}")
    assert not found, "the built site loads assets from another host:\n" + "\n".join(found[:20])


def _site_build_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("site_build", ROOT / "site" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_widget_note_is_made_from_the_cell():
    """The note names the controls of with_controls(...) by their descriptions, grouped by kind."""
    import nbformat

    build = _site_build_module()
    cell = nbformat.v4.new_code_cell(
        "# NBVAL_IGNORE_OUTPUT\nlive = nbXX.LiveThing()\n"
        'with_controls(live, a=widgets.IntSlider(value=1, description="pos"),\n'
        '            b=widgets.SelectionSlider(options=[1, 2], description="d_model"),\n'
        "            c=widgets.ToggleButtons(options=[1, 2]),\n"
        '            d=widgets.Dropdown(options=["x"], description="batch item"))')
    after = nbformat.v4.new_code_cell("print(live.update(a=1, b=2, c=1, d='x'))")
    assert build.widget_note(cell, after) == (
        "Live figure: in JupyterLab (`python3 dev.py lab`), move the pos and d_model sliders, "
        "pick the c with its buttons and choose the batch item to redraw it. Without a kernel, "
        "as here, the next cell prints what it shows for one setting.")
    magic = nbformat.v4.new_code_cell("%matplotlib widget\nwith_controls(live, x=widgets.IntSlider())")
    assert build.widget_note(magic, None) == (
        "Live figure: in JupyterLab (`python3 dev.py lab`), use its controls to redraw it; "
        "it needs a running kernel, which this page does not have.")
    assert build.note_html("Live figure: a `b` <c>") == (
        '<p class="live-figure-note"><strong>Live figure</strong>: a <code>b</code> &lt;c&gt;</p>')


def test_japanese_widget_note_and_links_to_english_pages():
    """The Japanese pages: the note in Japanese, and untranslated notebooks as English pages."""
    import nbformat

    build = _site_build_module()
    cell = nbformat.v4.new_code_cell(
        'live = nbXX.LiveThing()\n'
        'with_controls(live, a=widgets.Dropdown(options=[1], description="reader"),\n'
        '            b=widgets.SelectionSlider(options=[1, 2], description="strength c"))')
    assert build.widget_note_ja(cell, None) == (
        "インタラクティブな図: JupyterLab (`python3 dev.py lab --lang ja`) で `読者` を選んだり、"
        "`強さ c` のスライダーを動かしたりすると、図が描き直されます。実行中のカーネルが必要なので、"
        "このページでは動きません。")  # the labels as the Japanese notebook shows them (course.live)
    one = nbformat.v4.new_code_cell('with_controls(live, b=widgets.IntSlider(description="pos"))')
    assert "で `pos` のスライダーを動かすと、図が" in build.widget_note_ja(one, None)
    assert build.OUTSIDE_LINK.sub(lambda m: m.group(2), "[次へ](../03_scaling.ipynb)") == "03_scaling"
