"""Tests for notebook 03: the figures and LiveFigure of course/nb03_scaling_and_softmax_saturation.py,
its self-checks, and the committed notebook's state."""

import json
from pathlib import Path

import numpy as np
import pytest

import attention_core as ac
from course import checks
from course import nb03_scaling_and_softmax_saturation as nb03

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "03_scaling_and_softmax_saturation.ipynb"


# --- numbers behind the figures ---------------------------------------------

def test_ten_key_scores_is_the_seeded_draw_q_then_K():
    rng = np.random.default_rng(0)
    q, K = rng.normal(size=(1, 512)), rng.normal(size=(10, 512))
    s = nb03.ten_key_scores(512, seed=0)
    assert s.shape == (10,)
    assert np.allclose(s, (q @ K.T)[0])
    assert not np.allclose(s, nb03.ten_key_scores(512, seed=1))


def test_seed_example_raw_softmax_is_one_hot_and_scaled_is_spread():
    s = nb03.ten_key_scores(512, seed=0)
    assert ac.softmax(s).max() > 0.999
    p = ac.softmax(s / np.sqrt(512))
    assert p.max() < 0.5 and np.sum(p > 0.05) >= 5


def test_softmax_saturation_uniform_and_one_hot():
    m = 10
    u = nb03.softmax_saturation(np.zeros(m))
    assert np.isclose(u["max_weight"], 1 / m)
    assert np.isclose(u["entropy"], np.log(m))
    assert np.isclose(u["jacobian_norm"], 0.3)  # sqrt(10 * 0.09^2 + 90 * 0.01^2)
    hard = nb03.softmax_saturation(np.array([1000.0, 0.0, 0.0]))
    assert np.isclose(hard["max_weight"], 1.0)
    assert hard["entropy"] == pytest.approx(0.0, abs=1e-12)
    assert hard["jacobian_norm"] == pytest.approx(0.0, abs=1e-12)


def test_softmax_saturation_jacobian_matches_finite_differences():
    s = np.random.default_rng(5).normal(size=6)
    eps = 1e-6
    J = np.stack([(ac.softmax(s + eps * e) - ac.softmax(s - eps * e)) / (2 * eps)
                  for e in np.eye(6)], axis=1)  # column j = dp / ds_j
    assert np.isclose(nb03.softmax_saturation(s)["jacobian_norm"], np.linalg.norm(J), rtol=1e-6)


def test_softmax_saturation_is_batched():
    S = np.random.default_rng(0).normal(size=(4, 3, 7))
    out = nb03.softmax_saturation(S)
    assert all(v.shape == (4, 3) for v in out.values())
    assert np.isclose(out["max_weight"][2, 1], ac.softmax(S[2, 1]).max())


def test_saturation_curves_shapes_and_trends():
    d_ks = 2 ** np.arange(11)
    c = nb03.saturation_curves(d_ks, np.random.default_rng(1), num_draws=200)
    for name in ("unscaled", "scaled"):
        assert set(c[name]) == {"max_weight", "entropy", "jacobian_norm"}
        assert all(v.shape == (11,) for v in c[name].values())
    for key in c["scaled"]:  # d_k = 1: dividing by sqrt(1) changes nothing
        assert np.isclose(c["scaled"][key][0], c["unscaled"][key][0])
    assert c["unscaled"]["max_weight"][-1] > 0.9 > 0.5 > c["scaled"]["max_weight"].max()
    assert c["unscaled"]["jacobian_norm"][-1] < 0.1 < 0.3 < c["scaled"]["jacobian_norm"].min()
    assert np.ptp(c["scaled"]["entropy"]) < 0.2  # flat in d_k
    assert c["unscaled"]["entropy"][-1] < 0.2


def test_static_figures_have_titles_and_labels():
    rng = np.random.default_rng(0)
    samples = {d: rng.normal(size=(500, d)).sum(axis=1) for d in (4, 64)}
    d_ks = 2 ** np.arange(4)
    figs = [nb03.plot_score_histograms(samples),
            nb03.plot_ten_key_softmax(nb03.ten_key_scores(512), 512),
            nb03.plot_saturation_curves(d_ks, nb03.saturation_curves(d_ks, rng, num_draws=5)),
            nb03.plot_saturation_small_multiples([1, 64, 1024])]
    assert [len(f.axes) for f in figs] == [4, 2, 3, 6]
    for f in figs:
        assert f.get_suptitle()
        for ax in f.axes:
            assert ax.get_title() and ax.get_xlabel()


def test_ten_key_figure_bars_are_the_two_softmaxes():
    s = nb03.ten_key_scores(512)
    fig = nb03.plot_ten_key_softmax(s, 512)
    raw = [b.get_height() for b in fig.axes[0].patches]
    scaled = [b.get_height() for b in fig.axes[1].patches]
    assert np.allclose(raw, ac.softmax(s)) and np.allclose(scaled, ac.softmax(s / np.sqrt(512)))


# --- the live figure ----------------------------------------------------------

