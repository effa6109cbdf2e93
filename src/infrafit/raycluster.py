"""One way into Ray for the commands that fan out (``sweep --executor ray``, ``bench run --executor ray``):
the cluster at ``RAY_ADDRESS`` (a KubeRay head, ``ray://host:10001``), else a local Ray started for the run
with ``LOCAL_RAY_CPUS`` CPUs and shut down after it. A Ray already initialised by the caller is used as is."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: CPUs of the local Ray started when RAY_ADDRESS is unset (CI machines have 2).
LOCAL_RAY_CPUS = 2


@contextmanager
def ray_session(local_cpus: int = LOCAL_RAY_CPUS) -> Iterator[Any]:
    """The ``ray`` module, initialised for the block."""
    import ray

    started = not ray.is_initialized()
    if started:
        address = os.environ.get("RAY_ADDRESS")
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=local_cpus, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()
