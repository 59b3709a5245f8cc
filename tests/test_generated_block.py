import ast
import importlib.util
import subprocess
import sys
import warnings

import pytest
import torch

from autotuner.atk.generated_block import (
    BEGIN_MARKER,
    END_MARKER,
    OPTIONAL_HELPERS,
    nearest_warning,
    port_helpers,
    read_frozen,
    render_block,
    replace_block,
)
from core.errors import UserError
from core.paths import ATK_ROOT, port_file
from ops.ports import load_port

from .conftest import ROOT

SHAPE = {"B": 4, "max_seq_len": 16, "D": 32, "T": 20}
FROZEN = {
    "cpu": {
        "fwd": [
            {
                "case": "b4_n16_d32_t20_fp32",
                "dtype": "float32",
                "shape": SHAPE,
                "config": {"BLOCK_T": 16, "BLOCK_L": 64, "num_warps": 2, "num_stages": 2},
            },
            {
                "case": "b64_n256_d32_t20_fp32",
                "dtype": "float32",
                "shape": {**SHAPE, "B": 64, "max_seq_len": 256},
                "config": {"BLOCK_T": 64, "BLOCK_L": 16, "num_warps": 8, "num_stages": 4},
            },
        ]
    }
}


@pytest.mark.skipif(
    importlib.util.find_spec("ruff") is None, reason="ruff (a dev dependency) is not installed"
)
def test_block_is_formatted_python(tmp_path):
    path = tmp_path / "block.py"
    path.write_text(
        "import math\nimport os\nimport re\nimport warnings\n\nimport torch\nimport triton\n\n\n"
        + render_block(FROZEN, OPTIONAL_HELPERS)
    )
    command = [sys.executable, "-m", "ruff", "format", "--check", "--diff", str(path)]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def functions(source):
    return {n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}


def test_a_block_has_the_optional_helpers_it_is_given():
    assert functions(render_block(FROZEN, OPTIONAL_HELPERS)) >= set(OPTIONAL_HELPERS)
    assert not functions(render_block(FROZEN)) & set(OPTIONAL_HELPERS)
    assert functions(render_block(FROZEN, ("_block_d",))) & set(OPTIONAL_HELPERS) == {"_block_d"}
    with pytest.raises(ValueError, match="no such port helper in the template: _nope"):
        render_block(FROZEN, ("_block_d", "_nope"))


@pytest.mark.parametrize("op", sorted(p.name for p in (ROOT / ATK_ROOT).iterdir()))
def test_each_port_gets_the_optional_helpers_it_calls(op):
    """The block holds what the port (its code or its block's) calls: no helper missing, none
    rendered for nothing."""
    path = port_file(op, ROOT)
    source = path.read_text()
    called = {
        n.id
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Name) and n.id in OPTIONAL_HELPERS
    }
    assert called == set(port_helpers(source, path))


def test_replace_is_idempotent_and_round_trips(tree):
    path = port_file("jagged_dense_flash_attention")
    source = path.read_text()
    once = replace_block(source, FROZEN, path)
    assert replace_block(once, FROZEN, path) == once
    assert read_frozen(once, path) == FROZEN
    # Only the block changed.
    assert once.split(BEGIN_MARKER)[0] == source.split(BEGIN_MARKER)[0]
    assert once.split(END_MARKER)[1] == source.split(END_MARKER)[1]


@pytest.mark.parametrize("damage", ["drop_begin", "drop_end", "swap", "twice"])
def test_damaged_markers_are_refused(tree, damage):
    path = port_file("dense_to_jagged")
    source = path.read_text()
    broken = {
        "drop_begin": source.replace(BEGIN_MARKER + "\n", ""),
        "drop_end": source.replace(END_MARKER + "\n", ""),
        "swap": source.replace(BEGIN_MARKER, "@@")
        .replace(END_MARKER, BEGIN_MARKER)
        .replace("@@", END_MARKER),
        "twice": source + "\n" + BEGIN_MARKER + "\n" + END_MARKER + "\n",
    }[damage]
    with pytest.raises(UserError, match="markers are missing or damaged"):
        replace_block(broken, FROZEN, path)


