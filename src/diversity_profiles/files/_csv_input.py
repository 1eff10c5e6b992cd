"""Numeric CSV files (samples × features) read with a real CSV parser.

What tools actually write: numpy's ``savetxt`` (numbers, maybe a ``#`` header),
pandas' ``to_csv`` (a header row, by default ``0,1,…`` for unnamed columns, and an
index column whose header cell is empty), spreadsheets (a named header). Rows of
different lengths and cells that are not numbers are errors naming the line and
column, never skipped: a dropped row or column changes the result silently.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np


class CsvError(ValueError):
    """A malformed CSV file; the message names the file, line and column."""


def _number(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None


def _is_header(cells: list[str]) -> bool:
    """A header has a cell that is not a number, or reads exactly 0, 1, …, d-1.

    The second case is pandas' default header for unnamed columns
    (``to_csv(index=False)``); a data row equal to it is far less likely than that.
    """
    if any(_number(c) is None for c in cells):
        return True
    return cells == [str(k) for k in range(len(cells))]


def read_csv(path) -> np.ndarray:
    """Read a numeric table, detecting a header row and a pandas index column.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "x.csv"
    >>> _ = f.write_text(",0,1\\n0,1.5,2\\n1,3,4\\n")   # pandas' default to_csv
    >>> read_csv(f).tolist()
    [[1.5, 2.0], [3.0, 4.0]]
    >>> _ = f.write_text("a,b\\n1,2\\n3\\n")
    >>> read_csv(f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    diversity_profiles.files._csv_input.CsvError: ...x.csv: line 3 has 1 value(s) but ...
    """
    path = Path(path)
    rows: list[tuple[int, list[str]]] = []
    with open(path, newline="", encoding="utf-8-sig") as fh:  # -sig: Excel's byte-order mark
        reader = csv.reader(fh)
        try:
            for cells in reader:
                cells = [c.strip() for c in cells]
                if not any(cells) or cells[0].startswith("#"):
                    continue  # blank lines; numpy.savetxt's commented header
                rows.append((reader.line_num, cells))
        except csv.Error as exc:
            raise CsvError(f"{path}: line {reader.line_num}: {exc}") from None
    if not rows:
        raise CsvError(f"{path}: holds no rows")
    first_line, first = rows[0]
    width = len(first)
    for line, cells in rows[1:]:
        if len(cells) != width:
            raise CsvError(
                f"{path}: line {line} has {len(cells)} value(s) but line {first_line} has "
                f"{width}; every row needs the same number of columns"
            )
    index = False
    if _is_header(first):
        index = first[0] in ("", "Unnamed: 0")  # pandas' index column has no name
        rows = rows[1:]
        if not rows:
            raise CsvError(f"{path}: holds a header row and no data")
    start = 1 if index else 0
    out = np.empty((len(rows), width - start))
    for i, (line, cells) in enumerate(rows):
        for j, cell in enumerate(cells[start:], start=start + 1):
            value = _number(cell)
            if value is None:
                shown = repr(cell) if cell else "an empty cell"
                raise CsvError(f"{path}: line {line}, column {j}: {shown} is not a number")
            out[i, j - start - 1] = value
    return out
