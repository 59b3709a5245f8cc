"""Upstream's signatures in full (issue 49, item 6): every public function and autograd Function of
the recsys-examples files the ports come from has a port counterpart taking upstream's arguments
in upstream's order (so a call written for upstream means the same to the port), and each
argument the ports do not compute is refused in one line in every mode; the arguments the
ports gained for this are each checked against the float64 golden."""

import ast
import inspect

import pytest
import torch

from core import upstream
from core.upstream import check_pinned
from ops import all_ops, get_op
from ops.ports import load_port

#: (op, upstream function or Class.forward) -> the port's function or Class.forward.
PORTED = {
    ("layer_norm", "triton_layer_norm"): "layer_norm",
    ("layer_norm", "LayerNormFunction.forward"): "LayerNormFunction.forward",
    ("layer_norm", "triton_weighted_layer_norm_fwd"): "layer_norm_fwd",
    ("layer_norm", "triton_weighted_layer_norm_bwd"): "layer_norm_bwd",
    ("rms_norm", "triton_rms_norm"): "rms_norm",
    ("rms_norm", "RMSNormFunction.forward"): "RMSNormFunction.forward",
    ("swish_layer_norm", "triton_swish_layer_norm"): "swish_layer_norm",
    ("swish_layer_norm", "SwishLayerNormFunction.forward"): "SwishLayerNormFunction.forward",
    ("layer_norm_mul_dropout", "triton_layer_norm_mul_dropout_fwd"): "layer_norm_mul_dropout_fwd",
    ("layer_norm_mul_dropout", "triton_layer_norm_mul_dropout_bwd"): "layer_norm_mul_dropout_bwd",
    ("layer_norm_mul_dropout", "LayerNormMulDropoutFunction.forward"): (
        "LayerNormMulDropoutFunction.forward"
    ),
    ("layer_norm_mul_dropout", "triton_norm_mul_dropout"): "layer_norm_mul_dropout",
    ("group_norm_mul_dropout", "triton_group_norm_mul_dropout_fwd"): "group_norm_mul_dropout_fwd",
    ("group_norm_mul_dropout", "triton_group_norm_mul_dropout_bwd"): "group_norm_mul_dropout_bwd",
    ("group_norm_mul_dropout", "GroupNormMulDropoutFunction.forward"): (
        "GroupNormMulDropoutFunction.forward"
    ),
    ("group_norm_mul_dropout", "triton_norm_mul_dropout"): "group_norm_mul_dropout",
    ("addmm", "triton_addmm"): "addmm",
    ("addmm", "_AddMmFunction.forward"): "AddmmFunction.forward",
    ("addmm", "triton_addmm_silu_fwd"): "addmm_fwd",
    ("addmm", "triton_addmm_silu_bwd"): "addmm_bwd",
    ("jagged_dense_bmm_broadcast_add", "triton_jagged_dense_bmm_broadcast_add"): (
        "jagged_dense_bmm_broadcast_add"
    ),
    ("jagged_dense_bmm_broadcast_add", "_JaggedDenseBmmBroadcastAddFunction.forward"): (
        "JaggedDenseBmmBroadcastAddFunction.forward"
    ),
    ("jagged_dense_broadcast_add", "triton_jagged_dense_broadcast_add"): (
        "jagged_dense_broadcast_add"
    ),
    ("jagged_dense_broadcast_add", "_JaggedDenseBroadcastAddFunction.forward"): (
        "JaggedDenseBroadcastAddFunction.forward"
    ),
    ("concat_2d_jagged", "triton_concat_2D_jagged"): "triton_concat_2D_jagged",
    ("concat_2d_jagged", "triton_concat_2D_jagged_jagged"): "triton_concat_2D_jagged_jagged",
    ("concat_2d_jagged", "triton_concat_2D_dense_jagged"): "triton_concat_2D_dense_jagged",
    ("concat_2d_jagged", "_Concat2DJaggedFunction.forward"): "Concat2DJaggedFunction.forward",
    ("split_2d_jagged", "triton_split_2D_jagged"): "triton_split_2D_jagged",
    ("split_2d_jagged", "_Split2DJaggedFunction.forward"): "Split2DJaggedFunction.forward",
    ("silu", "triton_silu"): "silu",
    ("silu", "TritonSilu.forward"): "SiluFunction.forward",
    ("silu", "triton_silu_fwd"): "silu_fwd",
    ("silu", "triton_silu_bwd"): "silu_bwd",
    ("add_position_embeddings", "triton_add_position_embeddings"): (
        "triton_add_position_embeddings"
    ),
    ("add_position_embeddings", "_AddPositionEmbeddingsFunction.forward"): (
        "AddPositionEmbeddingsFunction.forward"
    ),
    ("add_timestamp_position_embeddings", "triton_add_timestamp_positional_embeddings"): (
        "triton_add_timestamp_positional_embeddings"
    ),
    ("add_timestamp_position_embeddings", "_AddTimestampPositionEmbeddingsFunction.forward"): (
        "AddTimestampPositionEmbeddingsFunction.forward"
    ),
    ("hstu_attention", "triton_hstu_mha"): "triton_hstu_mha",
    ("hstu_attention", "_AttentionFunction.forward"): "_AttentionFunction.forward",
    ("hstu_attention", "triton_hstu_attention_fwd"): "triton_hstu_attention_fwd",
    ("hstu_attention", "triton_hstu_attention_bwd"): "triton_hstu_attention_bwd",
    ("hstu_attention", "triton_cached_hstu_mha"): "triton_cached_hstu_mha",
}
#: Defaults the port sets otherwise, and why: the group norm's port is triton_norm_mul_dropout's
#: group_norm=True form (its False is the layer norm's port).
OTHER_DEFAULTS = {("group_norm_mul_dropout", "triton_norm_mul_dropout", "group_norm"): True}
#: Public functions of the pinned files with no port, and why.
NOT_PORTED = {
    "get_mm_configs": "addmm's autotune list, the GPU space of its fwd (ops/addmm.py)",
    "silu_configs": "silu's autotune list (ops/silu.py)",
    "triton_jagged_dense_bmm": "recsys' jagged x dense bmm: only inside the bmm broadcast add's "
    "backward here (FBGEMM's jagged_dense_bmm is its own op)",
    "_JaggedDenseBmmFunction.forward": "as triton_jagged_dense_bmm",
}


