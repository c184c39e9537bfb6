"""Plot functions and self-checks added for notebook 06 (positional encoding)."""


import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_core as ac
from course import checks
from course import nb06_positional_encoding as nb06


def _sum_cos(k, d_model):
    omega = 1.0 / 10000 ** (2 * np.arange(d_model // 2) / d_model)
    return np.cos(np.multiply.outer(k, omega)).sum(axis=-1)


def test_pe_heatmap_shows_the_core_encoding():
    fig = nb06.pe_heatmap(num_positions=20, d_model=8)
    assert np.allclose(fig.axes[0].images[0].get_array(), ac.sinusoidal_positional_encoding(20, 8))
    plt.close(fig)


def test_pe_curves_plot_the_requested_columns():
    fig = nb06.pe_curves(num_positions=30, d_model=16, columns=(0, 3))
    lines = fig.axes[0].get_lines()
    pe = ac.sinusoidal_positional_encoding(30, 16)
    assert len(lines) == 2
    assert np.allclose(lines[1].get_ydata(), pe[:, 3])
    assert "cos, i = 1" in lines[1].get_label()
    plt.close(fig)


def test_pe_dot_vs_offset_draws_one_curve_per_start_position():
    ks = np.arange(5)
    dots = np.array([[4.0, 3.0, 1.0, 0.0, -1.0], [4.0, 3.0, 1.0, 0.0, -1.0], [4.0, 2.0, 0.0, 1.0, 2.0]])
    fig = nb06.pe_dot_vs_offset(ks, dots, positions=(0, 5, 40), d_model=8)
    ax = fig.axes[0]
    curves = ax.get_lines()[:3]
    assert [c.get_label() for c in curves] == ["p = 0", "p = 5", "p = 40"]
    assert [c.get_linestyle() for c in curves] == ["-", "--", ":"]  # told apart where they coincide
    for c, row in zip(curves, dots, strict=True):
        assert np.array_equal(c.get_xdata(), ks) and np.allclose(c.get_ydata(), row)
    assert "d_model = 8" in ax.get_title()
    with pytest.raises(ValueError, match="dots must have shape"):
        nb06.pe_dot_vs_offset(ks, dots.T, positions=(0, 5, 40), d_model=8)


def test_bar_segments():
    x, y = nb06._bar_segments(np.array([0.5, -1.0, 0.25, 0.75]), offset=1)
    assert np.array_equal(x[[0, 1, 3, 4]], [1, 1, 3, 3]) and np.isnan(x[2]) and np.isnan(x[5])
    assert np.array_equal(y[[0, 1, 3, 4]], [0, -1.0, 0, 0.75])


@pytest.mark.parametrize("pos, d_model", [(0, 4), (10, 16), (57, 128), (100, 8)])
def test_live_pe_shows_the_vector_and_the_dot_products(pos, d_model):
    live = nb06.LivePositionalEncoding()
    text = live.update(pos=pos, d_model=d_model)
    pe = ac.sinusoidal_positional_encoding(pos + 1, d_model)[pos]
    _, y_sin = live.sin_bars.get_data()
    _, y_cos = live.cos_bars.get_data()
    assert np.allclose(np.asarray(y_sin)[1::3], pe[0::2])
    assert np.allclose(np.asarray(y_cos)[1::3], pe[1::2])
    assert np.allclose(live.line.get_ydata(), _sum_cos(np.arange(live.max_k + 1), d_model))
    assert f"pos = {pos}, d_model = {d_model}" in text
    assert f"PE(pos) . PE(pos) = {d_model / 2:.3f}" in text
    last = [float(v) for v in text.splitlines()[-1].split(":")[1].split()]
    assert np.allclose(last, _sum_cos(np.array([1, 5, 20]), d_model), atol=5e-4)
    assert live.png()[:8] == b"\x89PNG\r\n\x1a\n"


def test_live_pe_text_for_the_notebook_setting():
    text = nb06.LivePositionalEncoding().update(pos=10, d_model=16)
    assert "PE(pos)[:6] = -0.544 -0.839 -0.021 -1.000 0.841 0.540" in text


def test_live_pe_rejects_odd_or_too_wide_d_model():
    live = nb06.LivePositionalEncoding()
    for bad in (7, 130, 0):
        with pytest.raises(ValueError, match="d_model must be even"):
            live.update(pos=0, d_model=bad)


def test_pe_vectors_grid_has_one_panel_per_position_and_width():
    fig = nb06.pe_vectors_grid(positions=(0, 3), d_models=(4, 8, 16))
    assert len(fig.axes) == 6
    bars = {}  # dimension -> bar height, from the sin and cos lines of vertical segments
    for line in fig.axes[5].get_lines()[1:]:  # [0] is the zero line
        x, y = line.get_data()
        bars.update(zip(x[0::3].astype(int), y[1::3], strict=True))
    assert sorted(bars) == list(range(16))
    assert np.allclose([bars[c] for c in range(16)], ac.sinusoidal_positional_encoding(4, 16)[3])
    plt.close(fig)


# --- self-checks -------------------------------------------------------------

def test_pe_entry_correct_and_unanswered():
    right = np.cos(10 / 10000 ** (2 / 8))  # dim 3 = 2i+1 with i = 1: cos(10 / 10000^(2/8)) = cos(1)
    assert nb06.check_pe_entry(right, pos=10, dim=3, d_model=8).ok
    assert nb06.check_pe_entry(..., pos=10, dim=3, d_model=8).status == checks.UNANSWERED
    assert nb06.check_pe_entry(0.5403, pos=10, dim=3, d_model=8).ok  # cos(1) to 4 decimals


def test_pe_entry_names_the_pair_index_rounded_up():
    v = nb06.check_pe_entry(round(np.cos(10 / 10000 ** (4 / 8)), 4), pos=10, dim=3, d_model=8)
    assert v.mistake == "pe_pair_index_rounded_up" and "i = ceil(dim/2) = 2" in v.message, v.message
    # for an even dim, ceil(dim/2) = dim/2: the right answer, not a mistake
    assert nb06.check_pe_entry(np.sin(5 / 10000 ** (4 / 8)), pos=5, dim=4, d_model=8).ok


@pytest.mark.parametrize("value, key", [
    (np.sin(1.0), "pe_swapped_sin_cos"),
    (np.cos(10 / 10000 ** (1 / 8)), "pe_exponent_i"),
    (np.cos(10 / 10000 ** (3 / 8)), "pe_exponent_dim"),
    (np.cos(11 / 10000 ** (2 / 8)), "pe_positions_from_1"),
])
def test_pe_entry_names_each_mistake(value, key):
    v = nb06.check_pe_entry(value, pos=10, dim=3, d_model=8)
    assert v.status == checks.MISTAKE and v.mistake == key, v.message


def test_pe_entry_even_dim_and_wrong_answer():
    # dim = 2i is even: sin, and "dim instead of 2i" is not a mistake there (same value)
    right = np.sin(5 / 10000 ** (4 / 8))
    assert nb06.check_pe_entry(right, pos=5, dim=4, d_model=8).ok
    assert nb06.check_pe_entry(np.cos(5 / 10000 ** (4 / 8)), 5, 4, 8).mistake == "pe_swapped_sin_cos"
    assert nb06.check_pe_entry(0.123, pos=5, dim=4, d_model=8).status == checks.WRONG
    with pytest.raises(ValueError, match="dim must be in"):
        nb06.check_pe_entry(0.0, pos=1, dim=8, d_model=8)


def test_permuted_output_check():
    Y = np.random.default_rng(0).normal(size=(5, 8))
    perm = np.array([2, 0, 4, 1, 3])
    assert nb06.check_permuted_output(Y[perm], Y, perm).ok
    assert nb06.check_permuted_output(Y, Y, perm).mistake == "pe_not_permuted"
    assert nb06.check_permuted_output(Y[np.argsort(perm)], Y, perm).mistake == "pe_inverse_permutation"
    assert nb06.check_permuted_output(..., Y, perm).status == checks.UNANSWERED
    assert nb06.check_permuted_output(Y[::-1], Y, perm).status == checks.WRONG


def test_permuted_output_matches_real_attention():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 8))
    p = ac.init_attention_params(8, 2, rng)
    perm = np.array([2, 0, 4, 1, 3])

    def mha(Z):
        return ac.multi_head_attention(Z, Z, p.W_Q, p.W_K, p.W_V, p.W_O, 2)[0]

    assert nb06.check_permuted_output(mha(X[perm]), mha(X), perm).ok
