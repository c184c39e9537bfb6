"""axe-core on a page the browser tests already have open, and the images' text alternatives.

axe-core is Deque's maintained accessibility engine (the one browsers' developer tools and
Lighthouse run); `axe-playwright-python` (requirements-test.txt) ships its axe.min.js, which
is injected into the page: nothing is fetched at test time. A violation of impact "serious"
or "critical" fails the calling test; the "moderate" and "minor" ones are returned apart, and
the README (section "Accessibility") lists each with the reason it is left. A serious one
that is upstream's and cannot be fixed from the course's own files is in KNOWN, with the
upstream issue, and only where it occurs (its rule and a CSS selector of the elements).

Every <img> must have an alt that says something: not empty, not a file name or a data: URL.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

FAILING = ("serious", "critical")
# WCAG 2.0/2.1 A and AA, and axe's best practices (heading order, one main landmark, ...)
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]


@dataclass(frozen=True)
class Known:
    """A serious violation that is upstream's: rule, the elements (CSS selector), the issue."""
    rule: str
    selector: str
    upstream: str


@dataclass
class AxeReport:
    where: str
    failing: list[str] = field(default_factory=list)    # serious / critical, not KNOWN
    others: dict[str, int] = field(default_factory=dict)  # "rule (impact)" -> nodes
    seconds: float = 0.0


# WCAG 1.4.3 (AA) for text in `selector`, computed directly: each text's colour against the
# nearest background behind it. axe-core's color-contrast finds the same from the pixels' stack of
# elements, text node by text node, which on a page of highlighted code (a span per token) is most
# of axe's time; this reads the computed styles once. Returns the pairs below 4.5:1.
CONTRAST_JS = """(selector) => {
  const rgba = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lin = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = c => 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  const background = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] === 1)) return c;
    }
    return [255, 255, 255];
  };
  const low = {};
  let texts = 0;
  for (const root of document.querySelectorAll(selector)) {
    const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    while (walk.nextNode()) {
      const el = walk.currentNode.parentElement, text = walk.currentNode.textContent.trim();
      if (!text || !el.getClientRects().length) continue;
      const st = getComputedStyle(el);
      if (st.visibility === 'hidden' || Number(st.opacity) === 0) continue;
      texts++;
      const bg = background(el), c = rgba(st.color), a = c.length === 4 ? c[3] : 1;
      const fg = [0, 1, 2].map(i => a * c[i] + (1 - a) * bg[i]);
      const [hi, lo] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      const ratio = (hi + 0.05) / (lo + 0.05);
      const key = st.color + ' on ' + bg.join(',');
      if (ratio < 4.5 && !low[key]) low[key] = {ratio: Math.round(ratio * 100) / 100, key,
                                                text: text.slice(0, 40), cls: el.className};
    }
  }
  return {texts, low: Object.values(low)};
}"""


def _inject(page) -> None:
    from axe_playwright_python.base import AXE_SCRIPT

    if not page.evaluate("() => !!window.axe"):
        page.evaluate(AXE_SCRIPT)


def _violations(page, context, options: dict) -> list[dict]:
    return page.evaluate("async ([context, options]) => (await axe.run(context || document, "
                         "options)).violations", [context, options])


