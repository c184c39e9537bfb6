"""Tests of notebook 07's companion: its figures, its live figure and its self-checks.

The lesson code (row influence, the inside-the-hull test, the kinks of a bent line, the hinges of
the 1-D FFN) is in the notebook's cells, which assert what matters; nbval runs them.
"""

import re
import warnings

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import pytest

import attention_core as ac
from course import checks, figures, i18n
from course import nb07_feed_forward_network as nb07
from course.live import with_controls

JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")  # hiragana, katakana, kanji

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


def _ffn(f, X):
    return ac.feed_forward(X, f.W_1, f.b_1, f.W_2, f.b_2)


def _line(ax, label):
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == label]
    return line


def _verticals(ax):
    """x of the axvline()s of ax, sorted."""
    return sorted(ln.get_xdata()[0] for ln in ax.get_lines() if ln.get_linestyle() == ":")


# --- figures -------------------------------------------------------------------

def test_locality_figure_shows_the_sizes_of_the_changes_on_one_scale():
    rng = np.random.default_rng(0)
    d_ffn, d_attn = rng.normal(size=(5, 4)), 3.0 * rng.normal(size=(5, 4))
    fig = nb07.locality_figure(d_ffn, d_attn, changed=2)
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    ims = [fig.axes[k].images[0] for k in (0, 1)]
    assert np.allclose(ims[0].get_array(), np.abs(d_ffn))
    assert np.allclose(ims[1].get_array(), np.abs(d_attn))
    vmax = max(np.abs(d_ffn).max(), np.abs(d_attn).max())
    assert ims[0].get_clim() == ims[1].get_clim() == (0.0, vmax)
    frame = sorted(ln.get_ydata()[0] for ln in fig.axes[0].get_lines())
    assert frame == [1.5, 2.5]  # the dashed lines frame the changed row 2


def test_influence_figure_writes_every_number_of_both_maps():
    infl_ffn, infl_attn = np.diag([0.5, 1.25, 2.0]), np.arange(9.0).reshape(3, 3) / 4
    fig = nb07.influence_figure(infl_ffn, infl_attn)
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    for ax, M in zip(fig.axes[:2], (infl_ffn, infl_attn), strict=True):
        assert np.allclose(ax.images[0].get_array(), M)
        assert ax.images[0].get_clim() == (0.0, 2.0)
        shown = {(int(t.get_position()[1]), int(t.get_position()[0])): t.get_text() for t in ax.texts}
        assert shown == {(i, j): f"{M[i, j]:.1f}" for i in range(3) for j in range(3)}


def test_convex_hull_of_a_square_with_inner_point():
    P = np.array([[0, 0], [1, 0], [0.5, 0.5], [1, 1], [0, 1]], dtype=float)
    idx = nb07.convex_hull_2d(P)
    assert sorted(idx.tolist()) == [0, 1, 3, 4]
    hull = P[idx]
    signed_area = 0.5 * np.sum(hull[:, 0] * np.roll(hull[:, 1], -1) - np.roll(hull[:, 0], -1) * hull[:, 1])
    assert signed_area == pytest.approx(1.0)  # counter-clockwise, area of the unit square
    with pytest.raises(ValueError):
        nb07.convex_hull_2d(P[:2])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_convex_hull_contains_every_point_of_a_random_cloud(seed):
    P = np.random.default_rng(seed).normal(size=(40, 2))
    hull = P[nb07.convex_hull_2d(P)]
    edge = np.roll(hull, -1, axis=0) - hull
    rel = P[:, None, :] - hull[None, :, :]
    cross = edge[:, 0] * rel[..., 1] - edge[:, 1] * rel[..., 0]  # left of every edge: >= 0
    assert np.all(cross >= -1e-12)
    assert len(hull) == len(set(map(tuple, hull)))


def test_convex_hull_figure_fills_the_hull_and_shows_every_point():
    V = np.array([[0.0, 0.0], [3.0, 0.5], [1.0, 1.0], [2.0, 2.5], [0.5, 2.0]])
    O = np.array([[1.0, 1.0], [2.0, 1.0]])
    fig = nb07.convex_hull_figure(V, O)
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    ax = fig.axes[0]
    (hull,) = ax.patches
    corners = {tuple(p) for p in hull.get_xy()}
    assert corners == {(0.0, 0.0), (3.0, 0.5), (2.0, 2.5), (0.5, 2.0)}  # not the inner (1, 1)
    outputs, values = (c.get_offsets() for c in ax.collections)
    assert np.allclose(outputs, O) and np.allclose(values, V)


