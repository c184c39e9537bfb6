"""attention_checks.arrays: numbers and arrays, the checks every other one builds on.

An argument becomes a float64 array only if it holds real numbers (bool, int or float), all of
them finite; sizes are positive integers. `finite` explains, after computing, a result that left
float64's range although its inputs were finite.
"""

from __future__ import annotations

import numbers

import numpy as np

def as_numbers(name: str, x) -> np.ndarray:
    """x as a float64 array if it holds real numbers (bool, int or float); else ValueError.

    Strings are not read as numbers, and complex numbers do not quietly lose their
    imaginary part: both are refused.
    """
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name} must be an array of numbers, got {type(x).__name__}: {e}") from None
    kind = a.dtype.kind
    if kind == "c":
        raise ValueError(f"{name} must hold real numbers, got complex values (dtype {a.dtype}, "
                         f"shape {a.shape}); attention here is defined for real inputs only")
    if kind == "O" and all(isinstance(v, numbers.Real) for v in a.flat):
        kind = "f"  # e.g. a list of Fractions: real numbers that numpy keeps as objects
    if kind not in "biuf":
        raise ValueError(f"{name} must be an array of numbers, got dtype {a.dtype} "
                         f"(shape {a.shape}): {np.ravel(a)[:3].tolist()!r}")
    return a.astype(float, copy=False)


def as_array(name: str, x, min_ndim: int = 0) -> np.ndarray:
    """Turn x into a float array; reject non-numbers, NaN, +-inf and too few dimensions."""
    a = as_numbers(name, x)
    if a.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise ValueError(f"{name} contains {a[bad]} at index {bad} (shape {a.shape}); "
                         "inputs must be finite")
    return a


def positive_int(name: str, value) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def finite_real(name: str, value) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def _batch(*arrays, names: str) -> tuple[int, ...]:
    """The broadcast batch shape (all axes but the last two) of the arrays."""
    try:
        return np.broadcast_shapes(*(a.shape[:-2] for a in arrays))
    except ValueError:
        raise ValueError(f"batch dimensions of {names} do not broadcast") from None


def finite(what: str, a: np.ndarray, inputs: dict, advice: str = "scale them down") -> np.ndarray:
    """a was computed from the finite `inputs`; if it is not finite, float64 overflowed."""
    if not np.all(np.isfinite(a)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        largest = ", ".join(f"|{k}| up to {np.max(np.abs(v)) if v.size else 0:.3g}"
                            for k, v in inputs.items())  # only on the way to the error
        raise ValueError(f"{what} overflowed: it is {a[bad]} at index {bad} (shape {a.shape}), "
                         f"beyond float64's range (about 1.8e308); {largest}: {advice}")
    return a
