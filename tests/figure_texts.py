"""What the Japanese-edition tests of the companions share: is a figure's text in Japanese?"""

from __future__ import annotations

import re

JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")  # kana or kanji


def texts_not_in_japanese(fig) -> list[str]:
    """The suptitle, titles, axis labels and legend texts of fig that have no Japanese in them."""
    texts = [fig.get_suptitle()]
    texts += [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    for ax in fig.axes:
        texts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        if ax.get_legend() is not None:
            texts += [t.get_text() for t in ax.get_legend().get_texts()]
    return [t for t in texts if t and not JAPANESE.search(t)]
