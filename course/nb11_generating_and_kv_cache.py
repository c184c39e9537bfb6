"""Notebook 11, Generating and the KV cache: its figures, live figure and self-checks.

The lesson itself (greedy generation, the cached decoding step, the cost counts) is in
notebooks/11_generating_and_kv_cache.ipynb; this module holds what a learner may skip
(drawing, widget wiring, the checks' diagnoses). Its tests are in
tests/test_nb11_generating_and_kv_cache.py.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter

import attention_core as ac
import attention_learning as al
from course.checks import (
    CORRECT,
    MISTAKE,
    WRONG,
    Verdict,
    as_float,
    check_value,
    is_unanswered,
    named,
    sentence,
    unanswered,
)
from course.checks import shape_off
from course.checks import hint as hint, solution as solution  # offered in the check cells
from course.checks import Mistake, Question  # of its own entries, at the end
from course import describe, figures
from course.figures import SMALL, fixed_subplots
from course.i18n import N_, _
from course.live import LiveFigure

HEAD_COLORS = ("C0", "C1", "C2", "C4")

# --- figures and live figure ----------------------------------------------------


def plot_costs(T_counted, counts: dict, T_measured=None, times: dict | None = None):
    """Multiply-adds to generate a sequence of T tokens (left) and, if given, measured seconds (right).

    counts / times : {"recompute": array over T, "cached": array over T}.
    """
    panels = 1 if times is None else 2
    title = _("Generating T tokens one at a time: recomputing every prefix vs a key/value cache")
    fig, axes = fixed_subplots(1, panels, widths=4.4, heights=2.8, left=1.0, right=0.15,
                               bottom=0.7, top=0.9, wgap=1.1, squeeze=False,
                               min_width=figures.text_width(title) + 0.3)
    styles = {"recompute": ("C3", "o-", _("recompute the prefix")),
              "cached": ("C0", "s-", _("KV cache"))}
    series = [(axes[0, 0], T_counted, counts, _("multiply-adds, whole sequence"),
               _("exact count (数え上げ)"))]
    if times is not None:
        series.append((axes[0, 1], T_measured, times, _("CPU seconds, whole sequence"),
                       _("measured on this machine (計測)")))
    for ax, Ts, values, ylabel, panel_title in series:
        for name, (color, style, label) in styles.items():
            ax.plot(Ts, values[name], style, color=color, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(_("tokens generated, T"))
        ax.set_ylabel(ylabel)
        ax.set_title(panel_title)
        ax.yaxis.set_minor_formatter(NullFormatter())  # decades only: no 4 x 10^-2 between them
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=SMALL, loc="upper left")  # the curves rise to the upper right
    if times is not None:   # its text alternative gives no timings: they differ on every run
        describe.mark_measured(axes[0, 1])
    figures.suptitle(fig, title)
    return fig


def _generation_matrix(step_weights, n: int, head: int) -> np.ndarray:
    """Rows = generation steps, columns = key positions; NaN where the cache did not reach yet."""
    M = np.full((len(step_weights), n), np.nan)
    for k, w in enumerate(step_weights):
        w = np.asarray(w, dtype=float)  # (h, t + 1): the new query over the cache
        M[k, :w.shape[-1]] = w[head]
    return M


def plot_generation_attention(step_weights, labels, prompt_len: int):
    """One panel per head: the attention of each generated position over the cache it had."""
    h = np.shape(step_weights[0])[0]
    n = len(labels)
    title = _("Each generation step: one new query over the keys in the cache (grey: not yet "
              "cached)")
    fig, axes = fixed_subplots(1, h, widths=4.0, heights=2.0, left=1.55, right=1.3, bottom=0.85,
                               top=0.85, wgap=0.35, sharey=True, squeeze=False,
                               min_width=figures.text_width(title) + 0.3)
    cmap = plt.get_cmap("Blues").with_extremes(bad="0.55")  # not in the cache yet: grey, as in 04
    for r, ax in enumerate(axes[0]):
        im = ax.imshow(np.ma.masked_invalid(_generation_matrix(step_weights, n, r)), cmap=cmap,
                       vmin=0, vmax=1, interpolation="none")
        ax.set_xticks(range(n), labels)
        ax.set_yticks(range(len(step_weights)),
                      [_("pos {position}").format(position=prompt_len - 1 + k)
                       for k in range(len(step_weights))])
        ax.set_xlabel(_("cached key position j (its token)"))
        ax.set_title(_("head {r}").format(r=r))
        ax.label_outer()
    axes[0, 0].set_ylabel(_("new query, step by step"))
    figures.colorbar(fig, im, axes[0], label=_("weight (注意重み)"))
    figures.suptitle(fig, title)
    return fig


class LiveKVCache(LiveFigure):
    """A slider over generation steps: the new query's weights over the cache, and the work so far."""

    layout = None  # fixed_subplots in setup()

    def __init__(self, step_weights, labels, prompt_len: int, step_costs: dict):
        self.w = [np.asarray(w, dtype=float) for w in step_weights]  # each (h, t + 1)
        self.labels, self.prompt_len = list(labels), int(prompt_len)
        self.costs = {k: np.asarray(v, dtype=float) for k, v in step_costs.items()}  # per step
        super().__init__()

    def setup(self) -> None:
        n, h = len(self.labels), self.w[0].shape[0]
        _fig, (ax_w, ax_c) = fixed_subplots(1, 2, widths=(5.0, 3.6), heights=2.8, left=0.9,
                                            right=0.15, bottom=0.85, top=0.45, wgap=1.15,
                                            fig=self.fig)
        width = 0.8 / h
        self.bars = [ax_w.bar(np.arange(n) + (r - (h - 1) / 2) * width, np.zeros(n), width=width,
                              color=HEAD_COLORS[r % len(HEAD_COLORS)],
                              label=_("head {r}").format(r=r), zorder=3)
                     for r in range(h)]
        self.future = ax_w.axvspan(n - 0.5, n - 0.5, color="0.85", zorder=1)  # not cached yet
        ax_w.set_xlim(-0.5, n - 0.5)
        ax_w.set_ylim(0, 1.05)
        ax_w.set_xticks(range(n), self.labels)
        ax_w.set_xlabel(_("cached key position j (its token)"))
        ax_w.set_ylabel(_("weight of the new query"))
        ax_w.legend(fontsize=SMALL, loc="upper left")
        steps = np.arange(1, len(self.w) + 1)
        for name, color, label in (("recompute", "C3", _("recompute the prefix")),
                                   ("cached", "C0", _("KV cache"))):
            ax_c.plot(steps, np.cumsum(self.costs[name]), "o-", color=color, label=label, ms=4)
        self.marker, = ax_c.plot([1], [0], "o", ms=11, mfc="none", mec="k", zorder=5)
        self.marker2, = ax_c.plot([1], [0], "o", ms=11, mfc="none", mec="k", zorder=5)
        ax_c.set_yscale("log")
        ax_c.set_xlabel(_("generated tokens so far"))
        ax_c.set_ylabel(_("multiply-adds so far"))
        ax_c.legend(fontsize=SMALL, loc="upper left")
        ax_c.grid(alpha=0.3)
        self.ax_w = ax_w
        self.title = ax_w.set_title(  # as wide as update()'s: the layout is computed once
            _("step {step}: query at position {t} reads {cached} cached keys").format(
                step=0, t="00", cached="00"), fontsize=SMALL)
        self.blit([*(b for c in self.bars for b in c), self.future, self.marker, self.marker2,
                   self.title])

    def update(self, step: int = 0) -> str:
        k = int(step)
        if not 0 <= k < len(self.w):
            raise ValueError(f"step must be in 0..{len(self.w) - 1}, got {step!r}")
        w = self.w[k]  # (h, t + 1)
        h, cached = w.shape
        t = cached - 1  # the new query's position
        for r, container in enumerate(self.bars):
            for j, bar in enumerate(container):
                bar.set_height(w[r, j] if j < cached else 0.0)
        self.future.set_x(cached - 0.5)
        self.future.set_width(len(self.labels) - cached)
        done = k + 1
        totals = {name: float(np.sum(v[:done])) for name, v in self.costs.items()}
        self.marker.set_data([done], [totals["recompute"]])
        self.marker2.set_data([done], [totals["cached"]])
        self.title.set_text(_("step {step}: query at position {t} reads {cached} cached "
                              "keys").format(step=k, t=t, cached=cached))
        return "\n".join([
            _("step {step}: the new query at position {t} (token {token}) predicts the token at "
              "{next}").format(step=k, t=t, token=self.labels[t], next=t + 1),
            _("cache: K and V of positions 0..{t}, shape (h, t + 1, d) = ({h}, {cached}, "
              "d)").format(t=t, h=h, cached=cached),
            *(_("head {r} weights: {weights}").format(r=r,
                                                      weights=" ".join(f"{x:.2f}" for x in w[r]))
              for r in range(h)),
            _("this step: {cached} multiply-adds with the cache, {recompute} recomputing the "
              "prefix").format(cached=f"{int(self.costs['cached'][k]):,}",
                               recompute=f"{int(self.costs['recompute'][k]):,}")])


