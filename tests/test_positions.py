"""RoPE and ALiBi (attention_core section 5b) against references written from the papers.

RoPE: Su et al. 2021 (RoFormer, arXiv:2104.09864), eq. (34): the pair (x_{2j}, x_{2j+1}) read
as the complex number x_{2j} + i x_{2j+1} is multiplied by e^{i m theta_j}, theta_j =
10000^(-2j/d). The split-halves layout pairs j with j + d/2 (GPT-NeoX; Hugging Face Llama's
rotate_half). ALiBi: Press et al. 2022, and the slope rule of the authors' reference code
(ofirpress/attention_with_linear_biases, get_slopes), whose values are written out below.
"""

import numpy as np
import pytest

import attention_core as ac


def rope_complex_reference(x, positions, base=10000.0, interleaved=False):
    """Independent reference: complex multiplication z_j * exp(i p theta_j), one loop per row."""
    x = np.asarray(x, dtype=float)
    n, d = x.shape[-2:]
    half = d // 2
    out = np.empty_like(x)
    for i in range(n):
        for j in range(half):
            theta = base ** (-(2 * j) / d)
            ia, ib = (2 * j, 2 * j + 1) if interleaved else (j, j + half)
            z = (x[..., i, ia] + 1j * x[..., i, ib]) * np.exp(1j * positions[i] * theta)
            out[..., i, ia], out[..., i, ib] = z.real, z.imag
    return out


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("base", [10000.0, 500000.0, 10.0])
def test_rope_matches_complex_reference(interleaved, base):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 7, 8))
    positions = np.array([0, 1, 2, 5, 9, 100, 4097])
    got = ac.rope(x, positions, base=base, interleaved=interleaved)
    np.testing.assert_allclose(got, rope_complex_reference(x, positions, base, interleaved),
                               rtol=1e-12, atol=1e-12)
    default = ac.rope(x, base=base, interleaved=interleaved)
    np.testing.assert_allclose(default, rope_complex_reference(x, np.arange(7), base, interleaved),
                               rtol=1e-12, atol=1e-12)


def test_the_two_layouts_are_a_permutation_of_each_other():
    rng = np.random.default_rng(1)
    d = 8
    x = rng.normal(size=(5, d))
    # interleaved feature 2j <-> split-halves feature j, 2j + 1 <-> j + d/2
    perm = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])
    np.testing.assert_allclose(ac.rope(x[:, perm]), ac.rope(x, interleaved=True)[:, perm], atol=1e-12)
    assert not np.allclose(ac.rope(x), ac.rope(x, interleaved=True))


@pytest.mark.parametrize("interleaved", [False, True])
def test_rope_scores_depend_on_the_offset_only(interleaved):
    rng = np.random.default_rng(2)
    d = 16
    q, k = rng.normal(size=d), rng.normal(size=d)
    theta = 10000.0 ** (-2 * np.arange(d // 2) / d)
    if interleaved:
        zq, zk = q[0::2] + 1j * q[1::2], k[0::2] + 1j * k[1::2]
    else:
        zq, zk = q[: d // 2] + 1j * q[d // 2:], k[: d // 2] + 1j * k[d // 2:]
    for m, n in [(0, 0), (3, 1), (1, 3), (50, 48), (1000, 998), (7, 0), (4096, 2), (12, 12)]:
        s = ac.rope(q[None], [m], interleaved=interleaved)[0] @ ac.rope(k[None], [n], interleaved=interleaved)[0]
        relative = np.real(np.sum(zq * np.conj(zk) * np.exp(1j * (m - n) * theta)))
        assert s == pytest.approx(relative, abs=1e-10)
        shifted = (ac.rope(q[None], [m + 37], interleaved=interleaved)[0]
                   @ ac.rope(k[None], [n + 37], interleaved=interleaved)[0])
        assert shifted == pytest.approx(s, abs=1e-10)


@pytest.mark.parametrize("interleaved", [False, True])
def test_position_zero_is_identity_and_norms_are_kept(interleaved):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 6, 10))
    np.testing.assert_array_equal(ac.rope(x, np.zeros(6, dtype=int), interleaved=interleaved), x)
    r = ac.rope(x, np.arange(6) * 1000, interleaved=interleaved)
    np.testing.assert_allclose(np.linalg.norm(r, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)
    assert not np.allclose(r[:, 1:], x[:, 1:])


@pytest.mark.parametrize("interleaved", [False, True])
def test_cached_path_equals_full_path(interleaved):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 9, 6))
    full = ac.rope(x, interleaved=interleaved)
    one_at_a_time = np.concatenate(
        [ac.rope(x[:, t:t + 1], positions=[t], interleaved=interleaved) for t in range(9)], axis=1)
    np.testing.assert_allclose(one_at_a_time, full, atol=1e-13)
    # forgetting the offset (positions restarting at 0) is the identity, not the full path
    forgot = np.concatenate([ac.rope(x[:, t:t + 1], interleaved=interleaved) for t in range(9)], axis=1)
    np.testing.assert_array_equal(forgot, x)
    assert not np.allclose(forgot, full)


