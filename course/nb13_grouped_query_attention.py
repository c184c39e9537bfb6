"""Notebook 13, Grouped-query and multi-query attention: its figures, live figure and self-checks.

The lesson itself (the grouped heads, the equivalences, the counts, the mask with a cache, the
experiment) is in notebooks/13_grouped_query_attention.ipynb; this module holds what a learner
may skip (the published model shapes, drawing, widget wiring, the checks' diagnoses). Its tests
are in tests/test_nb13_grouped_query_attention.py.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.ticker import NullFormatter

import attention_core as ac
from course.checks import (
    CORRECT,
    MISTAKE,
    WRONG,
    Verdict,
    check_value,
    is_unanswered,
    named,
    sentence,
    unanswered,
)
from course.checks import hint as hint, solution as solution  # offered in the check cells
from course.checks import Mistake, Question  # of its own entries, at the end
from course import figures
from course.figures import SMALL, fixed_subplots
from course.i18n import N_, _
from course.live import LiveFigure

# One colour per key/value group (up to 8, as with h_kv = 8): the course's series colours, which
# stay apart under colour-vision deficiency and stand out from white by 3:1 or more
# (course.figures.SERIES_COLOURS), and a violet (#B858F8, 3.6:1, Delta E' 12 or more from each)
GROUP_COLORS = (*figures.SERIES_COLOURS, "#B858F8")


class ModelShape(NamedTuple):
    """The attention shape of a published model: what its KV cache holds per token."""

    name: str
    layers: int      # decoder layers, each with its own cache
    heads: int       # query heads h
    kv_heads: int    # key/value heads h_kv (h: multi-head, 1: multi-query)
    head_width: int  # d_k = d_v of each head
    context: int     # the longest context of its configuration (max_position_embeddings)
    source: str      # where the numbers come from


# From each model's published configuration (the config.json of its Hugging Face repository:
# num_hidden_layers, num_attention_heads, num_key_value_heads, hidden_size / num_attention_heads,
# max_position_embeddings) or, for PaLM, its paper. Head width = hidden size / heads for all but
# PaLM, whose paper gives it.
MODELS = (
    ModelShape("Llama 2 7B", 32, 32, 32, 128, 4096,
               "meta-llama/Llama-2-7b-hf config.json; Touvron et al. 2023, arXiv:2307.09288"),
    ModelShape("Llama 2 70B", 80, 64, 8, 128, 4096,
               "meta-llama/Llama-2-70b-hf config.json; Touvron et al. 2023 (GQA in 34B, 70B)"),
    ModelShape("Llama 3 8B", 32, 32, 8, 128, 8192, "meta-llama/Meta-Llama-3-8B config.json"),
    ModelShape("Llama 3 70B", 80, 64, 8, 128, 8192, "meta-llama/Meta-Llama-3-70B config.json"),
    ModelShape("Mistral 7B", 32, 32, 8, 128, 32768,
               "mistralai/Mistral-7B-v0.1 config.json (sliding_window 4096); Jiang et al. 2023, "
               "arXiv:2310.06825"),
    ModelShape("Falcon 7B", 32, 71, 1, 64, 2048,
               "tiiuae/falcon-7b config.json (n_layer 32, n_head 71, hidden_size 4544, "
               "multi_query true: one K/V head, as query_key_value's (71 + 2) * 64 = 4672 "
               "outputs confirm)"),
    ModelShape("PaLM 540B", 118, 48, 1, 256, 2048,
               "Chowdhery et al. 2022, arXiv:2204.02311, Table 1 and section 2 (multi-query)"),
)
# the models whose h is a power of two: the live figure's h_kv = 1, 2, 4, ..., h fits each of them
LIVE_MODELS = tuple(m for m in MODELS if m.heads & (m.heads - 1) == 0)
BYTES_PER_NUMBER = 2  # float16 / bfloat16, as these models are served
GIB = 2 ** 30

# The series labels the notebook gives plot_accuracy_vs_cache: marked here, translated where drawn.
NOTEBOOK_TITLES = (N_("from scratch, 50 steps"), N_("from scratch, 150 steps"),
                   N_("mean-pooled, right after"), N_("mean-pooled, +15 steps"))


def _cache_bytes(model: ModelShape, h_kv: int, t: int) -> int:
    """Keys and values of every layer: 2 * layers * h_kv * t * d_k numbers of 2 bytes."""
    return 2 * model.layers * h_kv * t * model.head_width * BYTES_PER_NUMBER


# --- figures and live figure ----------------------------------------------------


def plot_grouping(h: int = 8, kv_heads=(8, 2, 1)):
    """The idea: h query heads (top) and the key/value heads they read (bottom), one panel per h_kv."""
    title = _("Query heads share key/value heads: query head r reads K/V head r // (h / h_kv)")
    fig, axes = fixed_subplots(1, len(kv_heads), widths=3.3, heights=1.9, left=0.2, right=0.2,
                               bottom=0.55, top=0.95, wgap=0.3, squeeze=False,
                               min_width=figures.text_width(title) + 0.3)
    names = {h: _("multi-head (MHA)"), 1: _("multi-query (MQA)")}
    for ax, h_kv in zip(axes[0], kv_heads, strict=True):
        g = h // h_kv  # query heads per group
        kv_x = [k * g + (g - 1) / 2 for k in range(h_kv)]  # each K/V head under its group
        for r in range(h):
            color = GROUP_COLORS[(r // g) % len(GROUP_COLORS)]
            ax.plot([r, kv_x[r // g]], [1, 0], color=color, lw=1.5, zorder=1)
            ax.add_patch(Rectangle((r - 0.35, 0.92), 0.7, 0.16, color=color, zorder=2))
        for k, x in enumerate(kv_x):
            ax.add_patch(Rectangle((x - 0.45, -0.1), 0.9, 0.2, color=GROUP_COLORS[k % 8], zorder=2,
                                   ec="k", lw=0.8))
        ax.text(-0.6, 1.2, _("query heads (h = {h})").format(h=h), fontsize=SMALL, va="bottom")
        ax.text(-0.6, -0.2, _("K/V heads (h_kv = {h_kv})").format(h_kv=h_kv), fontsize=SMALL,
                va="top")
        ax.set_xlim(-0.7, h - 0.3)
        ax.set_ylim(-0.55, 1.45)
        ax.set_axis_off()
        ax.set_title(names.get(h_kv, _("grouped-query (GQA)")) + "\n"
                     + _("cache per token: 2 x {h_kv} x d_k").format(h_kv=h_kv), fontsize=SMALL)
    figures.suptitle(fig, title)
    return fig


def plot_cache_memory(models=MODELS, ts=None):
    """Published shapes: cache per token, MHA against the published h_kv (left), and per sequence
    against the context length t (right), 2 bytes per number."""
    ts = 2 ** np.arange(9, 18) if ts is None else np.asarray(ts)
    title = _("The KV cache of published models (float16): what sharing K/V heads saves")
    fig, (ax_b, ax_t) = fixed_subplots(1, 2, widths=(3.6, 4.4), heights=3.2, left=1.45,
                                       right=0.2, bottom=0.75, top=0.75, wgap=1.05,
                                       min_width=figures.text_width(title) + 0.3)
    y = np.arange(len(models))[::-1]
    mha = [_cache_bytes(m, m.heads, 1) / 2 ** 10 for m in models]
    pub = [_cache_bytes(m, m.kv_heads, 1) / 2 ** 10 for m in models]
    ax_b.barh(y + 0.2, mha, height=0.38, color="0.55",   # a grey 3.4:1 on white (WCAG 1.4.11)
              label=_("if h_kv = h (MHA)"))
    ax_b.barh(y - 0.2, pub, height=0.38, color="C0", label=_("published h_kv"))
    ax_b.set_yticks(y, [f"{m.name}\n(h {m.heads}, h_kv {m.kv_heads})" for m in models],
                    fontsize=SMALL)
    ax_b.set_xscale("log")
    ax_b.set_xlim(4, 3e4)
    ax_b.set_xlabel(_("KiB per token, all layers"))
    ax_b.legend(fontsize=SMALL, loc="lower left", bbox_to_anchor=(-0.02, 1.0), ncol=2,
                frameon=False)  # above the panel: the bars fill it
    ax_b.grid(alpha=0.3, axis="x")
    styles = ("-", "--", "-.", ":")
    for i, m in enumerate(models):
        color = GROUP_COLORS[i % len(GROUP_COLORS)]
        ax_t.plot(ts, [_cache_bytes(m, m.kv_heads, t) / GIB for t in ts], styles[i % 4],
                  color=color, label=m.name, lw=1.6)
        ax_t.plot([m.context], [_cache_bytes(m, m.kv_heads, m.context) / GIB], "o", color=color,
                  ms=5)
    ax_t.set_xscale("log", base=2)
    ax_t.set_yscale("log")
    ax_t.yaxis.set_minor_formatter(NullFormatter())
    ax_t.set_xlabel(_("tokens in the cache, t"))
    ax_t.set_ylabel(_("GiB per sequence"))
    ax_t.set_title(_("one sequence, published h_kv (dot: its context)"))
    ax_t.legend(fontsize=SMALL, loc="upper left", ncol=2)
    ax_t.grid(alpha=0.3, which="major")
    figures.suptitle(fig, title)
    return fig


class LiveCacheMemory(LiveFigure):
    """Sliders h_kv and t: the cache of one sequence for each published shape (h_kv capped at h)."""

    layout = None  # fixed_subplots in setup()

    def __init__(self, models=LIVE_MODELS):
        self.models = tuple(models)
        super().__init__()

    def setup(self) -> None:
        _fig, ax = fixed_subplots(1, 1, widths=6.6, heights=2.9, left=1.45, right=0.25,
                                  bottom=0.75, top=0.5, fig=self.fig)
        y = np.arange(len(self.models))[::-1]
        self.bars = ax.barh(y, np.ones(len(y)), left=1e-3, height=0.5, color="C0",
                            label=_("h_kv of the slider"), zorder=3)
        self.published, = ax.plot(np.ones(len(y)), y, "D", color="k", ms=7, zorder=4,
                                  label=_("published h_kv"))
        self.mha, = ax.plot(np.ones(len(y)), y, "o", mfc="none", mec="C3", ms=9, mew=1.5,
                            zorder=4, label=_("h_kv = h (MHA)"))
        ax.set_yticks(y, [f"{m.name}\n(h {m.heads}, h_kv {m.kv_heads})" for m in self.models],
                      fontsize=SMALL)
        ax.set_xscale("log")
        ax.set_xlim(1e-3, 2e3)
        ax.set_ylim(-0.7, len(y) - 0.3)
        ax.set_xlabel(_("GiB per sequence (float16, all layers, keys and values)"))
        ax.legend(fontsize=SMALL, loc="lower right")
        ax.grid(alpha=0.3, axis="x")
        self.title = ax.set_title(  # as wide as update()'s: the layout is computed once
            _("h_kv = {h_kv} (capped at each model's h), t = {t} tokens").format(
                h_kv="00", t="000,000"), fontsize=SMALL)
        self.blit([*self.bars, self.published, self.mha, self.title])

    def update(self, h_kv: int = 8, t: int = 4096) -> str:
        h_kv, t = int(h_kv), int(t)
        if h_kv < 1 or h_kv & (h_kv - 1):
            raise ValueError(f"h_kv must be a power of two >= 1, got {h_kv!r}")
        if t < 1:
            raise ValueError(f"t must be >= 1, got {t!r}")
        lines = []
        for bar, m in zip(self.bars, self.models, strict=True):
            k = min(h_kv, m.heads)
            bar.set_width(_cache_bytes(m, k, t) / GIB - 1e-3)
            lines.append(_("{name}: h_kv = {k} of h = {h}: {per_token:.3f} MiB per token, "
                           "{total:.2f} GiB at t = {t} (published h_kv = {pub}: {pub_total:.2f} "
                           "GiB; MHA: {mha_total:.2f} GiB)").format(
                name=m.name, k=k, h=m.heads, per_token=_cache_bytes(m, k, 1) / 2 ** 20,
                total=_cache_bytes(m, k, t) / GIB, t=f"{t:,}", pub=m.kv_heads,
                pub_total=_cache_bytes(m, m.kv_heads, t) / GIB,
                mha_total=_cache_bytes(m, m.heads, t) / GIB))
        self.published.set_xdata([_cache_bytes(m, m.kv_heads, t) / GIB for m in self.models])
        self.mha.set_xdata([_cache_bytes(m, m.heads, t) / GIB for m in self.models])
        self.title.set_text(_("h_kv = {h_kv} (capped at each model's h), t = {t} tokens").format(
            h_kv=h_kv, t=f"{t:,}"))
        return "\n".join(lines)


def plot_accuracy_vs_cache(cache_bytes: dict, series: dict):
    """Held-out accuracy against cache bytes per token: one line per way of getting the model.

    cache_bytes : {h_kv: bytes per token}; series : {label: {h_kv: accuracy}}; each label is
    shown translated when the catalog has it (NOTEBOOK_TITLES), else as given.
    """
    title = _("The small model: accuracy against the cache it needs (one seed)")
    fig, ax = fixed_subplots(1, 1, widths=5.6, heights=3.0, left=0.9, right=3.3, bottom=0.75,
                             top=0.5, min_width=figures.text_width(title) + 0.3)
    markers = ("o", "s", "^", "v", "D", "P")
    for i, (label, accs) in enumerate(series.items()):
        ks = sorted(accs)
        ax.plot([cache_bytes[k] for k in ks], [accs[k] for k in ks], markers[i % 6] + "-",
                color=GROUP_COLORS[i % len(GROUP_COLORS)], label=_(label), ms=7, lw=1.4)
    ticks = sorted(cache_bytes.values())
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks, [f"{b:,}\n(h_kv = {k})" for k, b in sorted(cache_bytes.items(),
                                                                      key=lambda kv: kv[1])])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(ticks[0] / 1.3, ticks[-1] * 1.3)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(_("cache bytes per token (float64, one layer)"))
    ax.set_ylabel(_("held-out accuracy"))
    ax.legend(fontsize=SMALL, loc="upper left", bbox_to_anchor=(1.03, 1.0))
    ax.grid(alpha=0.3)
    figures.suptitle(fig, title)
    return fig


# --- self-checks --------------------------------------------------------------

def check_grouped_output(answer, Q, K, V) -> Verdict:
    """Check grouped-query attention: query head r reads K/V head r // (h / h_kv)."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    h, h_kv, d_k = Q.shape[-3], K.shape[-3], Q.shape[-1]
    g = h // h_kv
    right = ac.grouped_query_attention(Q, K, V)[0]  # (h, n, d_v); not "_": the translation
    K_rep, V_rep = np.repeat(K, g, axis=-3), np.repeat(V, g, axis=-3)  # heads 0, 0, 1, 1
    K_tile, V_tile = np.tile(K, (g, 1, 1)), np.tile(V, (g, 1, 1))  # heads 0, 1, 0, 1: r % h_kv
    S = Q @ np.swapaxes(K_rep, -1, -2)  # (h, n, m)
    mistakes = {
        "gqa_heads_tiled": ac.scaled_dot_product_attention(Q, K_tile, V_tile)[0],
        "mha_scaled_by_d_model": ac.softmax(S / np.sqrt(h * d_k)) @ V_rep,
        "no_scaling": ac.softmax(S) @ V_rep,
        "divide_by_d_k": ac.softmax(S / d_k) @ V_rep,
        "gqa_first_kv_head_only": ac.scaled_dot_product_attention(
            Q, np.repeat(K[:1], h, axis=-3), np.repeat(V[:1], h, axis=-3))[0],
    }
    context = {"scale": "sqrt(d_model)", "d_k": d_k, "d_model": h * d_k}
    return check_value(answer, right, _("grouped-query output"), mistakes, context=context)


