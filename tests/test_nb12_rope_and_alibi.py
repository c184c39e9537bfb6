"""Tests for notebook 12 (positions by rotation and by distance): the figures, live figure,
self-checks of course/nb12_rope_and_alibi.py, the position-aware language model of position_lm.py
(through the names the companion imports, as the notebook calls them), and the committed
notebook's stored state. The core's rope / alibi_slopes / alibi_bias are tested in
tests/test_positions.py and against torch in tests/test_torch_crosscheck.py."""

import warnings
from pathlib import Path

import ipywidgets as widgets
import numpy as np
import pytest

import attention_core as ac
import attention_learning as al
from course import checks, figures, i18n
from course import nb12_rope_and_alibi as nb12
from course.live import with_controls
from live_frames import blit_mismatches
from stored_notebook import assert_checks_unanswered, stored_text
from figure_texts import texts_not_in_japanese

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "12_rope_and_alibi.ipynb"
SYMBOLS = {r"$\tilde q_m \cdot \tilde k_n$", "RoPE", "ALiBi", "rope", "alibi"}  # the same in every language


# --- figures and the live figure -----------------------------------------------------------

def test_plot_pair_angles_shows_every_pairs_angle_and_turn_length():
    fig = nb12.plot_pair_angles(d=16, base=100.0, n=50)
    ax_a, ax_w = fig.axes[:2]
    angles = ax_a.images[0].get_array()  # (d/2, n): pair j's angle at every position, mod 2 pi
    theta = 100.0 ** (-2 * np.arange(8) / 16)
    assert angles.shape == (8, 50)
    assert np.allclose(angles, np.mod(np.arange(50)[None, :] * theta[:, None], 2 * np.pi))
    assert np.allclose(ax_w.lines[0].get_ydata(), 2 * np.pi / theta)
    assert ax_w.get_yscale() == "log"
    assert not figures.layout_problems(fig), figures.layout_problems(fig)


def test_plot_rotation_draws_the_same_score_curve_for_every_query_position():
    fig = nb12.plot_rotation(ms=(5, 60, 200), offset=3)
    ax_s = fig.axes[-1]
    curves = [line.get_ydata() for line in ax_s.lines if line.get_label().startswith("query at")]
    assert len(curves) == 3
    for curve in curves[1:]:
        np.testing.assert_allclose(curve, curves[0], rtol=0, atol=1e-9)
    assert not figures.layout_problems(fig), figures.layout_problems(fig)


def test_plot_alibi_weights_fall_with_distance_at_each_heads_rate():
    fig = nb12.plot_alibi(num_heads=8, n=12, heads=(0, 3, 7))
    np.testing.assert_allclose(fig.axes[0].lines[0].get_ydata(), ac.alibi_slopes(8))
    s = ac.alibi_slopes(8)
    for line, r in zip(fig.axes[1].lines, (0, 3, 7), strict=True):
        w = line.get_ydata()
        assert w.sum() == pytest.approx(1.0)
        np.testing.assert_allclose(w[1:] / w[:-1], np.exp(s[r]))  # e^(-s_r (i - j)), one step closer
    assert not figures.layout_problems(fig), figures.layout_problems(fig)


def test_plot_extrapolation_one_line_per_scheme():
    acc = {s: np.linspace(1, 0, 64) for s in nb12.SCHEMES}
    fig = nb12.plot_extrapolation(acc, n_train=16, k=3)
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines[:4]] == ["sinusoidal", "RoPE", "ALiBi", "no position"]
    assert len({line.get_linestyle() for line in ax.lines[:4]}) == 4  # told apart without colour
    assert not figures.layout_problems(fig), figures.layout_problems(fig)


def test_live_rotation_update_text_curve_and_blit():
    live = nb12.LiveRotation()
    assert not figures.layout_problems(live.fig), figures.layout_problems(live.fig)
    for values in (dict(m=5, offset=3, base=10000), dict(m=100, offset=64, base=10),
                   dict(m=0, offset=0, base=100000)):
        text = live.update(**values)
        assert "the same curve from a query at position 0: True" in text
        np.testing.assert_allclose(live.score_line.get_ydata(), live.zero_dots.get_ydata(), atol=1e-9)
        assert not blit_mismatches(live, [values], tolerance="exact")  # the blitted frame is the full draw
    m, offset = 5, 3
    text = live.update(m=m, offset=offset, base=10000)
    q_r, k_r = ac.rope(live.q, [m]), ac.rope(live.k, [m - offset])
    assert f"score q~_m . k~_n = {float((q_r @ k_r.T)[0, 0]):+.4f}" in text
    capped = live.update(m=2, offset=10, base=10000)
    assert capped.startswith("m = 2, n = m - offset = 0 (limited to m")
    with pytest.raises(ValueError, match="offset"):
        live.update(m=5, offset=65)


