"""Two machines, one verdict: upstream's outputs saved as a reference set, or served by a reference
server, give verify the verdicts it gives with upstream beside the port; a set or a server that
does not fit is refused in one line naming the case, with nothing written."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlalchemy import select

from api.main import create_app as create_dashboard
from autotuner.references import client
from autotuner.references.source import SavedReferences
from autotuner.references.store import MANIFEST, ReferenceSet, decode, encode, inputs_sha256
from core.errors import UserError
from ops import get_op
from storage import AccuracyResult, open_database

from .conftest import ROOT, autotune_cli

#: Upstream runs every output of jagged_softmax's bf16 cases on the interpreter, and some of
#: jagged_flash_attention_basic's only (its backward's dq and dk: torch in the case dtype).
OPS = ("--op", "jagged_softmax", "--op", "jagged_flash_attention_basic", "--dtype", "bf16")
TODAY = datetime.now(UTC).strftime("%Y-%m-%d")
TOKEN = "s3cret-token"


def verdicts(url: str) -> list[tuple]:
    """(op, case, output, reference, passed, mode, metrics, reference_from) of every row."""
    with open_database(url).sessions() as session:
        rows = session.scalars(select(AccuracyResult).order_by(AccuracyResult.id)).all()
        return [(r.op, r.case_name, r.output, r.reference, r.passed, r.mode, r.metrics,
                 r.reference_from) for r in rows]  # fmt: skip


def stored_rows(url: str) -> int:
    with open_database(url).sessions() as session:
        return session.scalar(select(sa.func.count()).select_from(AccuracyResult))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A reference set of OPS' cases saved on the interpreter, and the live run's verdicts."""
    folder = tmp_path_factory.mktemp("references")
    url = f"sqlite:///{folder}/live.db"
    run = autotune_cli("verify", *OPS, "--soc", "cpu", "--db", url,
                       "--save-references", str(folder / "set"))  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    return folder / "set", verdicts(url), run.stdout


def test_a_saved_set_gives_the_live_verdicts(saved, any_db):
    folder, live, _ = saved
    run = autotune_cli("verify", *OPS, "--soc", "cpu", "--db", any_db, "--references", str(folder))
    assert run.returncode == 0, run.stdout + run.stderr
    again = verdicts(any_db)
    label = f"on cpu, saved {TODAY}"
    assert len(again) == len(live) == 3 * 2 + 3 * 5  # softmax: y, dx; attention: 5 outputs
    for before, after in zip(live, again, strict=True):
        assert after[:7] == before[:7]  # the same verdicts, errors and ratios
        assert before[7] is None and after[7] == (label if after[3] == "upstream" else None)
    assert {row[3] for row in again} == {"upstream", "torch"}
    assert f"dual: upstream {label}" in run.stdout
    assert f"second reference: upstream for 15, 15 of them {label}, torch" in run.stdout
    # The dashboard marks the verdicts whose upstream ran on another machine.
    dashboard = TestClient(create_dashboard(any_db))
    items = dashboard.get("/api/accuracy", params={"op": "jagged_softmax"}).json()["items"]
    assert {item["reference_from"] for item in items} == {label}
    page = dashboard.get("/ops/jagged_softmax").text
    assert f'<span class="remote" data-col="reference_from">(upstream {label})</span>' in page


def test_the_set_holds_upstreams_outputs_and_their_provenance(saved):
    folder, _, _ = saved
    manifest = json.loads((folder / "jagged_flash_attention_basic" / MANIFEST).read_text())
    entry = manifest["cases"]["b1_n16_d16_bf16"]
    assert set(entry["outputs"]) == {"out", "lse", "dv"}  # upstream's dq, dk: not on cpu
    assert entry["outputs"]["out"]["dtype"] == "bfloat16" and entry["soc"] == "cpu"
    assert entry["upstream"]["repo"] == "pytorch/FBGEMM" and len(entry["upstream"]["sha256"]) == 64
    assert entry["command"].startswith("autotune verify --op jagged_softmax")
    assert entry["versions"]["torch"] and entry["saved_at"].startswith(TODAY)
    spec = get_op("jagged_flash_attention_basic")
    case = spec.case("b1_n16_d16_bf16")
    inputs = spec.make_inputs(case, "cpu")
    assert entry["inputs_sha256"] == inputs_sha256(inputs)
    outputs, _ = ReferenceSet(folder).outputs(spec, case, inputs)
    assert outputs["out"].dtype.is_floating_point and outputs["out"].dtype.itemsize == 2


