"""The classroom edition: the instructor key and the teacher's guide (via `python3 dev.py classroom`).

    python3 dev.py classroom                # both of the following
    python3 dev.py classroom key [NB ...]   # build/key/: every answer filled in, run, all Correct
    python3 dev.py classroom guide          # rewrite docs/teachers-guide.md
    python3 dev.py classroom guide --check  # fail if docs/teachers-guide.md is not what it would write

The key: every notebook is copied with each `answer = ...` replaced by the worked solution of its
question in checks.QUESTIONS (the check cell names its key on its "# Stuck?" line), a markdown cell
with the solution's explanation after it, and run like `dev.py regenerate` runs notebooks (same
executor, fresh kernel, in notebooks/). The command fails unless every check in it says Correct.
The copies go to build/key/ (ignored by git): never edited by hand, never committed.

The guide is generated from what the course already holds, so it cannot drift from it:
learning goals (each notebook's first cells), the `teaching` metadata of each notebook
(prerequisites, session, sections done in class, widget demo, discussion questions), the
measured run times (docs/run-times.json, written by `dev.py regenerate`), the class-time rule
below, and the misconceptions, which are checks.MISTAKES grouped by notebook. A notebook that
lacks something the guide needs makes the command fail and say what is missing.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import re
import string
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
KEY_DIR = ROOT / "build" / "key"
GUIDE = ROOT / "docs" / "teachers-guide.md"
RUN_TIMES = ROOT / "docs" / "run-times.json"
sys.path.insert(0, str(ROOT))  # the course modules of this checkout, not of another one

from course import checks  # noqa: E402  (after the path above)

# The "# Stuck?" lines every check cell ends with, naming its question in checks.QUESTIONS.
STUCK = re.compile(r'^# Stuck\? .*?\b(?P<who>nb\d\d|checks)\.hint\("(?P<key>[^"]*)"\)', re.M)
STUCK_SOLUTION = re.compile(r'^# .*?\b(?P<who>nb\d\d|checks)\.solution\("(?P<key>[^"]*)"\)', re.M)
ANSWER = re.compile(r"^answer = \.\.\.(?P<comment>.*)$", re.M)


def notebook_paths() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def is_check_cell(cell) -> bool:
    return cell.cell_type == "code" and ANSWER.search(cell.source) is not None


def check_cells(nb) -> list[tuple[int, str]]:
    """(cell index, question key) of every self-check cell, from its "# Stuck?" line."""
    out = []
    for i, cell in enumerate(nb.cells):
        if is_check_cell(cell):
            m = STUCK.search(cell.source)
            out.append((i, m.group("key") if m else ""))
    return out


# --- the instructor key ----------------------------------------------------------------------

def key_notebook(path: Path):
    """A copy of the notebook with every `answer = ...` replaced by its registered solution."""
    nb = nbformat.read(path, as_version=4)
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        if not is_check_cell(cell):
            continue
        m = STUCK.search(cell.source)
        if m is None or m.group("key") not in checks.QUESTIONS:
            raise ValueError(f"{path.name}: a check cell names no registered question:\n"
                             f"{cell.source}")
        key = m.group("key")
        q = checks.QUESTIONS[key]
        lines = [line for line in cell.source.splitlines() if not line.startswith("# ")
                 or not (STUCK.match(line) or STUCK_SOLUTION.match(line))]
        source = "\n".join(lines)
        m = ANSWER.search(source)
        source = source[:m.start()] + checks.answer_lines(q.solution) + source[m.end():]
        cell.source = f"# instructor key: the worked solution of {key} (checks.QUESTIONS)\n{source}"
        cells.append(nbformat.v4.new_markdown_cell(f"**Worked solution ({key}).** {q.why}"))
    nb.cells = cells
    for i, cell in enumerate(nb.cells):  # new cells need ids of their own
        cell["id"] = f"key-{i:03d}"
    return nb


def verdicts(nb) -> list[tuple[str, str]]:
    """(question key, the text the check showed) for every check cell of an executed key."""
    out = []
    for cell in nb.cells:
        m = re.match(r"# instructor key: the worked solution of (\S+) ", cell.source)
        if cell.cell_type == "code" and m:
            shown = "".join("".join(o.get("data", {}).get("text/plain", ""))
                            for o in cell.get("outputs", []) if o.get("output_type") == "execute_result")
            out.append((m.group(1), shown))
    return out


def run_key(path: Path, out_dir: Path) -> tuple[str, float, list[str]]:
    """Build, run and write the key of one notebook: (name, seconds, problems)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from regenerate import execute  # the executor `dev.py regenerate` uses

    try:
        nb = key_notebook(path)
        seconds = execute(nb, path.parent)  # run where the notebook lives, like regenerate
    except Exception as e:  # a cell that raised: report it with the others
        return path.name, 0.0, [f"{path.name}: {type(e).__name__}: {str(e)[-1500:]}"]
    nb.metadata.pop("widgets", None)
    out_dir.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out_dir / path.name)
    problems = [f"{path.name} {key}: the check says {shown[:300]!r}"
                for key, shown in verdicts(nb) if not shown.startswith("Correct")]
    return path.name, seconds, problems


