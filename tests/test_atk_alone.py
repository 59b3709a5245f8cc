"""ATK folders run alone: one folder of each op family, copied out of the repository, imports its
port, API, support file and generator with only torch and triton, and its API gives the op's
outputs on a generated case (the port under the Triton interpreter).

One child process runs every folder, with `-I -S`: no repository, no PYTHONPATH, no `.pth` files
(the editable install's included), only the venv's site-packages for torch and triton.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig

import torch

from core.paths import atk_dir
from ops import all_ops

#: One folder per family: FBGEMM jagged copy, jagged2, jagged 1-D, bmm, jagged attention, the
#: recsys norms, norm-mul-dropout, dense rows (addmm), HSTU attention and concat/split.
OPS = (
    "jagged_to_padded_dense",
    "jagged2_to_padded_dense",
    "dense_jagged_cat_jagged_out",
    "jagged_dense_bmm",
    "multi_head_jagged_flash_attention",
    "layer_norm",
    "group_norm_mul_dropout",
    "addmm",
    "hstu_attention",
    "concat_2d_jagged",
)

CHILD = r"""
import importlib, json, os, sys

root, site, plan = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
base = [*sys.path, site]
sys.path[:] = base
import torch
found = {}
for op, case, gpu in plan:
    for side in ("npu_atk_test", "gpu_atk_test") if gpu else ("npu_atk_test",):
        folder = os.path.join(root, op, side)
        sys.path[:] = [folder, *base]
        for name in (op, f"{op}_support", f"{op}_api", f"generate_{op}"):
            sys.modules.pop(name, None)
        leaked = [m for m in ("autotuner", "ops", "core") if importlib.util.find_spec(m)]
        assert not leaked, f"the repository is on the path: {leaked}"
        api = importlib.import_module(f"{op}_api")
        support = sys.modules[f"{op}_support"]
        assert os.path.dirname(support.__file__) == folder and not support.ATK_AVAILABLE
        if side == "gpu_atk_test":
            found[f"{op}/gpu"] = api.kernel._upstream.__name__
            continue
        generator = importlib.import_module(f"generate_{op}")
        assert case in [c["name"] for c in generator.cases()]
        assert generator.cases("performance")
        cls = next(v for v in vars(api).values() if getattr(v, "atk_name", None) == op)
        outputs = cls(None)(support.InputDataset(generator.generate(case)))
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        torch.save([o.detach() for o in outputs], os.path.join(root, f"{op}.pt"))
        found[op] = len(outputs)
print(json.dumps(found))
"""


def _first_float32(op: str) -> str:
    return next(c.name for c in all_ops()[op].cases("accuracy") if c.dtype == "float32")


def test_folders_run_copied_alone(tmp_path):
    for op in OPS:
        shutil.copytree(atk_dir(op), tmp_path / op, ignore=shutil.ignore_patterns("__pycache__"))
    plan = [(op, _first_float32(op), all_ops()[op].upstream.missing() is None) for op in OPS]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    run = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            CHILD,
            str(tmp_path),
            sysconfig.get_paths()["purelib"],
            json.dumps(plan),
        ],
        cwd=tmp_path,
        env={**env, "TRITON_INTERPRET": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout.splitlines()[-1])
    for op, case_name, gpu in plan:
        spec = all_ops()[op]
        assert found[op] == len(spec.output_names), op
        if gpu:
            assert found[f"{op}/gpu"].endswith(
                spec.upstream.file.removesuffix(".py").replace("/", ".")
            ), op
        # The same case's inputs, from the same rendered file, against the float64 golden.
        support = _load(tmp_path / op / "npu_atk_test" / f"{op}_support.py", f"_alone_{op}")
        args = support.generate(case_name)
        inputs = dict(zip(spec.input_names, args, strict=True))
        golden = spec.reference(inputs)
        outputs = torch.load(tmp_path / f"{op}.pt")
        for name, value in zip(spec.output_names, outputs, strict=True):
            want = spec.comparable(name, golden[name], inputs)
            have = spec.comparable(name, value, inputs).double()
            assert torch.allclose(have, want, rtol=1e-4, atol=1e-5), (op, name)


def _load(path, name):
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module