def test_npy_round_trips_bfloat16_without_pickle():
    import torch

    from autotuner.references.store import OutputFile, sha256

    tensor = torch.randn(3, 5).to(torch.bfloat16)
    data = encode(tensor)
    back = decode(data, OutputFile(dtype="bfloat16", shape=[3, 5], sha256=sha256(data)))
    assert torch.equal(back, tensor)
    with pytest.raises(ValueError, match="holds"):
        decode(data, OutputFile(dtype="float16", shape=[3, 5], sha256=""))


def _refused(folder, tmp_path, *extra: str) -> str:
    url = f"sqlite:///{tmp_path}/refused.db"
    run = autotune_cli("verify", *OPS, "--soc", "cpu", "--db", url, "--references", str(folder),
                       *extra)  # fmt: skip
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout == "" and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert stored_rows(url) == 0  # nothing written
    return run.stderr.strip()


def test_a_tampered_file_is_refused_in_one_line(saved, tmp_path):
    folder = shutil.copytree(saved[0], tmp_path / "set")
    path = folder / "jagged_softmax" / "b4_n16_d20_bf16" / "y.npy"
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01  # one bit of the last number
    path.write_bytes(bytes(data))
    line = _refused(folder, tmp_path)
    assert line == f"error: jagged_softmax b4_n16_d20_bf16: {path} does not match the manifest " \
        "(sha256 differs)"  # fmt: skip


def _check(folder, op: str, dtype: str) -> str:
    """The one line `--references` refuses the op's accuracy cases of a dtype with."""
    spec = get_op(op)
    todo = [(spec, case) for case in spec.cases("accuracy") if case.dtype == dtype]
    with pytest.raises(UserError) as refused:
        SavedReferences(folder).check(todo)
    assert "\n" not in str(refused.value)
    return str(refused.value)


def test_a_different_inputs_hash_is_refused_in_one_line(saved, tmp_path):
    folder = shutil.copytree(saved[0], tmp_path / "set")
    path = folder / "jagged_softmax" / MANIFEST
    manifest = json.loads(path.read_text())
    manifest["cases"]["b6_n33_d3_bf16"]["inputs_sha256"] = "0" * 64  # saved from other inputs
    path.write_text(json.dumps(manifest))
    line = _check(folder, "jagged_softmax", "bfloat16")
    assert line.startswith("jagged_softmax b6_n33_d3_bf16: the inputs' hash differs from")
    here = inputs_sha256(_inputs("jagged_softmax", "b6_n33_d3_bf16"))
    assert f"({here[:12]} here, 000000000000 on cpu)" in line


def _inputs(op, case):
    spec = get_op(op)
    return spec.make_inputs(spec.case(case), "cpu")


def test_a_missing_case_is_refused_in_one_line(saved):
    line = _check(saved[0], "jagged_softmax", "float16")  # only bf16 cases were saved
    assert line == f"jagged_softmax b1_n8_d4_fp16: no reference saved in {saved[0]}"
    line = _check(saved[0], "jagged_to_padded_dense", "float32")  # nor this op
    assert line.startswith("jagged_to_padded_dense b1_n8_d16_fp32: no reference saved in")


def test_a_set_of_another_upstream_is_refused_in_one_line(saved, tmp_path):
    folder = shutil.copytree(saved[0], tmp_path / "set")
    path = folder / "jagged_softmax" / MANIFEST
    manifest = json.loads(path.read_text())
    manifest["cases"]["b1_n8_d4_bf16"]["upstream"]["commit"] = "f" * 40
    path.write_text(json.dumps(manifest))
    line = _check(folder, "jagged_softmax", "bfloat16")
    assert line.startswith(
        "jagged_softmax b1_n8_d4_bf16: the reference was saved from pytorch/FBGEMM ffffffffffff"
    )
    assert line.endswith("which is not the upstream this checkout pins")