# --- self-checks --------------------------------------------------------------

def check_cache_shape(answer, h: int, t: int, d_k: int, d_model: int) -> Verdict:
    """Check the shape of one layer's key cache after t positions: (h, t, d_k)."""
    if is_unanswered(answer):
        return unanswered(_("shape of the key cache, as a tuple"))
    try:
        got = tuple(int(x) for x in answer)
    except (TypeError, ValueError):
        return Verdict(WRONG, _("Give the shape as a tuple of integers, got {answer!r}.").format(
            answer=answer))
    right = (h, t, d_k)
    if got == right:
        return Verdict(CORRECT, _("Correct: ({h}, {t}, {d_k}) = (h, t, d_k): one row per cached "
                                  "position in each of the {h} heads.").format(h=h, t=t, d_k=d_k))
    wrongs = {"cache_no_heads": [(t, d_k), (t, h * d_k)],
              "cache_transposed": [(h, d_k, t)],
              "cache_off_by_one": [(h, t - 1, d_k), (h, t + 1, d_k)],
              "cache_d_model": [(h, t, d_model)]}
    for key, shapes in wrongs.items():
        if got in shapes:
            label, why = named(key)
            return Verdict(MISTAKE, _("Not quite: {got} is {label}. {why}").format(
                got=got, label=label, why=sentence(why)), key)
    return Verdict(WRONG, _("Not quite: you gave {got}; {off}. Think of one (t, d_k) block of "
                            "keys per head.").format(got=got, off=shape_off(got, right)))


