"""Bench item 2: kernel-side time of every widget callback, median over a sweep of its values."""

from __future__ import annotations

import json

import nbformat

from bench_hooks import RECORD_WIDGETS_CELL
from bench_report import NOTEBOOKS, record

SWEEP_CELL = r'''
import json as _json, statistics as _st, time as _time

def _values(c):
    if hasattr(c, "options") and len(getattr(c, "options", ())):
        return [("index", i) for i in range(len(c.options))]
    if hasattr(c, "min") and hasattr(c, "max"):
        step = getattr(c, "step", 1) or 1
        count = int(round((c.max - c.min) / step)) + 1
        picks = sorted({round(j * (count - 1) / 8) for j in range(9)}) if count > 9 else range(count)
        return [("value", type(c.value)(c.min + k * step)) for k in picks]
    if isinstance(c.value, bool):
        return [("value", True), ("value", False)]
    return []

_out = []
for _w, (_made, _controls) in enumerate(_bench_widgets):  # bench_hooks.RECORD_WIDGETS_CELL
    for _name, _c in _controls.items():
        _start = getattr(_c, "index", None) if hasattr(_c, "options") else _c.value
        _times = []
        for _rep in range(2):
            for _attr, _v in _values(_c):
                _t = _time.perf_counter()
                setattr(_c, _attr, _v)      # fires the real observer: compute + draw + send
                _times.append(_time.perf_counter() - _t)
        setattr(_c, "index" if hasattr(_c, "options") else "value", _start)
        _times = _times[1:] or _times     # the very first call may pay one-off costs
        _out.append({"widget": _w, "live": type(_made).__name__, "control": _name,
                     "n": len(_times), "median_ms": 1e3 * _st.median(_times),
                     "max_ms": 1e3 * max(_times)})
print("BENCH-JSON " + _json.dumps(_out))
'''


def bench_widgets() -> None:
    from nbclient import NotebookClient
    print("2. kernel-side time of every widget callback (median over a sweep of its values)")
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        nb.cells.insert(0, nbformat.v4.new_code_cell(RECORD_WIDGETS_CELL))
        nb.cells.append(nbformat.v4.new_code_cell(SWEEP_CELL))
        client = NotebookClient(nb, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}})
        client.execute()
        text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")
        line = next((x for x in text.splitlines() if x.startswith("BENCH-JSON ")), None)
        if line is None:
            raise RuntimeError(f"{path.name}: sweep printed nothing: {nb.cells[-1].outputs}")
        for r in json.loads(line[len("BENCH-JSON "):]):
            ok = r["median_ms"] <= 50
            record(2, f"{path.stem} {r['live']}.{r['control']} ({r['n']} values)",
                   f"{r['median_ms']:.1f} ms (max {r['max_ms']:.0f})", "<= 50 ms", ok)