def _upstream_functions(op: str) -> dict[str, ast.FunctionDef]:
    """Public functions (not @triton.jit) and autograd Functions' forward of the op's file."""
    spec = get_op(op)
    tree = ast.parse(check_pinned(spec.upstream.file, spec.upstream.sha256, spec.upstream.source)
                     .read_text(encoding="utf-8"))  # fmt: skip
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            jit = any("jit" in ast.unparse(d) for d in node.decorator_list)
            if not jit and not node.name.startswith("_") and "hook" not in node.name:
                found[node.name] = node
        if isinstance(node, ast.ClassDef) and any("Function" in ast.unparse(b) for b in node.bases):
            for method in node.body:
                if isinstance(method, ast.FunctionDef) and method.name == "forward":
                    found[f"{node.name}.forward"] = method
    return found


def _parameters(node: ast.FunctionDef) -> list[tuple[str, object]]:
    """(name, default or inspect.Parameter.empty) of the positional parameters, ctx aside."""
    args = node.args.args
    defaults = [inspect.Parameter.empty] * (len(args) - len(node.args.defaults)) + [
        ast.literal_eval(d) for d in node.args.defaults
    ]
    return [(a.arg, d) for a, d in zip(args, defaults, strict=True) if a.arg != "ctx"]


requires_recsys = pytest.mark.skipif(
    upstream.RECSYS_EXAMPLES.missing() is not None,
    reason=upstream.RECSYS_EXAMPLES.missing() or "",
)
RECSYS_FILES = sorted(
    {s.upstream.file for s in all_ops().values() if s.upstream.source is upstream.RECSYS_EXAMPLES}
)


