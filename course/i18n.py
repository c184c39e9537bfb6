"""The course's messages in the learner's language: Python's gettext, domain ``course``.

English is the source and the default. A notebook of the Japanese edition (notebooks/ja/)
switches the course modules to Japanese in its first code cell::

    from course import i18n
    i18n.use_language("ja")

after which figure titles, axis labels, legends, widget texts and check messages that the
modules mark with ``_()`` come out in Japanese. Nothing changes on import: English stays until
``use_language`` is called.

In a module, mark every text a learner sees::

    from course.i18n import _, N_

    ax.set_title(_("attention weights A"))                   # translated when drawn
    _("weights of query {i}").format(i=i + 1)                # named fields: word order may change
    LABELS = {"rows": N_("rows sum to 1")}                   # module level: mark only ...
    ax.set_xlabel(_(LABELS["rows"]))                         # ... and translate where it is used

``_()`` looks the text up when it is called, so a text built at import time must be marked
with ``N_()`` and translated where it is shown. The catalogs are extracted with Babel and kept
in step by ``python3 dev.py ja`` (docs/japanese-edition.md): locale/ja/LC_MESSAGES/course.po
holds the translations, course.mo next to it is what gettext reads (compiled from the .po by that
command and committed, so a fresh clone needs no tool to run the course in Japanese).
"""

from __future__ import annotations

import contextlib
import gettext
from pathlib import Path

DOMAIN = "course"
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
SOURCE_LANGUAGE = "en"
LANGUAGES = ("en", "ja")  # the source and every language with a catalog

_current = SOURCE_LANGUAGE
_translations: gettext.NullTranslations = gettext.NullTranslations()


def use_language(lang: str) -> None:
    """Show the course modules' texts in `lang` ("en" or "ja") from now on.

    Returns nothing, so that as the last line of a notebook cell it shows nothing.

    Raises ValueError for a language without a catalog, and FileNotFoundError if its compiled
    catalog (locale/<lang>/LC_MESSAGES/course.mo) is missing: `python3 dev.py ja` builds it.
    """
    global _current, _translations
    if lang not in LANGUAGES:
        raise ValueError(f"no course catalog for language {lang!r}; available: {LANGUAGES}")
    if lang == SOURCE_LANGUAGE:
        _translations = gettext.NullTranslations()
    else:
        # fallback=False: a missing .mo is an error, not a silently English "Japanese" notebook
        _translations = gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang])
    _current = lang


def language() -> str:
    """The language the course modules speak now ("en" until use_language is called)."""
    return _current


@contextlib.contextmanager
def language_as(lang: str):
    """``with language_as("ja"):`` the modules speak `lang` inside the block (tests, scripts)."""
    previous = _current
    use_language(lang)
    try:
        yield
    finally:
        use_language(previous)


def _(message: str) -> str:
    """`message` in the current language (itself in English, or when it has no translation)."""
    return _translations.gettext(message)


def shown(text: str | None) -> str | None:
    """A text a notebook passes to a course module (a title, a label), in the current language.

    Its translation when the catalog has one (the module marks such texts with N_()), else the
    text itself; None and "" stay as they are (_("") would be the catalog's header).
    """
    return _(text) if text else text


def N_(message: str) -> str:
    """Mark `message` for translation without translating it (texts built at import time)."""
    return message
