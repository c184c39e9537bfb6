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
from course.checks import Mistake, Question  # of its own entries, at the end
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


def _outline_cells(ax, cells, color="C3"):
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
    ax_loss.plot(steps, log[:, 0], color="C0")
    ax_loss.set_yscale("log")
    ax_loss.axhline(np.log(8), color="0.5", ls=":", label=_("ln 8: guessing one of 8 digits"))
    ax_loss.set_ylabel(_("cross-entropy loss [nats]"))
    ax_loss.set_title(_("loss on each new batch"))
    ax_acc.plot(steps, log[:, 1], color="C2")
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
    # viridis up to 0.55: its lighter end is too pale for a line on white (3:1, WCAG 1.4.11)
    colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.55, len(widths)))
    titles = (_("loss [nats]"),
              _("$\\|\\partial L / \\partial S\\|_F$ at the softmax input\n(mean of 5 steps)"),
              _("attention entropy\n(output rows) [nats]"))
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
        ax_loss.plot(steps, self.log[:, 0], color="C0", label=_("loss"))
        ax_loss.set_yscale("log")
        ax_loss.set_xlabel(_("training step"))
        ax_loss.set_ylabel(_("cross-entropy loss [nats]"))
        ax_loss.grid(alpha=0.3)
        self.marker, = ax_loss.plot([0], [self.log[0, 0]], "o", color="C3", zorder=5)
        self.vline = ax_loss.axvline(0, color="C3", lw=1, zorder=4)
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


# --- this notebook's entries of checks.MISTAKES and checks.QUESTIONS ---------------------------
# The mistakes its checks name (those several notebooks name are in course/mistakes.py), and
# the hint and worked solution of each of its questions (course/questions.py gathers them).

MISTAKES = {
    "softmax_backward_diagonal_only": Mistake(
        "10",
        N_("only the diagonal of the Jacobian"),
        N_("p * dp keeps diag(p) and drops the - p^T p part (p a row vector): every weight depends on every input "
           "through the shared denominator, so dx = p * (dp - sum_j p_j dp_j).")),
    "softmax_backward_missing_p": Mistake(
        "10",
        N_("forgetting the factor p"),
        N_("the Jacobian entry is p_i (delta_ij - p_j): dx = p * (dp - sum_j p_j dp_j), with the "
           "factor p in front; dp - sum_j p_j dp_j alone is missing it.")),
    "softmax_backward_wrong_axis": Mistake(
        "10",
        N_("the sum over the wrong axis"),
        N_("each row of weights is its own softmax (over the keys), so the sum p . dp runs along "
           "the row, axis=-1, keepdims=True; summing down the columns mixes different queries.")),
    "softmax_backward_used_scores": Mistake(
        "10",
        N_("using the scores instead of the weights"),
        N_("the formula needs the softmax OUTPUT p (the weights), not its input x: "
           "dx = p * (dp - sum_j p_j dp_j) with p = softmax(x).")),
    "dQ_no_scale": Mistake(
        "10",
        N_("forgetting 1/sqrt(d_k) in the backward pass"),
        N_("the scores are Q K^T / sqrt(d_k), so the chain rule brings the same factor back: "
           "dQ = dS K / sqrt(d_k).")),
    "dQ_skips_softmax": Mistake(
        "10",
        N_("skipping the softmax"),
        N_("dA = dO V^T is the gradient of the weights A, not of the scores S; go through the "
           "softmax first, dS = A * (dA - rowsum(A * dA)), then dQ = dS K / sqrt(d_k).")),
    "dQ_is_dK": Mistake(
        "10",
        N_("the gradient of K instead of Q"),
        N_("dS^T Q / sqrt(d_k) is dK (one row per key); for the queries multiply dS, one row per "
           "query, by K: dQ = dS K / sqrt(d_k).")),
    "dQ_transposed_scores": Mistake(
        "10",
        N_("the transposed score gradient"),
        N_("dS has one row per query (n, m), like S; dQ = dS K / sqrt(d_k) uses it as it is, "
           "without a transpose.")),
    "reversal_attends_itself": Mistake(
        "10",
        N_("a query that reads its own position"),
        N_("position i holds an output digit already written; the digit to predict next is in "
           "the input part of the sequence, at its mirror position.")),
    "reversal_off_by_one": Mistake(
        "10",
        N_("off by one: the digit already at position i"),
        N_("position i predicts the token at position i + 1, so it must read the digit that "
           "comes next in the reversed output; 2L - i is where the digit at position i itself "
           "came from: one position further.")),
    "reversal_copy": Mistake(
        "10",
        N_("the copying pattern"),
        N_("i - L is the key a copying task would read (the same order); reversing reads the "
           "input from its end.")),
    "reversal_previous_token": Mistake(
        "10",
        N_("the previous token"),
        N_("i - 1 is the previous position, the pattern of a 'previous token' head; the task "
           "needs the mirror image in the input.")),
    "adam_small_gradient_stops": Mistake(
        "10",
        N_("a small gradient means Adam stops moving"),
        N_("plain gradient descent moves by lr * g per step. Adam divides the running mean of g by the "
           "root of the running mean of g^2, so a gradient that stays the same size moves its "
           "parameter by about lr per step, whether g is 1e-2 or 1e-6; only g near eps = 1e-8, "
           "or a gradient that changes sign, slows it.")),
}

