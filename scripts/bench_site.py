"""Bench item 10: the static edition with its live figures' frames (site/build.py, site/frames.py).

- `python3 dev.py site` from scratch (build/site*, the frames and the Sphinx sources removed):
  wall time, target <= 90 s; and the part of it that drew the frames;
- the same again with no notebook changed: wall time (<= 15 s), and that no frame was redrawn;
- the size of build/site (both editions, every file counted once): target <= 100 MB;
- in headless Chromium, served on 127.0.0.1, offline: every control of every live figure of both
  editions (sliders, lists, rows of buttons) stepped by the keyboard from its default to its last
  value and back to its first; the time from each key's input event to the first animation frame
  after the new frame, its text and alt are in place (live-frames.js writes it into
  data-switch-ms): target <= 100 ms for the slowest, per kind of control.
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import sys
import time

from bench_report import ROOT, record

sys.path.insert(0, str(ROOT / "hub"))
from localserver import serving  # noqa: E402  (hub/: the site's tests serve it with it too)

BUILD = ROOT / "build"


def _site(what: str) -> tuple[float, str]:
    start = time.perf_counter()
    run = subprocess.run([sys.executable, ROOT / "dev.py", "site"], cwd=ROOT, capture_output=True,
                         text=True)
    took = time.perf_counter() - start
    if run.returncode:
        raise RuntimeError(f"{what} `python3 dev.py site` failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    return took, run.stdout


def _size(folder) -> int:
    seen, total = set(), 0
    for f in folder.rglob("*"):
        if f.is_file():
            st = f.stat()
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total


# The frame key the controls of a box show now (live-frames.js's own rule): a slider's position
# indexes its drawn values, a list's value and a checked button are the option index itself.
KEY_JS = """box => {
  const data = JSON.parse(box.querySelector('script.live-frames-data').textContent);
  return data.controls.map((c, i) => {
    const el = box.querySelector(`[data-control="${i}"]`);
    if (el.type === 'range') return c.drawn[Number(el.value)];
    if (el.tagName === 'SELECT') return Number(el.value);
    return Number(el.querySelector('input:checked').value);
  }).join('-');
}"""


def _keyboard_walks(box):
    """Each control of a live figure as (kind, element to focus, key forward, key back, steps
    forward from where it is, steps in all): every key press changes the value."""
    for k in range(box.locator("input[type=range]").count()):
        s = box.locator("input[type=range]").nth(k)
        top, at = int(s.get_attribute("max")), int(s.input_value())
        yield "slider", s, "ArrowRight", "ArrowLeft", top - at, top
    for k in range(box.locator("select").count()):
        s = box.locator("select").nth(k)
        top, at = s.locator("option").count() - 1, int(s.input_value())
        yield "list", s, "ArrowDown", "ArrowUp", top - at, top
    for k in range(box.locator("fieldset").count()):
        radios = box.locator("fieldset").nth(k).locator("input[type=radio]")
        values = [radios.nth(j).is_checked() for j in range(radios.count())]
        yield ("buttons", box.locator("fieldset").nth(k).locator("input:checked"), "ArrowRight",
               "ArrowLeft", len(values) - 1 - values.index(True), len(values) - 1)


def _switch_times(site) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    with serving(site) as url:
        pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("[0-9][0-9]_*.html")
                       if "live-frames-data" in p.read_text(encoding="utf-8"))
        times: dict[str, list[float]] = {}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
            context = browser.new_context()
            context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(url)
                          else r.abort())
            page = context.new_page()
            for name in pages:
                page.goto(url + name, wait_until="load")
                boxes = page.locator("div.live-frames")
                for b in range(boxes.count()):
                    box = boxes.nth(b)
                    for kind, el, forward, back, ahead, span in list(_keyboard_walks(box)):
                        el.focus()
                        for key in [forward] * ahead + [back] * span:
                            page.keyboard.press(key)
                            page.wait_for_function(f"b => b.dataset.shown === ({KEY_JS})(b)",
                                                   arg=box.element_handle(), timeout=10_000)
                            times.setdefault(kind, []).append(
                                float(box.get_attribute("data-switch-ms")))
            browser.close()
    return times


def bench_site() -> None:
    print("10. the static edition with its live figures' frames")
    for old in ("site", "site-src", "site-src-ja", "site-frames"):
        shutil.rmtree(BUILD / old, ignore_errors=True)
    scratch, out = _site("from scratch:")
    frames = re.search(r"frames ready in ([\d.]+) s", out)
    record(10, "dev.py site from scratch (both editions, frames drawn)", f"{scratch:.1f} s",
           "<= 90 s", scratch <= 90)
    print(f"  of which the frames: {frames.group(1) if frames else '?'} s")
    again, out = _site("unchanged:")
    redrawn = re.findall(r"^\s+\S+: \d+ frames in", out, re.M)
    record(10, "dev.py site again, no notebook changed", f"{again:.1f} s, {len(redrawn)} redrawn",
           "<= 15 s, none redrawn", again <= 15 and not redrawn)
    size = _size(BUILD / "site")
    frames_size = _size(BUILD / "site" / "_live") + _size(BUILD / "site" / "ja" / "_live")
    record(10, "build/site, both editions", f"{size / 1e6:.1f} MB ({frames_size / 1e6:.1f} frames)",
           "<= 100 MB", size <= 100e6)
    times = _switch_times(BUILD / "site")
    if not times:
        record(10, "a control's step to its frame in Chromium", "no control", "<= 100 ms", False)
        return
    for kind, ms in sorted(times.items()):
        record(10, f"{kind}: a keyboard step to its frame in Chromium ({len(ms)} steps)",
               f"median {statistics.median(ms):.0f} ms, max {max(ms):.0f}", "<= 100 ms",
               max(ms) <= 100)
