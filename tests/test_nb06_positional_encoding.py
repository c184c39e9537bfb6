"""Tests of notebook 06's companion: its figures, its live figure and its self-checks."""

import re
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_core as ac
from course import checks, figures, i18n
from course import nb06_positional_encoding as nb06

JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")  # hiragana, katakana, kanji


def _sum_cos(k, d_model):
    omega = 1.0 / 10000 ** (2 * np.arange(d_model // 2) / d_model)
    return np.cos(np.multiply.outer(k, omega)).sum(axis=-1)


def test_pe_heatmap_shows_the_core_encoding():
    fig = nb06.pe_heatmap(num_positions=20, d_model=8)
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    assert np.allclose(fig.axes[0].images[0].get_array(), ac.sinusoidal_positional_encoding(20, 8))
    plt.close(fig)


def test_pe_curves_plot_the_requested_columns():
    fig = nb06.pe_curves(num_positions=30, d_model=16, columns=(0, 3))
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
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
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
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
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
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


def test_live_pe_rejects_odd_or_too_wide_d_model():
    live = nb06.LivePositionalEncoding()
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    for bad in (7, 130, 0):
        with pytest.raises(ValueError, match="d_model must be even"):
            live.update(pos=0, d_model=bad)


def test_pe_vectors_grid_has_one_panel_per_position_and_width():
    fig = nb06.pe_vectors_grid(positions=(0, 3), d_models=(4, 8, 16))
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    assert len(fig.axes) == 6
    bars = {}  # dimension -> bar height, from the sin and cos lines of vertical segments
    for line in fig.axes[5].get_lines()[1:]:  # [0] is the zero line
        x, y = line.get_data()
        bars.update(zip(x[0::3].astype(int), y[1::3], strict=True))
    assert sorted(bars) == list(range(16))
    assert np.allclose([bars[c] for c in range(16)], ac.sinusoidal_positional_encoding(4, 16)[3])
    plt.close(fig)


# --- self-checks -------------------------------------------------------------

# pos = 10, dim = 3 (odd: cos, pair i = 1), d_model = 8: what each mistake gives
PE_ENTRY_MISTAKES = {
    "pe_swapped_sin_cos": np.sin(10 / 10000 ** (2 / 8)),
    "pe_exponent_i": np.cos(10 / 10000 ** (1 / 8)),
    "pe_exponent_dim": np.cos(10 / 10000 ** (3 / 8)),
    "pe_positions_from_1": np.cos(11 / 10000 ** (2 / 8)),
    "pe_pair_index_rounded_up": np.cos(10 / 10000 ** (4 / 8)),
}
Y_P = np.random.default_rng(0).normal(size=(5, 8))
PERM = np.array([2, 0, 4, 1, 3])
PERMUTED_MISTAKES = {"pe_not_permuted": Y_P, "pe_inverse_permutation": Y_P[np.argsort(PERM)]}


def test_pe_entry_correct_and_unanswered():
    right = np.cos(10 / 10000 ** (2 / 8))  # dim 3 = 2i+1 with i = 1: cos(10 / 10000^(2/8)) = cos(1)
    assert nb06.check_pe_entry(right, pos=10, dim=3, d_model=8).ok
    assert nb06.check_pe_entry(..., pos=10, dim=3, d_model=8).status == checks.UNANSWERED
    assert nb06.check_pe_entry(0.5403, pos=10, dim=3, d_model=8).ok  # cos(1) to 4 decimals


@pytest.mark.parametrize("key", PE_ENTRY_MISTAKES)
def test_pe_entry_names_each_mistake(key):
    v = nb06.check_pe_entry(round(PE_ENTRY_MISTAKES[key], 4), pos=10, dim=3, d_model=8)
    assert v.status == checks.MISTAKE and v.mistake == key, v.message


@pytest.mark.parametrize("key, message", [
    ("pe_swapped_sin_cos", 'Not quite: this is the classic mistake "swapping sin and cos". Even '
     "dimensions 2i get sin, odd dimensions 2i+1 get cos; dim = 3 is odd."),
    ("pe_exponent_i", 'Not quite: this is the classic mistake "the exponent i/d_model". The exponent '
     "is 2i/d_model with the pair index i = 1 (here 2i/d_model = 2/8), not i/d_model."),
    ("pe_exponent_dim", 'Not quite: this is the classic mistake "using the dimension index dim in '
     'place of 2i". Both dimensions of a pair share one frequency: dim = 3 belongs to pair i = 1, '
     "so the exponent is 2i/d_model = 2/8, not 3/8."),
    ("pe_positions_from_1", 'Not quite: this is the classic mistake "counting positions from 1". '
     "Positions start at pos = 0 (the first token), as the rows of "
     "ac.sinusoidal_positional_encoding do."),
    ("pe_pair_index_rounded_up", 'Not quite: this is the classic mistake "the pair index i = '
     'ceil(dim/2) = 2". The pair index rounds DOWN: dim = 3 = 2i + 1 gives i = dim // 2 = 1, so '
     "the exponent is 2i/d_model = 2/8, not 4/8."),
])
def test_pe_entry_mistake_messages_fill_in_the_case(key, message):
    assert nb06.check_pe_entry(PE_ENTRY_MISTAKES[key], pos=10, dim=3, d_model=8).message == message


def test_pe_entry_even_dim_and_wrong_answer():
    # dim = 2i is even: sin, and "dim instead of 2i" or "ceil(dim/2)" is not a mistake there (same value)
    right = np.sin(5 / 10000 ** (4 / 8))
    assert nb06.check_pe_entry(right, pos=5, dim=4, d_model=8).ok
    v = nb06.check_pe_entry(np.cos(5 / 10000 ** (4 / 8)), 5, 4, 8)
    assert v.mistake == "pe_swapped_sin_cos" and v.message.endswith("dim = 4 is even."), v.message
    assert nb06.check_pe_entry(0.123, pos=5, dim=4, d_model=8).status == checks.WRONG
    with pytest.raises(ValueError, match="dim must be in"):
        nb06.check_pe_entry(0.0, pos=1, dim=8, d_model=8)


def test_permuted_output_check():
    assert nb06.check_permuted_output(Y_P[PERM], Y_P, PERM).ok
    assert nb06.check_permuted_output(..., Y_P, PERM).status == checks.UNANSWERED
    assert nb06.check_permuted_output(Y_P[::-1], Y_P, PERM).status == checks.WRONG


@pytest.mark.parametrize("key", PERMUTED_MISTAKES)
def test_permuted_output_names_each_mistake(key):
    v = nb06.check_permuted_output(PERMUTED_MISTAKES[key], Y_P, PERM)
    assert v.status == checks.MISTAKE and v.mistake == key, v.message


def test_permuted_output_mistake_message():
    assert nb06.check_permuted_output(Y_P, Y_P, PERM).message == (
        'Not quite: this is the classic mistake "the unpermuted output". Self-attention without '
        "positions is permutation-EQUIVARIANT, not invariant: the output rows move together with "
        "the input rows.")


def test_permuted_output_matches_real_attention():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 8))
    p = ac.init_attention_params(8, 2, rng)

    def mha(Z):
        return ac.multi_head_attention(Z, Z, p.W_Q, p.W_K, p.W_V, p.W_O, 2)[0]

    assert nb06.check_permuted_output(mha(X[PERM]), mha(X), PERM).ok


