"""tool-selector core: models, settings, errors, catalog store, embedder, search backends, stages 3-5."""

__version__ = "0.1.0"


def installed_version(default: str = __version__) -> str:
    """The installed distribution's version, or ``default`` when run from a checkout never installed."""
    from importlib import metadata

    try:
        return metadata.version("tool-selector")
    except metadata.PackageNotFoundError:
        return default
