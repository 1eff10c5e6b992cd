"""Files in and out: profile trees read as untrusted input, atomic writes that overwrite
only what this package wrote, numeric CSV input and shared notebooks."""

from ._csv_input import CsvError, read_csv
from ._io import GENERATOR_META, NOTEBOOK_MARK, check_output, store_kind, write_atomic
from ._saving import write_profiles
from ._storage import open_profiles

__all__ = [
    "GENERATOR_META",
    "NOTEBOOK_MARK",
    "CsvError",
    "check_output",
    "open_profiles",
    "read_csv",
    "store_kind",
    "write_atomic",
    "write_profiles",
]
