"""Why a profile says what it says: witnesses, distance distributions, per-category
diversity and convergence in the sample size, stored beside the profiles."""