def test_interactive_wires_the_three_sliders():
    m = widgets.IntSlider(value=5, min=0, max=100)
    offset = widgets.IntSlider(value=3, min=0, max=64)
    base = widgets.SelectionSlider(options=[10, 100, 1000, 10000, 100000], value=10000)
    box = with_controls(nb12.LiveRotation(), m=m, offset=offset, base=base)
    m.value, offset.value, base.value = 40, 7, 100
    assert "m = 40, n = m - offset = 33, base = 100" in box.children[1].value


# --- the Japanese edition -------------------------------------------------------------------

def test_figures_and_checks_in_the_japanese_edition():
    """notebooks/ja/12 draws the same figures with translated texts: Japanese, fitting the layout,
    no missing glyph; the live figure's summary and the verdicts are Japanese too."""
    acc = {s: np.linspace(1, 0, 64) for s in nb12.SCHEMES}
    with i18n.language_as("ja"), warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph (tofu) warns at draw time
        live = nb12.LiveRotation()
        drawn = [nb12.plot_pair_angles(), nb12.plot_rotation(), nb12.plot_alibi(),
                 nb12.plot_extrapolation(acc, 16, 3), live.fig]
        summary = live.update(m=5, offset=3, base=10000)
        for fig in drawn:
            fig.canvas.draw()
            assert not figures.layout_problems(fig), figures.layout_problems(fig)
            untranslated = [t for t in texts_not_in_japanese(fig) if t not in SYMBOLS
                            and not t.startswith(("m = ", "head ", "$"))]
            assert not untranslated, untranslated
        verdict = nb12.check_alibi_slopes(-ac.alibi_slopes(12), num_heads=12)
    assert "m = 5" in summary and i18n_japanese(summary)
    assert verdict.mistake == "alibi_slope_sign" and i18n_japanese(verdict.message)


def i18n_japanese(text: str) -> bool:
    return any("\u3040" <= ch <= "\u30ff" or "\u4e00" <= ch <= "\u9fff" for ch in text)


# --- self-checks ----------------------------------------------------------------------------

def _case12():
    rng = np.random.default_rng(12)  # the notebook's question 1
    return rng.normal(size=(5, 8)), rng.normal(size=(8, 4)), rng.normal(size=(8, 4)), rng.normal(size=(8, 4))


def _rope_output(X, W_Q, W_K, W_V, rotate_q, rotate_k, rotate_v=None, rotate_out=None):
    Q, K, V = rotate_q(X @ W_Q), rotate_k(X @ W_K), (rotate_v or (lambda Z: Z))(X @ W_V)
    O = ac.scaled_dot_product_attention(Q, K, V, ac.causal_mask(len(X)))[0]
    return (rotate_out or (lambda Z: Z))(O)


def test_check_rope_attention_recognises_each_mistake():
    X, W_Q, W_K, W_V = _case12()
    r, ident = ac.rope, (lambda Z: Z)
    inter = lambda Z: ac.rope(Z, interleaved=True)  # noqa: E731
    slow = lambda Z: ac.rope(Z, base=100.0)  # base^(-2j/d) with base 100 = 10000^(-j/d)  # noqa: E731
    cases = {
        None: _rope_output(X, W_Q, W_K, W_V, r, r),
        "rope_wrong_layout": _rope_output(X, W_Q, W_K, W_V, inter, inter),
        "rope_rotate_v": _rope_output(X, W_Q, W_K, W_V, r, r, rotate_v=r),
        "rope_after_attention": _rope_output(X, W_Q, W_K, W_V, ident, ident, rotate_out=r),
        "rope_theta_d": _rope_output(X, W_Q, W_K, W_V, slow, slow),
        "rope_missing": _rope_output(X, W_Q, W_K, W_V, ident, ident),
        "rope_query_only": _rope_output(X, W_Q, W_K, W_V, r, ident),
        "rope_key_only": _rope_output(X, W_Q, W_K, W_V, ident, r),
        "rope_on_embeddings": _rope_output(ac.rope(X), W_Q, W_K, W_V, ident, ident),
        "mask_missing": ac.scaled_dot_product_attention(ac.rope(X @ W_Q), ac.rope(X @ W_K), X @ W_V)[0],
        "no_scaling": ac.softmax(ac.rope(X @ W_Q) @ ac.rope(X @ W_K).T + ac.causal_mask(5)) @ (X @ W_V),
    }
    for key, answer in cases.items():
        v = nb12.check_rope_attention(answer, X, W_Q, W_K, W_V)
        if key is None:
            assert v.ok, v.message
        else:
            assert v.status == checks.MISTAKE and v.mistake == key, (key, v.message)
    off = nb12.check_rope_attention(cases[None] + 0.5, X, W_Q, W_K, W_V)
    assert off.status == checks.WRONG and "Rotate Q and K" in off.message
    assert nb12.check_rope_attention(..., X, W_Q, W_K, W_V).status == checks.UNANSWERED


