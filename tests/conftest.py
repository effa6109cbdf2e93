"""Shared test configuration."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _has_cuda() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _has_cuda():
        return
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path, monkeypatch):
    """Never write to the user's real results database from tests."""
    monkeypatch.setenv("INFRAFIT_DB", str(tmp_path / "results.db"))
    monkeypatch.delenv("INFRAFIT_CATALOG", raising=False)


@pytest.fixture
def load_script():
    """``load_script("name")``: the module ``scripts/name.py`` (the one-shot scripts are not a package)."""

    def load(name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
