"""ClusterSpec and Server with TF 1.x's API, the server being the C++ Server."""

import json

from tensorweave import _native
from tensorweave import errors
from tensorweave.protobuf import cluster_pb2
from tensorweave.protobuf import server_def_pb2

ClusterDef = cluster_pb2.ClusterDef
JobDef = cluster_pb2.JobDef
ServerDef = server_def_pb2.ServerDef


class ClusterSpec:
    """Jobs and their tasks' addresses: from a dict of lists or of {index: address}, another
    ClusterSpec, a ClusterDef, or None (empty). The C++ ClusterSpec holds them: it validates
    job names and "host:port" addresses (ValueError naming the job, task and text) and does
    the lookups, where an unknown job or task is a ValueError, as in TensorFlow."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            self._spec = cluster._spec
            return
        self._spec = _native.ClusterSpec(json.dumps(_jobs_of(cluster)))

    def __bool__(self):
        return bool(self._spec.jobs())

    def __eq__(self, other):
        return isinstance(other, ClusterSpec) and self._spec == other._spec

    def __ne__(self, other):
        return not self == other

    def __repr__(self):
        return "ClusterSpec(%r)" % self.as_dict()

    @property
    def jobs(self):
        return self._spec.jobs()

    def as_dict(self):
        """Dense jobs as lists of addresses, sparse ones as {index: address}."""
        out = {}
        for job, tasks in json.loads(self._spec.to_json()).items():
            out[job] = tasks if isinstance(tasks, list) else {int(i): a for i, a in tasks.items()}
        return out

    def as_cluster_def(self):
        """The cluster as a ClusterDef protocol buffer (TF's field numbers)."""
        cluster_def = ClusterDef()
        for name, tasks in sorted(json.loads(self._spec.to_json(always_objects=True)).items()):
            job = cluster_def.job.add()
            job.name = name
            for index, address in tasks.items():
                job.tasks[int(index)] = address
        return cluster_def

    def num_tasks(self, job_name):
        return self._spec.num_tasks(job_name)

    def task_indices(self, job_name):
        return self._spec.task_indices(job_name)

    def task_address(self, job_name, task_index):
        return self._spec.task_address(job_name, task_index)

    def job_tasks(self, job_name):
        return self._spec.job_tasks(job_name)

    def _to_json(self):
        return self._spec.to_json(always_objects=True)


def _jobs_of(cluster):
    """{job: {str(index): address}} from what TF's ClusterSpec accepts; TypeError (as TF)
    for anything else."""
    if cluster is None:
        return {}
    if isinstance(cluster, ClusterDef):
        jobs = {}
        for job in cluster.job:
            if job.name in jobs:
                raise ValueError("Duplicate job name %r in ClusterDef" % job.name)
            jobs[job.name] = {str(i): a for i, a in job.tasks.items()}
        return jobs
    if isinstance(cluster, dict):
        jobs = {}
        for job, tasks in cluster.items():
            if not isinstance(job, str):
                raise TypeError("Job names must be strings, got %r" % (job,))
            if isinstance(tasks, (list, tuple)):
                jobs[job] = {str(i): a for i, a in enumerate(tasks)}
            elif isinstance(tasks, dict):
                jobs[job] = {str(int(i)): a for i, a in tasks.items()}
            else:
                raise TypeError("The tasks for job %r must be a list or a dictionary from "
                                "integers to strings." % job)
        return jobs
    raise TypeError("`cluster` must be a dictionary mapping one or more job names to "
                    "lists of network addresses, or a `ClusterDef` protocol buffer")


# Started servers until they are stopped: as in TF 1.x, a server serves until the process
# ends even when the program keeps no reference to it (`Server(...).target` is common),
# and then stops cleanly with the interpreter.
_running = set()


class Server:
    """The server of one task of a cluster: serves its devices to every session of the
    cluster and runs their steps. `stop()` works (TF 1.x's did not)."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True, _bind_host="0.0.0.0"):
        if isinstance(server_or_cluster_def, ServerDef):
            server_def = server_or_cluster_def
            cluster = ClusterSpec(server_def.cluster)
            job_name = job_name if job_name is not None else (server_def.job_name or None)
            if task_index is None and server_def.job_name:
                task_index = server_def.task_index
            protocol = protocol if protocol is not None else (server_def.protocol or None)
        else:
            cluster = ClusterSpec(server_or_cluster_def)
        if not cluster:
            raise ValueError("The cluster must have at least one job.")
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError("Must specify an explicit `job_name`.")
            job_name = cluster.jobs[0]
        if task_index is None:
            indices = cluster.task_indices(job_name)
            if len(indices) != 1:
                raise ValueError("Must specify an explicit `task_index`.")
            task_index = indices[0]
        if protocol not in (None, "grpc"):
            raise ValueError("protocol %r is not supported (only 'grpc')" % protocol)
        self._cluster = cluster
        self._job = job_name
        self._task = task_index
        self._config = config
        settings = _native.runtime_settings()
        self._server = _native.Server.create(
            cluster._to_json(), job_name, int(task_index), bind_host=_bind_host,
            num_threads=settings["num_threads"], shared_memory=settings["shared_memory"],
            chunk_sockets=settings["chunk_sockets"],
            buffer_pool_mb=settings["buffer_pool_mb"],
            # TF 1.x programs name no directories: whoever starts the task lists them.
            allowed_directories=settings["allowed_directories"],
            # The server's default session config: its operation timeout applies to the
            # steps of every session on this server that set none.
            default_operation_timeout_ms=int(getattr(config, "operation_timeout_in_ms", 0)
                                             or 0),
            # TW_METRICS_PORT (tw launch sets it): the task's Prometheus endpoint.
            metrics_port=settings["metrics_port"])
        if start:
            self.start()

    @staticmethod
    def create_local_server(config=None, start=True):
        # One task on a port the OS chooses, reachable from this machine only.
        return Server({"localhost": ["localhost:0"]}, job_name="localhost", task_index=0,
                      config=config, start=start, _bind_host="127.0.0.1")

    def start(self):
        self._server.start()
        _running.add(self._server)

    def join(self):
        self._server.join()

    def stop(self):
        self._server.stop()
        _running.discard(self._server)

    def stop_cluster(self, timeout_secs=10.0):
        """Stops every task of the cluster, then this one (tensorweave's Server::StopCluster);
        UnavailableError names tasks that could not be reached."""
        self._server.stop_cluster(timeout_secs)

    @property
    def target(self):
        return self._server.target

    @property
    def metrics_address(self):
        """"host:port" of the task's Prometheus metrics endpoint, or "" without one (a
        tensorweave addition: TW_METRICS_PORT turns it on)."""
        return self._server.metrics_address

    @property
    def server_def(self):
        return ServerDef(cluster=self._cluster.as_cluster_def(), job_name=self._job,
                         task_index=int(self._task), protocol="grpc")


__all__ = ["ClusterDef", "ClusterSpec", "JobDef", "Server", "ServerDef", "errors"]
