"""The package version (one place: pyproject.toml reads it from here)."""
__version__ = "0.4.0.dev0"
