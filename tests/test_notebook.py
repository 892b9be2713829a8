"""The quickstart notebook runs from top to bottom."""

from __future__ import annotations

import pathlib
import tempfile

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "quickstart.ipynb"


@pytest.mark.slow
def test_quickstart_notebook_executes_and_trains_a_bot() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    before = set(pathlib.Path(tempfile.gettempdir()).glob("cardlab-runs-*"))
    resources = {"metadata": {"path": str(NOTEBOOK.parent)}}
    NotebookClient(nb, timeout=600, kernel_name="python3", resources=resources).execute()
    outputs = {i: cell.get("outputs", []) for i, cell in enumerate(nb.cells) if cell.cell_type == "code"}
    assert all(o.get("output_type") != "error" for cell_out in outputs.values() for o in cell_out)
    text = "".join(o.get("text", "") for cell_out in outputs.values() for o in cell_out)
    assert "winner: seat" in text
    assert "win rate" in text and "95% CI" in text
    images = [o for cell_out in outputs.values() for o in cell_out if "image/png" in o.get("data", {})]
    assert images, "the learning-curve / win-rate figure was not drawn"
    left = set(pathlib.Path(tempfile.gettempdir()).glob("cardlab-runs-*")) - before
    assert not left, f"the notebook left its run folder {sorted(left)} in the system's temp folder"
