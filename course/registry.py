"""How checks.MISTAKES and checks.QUESTIONS are gathered from the notebooks' companions.

Each companion (course/nbNN_topic.py) keeps its own entries at its end, in two plain dicts
named MISTAKES and QUESTIONS; course/mistakes.py and course/questions.py keep the shared ones
(a mistake several notebooks' checks name, notebook 00's question). A Registry is one read-only
mapping of all of them.

The companions import course.checks, so the registry cannot import them when it is itself
imported: it does so on its first lookup (a check naming a mistake, hint(), a test listing every
entry), once, and from then on it is a fixed mapping.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from pathlib import Path

COURSE = Path(__file__).resolve().parent


def companions() -> list[str]:
    """The module names of the companions, in course order: course.nb01_..., course.nb02_..."""
    return [f"course.{p.stem}" for p in sorted(COURSE.glob("nb[0-9][0-9]_*.py"))]


class Registry(Mapping):
    """The shared entries, then each companion's own (its module-level dict `name`), in course
    order; read-only. `number(key, entry)` is the notebook an entry belongs to: an entry in
    companion nbNN must belong to NN."""

    def __init__(self, name: str, shared: Mapping, number) -> None:
        self._name, self._shared, self._number = name, dict(shared), number
        self._entries: dict | None = None

    def _all(self) -> dict:
        if self._entries is None:
            entries = dict(self._shared)
            for module_name in companions():
                module = importlib.import_module(module_name)
                own = getattr(module, self._name, None)
                if own is None:  # also a lookup while that companion is still being imported
                    raise RuntimeError(f"{module_name} has no {self._name} (yet): every companion "
                                       f"ends with its own dict {self._name}, {{}} if it has none")
                nn = module_name.split(".nb")[1][:2]
                for key, entry in own.items():
                    if key in entries:
                        raise ValueError(f"{self._name}[{key!r}] of {module_name} is already "
                                         "registered (shared, or by another companion)")
                    if self._number(key, entry) != nn:
                        raise ValueError(f"{self._name}[{key!r}] is in {module_name} but belongs "
                                         f"to notebook {self._number(key, entry)}")
                    entries[key] = entry
            self._entries = entries
        return self._entries

    def __getitem__(self, key):
        return self._all()[key]

    def __iter__(self) -> Iterator:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __repr__(self) -> str:
        return f"<Registry {self._name}: {len(self)} entries>"
