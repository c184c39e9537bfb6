"""Bench item 7: a class on one server (hub/): N simulated students at once."""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_report import ROOT, diagnostics, record


HUB_STUDENTS = "1,5,10,20,30"
HUB_MOVES, HUB_THINK_S = 10, 1.0  # slider moves per student, about 1 s apart (0.5-1.5 s)


def _p95(values: list[float]) -> float:
    """Nearest-rank 95th percentile (with 10 values: the largest)."""
    ordered = sorted(values)
    return ordered[max(0, -(-95 * len(ordered) // 100) - 1)]


def _hub_class(hubctl, accounts, students, n: int) -> dict:
    """One hub, n new Unix users, the whole class at once; everything removed afterwards."""
    import pwd
    import secrets
    import shutil

    tag = secrets.token_hex(3)
    names = [f"{accounts.STUDENT_PREFIX}{tag}-{k}" for k in range(1, n + 1)]
    tmp = Path(tempfile.mkdtemp(prefix="an-hub-bench-"))
    tmp.chmod(0o755)
    hub_user, group = f"{accounts.HUB_USER_PREFIX}{tag}", f"{accounts.CLASS_GROUP_PREFIX}{tag}"
    passwords = {name: accounts.new_password() for name in names}
    created, hub, memory, hub_user_made = [], None, {}, False
    try:
        repo = hubctl.publish_course(tmp / "course.git")
        accounts.create_hub_user(hub_user, group)
        hub_user_made = True
        for name in names:
            accounts.create_student(name, trust=[tmp / "course.git"], group=group,
                                    password=passwords[name],
                                    memory=hubctl.size_bytes(hubctl.STUDENT_MEMORY))
            created.append(name)
        hub = hubctl.Hub(tmp / "state", names, hub_user)
        hub.start()
        link = hubctl.course_link(hub.url, repo, notebook=hubctl.NOTEBOOK_03)

        def after(s):  # the student's server and kernel, still running
            memory[s.name] = students.memory_of_uid(pwd.getpwnam(s.name).pw_uid)

        start = time.perf_counter()
        results = students.run_class(hub.url, names, passwords, link, repo, "main",
                                     hubctl.COURSE_FOLDER, hubctl.NOTEBOOK_03, HUB_MOVES,
                                     HUB_THINK_S, after=after)
        took = time.perf_counter() - start
        hub_rss = 0.0  # the hub, its proxy and the idle culler: paid once, whatever the class size
        for pid in hub.processes():
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    hub_rss += int(line.split()[1]) / 1024
        return {"results": results, "memory": memory, "took": took, "hub_rss_mib": hub_rss}
    finally:
        if hub is not None:
            hub.stop()
            logs = ROOT / "artifacts" / "hub"   # the hub's log (and every server's) of this class
            logs.mkdir(parents=True, exist_ok=True)
            shutil.copy(hub.log_path, logs / f"bench-N{n}.log")
        for name in created:
            accounts.remove_student(name)
        if hub_user_made:
            accounts.remove_hub_user(hub_user, group)
        shutil.rmtree(tmp, ignore_errors=True)


def _median_max(xs: list[float]) -> str:
    return f"{statistics.median(xs):.1f} s ({max(xs):.1f} s)" if xs else "-"


def bench_hub(counts: list[int]) -> None:
    sys.path.insert(0, str(ROOT / "hub"))
    import accounts
    import hubctl
    import students

    print(f"7. a class on one server: N students at once log in, pull the course, run notebook 03, "
          f"move its d_k slider {HUB_MOVES} times")
    reasons = hubctl.problems()
    if reasons:
        print("  not run: " + "; ".join(reasons))
        record(7, "not run (see the reason above)", "-", "<= 1000 ms", False)
        return
    table = ["| N | login to ready server, median (max) | run-all, median (max) | slider median "
             "| slider p95 | memory per student (PSS; RSS) | hub, proxy, culler (RSS) | errors |",
             "|---|---|---|---|---|---|---|---|"]
    served, all_passed = 0, True  # served: the largest N such that it and every smaller N passed
    for n in counts:
        run = _hub_class(hubctl, accounts, students, n)
        res = run["results"]
        errors = [e for r in res for e in r.errors]
        lat = [ms for r in res for ms in r.slider_ms]
        ready = sorted(r.ready_s for r in res if r.ready_s is not None)
        run_all = sorted(r.run_all_s for r in res if r.run_all_s is not None)
        pss = [m["pss_mib"] for m in run["memory"].values()]
        rss = [m["rss_mib"] for m in run["memory"].values()]
        p95 = _p95(lat) if lat else float("inf")
        med = statistics.median(lat) if lat else float("inf")
        ok = p95 <= 1000 and not errors and len(lat) == n * HUB_MOVES
        all_passed = all_passed and ok
        served = n if all_passed else served
        record(7, f"N = {n}: slider p95 (median {med:.0f} ms), {len(errors)} errors",
               f"{p95:.0f} ms", "<= 1000 ms", ok)

        mem = f"{statistics.median(pss):.0f} MiB; {statistics.median(rss):.0f} MiB" if pss else "-"
        table.append(f"| {n} | {_median_max(ready)} | {_median_max(run_all)} | {med:.0f} ms | "
                     f"{p95:.0f} ms | {mem} | {run['hub_rss_mib']:.0f} MiB | {len(errors)} |")
        print(f"  N = {n:2d}: ready {_median_max(ready)}, run-all {_median_max(run_all)}, slider "
              f"{med:.0f} / {p95:.0f} ms (median / p95 of {len(lat)} moves), per student {mem} "
              f"(PSS; RSS), hub + proxy + culler {run['hub_rss_mib']:.0f} MiB, {len(errors)} errors, "
              f"whole class {run['took']:.0f} s", flush=True)
        for e in errors[:5]:
            print(f"    error: {e[:300]} (hub log: artifacts/hub/bench-N{n}.log)")
    diagnostics.append(
        f"Item 7, a class on one server (hub/, {HUB_MOVES} slider moves per student about "
        f"{HUB_THINK_S:.0f} s apart, all students starting at once):\n\n" + "\n".join(table)
        + "\n\nLargest class measured with slider p95 <= 1 s and no errors: "
        + (f"{served} students." if served else "none."))
