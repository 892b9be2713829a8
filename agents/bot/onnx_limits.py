"""What an ONNX bot's graph may do: its operators, and how much it may hold and compute per run.

Why: a graph is a program. A Loop runs as often as a number in it says (2**62
times, or a count read from the observation: fast on a probe of zeros,
endless in play), and ConstantOfShape, Expand, Tile, Range or Pad make
tensors as large as a number says (1 kB of graph, gigabytes at each run). So
a bot's graph may use only `OPERATORS`, what a policy's forward pass needs
(torch's export of an MLP with the usual activations, normalisations and
reshapes): none loops or branches, and each one's output size follows from
its inputs' shapes. Then onnx's shape inference, run for batches of 1, 2 and
3 observations, must give every tensor a known shape, and what a run holds
(every tensor's bytes, added up) and computes (the multiply-adds of its
matrix products) must grow with the batch no faster than linearly, at most
`MAX_ROW_BYTES` and `MAX_ROW_MACS` per observation and `MAX_FIXED_BYTES` and
`MAX_FIXED_MACS` besides. A run of B observations then holds at most
``MAX_FIXED_BYTES + B * MAX_ROW_BYTES``, whatever the observation's values.
The load's probe runs are also bounded in time (`PROBE_SECONDS`), a second
line of defence.
"""

from __future__ import annotations

import math
import pathlib
from typing import Any

from cardlab.agents.bot.format import MAX_ONNX_BYTES, MAX_PARAMETERS
from cardlab.agents.bot.validate import refuse
from cardlab.envs.checked_json import excerpt

OPERATORS = frozenset((
    "Abs", "Add", "And", "ArgMax", "ArgMin", "BatchNormalization", "Cast", "CastLike", "Ceil", "Celu", "Clip",
    "Concat", "Constant", "Div", "Dropout", "Elu", "Equal", "Erf", "Exp", "Flatten", "Floor", "Gather",
    "Gelu", "Gemm", "Greater", "GreaterOrEqual", "HardSigmoid", "HardSwish", "Identity", "IsInf", "IsNaN",
    "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual", "Log", "LogSoftmax", "MatMul", "Max", "Mean",
    "Min", "Mish", "Mul", "Neg", "Not", "Or", "Pow", "PRelu", "Reciprocal", "ReduceL2", "ReduceLogSumExp",
    "ReduceMax", "ReduceMean", "ReduceMin", "ReduceSum", "Relu", "Reshape", "Round", "Selu", "Shape",
    "Sigmoid", "Sign", "Slice", "Softmax", "Softplus", "Softsign", "Split", "Sqrt", "Squeeze", "Sub", "Sum",
    "Tanh", "Transpose", "Unsqueeze", "Where", "Xor",
))
"""the operators an ONNX bot's graph may use: a policy's forward pass, none of which loops or makes a tensor
of a size its data says"""
LOOPING = frozenset(("Loop", "If", "Scan", "SequenceMap"))
SIZING = frozenset(("ConstantOfShape", "Expand", "Tile", "Range", "Pad", "Resize", "Upsample", "OneHot",
                    "NonZero", "Compress", "Unique", "TopK", "EyeLike", "RandomNormal", "RandomUniform",
                    "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"))
OPERATORS_ACCEPTED = ("an ONNX bot's graph uses only the operators of a policy's forward pass (Gemm, MatMul, "
                      "Add, Relu, Tanh, Softmax, Reshape, ...: docs/onnx.md lists them)")

MAX_ROW_BYTES = 1 << 20
"""what one run may hold per observation, every tensor's bytes added up (an exported bot file's network of
MAX_PARAMETERS holds under 1 MiB per observation)"""
MAX_FIXED_BYTES = 2 * MAX_ONNX_BYTES
"""what one run may hold whatever its batch: the initializers and what is made of them alone"""
MAX_ROW_MACS = 2 * MAX_PARAMETERS
"""the multiply-adds of the matrix products per observation (a bot file's network does MAX_PARAMETERS)"""
MAX_FIXED_MACS = 2 * MAX_PARAMETERS
"""the multiply-adds of matrix products of the initializers alone (onnxruntime folds them at load)"""
PROBE_SECONDS = 30.0
"""the time the load's probe runs may take together before the graph is refused"""
BATCHES = (1, 2, 3)
"""the batches shape inference is run for: three points show a growth faster than linear"""