@requires_recsys
@pytest.mark.parametrize("file", RECSYS_FILES)
def test_every_public_function_of_upstream_has_a_port_or_a_reason(file):
    ops = [s.name for s in all_ops().values() if s.upstream.file == file]
    public = {name for op in ops for name in _upstream_functions(op)}
    ported = {name for op, name in PORTED if op in ops}
    assert public - ported == public & NOT_PORTED.keys()


@requires_recsys
@pytest.mark.parametrize(("op", "function"), sorted(PORTED))
def test_the_port_takes_upstreams_arguments_in_upstreams_order(op, function, cpu):
    """The port's positional parameters begin with upstream's, same names, same defaults; what
    the port adds after them is keyword-only or defaulted (config, check, ...)."""
    want = _parameters(_upstream_functions(op)[function])
    module = load_port(op)
    owner, _, method = PORTED[op, function].partition(".")
    target = getattr(getattr(module, owner), method) if method else getattr(module, owner)
    have = [
        (p.name, p.default)
        for p in inspect.signature(target).parameters.values()
        if p.kind is p.POSITIONAL_OR_KEYWORD and p.name != "ctx"
    ]
    want = [(n, OTHER_DEFAULTS.get((op, function, n), d)) for n, d in want]
    assert have[: len(want)] == want
    assert all(d is not inspect.Parameter.empty for _, d in have[len(want) :])


#: Settings of upstream's autotune lists that pick a kernel form the port does not have, at the
#: value of the form it has: hstu_attention's non-TLX configs carry TLX's knobs switched off
#: (a TLX config, listed only under Meta's Triton with `triton.language.extra.tlx`, fails here).
OTHER_FORMS = {
    "hstu_attention": {
        "USE_TLX": False, "NUM_BUFFERS": 1, "NUM_MMA_WARPS_PER_GROUP": 1, "NUM_MMA_GROUPS": 1,
    },
}  # fmt: skip
#: Tunables of upstream's lists the port kernel lacks, and why (each config still enters the
#: space, at the port's value of what it lacks).
NOT_TUNED = {
    ("hstu_attention", "UNROLL"): "the loop unroll factor of upstream's backward (one config of "
    "its 20 has 4): the port's backward loop is a plain range, not yet tunable (issue 49 item 4)",
}


@requires_recsys
@pytest.mark.parametrize("op", sorted({op for op, _ in PORTED}))
def test_upstreams_autotune_lists_name_the_kernels_tunables(op, cpu):
    """Upstream's autotune configs are part of a GPU space as they are (warm_starts.from_upstream):
    each of their block names is a tunable of the port kernel (x_block_size, BLOCK), so none is
    dropped on the way in; num_stages aside where a kernel has no loop to pipeline, the settings
    of forms the port lacks (OTHER_FORMS) where they pick the form it has, and NOT_TUNED."""
    from autotuner.search import warm_starts

    spec = get_op(op)
    forms = OTHER_FORMS.get(op, {})
    for kernel in spec.kernels:
        names = {t.name for t in kernel.tunables} | {"num_stages"}
        names |= {name for other, name in NOT_TUNED if other == op}
        for config in warm_starts.from_upstream(spec, kernel):
            assert {k: config[k] for k in forms.keys() & config.keys()} == {
                k: forms[k] for k in forms.keys() & config.keys()
            }, (kernel.name, config)
            assert set(config) - forms.keys() <= names, (kernel.name, config)


