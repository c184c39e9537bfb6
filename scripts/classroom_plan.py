"""The classroom edition, part 2: the session plan of the teacher's guide.

The class-time rule (minutes for a section of a notebook, from what it holds), the notebooks cut
into sections, the three 90-minute sessions planned from each notebook's `teaching` metadata, and
the fourth session for notebooks 10 and 11, planned by hand. scripts/classroom_guide.py writes
them into docs/teachers-guide.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from scripts.classroom_key import is_check_cell

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
            s.widgets += "with_controls(" in cell.source
            s.checks += is_check_cell(cell)
    return [s for s in out if s.id != "start" or s.words or s.code_cells]

# --- the plan of the three sessions ----------------------------------------------------------


def _clock(minutes: float) -> str:
    return f"{int(minutes) // 60}:{int(minutes) % 60:02d}"


def _sections_text(secs: list[Section]) -> str:
    return "; ".join(s.label + (", with the widget demo" if s.widgets else "")
                     for s in secs if not s.frame) or "goals and summary only"


def plan(books: list[Notebook]) -> list[str]:
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


# --- the teacher's guide: a fourth session for notebooks 10 and 11 (its own block) -------------

# (start minute is computed) minutes, what: a plan written by hand, because 10 and 11 are taught
# at the board and by demos more than by the class-time rule's reading. Sums to SESSION_MINUTES.
SESSION_FOUR = (
    (5, "Goals of 10 and 11; the reversal task (digits, separator, digits reversed) and why its "
        "answer is known: the query at position i must read key 2L - 1 - i."),
    (25, "**10 §1 at the board: the backward pass of one attention call.** From O = A V: dV = "
         "A^T dO and dA = dO V^T; through each row's softmax (Jacobian diag(p) - p^T p, p a row "
         "of A) dS = A * (dA - rowsum(A * dA)); from S = Q K^T / sqrt(d_k): dQ = dS K / "
         "sqrt(d_k), dK = dS^T Q / sqrt(d_k). Ask why every row of dS sums to 0 and what that means for a one-hot row. "
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


def session_four() -> list[str]:
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