def check_operators(meta_path: pathlib.Path, name: str, graph: Any) -> None:
    """Refuse a node whose operator is not in `OPERATORS`, sparse tensors (a few numbers, any dense size)."""
    for node in graph.node:
        op = node.op_type
        if op not in OPERATORS:
            why = ("loops or branches as its data says, so a run need not end" if op in LOOPING else
                   "makes a tensor as large as its data says" if op in SIZING else
                   "is not an operator of a policy's forward pass")
            raise refuse(meta_path, f"the ONNX file {name} uses the operator {excerpt(op, 40)}{_node(node)}, "
                                     f"which {why}; {OPERATORS_ACCEPTED}")
        if op == "Constant" and any(a.name == "sparse_value" for a in node.attribute):
            raise refuse(meta_path, f"the ONNX file {name} holds a sparse constant{_node(node)}; an ONNX "
                                     "bot's tensors are dense")
    if graph.sparse_initializer:
        raise refuse(meta_path, f"the ONNX file {name} holds sparse initializers; an ONNX bot's tensors are "
                                 "dense")


def _node(node: Any) -> str:
    return f" (node {excerpt(node.name, 40)})" if node.name else ""


def check_costs(meta_path: pathlib.Path, name: str, model: Any, input_name: str, obs_size: int) -> None:
    """Refuse a graph whose tensors' shapes cannot be inferred, or whose bytes or multiply-adds per run are
    past the caps or grow faster than the batch (see the module doc)."""
    skeleton = _skeleton(model)
    totals = [_costs(meta_path, name, skeleton, input_name, obs_size, batch) for batch in BATCHES]
    for what, index, row_cap, fixed_cap in (("holds", 0, MAX_ROW_BYTES, MAX_FIXED_BYTES),
                                            ("computes", 1, MAX_ROW_MACS, MAX_FIXED_MACS)):
        one, two, three = (total[index] for total in totals)
        unit = "bytes" if index == 0 else "multiply-adds"
        row, fixed = two - one, one - (two - one)
        if three - two != row or row < 0 or fixed < 0:
            raise refuse(meta_path, f"the ONNX file {name} {what} {one:,}, {two:,} and {three:,} {unit} for "
                                     "1, 2 and 3 observations: it must grow with the batch no faster than "
                                     f"linearly; {LIMITS}")
        if row > row_cap or fixed > fixed_cap:
            raise refuse(meta_path, f"the ONNX file {name} {what} {row:,} {unit} per observation and "
                                     f"{fixed:,} {unit} besides; {LIMITS}")


INFERRED = f"{OPERATORS_ACCEPTED}, each tensor's shape following from the observation's"
LIMITS = (f"an ONNX bot's run holds at most {MAX_ROW_BYTES:,} bytes of tensors per observation and "
          f"{MAX_FIXED_BYTES:,} besides, and does at most {MAX_ROW_MACS:,} multiply-adds per observation and "
          f"{MAX_FIXED_MACS:,} besides")


SMALL_INITIALIZER = 4096
"""initializers of at most this many numbers keep their values for shape inference (a Reshape's shape)"""