def check_cached_mask(answer, n: int, m: int) -> Verdict:
    """Check the causal mask of n new queries over m keys (m - n cached): causal_mask(n, m)."""
    right = ac.causal_mask(n, m)  # (n, m)
    blocked = ~np.isfinite(right)
    mistakes = {
        "mask_top_left_with_cache": ac.causal_mask(m)[:n],  # torch's is_causal=True for n != m
        "mask_hides_diagonal": np.where(np.arange(m)[None, :] >= np.arange(m - n, m)[:, None],
                                        -np.inf, 0.0),
        "mask_multiplicative": (~blocked).astype(float),
        "mask_boolean_blocked": blocked.astype(float),
        "mask_large_negative": np.where(blocked, -1e9, 0.0),  # the right keys, a finite fill
        "mask_finfo_min": np.where(blocked, np.finfo(float).min, 0.0),
    }
    if is_unanswered(answer):
        return unanswered(_("mask of the new queries, shape (n, m)"))
    if np.shape(answer) == (n, n) and n != m:
        return Verdict(WRONG, _("Not quite: your mask is ({n}, {n}), one column per query. With a "
                                "cache the new queries see the cached keys too: one column per "
                                "key in the cache, the new ones included.").format(n=n))
    verdict = check_value(answer, right, _("mask of the new queries"), mistakes)
    if verdict.mistake in FINITE_FILLS:  # the right keys and the same weights: another convention
        label, why = named(verdict.mistake)
        return Verdict(MISTAKE, _("Same weights, another convention: you wrote {label}. {why}")
                       .format(label=label, why=sentence(why)), verdict.mistake)
    return verdict