def build_key(paths: list[Path], out_dir: Path = KEY_DIR, workers: int | None = None) -> int:
    """Build and run the key of every notebook in parallel; 0 if every check says Correct."""
    missing = [f"{p.name}: no question named in a check cell" for p in paths
               for _, key in check_cells(nbformat.read(p, as_version=4)) if key not in checks.QUESTIONS]
    if missing:
        print("\n".join(missing), file=sys.stderr)
        return 1
    workers = workers or min(len(paths), os.cpu_count() or 1)
    start = time.perf_counter()
    # the slowest notebooks first (by their last measured run time), so none starts last alone
    times = json.loads(RUN_TIMES.read_text(encoding="utf-8")) if RUN_TIMES.exists() else {}
    order = sorted(paths, key=lambda p: -times.get(p.stem, {}).get("seconds", float("inf")))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        done = dict(zip(order, pool.map(run_key, order, [out_dir] * len(order)), strict=True))
    results = [done[p] for p in paths]
    problems = [p for _, _, ps in results for p in ps]
    for name, seconds, ps in results:
        print(f"{out_dir.relative_to(ROOT) if out_dir.is_relative_to(ROOT) else out_dir}/{name}: "
              f"{'FAILED' if ps else 'every check Correct'} ({seconds:.1f} s)", flush=True)
    print(f"instructor key: {len(paths)} notebooks, "
          f"{sum(len(check_cells(nbformat.read(p, as_version=4))) for p in paths)} questions, "
          f"{time.perf_counter() - start:.1f} s with {workers} workers", flush=True)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


# --- the teacher's guide: facts taken from the notebooks -------------------------------------

# The class-time rule. Minutes for a class that works through a part of a notebook together:
# the teacher presents the prose, the class runs the cells, looks at the figures, plays with the
# widget and tries the self-checks.
WORDS_PER_MINUTE = 120  # prose read and explained (formulas count by their symbols, so weigh more)
CODE_CELL_MINUTES = 0.5  # run it and read its output
FIGURE_MINUTES = 1.0  # look at a stored figure and say what it shows
WIDGET_MINUTES = 5.0  # the widget demo, and the class trying it
CHECK_MINUTES = 4.0  # a self-check question: try first, then maybe a hint
ROUND_TO_MINUTES = 5  # a whole notebook's estimate is rounded up to this
SESSIONS, SESSION_MINUTES, BREAK_MINUTES = 3, 90, 10
SELF_STUDY = "self-study"  # teaching.session of a notebook left out of the three sessions
FRAME = ("start", "Learning goals", "Setup", "Summary", "Next")  # always in class: the frame
EXAMPLE = {  # fills the {placeholders} of checks.MISTAKES with one typical case
    "tie": " (here three books tie for the best score)", "count": 3, "i": 1, "dim": 3,
    "parity": "odd", "two_i": 2, "i_up": 2, "two_i_up": 4, "d_model": 512, "d_k": 64, "h": 8,
    "width": 512, "scale": "sqrt(d_model) = sqrt(h*d_k)", "one_head": "(4, 5)",
    "per_head": " per head", "factor": 2, "square": 4, "cube": 8, "h_from": 12, "h_to": 24, "t": 4, "heads": 12,
}