# -- the arguments the ports gained, each computed or refused ---------------------------------
@pytest.fixture(params=["unchecked", "checked"])
def mode(request, monkeypatch):
    """Refusals hold whether or not the inputs are checked (AUTOTUNE_CHECK)."""
    monkeypatch.setenv("AUTOTUNE_CHECK", "1" if request.param == "checked" else "0")
    return request.param


def one_line(raised) -> str:
    message = str(raised.value)
    assert "\n" not in message
    return message


def close(have, want, tol=1e-4):
    return torch.allclose(have.double(), want.double(), rtol=tol, atol=tol)


EPS = 1e-6


def rows(n=37, d=100, dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return (2 * torch.randn(n, d, generator=gen) + 0.5).to(dtype)


def layer_norm_golden(x, weight=None, bias=None, dy=None, dx_accumulate=None):
    """y and, for dy, the gradients of F.layer_norm in float64."""
    leaves = [t.double().requires_grad_() if t is not None else None for t in (x, weight, bias)]
    y = torch.nn.functional.layer_norm(leaves[0], leaves[0].shape[-1:], *leaves[1:], eps=EPS)
    if dy is None:
        return y.detach()
    y.backward(dy.double())
    dx = leaves[0].grad + (0 if dx_accumulate is None else dx_accumulate.double())
    return y.detach(), dx, *(t.grad if t is not None else None for t in leaves[1:])


@pytest.fixture
def ln(cpu):
    return load_port("layer_norm")


def test_layer_norm_without_weight_and_bias(ln, mode):
    """triton_layer_norm(x, None, None, eps): the norm alone, forward and backward, no gradients
    for the missing weight and bias (upstream's learnable=False)."""
    x, dy = rows(), rows(seed=1)
    leaf = x.clone().requires_grad_()
    y = ln.layer_norm(leaf, None, None, EPS)
    y.backward(dy)
    want_y, want_dx, _, _ = layer_norm_golden(x, dy=dy)
    assert close(y.detach(), want_y) and close(leaf.grad, want_dx)
    y, mean, rstd = ln.layer_norm_fwd(x, None, None, EPS)
    dx, dw, db = ln.layer_norm_bwd(dy, x, None, None, mean, rstd, False, EPS, 128, 1)
    assert close(y, want_y) and close(dx, want_dx) and dw is None and db is None


def test_layer_norm_refuses_a_weight_without_a_bias(ln, mode):
    x = rows()
    with pytest.raises(ValueError) as raised:
        ln.layer_norm(x, torch.ones(100), None, EPS)
    assert "together" in one_line(raised)


def test_layer_norm_refuses_given_statistics(ln, mode):
    """triton_weighted_layer_norm_fwd's mean and rstd (normalise with these) are not ported."""
    x = rows()
    for given in ({"mean": torch.zeros(37)}, {"rstd": torch.ones(37)}):
        with pytest.raises(ValueError) as raised:
            ln.layer_norm_fwd(x, None, None, EPS, **given)
        assert "mean and rstd" in one_line(raised)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("learnable", [True, False])
def test_layer_norm_bwd_adds_dx_accumulate(ln, dtype, learnable):
    """dx_accumulate (HSTU's residual gradient) is added to dx in fp32 before dx is rounded:
    upstream's DGRAD_ACCUM; the port adds it without `learnable` too (upstream drops it there)."""
    x, dy, acc = rows(dtype=dtype), rows(dtype=dtype, seed=1), rows(dtype=dtype, seed=2)
    w = (1 + 0.1 * rows(1, 100, seed=3)[0]).to(dtype) if learnable else None
    b = (0.1 * rows(1, 100, seed=4)[0]).to(dtype) if learnable else None
    _, mean, rstd = ln.layer_norm_fwd(x, w, b, EPS)
    dx, dw, db = ln.layer_norm_bwd(
        dy, x, w, b, mean, rstd, learnable, EPS, None, None, dx_accumulate=acc
    )
    _, want_dx, want_dw, want_db = layer_norm_golden(x, w, b, dy, acc)
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    assert close(dx, want_dx, tol)
    if learnable:
        assert close(dw, want_dw, tol) and close(db, want_db, tol)
    plain, *_ = ln.layer_norm_bwd(dy, x, w, b, mean, rstd, learnable, EPS, None, None)
    assert not torch.equal(plain, dx)


def test_layer_norm_bwd_waits_on_the_event_and_takes_upstreams_launch_values(ln):
    """wait_event is waited on before the kernels; BLOCK_D and num_warps (what upstream's forward
    returned) leave the result as it is."""
    x, dy = rows(), rows(seed=1)
    w, b = torch.ones(100), torch.zeros(100)
    _, mean, rstd = ln.layer_norm_fwd(x, w, b, EPS)

    class Event:
        waited = 0

        def wait(self):
            Event.waited += 1

    first = ln.layer_norm_bwd(dy, x, w, b, mean, rstd, True, EPS, 128, 1, wait_event=Event())
    second = ln.layer_norm_bwd(dy, x, w, b, mean, rstd, True, EPS, 16, 8)
    assert Event.waited == 1
    assert all(torch.equal(a, b) for a, b in zip(first, second, strict=True))


@pytest.mark.parametrize("op", ["rms_norm", "swish_layer_norm"])
def test_norms_whose_function_asserts_a_weight_refuse_none(op, mode, cpu):
    port, x = load_port(op), rows()
    call = port.rms_norm if op == "rms_norm" else lambda x, w, e: port.swish_layer_norm(x, w, w, e)
    with pytest.raises(ValueError) as raised:
        call(x, None, EPS)
    assert "asserts" in one_line(raised)


# -- layer_norm_mul_dropout and group_norm_mul_dropout ---------------------------------------
@pytest.fixture
def lnmd(cpu):
    return load_port("layer_norm_mul_dropout")


def lnmd_inputs(heads=4, dim=8, n=21):
    d = heads * dim
    x, dy = rows(n, d), rows(n, d, seed=1)
    wide = rows(n, heads * 3 * dim, seed=2).view(n, heads, 3 * dim)
    u3 = wide[:, :, dim : 2 * dim]  # [N, heads, dim] of a wider projection: heads not one row
    w, b = 1 + 0.1 * rows(1, d, seed=3)[0], 0.1 * rows(1, d, seed=4)[0]
    return x, u3, w, b, dy


@pytest.mark.parametrize("ratio", [0.0, 0.3])
def test_a_3d_strided_u_gives_what_its_rows_give(lnmd, ratio, mode):
    """u [N, heads, dim] sliced from a wider tensor (upstream's HSTU layout, U_IS_3D): y, dx,
    dweight and dbias as for the same u as [N, D] rows, du in u's shape; forward alone and
    through the autograd Function."""
    x, u3, w, b, dy = lnmd_inputs()
    u2 = u3.reshape(x.shape).contiguous()
    assert not u3.is_contiguous()
    results = []
    for u in (u2, u3):
        y, mean, rstd = lnmd.layer_norm_mul_dropout_fwd(x, u, w, b, EPS, ratio, True, seed=7)
        dx, du, dw, db, none = lnmd.layer_norm_mul_dropout_bwd(
            dy, x, u, w, b, mean, rstd, None, None, EPS, True, ratio, seed=7
        )
        assert du.shape == u.shape and none is None
        results.append((y, dx, du.reshape(x.shape), dw, db))
    assert all(close(h, t, 1e-6) for h, t in zip(*results, strict=True))
    leaves = [t.clone().requires_grad_() for t in (x, u3, w, b)]
    y = lnmd.layer_norm_mul_dropout(*leaves, EPS, ratio, True, seed=7)
    y.backward(dy)
    assert close(y.detach(), results[0][0], 1e-6)
    assert close(leaves[1].grad.reshape(x.shape), results[0][2], 1e-6)


def test_a_3d_u_golden(lnmd):
    """Without dropout the 3-D u's result is the float64 LN(x) * u."""
    x, u3, w, b, _ = lnmd_inputs()
    y, _, _ = lnmd.layer_norm_mul_dropout_fwd(x, u3, w, b, EPS, 0.0, True, seed=1)
    want = layer_norm_golden(x, w, b) * u3.reshape(x.shape).double()
    assert close(y, want)


def test_lnmd_bwd_writes_into_a_given_du_and_waits_on_the_event(lnmd):
    x, u3, w, b, dy = lnmd_inputs()
    _, mean, rstd = lnmd.layer_norm_mul_dropout_fwd(x, u3, w, b, EPS, 0.3, True, seed=2)
    waited = []
    event = type("Event", (), {"wait": lambda self: waited.append(1)})()
    du = torch.full(u3.shape, float("nan"))
    args = (dy, x, u3, w, b, mean, rstd, None, None, EPS, True, 0.3, 2)
    out = lnmd.layer_norm_mul_dropout_bwd(*args, wait_event=event, du=du)
    assert out[1] is du and waited == [1]
    assert torch.equal(du, lnmd.layer_norm_mul_dropout_bwd(*args)[1])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda p, a: p.layer_norm_mul_dropout_fwd(*a, EPS, 0.1, True, True, 1), "concat_ux"),
        (lambda p, a: p.layer_norm_mul_dropout_fwd(*a, EPS, 0.1, True), "seed"),
        (lambda p, a: p.layer_norm_mul_dropout(*a, EPS, 0.1, True, True), "concat_ux"),
        (lambda p, a: p.layer_norm_mul_dropout(*a, EPS, 0.1, True, False, True), "group_norm"),
        (lambda p, a: p.LayerNormMulDropoutFunction.apply(*a, EPS, 0.1, True, True), "concat_ux"),
    ],
)
def test_lnmd_refuses_what_is_not_ported(lnmd, mode, call, message):
    x, u3, w, b, _ = lnmd_inputs()
    with pytest.raises(ValueError) as raised:
        call(lnmd, (x, u3, w, b))
    assert message in one_line(raised)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"concat_ux": True}, "concat_ux"),
        ({"compute_y": True}, "compute_y"),
        ({"seed": None}, "seed"),
        ({"du": torch.empty(3)}, "du must be"),
    ],
)
def test_lnmd_bwd_refuses_what_is_not_ported(lnmd, mode, given, message):
    x, u3, w, b, dy = lnmd_inputs()
    stats = (torch.zeros(x.size(0)), torch.ones(x.size(0)))
    with pytest.raises(ValueError) as raised:
        lnmd.layer_norm_mul_dropout_bwd(
            dy, x, u3, w, b, *stats, None, None, EPS, True, 0.1, **{"seed": 1, **given}
        )
    assert message in one_line(raised)


