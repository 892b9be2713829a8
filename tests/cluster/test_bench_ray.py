"""`cardlab bench --workers 2`: the suite's deals played by Ray workers give the serial result file."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from cardlab.evaluation.bench import bench
from cardlab.evaluation.suites import SuitePlan, make_suite

pytestmark = pytest.mark.ray
pytest.importorskip("ray")


def test_two_ray_workers_give_the_serial_result_file(ray_local: Any) -> None:
    from cardlab.cluster.parallel_evaluation import evaluate_parallel

    suite = make_suite(SuitePlan("tiny", "switch", 4, "hand", 12), 5)
    serial = bench("greedy", suite, ["expert", "random"])
    on_ray = functools.partial(evaluate_parallel, workers=2)
    parallel = bench("greedy", suite, ["expert", "random"], play=on_ray)
    assert parallel.to_json() == serial.to_json()
    assert serial.result.slots == ["greedy", "expert", "random", "expert"] and serial.rate.n == 48