def check_cached_attention(answer, q, K_old, V_old, k_new, v_new) -> Verdict:
    """Check the new position's output softmax(q K^T / sqrt(d_k)) V over the cache with k_new, v_new appended."""
    q, K_old, V_old, k_new, v_new = (np.asarray(a, dtype=float) for a in (q, K_old, V_old, k_new, v_new))
    K = np.concatenate([K_old, k_new], axis=0)  # (t, d_k): the old keys and the new one
    V = np.concatenate([V_old, v_new], axis=0)  # (t, d_v)
    d_k = q.shape[-1]
    right = ac.scaled_dot_product_attention(q, K, V)[0]  # (1, d_v); not "_": the translation
    first_row = ac.causal_mask(K.shape[0])[:1]  # the mask of position 0: the classic slip
    mistakes = {
        "cache_new_key_missing": ac.scaled_dot_product_attention(q, K_old, V_old)[0],
        "cache_row_masked": ac.scaled_dot_product_attention(q, K, V, first_row)[0],
        "cache_no_scaling": ac.softmax(q @ K.T) @ V,
    }
    if d_k > 1:
        mistakes["divide_by_d_k"] = ac.softmax(q @ K.T / d_k) @ V
    v = check_value(answer, right, _("output of the new position"), mistakes)
    if v.status == WRONG and np.shape(as_float(answer)) == right.shape:
        off = np.argwhere(~np.isclose(as_float(answer), right, atol=1e-4, rtol=1e-6))
        return Verdict(WRONG, _("Not quite: your output has the right shape {shape}, but entries "
                                "{entries} are off (answers within 1e-4 count as correct). Check "
                                "the scores, the softmax and the product with V step by "
                                "step.").format(shape=right.shape,
                                                entries=", ".join(str(tuple(int(i) for i in e))
                                                                  for e in off)))
    return v