class GuideError(ValueError):
    """Something the guide needs is missing or inconsistent; the message says what and where."""


@dataclass
class Section:
    id: str  # "3" for "## 3. Title", the title otherwise ("Check yourself", "Summary")
    title: str
    words: int = 0
    code_cells: int = 0
    figures: int = 0
    widgets: int = 0
    checks: int = 0

    @property
    def minutes(self) -> float:
        return (self.words / WORDS_PER_MINUTE + self.code_cells * CODE_CELL_MINUTES
                + self.figures * FIGURE_MINUTES + self.widgets * WIDGET_MINUTES
                + self.checks * CHECK_MINUTES)

    @property
    def frame(self) -> bool:
        return self.id.startswith(FRAME)

    @property
    def label(self) -> str:
        return f"§{self.id} {self.title}" if self.id[0].isdigit() else self.title


@dataclass
class Notebook:
    path: Path
    title: str
    goals: list[str]
    sections: list[Section]
    teaching: dict
    questions: list[str]
    run_time: dict | None

    @property
    def number(self) -> str:
        return self.path.name[:2]

    @property
    def minutes(self) -> int:
        return ROUND_TO_MINUTES * math.ceil(sum(s.minutes for s in self.sections) / ROUND_TO_MINUTES)

    def in_class(self) -> list[Section]:
        if self.teaching.get("session") == SELF_STUDY:
            return []
        chosen = set(self.teaching.get("in_class", []))
        return [s for s in self.sections if s.frame or s.id in chosen]

    def at_home(self) -> list[Section]:
        return [s for s in self.sections if s not in self.in_class()]

    @property
    def class_minutes(self) -> int:
        return math.ceil(sum(s.minutes for s in self.in_class()))

    @property
    def short_title(self) -> str:
        """The title without its Japanese name in brackets."""
        return re.sub(r"\s*\([^()]*\)$", "", self.title)

    @property
    def link(self) -> str:
        return f"[{self.title}](../notebooks/{self.path.name})"


def _words(text: str) -> int:
    """Runs of letters or digits, table rules (|---|) left out."""
    text = "\n".join(line for line in text.splitlines()
                     if not re.fullmatch(r"\s*\|?[\s:|-]+\|?\s*", line))
    return len(re.findall(r"\w+", text))


def sections(nb) -> list[Section]:
    """The notebook cut at its `## ` headings, with what the class-time rule counts in each."""
    out = [Section("start", "Start")]
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            part = []
            for line in cell.source.splitlines():
                if line.startswith("## "):
                    out[-1].words += _words("\n".join(part))
                    part = []
                    title = line[3:].strip()
                    m = re.match(r"(\d+)\.?\s+(.*)", title)
                    out.append(Section(m.group(1), m.group(2)) if m else
                               Section(re.sub(r"\s*\(.*\)$", "", title), title))
                part.append(line)
            out[-1].words += _words("\n".join(part))
        elif cell.cell_type == "code":
            s = out[-1]
            s.code_cells += 1
            s.figures += any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))
            s.widgets += "interactive(" in cell.source
            s.checks += is_check_cell(cell)
    return [s for s in out if s.id != "start" or s.words or s.code_cells]


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
                            "scripts/classroom.py")
    if problems:
        raise GuideError("the teacher's guide cannot be generated:\n- " + "\n- ".join(problems))


# --- the teacher's guide: the text -----------------------------------------------------------

def _clock(minutes: float) -> str:
    return f"{int(minutes) // 60}:{int(minutes) % 60:02d}"


def _seconds(run_time: dict) -> str:
    return f"{run_time['seconds']:.1f} s"


def _sections_text(secs: list[Section]) -> str:
    return "; ".join(s.label + (", with the widget demo" if s.widgets else "")
                     for s in secs if not s.frame) or "goals and summary only"