# finite stand-ins for -inf (notebook 04, section 8): their verdict does not call them a bug
FINITE_FILLS = ("mask_large_negative", "mask_finfo_min")


def check_cache_bytes_per_token(answer, layers: int, h: int, h_kv: int, d_k: int,
                                bytes_per_number: int) -> Verdict:
    """Check the KV cache per token: 2 * layers * h_kv * d_k * bytes (keys and values)."""
    right = 2 * layers * h_kv * d_k * bytes_per_number
    if not is_unanswered(answer) and (isinstance(answer, str) or np.ndim(answer) != 0):
        return Verdict(WRONG, _("Give the number of bytes as a single number, got "
                                "{answer!r}.").format(answer=answer))
    mistakes = {"kv_cache_query_heads": 2 * layers * h * d_k * bytes_per_number,
                "kv_cache_keys_only": layers * h_kv * d_k * bytes_per_number,
                "kv_cache_one_layer": 2 * h_kv * d_k * bytes_per_number,
                "kv_cache_in_kib": right / 2 ** 10,
                "kv_cache_in_bits": right * 8}
    v = check_value(answer, right, _("cache bytes per token"), mistakes, atol=0.5)
    if v.status == WRONG and not is_unanswered(answer):
        got = float(answer)  # what is off, never the expected count itself
        side = _("too large") if got > right else _("too small")
        return Verdict(WRONG, _("Not quite: your count {got} is {side}. Multiply what one token "
                                "adds to the cache: keys and values, in every layer, in each K/V "
                                "head, d_k numbers of {b} bytes.").format(
            got=f"{got:,g}", side=side, b=bytes_per_number))
    return v


