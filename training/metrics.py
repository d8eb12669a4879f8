"""What a training run records: ``metrics.csv`` (one row per record) and its learning curve.

:class:`MetricsLog` is the records file of both trainers. Its first column is the step a
row was taken at (PPO: learner moves; the search-guided trainer: iterations). Each row is
added by rewriting the whole file atomically (:mod:`patchwork_env.files.atomic`), so the
file is always whole. A trainer writes a row before the checkpoint of the same step; a
resumed run keeps the rows up to its checkpoint's step and drops the later ones (it plays
them again), so after a kill at any moment the records and the checkpoint agree. A records
file that cannot be trusted (no header or other columns, a row of the wrong length, bytes
that are not text) is refused with a one-line :class:`MetricsError` naming the file.

:class:`MetricsCsv` is the PPO trainer's log (:data:`CSV_FIELDS`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from patchwork_env.files.atomic import save_figure, write_text
from patchwork_env.files.folders import reason

CSV_FIELDS = ("steps", "updates", "wall_s", "steps_per_s", "win_random", "win_random_lo",
              "win_random_hi", "win_greedy", "win_greedy_lo", "win_greedy_hi",
              "train_win_random", "train_win_greedy", "train_win_self", "pool_size")


class MetricsError(ValueError):
    """A records file that cannot be trusted; the message is one line naming it."""


def read_metrics(path: Path, fields: Sequence[str] | None = None) -> list[dict[str, str]]:
    """The rows of the records file ``path``, as strings, checked: its header names
    ``fields`` (any columns if ``None``), every row has one value per column and the first
    column holds whole numbers. :class:`MetricsError` for a file that fails a check or
    cannot be read."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise MetricsError(f"cannot read {path}: {reason(e)}") from None
    except UnicodeDecodeError as e:
        raise MetricsError(f"{path} is not a metrics file: byte {e.start} is not UTF-8 "
                           "text") from None
    try:
        table = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as e:
        raise MetricsError(f"{path} is not a metrics file: {e}") from None
    if not table:
        return []
    header, lines = table[0], table[1:]
    if fields is not None and header != list(fields):
        raise MetricsError(f"{path} does not have the columns of this run's metrics (its "
                           f"first line reads {_short(','.join(header))}): move it away to "
                           "start the records afresh")
    if not header or not header[0] or any(_is_number(name) for name in header):
        raise MetricsError(f"{path} is not a metrics file: its first line names no columns "
                           f"(it reads {_short(','.join(header))})")
    rows = []
    for number, values in enumerate(lines, 2):
        if len(values) != len(header):
            raise MetricsError(f"{path}, line {number}: {len(values)} values for "
                               f"{len(header)} columns")
        row = dict(zip(header, values, strict=True))
        try:
            int(float(row[header[0]]))
        except ValueError:
            raise MetricsError(f"{path}, line {number}: {header[0]} is "
                               f"{_short(row[header[0]])}, not a number") from None
        rows.append(row)
    return rows


def _short(text: str, width: int = 40) -> str:
    return repr(text if len(text) <= width else text[:width] + "...")


class MetricsLog:
    """A run's ``metrics.csv`` with the columns ``fields``, the first the step of each row.

    ``keep_through`` is the step a resumed run continues from: the rows up to it are kept
    (a missing file has none) and the later ones dropped; ``None`` (a new run) starts an
    empty file. With ``other_columns`` a resumed run may record other columns than the
    file's (it keeps the values of the columns both have); without, the file's header must
    be ``fields``. Numbers that are floats are written with ``number_format``.
    """

    def __init__(self, path: Path, fields: Sequence[str], keep_through: int | None,
                 number_format: str = ".4f", other_columns: bool = False) -> None:
        self.path = Path(path)
        self.fields = list(fields)
        self.number_format = number_format
        self.rows: list[dict[str, str]] = []
        if keep_through is not None and self.path.exists():
            step = self.fields[0]
            rows = read_metrics(self.path, None if other_columns else self.fields)
            if rows and next(iter(rows[0])) != step:
                raise MetricsError(f"{self.path} does not have the columns of this run's "
                                   f"metrics (its first is not {step}): move it away to "
                                   "start the records afresh")
            self.rows = [{k: r.get(k, "") for k in self.fields} for r in rows
                         if int(float(r[step])) <= keep_through]
        self._write()

    def append(self, row: dict[str, Any]) -> None:
        """Add one row (columns not in ``fields`` are ignored, missing ones left empty)."""
        self.rows.append({k: (format(v, self.number_format) if isinstance(v, float) else
                              str(v)) for k, v in row.items() if k in self.fields})
        self._write()

    def _write(self) -> None:
        out = io.StringIO(newline="")
        writer = csv.DictWriter(out, self.fields)
        writer.writeheader()
        writer.writerows(self.rows)
        write_text(self.path, out.getvalue())


class MetricsCsv(MetricsLog):
    """The PPO trainer's ``metrics.csv`` (:data:`CSV_FIELDS`), one row per evaluation;
    ``resume_from`` is the step a resumed run continues from (``None``: a new run)."""

    def __init__(self, path: Path, resume_from: int | None) -> None:
        super().__init__(path, CSV_FIELDS, resume_from)

    @staticmethod
    def read(path: Path) -> list[dict[str, str]]:
        """The rows of a PPO run's ``metrics.csv``, as strings (:func:`read_metrics`)."""
        return read_metrics(path, CSV_FIELDS)


def plot_learning_curve(csv_path: Path, out: Path) -> None:
    """Win rates (with their 95% intervals) against random and greedy over the steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = MetricsCsv.read(csv_path)
    steps = np.array([float(r["steps"]) for r in rows])
    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    try:
        for name, colour in (("random", "tab:blue"), ("greedy", "tab:red")):
            rate, lo, hi = (np.array([float(r[f"win_{name}{s}"]) for r in rows])
                            for s in ("", "_lo", "_hi"))
            ax.plot(steps, rate, color=colour, label=f"vs {name}")
            ax.fill_between(steps, lo, hi, color=colour, alpha=0.2)
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
        ax.set(xlabel="learner moves", ylabel="win rate (paired games)", ylim=(0, 1),
               title="Self-play MaskablePPO on Patchwork")
        ax.legend(loc="lower right")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        save_figure(fig, out)
    finally:
        plt.close(fig)


def _is_number(text: str) -> bool:
    """Whether ``text`` reads as a number (a header's names never do; a row's values may)."""
    try:
        float(text)
    except ValueError:
        return False
    return True