def test_check_rope_cached_query_recognises_each_mistake():
    rng = np.random.default_rng(13)
    K_cache, V_cache = ac.rope(rng.normal(size=(4, 4))), rng.normal(size=(4, 4))
    q, k, v = rng.normal(size=(1, 4)), rng.normal(size=(1, 4)), rng.normal(size=(1, 4))

    def out(q_r, k_r):
        return ac.scaled_dot_product_attention(q_r, np.vstack([K_cache, k_r]), np.vstack([V_cache, v]))[0]

    cases = {None: out(ac.rope(q, [4]), ac.rope(k, [4])),
             "rope_cache_offset": out(ac.rope(q), ac.rope(k)),
             "rope_cache_query_offset": out(ac.rope(q), ac.rope(k, [4])),
             "rope_cache_key_unrotated": out(ac.rope(q, [4]), k),
             "rope_wrong_layout": out(ac.rope(q, [4], interleaved=True), ac.rope(k, [4], interleaved=True))}
    cases["cache_new_key_missing"] = ac.scaled_dot_product_attention(ac.rope(q, [4]), K_cache, V_cache)[0]
    cases["rope_cache_rotated_twice"] = ac.scaled_dot_product_attention(
        ac.rope(q, [4]), np.vstack([ac.rope(K_cache), ac.rope(k, [4])]), np.vstack([V_cache, v]))[0]
    for key, answer in cases.items():
        verdict = nb12.check_rope_cached_query(answer, q, k, v, K_cache, V_cache, t=4)
        assert (verdict.ok if key is None else verdict.mistake == key), (key, verdict.message)
    assert "position 4" in nb12.check_rope_cached_query(cases["rope_cache_offset"], q, k, v,
                                                        K_cache, V_cache, t=4).message


@pytest.mark.parametrize("answer, key", [
    (2.0 ** (-8 * np.arange(1, 13) / 12), "alibi_geometric_any_h"),
    (2.0 ** (-8 * np.arange(0, 12) / 12), "alibi_slopes_from_zero"),
    (ac.alibi_slopes(12)[::-1], "alibi_slopes_reversed"),
    (-ac.alibi_slopes(12), "alibi_slope_sign"),
    (np.sort(ac.alibi_slopes(12))[::-1], "alibi_slopes_sorted"),
    (np.concatenate([ac.alibi_slopes(8), ac.alibi_slopes(16)[1::2][:4]]), "alibi_other_half"),
])
def test_check_alibi_slopes_recognises_each_mistake(answer, key):
    v = nb12.check_alibi_slopes(answer, num_heads=12)
    assert v.status == checks.MISTAKE and v.mistake == key, v.message
    assert nb12.check_alibi_slopes(ac.alibi_slopes(12), num_heads=12).ok


def test_check_layout_permutation():
    right = [0, 4, 1, 5, 2, 6, 3, 7]  # split halves -> interleaved, the inverse of pi
    assert nb12.check_layout_permutation(right, d=8).ok
    assert nb12.check_layout_permutation(np.array(right), d=8).ok
    inverse = nb12.check_layout_permutation([0, 2, 4, 6, 1, 3, 5, 7], d=8)  # pi itself
    assert inverse.mistake == "rope_inverse_permutation"
    repeated = nb12.check_layout_permutation([0, 4, 1, 5, 2, 6, 3, 3], d=8)
    assert repeated.status == checks.WRONG and "exactly once" in repeated.message
    assert nb12.check_layout_permutation(..., d=8).status == checks.UNANSWERED
    # the order is what the question says: split-halves weights read by interleaved code
    rng = np.random.default_rng(0)
    X, W_Q, W_K = rng.normal(size=(6, 8)), rng.normal(size=(8, 8)), rng.normal(size=(8, 8))
    S_split = ac.rope(X @ W_Q) @ ac.rope(X @ W_K).T
    S_inter = ac.rope(X @ W_Q[:, right], interleaved=True) @ ac.rope(X @ W_K[:, right], interleaved=True).T
    np.testing.assert_allclose(S_inter, S_split, atol=1e-12)


def test_every_mistake_of_notebook_12_is_registered():
    ours = {k for k, m in checks.MISTAKES.items() if m.notebook == "12"}
    assert ours == {"rope_wrong_layout", "rope_rotate_v", "rope_after_attention", "rope_theta_d",
                    "rope_missing", "rope_query_only", "rope_cache_offset", "rope_cache_query_offset",
                    "rope_cache_key_unrotated", "alibi_geometric_any_h", "alibi_slopes_from_zero",
                    "alibi_slopes_reversed", "alibi_slope_sign", "rope_inverse_permutation",
                    "rope_key_only", "rope_on_embeddings", "rope_cache_rotated_twice",
                    "alibi_slopes_sorted", "alibi_other_half"}


