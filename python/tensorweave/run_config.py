"""RunConfig (tf.contrib.learn and tf.estimator) and TFConfigClusterResolver: TF_CONFIG
resolved by the C++ RunConfig, so Python and C++ programs read it the same way (TFJob in
every era, the legacy `master` job, sparse jobs, clear errors naming the field)."""

import json

from tensorweave import _native
from tensorweave.training.server_lib import ClusterSpec


class TaskType:
    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


def _resolve():
    return json.loads(_native.resolve_run_config())


def _cluster_of(resolved):
    if resolved["source"] == "default":
        return ClusterSpec({})
    return ClusterSpec({job: {int(i): a for i, a in tasks.items()}
                        for job, tasks in resolved["cluster"].items()})


class RunConfig:
    """The task this process is, from TF_CONFIG (the cluster, the task, the session master),
    with TF 1.x's defaults for the training settings."""

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=None, save_checkpoints_secs=None,
                 session_config=None, keep_checkpoint_max=5,
                 keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None, eval_distribute=None,
                 experimental_distribute=None, experimental_max_worker_delay_secs=None,
                 session_creation_timeout_secs=7200):
        self._args = {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        for name, strategy in (("train_distribute", train_distribute),
                               ("eval_distribute", eval_distribute)):
            if strategy is not None and not hasattr(strategy, "_worker_scope"):
                raise NotImplementedError(
                    "RunConfig(%s=%s): of the tf.distribute strategies, tensorweave's "
                    "Estimator takes ParameterServerStrategy only" % (
                        name, type(strategy).__name__))
        if save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("Can not provide both save_checkpoints_steps and "
                             "save_checkpoints_secs.")
        if save_checkpoints_steps is None and save_checkpoints_secs is None:
            save_checkpoints_secs = 600
        resolved = _resolve()
        local = resolved["source"] == "default"
        self._cluster_spec = _cluster_of(resolved)
        self._task_type = None if local else resolved["task"]["type"]
        self._task_id = 0 if local else resolved["task"]["index"]
        self._master = resolved["target"]
        self._is_chief = resolved["is_chief"]
        self._num_ps_replicas = 0 if local else resolved["num_ps"]
        self._num_worker_replicas = 1 if local else resolved["num_workers"]
        self._environment = resolved["environment"] or "local"
        self._device_filters = resolved["device_filters"]
        global_id = resolved["global_id_in_cluster"]
        self._global_id_in_cluster = None if global_id < 0 else global_id
        self.model_dir = model_dir
        self.tf_random_seed = tf_random_seed
        self.save_summary_steps = save_summary_steps
        self.save_checkpoints_steps = save_checkpoints_steps
        self.save_checkpoints_secs = save_checkpoints_secs
        if session_config is None and self._device_filters:
            # As TF's RunConfig: on a cluster, sessions see only the tasks this one works
            # with (ps and itself, or the chief), so none waits for an evaluator or peers.
            from tensorweave.config import ConfigProto
            session_config = ConfigProto(allow_soft_placement=True,
                                         device_filters=list(self._device_filters))
        self.session_config = session_config
        self.keep_checkpoint_max = keep_checkpoint_max
        self.keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self.log_step_count_steps = log_step_count_steps
        self.train_distribute = train_distribute
        self.eval_distribute = eval_distribute
        self.device_fn = device_fn
        self.protocol = protocol
        self.session_creation_timeout_secs = session_creation_timeout_secs

    def replace(self, **kwargs):
        """A new RunConfig with the given settings changed (TF's replace)."""
        args = dict(self._args)
        args["model_dir"] = self.model_dir
        unknown = [k for k in kwargs if k not in args]
        if unknown:
            raise ValueError("Replacing %s is not supported. Allowed properties are %s." %
                             (unknown, sorted(args)))
        if "save_checkpoints_steps" in kwargs and kwargs["save_checkpoints_steps"]:
            args["save_checkpoints_secs"] = None
        if "save_checkpoints_secs" in kwargs and kwargs["save_checkpoints_secs"]:
            args["save_checkpoints_steps"] = None
        args.update(kwargs)
        return RunConfig(**args)

    cluster_spec = property(lambda self: self._cluster_spec)
    task_type = property(lambda self: self._task_type)
    task_id = property(lambda self: self._task_id)
    master = property(lambda self: self._master)
    is_chief = property(lambda self: self._is_chief)
    num_ps_replicas = property(lambda self: self._num_ps_replicas)
    num_worker_replicas = property(lambda self: self._num_worker_replicas)
    environment = property(lambda self: self._environment)
    evaluation_master = property(lambda self: "")
    device_filters = property(lambda self: list(self._device_filters))
    global_id_in_cluster = property(lambda self: self._global_id_in_cluster)


class TFConfigClusterResolver:
    """The cluster and this task from TF_CONFIG (tf.distribute.cluster_resolver)."""

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        resolved = _resolve()
        self._resolved = resolved
        local = resolved["source"] == "default"
        self.task_type = task_type if task_type is not None else (
            None if local else resolved["task"]["type"])
        self.task_id = task_id if task_id is not None else (
            None if local else resolved["task"]["index"])
        self.rpc_layer = rpc_layer if rpc_layer is not None else (
            resolved["rpc_layer"] or None)
        self._environment = environment if environment is not None else (
            resolved["environment"] or "")

    @property
    def environment(self):
        return self._environment

    def cluster_spec(self):
        return _cluster_of(self._resolved)

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        if self._resolved["session_master"]:
            return self._resolved["session_master"]
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        cluster = self.cluster_spec()
        single = len(cluster.jobs) == 1 and cluster.num_tasks(cluster.jobs[0]) == 1
        if not cluster or single or task_type is None or task_type not in cluster.jobs:
            return ""
        address = cluster.task_address(task_type, task_id)
        layer = rpc_layer or self.rpc_layer
        return "%s://%s" % (layer, address) if layer else address

    def num_accelerators(self, *args, **kwargs):
        return {}