def _plan(books: list[Notebook]) -> list[str]:
    out = ["## The plan: three 90-minute sessions", "",
           f"Each session has {SESSION_MINUTES} minutes with a {BREAK_MINUTES}-minute break. In "
           "class: each notebook's goals and summary, the sections listed, and the widget demo; "
           "the rest of each notebook, and its self-checks, are for home, where the hints and "
           "worked solutions help a learner who is stuck. Minutes come from the rule above.", ""]
    for session in range(1, SESSIONS + 1):
        planned = [b for b in books if b.teaching["session"] == session]
        ends = [sum(b.class_minutes for b in planned[:i + 1]) for i in range(len(planned))]
        # the break after the notebook that ends nearest the middle (never after the last one)
        break_at = min(range(max(1, len(planned) - 1)), key=lambda i: abs(ends[i] - ends[-1] / 2))
        clock = 0
        out += [f"### Session {session}: notebooks " + ", ".join(b.number for b in planned), "",
                "| Time | Minutes | What |", "|---|---|---|"]
        for i, b in enumerate(planned):
            out.append(f"| {_clock(clock)} | {b.class_minutes} | **{b.short_title}**: "
                       f"{_sections_text(b.in_class())} |")
            clock += b.class_minutes
            if i == break_at and i < len(planned) - 1:
                out.append(f"| {_clock(clock)} | {BREAK_MINUTES} | Break |")
                clock += BREAK_MINUTES
        if len(planned) == 1:  # one notebook only: the break comes after it
            out.append(f"| {_clock(clock)} | {BREAK_MINUTES} | Break |")
            clock += BREAK_MINUTES
        slack = SESSION_MINUTES - clock
        if slack > 0:
            out.append(f"| {_clock(clock)} | {slack} | Questions, and discussion questions "
                       "from the notebooks below |")
        out += ["", "Widget demos:", ""]
        out += [f"- {b.short_title}: {b.teaching['demo']}" for b in planned if b.teaching.get("demo")]
        home = [(b, b.at_home()) for b in planned]
        home_minutes = math.ceil(sum(s.minutes for _, secs in home for s in secs))
        when = f"before session {session + 1}" if session < SESSIONS else "after the last session"
        out += ["", f"At home, {when} (about {home_minutes} min by the same rule):", ""]
        out += [f"- {b.short_title}: {_sections_text(secs)}" for b, secs in home if secs]
        out.append("")
    extra = [b for b in books if b.teaching["session"] == SELF_STUDY]
    if extra:
        out += ["### Beyond the three sessions", "",
                "For self-study, or a further session (minutes for the whole notebook):", ""]
        out += [f"- {b.short_title} (about {b.minutes} min)"
                + (f". Widget: {b.teaching['demo']}" if b.teaching.get("demo") else "")
                for b in extra]
        out.append("")
    return out


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


# --- the teacher's guide: a fourth session for notebooks 10 and 11 (its own block) -------------

# (start minute is computed) minutes, what: a plan written by hand, because 10 and 11 are taught
# at the board and by demos more than by the class-time rule's reading. Sums to SESSION_MINUTES.
SESSION_FOUR = (
    (5, "Goals of 10 and 11; the reversal task (digits, separator, digits reversed) and why its "
        "answer is known: the query at position i must read key 2L - 1 - i."),
    (25, "**10 §1 at the board: the backward pass of one attention call.** From O = A V: dV = "
         "A^T dO and dA = dO V^T; through each row's softmax (Jacobian diag(a) - a^T a) dS = A * "
         "(dA - rowsum(A * dA)); from S = Q K^T / sqrt(d_k): dQ = dS K / sqrt(d_k), dK = dS^T Q "
         "/ sqrt(d_k). Ask why every row of dS sums to 0 and what that means for a one-hot row. "
         "Then run the notebook's finite-difference check of these formulas."),
    (10, "**Demo: notebook 10's causal test.** In a one-layer model attention is the only path "
         "from token j to position i: change the digit the row reads and its prediction follows, "
         "change any other digit and it does not. Contrast it with the argmax counts of §5, "
         "which only say where the weights point."),
    (BREAK_MINUTES, "Break"),
    (15, "**11 §2-4:** greedy generation, prefix consistency (why the past keys and values never "
         "change), the cached step, and the counts: the ratio of the work is linear in T, about "
         "(T + 1)/2 while the rows dominate and tending to 2T/3; then the cache's memory, 2 * "
         "layers * h * t * d_k numbers per sequence (Llama 2 7B: 0.5 MiB per token in float16)."),
    (10, "**Demo: notebook 11's head ablation (§6).** Zero one head's rows of W_O and measure: "
         "each head alone is on the right key on most rows, and zeroing either leaves most of the "
         "accuracy. Ask the class to predict the numbers from the attention figure first."),
    (15, "The conceptual mistakes below, as questions to the class; 11's self-checks 4 and 5 ask "
         "two of them."),
)

