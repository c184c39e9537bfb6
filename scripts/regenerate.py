"""Re-execute notebooks in place so their stored outputs are fresh (run via `python3 dev.py regenerate`).

Each notebook runs top to bottom in a fresh kernel from its own folder, with
the deterministic environment set by dev.py. A cell that raises stops the run
(unless tagged `raises-exception`) and the file is left untouched. Every cell
has a timeout: executing widget notebooks through nbclient has been seen to
stall upstream, and a slow run is a bug to look at, not to wait out.

Each notebook's measured run time (wall clock, kernel start included) goes into
docs/run-times.json with the machine it ran on; the teacher's guide quotes it
and is rewritten at the end (scripts/classroom.py). An English notebook's slide
metadata (scripts/slides.py) is set again too: where its slides break depends on
the heights of the outputs just made.
"""

import datetime as dt
import json
import os
import platform
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

CELL_TIMEOUT_S = 120
ROOT = Path(__file__).resolve().parent.parent
RUN_TIMES = ROOT / "docs" / "run-times.json"


def coalesce_streams(outputs: list) -> list:
    """Merge consecutive stdout (or stderr) chunks: one print may arrive in several pieces."""
    merged = []
    for out in outputs:
        if (out.output_type == "stream" and merged and merged[-1].output_type == "stream"
                and merged[-1].name == out.name):
            merged[-1].text += out.text
        else:
            merged.append(out)
    return merged


def _without_widget_ids(outputs: list) -> list:
    """The outputs with every widget view's model id blanked (a fresh random id each run)."""
    out = []
    for o in outputs:
        o = nbformat.from_dict(o)
        view = o.get("data", {}).get("application/vnd.jupyter.widget-view+json")
        if view is not None:
            o = nbformat.from_dict({**o, "data": {**o["data"], "application/vnd.jupyter.widget-view+json":
                                                  {**view, "model_id": ""}}})
        out.append(o)
    return out


def keep_unchanged_widget_views(old_cells: list, new_cells: list) -> None:
    """Where a cell's source and outputs are the same but for widget model ids, keep the old outputs.

    Widget state is not stored, so a view's model id points at nothing; a new random id in every
    regenerated notebook would only bury the real changes in `git diff`.
    """
    for old, new in zip(old_cells, new_cells, strict=True):
        if (new.cell_type == "code" and old.source == new.source
                and _without_widget_ids(old.outputs) == _without_widget_ids(new.outputs)):
            new.outputs = old.outputs


def execute(nb, folder: Path) -> float:
    """Run nb top to bottom in a fresh kernel started in `folder`, in place; the seconds it took.

    Also used by the instructor key (scripts/classroom.py), so both run notebooks the same way.
    """
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, startup_timeout=60,
                            kernel_name="python3", store_widget_state=False,
                            resources={"metadata": {"path": str(folder)}})
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def machine() -> str:
    """The machine a run time was measured on: OS, CPU, cores, memory, Python."""
    cpu = platform.processor() or "unknown CPU"
    try:
        cpu = next(line.split(":", 1)[1].strip()
                   for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        mem = f", {int(Path('/proc/meminfo').read_text().split()[1]) / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        mem = ""
    return (f"{platform.system()} {platform.machine()}, {cpu}, {os.cpu_count()} cores{mem}, "
            f"Python {platform.python_version()}")


def record_run_time(path: Path, seconds: float, load: float | None) -> None:
    """Store a notebook's measured run time in docs/run-times.json (one entry per notebook).

    The key is the notebook's name, "NN_topic" for notebooks/NN_topic.ipynb (the teacher's guide
    reads these), and "ja/NN_topic" for a translated edition's notebooks/ja/NN_topic.ipynb.
    """
    times = json.loads(RUN_TIMES.read_text(encoding="utf-8")) if RUN_TIMES.exists() else {}
    edition = path.resolve().parent.name
    key = path.stem if edition == "notebooks" else f"{edition}/{path.stem}"
    times[key] = {"seconds": round(seconds, 1), "machine": machine(),
                        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"),
                        "load_average": None if load is None else round(load, 1)}
    RUN_TIMES.parent.mkdir(exist_ok=True)
    RUN_TIMES.write_text(json.dumps(times, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def regenerate(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    old_cells = [nbformat.from_dict(c) for c in nb.cells]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None  # busy machine, slow run
    seconds = execute(nb, path.parent)
    for cell in nb.cells:  # notebooks must not keep widget state or run times
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = coalesce_streams(cell.outputs)
    nb.metadata.pop("widgets", None)
    keep_unchanged_widget_views(old_cells, nb.cells)
    if path.resolve().parent == ROOT / "notebooks":
        import slides  # scripts/ is on sys.path when this runs as a script (dev.py regenerate)

        slides.apply(nb)   # where the slides break depends on the outputs' heights
    nbformat.validate(nb)
    nbformat.write(nb, path)
    record_run_time(path, seconds, load)
    print(f"{path}: {sum(c.cell_type == 'code' for c in nb.cells)} code cells, "
          f"{seconds:.1f} s", flush=True)


if __name__ == "__main__":
    failed = 0
    for arg in sys.argv[1:]:
        try:
            regenerate(Path(arg))
        except Exception as e:  # report and go on with the next notebook
            failed += 1
            print(f"{arg}: FAILED, file left unchanged: {type(e).__name__}: {e}"[:2000],
                  file=sys.stderr, flush=True)
    try:  # the guide quotes the run times just recorded
        import classroom
        classroom.write_guide()
    except Exception as e:  # say so; the guide's test fails until it is fixed
        print(f"docs/teachers-guide.md NOT rewritten: {type(e).__name__}: {e}"[:3000],
              file=sys.stderr, flush=True)
    sys.exit(1 if failed else 0)