def test_live_saturation_update_text_and_bars():
    live = nb03.LiveSaturation()
    text = live.update(d_k=512)
    assert text.splitlines() == [
        "d_k = 512, std of q.k = sqrt(d_k) = 22.6",
        "   raw: max weight 1.000, entropy 0.000 nats, ||J|| 0.000",
        "scaled: max weight 0.426, entropy 1.761 nats, ||J|| 0.362",
    ]
    s = nb03.ten_key_scores(512)
    assert np.allclose([b.get_height() for b in live.bars["scaled"]], ac.softmax(s / np.sqrt(512)))
    live.update(d_k=1)
    raw = [b.get_height() for b in live.bars["raw"]]
    assert np.allclose(raw, [b.get_height() for b in live.bars["scaled"]])  # sqrt(1) = 1
    assert "d_k = 1\n" in live.axes["raw"].get_title()


def test_live_saturation_updates_in_place_and_renders():
    live = nb03.LiveSaturation()
    bars = list(live.bars["raw"])
    n_axes = len(live.fig.axes)
    live.render(d_k=4)
    text, png = live.render(d_k=1024)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and "d_k = 1024" in text
    assert list(live.bars["raw"]) == bars and len(live.fig.axes) == n_axes


# --- self-checks ----------------------------------------------------------------

@pytest.mark.parametrize("answer, status, mistake", [
    (..., checks.UNANSWERED, None), (64, checks.CORRECT, None), (8, checks.MISTAKE, "var_std_for_variance"),
    (1, checks.MISTAKE, "var_after_scaling"), (3, checks.WRONG, None), ([64, 64], checks.WRONG, None)])
def test_check_dot_product_variance(answer, status, mistake):
    v = nb03.check_dot_product_variance(answer, d_k=64)
    assert (v.status, v.mistake) == (status, mistake)


@pytest.mark.parametrize("answer, status, mistake", [
    (..., checks.UNANSWERED, None), (1, checks.CORRECT, None), (64, checks.MISTAKE, "var_before_scaling"),
    (8, checks.MISTAKE, "var_divided_by_sqrt"), (0.5, checks.WRONG, None)])
def test_check_dot_product_variance_scaled(answer, status, mistake):
    v = nb03.check_dot_product_variance(answer, d_k=64, scaled=True)
    assert (v.status, v.mistake) == (status, mistake)


@pytest.mark.parametrize("answer, status, mistake", [
    (..., checks.UNANSWERED, None), ("b", checks.CORRECT, None), (" B ", checks.CORRECT, None),
    ("a", checks.MISTAKE, "why_scale_length_myth"), ("c", checks.MISTAKE, "why_scale_row_sums"),
    ("d", checks.WRONG, None)])
def test_check_why_scale(answer, status, mistake):
    v = nb03.check_why_scale(answer)
    assert (v.status, v.mistake) == (status, mistake)
    assert repr(v) == v.message


def test_weights_check_of_the_notebook_recognises_the_scaling_mistakes():
    rng = np.random.default_rng(3)
    Q, K = rng.normal(size=(2, 4)), rng.normal(size=(3, 4))  # as in the notebook
    S = Q @ K.T
    assert checks.check_weights(ac.softmax(S / 2.0), Q, K).ok
    for wrong, key in ((ac.softmax(S), "no_scaling"), (ac.softmax(S) / 2.0, "scale_after_softmax"),
                       (ac.softmax(S / 4.0), "divide_by_d_k")):
        assert checks.check_weights(wrong, Q, K).mistake == key
    assert checks.check_weights(np.round(ac.softmax(S / 2.0), 4), Q, K).ok  # 4 decimals are enough


def test_weights_check_of_the_notebook_names_transposed_scores():
    rng = np.random.default_rng(3)
    Q, K = rng.normal(size=(2, 4)), rng.normal(size=(3, 4))  # n = 2 queries, m = 3 keys
    v = checks.check_weights(ac.softmax(K @ Q.T / 2.0), Q, K)  # (m, n): not square
    assert v.mistake == "transposed_scores" and "K Q^T" in v.message, v.message
    assert checks.check_weights(ac.attention_weights(Q, K).T, Q, K).mistake == "transposed_weights"


def test_check_dot_product_variance_takes_4_decimals():
    assert nb03.check_dot_product_variance(1.00004, d_k=64, scaled=True).ok
    assert nb03.check_dot_product_variance(64, d_k=64).message == \
        "Correct: the Var[q.k] for d_k = 64 is 64 (within 1e-4)."


# --- the committed notebook -------------------------------------------------------

def _notebook():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))


def test_notebook_was_executed_in_order_and_checks_are_unanswered():
    cells = [c for c in _notebook()["cells"] if c["cell_type"] == "code"]
    checks = [c for c in cells if "answer = ..." in "".join(c["source"])]
    assert len(checks) >= 3
    for c in checks:
        text = "".join("".join(o["data"]["text/plain"]) for o in c["outputs"] if "data" in o)
        assert text.startswith("Not answered yet")


def test_notebook_prints_the_seed_numbers():
    out = "".join("".join(o.get("text", "")) for c in _notebook()["cells"] if c["cell_type"] == "code"
                  for o in c["outputs"])
    assert "std = sqrt(d_k) =  22.6" in out
    assert "softmax(s)            : [0. 0. 0. 1. 0. 0. 0. 0. 0. 0.]" in out
