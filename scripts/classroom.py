"""The classroom edition: the instructor key and the teacher's guide (via `python3 dev.py classroom`).

    python3 dev.py classroom                # both of the following
    python3 dev.py classroom key [NB ...]   # build/key/: every answer filled in, run, all Correct
    python3 dev.py classroom guide          # rewrite docs/teachers-guide.md
    python3 dev.py classroom guide --check  # fail if docs/teachers-guide.md is not what it would write
    python3 dev.py classroom assignments DIR  # the graded track: an nbgrader course folder in DIR,
                                              # outside the repository (solutions, hidden tests)
    python3 dev.py classroom assignments DIR --lang ja  # the same, what students read in Japanese

This file is the command. The work is done in four modules beside it: classroom_key.py (the
check cells and the instructor key), classroom_guide.py (the teacher's guide),
classroom_plan.py (the class-time rule and the plan of the sessions, which the guide prints) and
classroom_graded.py (the graded track's nbgrader folder, from the items of graded_items.py).
The names the tests and scripts/regenerate.py use are re-exported here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's scripts, course

from scripts.classroom_guide import (EXAMPLE, GUIDE, GuideError, guide_text,  # noqa: E402, F401
                                     write_guide)
from scripts.classroom_key import (ANSWER, KEY_DIR, NOTEBOOKS, ROOT, RUN_TIMES,  # noqa: E402, F401
                                   STUCK, STUCK_SOLUTION, build_key, check_cells, is_check_cell,
                                   key_notebook, notebook_paths, solution_is_well_formed,
                                   verdicts)
from scripts.classroom_plan import Notebook, Section, sections  # noqa: E402, F401


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="?", choices=["key", "guide", "assignments"],
                        help="default: key and guide")
    parser.add_argument("notebooks", nargs="*",
                        help="key: these notebooks only; assignments: the folder to write")
    parser.add_argument("--check", action="store_true", help="guide: compare, do not write")
    parser.add_argument("--out", type=Path, default=KEY_DIR, help="key: where to write it")
    parser.add_argument("--lang", choices=["en", "ja"], default="en",
                        help="assignments: the language of what students read (default en)")
    args = parser.parse_args(argv)
    if args.what == "assignments":
        if len(args.notebooks) != 1:
            parser.error("assignments takes one argument: the folder to write, outside the repository")
        from scripts.classroom_graded import main as write_assignments
        return write_assignments(args.notebooks[0], args.lang)
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
