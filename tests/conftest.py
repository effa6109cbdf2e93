"""Shared test configuration."""

from __future__ import annotations

import importlib.util

import pytest


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