@pytest.fixture
def gnmd(cpu):
    return load_port("group_norm_mul_dropout")


def gnmd_inputs(heads=2, dim=24, n=9):
    x, u, dy = rows(n, heads * dim), rows(n, heads * dim, seed=1), rows(n, heads * dim, seed=2)
    return x, u, 1 + 0.1 * torch.randn(heads), 0.1 * torch.randn(heads), dy


def test_gnmd_bwd_is_the_autograd_functions_backward(gnmd):
    """triton_group_norm_mul_dropout_bwd's port gives what the Function's backward gives."""
    x, u, w, b, dy = gnmd_inputs()
    form = {"num_heads": 2, "linear_dim": 24}
    y, mean, rstd = gnmd.group_norm_mul_dropout_fwd(x, u, w, b, EPS, 0.2, True, seed=3, **form)
    dx, du, dw, db, none = gnmd.group_norm_mul_dropout_bwd(
        dy, x, u, w, b, mean, rstd, None, None, None, EPS, True, 0.2, 3, **form
    )
    leaves = [t.clone().requires_grad_() for t in (x, u, w, b)]
    have = gnmd.group_norm_mul_dropout(*leaves, EPS, 0.2, True, seed=3, **form)
    have.backward(dy)
    assert torch.equal(have.detach(), y) and none is None
    for grad, want in zip((dx, du, dw, db), leaves, strict=True):
        assert close(grad, want.grad, 1e-5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda p, a: p.group_norm_mul_dropout_fwd(*a, EPS, 0.1, True, True, 2, 24, 1), "concat_ux"),
        (lambda p, a: p.group_norm_mul_dropout_fwd(*a, EPS, 0.1, True, False, 3, 16, 1), "num_heads"),
        (lambda p, a: p.group_norm_mul_dropout_fwd(*a, EPS, 0.1, True, False, 2, 24), "seed"),
        (lambda p, a: p.group_norm_mul_dropout(*a, EPS, 0.1, True, False, False, 2, 24), "group_norm"),
        (lambda p, a: p.group_norm_mul_dropout(*a, EPS, 0.1, True, True, True, 2, 24), "concat_ux"),
    ],
)  # fmt: skip
def test_gnmd_refuses_what_is_not_ported(gnmd, mode, call, message):
    x, u, w, b, _ = gnmd_inputs()
    with pytest.raises(ValueError) as raised:
        call(gnmd, (x, u, w, b))
    assert message in one_line(raised)


