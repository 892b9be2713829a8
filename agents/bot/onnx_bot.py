"""ONNX bots: a policy trained anywhere, ``NAME.onnx`` beside its ``NAME.json``, checked, run by onnxruntime.

An ONNX bot is a bot like a bot file (`load_bot` reads both; its metadata's
``"format"`` says which): the same table fields (game, rules, players,
observation version and size, number of actions) and summary, and an
``"onnx"`` object with the graph's sha256 and the names of its input (the
observations, float32 ``(B, observation size)``) and output (the logits,
float32 ``(B, number of actions)``). Because ONNX files are shared, the graph
is checked before onnxruntime sees it (`read_graph`, `check_graph`): at most
`MAX_ONNX_BYTES` bytes and `MAX_ONNX_NODES` nodes, its sha256, operators of
the standard ONNX domain only (no custom operators or model-local functions,
which would need code to run), no tensor data kept outside the file, the
input and output the table needs, and only the operators, tensor sizes and
work per observation `cardlab.agents.bot.onnx_limits` allows (no loops, no
tensor sized by its data); then the session is built from the bytes checked,
and its logits must have the table's shape (`probe_shapes`) and be finite on
probes and on observations of random play, as a bot file's must, all within
`PROBE_SECONDS`.

`OnnxNetwork` makes the session a torch module, so that everything that
plays a bot's network (`BotAgent`, batched self-play, search rollouts) plays
an ONNX bot unchanged. onnx and onnxruntime are imported only when an ONNX
bot is loaded.
"""

from __future__ import annotations

import contextlib
import hashlib
import pathlib
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
from torch import nn

from cardlab.agents.bot.format import MAX_ONNX_BYTES, MAX_ONNX_NODES
from cardlab.agents.bot.onnx_limits import PROBE_SECONDS, check_costs, check_operators
from cardlab.agents.bot.validate import check_outputs, read_capped, refuse
from cardlab.envs.checked_json import excerpt
from cardlab.envs.game_spec import Game

STANDARD_DOMAINS = ("", "ai.onnx")
"""the operator domains an ONNX bot may use: the standard ONNX operators"""
GRAPH_ACCEPTED = ("an ONNX bot is one self-contained graph of standard ONNX operators (torch.onnx.export of "
                  "the policy's logits, or `cardlab export --format onnx`)")


class OnnxNetwork(nn.Module):
    """An onnxruntime session as a torch module: float32 (B, obs) observations in, (B, actions) logits out."""

    def __init__(self, session: Any, input_name: str, output_name: str) -> None:
        super().__init__()
        self.session, self.input_name, self.output_name = session, input_name, output_name
        self.run_options: Any = None

    @contextlib.contextmanager
    def time_bound(self, seconds: float) -> Iterator[Any]:
        """Runs within this block stop `seconds` after it began (onnxruntime's terminate flag, set by a
        timer): the block's run options are yielded, their ``terminate`` says whether time ran out."""
        import onnxruntime

        options = onnxruntime.RunOptions()
        options.log_severity_level = 4  # the stopped run's error is the caller's to say, in one line
        timer = threading.Timer(seconds, setattr, (options, "terminate", True))
        timer.daemon = True
        self.run_options = options
        timer.start()
        try:
            yield options
        finally:
            timer.cancel()
            self.run_options = None

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        rows = np.ascontiguousarray(observations.detach().cpu().numpy(), dtype=np.float32)
        single = rows.ndim == 1
        logits = self.session.run([self.output_name], {self.input_name: rows[None] if single else rows},
                                  self.run_options)[0]
        logits = torch.from_numpy(np.ascontiguousarray(logits, dtype=np.float32))
        return logits[0] if single else logits


def read_graph(meta_path: pathlib.Path, meta: dict[str, Any], graph_path: pathlib.Path) -> bytes:
    """The graph file's bytes, read once: refused when missing, over `MAX_ONNX_BYTES`, or off its sha256."""
    if not graph_path.is_file():
        raise refuse(meta_path, f"the ONNX file {graph_path} is missing (an ONNX bot is NAME.json beside "
                                 "NAME.onnx)")
    too_big = refuse(meta_path, f"the ONNX file {graph_path.name} is larger than {MAX_ONNX_BYTES:,} bytes; "
                                 f"{GRAPH_ACCEPTED}, at most that size")
    data = read_capped(meta_path, graph_path, MAX_ONNX_BYTES, too_big)
    if hashlib.sha256(data).hexdigest() != meta["onnx"]["sha256"]:
        raise refuse(meta_path, f"the ONNX file {graph_path.name} does not match its sha256 (truncated or "
                                 "changed?); the metadata's onnx.sha256 is the graph file's, written with it")
    return data


