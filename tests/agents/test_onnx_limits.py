"""ONNX bots that would run forever or allocate gigabytes are refused at load, in one line naming the file,
within seconds: only the operators of a policy's forward pass, every tensor's shape inferred, what a run
holds and computes capped per observation; the load's probes bounded in time besides."""

from __future__ import annotations

import pathlib
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from cardlab.agents.bot import onnx_bot as onnx_module
from cardlab.agents.bot import onnx_limits
from tests.agents.test_onnx_bot import ACTIONS, SIZE, linear_model, refused, write_bot


def policy(nodes: list[onnx.NodeProto], last: str, *initializers: np.ndarray | onnx.TensorProto,
           body_inputs: tuple[str, ...] = ()) -> onnx.ModelProto:
    """A graph of `nodes` from ``observation`` to `last` (B, SIZE), then logits = last @ W: each test's
    hostile part, tiny, in front of a policy that would otherwise play."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array((0.01 * rng.standard_normal((SIZE, ACTIONS))).astype(np.float32), "W")
    tensors = [t if isinstance(t, onnx.TensorProto) else numpy_helper.from_array(t, f"c{i}")
               for i, t in enumerate(initializers)]
    observation = helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", SIZE])
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", ACTIONS])
    graph = helper.make_graph([*nodes, helper.make_node("MatMul", [last, "W"], ["logits"])], "policy",
                              [observation], [logits], initializer=[w, *tensors])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def counting_loop(trips: str) -> onnx.NodeProto:
    """A Loop adding 1 to the observation `trips` times: as long as its trip count says."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["x_in", "one"], ["x_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, ["batch", SIZE])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, ["batch", SIZE])],
        initializer=[helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])])
    return helper.make_node("Loop", [trips, "go", "observation"], ["looped"], body=body)


GO = numpy_helper.from_array(np.array(True), "go")


def endless_loop() -> onnx.ModelProto:
    """A Loop of 2**62 trips: the loader's probes never ended."""
    return policy([counting_loop("trips")], "looped", GO, numpy_helper.from_array(np.array(2**62), "trips"))


def observation_loop() -> onnx.ModelProto:
    """A Loop whose trip count is read from the observation: none on a probe of zeros, endless in play."""
    return policy([helper.make_node("ReduceSum", ["observation"], ["total"], keepdims=0),
                   helper.make_node("Mul", ["total", "huge"], ["scaled"]),
                   helper.make_node("Cast", ["scaled"], ["trips"], to=TensorProto.INT64),
                   counting_loop("trips")], "looped", GO,
                  numpy_helper.from_array(np.array(1e15, dtype=np.float32), "huge"))


def constant_of_shape() -> onnx.ModelProto:
    """1 kB of graph making a tensor of 2**31 floats at every run."""
    value = helper.make_tensor("value", TensorProto.FLOAT, [1], [0.0])
    return policy([helper.make_node("ConstantOfShape", ["shape"], ["zeros"], value=value),
                   helper.make_node("ReduceSum", ["zeros"], ["zero"], keepdims=0),
                   helper.make_node("Add", ["observation", "zero"], ["plus"])], "plus",
                  numpy_helper.from_array(np.array([1 << 31], dtype=np.int64), "shape"))


def expand() -> onnx.ModelProto:
    """The observation expanded to (100000, B, SIZE), then summed back."""
    return policy([helper.make_node("Expand", ["observation", "shape"], ["wide"]),
                   helper.make_node("ReduceMean", ["wide"], ["back"], axes=[0], keepdims=0)], "back",
                  numpy_helper.from_array(np.array([100_000, 1, SIZE], dtype=np.int64), "shape"))


def broadcast() -> onnx.ModelProto:
    """Allowed operators only, yet 8.7 MB per observation: each number of it times a row of 20,000."""
    return policy([helper.make_node("Reshape", ["observation", "column"], ["numbers"]),
                   helper.make_node("MatMul", ["numbers", "row"], ["wide"]),
                   helper.make_node("ReduceSum", ["wide", "axis"], ["sums"], keepdims=0),
                   helper.make_node("Reshape", ["sums", "back"], ["folded"])], "folded",
                  numpy_helper.from_array(np.array([-1, 1], dtype=np.int64), "column"),
                  numpy_helper.from_array(np.ones((1, 20_000), dtype=np.float32), "row"),
                  numpy_helper.from_array(np.array([-1, SIZE], dtype=np.int64), "back"),
                  numpy_helper.from_array(np.array([1], dtype=np.int64), "axis"))


def batch_squared() -> onnx.ModelProto:
    """(B, B) from the observation and its transpose: a batch of 100,000 would hold 40 GB."""
    return policy([helper.make_node("Transpose", ["observation"], ["columns"], perm=[1, 0]),
                   helper.make_node("MatMul", ["observation", "columns"], ["pairs"]),
                   helper.make_node("MatMul", ["pairs", "observation"], ["mixed"])], "mixed")


def huge_initializer() -> onnx.ModelProto:
    """An initializer that says it is 2**40 floats (and holds none)."""
    big = TensorProto(name="big", data_type=TensorProto.FLOAT, dims=[1 << 20, 1 << 20])
    return policy([helper.make_node("ReduceSum", ["big"], ["zero"], keepdims=0),
                   helper.make_node("Add", ["observation", "zero"], ["plus"])], "plus", big)


