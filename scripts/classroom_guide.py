"""The classroom edition, part 3: the teacher's guide (`python3 dev.py classroom guide`).

The guide is generated from what the course already holds, so it cannot drift from it:
learning goals (each notebook's first cells), the `teaching` metadata of each notebook
(prerequisites, session, sections done in class, widget demo, discussion questions), the
measured run times (docs/run-times.json, written by `dev.py regenerate`), the class-time rule and
the plan of the sessions (scripts/classroom_plan.py), and the misconceptions, which are
checks.MISTAKES grouped by notebook. A notebook that lacks something the guide needs makes the
command fail and say what is missing.
"""

from __future__ import annotations

import json
import re
import string
import sys
from pathlib import Path

import nbformat

from course import checks
from scripts.classroom_key import ROOT, RUN_TIMES, check_cells, notebook_paths
from scripts.graded_items import ASSIGNMENTS, DERIVE, EXPERIMENT, FILL
from scripts.classroom_plan import (BREAK_MINUTES, CHECK_MINUTES, CODE_CELL_MINUTES, FIGURE_MINUTES,
                                    ROUND_TO_MINUTES, SELF_STUDY, SESSION_MINUTES, SESSIONS,
                                    WIDGET_MINUTES, WORDS_PER_MINUTE, GuideError, Notebook,
                                    plan, sections, session_four)

GUIDE = ROOT / "docs" / "teachers-guide.md"

EXAMPLE = {  # fills the {placeholders} of checks.MISTAKES with one typical case
    "tie": " (here three books tie for the best score)", "count": 3, "i": 1, "dim": 3,
    "parity": "odd", "two_i": 2, "i_up": 2, "two_i_up": 4, "d_model": 512, "d_k": 64, "h": 8,
    "width": 512, "scale": "sqrt(d_model) = sqrt(h*d_k)", "one_head": "(4, 5)",
    "per_head": " per head", "factor": 2, "square": 4, "cube": 8, "h_from": 12, "h_to": 24, "t": 4, "heads": 12,
}


def learning_goals(nb, name: str) -> list[str]:
    """The list under "Learning goals" (or "In this notebook") in the first cells, item by item."""
    text = "\n".join(c.source for c in nb.cells[:3] if c.cell_type == "markdown")
    m = re.search(r"^.*(learning goals|in this notebook).*$", text, re.M | re.I)
    if m is None:
        raise GuideError(f"{name}: no 'Learning goals' (or 'In this notebook') in the first cells")
    items: list[str] = []
    for line in text[m.end():].splitlines():
        item = re.match(r"\s*(?:\d+\.|[-*])\s+(.*)", line)
        if item:
            items.append(item.group(1).strip())
        elif items and line.startswith((" ", "\t")) and line.strip():
            items[-1] += " " + line.strip()
        elif items and line.strip():
            break
    if not items:
        raise GuideError(f"{name}: the learning goals are not a list")
    return items


def load_notebook(path: Path, run_times: dict) -> Notebook:
    nb = nbformat.read(path, as_version=4)
    title = next((line[2:].strip() for c in nb.cells if c.cell_type == "markdown"
                  for line in c.source.splitlines() if line.startswith("# ")), path.stem)
    return Notebook(path, title, learning_goals(nb, path.name), sections(nb),
                    dict(nb.metadata.get("teaching", {})), [k for _, k in check_cells(nb)],
                    run_times.get(path.stem))