def test_bent_line_figure_draws_the_image_and_marks_the_kinks_it_is_given():
    f = _random_ffn(2, 8, 3)
    start, end = np.array([-2.0, -1.0]), np.array([2.0, 1.5])
    kinks = np.array([0.25, 0.6])
    fig = nb07.bent_line_figure(f, start, end, kinks, num=101)
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    t = np.linspace(0.0, 1.0, 101)[:, None]
    path = _line(fig.axes[1], "path")
    assert np.allclose(np.column_stack(path.get_data()), _ffn(f, start + t * (end - start)))
    marks = _line(fig.axes[1], "a hidden unit switches")
    assert np.allclose(np.column_stack(marks.get_data()), _ffn(f, start + kinks[:, None] * (end - start)))
    fig = nb07.bent_line_figure(f, start, end, np.array([]))  # no kink: nothing marked
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    assert "a hidden unit switches" not in [ln.get_label() for ln in fig.axes[1].get_lines()]


def test_ffn_1d_figure_draws_the_hinges_the_output_and_the_corners_in_range():
    xs = np.linspace(-1.0, 2.0, 7)
    hinges = np.arange(28.0).reshape(7, 4)
    output = np.linspace(5.0, -5.0, 7)
    fig = nb07.ffn_1d_figure(xs, hinges, output, corners=[-2.0, 1.5, 0.0, 2.0])
    assert not figures.layout_problems(fig), figures.layout_problems(fig)
    ax = fig.axes[0]
    for j in range(4):
        line = _line(ax, f"unit {j}: ReLU(x w1_{j} + b1_{j}) · w2_{j}")
        assert np.allclose(line.get_xdata(), xs) and np.allclose(line.get_ydata(), hinges[:, j])
    assert np.allclose(_line(ax, "FFN(x) = sum of units + b_2").get_ydata(), output)
    assert _verticals(ax) == [0.0, 1.5]  # -2 and 2 are not strictly inside [-1, 2]


# --- live figure -----------------------------------------------------------------

@pytest.mark.parametrize("x", [-3.0, -1.25, 0.0, 0.5, 1.5, 2.75])
def test_live_ffn_1d_shows_the_hidden_units_and_the_output(x):
    live = nb07.LiveFFN1D(FFN_1D, CORNERS_1D)
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    text = live.update(x=x)
    z = x * FFN_1D.W_1[0] + FFN_1D.b_1
    y = float(_ffn(FFN_1D, np.array([[x]]))[0, 0])
    assert [b.get_height() for b in live.bars] == pytest.approx(np.maximum(z, 0.0))
    grey = [tuple(b.get_facecolor()[:3]) == (0.75, 0.75, 0.75) for b in live.bars]
    assert grey == list(z <= 0)
    assert live.point.get_data()[0][0] == x and live.point.get_data()[1][0] == pytest.approx(y)
    assert f"units on: {int(np.sum(z > 0))} of 4" in text and f"= {y:+.4f}" in text
    assert live.png()[:8] == b"\x89PNG\r\n\x1a\n"


def test_live_ffn_1d_draws_the_curve_and_the_corners_it_is_given():
    live = nb07.LiveFFN1D(FFN_1D, [0.5, -2.5, 4.0], x_range=(-3.0, 3.0))
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    ax = live.fig.axes[0]
    curve = _line(ax, "FFN(x)")
    assert np.allclose(curve.get_ydata(), _ffn(FFN_1D, curve.get_xdata()[:, None])[:, 0])
    assert _verticals(ax) == [-2.5, 0.5]  # 4.0 lies outside the slider's range


def test_live_ffn_1d_rejects_wider_models():
    with pytest.raises(ValueError, match="d_model = 1"):
        nb07.LiveFFN1D(_random_ffn(2, 4, 0), CORNERS_1D)


def test_interactive_wires_the_slider():
    live = nb07.LiveFFN1D(FFN_1D, CORNERS_1D)
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    slider = widgets.SelectionSlider(options=[-1.0, 0.5, 1.5], value=0.5, description="x")
    box = with_controls(live, x=slider)
    slider.value = 1.5
    assert "units on: 3 of 4" in box.children[1].value


