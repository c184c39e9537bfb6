"""Tests for what notebook 07 (position-wise feed-forward network) adds to the shared modules."""

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_core as ac
from course import checks
from course import nb07_feed_forward_network as nb07
from course.live import interactive

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "07_feed_forward_network.ipynb"

FFN_1D = ac.FFNParams(W_1=np.array([[1.0, -1.0, 2.0, 0.5]]), b_1=np.array([0.0, -0.5, -2.0, 1.0]),
                      W_2=np.array([[1.0], [1.0], [-1.5], [0.5]]), b_2=np.array([-0.5]))
CORNERS_1D = np.array([0.0, -0.5, 1.0, -2.0])  # -b_1 / w_1 of FFN_1D

# the tiny example of the notebook's second self-check
X_T = np.array([[1.0, -2.0], [0.0, 1.0]])
W_1T, B_1T = np.array([[1.0, -1.0, 2.0], [1.0, 1.0, -1.0]]), np.array([0.5, 1.0, -1.0])
W_2T, B_2T = np.array([[1.0, 2.0], [-1.0, 1.0], [1.0, -1.0]]), np.array([0.5, -1.0])


def _random_ffn(d_model, d_ff, seed):
    rng = np.random.default_rng(seed)
    p = ac.init_ffn_params(d_model, d_ff, rng)
    return ac.FFNParams(p.W_1, 0.1 * rng.normal(size=d_ff), p.W_2, 0.1 * rng.normal(size=d_model))


# --- plots -------------------------------------------------------------------

def test_convex_hull_of_a_square_with_inner_point():
    P = np.array([[0, 0], [1, 0], [0.5, 0.5], [1, 1], [0, 1]], dtype=float)
    idx = nb07.convex_hull_2d(P)
    assert sorted(idx.tolist()) == [0, 1, 3, 4]
    hull = P[idx]
    signed_area = 0.5 * np.sum(hull[:, 0] * np.roll(hull[:, 1], -1) - np.roll(hull[:, 0], -1) * hull[:, 1])
    assert signed_area == pytest.approx(1.0)  # counter-clockwise, area of the unit square
    with pytest.raises(ValueError):
        nb07.convex_hull_2d(P[:2])


def test_live_ffn_1d_numbers():
    live = nb07.LiveFFN1D(FFN_1D, CORNERS_1D)
    text = live.update(x=1.5)
    assert "z = x W_1 + b_1 = [+1.50, -2.00, +1.00, +1.75]" in text
    assert "units on: 3 of 4" in text
    assert "FFN(x) = ReLU(z) W_2 + b_2 = +0.3750" in text
    assert [b.get_height() for b in live.bars] == pytest.approx([1.5, 0.0, 1.0, 1.75])
    assert live.point.get_data()[1][0] == pytest.approx(0.375)
    text = live.update(x=-3.0)
    assert "units on: 1 of 4" in text and "+2.0000" in text
    png = live.png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_live_ffn_1d_rejects_wider_models():
    with pytest.raises(ValueError, match="d_model = 1"):
        nb07.LiveFFN1D(_random_ffn(2, 4, 0), CORNERS_1D)


def test_interactive_wires_the_slider():
    import ipywidgets as widgets
    live = nb07.LiveFFN1D(FFN_1D, CORNERS_1D)
    slider = widgets.SelectionSlider(options=[-1.0, 0.5, 1.5], value=0.5, description="x")
    box = interactive(live, x=slider)
    slider.value = 1.5
    assert "units on: 3 of 4" in box.children[1].value


@pytest.mark.parametrize("make", [
    lambda: nb07.locality_figure(np.zeros((5, 4)), np.ones((5, 4)), changed=2),
    lambda: nb07.influence_figure(np.eye(3), np.ones((3, 3))),
    lambda: nb07.convex_hull_figure(np.array([[0, 0], [1, 0], [0, 1.0]]), np.array([[0.2, 0.2]])),
    lambda: nb07.bent_line_figure(_random_ffn(2, 8, 3), [-2.0, -1.0], [2.0, 1.5], [0.25, 0.6]),
    lambda: nb07.ffn_1d_figure(np.linspace(-3, 3, 7), np.ones((7, 4)), np.zeros(7), CORNERS_1D),
])
def test_static_figures_draw(make):
    fig = make()
    assert len(fig.axes) >= 1
    assert all(ax.get_title() for ax in fig.axes if ax.get_label() != "<colorbar>")
    fig.canvas.draw()
    plt.close(fig)


# --- self-checks ---------------------------------------------------------------

def test_param_count_check():
    assert nb07.ffn_param_count(512, 2048) == 2_099_712
    assert nb07.check_ffn_param_count(..., 512, 2048).status == checks.UNANSWERED
    assert nb07.check_ffn_param_count(2 * 512 * 2048 + 2048 + 512, 512, 2048).ok
    cases = {2 * 512 * 2048: "ffn_no_biases", 4 * 512 ** 2: "ffn_counted_like_attention",
             2 * 512 * 2048 + 2048: "ffn_one_bias", 2 * 512 * 2048 + 512: "ffn_one_bias",
             2 * 512 ** 2 + 2 * 512: "ffn_square_weights"}
    for answer, key in cases.items():
        v = nb07.check_ffn_param_count(answer, 512, 2048)
        assert v.status == checks.MISTAKE and v.mistake == key, (answer, v)
    v = nb07.check_ffn_param_count(123, 512, 2048)
    assert v.status == checks.WRONG and v.mistake is None
    assert nb07.check_ffn_param_count("many", 512, 2048).status == checks.WRONG
    assert nb07.check_ffn_param_count(2.5, 512, 2048).status == checks.WRONG


@pytest.mark.parametrize("answer", ["2099712", "2,099,712"])
def test_param_count_given_as_a_string_shows_the_number(answer):
    v = nb07.check_ffn_param_count(answer, 512, 2048)
    assert v.status == checks.WRONG and "is a string" in v.message, v.message
    assert "without quotes: answer = 2099712" in v.message
    assert "without quotes" in nb07.check_ffn_param_count("many", 512, 2048).message


def test_ffn_output_check_recognises_each_mistake():
    right = np.array([[3.5, -4.0], [0.0, 4.0]])  # worked by hand
    assert np.allclose(ac.feed_forward(X_T, W_1T, B_1T, W_2T, B_2T), right)
    assert nb07.check_ffn_output(..., X_T, W_1T, B_1T, W_2T, B_2T).status == checks.UNANSWERED
    assert nb07.check_ffn_output(right, X_T, W_1T, B_1T, W_2T, B_2T).ok
    Z = X_T @ W_1T + B_1T
    mistakes = {"ffn_relu_after_W_2": np.maximum(0, Z @ W_2T + B_2T),
                "ffn_no_relu": Z @ W_2T + B_2T,
                "ffn_missing_b_1": np.maximum(0, X_T @ W_1T) @ W_2T + B_2T,
                "ffn_missing_b_2": np.maximum(0, Z) @ W_2T}
    for key, answer in mistakes.items():
        v = nb07.check_ffn_output(answer, X_T, W_1T, B_1T, W_2T, B_2T)
        assert v.status == checks.MISTAKE and v.mistake == key, (key, v)
        assert key in checks.MISTAKES
    v = nb07.check_ffn_output(right + 1.0, X_T, W_1T, B_1T, W_2T, B_2T)
    assert v.status == checks.WRONG


# --- notebook hygiene ---------------------------------------------------------------