def validate(books: list[Notebook]) -> None:
    """Raise GuideError listing everything the guide needs and does not find."""
    problems = []
    numbers = [b.number for b in books]
    for b in books:
        name, t = b.path.name, b.teaching
        if b.run_time is None:
            problems.append(f"{name}: no measured run time in docs/run-times.json; run "
                            f"`python3 dev.py regenerate notebooks/{name}`")
        if not t:
            problems.append(f"{name}: no `teaching` metadata (prerequisites, session, in_class, "
                            "demo, discussion); see CONTRIBUTING.md, 'Adding a notebook'")
            continue
        prereq = t.get("prerequisites")
        if not isinstance(prereq, list) or any(p not in numbers or p >= b.number for p in prereq):
            problems.append(f"{name}: teaching.prerequisites must list earlier notebooks "
                            f"('00', '01', ...), got {prereq!r}")
        if t.get("session") not in [*range(1, SESSIONS + 1), SELF_STUDY]:
            problems.append(f"{name}: teaching.session must be 1..{SESSIONS} or "
                            f"{SELF_STUDY!r}, got {t.get('session')!r}")
        ids = {s.id for s in b.sections if not s.frame}
        unknown = [i for i in t.get("in_class", []) if i not in ids]
        if unknown or not isinstance(t.get("in_class"), list):
            problems.append(f"{name}: teaching.in_class names no section of the notebook: "
                            f"{unknown or t.get('in_class')!r}; its sections are {sorted(ids)}")
        widget = [s for s in b.sections if s.widgets]
        if widget and not str(t.get("demo", "")).strip():
            problems.append(f"{name}: teaching.demo (what to show with the widget) is missing")
        if t.get("session") != SELF_STUDY and any(s not in b.in_class() for s in widget):
            problems.append(f"{name}: the widget's section ({widget[0].label}) must be in class "
                            "(teaching.in_class): the demos are the point of the sessions")
        discussion = t.get("discussion")
        if not isinstance(discussion, list) or len(discussion) < 2 or not all(
                isinstance(d, str) and d.strip() for d in discussion):
            problems.append(f"{name}: teaching.discussion needs two or more discussion questions")
        missing = [k for k in b.questions if k not in checks.QUESTIONS]
        if missing:
            problems.append(f"{name}: check cells with no registered question: {missing}")
        has_companion = any((ROOT / "course").glob(f"nb{b.number}_*.py"))
        if has_companion and not any(m.notebook == b.number for m in checks.MISTAKES.values()):
            problems.append(f"{name}: no misconception in checks.MISTAKES under {b.number!r}")
    for session in range(1, SESSIONS + 1):
        planned = [b for b in books if b.teaching.get("session") == session]
        content = sum(b.class_minutes for b in planned)
        if not planned:
            problems.append(f"session {session} has no notebook (teaching.session)")
        elif content > SESSION_MINUTES - BREAK_MINUTES:
            problems.append(f"session {session} plans {content} min of class time "
                            f"({', '.join(f'{b.number}: {b.class_minutes}' for b in planned)}); "
                            f"{SESSION_MINUTES - BREAK_MINUTES} fit beside the break: move "
                            "sections out of teaching.in_class")
    for key, m in checks.MISTAKES.items():
        fields = {f for text in m for _, f, _, _ in string.Formatter().parse(text) if f}
        if fields - EXAMPLE.keys():
            problems.append(f"checks.MISTAKES[{key!r}] has placeholders the guide cannot fill: "
                            f"{sorted(fields - EXAMPLE.keys())}; add them to EXAMPLE in "
                            "scripts/classroom_guide.py")
    if problems:
        raise GuideError("the teacher's guide cannot be generated:\n- " + "\n- ".join(problems))


def _seconds(run_time: dict) -> str:
    return f"{run_time['seconds']:.1f} s"


def _machines(books: list[Notebook]) -> list[str]:
    """Where and when the run times were measured, and whether the machine was busy."""
    seen: dict[str, list[str]] = {}
    for b in books:
        seen.setdefault(b.run_time["machine"], []).append(b.run_time["date"])
    lines = []
    for name, dates in seen.items():
        lines.append(f"{name} ({min(dates)}{'' if min(dates) == max(dates) else ' to ' + max(dates)})")
    def cores(machine: str) -> int:
        m = re.search(r"(\d+) cores", machine)
        return int(m.group(1)) if m else 1

    busy = [b for b in books
            if (b.run_time.get("load_average") or 0) > cores(b.run_time["machine"])]
    text = ("Run time: the wall-clock time of `python3 dev.py regenerate` running the notebook top "
            "to bottom in a fresh kernel, kernel start included, measured on " + "; ".join(lines)
            + ".")
    if busy:
        text += (" Measured while the machine was busy (load average above its number of cores) "
                 "for " + ", ".join(b.number for b in busy) + ": a quiet machine is faster.")
    return [text]