# --- the Japanese edition ------------------------------------------------------

def _japanese(*texts):
    """Every text has Japanese in it: (text, ...) of those that have none."""
    return [t for t in texts if not JAPANESE.search(t)]


def test_figures_and_checks_speak_japanese_in_the_japanese_edition():
    """In notebooks/ja/06 the figures, the live figure's texts and the verdicts are Japanese (the
    parity in the sin/cos diagnosis too), and every figure still fits its fixed layout."""
    ks = np.arange(61)
    pe = ac.sinusoidal_positional_encoding(111, 32)
    dots = np.array([pe[p + ks] @ pe[p] for p in (0, 10, 50)])
    with i18n.language_as("ja"), warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph (tofu) warns at draw time
        for fig in (nb06.pe_heatmap(64, 32), nb06.pe_curves(60, 32, (0, 1, 6, 14)),
                    nb06.pe_dot_vs_offset(ks, dots, (0, 10, 50), 32)):
            ax = fig.axes[0]
            assert not figures.layout_problems(fig), figures.layout_problems(fig)
            assert not _japanese(ax.get_title(), ax.get_xlabel())
            plt.close(fig)
        fig = nb06.pe_curves(60, 32, (0, 1, 6, 14))
        assert not _japanese(*(t.get_text() for t in fig.axes[0].get_legend().get_texts()))
        fig = nb06.pe_dot_vs_offset(ks, dots, (0, 10, 50), 32)
        assert not _japanese(fig.axes[0].get_legend().get_title().get_text())
        fig = nb06.pe_vectors_grid((0, 1, 10, 50), (8, 32))
        assert not figures.layout_problems(fig), figures.layout_problems(fig)
        assert not _japanese(fig._suptitle.get_text(), *(ax.get_xlabel() for ax in fig.axes))
        live = nb06.LivePositionalEncoding()
        for pos, d_model in ((0, 4), (10, 16), (100, 128)):
            text = live.update(pos=pos, d_model=d_model)
            assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
            assert not _japanese(text.splitlines()[-1], live.dot_title.get_text(),
                                 live.ax_bar.get_xlabel(), live.ax_dot.get_xlabel())
            assert f"PE(pos) . PE(pos) = {d_model / 2:.3f}" in text  # the numbers are kept
        assert live.png()[:8] == b"\x89PNG\r\n\x1a\n"
        verdicts = {key: nb06.check_pe_entry(value, pos=10, dim=3, d_model=8)
                    for key, value in PE_ENTRY_MISTAKES.items()}
        verdicts |= {key: nb06.check_permuted_output(value, Y_P, PERM)
                     for key, value in PERMUTED_MISTAKES.items()}
        others = [nb06.check_pe_entry(..., 10, 3, 8), nb06.check_pe_entry(0.5403, 10, 3, 8),
                  nb06.check_pe_entry(0.123, 10, 3, 8), nb06.check_permuted_output(..., Y_P, PERM),
                  nb06.check_permuted_output(Y_P[PERM], Y_P, PERM)]
        assert [v.mistake for v in verdicts.values()] == list(verdicts)
        assert not _japanese(*(v.message for v in [*verdicts.values(), *others]))
        # the {parity} of the diagnosis is translated too: "dim = 3 is odd." says it in Japanese
        odd = verdicts["pe_swapped_sin_cos"].message.rsplit("dim = 3", 1)[1]
        even = nb06.check_pe_entry(np.cos(5 / 10000 ** (4 / 8)), 5, 4, 8).message.rsplit("dim = 4", 1)[1]
        assert not _japanese(odd, even) and odd != even, (odd, even)
        assert "odd" not in odd and "even" not in even, (odd, even)
    v = nb06.check_pe_entry(PE_ENTRY_MISTAKES["pe_swapped_sin_cos"], pos=10, dim=3, d_model=8)
    assert v.message.endswith("dim = 3 is odd.")  # English again outside the block


def test_every_registered_06_mistake_is_tested_here():
    ours = {key for key, m in checks.MISTAKES.items() if m.notebook == "06"}
    assert ours == set(PE_ENTRY_MISTAKES) | set(PERMUTED_MISTAKES)
