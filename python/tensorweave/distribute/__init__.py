"""tf.distribute: ParameterServerStrategy with its ClusterCoordinator, cluster resolvers,
partitioners and Server."""

from tensorweave.distribute import cluster_resolver
from tensorweave.distribute import coordinator as _coordinator
from tensorweave.distribute import partitioners as _partitioners
from tensorweave.distribute.def_function import function
from tensorweave.distribute.parameter_server_strategy import InputContext
from tensorweave.distribute.parameter_server_strategy import ParameterServerStrategy
from tensorweave.distribute.parameter_server_strategy import ReduceOp
from tensorweave.training.server_lib import Server


class _Namespace:
    def __init__(self, name, **members):
        self.__name__ = name
        self.__dict__.update(members)


coordinator = _Namespace(
    "distribute.experimental.coordinator", ClusterCoordinator=_coordinator.ClusterCoordinator,
    RemoteValue=_coordinator.RemoteValue, PerWorkerValues=_coordinator.PerWorkerValues)
partitioners = _Namespace(
    "distribute.experimental.partitioners", Partitioner=_partitioners.Partitioner,
    FixedShardsPartitioner=_partitioners.FixedShardsPartitioner,
    MinSizePartitioner=_partitioners.MinSizePartitioner,
    MaxSizePartitioner=_partitioners.MaxSizePartitioner)
experimental = _Namespace(
    "distribute.experimental", ParameterServerStrategy=ParameterServerStrategy,
    coordinator=coordinator, partitioners=partitioners)

__all__ = ["InputContext", "ParameterServerStrategy", "ReduceOp", "Server", "cluster_resolver",
           "coordinator", "experimental", "function", "partitioners"]
