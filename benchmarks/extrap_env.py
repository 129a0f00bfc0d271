"""Create or reuse the separate virtual environment that holds Extra-P.

Extra-P 4.2.5 pins ``numpy~=1.18`` (so numpy < 2) and pulls in PySide6-Essentials (Qt, about
250 MB of the environment's ~650 MB) and matplotlib even for its Python API, so it can never share
perfcast's environment. The benchmarks run their driver scripts (``extrap_driver.py`` and the
others) with its interpreter through :func:`run_driver`.

Run ``python -m benchmarks.extrap_env`` to create the environment and print its size.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

EXTRAP_VERSION = "4.2.5"
DEFAULT_VENV = Path(__file__).resolve().parent / ".extrap-venv"


def venv_python(venv: Path) -> Path:
    """The interpreter inside ``venv``."""
    return venv / "bin" / "python"


def installed_version(venv: Path) -> str | None:
    """The Extra-P version installed in ``venv``, or None when there is none."""
    python = venv_python(venv)
    if not python.exists():
        return None
    probe = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('extrap'))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.stdout.strip() if probe.returncode == 0 else None


def ensure_extrap(venv: Path = DEFAULT_VENV, quiet: bool = True) -> Path:
    """Make sure ``venv`` holds Extra-P :data:`EXTRAP_VERSION`; return its interpreter.

    Creates the environment with the running Python's ``venv`` module and installs Extra-P with
    pip the first time; later calls only check the installed version.

    Raises
    ------
    RuntimeError
        When the environment cannot be created or Extra-P cannot be installed.
    """
    venv = Path(venv)
    if installed_version(venv) == EXTRAP_VERSION:
        return venv_python(venv)
    print(f"Installing Extra-P {EXTRAP_VERSION} into {venv} (once) ...", file=sys.stderr)
    if not venv_python(venv).exists():
        _run([sys.executable, "-m", "venv", str(venv)])
    pip = [str(venv_python(venv)), "-m", "pip", "install"] + (["-q"] if quiet else [])
    _run(pip + [f"extrap=={EXTRAP_VERSION}"])
    if installed_version(venv) != EXTRAP_VERSION:
        raise RuntimeError(f"Extra-P {EXTRAP_VERSION} is not importable in {venv} after install")
    return venv_python(venv)


def run_driver(
    venv: Path, driver: Path, arrays: Mapping[str, Any], *options: str, prefix: str
) -> dict[str, Any]:
    """Run an Extra-P driver script in the environment ``venv``: ``arrays`` go to it as an
    ``.npz`` file, its JSON output comes back. A failing driver raises with its stderr's end."""
    python = ensure_extrap(venv)
    with tempfile.TemporaryDirectory(prefix=prefix) as directory:
        data, output = Path(directory) / "data.npz", Path(directory) / "out.json"
        np.savez(data, **arrays)
        command = [str(python), str(driver), str(data), str(output), *options]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"Extra-P driver {driver.name} failed:\n{result.stderr[-4000:]}")
        document: dict[str, Any] = json.loads(output.read_text(encoding="utf-8"))
    return document


def _run(command: list[str]) -> None:
    result = subprocess.run(command, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"command failed ({result.returncode}): {' '.join(command)}")


def directory_size(path: Path) -> int:
    """Total size in bytes of the files under ``path``."""
    return sum(
        f.stat().st_size for f in Path(path).rglob("*") if f.is_file() and not f.is_symlink()
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Create the Extra-P environment of the benchmarks."
    )
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    args = parser.parse_args(argv)
    python = ensure_extrap(args.venv, quiet=False)
    site = next((args.venv / "lib").glob("python*/site-packages"))
    print(f"Extra-P {EXTRAP_VERSION}: {python}")
    print(f"environment: {directory_size(args.venv) / 1e6:.0f} MB")
    for package in ("PySide6", "matplotlib", "numpy", "scipy"):
        if (site / package).exists():
            print(f"  {package}: {directory_size(site / package) / 1e6:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
