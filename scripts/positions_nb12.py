"""Past the training length (notebook 12, section 7), over more seeds than the notebook runs.

The notebook trains notebook 10's one-layer model once per position scheme (seed 0) on "repeat
the token 3 places back" at length 16 and tests it on 128 sequences of length 64. This script
runs the same training (course/nb12_rope_and_alibi.py's `train`, the notebook's settings) for
seeds 0-4 and prints, per scheme and seed, the accuracy and the best head's weight on the key
3 back over positions 3-15 (trained), 16-31 and 32-63.

Run:  python3 scripts/positions_nb12.py        (about 10 s of CPU here)

Measured here on 2026-12-02 (the same output under 1 and 2 BLAS threads):

    accuracy / weight on the key 3 back, mean over positions; trained on length 16, seeds 0-4
    scheme     seed         3-15        16-31        32-63
    sinusoidal    0  1.00 / 0.71  0.38 / 0.25  0.30 / 0.16
    sinusoidal    1  1.00 / 0.72  0.40 / 0.24  0.21 / 0.14
    sinusoidal    2  1.00 / 0.71  0.35 / 0.22  0.24 / 0.15
    sinusoidal    3  1.00 / 0.69  0.32 / 0.21  0.25 / 0.17
    sinusoidal    4  1.00 / 0.71  0.37 / 0.25  0.31 / 0.22
    rope          0  1.00 / 0.98  0.61 / 0.66  0.21 / 0.34
    rope          1  1.00 / 0.97  0.87 / 0.78  0.28 / 0.38
    rope          2  1.00 / 0.96  0.51 / 0.62  0.14 / 0.29
    rope          3  1.00 / 0.97  0.57 / 0.66  0.18 / 0.33
    rope          4  1.00 / 0.97  0.64 / 0.71  0.26 / 0.38
    alibi         0  0.26 / 0.14  0.21 / 0.07  0.19 / 0.05
    alibi         1  0.27 / 0.14  0.22 / 0.07  0.20 / 0.05
    alibi         2  0.27 / 0.14  0.20 / 0.07  0.20 / 0.05
    alibi         3  0.26 / 0.15  0.20 / 0.07  0.19 / 0.05
    alibi         4  0.26 / 0.15  0.21 / 0.07  0.20 / 0.05

Just past the training length RoPE keeps more of its accuracy than sinusoidal positions (0.51-0.87
against 0.32-0.40 at positions 16-31); at 32-63 the two overlap (0.14-0.28 and 0.21-0.31), far
above chance (1/16) and far below 1. ALiBi does not learn the task at the training length. The
tests do not run this script: it is a measurement, not a check.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, run as a script
from course import nb12_rope_and_alibi as nb12  # noqa: E402

SPANS = {"3-15": slice(3, 16), "16-31": slice(16, 32), "32-63": slice(32, 64)}


def main() -> int:
    tokens, targets = nb12.repeat_batch(np.random.default_rng(1000), 128, 64, 16, 3)  # as the notebook
    print("accuracy / weight on the key 3 back, mean over positions; trained on length 16, seeds 0-4")
    print(f"{'scheme':<11}{'seed':>4}  " + "  ".join(f"{name:>11}" for name in SPANS))
    for scheme in nb12.SCHEMES:
        for seed in range(5):
            r = nb12.accuracy_by_position(nb12.train(scheme, seed), tokens, targets, scheme, h=2, k=3)
            print(f"{scheme:<11}{seed:>4}  " + "  ".join(
                f"{np.mean(r['accuracy'][s]):.2f} / {np.mean(r['weight_k_back'][s]):.2f}"
                for s in SPANS.values()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
