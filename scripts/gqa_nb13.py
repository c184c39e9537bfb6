"""Notebook 13, section 6, over many seeds: h_kv = h, h/2 and 1 at the same budget; and a trained
multi-head checkpoint converted to grouped heads (mean-pooled K/V heads), before and after brief
further training.

    python3 scripts/gqa_nb13.py [--seeds 10] [--budgets 50 150] [--extra 15]

The notebook's model and task (notebook 10's reversal task, six digits from 0..7; one layer,
d_model = 32, h = 4 heads of d_k = 8, d_ff = 64; Adam, learning rate 3e-3, batches of 32), with
seeds 0 .. seeds-1. For each budget it trains h_kv = 4, 2 and 1 from scratch for the same number of
steps on the same batches, and prints the held-out accuracy (teacher-forced, the 1,200 answer rows
of 200 held-out sequences, as in the notebook) as mean, min and max over the seeds. Then it takes
the multi-head model of the largest budget and converts it to h_kv = 2 and 1 by three
initialisations of the shared K/V heads: the mean of each group's heads (Ainslie et al., 2023), the
first head of each group, and a random draw; it prints the accuracy right after the conversion and
after `extra` further steps (a fresh Adam state, new batches), against the multi-head model trained
on for the same extra steps. Notebook 13 runs the single seed 0 of this itself and quotes this
table; it takes about a minute on one core (OMP_NUM_THREADS=1).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import attention_learning as al  # noqa: E402

L, DIGITS, IGNORE = 6, 8, -100
SEP = DIGITS
H, D_MODEL = 4, 32


def make_batch(rng, batch_size):
    """The notebook's batches: x_0 .. x_{L-1} | x_{L-1} .. x_0, targets only on the reversed part."""
    x = rng.integers(0, DIGITS, size=(batch_size, L))
    seq = np.concatenate([x, np.full((batch_size, 1), SEP), x[:, ::-1]], axis=1)
    tokens, targets = seq[:, :-1], seq[:, 1:].copy()
    targets[:, :L] = IGNORE
    return tokens, targets


def config_for(h_kv):
    return al.LMConfig(vocab_size=DIGITS + 1, n_ctx=2 * L, d_model=D_MODEL, num_heads=H, d_ff=64,
                       num_kv_heads=h_kv)


def train(params, config, steps, data_seed, lr=3e-3):
    """The notebook's loop: forward, loss, backward, Adam, on batches drawn from data_seed."""
    state, data = al.adam_init(params), np.random.default_rng(data_seed)
    for _ in range(steps):
        tokens, targets = make_batch(data, 32)
        s = al.lm_forward(params, tokens, config)
        _loss, dlogits = al.softmax_cross_entropy(s.logits, targets)
        params, state = al.adam_step(params, al.lm_backward(params, s, dlogits, config)[0], state, lr)
    return params


def accuracy(params, config, tokens, targets):
    counted = targets != IGNORE
    return float(np.mean(al.lm_forward(params, tokens, config).logits.argmax(axis=-1)[counted]
                         == targets[counted]))


def convert(params, h_kv, how, rng):
    """W_K, W_V of h heads -> h_kv shared heads: group k holds heads k*g .. k*g + g - 1."""
    out = dict(params)
    for name in ("W_K", "W_V"):
        W = params[name]  # (d_model, h * d)
        d = W.shape[1] // H
        groups = W.reshape(W.shape[0], h_kv, H // h_kv, d)  # (d_model, h_kv, g, d)
        if how == "mean":
            shared = groups.mean(axis=2)
        elif how == "first":
            shared = groups[:, :, 0]
        else:  # a fresh draw, as init_lm draws: std 1/sqrt(d_model)
            shared = rng.normal(0, W.shape[0] ** -0.5, size=groups[:, :, 0].shape)
        out[name] = shared.reshape(W.shape[0], h_kv * d)  # (d_model, h_kv * d)
    return out


def summary(values):
    v = np.asarray(values)
    return f"{v.mean():.3f} [{v.min():.3f}, {v.max():.3f}]"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budgets", type=int, nargs="+", default=[50, 150])
    parser.add_argument("--extra", type=int, default=15)
    args = parser.parse_args(argv)
    test_tokens, test_targets = make_batch(np.random.default_rng(2026), 200)
    start = time.perf_counter()
    print(f"{args.seeds} seeds (0..{args.seeds - 1}); held-out accuracy, mean [min, max]")
    print("from scratch, the same steps and batches:")
    print(f"{'steps':>6} " + " ".join(f"{f'h_kv = {k}':>22}" for k in (H, H // 2, 1)))
    mha = {}
    for steps in args.budgets:
        row = []
        for h_kv in (H, H // 2, 1):
            accs = []
            for seed in range(args.seeds):
                cfg = config_for(h_kv)
                p = train(al.init_lm(cfg, np.random.default_rng(seed)), cfg, steps, seed + 1)
                accs.append(accuracy(p, cfg, test_tokens, test_targets))
                if h_kv == H and steps == max(args.budgets):
                    mha[seed] = p
            row.append(summary(accs))
        print(f"{steps:6d} " + " ".join(f"{r:>22}" for r in row), flush=True)
    print(f"converted from the {max(args.budgets)}-step multi-head model; after the conversion ->"
          f" after {args.extra} more steps:")
    full = config_for(H)
    more = [accuracy(train(mha[s], full, args.extra, 1000 + s), full, test_tokens, test_targets)
            for s in range(args.seeds)]
    print(f"  h_kv = {H} (kept multi-head):        {summary([accuracy(mha[s], full, test_tokens, test_targets) for s in range(args.seeds)])}"
          f" -> {summary(more)}")
    for h_kv in (H // 2, 1):
        cfg = config_for(h_kv)
        for how in ("mean", "first", "random"):
            before, after = [], []
            for seed in range(args.seeds):
                p = convert(mha[seed], h_kv, how, np.random.default_rng(500 + seed))
                before.append(accuracy(p, cfg, test_tokens, test_targets))
                after.append(accuracy(train(p, cfg, args.extra, 1000 + seed), cfg, test_tokens,
                                      test_targets))
            print(f"  h_kv = {h_kv}, {how:>6} of each group: {summary(before)} -> {summary(after)}",
                  flush=True)
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
