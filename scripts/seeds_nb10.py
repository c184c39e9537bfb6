"""Notebook 10, section 7, over many seeds: with and without 1/sqrt(d_k), at d_k = 8, 64, 512.

    python3 scripts/seeds_nb10.py [--seeds 24] [--steps 150]

Trains the notebook's model (the same make_batch, train loop, learning rate 3e-3 and batches of
32) with seeds 0 .. seeds-1 at each width, with and without the factor, and prints one table: how
many runs learned all six output rows (held-out accuracy at the last step of at least 0.95 on the
notebook's 1,000 held-out sequences; one stuck row caps it near 0.85), with a Wilson 95 % interval,
and the median first step whose batch accuracy reached 0.95. Notebook 10 quotes this table (its
defaults are the notebook's: 24 seeds, 150 steps); it takes about four minutes on one core, so the
notebook does not run it.

Run as a program, it computes in the deterministic environment of `dev.py regenerate`, which the
notebook's stored outputs come from (dev.DETERMINISTIC_ENV: OpenBLAS's Haswell kernels and so on;
dev.simd_env: numpy's AVX-512 loops off, NPY_DISABLE_CPU_FEATURES as read from this interpreter's
numpy) with one BLAS thread (dev.TEST_THREADS): both must be set before numpy is imported, so when
they are not, it runs itself again with them. The unscaled runs amplify the last bits of exp and
of the BLAS sums, so without them another CPU can print another table.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import dev  # noqa: E402  (standard library only)


def deterministic_env() -> dict:
    """What this program sets before numpy is imported: dev.py's environment, one BLAS thread."""
    return {**dev.DETERMINISTIC_ENV, **dev.simd_env(sys.executable), **dev.TEST_THREADS}


if __name__ == "__main__" and any(os.environ.get(k) != v for k, v in deterministic_env().items()):
    os.execve(sys.executable, [sys.executable, __file__, *sys.argv[1:]],
              {**os.environ, **deterministic_env()})

import numpy as np  # noqa: E402

import attention_learning as al  # noqa: E402

L, DIGITS, IGNORE = 6, 8, -100
SEP = DIGITS


def make_batch(rng, batch_size):
    """The notebook's batches: x_0 .. x_{L-1} | x_{L-1} .. x_0, targets only on the reversed part."""
    x = rng.integers(0, DIGITS, size=(batch_size, L))
    seq = np.concatenate([x, np.full((batch_size, 1), SEP), x[:, ::-1]], axis=1)
    tokens, targets = seq[:, :-1], seq[:, 1:].copy()
    targets[:, :L] = IGNORE
    return tokens, targets


def accuracy(logits, targets):
    counted = targets != IGNORE
    return float(np.mean(logits.argmax(axis=-1)[counted] == targets[counted]))


def train(config, steps, lr=3e-3, batch_size=32, seed=0):
    """The notebook's train() without its log of norms and entropies: (params, batch accuracies)."""
    params = al.init_lm(config, np.random.default_rng(seed))
    state, data = al.adam_init(params), np.random.default_rng(seed + 1)
    accs = []
    for _step in range(steps + 1):
        tokens, targets = make_batch(data, batch_size)
        s = al.lm_forward(params, tokens, config)
        _loss, dlogits = al.softmax_cross_entropy(s.logits, targets)
        grads, _dS = al.lm_backward(params, s, dlogits, config)
        params, state = al.adam_step(params, grads, state, lr)
        accs.append(accuracy(s.logits, targets))
    return params, np.array(accs)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval (95 % for z = 1.96) of a proportion k / n."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def arguments(argv=None) -> argparse.Namespace:
    """--seeds and --steps; the defaults are the run whose table notebook 10 quotes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=24)
    parser.add_argument("--steps", type=int, default=150)
    return parser.parse_args(argv)


def main(argv=None):
    args = arguments(argv)
    test_tokens, test_targets = make_batch(np.random.default_rng(2026), 1000)
    start = time.perf_counter()
    print(f"{args.seeds} seeds (0..{args.seeds - 1}), {args.steps} steps each, lr 3e-3, batch 32")
    print(" d_k  1/sqrt(d_k)  all rows learned  Wilson 95 %    median step to 95 % (batch)")
    for d_k in (8, 64, 512):
        for scaled in (True, False):
            config = al.LMConfig(vocab_size=DIGITS + 1, n_ctx=2 * L, d_model=32, num_heads=1,
                                 d_ff=64, d_k=d_k, scale_scores=scaled)
            learned, first = 0, []
            for seed in range(args.seeds):
                params, accs = train(config, args.steps, seed=seed)
                test = al.lm_forward(params, test_tokens, config)
                learned += accuracy(test.logits, test_targets) >= 0.95
                if np.any(accs >= 0.95):
                    first.append(int(np.argmax(accs >= 0.95)))
            lo, hi = wilson(learned, args.seeds)
            median = f"{np.median(first):.0f} ({len(first)} runs)" if first else "never"
            print(f"{d_k:4d}  {'with' if scaled else 'without':>11}  {learned:7d} of {args.seeds:<5d}"
                  f"  [{lo:.2f}, {hi:.2f}]  {median:>20}", flush=True)
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