def parse_graph(meta_path: pathlib.Path, name: str, data: bytes) -> Any:
    """The `onnx.ModelProto` of the bytes, refused when they are no ONNX model (truncated, another file)."""
    import onnx
    from google.protobuf.message import DecodeError

    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as err:
        raise refuse(meta_path, f"cannot read the ONNX file {name} ({excerpt(str(err), 120)}; truncated?); "
                                 f"{GRAPH_ACCEPTED}") from None
    if not model.HasField("graph") or not model.graph.node:
        raise refuse(meta_path, f"the ONNX file {name} holds no graph (truncated?); {GRAPH_ACCEPTED}")
    return model


def _graphs(graph: Any) -> Iterator[Any]:
    """The graph and every subgraph of its nodes' attributes (If, Loop, Scan bodies), depth first."""
    import onnx

    yield graph
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield from _graphs(attribute.g)
            elif attribute.type == onnx.AttributeProto.GRAPHS:
                for sub in attribute.graphs:
                    yield from _graphs(sub)


def _tensors(graph: Any) -> Iterator[Any]:
    """Every TensorProto of one graph: initializers, sparse ones, and the tensors of node attributes."""
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield from (sparse.values, sparse.indices)
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield attribute.t
            yield from attribute.tensors
            if attribute.HasField("sparse_tensor"):
                yield from (attribute.sparse_tensor.values, attribute.sparse_tensor.indices)


def _shape(value: Any) -> list[int | str | None]:
    """A value's declared dims: a whole number, a symbolic name, or None (undeclared)."""
    dims: list[int | str | None] = []
    for dim in value.type.tensor_type.shape.dim:
        dims.append(dim.dim_value if dim.HasField("dim_value") else dim.dim_param or None)
    return dims


def check_graph(meta_path: pathlib.Path, meta: dict[str, Any], name: str, model: Any, game: Game) -> None:
    """Refuse a graph that is not standard, not self-contained, too large, or off the table's shapes."""
    import onnx

    if model.functions:
        raise refuse(meta_path, f"the ONNX file {name} defines its own functions "
                                 f"({excerpt(model.functions[0].name)}, ...); {GRAPH_ACCEPTED}")
    nodes = 0
    for graph in _graphs(model.graph):
        nodes += len(graph.node)
        if nodes > MAX_ONNX_NODES:
            raise refuse(meta_path, f"the ONNX file {name} has more than {MAX_ONNX_NODES:,} nodes; "
                                     f"{GRAPH_ACCEPTED}, of at most that many nodes")
        for node in graph.node:
            if node.domain not in STANDARD_DOMAINS:
                raise refuse(meta_path, f"the ONNX file {name} uses the custom operator "
                                         f"{excerpt(node.op_type, 40)} of the domain "
                                         f"{excerpt(node.domain, 40)}; {GRAPH_ACCEPTED}")
        check_operators(meta_path, name, graph)
        for tensor in _tensors(graph):
            if tensor.data_location == onnx.TensorProto.EXTERNAL or tensor.external_data:
                where = next((e.value for e in tensor.external_data if e.key == "location"), "")
                raise refuse(meta_path, f"the ONNX file {name} keeps tensor {excerpt(tensor.name, 40)} in an "
                                         f"external file {excerpt(where, 60)}; {GRAPH_ACCEPTED} (export "
                                         "without external data)")
    try:
        onnx.checker.check_model(model)
    except (onnx.checker.ValidationError, ValueError) as err:
        raise refuse(meta_path, f"the ONNX file {name} is not a valid ONNX model "
                                 f"({excerpt(str(err).splitlines()[0] if str(err) else '', 120)}); "
                                 f"{GRAPH_ACCEPTED}") from None
    _check_values(meta_path, meta, name, model, game)
    check_costs(meta_path, name, model, meta["onnx"]["input"], game.layout.size)


