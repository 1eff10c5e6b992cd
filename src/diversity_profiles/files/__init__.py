"""Files in and out: profile trees read as untrusted input, atomic writes that overwrite
only what this package wrote, numeric CSV input and shared notebooks."""
