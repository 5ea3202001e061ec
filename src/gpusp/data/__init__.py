"""Graphs in: the CSR container, file formats, seeded generators and weights, the registry of real
graphs with its verifying downloader, and the pinned peer baselines (the YAML tables live here too)."""
