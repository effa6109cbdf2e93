"""Benchmark fleets: ``infrafit bench run MODEL --executor ray`` runs the benchmark once on each node type of
a Ray cluster and gathers every measurement into the local store, with the node's hardware identified.

A node type is the node's resources without its own name and without amounts of memory (Ray's
``accelerator_type:<GPU>`` resource names the GPU model; ``CPU``/``GPU`` counts; any custom resource a
KubeRay worker group declares, e.g. ``cpu_model_xeon_8480``). One node of each type runs the same pure
function (``run_on_node``) through ``NodeAffinitySchedulingStrategy``; the node detects its own host
(CPU model, memory, GPUs: ``bench.hardware.detect_host``) and returns its measurements, which the driver
stores as one run per node (``host_json`` carries the node id and type).
"""

from __future__ import annotations

from typing import Any

#: Precisions ``bench run`` can time: the keys of ``bench.models.DTYPES``, which imports torch (the driver of a
#: Ray fleet needs no torch; a test keeps the two equal).
RUNNABLE_PRECISIONS = ("fp32", "bf16", "fp16")
#: Resources that name a node or count memory, not its kind.
_NOT_A_KIND = ("node:", "memory", "object_store_memory")


def node_types(nodes: list[dict[str, Any]]) -> dict[tuple[tuple[str, float], ...], str]:
    """{node type: the first alive node id of that type} from ``ray.nodes()``."""
    out: dict[tuple[tuple[str, float], ...], str] = {}
    for n in nodes:
        if not n.get("Alive", True):
            continue
        kind = tuple(sorted((k, float(v)) for k, v in (n.get("Resources") or {}).items()
                            if not any(k.startswith(p) for p in _NOT_A_KIND)))
        out.setdefault(kind, str(n["NodeID"]))
    return out


class _ListRecorder:
    """The recorder ``run_model_bench`` writes to, keeping measurements in memory on the node."""

    def __init__(self) -> None:
        from infrafit.bench.hardware import detect_host

        self.host = detect_host()
        self.measurements: list[Any] = []

    def __call__(self, m: Any) -> None:
        self.measurements.append(m)


def run_on_node(model: str, quick: bool, precision: str, device: str) -> dict[str, Any]:
    """The whole ``bench run`` on this node (``bench.suite.run_suite``): (host, measurements as JSON)."""
    from infrafit.bench.suite import run_suite

    rec = _ListRecorder()
    shape = run_suite(model, rec.host, rec, quick=quick, precision=precision, device=device)
    return {"host": rec.host.to_json(), "measurements": [m.to_json() for m in rec.measurements],
            "shape": shape.to_json()}


def run_fleet(model: str, *, quick: bool, precision: str, device: str, conn) -> list[dict]:
    """Run on one node of each type (``infrafit.raycluster.ray_session``) and store each node's measurements
    as its own run. Returns one summary per node."""
    from infrafit.bench.results import Measurement, record, start_run
    from infrafit.raycluster import ray_session

    with ray_session() as ray:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        kinds = node_types(ray.nodes())
        task = ray.remote(num_cpus=1, num_gpus=1 if device == "cuda" else 0)(run_on_node)
        refs = {kind: task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))
                .remote(model, quick, precision, device) for kind, node in kinds.items()}
        out = []
        for kind, ref in refs.items():
            got = ray.get(ref)
            node = kinds[kind]
            host = {**got["host"], "ray_node_id": node, "ray_node_type": dict(kind)}
            run_id = start_run(conn, host, f"bench run {model} --executor ray")
            for m in got["measurements"]:
                record(conn, run_id, Measurement(m["kind"], m["params"], m["value"], m["unit"], m["spread"],
                                                 m["predicted"], m["prediction"]))
            out.append({"run_id": run_id, "node_id": node, "node_type": dict(kind), "host": host,
                        "measurements": len(got["measurements"])})
        return out
