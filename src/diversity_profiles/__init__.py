"""diversity-profiles: diversity of generated content as curves, not one fragile scalar."""

__version__ = "0.1.0"