def test_launcher_picks_frozen_then_nearest_then_default(tree, cpu):
    path = port_file("jagged_dense_flash_attention")
    path.write_text(replace_block(path.read_text(), FROZEN, path))
    port = load_port("jagged_dense_flash_attention")  # `tree` made the loader forget the real file
    device = torch.device("cpu")
    default = port.default_config("fwd", SHAPE)
    assert (
        port._pick_config("fwd", SHAPE, "float32", device, default)
        == FROZEN["cpu"]["fwd"][0]["config"]
    )
    near = {**SHAPE, "B": 48, "max_seq_len": 200}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        picked = port._pick_config("fwd", near, "float32", device, default)
        again = port._pick_config("fwd", near, "float32", device, default)
    # The nearest case's config, its BLOCK_T of 64 fit to T=20 padded to 32; BLOCK_L 16 fits.
    assert picked == again == {**FROZEN["cpu"]["fwd"][1]["config"], "BLOCK_T": 32}
    assert len(caught) == 1 and "nearest frozen case b64_n256_d32_t20_fp32" in str(
        caught[0].message
    )
    assert port._pick_config("fwd", SHAPE, "bfloat16", device, default) == default  # other dtype
    assert port._pick_config("bwd_dk", SHAPE, "float32", device, default) == default  # other kernel
    lookups = []
    port._pick, real_pick = (lambda *a: lookups.append(a) or real_pick(*a)), port._pick
    picked["BLOCK_M"] = -1  # a caller's change does not reach the kept pick
    for _ in range(3):
        assert port._pick_config("fwd", near, "float32", device, default) == again
    assert lookups == []  # kept from the first launch: no lookup (device name, regexes) per launch
    with warnings.catch_warnings(record=True) as caught:  # a new shape: looked up, not warned
        warnings.simplefilter("always")
        port._pick_config("fwd", {**near, "B": 96}, "float32", device, default)
    assert len(lookups) == 1 and caught == []


def test_a_config_frozen_for_another_row_width_keeps_its_elements_per_thread(tree):
    """A group-norm row of 2 x 8192 elements took the 1-warp config frozen for rows of 2 x 128:
    ptxas spent over 400 s on it on the H200 (verify, f4e17f0). Warps scale with the row."""
    config = {"BLOCK_N": 2, "NUM_PROGRAMS": 8192, "num_warps": 1}
    shape = {"N": 1048576, "H": 2, "D": 128}
    entry = {"case": "n1048576_h2_d128_fp32", "dtype": "float32", "shape": shape, "config": config}
    path = port_file("group_norm_mul_dropout")
    path.write_text(replace_block(path.read_text(), {"H200": {"bwd_dx": [entry]}}, path))
    port = load_port("group_norm_mul_dropout")

    def pick(asked):
        default = port.default_config("bwd_dx", asked)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the nearest case's warning
            return port._pick("H200", "bwd_dx", asked, "float32", default)

    # 64 times the padded row: 64 warps, at most 16 (the most a search tries)
    assert pick({"N": 3, "H": 2, "D": 5000}) == {**config, "num_warps": 16}
    assert pick({"N": 3, "H": 4, "D": 100}) == {**config, "num_warps": 2}  # rows of 4 x 128
    assert pick({"N": 3, "H": 2, "D": 100}) == config  # rows of 2 x 128, as the frozen case's
    assert pick({"N": 3, "H": 1, "D": 16}) == config  # narrower: never under one warp


def test_max_warps_is_the_most_any_search_tries():
    from ops import all_ops

    warps = {
        value
        for spec in all_ops().values()
        for kernel in spec.kernels
        for tunable in kernel.tunables
        if tunable.name == "num_warps"
        for value in tunable.values
    }
    assert f"_MAX_WARPS = {max(warps)} " in render_block(FROZEN)


def test_the_nearest_case_is_warned_once_per_kernel_and_soc(tree):
    """A suite of many small shapes said it once per shape, again and again (issue 17)."""
    frozen = {soc: {k: list(v) for k, v in FROZEN["cpu"].items()} for soc in ("cpu", "H200")}
    path = port_file("jagged_dense_flash_attention")
    path.write_text(replace_block(path.read_text(), frozen, path))
    port = load_port("jagged_dense_flash_attention")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for soc in ("cpu", "H200", "cpu"):
            for b in (48, 96, 200):
                shape = {**SHAPE, "B": b, "max_seq_len": 200}
                port._pick(soc, "fwd", shape, "float32", port.default_config("fwd", shape))
    said = [nearest_warning(w.message) for w in caught]
    assert said == [("fwd", "cpu"), ("fwd", "H200")]
    assert [w.message.case for w in caught] == [caught[0].message.case] * 2  # the case it took
    assert nearest_warning(UserWarning("fwd: no config frozen on cpu; nearest frozen case")) is None


def test_every_attention_launcher_finds_the_config_frozen_for_its_case(tree):
    """The backward's preprocess reads the forward's fp32 output: its frozen config must still be
    found under the case's dtype (an H200 freeze showed it falling back to another case)."""
    from ops import get_op

    spec = get_op("jagged_dense_flash_attention")
    case = spec.case("b4_n16_d32_t20_bf16")
    frozen = {}
    for kernel in spec.kernels:
        config = dict(kernel.default(case))
        config["BLOCK_T"] = 32 if config["BLOCK_T"] == 16 else 16  # unlike the default
        frozen[kernel.name] = [
            {"case": case.name, "dtype": case.dtype, "shape": case.shape, "config": config}
        ]
    path = port_file(spec.name)
    path.write_text(replace_block(path.read_text(), {"cpu": frozen}, path))
    port = load_port(spec.name)
    picked = {}
    pick = port._pick_config

    def spy(kernel, shape, dtype, device, default):
        picked[kernel] = pick(kernel, shape, dtype, device, default)
        return picked[kernel]

    port._pick_config = spy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spec.run_port(spec.make_inputs(case, torch.device("cpu")))
    assert picked == {name: entries[0]["config"] for name, entries in frozen.items()}