def check_fewer_scores(answer) -> Verdict:
    """True or False: with h_kv < h the attention computes fewer query-key scores (False)."""
    if is_unanswered(answer):
        return unanswered(_("True or False"))
    if not isinstance(answer, (bool, np.bool_)):
        return Verdict(WRONG, _("Answer with True or False (no quotes), got {answer!r}.").format(
            answer=answer))
    if not bool(answer):
        return Verdict(CORRECT, _(
            "Correct: False. Every one of the h query heads still compares its queries with all m "
            "keys: h * n * m scores, as many as multi-head attention. What shrinks is what is "
            "stored and read: the K/V projections and the cache, by h / h_kv."))
    label, why = named("gqa_fewer_scores")
    return Verdict(MISTAKE, _('Not quite: this is the classic mistake "{label}". {why}').format(
        label=label, why=sentence(why)), "gqa_fewer_scores")


# --- this notebook's entries of checks.MISTAKES and checks.QUESTIONS ---------------------------
# The mistakes its checks name (those several notebooks name are in course/mistakes.py), and
# the hint and worked solution of each of its questions (course/questions.py gathers them).

MISTAKES = {
    "gqa_heads_tiled": Mistake(
        "13",
        N_("K/V heads repeated in the wrong order (r % h_kv)"),
        N_("query head r reads K/V head r // (h / h_kv): the heads of one group are neighbours, "
           "so np.repeat(K, h // h_kv, axis=-3) gives K/V heads 0, 0, 1, 1 for h = 4, h_kv = 2. "
           "np.tile gives 0, 1, 0, 1 (head r % h_kv), which pairs query heads with another "
           "group's keys: a model trained one way computes something else the other way.")),
    "gqa_first_kv_head_only": Mistake(
        "13",
        N_("every query head reading K/V head 0"),
        N_("that is multi-query attention with the first head's keys; with h_kv key/value heads "
           "each group of h / h_kv query heads has its own.")),
    "mask_top_left_with_cache": Mistake(
        "13",
        N_("the top-left causal mask with a cache (torch's is_causal=True for n != m)"),
        N_("the n new queries are the LAST n of the m positions: query i sits at position "
           "i + m - n and sees keys 0 .. i + m - n. The top-left mask lets query i see only keys "
           "0 .. i, as if the new queries came first, and hides most of the cache from them. "
           "ac.causal_mask(n, m) (torch: causal_lower_right) is aligned at the bottom right.")),
    "kv_cache_query_heads": Mistake(
        "13",
        N_("counting the query heads h instead of the K/V heads h_kv"),
        N_("the cache holds keys and values, and there are only h_kv of those heads; the queries "
           "of the h heads are used once and never cached.")),
    "kv_cache_keys_only": Mistake(
        "13",
        N_("keys only, no values"),
        N_("the cache holds a key AND a value per position and K/V head: the factor 2.")),
    "kv_cache_one_layer": Mistake(
        "13",
        N_("one layer only"),
        N_("every layer has its own keys and values, so its own cache: multiply by the layers.")),
    "kv_cache_in_kib": Mistake(
        "13",
        N_("kibibytes instead of bytes"),
        N_("that is the count in KiB (bytes / 1,024); the question asks for bytes.")),
    "kv_cache_in_bits": Mistake(
        "13",
        N_("bits instead of bytes"),
        N_("that is the count in bits (8 per byte); the question asks for bytes.")),
    "gqa_fewer_scores": Mistake(
        "13",
        N_("sharing K/V heads computes fewer scores"),
        N_("each of the h query heads still compares its n queries with all m keys, h * n * m "
           "scores as in multi-head attention; sharing saves the K/V projections, the cache and "
           "the memory traffic of reading it, not the score arithmetic.")),
}