QUESTIONS = {
    "10.softmax_backward": Question(
        N_("Every weight p_j of a row depends on every score of that row through the shared "
           "denominator, so the gradient of one score collects the upstream dp of the whole row. "
           "The formula is in the question: which array is p, and along which axis is the row "
           "sum?"),
        "p = ac.softmax(x)  # (2, 3), the weights: each row sums to 1\n"
        "answer = p * (dp - np.sum(p * dp, axis=-1, keepdims=True))",
        N_("The Jacobian of one row's softmax is diag(p) - p^T p (p a row vector, as in "
           "notebook 03), so dx_i = p_i (dp_i - sum_j p_j "
           "dp_j): the weights p, not the scores x, times the upstream gradient minus its "
           "p-weighted mean. np.sum(..., axis=-1, keepdims=True) takes that mean within each row "
           "(shape (2, 1), so it broadcasts back over the row). Keeping only p * dp drops the "
           "shared denominator; summing down the columns mixes the two rows.")),
    "10.attention_dQ": Question(
        N_("Go backwards through the forward pass O = A V, A = softmax(S), S = Q K^T / sqrt(d_k): "
           "first the gradient of the weights A, then through the softmax to the scores S (the "
           "formula of question 1), then to Q. Section 1 has the five formulas."),
        "A = ac.attention_weights(Q2, K2)  # (n, m) = (3, 3), the forward pass's weights\n"
        "dA = dO2 @ V2.T  # (n, d_v) @ (d_v, m) -> (n, m)\n"
        "dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))  # through the softmax\n"
        "answer = dS @ K2 / np.sqrt(4)  # (n, m) @ (m, d_k) -> (n, d_k)",
        N_("O = A V gives dA = dO V^T, one entry per (query, key). The softmax of each row turns "
           "it into dS = A * (dA - rowsum(A * dA)), the gradient of the scores. S = Q K^T "
           "/ sqrt(d_k) is linear in Q, so dQ = dS K / sqrt(d_k): the same factor 1/sqrt(d_k) as "
           "in the forward pass. dS^T Q / sqrt(d_k) would be dK, and dA K / sqrt(d_k) skips the "
           "softmax.")),
    "10.reversal_key": Question(
        N_("Write the sequence out with its positions: the digits x_0..x_5 at 0..5, the separator "
           "at 6, then the reversed digits. Which token comes at position i + 1 = 9, and where "
           "does that digit stand in the input?"),
        "3",
        N_("The reversed digits follow the separator: position 7 holds x_5, position 8 holds x_4 "
           "and position 9 holds x_3. The query at i = 8 predicts the token at position 9, so it "
           "must read x_3, at input position 3 = 2L - 1 - i = 11 - 8. Reading 2L - i = 4 (x_4) is "
           "the off-by-one of next-token prediction: that digit is already at position 8.")),
    "10.adam_small_gradient": Question(
        N_("Write out one Adam step (section 2) for a gradient g that is the same at every step. "
           "The bias corrections make m_hat = g and v_hat = g^2 exactly, from the first step on. "
           "What is m_hat / (sqrt(v_hat) + eps) then, and how does it depend on the size of g?"),
        "10 * 3e-3 * 1e-6 / (1e-6 + 1e-8)",
        N_("With m_hat = g and sqrt(v_hat) = |g| every step moves w by lr * g / (|g| + eps) = "
           "3e-3 * 1e-6 / (1e-6 + 1e-8) = 0.00297, so ten steps move it by 0.0297: almost the "
           "same as for g = 1e-2. A small gradient does not stop Adam; it rescales each "
           "parameter's step to about lr. 3e-8 (= 10 * lr * g) is what plain gradient descent "
           "would do. The stuck row of section 7 is stuck for another reason: W_Q and W_K are "
           "shared, so their steps follow the rows that do have gradient, and the gradient "
           "towards the right key is proportional to its weight, 7.2e-85 at d_k = 512.")),
}
