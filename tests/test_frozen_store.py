"""The frozen-config store: `<op>_performance.json` is the one home of frozen configs; the port's
block and `frozen_configs/` are renderings of it, and `autotune lint` holds them together."""

from __future__ import annotations

import json

import pytest

from autotuner.atk import performance_json
from autotuner.atk.generated_block import BEGIN_MARKER, read_frozen, replace_block
from autotuner.atk.lint import lint_op_folder
from autotuner.atk.store import FrozenStore
from autotuner.baseline.baseline import FrozenSet
from autotuner.search import settle, warm_starts
from core.errors import UserError
from core.paths import atk_dir, frozen_configs_file, port_file, project_root
from core.paths import performance_json as performance_json_path
from ops import all_ops, get_op

FROZEN_OPS = sorted(
    op for op in all_ops() if BEGIN_MARKER in port_file(op).read_text(encoding="utf-8")
)
OP = "jagged_dense_flash_attention"


@pytest.mark.parametrize("op", FROZEN_OPS)
def test_every_port_block_is_the_rendering_of_its_performance_json(op):
    path = port_file(op)
    source = path.read_text(encoding="utf-8")
    store = FrozenStore.read(op)
    assert replace_block(source, store.block(), path) == source
    assert read_frozen(source, path) == store.block()


def test_the_committed_frozen_configs_files_are_renderings_of_the_store():
    files = sorted((project_root() / "frozen_configs").glob("*/*.json"))
    assert files
    for path in files:
        document = json.loads(path.read_text(encoding="utf-8"))
        block = FrozenStore.read(document["op"]).block()
        assert document["frozen"] == block[document["soc"]], path


def test_every_reader_gets_the_stores_config():
    store = FrozenStore.read(OP)
    entry = store.on("H200")[0]
    assert store.config("H200", entry.kernel, entry.case) == entry.config
    assert store.config("H200", entry.kernel, "no such case") is None
    assert settle.frozen_config(OP, "H200", entry.kernel, entry.case) == entry.config
    siblings = warm_starts.from_frozen(OP, entry.kernel)
    assert any(s.case == entry.case and s.config == entry.config for s in siblings)
    frozen = FrozenSet.read(get_op(OP), "H200").by_kernel
    assert frozen == store.block()["H200"]


def test_an_op_without_a_performance_json_has_an_empty_store(tree):
    performance_json_path(OP).unlink()
    assert FrozenStore.read(OP).entries == ()
    assert settle.frozen_config(OP, "H200", "fwd", "any") is None


def test_a_malformed_frozen_entry_is_one_line_naming_the_file(tree):
    path = performance_json_path(OP)
    document = performance_json.read(path)
    (case,) = [c for c in document["cases"] if c["frozen"]][:1]
    soc = next(iter(case["frozen"]))
    del case["frozen"][soc]["kernels"][next(iter(case["frozen"][soc]["kernels"]))]["config"]
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(UserError, match=f"^{OP}_performance.json: a malformed frozen entry"):
        FrozenStore.read(OP)
    assert warm_starts.from_frozen(OP, "fwd") == []


def test_lint_fails_on_a_block_that_disagrees_with_the_json(tree):
    path = performance_json_path(OP)
    document = performance_json.read(path)
    case = next(c for c in document["cases"] if c["frozen"].get("H200"))
    kernel, entry = next(iter(case["frozen"]["H200"]["kernels"].items()))
    entry["config"] = {**entry["config"], "num_warps": 64}
    path.write_text(json.dumps(document), encoding="utf-8")
    problems = [p.message for p in lint_op_folder(atk_dir(OP))]
    assert problems == [
        f"generated block: FROZEN_CONFIGS disagrees with {OP}_performance.json at "
        f"H200 {kernel} {case['name']}; `autotune freeze` renders the block from the json"
    ]
    assert frozen_configs_file("H200", OP).exists()  # a rendering too, checked above
