"""A search-guided run on a Ray cluster of two nodes started on this machine, run as its
own program (``python -m tests.training.ray_cluster RUN_DIR [--inference service]``) so
that the cluster's Ray is the only one its process starts.

The head node has one CPU and the second node as many as the run needs besides; each
self-play actor takes one CPU, so the actors cannot all fit on one node. Prints the number
of nodes alive and the CPUs of each as JSON when the run is over.
"""

from __future__ import annotations

import json
import sys

from patchwork_env.training.az import run_az
from tests.agents.test_az import tiny_options

RUN = {"iterations": 2, "workers": 2, "games_per_iteration": 4}
"""The run both nodes share: two iterations of four games on two self-play actors."""


def main(run_dir: str, inference: str = "local") -> None:
    """Train :data:`RUN` on a two-node cluster into ``run_dir``."""
    import ray
    from ray.cluster_utils import Cluster

    service = inference == "service"
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=RUN["workers"] - 1 + int(service))
    cluster.wait_for_nodes()
    try:
        run_az(tiny_options(run_dir, ray_address=cluster.address, inference=inference,
                            **RUN), log=None)
        ray.init(address=cluster.address, log_to_driver=False)
        nodes = [n["Resources"].get("CPU", 0) for n in ray.nodes() if n["Alive"]]
        ray.shutdown()
    finally:
        cluster.shutdown()
    print(json.dumps({"nodes": len(nodes), "cpus": sorted(nodes)}))


if __name__ == "__main__":
    main(sys.argv[1], *(["service"] if "--inference" in sys.argv else []))
