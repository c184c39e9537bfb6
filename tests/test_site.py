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

- accessibility (tests/accessibility.py): the page's language (ja on the Japanese pages), one
  heading of level 1 shown, the notebook's title;
  axe-core finds no serious or critical violation,
  and no other one that the README's section "Accessibility" does not list; every image has
  an alt that is not a file name (a stored figure's is its section and its description in
  words, made from its data and stored as its text/plain, course/describe/; without one, the
  paragraph that introduces it, course/alt_text.py). The search page and the index of both editions too.

Besides: a search from the search box finds the page of the word searched, Japanese
terms are drawn with one of the system CJK fonts named in the site's CSS (no web font),
and no built HTML or CSS file references an asset on another host.

Without /usr/bin/chromium or npm the test skips; with REQUIRE_BROWSER=1 (CI) it fails.
"""

from __future__ import annotations

import base64
import collections
import fcntl
import hashlib
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from required import require

import accessibility as a11y
import browser_helpers as bh
from localserver import serving  # hub/, on sys.path through browser_helpers

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(ROOT.glob("notebooks/[0-9][0-9]_*.ipynb"))
# The Japanese edition (python3 dev.py ja) is built into build/site/ja/ and tested the same way
NOTEBOOKS_JA = sorted(ROOT.glob("notebooks/ja/[0-9][0-9]_*.ipynb"))
BUILT = ROOT / "build" / "site"
SITE_CSS = ROOT / "site" / "_static" / "course-site.css"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/svg+xml")
PAGE_MS = 60_000
# The highlighted code, whose colour contrast tests/accessibility.py computes apart from axe's
# (a span per token made axe's color-contrast most of the test's time)
CODE = "div.highlight"

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
        # The frames are drawn by the interpreter these tests' kernels run (.venv, or
        # .venv-lowest in `dev.py test --lowest`): test_frames_are_what_the_kernel_draws compares
        # them pixel for pixel with this environment's kernel
        run = subprocess.run([sys.executable, str(ROOT / "dev.py"), "site"], cwd=ROOT,
                             capture_output=True, text=True,
                             env=dict(os.environ, COURSE_PYTHON=sys.executable))
        seconds = time.perf_counter() - t
        if run.returncode:
            pytest.fail(f"`python3 dev.py site` failed ({run.returncode}) after {seconds:.0f} s:\n"
                        f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}", pytrace=False)
        shutil.copytree(BUILT, copy)   # serve a copy: a later build may replace build/site
    return copy


@pytest.fixture(scope="module")
def site_url(site_dir):
    with serving(site_dir) as url:
        yield url


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
IMAGES_JS = """() => [...document.querySelectorAll('.cell_output img:not(.live-frames-image)')].map(i => ({
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
    """A notebook's page as it opens: its equations typeset, its stored figures and texts, its
    links, language, headings, alt texts and axe; then its live figures moved
    (_live_figure_problems); no request leaves the site, no console error."""
    edition, folder = _edition(nb)
    names = [p.stem for p in edition]
    facts = _notebook_facts(nb)
    url = f"{site_url}{folder}{nb.stem}.html"
    problems = _load(visit, url)
    page = visit.page

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

    where = f"{folder}{nb.stem}.html"
    lang = page.evaluate("() => document.documentElement.lang")
    if lang != ("ja" if folder else "en"):
        problems.append(f"the page's language is {lang!r}, not {'ja' if folder else 'en'!r}")
    h1 = page.evaluate("() => [...document.querySelectorAll('h1')].filter(h => h.getClientRects()"
                       ".length).map(h => h.textContent.replace('#', '').trim())")
    if h1 != [facts["title"]]:
        problems.append(f"the page's shown headings of level 1 are {h1}, not the notebook's "
                        f"title {facts['title']!r} alone")
    problems += a11y.image_alt_problems(page, where)
    problems += a11y.axe_problems(page, where, "test_site.py", contrast_apart=CODE)
    if facts["widgets"]:   # then the live figures, moved (the page's text changes with them)
        try:
            walked = _live_figure_problems(page, nb, site_dir, url, folder)
        except Exception as e:  # noqa: BLE001 - reported with the page's own problems, not instead
            walked = [f"live figures: the walk stopped: {type(e).__name__}: {e}"]
        problems += walked[:20] + ([f"… and {len(walked) - 20} more of the live figures"]
                                   if len(walked) > 20 else [])
    problems += visit.problems()   # no request left the site, no console error, to the end

    if problems:
        pytest.fail(f"{folder}{nb.stem}.html:\n- " + "\n- ".join(problems), pytrace=False)


def test_index_search_and_other_pages(site_dir, site_url, visit):
    names = [p.stem for p in NOTEBOOKS]
    page = visit.page
    problems = []
    page.goto(f"{site_url}index.html", timeout=PAGE_MS)
    page.wait_for_url(f"**/{names[0]}.html", timeout=PAGE_MS)

    # search, genindex (of both editions): what they show, axe-core on them
    for other in sorted(p.relative_to(site_dir).as_posix() for p in [
            *site_dir.glob("*.html"), *site_dir.glob("ja/*.html")]
            if p.stem not in names and p.name != "index.html"):
        problems += [f"{other}: {p}" for p in _load(visit, f"{site_url}{other}")]
        problems += a11y.image_alt_problems(page, other)
        problems += a11y.axe_problems(page, other, "test_site.py", contrast_apart=CODE)

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
    problems += a11y.axe_problems(page, "search.html with results", "test_site.py",
                                  contrast_apart=CODE)

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


# --------------------------------------------------------------------------
# Live figures without a kernel: the notebook's controls over frames drawn in advance
# --------------------------------------------------------------------------

LIVE_DATA_JS = """() => [...document.querySelectorAll('.live-frames')].map(b => JSON.parse(
  b.querySelector('script.live-frames-data').textContent))"""
# What a box shows now: the option index each control is at (read from the controls themselves),
# the frame's file, its alt text, the printed text, whether the image has loaded.
LIVE_STATE_JS = """box => ({
  at: [...box.querySelectorAll('[data-control]')].map(el => el.type === 'range'
      ? JSON.parse(box.querySelector('script.live-frames-data').textContent)
            .controls[Number(el.dataset.control)].drawn[Number(el.value)]
      : Number(el.tagName === 'SELECT' ? el.value : el.querySelector('input:checked').value)),
  src: box.querySelector('img.live-frames-image').getAttribute('src'),
  alt: box.querySelector('img.live-frames-image').alt,
  text: box.querySelector('.live-frames-text').textContent,
  loaded: box.querySelector('img.live-frames-image').complete
          && box.querySelector('img.live-frames-image').naturalWidth > 0,
  shown: box.dataset.shown, ms: Number(box.dataset.switchMs || 'NaN')})"""
SWITCH_MS = 100
# After a step: wait (up to `ms`) until the box shows the frame of the values its controls now
# show, then read it: one round trip per step instead of four
SHOWN_STATE_JS = f"""async (box, ms) => {{
  const read = {LIVE_STATE_JS};
  const until = performance.now() + ms;
  for (;;) {{
    let state;
    try {{ state = read(box); }} catch (e) {{ return {{error: String(e)}}; }}
    if (state.shown === state.at.join('-')) return state;
    if (performance.now() > until) return {{...state, timedOut: true}};
    // the next frame, or 50 ms if frames stop (a hidden page): the deadline holds either way
    await new Promise(r => {{ requestAnimationFrame(r); setTimeout(r, 50); }});
  }}
}}"""


def _widget_cells(nb_path: Path):
    """[(widget cell, next code cell or None)] of the stored notebook."""
    import nbformat

    nb = nbformat.read(nb_path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    return [(c, code[k + 1] if k + 1 < len(code) else None) for k, c in enumerate(code)
            if any(WIDGET_MIME in o.get("data", {}) for o in c.get("outputs", []))]


def _stored_updates(widget_cell, next_cell) -> list[tuple[dict, str]]:
    """The literal `live.update(...)` calls printed by the cell after the widget, with the text
    the notebook stores for that cell (what the kernel printed for those values)."""
    import ast

    live = next((n.args[0].id for n in ast.walk(ast.parse(widget_cell.source))
                 if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "with_controls"
                 and n.args and isinstance(n.args[0], ast.Name)), None)
    if next_cell is None or live is None:
        return []
    calls = [n for n in ast.walk(ast.parse(next_cell.source)) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr == "update"
             and getattr(n.func.value, "id", None) == live]
    printed = "".join(o.get("text", "") for o in next_cell.outputs if o.output_type == "stream")
    if len(calls) != 1:
        return []
    return [({kw.arg: ast.literal_eval(kw.value) for kw in calls[0].keywords}, printed.rstrip("\n"))]


def _move_all(box, control: dict):
    """Move the control through every drawn value, one step at a time, by the keyboard where
    it has keys (sliders, button groups), yielding what was done after each step. Each control
    is found by its role and its accessible name, the notebook's label."""
    label, drawn = control["label"], control["drawn"]
    slider = box.get_by_role("slider", name=label, exact=True)
    select = box.get_by_role("combobox", name=label, exact=True)
    group = box.get_by_role("group", name=label, exact=True)
    if slider.count():
        slider.focus()
        for key in ["Home", *["ArrowRight"] * (len(drawn) - 1), "End", "Home"]:
            slider.press(key)
            yield key
    elif select.count():
        for j in [*drawn[1:], drawn[0]]:
            select.select_option(str(j))
            yield f"select {control['labels'][j]!r}"
    else:
        assert group.count(), f"no slider, list or button group named {label!r}"
        radios = group.get_by_role("radio")
        assert radios.count() == len(drawn), f"{label}: {radios.count()} buttons, {len(drawn)} values"
        radios.nth(0).click()
        yield "click the first button"
        for _ in drawn[1:]:
            box.page.keyboard.press("ArrowRight")   # within a radio group: the next button
            yield "ArrowRight"


def _live_figure_problems(page, nb: Path, site_dir: Path, url: str, folder: str) -> list[str]:
    """On the page as loaded (test_notebook_page, after its checks of the page as it opens):
    the page used by keyboard alone (_keyboard_only); then every control of every live figure,
    moved through every drawn value, shows the frame of the values the controls show, with its
    text as printed text and the figure in words as its alt text; the frame of the values the
    next cell prints is the text the notebook stores for it; each switch shows its frame within
    SWITCH_MS (median). One load for both tests of the page: a load costs about 1 s."""
    datas = page.evaluate(LIVE_DATA_JS)
    cells = _widget_cells(nb)
    # how each figure opens, read before anything is moved; then the page, not moved yet (the
    # page's own checks have only read it), used by keyboard alone: one load for both
    opened = [page.evaluate(LIVE_STATE_JS, page.locator(".live-frames").nth(w).element_handle())
              for w in range(len(datas))]
    problems = _keyboard_only(page, datas, _site_build_module().LIVE_NAV[
        "ja" if folder else "en"][0])
    if len(datas) != len(cells):
        problems.append(f"{len(cells)} widget cell(s), {len(datas)} live figure(s) on the page")
    times = []
    seen, moved = collections.defaultdict(set), collections.defaultdict(set)
    for w, (data, (cell, after)) in enumerate(zip(datas, cells, strict=False)):
        box = page.locator(".live-frames").nth(w)
        notes = box.locator(".live-frames-subset").all_text_contents()
        thinned = [c for c in data["controls"] if len(c["drawn"]) < len(c["labels"])]
        for c in thinned:   # a grid drawn only in part says so on the page, with its counts
            if not any(c["label"] in n and f"{len(c['drawn'])}" in n and f"{len(c['labels'])}" in n
                       for n in notes):
                problems.append(f"figure {w + 1}: {c['label']} is drawn for {len(c['drawn'])} of "
                                f"its {len(c['labels'])} values, and the page does not say so: {notes}")
        if len(notes) != len(thinned):
            problems.append(f"figure {w + 1}: {len(notes)} subset note(s) for {len(thinned)} thinned control(s)")
        for values, printed in _stored_updates(cell, after):
            key = "-".join(str(c["values"].index(values[c["name"]])) for c in data["controls"])
            if data["frames"].get(key, [None, None])[1] != printed:
                problems.append(f"figure {w + 1}: the frame for {values} says "
                                f"{data['frames'].get(key, [None, None])[1]!r}, the notebook "
                                f"stores {printed!r}")
        default = "-".join(str(c["default"]) for c in data["controls"])
        if opened[w]["at"] != [c["default"] for c in data["controls"]] or not opened[w][
                "src"].endswith(data["frames"][default][0]):
            problems.append(f"figure {w + 1} does not open at the notebook's defaults: {opened[w]}")
        state = page.evaluate(LIVE_STATE_JS, box.element_handle())
        if w and (state["at"], state["src"]) != (opened[w]["at"], opened[w]["src"]):
            problems.append(f"figure {w + 1} changed while the figures before it were moved: "
                            f"{opened[w]} then {state}")
        handle = box.element_handle()
        for i, control in enumerate(data["controls"]):
            before = state
            for what in _move_all(box, control):
                state = handle.evaluate(SHOWN_STATE_JS, 10_000)
                if "error" in state:
                    problems.append(f"figure {w + 1}, {control['label']}: {what}: the figure "
                                    f"could not be read: {state['error']}")
                    break
                key = "-".join(map(str, state["at"]))
                if state.get("timedOut"):
                    problems.append(f"figure {w + 1}, {control['label']}: {what}: frame {key} not "
                                    f"shown within 10 s (the box shows {state['shown']!r})")
                    break
                file, text, words = data["frames"][key]
                if not (state["src"].endswith("/" + file) and state["alt"] == f"{data['alt']}: {words}"
                        and state["text"] == text and state["loaded"]):
                    problems.append(f"figure {w + 1}, {control['label']}: {what}: shows "
                                    f"{state['src']} / {state['text'][:60]!r}, not frame {key}")
                if state["at"] != before["at"]:
                    times.append(state["ms"])
                    moved[w].add(i)
                seen[w].add((state["src"], state["text"]))
                before = state
        frames = {tuple(f) for f in data["frames"].values()}
        if len(frames) > 1 and len(seen[w]) < 2:
            problems.append(f"figure {w + 1}: its figure and text never changed")
        if moved[w] != {i for i, c in enumerate(data["controls"]) if len(c["drawn"]) > 1}:
            problems.append(f"figure {w + 1}: controls {sorted(moved[w])} of "
                            f"{len(data['controls'])} changed what it shows")
    for f in {src for src in page.eval_on_selector_all(
            "img.live-frames-image", "is => is.map(i => i.getAttribute('src'))")}:
        if not _file_of(site_dir, url, f).is_file():
            problems.append(f"{f} is not a file of the site")
    times.sort()
    if not times:
        problems.append("no control changed the figure")
    elif times[len(times) // 2] > SWITCH_MS:
        problems.append(f"median switch {times[len(times) // 2]:.0f} ms > {SWITCH_MS} ms "
                        f"(max {times[-1]:.0f} ms, {len(times)} switches)")
    return problems


def _keyboard_only(page, datas: list[dict], nav_name: str) -> list[str]:
    """The page, opened and not yet moved, used by keyboard alone, as a reader without a mouse does: Tab
    to the theme's skip link, Enter; Tab to the page's link to its first live figure, Enter (the
    focus is on the figure); Tab to its first control, which must show the focus and be named by
    its label; an arrow key must show another frame. And the page links every live figure."""
    nav = page.get_by_role("navigation", name=nav_name, exact=True)
    links = nav.get_by_role("link")
    hrefs = links.evaluate_all("ls => ls.map(l => l.getAttribute('href'))") if nav.count() else []
    ids = page.eval_on_selector_all(".live-frames", "bs => bs.map(b => '#' + b.id)")
    if hrefs != ids:
        return [f"the links to the live figures ({nav_name!r}) go to {hrefs}, the figures are {ids}"]
    box = page.locator(".live-frames").first
    first = box.locator('[data-control="0"]')
    control = first.locator("input:checked") if first.evaluate("e => e.tagName") == "FIELDSET" else first
    label = datas[0]["controls"][0]["label"]
    role = {"INPUT": "slider", "SELECT": "combobox"}.get(first.evaluate("e => e.tagName"), "group")
    unfocused = control.evaluate(bh.FOCUS_STYLE_JS)
    presses, on_box = [], None
    for what, target, limit in (("the skip link", page.locator("#pst-skip-link a"), 3),
                                ("the link to the first live figure", links.first, 12),
                                (f"its control {label!r}", control, 3)):
        n = bh.tab_to(page, target, limit)
        if n is None:
            focused = page.evaluate("() => document.activeElement?.outerHTML.slice(0, 120)")
            return [f"keyboard only: {what} not reached with {limit} presses of Tab after "
                    f"{presses} (the focus is on {focused})"]
        presses.append(n)
        if target is not control:
            page.keyboard.press("Enter")
            on_box = box.evaluate("b => document.activeElement === b")
    problems = []
    if not on_box:
        problems.append("keyboard only: the link to the figure did not move the focus to it")
    if not bh.shows_focus(control, unfocused):
        problems.append(f"keyboard only: {label!r}, reached with Tab, does not show the focus")
    named = box.get_by_role(role, name=label, exact=True)
    if not named.count() or not named.evaluate("e => e.contains(document.activeElement)"):
        problems.append(f"keyboard only: the focused control is not the {role} named {label!r}")
    shown = box.get_attribute("data-shown")
    for key in (("ArrowDown", "ArrowUp") if role == "combobox" else ("ArrowRight", "ArrowLeft")):
        page.keyboard.press(key)
        try:
            page.wait_for_function("([b, k]) => b.dataset.shown !== k",
                                   arg=[box.element_handle(), shown], timeout=5_000)
            break
        except Exception:  # noqa: BLE001 - at the end of its range: the other way
            continue
    else:
        problems.append(f"keyboard only: the arrow keys on {label!r} did not change the figure")
    print(f"\n{page.url}: keyboard only, Tab x{presses[0]} to the skip link, Enter, Tab x{presses[1]} "
          f"to the figure's link, Enter, Tab x{presses[2]} to {label!r}")
    return problems


# A sample, since each needs its notebook run in a kernel: every kind of control (lists, buttons,
# sliders of values and of integers, a thinned grid) and both editions.
KERNEL_SAMPLE = ["04_masking", "12_rope_and_alibi", "13_grouped_query_attention",
                 "ja/02_worked_example_3x2", "ja/10_learning_to_attend", "ja/14_sliding_window_attention"]
FRAMES_PER_FIGURE = 3
PROBE = """
import base64 as _b64, json as _json
_rows = [r.children[0] if type(r).__name__ == "HBox" else r for r in _live_box.children[0].children]
def _control(c):
    if hasattr(c, "_options_labels"):
        return [c.description, [str(x) for x in c._options_labels], c.index]
    values = list(range(c.min, c.max + 1, c.step))
    return [c.description, [str(v) for v in values], values.index(c.value)]
_out = {"controls": [_control(c) for c in _rows], "frames": {}}
from course.describe import describe as _words
for _key, _values in _json.loads(%r).items():
    _text, _png = _live.render(**_values)
    _out["frames"][_key] = [_text, _b64.b64encode(_png).decode(), _words(_live.fig)]
print(_json.dumps(_out))
"""


def _kernel_draws(nb_path: Path, widget: int, live: str, wanted: dict) -> dict:
    """Run the notebook in a kernel (as scripts/regenerate.py does) up to its widget cell, then
    ask that kernel's live figure and controls for the frames `wanted` ({key: values})."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(nb_path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    k = [i for i, c in enumerate(code) if any(WIDGET_MIME in o.get("data", {})
                                               for o in c.get("outputs", []))][widget]
    run = nbformat.v4.new_notebook(metadata=nb.metadata)
    run.cells = [nbformat.v4.new_code_cell(c.source, metadata=c.metadata) for c in code[:k + 1]]
    # The widget cell's value, the VBox of with_controls: from Out, since `_` stops following
    # results once a notebook assigns it (notebook 10 does)
    run.cells.append(nbformat.v4.new_code_cell(
        f"_live_box, _live = Out[max(Out)], {live}\nassert type(_live_box).__name__ == 'VBox'"))
    run.cells.append(nbformat.v4.new_code_cell(PROBE % json.dumps(wanted)))
    NotebookClient(run, timeout=300, startup_timeout=120, kernel_name="python3",
                   allow_errors=True, resources={"metadata": {"path": str(nb_path.parent)}}).execute()
    last = run.cells[-1].outputs
    printed = "".join(o.get("text", "") for o in last if o.output_type == "stream")
    assert printed, f"the kernel's probe failed: {last}"
    return json.loads(printed)


@pytest.mark.parametrize("name", KERNEL_SAMPLE)
def test_frames_are_what_the_kernel_draws(name, site_dir):
    """The page's controls are the kernel's (labels, values, default), and a sample of its frames
    is pixel for pixel what the kernel's live figure renders for the same values, told in the
    same words (the frame's alt; the words the kernel's widget writes after its text)."""
    import io
    import random

    from PIL import Image

    nb = ROOT / "notebooks" / f"{name}.ipynb"
    _, folder = _edition(nb)
    page = site_dir / f"{name}.html"
    boxes = re.findall(r'<div class="live-frames" id="[^"]+"[^>]* data-frames="([^"]+)"[^>]*>'
                       r'<script type="application/json" class="live-frames-data">(.*?)</script>',
                       page.read_text(encoding="utf-8"), re.S)
    cells = _widget_cells(nb)
    assert len(boxes) == len(cells) > 0, f"{name}: {len(cells)} widget cells, {len(boxes)} figures"
    rng = random.Random(name)
    for w, ((base, raw), (cell, _)) in enumerate(zip(boxes, cells, strict=True)):
        import ast

        data = json.loads(raw)
        live = next(n.args[0].id for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Call)
                    and getattr(n.func, "id", None) == "with_controls")
        default = "-".join(str(c["default"]) for c in data["controls"])
        keys = [default] + rng.sample(sorted(set(data["frames"]) - {default}),
                                      min(FRAMES_PER_FIGURE - 1, len(data["frames"]) - 1))
        wanted = {key: {c["name"]: c["values"][int(i)] for c, i in zip(data["controls"], key.split("-"), strict=True)}
                  for key in keys}
        kernel = _kernel_draws(nb, w, live, wanted)
        assert kernel["controls"] == [[c["label"], c["labels"], c["default"]] for c in data["controls"]], (
            f"{name} figure {w + 1}: the page's controls are not the kernel's")
        for key in keys:
            text, png, words = kernel["frames"][key]
            file, shown_text, alt_words = data["frames"][key]
            assert shown_text == text, f"{name} figure {w + 1} frame {wanted[key]}: text differs"
            assert alt_words == words, (   # the page's alt is what the kernel's widget says
                f"{name} figure {w + 1} frame {wanted[key]}: its words differ: {alt_words!r}, "
                f"the kernel's {words!r}")
            ours = Image.open(site_dir / folder / base / file)
            theirs = Image.open(io.BytesIO(base64.b64decode(png)))
            assert ours.size == theirs.size and ours.convert("RGBA").tobytes() == \
                theirs.convert("RGBA").tobytes(), (
                    f"{name} figure {w + 1} frame {wanted[key]}: {file} is not, pixel for pixel, "
                    "what the kernel draws")


def test_page_copies_are_the_same_from_build_to_build():
    """What build/site-src gets from a notebook is the same bytes every time: otherwise every
    page's copy is rewritten on every build and Sphinx rebuilds all pages when none changed."""
    import nbformat

    build = _site_build_module()
    nb = next(p for p in NOTEBOOKS if p.stem in {q.stem for q in NOTEBOOKS_JA})
    copies = [nbformat.writes(build.static_copy(nb, "en", nb.stem)) for _ in range(2)]
    assert copies[0] == copies[1]


def test_thinned_grids_keep_the_defaults_and_fit():
    """site/frames.py's subset: every value while a figure is small; beyond that, sliders only,
    every k-th value with both ends, the default and the values a later cell prints, and at most
    MAX_FRAMES frames where sliders can be thinned that far."""
    import importlib.util
    import math

    spec = importlib.util.spec_from_file_location("site_frames", ROOT / "site" / "frames.py")
    frames = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(frames)

    def control(kind, n, default):
        return {"kind": kind, "values": list(range(n)), "default": default}

    small = [control("SelectionSlider", 11, 9), control("ToggleButtons", 4, 3)]
    assert frames.thin(small, [[9], [3]]) == [list(range(11)), list(range(4))]
    big = [control("IntSlider", 101, 5), control("IntSlider", 65, 3), control("SelectionSlider", 5, 3)]
    drawn = frames.thin(big, [[5, 7], [3], [3]])
    assert math.prod(map(len, drawn)) <= frames.MAX_FRAMES
    for c, d, required in zip(big, drawn, [[5, 7], [3], [3]], strict=True):
        assert {0, len(c["values"]) - 1, *required} <= set(d) and d == sorted(set(d))
    buttons = [control("ToggleButtons", 30, 0), control("Dropdown", 30, 0)]
    assert frames.thin(buttons, [[0], [0]]) == [list(range(30))] * 2   # never thinned


# --------------------------------------------------------------------------
# The accessibility checks themselves (tests/accessibility.py, course/alt_text.py)
# --------------------------------------------------------------------------

def test_accessibility_checks_can_fail(site_browser):
    """axe-core's serious and critical violations are reported, a KNOWN one only where it is
    named, a moderate one the README does not list is reported; alts that say nothing fail."""
    page = site_browser.new_page()
    try:
        page.set_content('<html lang="en"><head><title>t</title></head><body><main><h1>Page</h1>'
                         '<p style="color:#bbb;background:#fff">faint text</p>'
                         '<div class="theirs"><img src="data:image/png;base64,iVBORw0KGgo="></div>'
                         '<img alt="_images/0a1b2c3d4e5f60718293a4b5c6d7e8f9.png" src="x.png">'
                         '<div class="highlight"><pre><span style="color:#aaa">pale</span> '
                         '<span style="color:#333">dark</span></pre></div>'
                         '<h4>skipped levels</h4></main></body></html>')
        failing = a11y.axe_problems(page, "sample", "test_site.py")
        assert any("color-contrast (serious, 2 element" in p for p in failing), failing  # p, pale
        assert any("image-alt (critical" in p for p in failing), failing
        assert any("heading-order" in p and "not listed in the README" in p for p in failing), failing
        excused = a11y.axe_problems(page, "sample", "test_site.py",
                                    known=(a11y.Known("image-alt", ".theirs", "upstream#1"),))
        assert not any("image-alt" in p for p in excused), excused
        apart = a11y.axe_problems(page, "sample", "test_site.py", contrast_apart=CODE)
        assert any("color-contrast (serious, 1 element" in p for p in apart), apart  # the <p>
        code = [p for p in apart if "text in div.highlight" in p]
        assert len(code) == 1 and "'pale'" in code[0], code
        # and axe is itself again afterwards: its color-contrast sees the code too (axe.reset)
        again = a11y.axe_problems(page, "sample", "test_site.py")
        assert any("color-contrast (serious, 2 element" in p for p in again), again
        alts = a11y.image_alt_problems(page, "sample")
        assert len(alts) == 2 and "no alt" in alts[0] and "file name" in alts[1], alts
    finally:
        page.close()
    assert a11y.alt_problem("  ") == "an empty alt"
    assert a11y.alt_problem("data:image/png;base64,xx")
    assert a11y.alt_problem("Figure (6. Attention weights): the heatmap of A") is None
    assert {"region", "empty-table-header"} <= a11y.readme_rules()


def test_figure_alt_is_the_section_and_its_paragraph():
    from course import alt_text

    cells = [{"cell_type": "markdown", "source": "# 03 Title\n\nIntro."},
             {"cell_type": "markdown", "source": "## 2. Scores\n\nFirst.\n\nThe histogram of "
                                                  "$q \\cdot k / \\sqrt{d_k}$ for [every](x.ipynb) "
                                                  "**width**:"},
             {"cell_type": "code", "source": "nb03.plot()"}]
    assert alt_text.figure_alt(cells, 2) == (
        "Figure (2. Scores): The histogram of q · k / √(d_k) for every width:")
    assert alt_text.figure_alt(cells, 2, "ja").startswith("図 (2. Scores): ")
    assert alt_text.figure_alt(cells[2:], 0) == "Figure"
    long = [{"cell_type": "markdown", "source": "A sentence. " * 60}, cells[2]]
    assert len(alt_text.figure_alt(long, 1)) <= alt_text.MAX_CHARS + 20
    # A figure stored with its description (course/describe/, as text/plain) is told by it;
    # matplotlib's own "<Figure size ...>" is no description: the paragraph stays.
    described = {"output_type": "display_data",
                 "data": {"image/png": "iVBOR", "text/plain": "A heatmap,\n 3 × 3."}}
    plain = {"output_type": "display_data",
             "data": {"image/png": "iVBOR", "text/plain": "<Figure size 640x480 with 1 Axes>"}}
    assert alt_text.figure_alt(cells, 2, output=described) == "Figure (2. Scores): A heatmap, 3 × 3."
    assert alt_text.figure_alt(cells, 2, output=plain) == alt_text.figure_alt(cells, 2)
    with_outputs = [*cells[:2], {**cells[2], "outputs": [plain, described,
                                                          {"output_type": "stream", "text": "x"}]}]
    assert alt_text.figure_alt(with_outputs, 2) == "Figure (2. Scores): A heatmap, 3 × 3."
    assert alt_text.notebook_language({"metadata": {"translation": {"language": "ja"}}}) == "ja"
