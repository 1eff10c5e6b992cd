"""The large-n solvers: Vendi of the Gaussian kernel (deflated Lanczos with a certified
bracket), magnitude (preconditioned CG with certified bounds) and Circles (threshold graphs
with certified brackets). Never imports the pipeline."""