def _check_values(meta_path: pathlib.Path, meta: dict[str, Any], name: str, model: Any, game: Game) -> None:
    """One float32 input (B, observation size), named as the metadata says; the logits output likewise."""
    import onnx

    initialized = {tensor.name for tensor in model.graph.initializer}
    inputs = [value for value in model.graph.input if value.name not in initialized]
    wanted_in, wanted_out = meta["onnx"]["input"], meta["onnx"]["output"]
    shapes = (f"input {wanted_in!r} of float32 (B, {game.layout.size}) and output {wanted_out!r} of float32 "
              f"(B, {game.num_actions}), B any number of observations")
    if [value.name for value in inputs] != [wanted_in]:
        found = ", ".join(excerpt(value.name, 40) for value in inputs[:8]) or "none"
        raise refuse(meta_path, f"the ONNX file {name} takes the inputs {found}; the table needs one, "
                                 f"{shapes}")
    outputs = {value.name: value for value in model.graph.output}
    if wanted_out not in outputs:
        raise refuse(meta_path, f"the ONNX file {name} has no output {excerpt(wanted_out, 40)} (its outputs: "
                                 f"{', '.join(excerpt(n, 40) for n in list(outputs)[:8])}); the table needs "
                                 f"{shapes}")
    for role, value, size in (("input", inputs[0], game.layout.size),
                              ("output", outputs[wanted_out], game.num_actions)):
        if value.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
            kind = onnx.TensorProto.DataType.Name(value.type.tensor_type.elem_type)
            raise refuse(meta_path, f"the ONNX file {name}'s {role} {value.name!r} is {kind}; the table "
                                     f"needs {shapes}")
        dims = _shape(value)
        if not value.type.tensor_type.HasField("shape"):
            continue  # undeclared: the probes check what it gives
        if len(dims) != 2 or dims[1] != size or isinstance(dims[0], int):
            shown = ["B" if d is None else d for d in dims]
            raise refuse(meta_path, f"the ONNX file {name}'s {role} {value.name!r} has the shape {shown}; "
                                     f"the table needs {shapes} (export with a dynamic batch axis)")


def session_of(meta_path: pathlib.Path, name: str, data: bytes, threads: int) -> Any:
    """An onnxruntime CPU session of the checked bytes (never of a path: nothing else is read)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        return onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    except Exception as err:  # onnxruntime raises its own exception types, one per failure
        raise refuse(meta_path, f"onnxruntime cannot load the ONNX file {name} "
                                 f"({excerpt(str(err).splitlines()[0] if str(err) else '', 160)}); "
                                 f"{GRAPH_ACCEPTED}") from None


def probe_shapes(meta_path: pathlib.Path, name: str, network: OnnxNetwork, game: Game) -> None:
    """Refuse a graph that fails to run or gives logits of another shape, for 1 and 3 observations."""
    for rows in (1, 3):
        probe = torch.zeros(rows, game.layout.size)
        try:
            logits = network(probe)
        except Exception as err:  # onnxruntime's own exception types
            raise refuse(meta_path, f"the ONNX file {name} fails on {rows} observation(s) "
                                     f"({excerpt(str(err).splitlines()[0] if str(err) else '', 160)}); "
                                     f"{GRAPH_ACCEPTED}") from None
        if tuple(logits.shape) != (rows, game.num_actions):
            raise refuse(meta_path, f"the ONNX file {name} gives logits of shape {list(logits.shape)} for "
                                     f"{rows} observation(s); the table needs ({rows}, {game.num_actions})")


def load_onnx_network(meta_path: pathlib.Path, meta: dict[str, Any], graph_path: pathlib.Path, game: Game,
                      threads: int) -> OnnxNetwork:
    """Every check of an ONNX bot's graph, then its session as a module, its logits' shape and finiteness
    checked within `PROBE_SECONDS`."""
    name = graph_path.name
    data = read_graph(meta_path, meta, graph_path)
    model = parse_graph(meta_path, name, data)
    check_graph(meta_path, meta, name, model, game)
    session = session_of(meta_path, name, data, threads)
    network = OnnxNetwork(session, meta["onnx"]["input"], meta["onnx"]["output"])
    with network.time_bound(PROBE_SECONDS) as bound:
        try:
            probe_shapes(meta_path, name, network, game)
            check_outputs(meta_path, network, game)
        except Exception as err:  # onnxruntime's own exception types, or a refusal of the probes
            if bound.terminate:
                raise refuse(meta_path, f"the ONNX file {name} ran past {PROBE_SECONDS:g} s on the load's "
                                         f"probe observations; {GRAPH_ACCEPTED}, whose runs take "
                                         "milliseconds") from None
            if isinstance(err, ValueError):
                raise
            raise refuse(meta_path, f"the ONNX file {name} fails on an observation of random play "
                                     f"({excerpt(str(err).splitlines()[0] if str(err) else '', 160)}); "
                                     f"{GRAPH_ACCEPTED}") from None
    return network