def _misconceptions(number: str) -> list[str]:
    out = []
    for m in checks.MISTAKES.values():
        if m.notebook == number:
            label, why = m.label.format(**EXAMPLE), m.why.format(**EXAMPLE)
            out.append(f"- **{label}**: {checks.sentence(why)}")
    return out


def graded_track(books: list[Notebook]) -> list[str]:
    """The section on the graded track: what it holds (from scripts/graded_items.py), and the
    steps of a round of grading with nbgrader, as tests/test_graded.py runs them."""
    by_name = {b.path.stem: b for b in books}
    rows = ["| Assignment | Notebook | Computed | Experiment | Derivation | Points (automatic + by hand) |",
            "|---|---|---|---|---|---|"]
    auto = hand = 0
    for a in ASSIGNMENTS:
        kinds = {k: [i for i in a.items if i.kind == k] for k in (FILL, EXPERIMENT, DERIVE)}
        a_auto = sum(i.score for i in a.items if i.kind != DERIVE)
        a_hand = sum(i.score for i in kinds[DERIVE])
        auto, hand = auto + a_auto, hand + a_hand
        book = by_name.get(a.name)
        rows.append(f"| {a.title} | {book.link if book else a.name} | {len(kinds[FILL])} | "
                    f"{len(kinds[EXPERIMENT])} | {len(kinds[DERIVE])} | {a_auto + a_hand} "
                    f"({a_auto} + {a_hand}) |")
    items = sum(len(a.items) for a in ASSIGNMENTS)
    missing = [b.link for b in books if b.number != "00" and b.path.stem not in
               {a.name for a in ASSIGNMENTS}]
    return [
        "## The graded track (nbgrader)", "",
        f"Beside the self-checks, which answer a learner at once and hold nothing back, the "
        f"graded track has {len(ASSIGNMENTS)} assignments, one per notebook, {items} items and "
        f"{auto + hand} points: {auto} graded automatically by visible and hidden tests, "
        f"{hand} by you against the rubric each derivation carries. No self-check's worked "
        "solution answers a graded item, and the released notebooks hold no solution, no hidden "
        "test and no expected value (tests/test_graded.py and tests/test_no_reveal.py check both "
        "on every change).", "",
        *rows, "",
        "A round of grading, with nbgrader in `.venv-graded` (`python3 dev.py setup --graded`):", "",
        "1. `python3 dev.py classroom assignments DIR`, with DIR outside the repository: the "
        "teacher's source (solutions, hidden tests, rubrics). Keep it in a private repository: "
        "the items are readable in the course's public one, so a class that needs answers no one "
        "can look up changes them (other numbers, other inputs) in its copy.",
        "2. In DIR: `nbgrader generate_assignment NN_topic` writes the student's version to "
        "`release/` (in `generate_assignment`, `autograde` and `generate_feedback` the "
        "assignment may be a pattern: `\"*\"` does every assignment in one run, which starts "
        "much faster than one run each; release and collect take one name). Hand out that notebook; on the class hub, release it to the students and "
        "collect their work through nbgrader's exchange (next paragraph).",
        "3. Put each student's submitted notebook at `submitted/<student>/NN_topic/NN_topic.ipynb` "
        "and run `nbgrader autograde NN_topic`: every autograded item gets exactly its points or "
        "0 (a wrong value, an empty answer, a cell that raises, a loop stopped after "
        "the per-cell timeout, a test cell the student emptied: the source's tests are used; a "
        "file that is not a readable notebook is kept beside it and graded as the unanswered "
        "release, with a note to the student as its first cell).",
        "4. Grade the derivations by hand, in nbgrader's Formgrader (started from DIR; the tests "
        "do not drive it), with the source notebook open beside it: the rubric is under each "
        "model answer there, not on the grading pages.",
        "5. `nbgrader generate_feedback NN_topic`: each student's `feedback/` page shows each "
        "failing test's message, not the hidden tests.", "",
        "**On the class hub** (hub/README.md, \"The graded track on the hub\") the same round "
        "runs in the browser: you are a user of the hub, with DIR at `~/course` and nbgrader's "
        "formgrader in your own server (open `/user/<you>/formgrader` in a tab of its own). In "
        "the formgrader you generate and release the assignment, collect and autograde the "
        "submissions, grade the derivations by hand, then generate and release the feedback. "
        "Each student fetches the assignment, submits it and fetches their feedback in "
        "JupyterLab's Assignments panel (menu Nbgrader, Assignment List). tests/test_hub.py runs "
        "such a round on a real hub with a teacher and two students, through the formgrader's "
        "API rather than its pages, and leaves the derivations ungraded.", "",
        "**For a class that reads Japanese**, write the folder with "
        "`python3 dev.py classroom assignments DIR --lang ja` and run the same steps in it. "
        "The students read Japanese: each assignment's title and header, every item's heading "
        "and task, the setup cell's comments, the stub of a derivation's answer "
        "(ここに答えを書いてください) and, in the feedback, each failing test's message and the "
        "notes the grading adds (a cell stopped by the timeout, a notebook that could not be "
        "read). The code, the grade_ids, "
        "the points, the tests and the solutions are the English ones, so an answer earns the "
        "same points in either folder; what only you read (the model answers, the rubrics, the "
        "README, the grading's log, the graded notebooks in Formgrader) stays English, and so "
        "does a test's message where the student runs the visible tests before submitting (it "
        "is code), and so do nbgrader's own labels on the feedback page (Score, Test cell, "
        "Comments). The translations are in `locale/ja/LC_MESSAGES/graded.po`; "
        "the command refuses to write a Japanese folder while a text there is untranslated or "
        "fuzzy, and names it.", "",
        *(["Not there yet: " + ", ".join(missing) + " have no assignment.", ""] if missing
          else [])]