CONCEPTUAL_MISTAKES = (
    ("An attention weight is an explanation.",
     "A weight says where a head reads, not whether the answer depends on it. Notebook 11's "
     "ablation: each of the two heads puts its largest weight on the right key on most rows, yet "
     "zeroing either one leaves most of the accuracy, because the other reads the same key. Only an "
     "intervention (notebook 10's causal test, 11's ablation) tests dependence."),
    ("A small gradient means Adam stops moving.",
     "Adam divides each step by the running root mean square of the gradient, so a small but "
     "consistent gradient still moves a parameter by about the learning rate per step. Its "
     "steps do shrink when the gradient changes sign from step to step, when it falls to the size "
     "of eps (1e-8 in al.adam_step) or below, and for a while after a sudden collapse, because "
     "the denominator (beta2 = 0.999) remembers the earlier, larger gradients for about a "
     "thousand steps. Plain gradient descent is the one whose steps shrink with the gradient."),
    ("The KV cache saves memory.",
     "It trades memory for time: it keeps every layer's keys and values, 2 * layers * h * t * d_k "
     "numbers per sequence, which recomputing would not keep, so as to compute one row per step "
     "instead of t. On a server it is the cache's memory that limits how many and how long "
     "sequences run at once."),
)


def _session_four() -> list[str]:
    """A fourth 90-minute session for notebooks 10 and 11, and the conceptual mistakes to raise."""
    total = sum(minutes for minutes, _ in SESSION_FOUR)
    if total != SESSION_MINUTES:
        raise GuideError(f"SESSION_FOUR holds {total} minutes, not {SESSION_MINUTES}")
    out = ["### A fourth session: notebooks 10 and 11", "",
           "Notebooks 10 and 11 are left out of the three sessions (they are for self-study), but a "
           f"class that has time can give them a fourth session of {SESSION_MINUTES} minutes. "
           "It is planned by hand rather than by the rule: the backward pass is derived at the "
           "board, and two experiments are shown as demos. Before it, at home: notebook 10 §2-4 "
           "(the model, its backward pass, training); after it: the rest of both notebooks and "
           "their self-checks.", "", "| Time | Minutes | What |", "|---|---|---|"]
    clock = 0
    for minutes, what in SESSION_FOUR:
        out.append(f"| {_clock(clock)} | {minutes} | {what} |")
        clock += minutes
    out += ["", "**Conceptual mistakes to raise** (not slips of a formula, but wrong pictures; ask "
            "the class first, then answer with the notebooks' measurements):", ""]
    out += [f"- **\"{claim}\"** {answer}" for claim, answer in CONCEPTUAL_MISTAKES]
    out.append("")
    return out


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
    out += _plan(books)
    out += _session_four()
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


def solution_is_well_formed(code: str) -> bool:
    """An expression, or statements whose last one is `answer = <expression>`."""
    try:
        ast.parse(code, mode="eval")
        return True
    except SyntaxError:
        pass
    try:
        last = ast.parse(code).body[-1]
    except (SyntaxError, IndexError):
        return False
    return (isinstance(last, ast.Assign) and len(last.targets) == 1
            and getattr(last.targets[0], "id", None) == "answer")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="?", choices=["key", "guide"], help="default: both")
    parser.add_argument("notebooks", nargs="*", help="key: these notebooks only")
    parser.add_argument("--check", action="store_true", help="guide: compare, do not write")
    parser.add_argument("--out", type=Path, default=KEY_DIR, help="key: where to write it")
    args = parser.parse_args(argv)
    code = 0
    try:
        if args.what in (None, "guide"):
            code |= write_guide(check=args.check)
    except GuideError as e:
        print(e, file=sys.stderr)
        code = 1
    if args.what in (None, "key"):
        paths = [Path(p).resolve() for p in args.notebooks] or notebook_paths()
        code |= build_key(paths, args.out.resolve())
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
