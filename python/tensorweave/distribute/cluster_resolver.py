"""tf.distribute.cluster_resolver: where a program finds its cluster. TFConfigClusterResolver
reads TF_CONFIG (through the C++ RunConfig); SimpleClusterResolver is given the cluster."""

from tensorweave.run_config import TFConfigClusterResolver
from tensorweave.training import server_lib


class SimpleClusterResolver:
    """A cluster given by the program: `cluster_spec` (a ClusterSpec, dict or ClusterDef)
    and optionally this task."""

    def __init__(self, cluster_spec, master="", task_type=None, task_id=None, environment="",
                 num_accelerators=None, rpc_layer=None):
        self._cluster_spec = server_lib.ClusterSpec(cluster_spec)
        self._master = master
        self.task_type = task_type
        self.task_id = task_id
        self.rpc_layer = rpc_layer
        self._environment = environment
        self._num_accelerators = num_accelerators or {}

    @property
    def environment(self):
        return self._environment

    def cluster_spec(self):
        return self._cluster_spec

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        if task_type is not None and task_id is not None:
            address = self._cluster_spec.task_address(task_type, task_id)
            layer = rpc_layer or self.rpc_layer
            return "%s://%s" % (layer, address) if layer else address
        return self._master

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        return dict(self._num_accelerators)


__all__ = ["SimpleClusterResolver", "TFConfigClusterResolver"]
