"""Past the training length (notebook 12, section 7), over more seeds than the notebook runs.

The notebook trains notebook 10's one-layer model once per position scheme (seed 0) on "repeat
the token 3 places back" at length 16 and tests it on 128 sequences of length 64. This script
runs the same training (position_lm.py's `train`, the notebook's settings) for
seeds 0-4 and prints, per scheme and seed, the accuracy and the best head's weight on the key
3 back over positions 3-15 (trained), 16-31 and 32-63.

Run:  python3 scripts/positions_nb12.py        (about 25 s of CPU here)

Measured here on 2026-12-02 (the same output under 1 and 2 BLAS threads):

    accuracy / weight on the key 3 back, mean over positions; trained on length 16, seeds 0-4
    scheme      seed         3-15        16-31        32-63  offsets with the most weight at query 50
    sinusoidal     0  1.00 / 0.71  0.38 / 0.25  0.30 / 0.16  3 (0.11), 47 (0.10), 22 (0.09)
    sinusoidal     1  1.00 / 0.72  0.40 / 0.24  0.21 / 0.14  3 (0.18), 15 (0.12), 2 (0.11)
    sinusoidal     2  1.00 / 0.71  0.35 / 0.22  0.24 / 0.15  3 (0.11), 40 (0.10), 41 (0.08)
    sinusoidal     3  1.00 / 0.69  0.32 / 0.21  0.25 / 0.17  47 (0.24), 28 (0.14), 3 (0.12)
    sinusoidal     4  1.00 / 0.71  0.37 / 0.25  0.31 / 0.22  47 (0.21), 3 (0.13), 28 (0.11)
    rope           0  1.00 / 0.98  0.61 / 0.66  0.21 / 0.34  41 (0.41), 22 (0.28), 3 (0.19)
    rope           1  1.00 / 0.97  0.87 / 0.78  0.28 / 0.38  41 (0.47), 3 (0.20), 22 (0.16)
    rope           2  1.00 / 0.96  0.51 / 0.62  0.14 / 0.29  41 (0.38), 22 (0.31), 3 (0.14)
    rope           3  1.00 / 0.97  0.57 / 0.66  0.18 / 0.33  41 (0.46), 22 (0.23), 3 (0.19)
    rope           4  1.00 / 0.97  0.64 / 0.71  0.26 / 0.38  41 (0.43), 3 (0.21), 22 (0.20)
    alibi          0  0.26 / 0.14  0.21 / 0.07  0.19 / 0.05  1 (0.04), 2 (0.04), 3 (0.04)
    alibi          1  0.27 / 0.14  0.22 / 0.07  0.20 / 0.05  1 (0.04), 2 (0.04), 3 (0.04)
    alibi          2  0.27 / 0.14  0.20 / 0.07  0.20 / 0.05  1 (0.04), 2 (0.04), 3 (0.04)
    alibi          3  0.26 / 0.15  0.20 / 0.07  0.19 / 0.05  1 (0.04), 2 (0.04), 3 (0.04)
    alibi          4  0.26 / 0.15  0.21 / 0.07  0.20 / 0.05  1 (0.04), 2 (0.04), 3 (0.04)
    none           0  0.25 / 0.14  0.16 / 0.05  0.12 / 0.02  18 (0.02), 45 (0.02), 40 (0.02)
    none           1  0.26 / 0.14  0.17 / 0.05  0.12 / 0.02  3 (0.02), 40 (0.02), 22 (0.02)
    none           2  0.27 / 0.14  0.15 / 0.05  0.12 / 0.02  39 (0.02), 46 (0.02), 35 (0.02)
    none           3  0.25 / 0.15  0.15 / 0.05  0.12 / 0.03  16 (0.02), 14 (0.02), 5 (0.02)
    none           4  0.25 / 0.14  0.17 / 0.05  0.12 / 0.03  49 (0.02), 29 (0.02), 43 (0.02)
    alibi 1,1/2    0  0.64 / 0.15  0.60 / 0.14  0.61 / 0.14  1 (0.40), 2 (0.22), 0 (0.16)
    alibi 1,1/2    1  0.62 / 0.13  0.62 / 0.13  0.62 / 0.13  1 (0.41), 2 (0.20), 0 (0.17)
    alibi 1,1/2    2  0.67 / 0.15  0.65 / 0.14  0.65 / 0.14  1 (0.40), 2 (0.20), 0 (0.18)
    alibi 1,1/2    3  0.67 / 0.15  0.67 / 0.15  0.66 / 0.14  1 (0.39), 2 (0.21), 0 (0.18)
    alibi 1,1/2    4  0.67 / 0.16  0.68 / 0.15  0.68 / 0.15  1 (0.39), 2 (0.21), 0 (0.17)

Just past the training length RoPE keeps more of its accuracy than sinusoidal positions (0.51-0.87
against 0.32-0.40 at positions 16-31); at 32-63 the two overlap (0.14-0.28 and 0.21-0.31), far
above chance (1/16) and far below 1. In every seed RoPE's query 50 puts the most weight on the
keys 41 and 22 back, offsets never seen in training. ALiBi with the paper's slopes for 2 heads
(1/16, 1/256) does no better than no position at all on the trained positions (0.26-0.27 against
0.25-0.27); with slopes 1 and 1/2 and 1000 steps it reaches 0.62-0.67 and keeps it to position 63.
The tests do not run this script: it is a measurement, not a check.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, run as a script
import position_lm as plm  # noqa: E402

SPANS = {"3-15": slice(3, 16), "16-31": slice(16, 32), "32-63": slice(32, 64)}


def main() -> int:
    tokens, targets = plm.repeat_batch(np.random.default_rng(1000), 128, 64, 16, 3)  # as the notebook
    print("accuracy / weight on the key 3 back, mean over positions; trained on length 16, seeds 0-4")
    print(f"{'scheme':<12}{'seed':>4}  " + "  ".join(f"{name:>11}" for name in SPANS)
          + "  offsets with the most weight at query 50")
    runs = [(scheme, scheme, {}) for scheme in plm.SCHEMES]
    # ALiBi with slopes steeper than the paper's rule gives 2 heads (1/16, 1/256), trained longer
    runs.append(("alibi 1,1/2", "alibi", {"slopes": (1.0, 0.5), "steps": 1000}))
    for name, scheme, options in runs:
        for seed in range(5):
            params = plm.train(scheme, seed, **options)
            r = plm.accuracy_by_position(params, tokens, targets, scheme, h=2, k=3,
                                          slopes=options.get("slopes"))
            w = plm.forward(params, tokens, scheme, 2, options.get("slopes"))["weights"]
            top = ", ".join(f"{o} ({x:.2f})" for o, x in plm.top_offsets(w, 50))
            print(f"{name:<12}{seed:>4}  " + "  ".join(
                f"{np.mean(r['accuracy'][s]):.2f} / {np.mean(r['weight_k_back'][s]):.2f}"
                for s in SPANS.values()) + f"  {top}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
