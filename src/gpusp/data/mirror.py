"""Where the offline mirror is: the one resolution every fetch (datasets, peers' archives) uses.

The first option given wins: the ``mirror`` argument (``--mirror``; the workflow's config key ``mirror``, which the
workflow hands its jobs as ``$GPUSP_MIRROR``), then ``$GPUSP_MIRROR``, then the ``mirror:`` key of the site file
(``$GPUSP_SITE``, else ``$XDG_CONFIG_HOME/gpusp/site.yaml``, else ``~/.config/gpusp/site.yaml``; a relative folder
there is read from the site file's own folder), else none. A value is a folder or several joined with
``os.pathsep``. :meth:`Mirror.options` says, in one line, every option and what each held (docs/data.md).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import GpuspError

__all__ = ["MIRROR_ENV", "SITE_ENV", "Mirror", "resolve", "site_file"]

log = logging.getLogger(__name__)

MIRROR_ENV = "GPUSP_MIRROR"
SITE_ENV = "GPUSP_SITE"
ARGUMENT = "--mirror / config key `mirror`"


def site_file() -> Path:
    """The site file: ``$GPUSP_SITE``, else ``$XDG_CONFIG_HOME/gpusp/site.yaml``, else ``~/.config/gpusp/site.yaml``."""
    named = os.environ.get(SITE_ENV)
    if named:
        return Path(named).expanduser()
    config_home = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config_home) / "gpusp" / "site.yaml"


def _site_mirror(path: Path) -> tuple[str | None, str]:
    """(the site file's ``mirror`` value with relative folders read from the file's folder, or None; what it held)."""
    if not path.is_file():
        return None, f"{path}: no such file"
    try:
        site = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise GpuspError(f"{path}: the gpusp site file cannot be read: {' '.join(str(exc).split())}") from None
    value = site.get("mirror") if isinstance(site, dict) else None
    if not value:
        return None, f"{path}: no `mirror:` key"
    if not isinstance(value, str):
        raise GpuspError(f"{path}: `mirror:` is a folder, or several joined with {os.pathsep!r}, not {value!r}")
    folders = [str(path.parent / Path(p).expanduser()) for p in value.split(os.pathsep) if p]
    return os.pathsep.join(folders), f"{path}: {value}"


@dataclass(frozen=True)
class Mirror:
    """The folders searched, the option they came from (None: no mirror), and what each option held."""

    folders: tuple[Path, ...]
    origin: str | None
    held: dict  # option -> its value, "not set", or why it gives none

    def options(self) -> str:
        """Every mirror option, in the order they are read, with what it held and which one was searched."""
        parts = []
        for option, value in self.held.items():
            mark = ""
            if option == self.origin:
                missing = [str(f) for f in self.folders if not f.is_dir()]
                mark = " (searched" + (f"; no folder {', '.join(missing)}" if missing else "") + ")"
            parts.append(f"{option}: {value}{mark}")
        return "mirror options, the first set wins: " + "; ".join(parts) + " (docs/data.md)"


def resolve(mirror=None) -> Mirror:
    """The mirror a fetch searches: ``mirror`` (a folder, a list of them, a str joining several with os.pathsep;
    ``False`` or "": no mirror, whatever else is set), else ``$GPUSP_MIRROR``, else the site file's, else none."""
    held = {ARGUMENT: "not given", f"${MIRROR_ENV}": "not set"}
    site = site_file()
    value, origin = None, None
    if mirror is False or mirror == "":
        held[ARGUMENT] = "off (no mirror)"
        origin = ARGUMENT
        value = []
    elif mirror is not None:
        held[ARGUMENT] = os.pathsep.join(map(str, mirror)) if isinstance(mirror, (list, tuple)) else str(mirror)
        value, origin = mirror, ARGUMENT
    env = os.environ.get(MIRROR_ENV, "")
    if env:
        held[f"${MIRROR_ENV}"] = env
        if origin is None:
            value, origin = env, f"${MIRROR_ENV}"
    site_option = f"site file ({SITE_ENV})"
    if origin is None:
        found, held[site_option] = _site_mirror(site)
        if found:
            value, origin = found, site_option
    else:
        held[site_option] = f"{site}: not read"
    if isinstance(value, str):
        value = [p for p in value.split(os.pathsep) if p]
    elif isinstance(value, os.PathLike):
        value = [value]
    folders = tuple(Path(p).expanduser() for p in value or ())
    for folder in folders:
        if not folder.is_dir():
            log.warning("mirror folder %s (from %s) does not exist", folder, origin)
    return Mirror(folders, origin if folders else None, held)