# --- self-checks ---------------------------------------------------------------

PARAM_COUNT_MISTAKES = {2 * 512 * 2048: "ffn_no_biases", 4 * 512 ** 2: "ffn_counted_like_attention",
                        4 * 512 ** 2 + 4 * 512: "ffn_counted_like_attention",
                        2 * 512 * 2048 + 2048: "ffn_one_bias", 2 * 512 * 2048 + 512: "ffn_one_bias",
                        2 * 512 ** 2 + 2 * 512: "ffn_square_weights", 2 * 512 ** 2: "ffn_square_weights"}

_Z_T = X_T @ W_1T + B_1T
OUTPUT_MISTAKES = {"ffn_relu_after_W_2": np.maximum(0, _Z_T @ W_2T + B_2T),
                   "ffn_no_relu": _Z_T @ W_2T + B_2T,
                   "ffn_missing_b_1": np.maximum(0, X_T @ W_1T) @ W_2T + B_2T,
                   "ffn_missing_b_2": np.maximum(0, _Z_T) @ W_2T}


def test_param_count_check():
    assert nb07.ffn_param_count(512, 2048) == 2_099_712
    assert nb07.check_ffn_param_count(..., 512, 2048).status == checks.UNANSWERED
    assert nb07.check_ffn_param_count(2 * 512 * 2048 + 2048 + 512, 512, 2048).ok
    v = nb07.check_ffn_param_count(123, 512, 2048)
    assert v.status == checks.WRONG and v.mistake is None
    assert nb07.check_ffn_param_count("many", 512, 2048).status == checks.WRONG
    assert nb07.check_ffn_param_count(2.5, 512, 2048).status == checks.WRONG


@pytest.mark.parametrize("answer, key", PARAM_COUNT_MISTAKES.items())
def test_param_count_names_each_mistake(answer, key):
    v = nb07.check_ffn_param_count(answer, 512, 2048)
    assert v.status == checks.MISTAKE and v.mistake == key, v.message


def test_param_count_mistake_message():
    assert nb07.check_ffn_param_count(2 * 512 * 2048, 512, 2048).message == (
        "Not quite: 2,097,152 is what forgetting the biases gives. FFN(x) = max(0, x W_1 + b_1) "
        "W_2 + b_2 also learns b_1 (d_ff numbers) and b_2 (d_model numbers): the count is "
        "2 d_model d_ff + d_ff + d_model.")


@pytest.mark.parametrize("answer", ["2099712", "2,099,712"])
def test_param_count_given_as_a_string_shows_the_number(answer):
    v = nb07.check_ffn_param_count(answer, 512, 2048)
    assert v.status == checks.WRONG and "is a string" in v.message, v.message
    assert "without quotes: answer = 2099712" in v.message
    assert "without quotes" in nb07.check_ffn_param_count("many", 512, 2048).message


def test_ffn_output_check():
    right = np.array([[3.5, -4.0], [0.0, 4.0]])  # worked by hand
    assert np.allclose(ac.feed_forward(X_T, W_1T, B_1T, W_2T, B_2T), right)
    assert nb07.check_ffn_output(..., X_T, W_1T, B_1T, W_2T, B_2T).status == checks.UNANSWERED
    assert nb07.check_ffn_output(right, X_T, W_1T, B_1T, W_2T, B_2T).ok
    assert nb07.check_ffn_output(right + 1.0, X_T, W_1T, B_1T, W_2T, B_2T).status == checks.WRONG


@pytest.mark.parametrize("key", OUTPUT_MISTAKES)
def test_ffn_output_names_each_mistake(key):
    v = nb07.check_ffn_output(OUTPUT_MISTAKES[key], X_T, W_1T, B_1T, W_2T, B_2T)
    assert v.status == checks.MISTAKE and v.mistake == key, v.message


def test_ffn_output_mistake_message():
    v = nb07.check_ffn_output(OUTPUT_MISTAKES["ffn_missing_b_2"], X_T, W_1T, B_1T, W_2T, B_2T)
    assert v.message == ('Not quite: this is the classic mistake "a missing b_2". Add the output '
                         "bias b_2 at the very end: ... W_2 + b_2.")


# --- the Japanese edition --------------------------------------------------------