@pytest.mark.parametrize("given", [{"concat_ux": True}, {"compute_y": True}, {"seed": None}])
def test_gnmd_bwd_refuses_what_is_not_ported(gnmd, mode, given):
    x, u, w, b, dy = gnmd_inputs()
    stats = (torch.zeros(2 * x.size(0)), torch.ones(2 * x.size(0)))
    with pytest.raises(ValueError) as raised:
        gnmd.group_norm_mul_dropout_bwd(
            dy, x, u, w, b, *stats, None, None, None, EPS, True, 0.1,
            **{"seed": 1, "num_heads": 2, "linear_dim": 24, **given},
        )  # fmt: skip
    assert next(iter(given)) in one_line(raised)


# -- addmm ---------------------------------------------------------------------------------
@pytest.fixture
def addmm(cpu):
    return load_port("addmm")


def addmm_inputs():
    spec = get_op("addmm")
    given = spec.make_inputs(spec.case("n37_d100_t72_fp32"), torch.device("cpu"))
    return given, spec.reference(given)


def test_addmm_writes_into_out_and_silu_out(addmm):
    """triton_addmm_silu_fwd's out and silu_out: z and silu(z) written there and returned."""
    given, golden = addmm_inputs()
    x, w, b = given["x"], given["weight"], given["bias"]
    out, silu_out = torch.full((37, 72), float("nan")), torch.full((37, 72), float("nan"))
    z, y = addmm.addmm_fwd(x, w, b, True, True, out, silu_out)
    assert z is out and y is silu_out
    assert close(z, golden["z"]) and close(y, golden["y"])
    z, y = addmm.addmm_fwd(x, w, b, True, False, None, silu_out)
    assert z is None and y is silu_out and close(y, golden["y"])


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"out": torch.empty(36, 72)}, "out must be"),
        ({"silu_out": torch.empty(72, 37).t()}, "silu_out must be"),
        ({"out": torch.empty(37, 72), "keep_unfused_out": False}, "z is not kept"),
    ],
)
def test_addmm_refuses_buffers_it_cannot_write(addmm, mode, given, message):
    x, w, b = (addmm_inputs()[0][k] for k in ("x", "weight", "bias"))
    with pytest.raises(ValueError) as raised:
        addmm.addmm_fwd(x, w, b, True, **given)
    assert message in one_line(raised)