# -- the reference server -----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    """`autotune reference-server --soc cpu` on loopback, a token required."""
    port = _free_port()
    env = {**os.environ, "AUTOTUNE_REFERENCE_TOKEN": TOKEN}
    process = subprocess.Popen(
        [sys.executable, "-m", "autotuner", "reference-server", "--soc", "cpu", "--port", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                with urllib.request.urlopen(url + "/", timeout=1) as response:
                    assert json.load(response)["soc"] == "cpu"
                break
            except OSError:
                assert process.poll() is None, process.stdout.read()
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def test_the_server_serves_a_verify_from_another_process(saved, server, tmp_path):
    url = f"sqlite:///{tmp_path}/served.db"
    run = autotune_cli("verify", *OPS, "--soc", "cpu", "--db", url, "--references", server,
                       env={"AUTOTUNE_REFERENCE_TOKEN": TOKEN})  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    label = f"on cpu, served by {server}"
    for before, after in zip(saved[1], verdicts(url), strict=True):
        assert after[:7] == before[:7]
        assert after[7] == (label if after[3] == "upstream" else None)
    assert f"dual: upstream {label}" in run.stdout


def _post(url: str, body: bytes, token: str | None = TOKEN) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url + "/references", data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def test_the_server_refuses_a_wrong_token_a_large_request_and_bad_cases(server, tmp_path):
    case = json.dumps({"op": "jagged_softmax", "case": "b1_n8_d4_fp16"}).encode()
    assert _post(server, case)[0] == 200
    assert _post(server, case, token="wrong") == (
        401, {"detail": "a valid bearer token (AUTOTUNE_REFERENCE_TOKEN) is required"})  # fmt: skip
    assert _post(server, case, token=None)[0] == 401
    huge = json.dumps({"op": "jagged_softmax", "shape": {"B": 1, "max_seq_len": 8, "D": 4},
                       "dtype": "float32", "offsets": [0] * 40000}).encode()  # fmt: skip
    assert _post(server, huge) == (413, {"detail": "the request exceeds the 65536 bytes allowed"})
    for body, detail in [
        (b"{not json", "Invalid JSON"),
        (b'{"op": "nope", "case": "x"}', "unknown op 'nope'"),
        (b'{"op": "jagged_softmax", "case": "b1_n8_d4_fp16", "code": "import os"}', "code: "),
        (b'{"op": "jagged_softmax"}', "give either case"),
        (b'{"op": "jagged_softmax", "shape": {"B": 2, "D": 4}, "dtype": "fp32"}', "missing"),
    ]:
        status, answer = _post(server, body)
        assert status == 422 and detail in answer["detail"], (body, answer)
        assert "\n" not in answer["detail"]
    # A user case, sent as its shape, offsets and dtype, is answered for what it is.
    user = {"op": "jagged_softmax", "shape": {"B": 2, "max_seq_len": 8, "D": 4},
            "dtype": "float32", "offsets": [0, 3, 8]}  # fmt: skip
    status, answer = _post(server, json.dumps(user).encode())
    assert status == 200 and answer["entry"]["offsets"] == [0, 3, 8]
    assert set(answer["entry"]["outputs"]) == {"y", "dx"}
    # The client says a wrong token in one line and writes nothing.
    db = f"sqlite:///{tmp_path}/refused.db"
    run = autotune_cli("verify", *OPS, "--soc", "cpu", "--db", db, "--references", server,
                       env={"AUTOTUNE_REFERENCE_TOKEN": "wrong"})  # fmt: skip
    assert run.returncode == 2 and run.stdout == "", run.stdout + run.stderr
    assert run.stderr.strip() == (
        f"error: jagged_softmax b1_n8_d4_bf16: the reference server at {server} refused (401): "
        "a valid bearer token (AUTOTUNE_REFERENCE_TOKEN) is required"
    )
    assert stored_rows(db) == 0


def test_a_dropped_connection_is_retried(server, monkeypatch):
    opened = urllib.request.urlopen
    calls = []

    def dropping(*args, **kwargs):  # the first connection drops, as a flaky network's would
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionResetError(104, "Connection reset by peer")
        return opened(*args, **kwargs)

    monkeypatch.setenv("AUTOTUNE_REFERENCE_TOKEN", TOKEN)
    monkeypatch.setattr(client.urllib.request, "urlopen", dropping)
    client.settings.cache_clear()
    try:
        spec = get_op("jagged_softmax")
        entry, files = client.ask(server, spec, spec.case("b1_n8_d4_fp16"))
    finally:
        client.settings.cache_clear()
    assert len(calls) == 2 and entry.served_by == server and set(files) == {"y", "dx"}


def test_an_unreachable_server_is_one_line(monkeypatch):
    url = f"http://127.0.0.1:{_free_port()}"
    monkeypatch.setenv("AUTOTUNE_REFERENCE_ATTEMPTS", "2")
    client.settings.cache_clear()
    spec = get_op("jagged_softmax")
    try:
        with pytest.raises(UserError) as refused:
            client.ask(url, spec, spec.case("b1_n8_d4_fp32"))
    finally:
        client.settings.cache_clear()
    line = str(refused.value)
    assert line.startswith(
        f"jagged_softmax b1_n8_d4_fp32: cannot reach the reference server at {url} ("
    )
    assert line.endswith("; 2 attempts)") and "\n" not in line