def guide_text() -> str:
    run_times = json.loads(RUN_TIMES.read_text(encoding="utf-8")) if RUN_TIMES.exists() else {}
    books = [load_notebook(p, run_times) for p in notebook_paths()]
    validate(books)
    titles = {b.number: b for b in books}
    total = sum(b.minutes for b in books)
    in_class = sum(b.class_minutes for b in books)
    out = [
        "# Teacher's guide", "",
        "<!-- Generated by `python3 dev.py classroom guide` from the notebooks (their first cells "
        "and their `teaching` metadata), docs/run-times.json and course/checks.py. Do not edit: "
        "tests/test_classroom.py compares this file with a fresh generation. -->", "",
        f"The course has {len(books)} notebooks and {sum(len(b.questions) for b in books)} "
        "self-check questions. Every question has a hint and a worked solution that a learner "
        "asks for in the notebook, after trying (`nbNN.hint(\"NN.name\")`, then "
        "`nbNN.solution(\"NN.name\")`; the check cell says which). For yourself, "
        "`python3 dev.py classroom key` writes the instructor key to `build/key/`: every "
        "notebook with every answer filled in, run, every check Correct.", "",
        f"Working through every notebook in class would take about {total / 60:.1f} hours by the "
        f"rule below; the three sessions of the plan hold {in_class} minutes of it, and the rest "
        "is reading and self-checks at home.", "",
        *(["Serving the course to a whole class from one machine (JupyterHub, one link per "
           "student) is described in [hub/README.md](../hub/README.md).", ""]
          if (ROOT / "hub" / "README.md").exists() else []),
        "Learners who cannot see a figure: every figure the notebooks draw carries its content in "
        "words (which key each query weights most, where a curve turns), in the notebook's "
        "language. A screen reader reads it as the figure's alt in JupyterLab, on the slides and "
        "on the site. Where the alt had to leave details out, a closed \"The figure in words, in "
        "full\" (「図の説明 (全文)」) follows the figure: the one line you will see under some "
        "figures on the projector. Every slider and list can be moved from the keyboard, and "
        "a screen reader names each by its label (README.md, \"Accessibility\").", "",
        "## At a glance", "",
        "| Notebook | Builds on | Run time (measured) | Class time (estimated) | Self-checks "
        "| Session |", "|---|---|---|---|---|---|"]
    for b in books:
        prereq = ", ".join(b.teaching["prerequisites"]) or "-"
        out.append(f"| {b.link} | {prereq} | {_seconds(b.run_time)} | {b.minutes} min | "
                   f"{len(b.questions)} | {b.teaching['session']} |")
    out += ["", *_machines(books), "",
            "Class time, the rule: the minutes a class needs to work through the whole notebook "
            f"together. {WORDS_PER_MINUTE} words of prose a minute (a formula counts by its "
            f"symbols, so formulas weigh more), {CODE_CELL_MINUTES} min per code cell to run it "
            f"and read its output, {FIGURE_MINUTES:g} min more per figure, {WIDGET_MINUTES:g} min "
            f"per widget (demo and trying it), {CHECK_MINUTES:g} min per self-check question; the "
            f"sum rounded up to {ROUND_TO_MINUTES} min. The rule knows the amount of material, not "
            "how hard it is: a class that derives 03's variance or 09's online softmax on paper "
            "needs longer.", ""]
    out += plan(books)
    out += session_four()
    out += graded_track(books)
    out += ["## Notebook by notebook", ""]
    for b in books:
        t = b.teaching
        prereq = ", ".join(titles[p].link for p in t["prerequisites"]) or "nothing"
        where = (f"in session {t['session']}: {b.class_minutes} min"
                 if t["session"] != SELF_STUDY else "for self-study")
        out += [f"### {b.title}", "",
                f"[{b.path.name}](../notebooks/{b.path.name}) · builds on {prereq} · run time "
                f"{_seconds(b.run_time)} · class time about {b.minutes} min ({where})", "",
                "**Learning goals** (from the notebook):", ""]
        out += [f"{i}. {goal}" for i, goal in enumerate(b.goals, 1)]
        out += ["", "**Sections** (estimated minutes; in class or at home):", "",
                "| Section | Minutes | Where |", "|---|---|---|"]
        chosen = b.in_class()
        out += [f"| {s.label if s.id != 'start' else 'Introduction'} | {s.minutes:.0f} | "
                f"{'class' if s in chosen else 'home'} |" for s in b.sections]
        if t.get("demo"):
            out += ["", f"**Widget demo:** {t['demo']}"]
        out += ["", "**Discussion questions:**", ""]
        out += [f"{i}. {d}" for i, d in enumerate(t["discussion"], 1)]
        mistakes = _misconceptions(b.number)
        out += ["", "**Common misconceptions** (the named mistakes its self-checks recognise, "
                "from `checks.MISTAKES`; numbers filled in for a typical case):", ""]
        out += mistakes or [f"- none registered under {b.number}: its check is one of the shared "
                            "checks, whose misconceptions are listed under the notebooks that "
                            "teach them"]
        who = "checks" if not any((ROOT / "course").glob(f"nb{b.number}_*.py")) else f"nb{b.number}"
        out += ["", f"**Self-checks** ({len(b.questions)}; hints and solutions with "
                f"`{who}.hint(key)` and `{who}.solution(key)`): "
                + ", ".join(f"`{k}`" for k in b.questions), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def write_guide(check: bool = False) -> int:
    """Write docs/teachers-guide.md, or (check) say whether the committed one is up to date."""
    text = guide_text()
    if check:
        if GUIDE.exists() and GUIDE.read_text(encoding="utf-8") == text:
            return 0
        print(f"{GUIDE.relative_to(ROOT)} is out of date: run `python3 dev.py classroom guide`",
              file=sys.stderr)
        return 1
    GUIDE.parent.mkdir(exist_ok=True)
    GUIDE.write_text(text, encoding="utf-8")
    print(f"{GUIDE.relative_to(ROOT)}: {text.count(chr(10))} lines", flush=True)
    return 0