@pytest.mark.parametrize("given", [{"wgrad_stream": object()}, {"wgrad_event": object()}])
def test_addmm_bwd_refuses_the_weight_gradients_stream(addmm, mode, given):
    x, w, b = (addmm_inputs()[0][k] for k in ("x", "weight", "bias"))
    with pytest.raises(ValueError) as raised:
        addmm.addmm_bwd(x, w, x @ w, x @ w, True, True, **given)
    assert "wgrad_stream" in one_line(raised)


# -- hstu_attention ---------------------------------------------------------------------------
@pytest.fixture
def hstu(cpu):
    spec = get_op("hstu_attention")
    inputs = spec.make_inputs(spec.case("b2_h2_n40_d24_t1_c0_w6_fp32"), torch.device("cpu"))
    return load_port("hstu_attention"), spec, inputs


def hstu_calls(port, inputs, **given):
    """out, (dq, dk, dv), the cached out and the autograd entry point's out and grads, with
    upstream's optional arguments `given` by name."""
    spec = get_op("hstu_attention")
    n, alpha, targets, window, contextual = spec._options(inputs)
    q, k, v, offsets, dout = (inputs[x] for x in ("q", "k", "v", "offsets", "dout"))
    tma, scaling = given.get("enable_tma", False), given.get("scaling_seqlen", -1)
    out = port.triton_hstu_attention_fwd(
        n, alpha, q, k, v, offsets, targets, window, contextual, None, tma, scaling
    )
    grads = port.triton_hstu_attention_bwd(
        dout, q, k, v, *(torch.empty_like(x) for x in (q, k, v)), offsets, targets, n, alpha,
        window, contextual, None, tma, scaling,
    )  # fmt: skip
    cached = port.triton_cached_hstu_mha(
        n, alpha, inputs["delta_q"], inputs["k_cache"], inputs["v_cache"],
        inputs["cache_offsets"], targets, window, contextual, tma, scaling,
    )  # fmt: skip
    leaves = [x.clone().requires_grad_() for x in (q, k, v)]
    mha = port.triton_hstu_mha(
        n, alpha, *leaves, offsets, targets, window, contextual, False, tma, scaling
    )
    mha.backward(dout)
    return out, *grads, cached, mha.detach(), *(x.grad for x in leaves)


