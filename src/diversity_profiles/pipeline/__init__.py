"""From sample sets to a profile tree: prepared conditions, the per-call plan, the family
registry, method planning, resampling, the :class:`Profiler` and the tree's layout."""
