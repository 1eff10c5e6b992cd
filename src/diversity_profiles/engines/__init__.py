"""Where the pairs are computed: distances and kernels, the log-distance histogram, the
streamed passes (in memory, as dask graphs, on a torch device), the pair operators and the
preconditioned solvers the large-n methods run on. Never imports the pipeline."""