def test_hstu_enable_tma_loads_the_same_values(hstu):
    """enable_tma picks upstream's loads (tensor descriptors or pointers), not its math: the
    port, which has the pointer form only, gives the same tensors either way."""
    port, _, inputs = hstu
    plain, tma = hstu_calls(port, inputs), hstu_calls(port, inputs, enable_tma=True)
    assert all(torch.equal(a, b) for a, b in zip(plain, tma, strict=True))


def test_hstu_scaling_seqlen_divides_the_scores(hstu):
    """scaling_seqlen (-1: N) against the float64 golden with that divisor, in every function."""
    port, spec, inputs = hstu
    n, alpha, targets, window, contextual = spec._options(inputs)
    from ops.hstu_attention import attention, cached_attention

    q, k, v = (inputs[x].double().requires_grad_() for x in "qkv")
    golden = attention(q, k, v, inputs["offsets"], targets, alpha, 7, contextual, window)
    golden.backward(inputs["dout"].double())
    cached = cached_attention(
        *(inputs[x].double() for x in ("delta_q", "k_cache", "v_cache")),
        inputs["cache_offsets"], targets, alpha, 7, contextual, window,
    )  # fmt: skip
    want = (golden.detach(), q.grad, k.grad, v.grad, cached, golden.detach(), q.grad, k.grad,
            v.grad)  # fmt: skip
    have = hstu_calls(port, inputs, scaling_seqlen=7)
    assert all(close(h, w) for h, w in zip(have, want, strict=True))
    default = hstu_calls(port, inputs)
    explicit = hstu_calls(port, inputs, scaling_seqlen=n)
    assert all(torch.equal(a, b) for a, b in zip(default, explicit, strict=True))
