"""A records file that lost its header is refused by name, not read with a row as header."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchwork_env.training.metrics import MetricsError, read_metrics


def test_a_file_whose_first_line_is_a_row_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "metrics.csv"
    path.write_text("256,0.5,0.75\n")
    with pytest.raises(MetricsError, match=r"metrics\.csv is not a metrics file.*256,0\.5"):
        read_metrics(path)


def test_a_file_with_its_header_reads_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "metrics.csv"
    path.write_text("step,win_rate\n256,0.5\n")
    assert read_metrics(path) == [{"step": "256", "win_rate": "0.5"}]