def _skeleton(model: Any) -> Any:
    """The graph for shape inference: its nodes, inputs and outputs, small initializers with their values,
    large ones as inputs of their shape (their numbers are not needed; copying them took a second per
    75 MB). Its declared intermediate shapes (``value_info``) are left out: they are not trusted."""
    import onnx

    skeleton = onnx.ModelProto(ir_version=model.ir_version, opset_import=model.opset_import)
    graph = skeleton.graph
    initialized = {tensor.name for tensor in model.graph.initializer}
    graph.node.extend(model.graph.node)
    graph.input.extend(value for value in model.graph.input if value.name not in initialized)
    graph.output.extend(model.graph.output)
    for tensor in model.graph.initializer:
        if math.prod(tensor.dims) <= SMALL_INITIALIZER:
            graph.initializer.append(tensor)
        else:
            graph.input.append(onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type, tensor.dims))
    return skeleton


def _costs(meta_path: pathlib.Path, name: str, skeleton: Any, input_name: str, obs_size: int,
           batch: int) -> tuple[int, int]:
    """(bytes of every tensor, multiply-adds of every matrix product) of one run of `batch` observations,
    from onnx's shape inference of the graph's `_skeleton`."""
    import onnx

    shaped = onnx.ModelProto()
    shaped.CopyFrom(skeleton)
    graph = shaped.graph
    for value in graph.input:
        if value.name == input_name:
            value.type.tensor_type.shape.Clear()
            for size in (batch, obs_size):
                value.type.tensor_type.shape.dim.add().dim_value = size
    for value in graph.output:
        value.type.tensor_type.ClearField("shape")
    try:
        inferred = onnx.shape_inference.infer_shapes(shaped, check_type=True, strict_mode=True,
                                                     data_prop=True)
    except Exception as err:  # onnx raises its own error types (InferenceError, ValidationError, ...)
        raise refuse(meta_path, f"the shapes of the ONNX file {name}'s tensors cannot be inferred "
                                 f"({excerpt(str(err).splitlines()[0] if str(err) else '', 120)}); "
                                 f"{INFERRED}") from None
    shapes: dict[str, tuple[list[int], int]] = {}
    for value in (*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output):
        shapes[value.name] = _known(meta_path, name, value)
    for tensor in inferred.graph.initializer:
        shapes[tensor.name] = (list(tensor.dims), tensor.data_type)
    total_bytes = sum(_bytes(meta_path, name, tensor, dims, kind) for tensor, (dims, kind) in shapes.items())
    macs = 0
    for node in inferred.graph.node:
        for output in node.output:
            if output and output not in shapes:
                raise refuse(meta_path, f"the shape of the ONNX file {name}'s tensor {excerpt(output, 40)} "
                                         f"({node.op_type}) cannot be inferred; {INFERRED}")
        if node.op_type in ("MatMul", "Gemm"):
            first = shapes[node.input[0]][0]
            transposed = any(a.name == "transA" and a.i for a in node.attribute)
            inner = (first[0] if transposed else first[-1]) if first else 1
            macs += math.prod(shapes[node.output[0]][0]) * inner
    return total_bytes, macs


def _known(meta_path: pathlib.Path, name: str, value: Any) -> tuple[list[int], int]:
    """A value's inferred dims and element type, refused when a dim is unknown or it is no tensor."""
    kind = value.type.tensor_type
    if value.type.WhichOneof("value") != "tensor_type" or not kind.HasField("shape") or \
            not all(d.HasField("dim_value") for d in kind.shape.dim):
        raise refuse(meta_path, f"the shape of the ONNX file {name}'s tensor {excerpt(value.name, 40)} "
                                 f"cannot be inferred; {INFERRED}")
    return [d.dim_value for d in kind.shape.dim], kind.elem_type


def _bytes(meta_path: pathlib.Path, name: str, tensor: str, dims: list[int], kind: int) -> int:
    """A tensor's bytes; strings (of any length each) are refused."""
    import onnx

    if kind in (onnx.TensorProto.STRING, onnx.TensorProto.UNDEFINED):
        raise refuse(meta_path, f"the ONNX file {name}'s tensor {excerpt(tensor, 40)} holds strings; an ONNX "
                                 "bot's tensors are numbers")
    return math.prod(dims) * onnx.helper.tensor_dtype_to_np_dtype(kind).itemsize
