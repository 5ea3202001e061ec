"""gunrock: Gunrock's frontier SSSP run as a GPU peer through gpusp's driver. Design: docs/peers.md.
"""
