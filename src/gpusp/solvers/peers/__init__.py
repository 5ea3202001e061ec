"""The external peers (GAPBS, Gunrock): their pinned archives built like datasets (build, cudabuild) and one family
folder each. Their code is never copied here. Design: docs/peers.md.
"""