# --- the position-aware language model of section 7 ------------------------------------------

@pytest.mark.parametrize("scheme", nb12.SCHEMES)
def test_position_models_gradient_matches_finite_differences(scheme):
    rng = np.random.default_rng(5)
    p = nb12.init_params(vocab_size=7, d_model=8, d_ff=12, rng=rng)
    p = {k: v + rng.normal(0, 0.1, size=v.shape) for k, v in p.items()}  # gamma != 1, beta != 0
    tokens, targets = nb12.repeat_batch(rng, 2, 6, 7, 2)

    def loss(q):
        return al.softmax_cross_entropy(nb12.forward(q, tokens, scheme, 2)["logits"], targets)[0]

    s = nb12.forward(p, tokens, scheme, 2)
    _l, dlogits = al.softmax_cross_entropy(s["logits"], targets)
    grads = nb12.backward(p, s, dlogits)
    assert set(grads) == set(p)
    eps = 1e-6
    for name in p:
        flat = p[name].ravel()
        for idx in rng.choice(flat.size, size=min(6, flat.size), replace=False):
            up = {k: v.copy() for k, v in p.items()}
            down = {k: v.copy() for k, v in p.items()}
            up[name].ravel()[idx] += eps
            down[name].ravel()[idx] -= eps
            numeric = (loss(up) - loss(down)) / (2 * eps)
            assert grads[name].ravel()[idx] == pytest.approx(numeric, rel=1e-5, abs=1e-8), (
                f"{scheme}: d loss / d {name}[{idx}]")


def test_position_models_are_causal_and_differ_only_where_positions_enter():
    rng = np.random.default_rng(6)
    p = nb12.init_params(vocab_size=5, d_model=8, d_ff=8, rng=rng)
    assert set(p) == set(al.LMConfig(vocab_size=5, n_ctx=1, d_model=8, d_ff=8).shapes) - {"P"}
    tokens = rng.integers(0, 5, size=(1, 9))
    changed = tokens.copy()
    changed[0, 6] = (changed[0, 6] + 1) % 5
    for scheme in nb12.SCHEMES:
        a = nb12.forward(p, tokens, scheme, 2)["logits"]
        b = nb12.forward(p, changed, scheme, 2)["logits"]
        np.testing.assert_allclose(a[0, :6], b[0, :6], atol=1e-12)  # earlier rows never see token 6
        assert not np.allclose(a[0, 6:], b[0, 6:])
    with pytest.raises(ValueError, match="scheme"):
        nb12.forward(p, tokens, "learned", 2)
    # sinusoidal: the table added to the embeddings, X = E[tokens] + PE
    s = nb12.forward(p, tokens, "sinusoidal", 2)
    X = al.embedding(tokens, p["E"])
    assert np.allclose(s["X"] - X, ac.sinusoidal_positional_encoding(9, 8))


def test_accuracy_by_position_counts_only_predicted_positions():
    rng = np.random.default_rng(7)
    p = nb12.init_params(vocab_size=6, d_model=8, d_ff=8, rng=rng)
    tokens, targets = nb12.repeat_batch(rng, 4, 10, 6, 3)
    r = nb12.accuracy_by_position(p, tokens, targets, "rope", h=2, k=3)
    assert np.isnan(r["accuracy"][:3]).all() and np.isfinite(r["accuracy"][3:]).all()
    assert np.isnan(r["weight_k_back"][:3]).all() and (r["weight_k_back"][3:] <= 1).all()
    assert np.array_equal(targets[:, 3:], tokens[:, :-3]) and (targets[:, :3] == -100).all()


# --- the committed notebook -------------------------------------------------------------------

def test_notebook_stores_every_identity_as_checked():
    out = stored_text(NOTEBOOK)
    for line in ("position 0 is the identity: True", "norms unchanged (to 1e-12): True",
                 "rope(q, 3), interleaved = q R_3^T: True",
                 "900 scores equal the relative form (to 1e-9): True",
                 "same weights at positions 0..5 and 4000..4005: True",
                 "every query against its own key identical: True",
                 "converted weights, split halves = interleaved scores: True",
                 "cached, one position at a time = full pass: True",
                 "the same curve from a query at position 0: True"):
        assert line in out, line
    assert "offset 22 against 3: [ 0.99  0.96 -0.32  0.82  0.98  1.    1.    1.  ]" in out


def test_notebook_checks_are_unanswered_and_nothing_on_stderr():
    assert_checks_unanswered(NOTEBOOK, 4)