def _japanese(*texts):
    """Every text has Japanese in it: (text, ...) of those that have none."""
    return [t for t in texts if not JAPANESE.search(t)]


def _words(fig):
    """Titles, axis labels, colour-bar labels and legend entries of fig that contain words."""
    texts = [fig._suptitle.get_text()] if fig._suptitle else []
    for ax in fig.axes:
        texts += [ax.get_title(), ax.get_title("left"), ax.get_xlabel(), ax.get_ylabel()]
        if ax.get_legend():
            texts += [t.get_text() for t in ax.get_legend().get_texts()]
    texts += [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    notation = re.compile(r"^(FFN(\(x\))?|t = [01]|ReLU\(x w1_j \+ b1_j\)|FFN: \|\|.*)$")  # no words
    return [t for t in texts if t and not notation.match(t)
            and not re.fullmatch(r"j = \d: .*", t)]  # the hinge of unit j: a formula


def test_figures_and_checks_speak_japanese_in_the_japanese_edition():
    """In notebooks/ja/07 every figure's titles, labels and legends, the live figure's texts and
    the verdicts are Japanese, and every figure still fits its fixed layout."""
    rng = np.random.default_rng(0)
    V = np.array([[0.0, 0.0], [3.0, 0.5], [1.0, 1.0], [2.0, 2.5], [0.5, 2.0]])
    xs = np.linspace(-3.0, 3.0, 61)
    hinges = ac.relu(xs[:, None] * FFN_1D.W_1[0] + FFN_1D.b_1) * FFN_1D.W_2[:, 0]
    with i18n.language_as("ja"), warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph (tofu) warns at draw time
        built = [nb07.locality_figure(rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), changed=2),
                 nb07.influence_figure(np.diag([0.5, 1.25, 2.0]), np.full((3, 3), 0.5)),
                 nb07.convex_hull_figure(V, ac.softmax(rng.normal(size=(50, 5))) @ V),
                 nb07.bent_line_figure(_random_ffn(2, 8, 3), np.array([-2.0, -1.0]),
                                       np.array([2.0, 1.5]), np.array([0.25, 0.6])),
                 nb07.ffn_1d_figure(xs, hinges, hinges.sum(axis=1) + FFN_1D.b_2[0], CORNERS_1D)]
        for fig in built:
            assert not figures.layout_problems(fig), figures.layout_problems(fig)
            words = _words(fig)
            assert len(words) >= 3 and not _japanese(*words), words
            plt.close(fig)
        influence = nb07.influence_figure(np.eye(3), np.full((3, 3), 0.5))
        assert _japanese(*(ax.get_title() for ax in influence.axes[:2])) == ["FFN: ||∂out_i / ∂x_j||"]
        live = nb07.LiveFFN1D(FFN_1D, CORNERS_1D)
        for x in (-3.0, 0.5, 1.5, 3.0):
            text = live.update(x=x)
            assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
            assert not _japanese(live.title.get_text(), text.splitlines()[3], *_words(live.fig))
        assert live.png()[:8] == b"\x89PNG\r\n\x1a\n"
        verdicts = [nb07.check_ffn_param_count(answer, 512, 2048) for answer in
                    (..., 2 * 512 * 2048 + 2048 + 512, 123, 2.5, [1], *PARAM_COUNT_MISTAKES)]
        verdicts += [nb07.check_ffn_output(answer, X_T, W_1T, B_1T, W_2T, B_2T) for answer in
                     (..., np.array([[3.5, -4.0], [0.0, 4.0]]), np.zeros((2, 2)),
                      *OUTPUT_MISTAKES.values())]
        assert not _japanese(*(v.message for v in verdicts))
        v = nb07.check_ffn_param_count(2 * 512 * 2048, 512, 2048)
        assert v.mistake == "ffn_no_biases" and "2,097,152" in v.message  # the number as in English
    v = nb07.check_ffn_param_count(2 * 512 * 2048, 512, 2048)
    assert v.message.startswith("Not quite: 2,097,152 is what forgetting the biases gives.")


def test_every_registered_07_mistake_is_tested_here():
    ours = {key for key, m in checks.MISTAKES.items() if m.notebook == "07"}
    assert ours == set(PARAM_COUNT_MISTAKES.values()) | set(OUTPUT_MISTAKES)
