"""gapbs: the GAP Benchmark Suite's CPU delta-stepping run as a peer. Design: docs/peers.md.
"""
