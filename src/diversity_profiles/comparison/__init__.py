"""Comparing profiles: the verdict rule (specified once, mirrored by the browser), its
wording, :func:`compare` and the plain-language summary. Never imports the display."""