def check_total_score_entries(answer, T: int, cached: bool) -> Verdict:
    """Score entries (query-key products, one head) to generate positions 1..T: sum t or sum t^2."""
    t = np.arange(1, T + 1)
    right = int(np.sum(t)) if cached else int(np.sum(t ** 2))
    what = (_("score entries with the cache for T = {T}") if cached
            else _("score entries recomputing every prefix for T = {T}")).format(T=T)
    if not is_unanswered(answer) and np.ndim(answer) != 0:
        return Verdict(WRONG, _("Give the count as a single number, got shape {shape}.").format(
            shape=np.shape(answer)))
    if isinstance(answer, str):
        return Verdict(WRONG, _("Your answer {answer!r} is text; give the count as a "
                                "number.").format(answer=answer))
    off_by_one = (int(np.sum(t - 1)), int(np.sum((t + 1)))) if cached else (
        int(np.sum((t - 1) ** 2)), int(np.sum((t + 1) ** 2)))
    mistakes = {"count_off_by_one": off_by_one[0]}
    if cached:
        mistakes["cache_count_quadratic"] = int(np.sum(t ** 2))
    else:
        mistakes["recompute_count_last_step_only"] = T * T
        mistakes["recompute_count_cached"] = int(np.sum(t))
    v = check_value(answer, right, what, mistakes, atol=0.5)
    if v.status == WRONG and not is_unanswered(answer) and np.isclose(float(answer), off_by_one[1]):
        label, why = named("count_off_by_one")
        return Verdict(MISTAKE, _('Not quite: this is the classic mistake "{label}". {why}').format(
            label=label, why=sentence(why)), "count_off_by_one")
    if v.status == WRONG and as_float(answer) is not None and np.ndim(answer) == 0:
        got = float(answer)  # what is off, never the expected count itself
        side = _("too large") if got > right else _("too small")
        far = (_("by more than a factor of 10") if not right / 10 < got < right * 10
               else _("by less than a factor of 10"))
        return Verdict(WRONG, _("Not quite: your count {got} is {side} ({far}). Write down the "
                                "score entries of the steps t = 1, 2, 3 first, then add them up "
                                "to t = T.").format(got=f"{got:,.0f}", side=side, far=far))
    return v


# --- the head ablation and the conceptual questions ---------------------------------------

def head_ablation(params: dict, tokens, targets, config, answer_rows, right_keys,
                  ignore: int = -100) -> dict:
    """Accuracy with every head, and with each head's output zeroed; each head's share of answer
    rows whose largest weight is on the right key.

    Zeroing head r's output o^(r) is zeroing its d_v rows of W_O (concat(o) W_O = sum_r o^(r)
    W_O^(r)), so the core's lm_forward runs the ablated model unchanged.
    answer_rows : query positions of the answers; right_keys : the key each should read.
    """
    d_v = config.d_model // config.num_heads
    counted = targets != ignore

    def accuracy(p):
        steps = al.lm_forward(p, tokens, config)
        return float(np.mean(steps.logits.argmax(axis=-1)[counted] == targets[counted])), steps

    full, steps = accuracy(params)
    zeroed = []
    for r in range(config.num_heads):
        W_O = params["W_O"].copy()
        W_O[r * d_v:(r + 1) * d_v] = 0.0  # head r's rows: its output no longer reaches the residual
        zeroed.append(accuracy({**params, "W_O": W_O})[0])
    w = steps.weights[..., answer_rows, :]  # (batch, h, answers, n)
    on_key = w.argmax(axis=-1) == np.asarray(right_keys)  # (batch, h, answers)
    return {"accuracy": full, "zeroed": zeroed,
            "on_key": [float(np.mean(on_key[:, r])) for r in range(config.num_heads)],
            "both_on_key": float(np.mean(on_key.all(axis=1))),
            "either_on_key": float(np.mean(on_key.any(axis=1)))}


