"""The exact diversity families, one module each: Vendi, magnitude, Circles, energy, the
scale-free average distance and richness, and Leinster–Cobbold similarity-sensitive
diversity. numpy and scipy only; never imports the pipeline."""
