"""The package version, in a module of its own so that any module can read it without
importing the package (whose ``__init__`` imports every module: a cycle otherwise)."""

__version__ = "0.1.0"