def fixed_product() -> onnx.ModelProto:
    """A (20000, 20000) product of two small initializers (1.6 GB, made once, whatever the batch)."""
    return policy([helper.make_node("MatMul", ["column", "row"], ["square"]),
                   helper.make_node("ReduceSum", ["square"], ["total"], keepdims=0),
                   helper.make_node("Add", ["observation", "total"], ["plus"])], "plus",
                  numpy_helper.from_array(np.ones((20_000, 1), dtype=np.float32), "column"),
                  numpy_helper.from_array(np.ones((1, 20_000), dtype=np.float32), "row"))


HOSTILE = {
    "endless loop": (endless_loop, ["operator 'Loop'", "loops or branches as its data says", "docs/onnx.md"]),
    "loop read from the observation": (observation_loop, ["operator 'Loop'", "a run need not end"]),
    "constant of shape": (constant_of_shape, ["operator 'ConstantOfShape'", "makes a tensor as large as its "
                                                                            "data says"]),
    "expand": (expand, ["operator 'Expand'", "as large as its data says"]),
    "broadcast past the cap": (broadcast, ["bytes per observation", "at most 1,048,576 bytes"]),
    "batch squared": (batch_squared, ["holds", "no faster than linearly"]),
    "fixed product": (fixed_product, ["holds", "1,600,", "bytes besides"]),
    "huge initializer": (huge_initializer, ["policy.onnx is not a valid ONNX model"]),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_graphs_that_run_forever_or_allocate_gigabytes_are_refused_at_once(tmp_path: pathlib.Path,
                                                                          case: str) -> None:
    make, words = HOSTILE[case]
    began = time.monotonic()
    refused(write_bot(tmp_path, make()), "policy.onnx", *words)
    assert time.monotonic() - began < 10


def test_an_undeclared_shape_is_inferred_not_trusted(tmp_path: pathlib.Path) -> None:
    """Declared intermediate shapes are dropped: the broadcast's 8.7 MB are found though it claims (B, 1)."""
    model = broadcast()
    model.graph.value_info.append(helper.make_tensor_value_info("wide", TensorProto.FLOAT, ["batch", 1]))
    refused(write_bot(tmp_path, model), "bytes per observation")


def test_the_probes_are_bounded_in_time(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second line of defence: were a Loop let through, the load's probes stop after PROBE_SECONDS."""
    monkeypatch.setattr(onnx_limits, "OPERATORS", onnx_limits.OPERATORS | {"Loop", "Identity"})
    monkeypatch.setattr(onnx_module, "check_costs", lambda *args: None)
    monkeypatch.setattr(onnx_module, "PROBE_SECONDS", 1.0)
    began = time.monotonic()
    refused(write_bot(tmp_path, endless_loop()), "policy.onnx ran past 1 s on the load's probe observations")
    assert time.monotonic() - began < 10


def test_a_policy_of_the_allowed_operators_plays(tmp_path: pathlib.Path) -> None:
    """What torch exports (Gemm, activations, Flatten, Reshape through Shape) passes the limits."""
    import torch
    from torch import nn

    from cardlab.agents.bot import export_onnx, load_bot
    from tests.agents.test_onnx_bot import HUIT

    class Policy(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Sequential(nn.Linear(SIZE, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 32),
                                      nn.SiLU(), nn.Linear(32, ACTIONS))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.log_softmax(self.body(x.view(x.shape[0], -1)), dim=-1)

    path = export_onnx(Policy(), tmp_path / "mine", game=HUIT, summary={})
    assert load_bot(path, HUIT).logits(np.zeros((2, SIZE), dtype=np.float32)).shape == (2, ACTIONS)
    assert load_bot(write_bot(tmp_path, linear_model(SIZE, ACTIONS)), HUIT) is not None


def test_cardlab_eval_and_serve_refuse_a_looping_bot_in_one_line(tmp_path: pathlib.Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Where the endless Loop hung for ever: `cardlab eval` and `cardlab serve --bot`'s start-up."""
    from cardlab.cli import main
    from cardlab.serve.app import named_bots

    path = write_bot(tmp_path, observation_loop())
    began = time.monotonic()
    assert main(["eval", "--game", "huit", "--rule", "num_players=2", "--agents", f"bot:{path}", "random",
                 "--hands", "2"]) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and str(path) in said[0] and "operator 'Loop'" in said[0], said
    with pytest.raises(ValueError, match=r"policy\.onnx uses the operator 'Loop'") as info:
        named_bots([path])
    assert len(str(info.value).splitlines()) == 1 and time.monotonic() - began < 20


def test_the_attack_probes_of_files_run_and_find_no_crash(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from tests.benchmarks import load_benchmark

    probes = load_benchmark("attack_probes", monkeypatch)
    assert probes.main(["files", "--tampered", "3", "--graphs", "3"]) == 0
    out = capsys.readouterr().out
    assert "ONNX graphs: refused" in out and "export targets: refused 10;" in out and "crashed" not in out


def test_the_docs_list_the_operators_allowed() -> None:
    docs = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "onnx.md").read_text()
    listed = docs.split("<!-- operators -->")[1].split("<!-- /operators -->")[0]
    assert listed.split(", ") == sorted(onnx_limits.OPERATORS)
