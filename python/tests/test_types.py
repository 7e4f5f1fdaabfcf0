"""The package's type hints (it ships `py.typed`) and the README's snippets,
checked by mypy in strict mode."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

PYTHON = Path(__file__).resolve().parents[1]


def test_the_package_and_the_readme_snippets_type_check() -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (cargo xtask embed test installs it)")
    snippets = sorted(str(p) for p in (PYTHON / "tests" / "readme").glob("*.py"))
    cache = Path(tempfile.gettempdir()) / "noise-filter-mypy-cache"
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache),
         "--python-version", f"{sys.version_info.major}.{sys.version_info.minor}",
         str(PYTHON / "src" / "noise_filter"), *snippets],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
