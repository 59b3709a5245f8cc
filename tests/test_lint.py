import json

import pytest

from autotuner.atk.generated_block import BEGIN_MARKER, read_frozen
from autotuner.atk.lint import fix, lint
from core.paths import ATK_ROOT

from .conftest import ROOT

OP = "jagged_to_padded_dense"


def messages(folder):
    return [str(p) for p in lint(folder)]


def test_tree_is_clean():
    assert messages(ROOT / ATK_ROOT) == []


@pytest.fixture
def folder(tree):
    return tree / ATK_ROOT / OP


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_missing_and_misplaced_files(folder):
    (folder / "npu_atk_test" / f"generate_{OP}.py").unlink()
    (folder / "gpu_atk_test" / f"{OP}.yaml").write_text("name: x\n")
    (folder / "gpu_atk_test" / f"{OP}_performance.json").write_text("{}")
    (folder / "npu_atk_test" / "notes.txt").write_text("scratch")
    found = messages(folder)
    assert f"{folder}/npu_atk_test/generate_{OP}.py: missing" in found
    assert (
        f"{folder}/gpu_atk_test/{OP}.yaml: does not belong on the GPU side (no yaml, generator or performance json there)"
        in found
    )
    assert (
        f"{folder}/gpu_atk_test/{OP}_performance.json: does not belong on the GPU side (no yaml, generator or performance json there)"
        in found
    )
    assert any(m.startswith(f"{folder}/npu_atk_test/notes.txt: unexpected file") for m in found)
    assert len(found) == 4


def test_yaml_fields(folder):
    path = folder / "npu_atk_test" / f"{OP}.yaml"
    edit(path, f"\napi_type: {OP}\n", "\n")
    edit(path, f"triton_api_type: {OP}", "triton_api_type: other_op")
    edit(path, "outputs: 1", "outputs: 3")
    assert messages(folder) == [
        f"{path}: field 'api_type' is missing",
        f"{path}: triton_api_type is 'other_op', must name the op '{OP}'",
        f"{path}: outputs is 3, the op spec has 1 outputs",
    ]


def test_readme_provenance(folder):
    path = folder / "README.md"
    edit(path, "| commit | 71d6f8b229d964e61cac24df9bbd2ffcc4b4d378 |", "| commit | main |")
    edit(path, "| lines | 268-624 |", "| lines | 624-268 |")
    edit(path, "| repository | https://github.com/pytorch/FBGEMM |\n", "")
    assert messages(folder) == [
        f"{path}: provenance: no '| repository | ... |' row",
        f"{path}: provenance: commit 'main' is not a 40-hex commit id",
        f"{path}: provenance: lines '624-268' is not a range like 17-864",
        f"{path}: provenance: commit is 'main', the op spec says '71d6f8b229d964e61cac24df9bbd2ffcc4b4d378'",
        f"{path}: provenance: lines is '624-268', the op spec says '268-624'",
    ]


def test_license_markers_atk_guard_and_json(folder):
    kernel = folder / "npu_atk_test" / f"{OP}.py"
    kernel.write_text(
        "\n".join(kernel.read_text().splitlines()[3:]).replace(BEGIN_MARKER, "# begin")
    )
    api = folder / "gpu_atk_test" / f"{OP}_api.py"
    edit(
        api,
        f"from {OP}_support import PADDING_VALUE, BaseApi, register",
        "from atk.tasks.api_execute import register",
    )
    perf = folder / "npu_atk_test" / f"{OP}_performance.json"
    perf.write_text(perf.read_text()[:-10])
    found = messages(folder)
    assert f"{kernel}: license header: no 'Copyright (c)' line in the first 6 lines" in found
    assert f"{kernel}: license header: no Apache-2.0 notice in the first 6 lines" in found
    assert (
        f"{kernel}: generated block: need one begin and one end marker line, found 0 and 1" in found
    )
    assert any(m.startswith(f"{api}: imports atk unguarded") for m in found)
    assert any(m.startswith(f"{perf}: not valid JSON") for m in found)
    assert len(found) == 5


