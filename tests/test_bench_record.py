"""The benchmark's record (scripts/bench_report.py): a run of some items replaces only theirs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def report(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))   # the bench's modules import each other so
    sys.modules.pop("bench_report", None)
    import bench_report as br
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "benchmarks.md").write_text("x\n<!-- bench:start -->\nold\n<!-- bench:end -->\ny\n")
    monkeypatch.setattr(br, "ROOT", tmp_path)
    monkeypatch.setattr(br, "RESULTS", tmp_path / "benchmarks" / "RESULTS.md")
    monkeypatch.setattr(br, "rows", [])
    monkeypatch.setattr(br, "diagnostics", [])
    monkeypatch.setattr(br, "machine", lambda: "Linux x86_64, a test machine")   # no torch import
    return br


def test_a_partial_run_replaces_only_its_items(report):
    br = report
    br.record(2, "callback a", "20 ms", "<= 50 ms", True)
    br.record(7, "N = 10: p95", "100 ms", "<= 1000 ms", True)
    br.diagnostics += ["Item 7, a class:\n\n| N | p95 |\n|---|---|\n| 10 | 100 ms |",
                       "Item 2: a note on the callbacks."]
    br.write_results(partial=False)
    first = br.RESULTS.read_text()
    when = first.split("Item 7 measured on ", 1)[1].split(":", 2)
    br.RESULTS.write_text(first.replace(f"Item 7 measured on {when[0]}:{when[1]}:",
                                        "Item 7 measured on 2026-01-01 00:00 UTC:"))   # an older run
    br.rows[:], br.diagnostics[:] = [], []
    br.record(2, "callback a", "30 ms", "<= 50 ms", True)
    br.record(2, "callback b", "60 ms", "<= 50 ms", False)
    br.write_results(partial=True)
    text = br.RESULTS.read_text()
    rows, measured, notes = br.read_record(text)
    assert rows == [("2", "callback a", "30 ms", "<= 50 ms", "met"),
                    ("2", "callback b", "60 ms", "<= 50 ms", "MISSED"),
                    ("7", "N = 10: p95", "100 ms", "<= 1000 ms", "met")]
    assert measured["7"].startswith("Item 7 measured on 2026-01-01 00:00 UTC: ")   # its own date
    assert not measured["2"].startswith("Item 2 measured on 2026-01-01")
    assert notes == ["Item 7, a class:\n\n| N | p95 |\n|---|---|\n| 10 | 100 ms |"]   # 2's note went
    summary = (br.ROOT / "docs" / "benchmarks.md").read_text()
    assert "| 2 | widget callback, kernel side | <= 50 ms | 1 of 2 |" in summary
    assert summary.startswith("x\n<!-- bench:start -->") and summary.endswith("<!-- bench:end -->\ny\n")


def test_the_record_of_a_full_run_before_dates_per_item_is_read(report):
    old = ("# Benchmark results\n\nMeasured by `python3 dev.py bench` on 2026-12-01 15:36 UTC.\n\n"
           "Machine: Linux x86_64, 2 cores.\n\n| # | case | measured | target | |\n|---|---|---|---|---|\n"
           "| 1 | nbval | ratio 1.44 | <= 1.5 | met |\n\nItems: 1 ...\n\nItem 1, floors: 12.7 s.\n")
    rows, measured, notes = report.read_record(old)
    assert rows == [("1", "nbval", "ratio 1.44", "<= 1.5", "met")]
    assert measured == {"1": "Item 1 measured on 2026-12-01 15:36 UTC: Linux x86_64, 2 cores."}
    assert notes == ["Item 1, floors: 12.7 s."]
