"""Notebook 10, Learning to attend: its figures, live figure and self-checks.

The lesson itself (the task, the training loop, the experiment) is in
notebooks/10_learning_to_attend.ipynb; this module holds what a learner may skip (drawing,
widget wiring, the checks' diagnoses). Its tests are in tests/test_nb10_learning_to_attend.py.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from course.checks import (
    CORRECT,
    as_float,
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
from course import figures
from course.figures import SMALL, fixed_subplots
from course.i18n import N_, _, shown
from course.live import LiveFigure

# The columns of a training log, as the notebook's train() records them, one row per step.
LOG_COLUMNS = ("loss", "accuracy", "dscores_norm", "entropy")

# The titles the notebook gives plot_attention_map: marked here, translated where drawn (_(title)).
NOTEBOOK_TITLES = (N_("trained head, held-out sequence 0"),)

# --- figures and live figure ----------------------------------------------------


def reversal_cells(L: int) -> list[tuple[int, int]]:
    """(query i, key j) of the pattern reversal needs: output position i reads input 2L - 1 - i."""
    return [(i, 2 * L - 1 - i) for i in range(L, 2 * L)]


def pattern_score(weights, L: int) -> dict:
    """How much of the reversal pattern an (n, n) weight matrix shows, on its L output rows.

    Returns {"hits": rows whose largest weight is on the key the task needs, "rows": L,
    "weight": the mean weight on that key}.
    """
    weights = np.asarray(weights, dtype=float)
    rows, keys = np.array(reversal_cells(L)).T
    return {"hits": int(np.sum(weights[rows].argmax(axis=-1) == keys)), "rows": L,
            "weight": float(weights[rows, keys].mean())}


def _outline_cells(ax, cells, color="tab:red"):
    patches = [Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec=color, lw=1.6, zorder=3)
               for i, j in cells]
    for patch in patches:
        ax.add_patch(patch)
    return patches


def _map_axes(ax, labels, L):
    n = len(labels)
    im = ax.imshow(np.zeros((n, n)), cmap="Blues", vmin=0.0, vmax=1.0, interpolation="none")
    ax.set_xticks(range(n), labels)
    ax.set_yticks(range(n), labels)
    ax.set_xlabel(_("key position j (its token)"))
    ax.set_ylabel(_("query position i (its token)"))
    ax.axhline(L - 0.5, color="0.5", lw=0.8, ls=":")  # above: the prompt; below: the output rows
    return im


def plot_training_curves(log):
    """Loss (log scale) and accuracy per training step; log has the columns LOG_COLUMNS."""
    log = np.asarray(log, dtype=float)
    steps = np.arange(len(log))
    title = _("Training the one-layer model to reverse 6 digits (every batch is new data)")
    fig, (ax_loss, ax_acc) = fixed_subplots(1, 2, widths=4.3, heights=2.6, left=0.95, right=0.15,
                                            bottom=0.7, top=0.9, wgap=1.05,
                                            min_width=figures.text_width(title) + 0.3)
    ax_loss.plot(steps, log[:, 0], color="tab:blue")
    ax_loss.set_yscale("log")
    ax_loss.axhline(np.log(8), color="0.5", ls=":", label=_("ln 8: guessing one of 8 digits"))
    ax_loss.set_ylabel(_("cross-entropy loss [nats]"))
    ax_loss.set_title(_("loss on each new batch"))
    ax_acc.plot(steps, log[:, 1], color="tab:green")
    ax_acc.axhline(1 / 8, color="0.5", ls=":", label=_("1/8: guessing"))
    ax_acc.set_ylim(0, 1.05)
    ax_acc.set_ylabel(_("accuracy of the next digit"))
    ax_acc.set_title(_("accuracy on each new batch"))
    for ax, corner in ((ax_loss, "lower left"), (ax_acc, "center right")):
        ax.set_xlabel(_("training step"))
        ax.legend(fontsize=SMALL, loc=corner)  # where the curves are not, once trained
        ax.grid(alpha=0.3)
    figures.suptitle(fig, title)
    return fig


def plot_attention_map(weights, labels, L: int, title: str = N_("learned attention weights")):
    """The (n, n) weights of one sequence, the cells the task needs outlined in red.

    title is shown translated when the catalog has it (the default, NOTEBOOK_TITLES), else as given.
    """
    fig, ax = fixed_subplots(widths=4.2, heights=4.2, left=1.3, right=1.25, bottom=0.85,
                             top=0.75)
    im = _map_axes(ax, labels, L)
    im.set_array(np.asarray(weights, dtype=float))
    _outline_cells(ax, reversal_cells(L))
    ax.set_title(_("{title}\n(red: the key each output position needs)").format(title=shown(title)))
    figures.colorbar(fig, im, ax, shrink=0.8, label=_("attention weight (注意重み)"))
    return fig


def plot_snapshots(maps: dict, log, labels, L: int, steps=(0, 20, 40, 150)):
    """Small multiples: the attention map of one sequence at a few training steps."""
    log = np.asarray(log, dtype=float)
    title = _("The reversal pattern forming during training (red: the key each output position "
              "needs)")
    fig, axes = fixed_subplots(1, len(steps), widths=2.3, heights=2.3, left=1.25, right=0.15,
                               bottom=0.85, top=0.95, wgap=0.25, sharey=True,
                               min_width=figures.text_width(title) + 0.3)
    for ax, step in zip(axes, steps, strict=True):
        im = _map_axes(ax, labels, L)
        im.set_array(np.asarray(maps[step], dtype=float))
        _outline_cells(ax, reversal_cells(L))
        score = pattern_score(maps[step], L)
        ax.set_title(_("step {step}: loss {loss}\n{hits} of {rows} rows on the red key").format(
            step=step, loss=f"{log[step, 0]:.2g}", hits=score["hits"], rows=L), fontsize=SMALL)
        ax.tick_params(labelsize=SMALL)
        ax.label_outer()
        ax.set_xlabel(_("key j") if ax is not axes[0] else _("key position j"))
    figures.suptitle(fig, title)
    return fig


def plot_width_experiment(results: dict, widths):
    """Source note 000's experiment: loss, ||dL/dS|| and attention entropy per step, for every width.

    results : {(d_k, scaled): log} with the columns LOG_COLUMNS; solid = scaled, dashed = not.
    """
    title = _("Same model, data and Adam at several widths d_k: solid with 1/sqrt(d_k), dashed "
              "without")
    fig, axes = fixed_subplots(1, 3, widths=2.85, heights=2.5, left=0.95, right=0.15, bottom=1.3,
                               top=1.05, wgap=0.85, min_width=figures.text_width(title) + 0.3)
    colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.85, len(widths)))
    titles = (_("loss [nats]"),
              _("$\\|\\partial L / \\partial S\\|_F$ at the softmax\ninput (mean of 5 steps)"),
              _("attention entropy,\noutput rows [nats]"))
    for color, d_k in zip(colors, widths, strict=True):
        for scaled, ls in ((True, "-"), (False, "--")):
            log = np.asarray(results[d_k, scaled], dtype=float)
            label = _("d_k = {d_k}, scaled") if scaled else _("d_k = {d_k}, no 1/sqrt(d_k)")
            label = label.format(d_k=d_k)
            grad = np.convolve(log[:, 2], np.ones(5) / 5, mode="valid")  # mean over 5 steps
            axes[0].plot(log[:, 0], ls=ls, color=color, label=label, lw=1.4)
            axes[1].plot(np.arange(2, 2 + len(grad)), grad, ls=ls, color=color, lw=1.4)
            axes[2].plot(log[:, 3], ls=ls, color=color, lw=1.4)
    axes[0].set_yscale("log")
    axes[1].set_yscale("log")
    axes[1].set_ylim(1e-7, 1)
    for ax, panel_title in zip(axes, titles, strict=True):
        ax.set_title(panel_title)
        ax.set_xlabel(_("training step"))
        ax.grid(alpha=0.3)
    fig.legend(handles=axes[0].lines, loc="lower center", ncols=len(widths), fontsize=SMALL,
               frameon=False)  # under the panels: one legend for all three
    figures.suptitle(fig, title)
    return fig


class LiveTraining(LiveFigure):
    """A slider over training steps: the attention map of one sequence then, and the loss curve."""

    layout = None  # fixed_subplots in setup()

    def __init__(self, maps: dict, log, labels, L: int):
        self.maps = {int(k): np.asarray(v, dtype=float) for k, v in maps.items()}  # step -> (n, n)
        self.log = np.asarray(log, dtype=float)
        self.labels, self.L = list(labels), int(L)
        super().__init__()

    def setup(self) -> None:
        _fig, (ax_map, ax_loss) = fixed_subplots(1, 2, widths=(3.6, 4.3), heights=3.6, left=1.3,
                                                 right=0.15, bottom=0.85, top=0.45, wgap=1.05,
                                                 fig=self.fig)
        self.im = _map_axes(ax_map, self.labels, self.L)
        self.outlines = _outline_cells(ax_map, reversal_cells(self.L))  # drawn over the image
        steps = np.arange(len(self.log))
        ax_loss.plot(steps, self.log[:, 0], color="tab:blue", label=_("loss"))
        ax_loss.set_yscale("log")
        ax_loss.set_xlabel(_("training step"))
        ax_loss.set_ylabel(_("cross-entropy loss [nats]"))
        ax_loss.grid(alpha=0.3)
        self.marker, = ax_loss.plot([0], [self.log[0, 0]], "o", color="tab:red", zorder=5)
        self.vline = ax_loss.axvline(0, color="tab:red", lw=1, zorder=4)
        # texts as wide as update()'s (the layout is computed once)
        title = _("step {step}, {hits} of {rows} rows on the red key")
        self.title_map = ax_map.set_title(title.format(step="000", hits=0, rows=6), fontsize=SMALL)
        self.title_loss = ax_loss.set_title(_("loss {loss}, accuracy {accuracy}").format(
            loss="0.000", accuracy="0.00"), fontsize=SMALL)
        self.blit([self.im, *self.outlines, self.marker, self.vline, self.title_map,
                   self.title_loss])

    def update(self, step: int = 0) -> str:
        step = int(step)
        if step not in self.maps:
            raise ValueError(f"step must be one of the snapshots {sorted(self.maps)}, got {step}")
        W = self.maps[step]
        self.im.set_array(W)
        loss, acc = self.log[step, 0], self.log[step, 1]
        self.marker.set_data([step], [loss])
        self.vline.set_xdata([step, step])
        score = pattern_score(W, self.L)
        self.title_map.set_text(_("step {step}, {hits} of {rows} rows on the red key").format(
            step=step, hits=score["hits"], rows=self.L))
        self.title_loss.set_text(_("loss {loss}, accuracy {accuracy}").format(
            loss=f"{loss:.3g}", accuracy=f"{acc:.2f}"))
        return _("step {step}: loss {loss}, accuracy {accuracy} on that step's batch\n"
                 "output rows whose largest weight is on the key the task needs: {hits} of {rows}\n"
                 "mean weight on that key: {weight}").format(
            step=step, loss=f"{loss:.3g}", accuracy=f"{acc:.2f}", hits=score["hits"], rows=self.L,
            weight=f"{score['weight']:.2f}")


# --- the causal test ------------------------------------------------------------


def causal_test(params, config, tokens, L: int, rng) -> dict:
    """Intervene on one input digit of held-out sequences and watch each output row's prediction.

    In a one-layer model attention is the only path from token j to position i (the embeddings,
    the FFN and the layer norms act on each position alone). For every sequence of tokens
    (batch, 2L) and output row i = L..2L-1: set the digit x_j at j = 2L - 1 - i to another digit
    (drawn by rng) and count how often row i's prediction becomes that digit ("follows"); then set
    one other input digit x_k (k != j, drawn by rng) to another digit and count how often row i's
    prediction changes at all. Returns both fractions and the number of (sequence, row) pairs.
    """
    import attention_learning as al  # the model's forward pass

    tokens = np.asarray(tokens)
    batch = tokens.shape[0]
    base = al.lm_forward(params, tokens, config).logits.argmax(axis=-1)  # (batch, 2L)
    follows = changes = 0
    for i in range(L, 2 * L):
        j = 2 * L - 1 - i
        new = (tokens[:, j] + rng.integers(1, 8, size=batch)) % 8  # a different digit, 0..7
        moved = tokens.copy()
        moved[:, j] = new
        follows += int(np.sum(al.lm_forward(params, moved, config).logits[:, i].argmax(-1) == new))
        others = np.array([k for k in range(L) if k != j])
        k = others[rng.integers(0, L - 1, size=batch)]  # one other input digit per sequence
        moved = tokens.copy()
        moved[np.arange(batch), k] = (tokens[np.arange(batch), k] + rng.integers(1, 8, size=batch)) % 8
        changes += int(np.sum(al.lm_forward(params, moved, config).logits[:, i].argmax(-1)
                              != base[:, i]))
    pairs = batch * L
    return {"follows": follows / pairs, "changes": changes / pairs, "pairs": pairs}


# --- self-checks --------------------------------------------------------------

def check_softmax_backward(answer, x, dp) -> Verdict:
    """Check dL/dx = p * (dp - rowsum(p * dp)) for p = softmax(x) over each row of x (n, m)."""
    x, dp = np.asarray(x, dtype=float), np.asarray(dp, dtype=float)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)  # (n, m), rows sum to 1
    mistakes = {
        "softmax_backward_diagonal_only": p * dp,
        "softmax_backward_missing_p": dp - np.sum(p * dp, axis=-1, keepdims=True),
        "softmax_backward_wrong_axis": p * (dp - np.sum(p * dp, axis=0, keepdims=True)),
        "softmax_backward_used_scores": x * (dp - np.sum(x * dp, axis=-1, keepdims=True)),
    }
    return check_value(answer, p * (dp - np.sum(p * dp, axis=-1, keepdims=True)),
                       _("gradient dL/dx of the row softmax"), mistakes)


def check_attention_dQ(answer, Q, K, V, dO) -> Verdict:
    """Check dQ = dS K / sqrt(d_k) of O = softmax(Q K^T / sqrt(d_k)) V for the upstream dO."""
    Q, K, V, dO = (np.asarray(a, dtype=float) for a in (Q, K, V, dO))
    d_k = Q.shape[-1]
    S = Q @ K.T / np.sqrt(d_k)  # (n, m)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)  # (n, m)
    dA = dO @ V.T  # (n, d_v) @ (d_v, m) -> (n, m)
    dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))  # (n, m)
    mistakes = {
        "dQ_no_scale": dS @ K,
        "dQ_skips_softmax": dA @ K / np.sqrt(d_k),
        "dQ_is_dK": dS.T @ Q / np.sqrt(d_k),
    }
    if dS.shape[0] == dS.shape[1]:  # n = m: the transposed dS has the right shape too
        mistakes["dQ_transposed_scores"] = dS.T @ K / np.sqrt(d_k)
    return check_value(answer, dS @ K / np.sqrt(d_k), _("gradient dL/dQ"), mistakes)


def check_reversal_key(answer, i: int, L: int) -> Verdict:
    """Which key j must query position i (L <= i <= 2L - 1) read to predict the next reversed digit?"""
    if is_unanswered(answer):
        return unanswered(_("key position for query i = {i}").format(i=i))
    try:
        j = int(answer)
    except (TypeError, ValueError):
        return Verdict(WRONG, _("Give the key position as a whole number, got {answer!r}.").format(
            answer=answer))
    if j != answer:
        return Verdict(WRONG, _("Give the key position as a whole number, got {answer!r}.").format(
            answer=answer))
    right = 2 * L - 1 - i
    if j == right:
        return Verdict(CORRECT, _("Correct: query {i} predicts the token at position {next}, the "
                                  "reversed digit that sits at input position {right} "
                                  "(j = 2L - 1 - i = {last} - {i}).").format(
            i=i, next=i + 1, right=right, last=2 * L - 1))
    for key, value in (("reversal_off_by_one", 2 * L - i), ("reversal_attends_itself", i),
                       ("reversal_copy", i - L), ("reversal_previous_token", i - 1)):
        if j == value:
            label, why = named(key)
            return Verdict(MISTAKE, _("Not quite: {got} is {label}. {why}").format(
                got=j, label=label, why=sentence(why)), key)
    return Verdict(WRONG, _("Not quite: {got} is not it. Write the sequence out with positions: "
                            "the digits x_0..x_{last} at 0..{last}, the separator at {L}, the "
                            "reversed digits after it; which digit comes at position "
                            "{next}?").format(got=j, last=L - 1, L=L, next=i + 1))


def check_adam_small_gradient(answer, g: float = 1e-6, lr: float = 3e-3, steps: int = 10) -> Verdict:
    """How far does Adam move a parameter whose gradient is g at every one of `steps` steps?"""
    if is_unanswered(answer):
        return unanswered(_("distance the parameter moves in {steps} steps").format(steps=steps))
    value = as_float(answer)
    if value is None:
        return Verdict(WRONG, _("Give the distance as one number, got {answer!r}.").format(
            answer=answer))
    right = steps * lr * g / (g + 1e-8)  # m_hat = g, sqrt(v_hat) = g at every step
    value = abs(value)
    if np.isclose(value, right, rtol=0.02):
        return Verdict(CORRECT, _("Correct: with the same g at every step Adam's m_hat is g and "
                                  "sqrt(v_hat) is |g|, so each step moves the parameter by "
                                  "lr * g / (|g| + eps), almost lr: the size of g cancels."))
    if np.isclose(value, steps * lr * g, rtol=0.1):
        label, why = named("adam_small_gradient_stops")
        return Verdict(MISTAKE, _("Not quite: that is the misconception '{label}'. {why}").format(
            label=label, why=sentence(why)), "adam_small_gradient_stops")
    if value > 0 and abs(np.log10(value / right)) >= 1:
        side = _("too large") if value > right else _("too small")
        return Verdict(WRONG, _("Not quite: {got} is off by more than a factor of 10 ({side}). "
                                "Write down one Adam step for a gradient that is the same at "
                                "every step: what are m_hat and sqrt(v_hat)?").format(
            got=value, side=side))
    return Verdict(WRONG, _("Not quite: {got} has the right order of magnitude but is not it. "
                            "Count the steps, and look at what eps = 1e-8 does next to "
                            "sqrt(v_hat).").format(got=value))
