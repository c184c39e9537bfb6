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
holds the translations and is the only catalog the modules read (graded.po beside it is
the graded track's, read by scripts/classroom_graded.py). course.mo, what gettext reads,
is compiled from it with Babel (a requirement of the course) by the first ``use_language`` that
finds it missing or older than the .po, and written beside it; where the course folder is read-only
the compiled catalog is used from memory.
"""

from __future__ import annotations

import contextlib
import gettext
import io
import os
import tempfile
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

    Raises ValueError for a language without a catalog, and FileNotFoundError if its catalog
    (locale/<lang>/LC_MESSAGES/course.po) is missing: a missing catalog is an error, never a
    silently English "Japanese" notebook.
    """
    global _current, _translations
    if lang not in LANGUAGES:
        raise ValueError(f"no course catalog for language {lang!r}; available: {LANGUAGES}")
    _translations = gettext.NullTranslations() if lang == SOURCE_LANGUAGE else _catalog(lang)
    _current = lang


def catalog_path(lang: str) -> Path:
    """locale/<lang>/LC_MESSAGES/course.po: the translations, as translators edit them."""
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def compile_catalog(po: Path) -> bytes:
    """The compiled (.mo) form of the catalog `po`, fuzzy translations left out (Babel)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as f:
        catalog = read_po(f)
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    return buf.getvalue()


def _catalog(lang: str) -> gettext.GNUTranslations:
    """`lang`'s translations: course.mo when it is at least as new as course.po, else compiled
    now, and written beside the .po for the next kernel (as make would: by modification time)."""
    po = catalog_path(lang)
    mo = po.with_suffix(".mo")
    if not po.exists():
        raise FileNotFoundError(f"the course's {lang} catalog {po} is missing")
    if mo.exists() and mo.stat().st_mtime_ns >= po.stat().st_mtime_ns:
        with mo.open("rb") as f:
            return gettext.GNUTranslations(f)
    data = compile_catalog(po)
    with contextlib.suppress(OSError):   # a read-only course folder: used from memory only
        _write_atomically(mo, data)
    return gettext.GNUTranslations(io.BytesIO(data))


def _write_atomically(path: Path, data: bytes) -> None:
    """A temporary file and a rename: kernels that compile at the same time never read half."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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
