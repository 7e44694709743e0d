"""``c4lab bench`` prints real rates (the numbers are measured, not asserted)."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from c4lab.cli import main


def test_bench_json_reports_rates_for_both_boards() -> None:
    result = CliRunner().invoke(main, ["bench", "--json", "--seconds", "0.05"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data["playouts_per_s"]) == {"7x6", "12x12/Xf4"}
    assert all(rate > 0 for rate in data["playouts_per_s"].values())
    assert set(data["position_ops_per_s"]) == {"7x6", "12x12/Xf4"}
    assert set(data["uct_iterations_per_s"]) == {"7x6", "12x12/Xf4"}
    assert data["minimax_nodes_per_s"] > 0
    assert all(rate > 0 for rate in data["minimax_nodes_per_s_by_board"].values())
    details = data["details"]["playouts"]["12x12/Xf4"]
    assert details["cpu_s"] > 0 and details["wall_s"] > 0 and len(details["runs_per_s"]) == 3


def test_bench_text_report() -> None:
    result = CliRunner().invoke(main, ["bench", "--seconds", "0.02"])
    assert result.exit_code == 0
    assert "M playouts/s" in result.output and "12x12/Xf4" in result.output


def test_bench_prints_each_table_as_it_is_measured_so_a_stopped_run_keeps_what_it_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Review: the tables came only at the end of the run (about 20 s at the
    default), and a run stopped with Ctrl-C in its last measurement showed
    nothing of the four before it."""
    from c4lab import bench

    def stopped(board: str, seconds: float) -> dict[str, float]:
        raise KeyboardInterrupt

    monkeypatch.setattr(bench, "bench_training", stopped)  # the last section: Ctrl-C there
    result = CliRunner().invoke(main, ["bench", "--seconds", "0.02"])
    assert result.exit_code == 130, result.output
    for heading in ("Random playouts", "Position API", "UCT iterations", "Minimax"):
        assert heading in result.output
    assert "n-tuple TD training" not in result.output


@pytest.mark.skipif(shutil.which("gcc") is None and shutil.which("cc") is None, reason="needs a C compiler")
def test_bench_can_time_the_c_reference_beside_the_kernel() -> None:
    result = CliRunner().invoke(main, ["bench", "--json", "--seconds", "0.05", "--c"])
    assert result.exit_code == 0, result.output
    reference = json.loads(result.output)["c_reference_playouts_per_s"]
    assert set(reference) == {"7x6", "12x12/Xf4"}
    assert set(reference["7x6"]) == {"lines", "bitboard"}
    assert all(rate > 0 for engines in reference.values() for rate in engines.values())


def test_bench_help_names_every_measurement() -> None:
    """``--help`` says what the command measures: all five, not only the
    playouts and Position (the UCT, minimax and n-tuple rows went unnamed)."""
    result = CliRunner().invoke(main, ["bench", "--help"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    for measured in ("random playouts", "Position", "UCT (iterations a second)", "minimax (nodes a second",
                     "n-tuple self-play training (games a second)", "CPU time", "bench solver", "bench accuracy"):
        assert measured in text, text