def test_unknown_op_folder(tree):
    stray = tree / ATK_ROOT / "no_such_op"
    (stray / "npu_atk_test").mkdir(parents=True)
    found = messages(stray)
    assert found[0] == f"{stray}: no op spec: add ops/no_such_op.py defining SPEC"
    assert (
        f"{stray}/README.md: missing (provenance, what the op computes, constraints, ATK commands)"
        in found
    )
    assert f"{stray}/gpu_atk_test: missing folder" in found


def test_performance_json_shape(folder):
    perf = folder / "npu_atk_test" / f"{OP}_performance.json"
    perf.write_text(json.dumps({"op": OP, "cases": [{"name": "x"}]}))
    assert messages(folder) == [f"{perf}: case 0 needs name, shape and dtype"]


def line_of(path, text):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_hand_edited_generated_block(folder):
    kernel = folder / "npu_atk_test" / f"{OP}.py"
    edit(kernel, "_PICKED = {}", "_PICKED = {}  # tweaked")
    line = line_of(kernel, "# tweaked")
    assert messages(folder) == [
        f"{kernel}: generated block: line {line} differs from what `autotune freeze` writes (edited by hand?)"
    ]


@pytest.mark.parametrize(
    ("op", "old", "new"),
    [
        # a helper every block has
        ("dense_to_jagged", "default = default_config(kernel, shape)", "default = None"),
        # a helper only the bmm ports get
        ("jagged_dense_bmm", "32 if n > 16 else 16", "32"),
        # a helper dropped from a block whose op gets it
        (
            "multi_head_jagged_flash_attention",
            "def _block_d(d: int) -> int:\n"
            '    """The whole head dimension in one tile, padded to a power of two (tl.dot needs >= 16)."""\n'
            "    return max(16, triton.next_power_of_2(d))\n\n\n",
            "",
        ),
    ],
)
def test_hand_edited_shared_helper(tree, op, old, new):
    folder = tree / ATK_ROOT / op
    kernel = folder / "npu_atk_test" / f"{op}.py"
    line = line_of(kernel, old.splitlines()[0])
    edit(kernel, old, new)
    assert messages(folder) == [
        f"{kernel}: generated block: line {line} differs from what `autotune freeze` writes (edited by hand?)"
    ]


def test_stale_support_files_and_fix(folder):
    npu = folder / "npu_atk_test" / f"{OP}_support.py"
    gpu = folder / "gpu_atk_test" / f"{OP}_support.py"
    kernel = folder / "npu_atk_test" / f"{OP}.py"
    frozen = read_frozen(kernel.read_text(), kernel)
    edit(npu, "PADDING_VALUE = -1.0", "PADDING_VALUE = 0.0")
    gpu.unlink()
    edit(kernel, "_PICKED = {}", "_PICKED = {}  # tweaked")
    line = line_of(npu, "PADDING_VALUE")
    found = messages(folder)
    assert f"{npu}: line {line} differs from its rendering (run `autotune lint --fix`)" in found
    assert f"{gpu}: missing" in found
    # and the GPU side's API and port import it
    assert sum(f"imports {OP}_support" in m for m in found) == 2
    assert len(found) == 5
    assert fix(folder) == [gpu, kernel, npu]
    assert messages(folder) == []
    assert read_frozen(kernel.read_text(), kernel) == frozen
    assert fix(folder) == []


def test_imports_outside_the_folder(folder):
    api = folder / "npu_atk_test" / f"{OP}_api.py"
    edit(api, "import os\n", "import os\n\nimport ops.jagged\nfrom core.upstream import load\n")
    assert messages(folder) == [
        f"{api}: imports core: a folder copied alone has only torch, triton and its files",
        f"{api}: imports ops: a folder copied alone has only torch, triton and its files",
    ]