QUESTIONS = {
    "13.grouped_output": Question(
        N_("h = 4 query heads share h_kv = 2 key/value heads, so each K/V head serves a group of "
           "two neighbouring query heads. Make K and V as many heads as Q, in the order that "
           "pairs query head r with K/V head r // 2, then attend as in one multi-head call."),
        "ac.scaled_dot_product_attention(Q, np.repeat(K, 2, axis=0), np.repeat(V, 2, axis=0))[0]",
        N_("np.repeat(K, 2, axis=0) repeats each K/V head in place: heads 0, 0, 1, 1, so query "
           "heads 0 and 1 read K/V head 0 and heads 2 and 3 read K/V head 1, which is r // 2. "
           "Then every head is ordinary scaled dot-product attention, divided by sqrt(d_k) = "
           "sqrt(2), the width of one head. The output has shape (h, n, d_v) = (4, 3, 3) and "
           "equals ac.grouped_query_attention(Q, K, V)[0]. np.tile(K, (2, 1, 1)) would give "
           "0, 1, 0, 1: the wrong pairing.")),
    "13.cached_mask": Question(
        N_("The cache holds 4 positions and 3 new tokens arrive: the queries are at positions 4, "
           "5 and 6, the keys at 0 .. 6. Which keys may the query at position 4 see?"),
        "np.where(np.arange(7)[None, :] > np.arange(4, 7)[:, None], -np.inf, 0.0)",
        N_("Row i is the query at position i + m - n = i + 4. It may see every key up to its own "
           "position: row 0 blocks keys 5 and 6, row 1 blocks key 6, row 2 blocks nothing. That "
           "is ac.causal_mask(3, 7), the last three rows of the 7 x 7 causal mask. The top-left "
           "mask, the first three rows (torch's is_causal=True with n != m), would hide keys "
           "1 .. 6 from the first new query.")),
    "13.cache_bytes_per_token": Question(
        N_("One token adds a key and a value in every layer, in each of the h_kv key/value heads, "
           "d_k numbers each. Which of the given numbers is not part of it?"),
        "2 * 28 * 4 * 128 * 2",
        N_("2 (a key and a value) x 28 layers x h_kv = 4 K/V heads x d_k = 128 numbers x 2 bytes "
           "= 57,344 bytes = 56 KiB per token. The h = 28 query heads do not enter: queries are "
           "not cached. With h_kv = h = 28 it would be seven times as much.")),
    "13.fewer_scores": Question(
        N_("Count the score entries QK^T of one layer: how many query heads compute them, with "
           "how many queries and keys each? Which of these numbers does h_kv change?"),
        "False",
        N_("Every query head r still computes its (n, m) scores against the keys of its group: "
           "h * n * m entries, exactly as many as multi-head attention. Grouping shrinks W_K and "
           "W_V, the keys and values computed, and above all the cache and the bytes read from it "
           "at every generated token; when decoding is limited by memory traffic, as it usually "
           "is, that is where the time goes.")),
}