def run_axe(page, where: str, known: tuple[Known, ...] = (), context=None,
            contrast_apart: str | None = None) -> AxeReport:
    """axe-core on `page` as it is now (or on `context`, an axe context).

    contrast_apart: a CSS selector (the highlighted code) whose texts' contrast CONTRAST_JS
    checks instead of axe's color-contrast, which checks the rest of the page as usual.
    """
    t = time.perf_counter()
    _inject(page)
    # preload off: axe-core 4.12 fetches a stylesheet's relative @import from the wrong URL (a
    # 404 the page did not make: dequelabs/axe-core#5268); only css-orientation-lock reads it
    options = {"runOnly": {"type": "tag", "values": TAGS}, "resultTypes": ["violations"],
               "preload": False}
    report = AxeReport(where)
    if contrast_apart:
        # one run of axe, its color-contrast told to leave the code out (axe.configure overrides
        # a rule's selector, default "*"): a second run for the contrast alone built axe's tree
        # of the page again, a third of the time on a notebook's page; axe.reset() afterwards
        page.evaluate("(sel) => axe.configure({rules: [{id: 'color-contrast', "
                      "selector: `*:not(:is(${sel})):not(:is(${sel}) *)`}]})", contrast_apart)
        try:
            violations = _violations(page, context, options)
        finally:
            page.evaluate("() => axe.reset()")
        code = page.evaluate(CONTRAST_JS, contrast_apart)
        if not code["texts"] and page.locator(contrast_apart).count():
            report.failing.append(f"{where}: no text of {contrast_apart} was checked for contrast")
        for low in code["low"]:
            report.failing.append(f"{where}: text in {contrast_apart} with contrast "
                                  f"{low['ratio']}:1 < 4.5:1 ({low['key']}, class "
                                  f"{low['cls']!r}), e.g. {low['text']!r}")
    else:
        violations = _violations(page, context, options)
    for v in violations:
        nodes = v["nodes"]
        if v["impact"] in FAILING:
            excused = [k.selector for k in known if k.rule == v["id"]]
            if excused:
                inside = page.evaluate(
                    "([targets, sel]) => targets.map(t => { if (typeof t !== 'string') return false;"
                    " const e = document.querySelector(t); return !!e && !!e.closest(sel); })",
                    [[n["target"][0] for n in nodes], ", ".join(excused)])
                nodes = [n for n, ok in zip(nodes, inside, strict=True) if not ok]
            if nodes:
                report.failing.append(
                    f"{where}: axe {v['id']} ({v['impact']}, {len(nodes)} element(s)): "
                    f"{v['help']}; e.g. {nodes[0]['target']} {nodes[0]['html'][:160]!r}"
                    + (f": {nodes[0]['failureSummary'][:200]!r}" if nodes[0].get("failureSummary")
                       else ""))
        else:
            report.others[f"{v['id']} ({v['impact']})"] = len(nodes)
    report.seconds = time.perf_counter() - t
    return report


IMAGES_ALT_JS = """root => [...(root || document).querySelectorAll('img')].map(i => ({
  src: (i.getAttribute('src') || '').slice(0, 80), alt: i.getAttribute('alt')}))"""
FILE_NAME = re.compile(r"^\S+\.(png|jpe?g|gif|svg|webp)$|^data:|^_images/|^[0-9a-f]{16,}", re.I)


def alt_problem(alt: str | None) -> str | None:
    """Why `alt` does not describe an image, or None."""
    if alt is None:
        return "no alt"
    text = " ".join(alt.split())
    if not text:
        return "an empty alt"
    if FILE_NAME.search(text):
        return f"an alt that is a file name: {text[:60]!r}"
    return None


def image_alt_problems(page, where: str, root=None) -> list[str]:
    """Every <img> of the page (or of the element `root`) with an alt that says nothing."""
    out = []
    for img in page.evaluate(IMAGES_ALT_JS, root):
        why = alt_problem(img["alt"])
        if why:
            out.append(f"{where}: <img src={img['src']!r}> has {why}")
    return out


README = Path(__file__).resolve().parents[1] / "README.md"


def readme_rules() -> set[str]:
    """The axe rules the README's section on accessibility lists (as `rule-id`)."""
    text = README.read_text(encoding="utf-8")
    start = text.find("## Accessibility")
    end = text.find("\n## ", start + 1)
    return set(re.findall(r"`([a-z0-9-]+)`", text[start:end if end > 0 else None])) if start >= 0 else set()


def unlisted(report: AxeReport) -> list[str]:
    """The moderate / minor violations whose rule the README does not list with its reason."""
    listed = readme_rules()
    return [f"{report.where}: axe {rule}, {n} element(s): not listed in the README's section "
            "\"Accessibility\" with the reason it is left" for rule, n in report.others.items()
            if rule.split(" ")[0] not in listed]


def record_time(test_file: str, report: AxeReport) -> None:
    """With A11Y_TIMES=<file>, append the seconds axe took (how the cost was measured)."""
    path = os.environ.get("A11Y_TIMES")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{test_file}\t{report.where}\t{report.seconds:.3f}\n")


def axe_problems(page, where: str, test_file: str, known: tuple[Known, ...] = (),
                 context=None, contrast_apart: str | None = None) -> list[str]:
    """What a test reports of axe on `page`: its serious and critical violations (less KNOWN),
    and the others that the README does not list."""
    report = run_axe(page, where, known, context, contrast_apart)
    record_time(test_file, report)
    return report.failing + unlisted(report)
