"""The package version (one place: records and ``gpusp.__version__`` read it)."""

__version__ = "0.1.0"