def _check_true_false(answer, right: bool, mistake: str, correct: str) -> Verdict:
    if is_unanswered(answer):
        return unanswered(_("True or False"))
    if not isinstance(answer, (bool, np.bool_)):
        return Verdict(WRONG, _("Answer with True or False (no quotes), got {answer!r}.").format(
            answer=answer))
    if bool(answer) == right:
        return Verdict(CORRECT, correct)
    label, why = named(mistake)
    return Verdict(MISTAKE, _('Not quite: this is the classic mistake "{label}". {why}').format(
        label=label, why=sentence(why)), mistake)


def check_weight_explains(answer) -> Verdict:
    """True or False: a head's weights on the right key explain the model's answer (False)."""
    return _check_true_false(answer, False, "weight_is_explanation", _(
        "Correct: False. A weight says where a head reads, not whether the answer depends on it; "
        "the ablation, which removes the head and measures, is what tests that."))


def check_cache_saves_memory(answer) -> Verdict:
    """True or False: the KV cache saves memory (False: it spends memory to save time)."""
    return _check_true_false(answer, False, "cache_saves_memory", _(
        "Correct: False. The cache saves arithmetic, hence time, and spends memory on it: "
        "2 * layers * h * t * d_k numbers per sequence that recomputing would not keep."))


# --- this notebook's entries of checks.MISTAKES and checks.QUESTIONS ---------------------------
# The mistakes its checks name (those several notebooks name are in course/mistakes.py), and
# the hint and worked solution of each of its questions (course/questions.py gathers them).

MISTAKES = {
    "cache_no_heads": Mistake(
        "11",
        N_("the cache without its head axis"),
        N_("every head has its own keys: the cache of one layer is (h, t, d_k), one (t, d_k) "
           "block per head.")),
    "cache_transposed": Mistake(
        "11",
        N_("a transposed cache"),
        N_("keys are stored one row per position, as K is (m, d_k) in the forward pass: "
           "(h, t, d_k), not (h, d_k, t).")),
    "cache_off_by_one": Mistake(
        "11",
        N_("off by one"),
        N_("after t tokens have gone through the model the cache holds t keys: the prompt's and "
           "every generated token's, including the newest one.")),
    "cache_d_model": Mistake(
        "11",
        N_("d_model instead of d_k"),
        N_("the cache stores keys after W_K and the split into heads: each is d_k wide, not "
           "d_model.")),
    "cache_row_masked": Mistake(
        "11",
        N_("a causal mask on the single new row"),
        N_("the new query is the LAST position: it may see every cached key. causal_mask(t)[0] "
           "is the mask of the FIRST position and hides all keys but one.")),
    "cache_no_scaling": Mistake(
        "11",
        N_("no 1/sqrt(d_k)"),
        N_("the cached step computes the same attention as the full pass: "
           "softmax(q K^T / sqrt(d_k)) V.")),
    "recompute_count_last_step_only": Mistake(
        "11",
        N_("counting only the last step"),
        N_("without a cache EVERY step recomputes its whole prefix: step t compares t queries "
           "with t keys, t^2 score entries, and the steps add up.")),
    "cache_count_quadratic": Mistake(
        "11",
        N_("the cost of a full recompute"),
        N_("with a cache only the new query is compared with the t cached keys: t score entries "
           "at step t, not t^2.")),
    "recompute_count_cached": Mistake(
        "11",
        N_("the cached count where the recomputed one is asked"),
        N_("without a cache every step recomputes ALL its t queries, not only the new one: "
           "t^2 score entries at step t, not t.")),
    "weight_is_explanation": Mistake(
        "11",
        N_("an attention weight is an explanation"),
        N_("a weight says where a head reads, not that the answer depends on what it reads. In "
           "this notebook each head alone puts its largest weight on the right key on most rows, "
           "yet zeroing either head costs only a few points of accuracy: the other reads the "
           "same key. Only an intervention (zero the head, change the token) tests dependence.")),
    "cache_saves_memory": Mistake(
        "11",
        N_("the KV cache saves memory"),
        N_("the cache trades memory for time: it keeps 2 * layers * h * t * d_k numbers per "
           "sequence (0.5 MiB per token for Llama 2 7B in float16) so as not to recompute them; "
           "recomputing needs no cache at all.")),
    "count_off_by_one": Mistake(
        "11",
        N_("off by one in the sum"),
        N_("the steps run over t = 1, ..., T (the first token sees one key, the last sees T): "
           "check the first and the last term of your sum.")),
}

