"""How the figure words say things (course.describe): numbers, lists, sentences and a figure's
titles and labels as a screen reader should say them, in the course's language (issue 27).

``number(1.54e12)`` is "1.54 trillion" (「1.54 兆」), ``number(1.2e-8)`` "1.2 × 10 to the
power −8"; ``flat(label)`` makes a title or label one line of plain symbols: its mathtext, its
ASCII stand-ins ("m - n", "n x n", "sqrt(d_k)", "8..31") and, in English, without a Japanese
gloss the eye reads but an English voice cannot say.
"""

from __future__ import annotations

import re

import numpy as np

from course.i18n import N_, _, language


def number(v) -> str:
    """v as the course says numbers: three significant digits (1.23, 0.000974), a whole number
    below a million whole (1024, not 1.02e+03), larger ones in the language's own units (572
    million; 5.72 億), tiny ones as a power of ten in words (1.17 × 10 to the power −8: a
    screen reader spells "1.17e-08" out), "−" for minus, -0 as 0."""
    v = float(v)
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "∞" if v > 0 else "−∞"
    rounded = float(f"{v:.3g}")
    if abs(v) < 1e6 and v == round(v):
        text = str(int(v))
    elif 1000 <= abs(rounded) < 1e6:
        text = str(int(rounded))
    elif 1e6 <= abs(rounded) < 1e15:
        unit, name = next(u for u in LARGE[language()] if abs(rounded) >= u[0])
        scaled = rounded / unit   # up to 9999 of 万: 1230 万, not 1.23e+03 万
        text = f"{int(scaled) if abs(scaled) >= 1000 else float(f'{scaled:.3g}'):g} {name}"
    else:
        text = f"{v:.3g}"
    if "e" in text:   # said, not spelled: "1.77e-71" reads aloud as "1.77 e minus 71"
        mantissa, exponent = text.split("e")
        # Translators: a number in powers of ten, as a screen reader should say it (1.2 × 10^-8)
        text = _("{mantissa} × 10 to the power {exponent}").format(
            mantissa=mantissa, exponent=int(exponent))
    return "0" if text in ("-0", "0") else text.replace("-", "−")


# The units of large numbers in each language, largest first: 1.54 trillion; 1.54 兆, 125 万
LARGE = {"en": ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")),
         "ja": ((1e12, "兆"), (1e8, "億"), (1e4, "万"))}


def in_list(items) -> str:
    """Items joined as a list of the current language ("a, b, c"; in Japanese "a、b、c")."""
    # Translators: the separator of a list of items (a comma and a space in English)
    return _(", ").join(items)


def sentence(text: str) -> str:
    """text ended as a sentence ("…." in English, "…。" in Japanese)."""
    return _("{text}.").format(text=text)


def flat(text: str) -> str:
    """A title or label as one line (its lines joined as a list), its mathtext as plain
    symbols."""
    from course.alt_text import tex_to_text

    lines = [" ".join(line.split()) for line in str(text).splitlines()]
    lines = [line for line in lines if line]
    # a title of two lines ("step 40: loss 0.61" over "6 of 6 rows ...") read as two parts
    text = ""
    for line in lines:   # a line that opens with a bracket goes on as its remark: "… (output rows)"
        if text and text[-1] in ")）" and line[0] in "(（":   # two remarks: one bracket, "(a, b)"
            text = text[:-1] + _(", ") + line[1:]
            continue
        text += line if not text else (
            " " if text[-1] in ",:;(、。：" or line[0] in "(（" else _(", ")) + line
    parts = text.split("$")
    text = "".join(tex_to_text(p) if i % 2 else p for i, p in enumerate(parts))
    if language() != "ja":   # an English voice cannot say "(注意重み)": the gloss is for the eye
        text = _GLOSS.sub("", text)
    return " ".join(_spoken(text).split())   # "\max_j\ p_j" leaves two spaces


def _spoken(text: str) -> str:
    """A label's ASCII stand-ins as a screen reader should say them: a minus sign, not a hyphen
    it leaves out ("offset m − n", "−s_r", "−∞"); "×", not the letter x ("n × n", "2 × 8 ×
    d_k"); "√(d_k)", not "sqrt(d_k)"; "start token", not "<s>"; "8 to 31", not "8..31".
    Hyphenated words stay."""
    text = re.sub(r"(?<![\w\-])-(?=[\w(∞√])", "−", text.replace(" - ", " − "))
    text = re.sub(r"−inf\b", "−∞", text)
    text = _TIMES.sub(r"\1 × ", text)
    text = re.sub(r"\bsqrt\(", "√(", text)
    text = _TOKEN.sub(lambda m: _(TOKENS[m[0]]), text)
    text = _UNIT.sub(lambda m: _("{label}, in {unit}").format(
        label=m[1], unit=_(UNITS[m[2]])), text)
    # Translators: a range of whole numbers, "8..31" in a label ("8〜31" in Japanese)
    return re.sub(r"(\w)\.\.(\w)", lambda m: _("{a} to {b}").format(a=m[1], b=m[2]), text)


# A unit in square brackets, "time per call [s]", which a screen reader at its default
# punctuation reads as a bare "s": said as words, "time per call, in seconds". Only these
# (a bracket after a symbol, "W_K[2,2]", is an index and stays)
# Translators: the units, said in words ("time per call, in seconds")
UNITS = {"s": N_("seconds"), "秒": N_("seconds"), "nats": N_("nats"), "ナット": N_("nats"),
         "MiB": N_("mebibytes")}
_UNIT = re.compile(r"(\S(?:.*?\S)?) \[(" + "|".join(map(re.escape, UNITS)) + r")\](?!\w)")
# A model's special token, "<s>" at the start of a decoder's input, which a screen reader reads
# as "less than s greater than" or, at its default punctuation, as a bare "s": said as words
# Translators: the special tokens of a sequence, said in words ("<s> → I" read as "start token → I")
TOKENS = {"<s>": N_("start token")}
_TOKEN = re.compile("|".join(map(re.escape, TOKENS)))
_FACTOR = r"(?:\d+|[A-Za-z]|d_\w+)"   # a number, a one-letter symbol or a width (d_k)
_TIMES = re.compile(rf"\b({_FACTOR}) x (?={_FACTOR}\b)")


# A bracketed Japanese gloss in an English title or label, "Mask patterns (マスク)"; the
# Japanese words of a figure's data (tick labels such as 私, はし) are kept.
_GLOSS = re.compile(r"\s*[(（][\u3000-\u30ff\u4e00-\u9fff\uff01-\uff5e\s]+[)）]")
