"""The supported Pythons: stated alike in the Makefile, pyproject.toml and environment.yml, and
guarded by `make setup` (one line naming the version found, before anything is created)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAKE = shutil.which("make")


def _makefile_versions() -> list[str]:
    text = (ROOT / "Makefile").read_text()
    return re.search(r"^PYTHON_VERSIONS := (.+)$", text, flags=re.M).group(1).split()


def test_supported_pythons_agree_everywhere():
    versions = _makefile_versions()
    minors = [int(v.split(".")[1]) for v in versions]
    assert versions == [f"3.{m}" for m in range(minors[0], minors[-1] + 1)]
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == f">=3.{minors[0]},<3.{minors[-1] + 1}"
    conda = re.search(r"^\s*-\s*python=(\S+)$", (ROOT / "environment.yml").read_text(), flags=re.M)
    assert conda.group(1) in versions


def _fake_python(tmp_path: Path, version: str) -> Path:
    fake = tmp_path / "bin" / "python3"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho {version}\n")
    fake.chmod(0o755)
    return fake


def _setup(tmp_path: Path, python: str, lang: str = "en_US.UTF-8"):
    env = {k: v for k, v in os.environ.items() if k not in ("LABS_LANG", "MAKEFLAGS", "MFLAGS")}
    env["LANG"] = lang
    venv = tmp_path / "venv"
    proc = subprocess.run([MAKE, "-s", "-C", str(ROOT), "setup", f"PYTHON={python}", f"VENV={venv}"],
                          capture_output=True, text=True, env=env, timeout=60)
    return proc, venv


@pytest.mark.skipif(MAKE is None, reason="make is not installed")
def test_an_unsupported_python_gets_one_line_and_nothing_is_created(tmp_path):
    fake = _fake_python(tmp_path, "3.10.12")
    proc, venv = _setup(tmp_path, str(fake))
    assert proc.returncode != 0
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    line = lines[0]
    assert "3.10.12" in line and str(fake) in line
    assert "3.11-3.14" in line
    assert "pyenv" in line and "uv" in line and "conda" in line
    assert not venv.exists()


@pytest.mark.skipif(MAKE is None, reason="make is not installed")
def test_the_line_is_chinese_for_a_chinese_locale(tmp_path):
    proc, venv = _setup(tmp_path, str(_fake_python(tmp_path, "3.9.6")), lang="zh_CN.UTF-8")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode != 0 and len(lines) == 1
    assert "找到的 Python 是 3.9.6" in lines[0] and "3.11-3.14" in lines[0]
    assert not venv.exists()


@pytest.mark.skipif(MAKE is None, reason="make is not installed")
def test_no_python_at_all_gets_the_same_line(tmp_path):
    proc, venv = _setup(tmp_path, "")
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    assert proc.returncode != 0 and len(lines) == 1, lines
    assert "found Python none" in lines[0]
    assert not venv.exists()