QUESTIONS = {
    "11.cache_shape": Question(
        N_("Every head keeps its own keys, one row per position that has gone through the model "
           "(the prompt's and the generated ones, the newest included), each of the head's width."),
        "(2, 10, 16)",
        N_("7 prompt tokens and 3 generated ones make t = 10 cached positions. Each of the h = 2 "
           "heads has its own (t, d_k) block of keys, so cache[\"K\"] is (h, t, d_k) "
           "= (2, 10, 16). d_model = 32 is the width before W_K and the split into heads.")),
    "11.cached_attention": Question(
        N_("The new position may attend to every cached position and to itself: put its key and "
           "value at the end of the cache first, then run ordinary attention for the one new "
           "query. Does it need a mask?"),
        "ac.scaled_dot_product_attention(\n"
        "    q, np.concatenate([K_old, k_new]), np.concatenate([V_old, v_new])\n"
        ")[0]",
        N_("np.concatenate stacks the rows: K is (t, d_k) = (5, 4) with the new key last, V is "
           "(5, 3). The new query is the last position, so the causal mask allows it every key and "
           "none is needed; [0] is the output (1, d_v) = (1, 3). Attending with K_old, V_old alone "
           "would leave out the new token itself, and causal_mask(5)[0] is the mask of the FIRST "
           "position, which hides all keys but one.")),
    "11.total_score_entries": Question(
        N_("Without a cache, step t runs attention over the whole prefix of t positions again: t "
           "queries, each against t keys. Add that up over t = 1..T."),
        "sum(t * t for t in range(1, 101))",
        N_("Step t computes t * t score entries, so the total is 1 + 4 + 9 + ... + 100^2 = "
           "T (T + 1) (2T + 1) / 6 = 100 * 101 * 201 / 6 = 338,350. With the cache step t computes "
           "only the new query's t entries, sum t = 5,050; counting only the last step gives "
           "100^2 = 10,000.")),
    "11.weight_explains": Question(
        N_("Look at the ablation of section 6: what happened to the accuracy when head 1, the "
           "head that is on the right key most often, was zeroed? What else reads that key?"),
        "False",
        N_("Head 1 puts its largest weight on the right key on most answer rows, yet with its "
           "output zeroed the model still answers almost as well, because head 0 reads the same "
           "key: the heads duplicate each other. A weight shows where a head reads; whether the "
           "answer depends on it is a question about what happens without it, which only an "
           "intervention (the ablation, or notebook 10's causal test) answers.")),
    "11.cache_saves_memory": Question(
        N_("What does the cached loop keep between steps that the recomputing loop throws away? "
           "Section 4 counts it in bytes."),
        "False",
        N_("The recomputing loop keeps only the tokens; the cached one keeps every layer's keys "
           "and values, 2 * layers * h * t * d_k numbers per sequence, growing by one row per "
           "token (0.5 MiB per token for Llama 2 7B in float16, 2 GiB at its 4,096-token "
           "context). In exchange each step computes one row instead of t: the cache spends "
           "memory to save time.")),
}
