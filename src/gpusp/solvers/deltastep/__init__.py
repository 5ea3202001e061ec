"""deltastep: work-efficient delta-stepping on the GPU (one persistent kernel, one thread-block cluster with and
without rounds, asynchronous buckets). Design: docs/solvers/deltastep.md.
"""