def test_rope_does_not_modify_its_input_and_keeps_shape():
    x = np.arange(24.0).reshape(3, 8)
    before = x.copy()
    assert ac.rope(x).shape == (3, 8)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("kwargs, word", [
    (dict(x=np.ones((3, 5))), "x's last axis d must be even"),
    (dict(x=np.ones(4)), "x"),
    (dict(x=np.ones((3, 4)), positions=[0, 1]), "positions"),
    (dict(x=np.ones((3, 4)), positions=[[0, 1, 2]]), "positions"),
    (dict(x=np.ones((3, 4)), positions=[0.0, 1.0, 2.0]), "positions"),
    (dict(x=np.ones((3, 4)), positions=[0, 1.5, 2]), "positions"),
    (dict(x=np.ones((3, 4)), positions=[True, False, True]), "positions"),
    (dict(x=np.ones((3, 4)), positions=["a", "b", "c"]), "positions"),
    (dict(x=np.ones((3, 4)), base=1.0), "base"),
    (dict(x=np.ones((3, 4)), base=0.5), "base"),
    (dict(x=np.ones((3, 4)), base=-10.0), "base"),
    (dict(x=np.ones((3, 4)), base=np.inf), "base"),
    (dict(x=np.full((3, 4), np.nan)), "x"),
])
def test_rope_bad_inputs(kwargs, word):
    with pytest.raises(ValueError, match="^" + word):
        ac.rope(**kwargs)


def test_alibi_slopes_power_of_two():
    np.testing.assert_array_equal(ac.alibi_slopes(8), 2.0 ** -np.arange(1, 9))
    np.testing.assert_allclose(ac.alibi_slopes(16), 2.0 ** (-0.5 * np.arange(1, 17)), rtol=1e-15)
    np.testing.assert_array_equal(ac.alibi_slopes(1), [2.0 ** -8])
    np.testing.assert_array_equal(ac.alibi_slopes(2), [2.0 ** -4, 2.0 ** -8])


def test_alibi_slopes_not_a_power_of_two():
    # Values from the reference code's rule: get_slopes(p) for the largest power of two
    # p < h, then get_slopes(2p)[0::2][:h - p]. Written out by hand, not recomputed.
    np.testing.assert_allclose(ac.alibi_slopes(6),
                               [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8], rtol=1e-15)
    np.testing.assert_allclose(ac.alibi_slopes(12),
                               [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256,
                                2 ** -0.5, 2 ** -1.5, 2 ** -2.5, 2 ** -3.5], rtol=1e-15)
    np.testing.assert_allclose(ac.alibi_slopes(3), [2 ** -4, 2 ** -8, 2 ** -2], rtol=1e-15)


def test_alibi_bias_values_with_more_keys_than_queries():
    h, n, m = 4, 2, 5
    B = ac.alibi_bias(h, n, m)
    assert B.shape == (h, n, m)
    s = ac.alibi_slopes(h)
    for r in range(h):
        for i in range(n):
            for j in range(m):
                assert B[r, i, j] == pytest.approx(-s[r] * ((m - n + i) - j), abs=0)
    # the last query sees itself with bias 0 and the first key with -s * (m - 1)
    np.testing.assert_array_equal(B[:, -1, -1], 0.0)
    np.testing.assert_allclose(B[:, -1, 0], -s * (m - 1))
    np.testing.assert_array_equal(ac.alibi_bias(3, 4), ac.alibi_bias(3, 4, 4))
    # a cached query (n = 1) gets the last row of the full bias
    np.testing.assert_array_equal(ac.alibi_bias(3, 1, 6)[:, 0], ac.alibi_bias(3, 6)[:, -1])


def test_alibi_bias_with_causal_mask_gives_finite_rows():
    B = ac.alibi_bias(2, 5) + ac.causal_mask(5)
    w = ac.softmax(B)
    assert np.all(np.isfinite(w))
    np.testing.assert_array_equal(np.triu(w[0], 1), 0.0)


@pytest.mark.parametrize("args, word", [
    ((0,), "num_heads"), ((-2,), "num_heads"), ((2.0,), "num_heads"), ((True,), "num_heads"),
])
def test_alibi_slopes_bad_inputs(args, word):
    with pytest.raises(ValueError, match=f"^{word} must"):
        ac.alibi_slopes(*args)


@pytest.mark.parametrize("args, word", [
    ((0, 3), "num_heads"), ((2, 0), "n"), ((2, 3, 2), "m"), ((2, 3, 0), "m"), ((2, 3.0), "n"),
])
def test_alibi_bias_bad_inputs(args, word):
    with pytest.raises(ValueError, match=f"^{word} (must|= 2 keys is fewer than n = 3)"):
        ac.alibi_bias(*args)
