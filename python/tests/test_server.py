"""ClusterSpec, Server and RunConfig: TF 1.x's API over the C++ Server and RunConfig."""

import gc
import json
import socket
import struct
import threading

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def test_cluster_spec_api():
    spec = tf.train.ClusterSpec({"ps": ["a:1"], "worker": {0: "b:1", 3: "c:1"}})
    assert spec.jobs == ["ps", "worker"]
    assert spec.num_tasks("worker") == 2
    assert spec.task_indices("worker") == [0, 3]
    assert spec.task_address("worker", 3) == "c:1"
    assert spec.job_tasks("worker") == ["b:1", None, None, "c:1"]
    assert spec.as_dict() == {"ps": ["a:1"], "worker": {0: "b:1", 3: "c:1"}}
    assert spec == tf.train.ClusterSpec(spec.as_dict())
    assert spec != tf.train.ClusterSpec({"ps": ["a:1"]})
    with pytest.raises(ValueError, match="No such job in cluster: 'chief'"):
        spec.num_tasks("chief")
    with pytest.raises(ValueError, match="No task with index 1 in job 'worker'"):
        spec.task_address("worker", 1)
    for lookup in (spec.task_indices, spec.job_tasks):
        with pytest.raises(ValueError, match="No such job in cluster: 'evaluator'"):
            lookup("evaluator")


def test_cluster_spec_is_validated_where_the_cpp_one_is():
    # One rule for Python and C++: job names and host:port addresses are checked when the
    # ClusterSpec is made, naming the job, the task and the text.
    with pytest.raises(ValueError, match='job "ps" task 1: Could not interpret "b:99999"'):
        tf.train.ClusterSpec({"ps": ["a:1", "b:99999"]})
    with pytest.raises(ValueError, match='job name "9lives" is invalid'):
        tf.train.ClusterSpec({"9lives": ["a:1"]})
    with pytest.raises(TypeError, match="must be a list or a dictionary"):
        tf.train.ClusterSpec({"ps": "a:1"})
    assert not tf.train.ClusterSpec(None)
    round_trip = tf.train.ClusterSpec(tf.train.ClusterSpec({"w": {2: "h:5"}}).as_cluster_def())
    assert round_trip.as_dict() == {"w": {2: "h:5"}}


def test_local_server_runs_steps_and_stops():
    server = tf.train.Server.create_local_server()
    assert server.target.startswith("grpc://localhost:")
    c = tf.constant("Hello")
    with tf.Session(server.target) as s:
        assert s.run(c) == b"Hello"
    joined = threading.Event()
    t = threading.Thread(target=lambda: (server.join(), joined.set()))
    t.start()
    server.stop()
    t.join(timeout=30)
    assert joined.is_set()  # stop() ends join(), unlike TF 1.x


def test_a_server_serves_without_a_reference_to_it():
    # As in TF 1.x: `Server(...).target` is enough; the server lives until the process ends
    # (or stop()).
    target = tf.train.Server.create_local_server().target
    gc.collect()
    with tf.Session(target) as s:
        assert s.run(tf.constant(3) * 2) == 6


def test_server_arguments_are_checked():
    with pytest.raises(ValueError, match="Must specify an explicit `job_name`."):
        tf.train.Server({"ps": ["localhost:0"], "worker": ["localhost:0"]}, start=False)
    with pytest.raises(ValueError, match="Must specify an explicit `task_index`."):
        tf.train.Server({"worker": ["localhost:0", "localhost:0"]}, start=False)
    with pytest.raises(tf.errors.InvalidArgumentError, match="ps"):
        tf.train.Server({"worker": ["localhost:0"]}, job_name="ps", task_index=0, start=False)


def test_a_variable_is_shared_by_two_sessions_on_one_server():
    server = tf.train.Server.create_local_server()
    v = tf.Variable(0, name="shared_counter")
    add = tf.assign_add(v, 1, use_locking=True)
    a = tf.Session(server.target)
    b = tf.Session(server.target)
    try:
        a.run(v.initializer)
        for _ in range(3):
            b.run(add)
        assert a.run(v) == 3
        # A session of its own process without a server does not see it.
        with tf.Session() as private:
            with pytest.raises(tf.errors.FailedPreconditionError):
                private.run(v)
    finally:
        a.close()
        b.close()
        server.stop()


def test_run_config_reads_tf_config(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": {"ps": ["p:1"], "worker": ["w0:1", "w1:1"], "chief": ["c:1"]},
        "task": {"type": "worker", "index": 1}}))
    for config in (tf.contrib.learn.RunConfig(), tf.estimator.RunConfig()):
        assert config.task_type == "worker" and config.task_id == 1
        assert config.cluster_spec.task_address("ps", 0) == "p:1"
        assert config.master == "grpc://w1:1"
        assert not config.is_chief
        assert config.num_ps_replicas == 1
        assert config.num_worker_replicas == 3
        assert config.evaluation_master == ""
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert resolver.task_type == "worker" and resolver.task_id == 1
    assert resolver.master() == "w1:1"
    assert resolver.cluster_spec().num_tasks("worker") == 2


def test_run_config_without_tf_config_is_local(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = tf.contrib.learn.RunConfig()
    assert config.task_type is None and config.task_id == 0
    assert not config.cluster_spec
    assert config.master == "" and config.is_chief
    assert config.num_ps_replicas == 0 and config.num_worker_replicas == 1


def test_a_bad_tf_config_names_the_field(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"ps": ["p:1"]}, "task": {"type": "ps", '
                                    '"index": 4}}')
    with pytest.raises(tf.errors.InvalidArgumentError, match='Task 4 was not defined in job "ps"'):
        tf.contrib.learn.RunConfig()


def test_isolated_sessions_keep_their_variables(tmp_path):
    server = tf.train.Server.create_local_server()
    v = tf.Variable(np.float32(1.0), name="iso")
    config = tf.ConfigProto(isolate_session_state=True)
    try:
        with tf.Session(server.target, config=config) as a:
            a.run(v.initializer)
            assert a.run(v) == 1.0
            with tf.Session(server.target) as shared:
                with pytest.raises(tf.errors.FailedPreconditionError):
                    shared.run(v)
    finally:
        server.stop()


def test_list_devices_and_reset_on_a_server():
    server = tf.train.Server.create_local_server()
    v = tf.Variable(1.0, name="to_reset")
    try:
        with tf.Session() as local:
            devices = local.list_devices()
            assert [d.device_type for d in devices] == ["CPU"]
        s = tf.Session(server.target)
        names = [d.name for d in s.list_devices()]
        assert names == ["/job:localhost/replica:0/task:0/device:CPU:0"]
        s.run(v.initializer)
        tf.Session.reset(server.target)
        with pytest.raises(tf.errors.OpError):  # the reset closed it on the master
            s.run(v)
        with tf.Session(server.target) as fresh:
            with pytest.raises(tf.errors.FailedPreconditionError):
                fresh.run(v)  # and the variable is gone
    finally:
        server.stop()


def test_a_servers_config_is_the_default_for_its_sessions():
    server = tf.train.Server.create_local_server(
        config=tf.ConfigProto(operation_timeout_in_ms=50))
    q = tf.FIFOQueue(1, [tf.int32])
    try:
        with tf.Session(server.target) as s:
            with pytest.raises(tf.errors.DeadlineExceededError,
                               match="Timed out waiting for notification: .* within 50ms"):
                s.run(q.dequeue())
    finally:
        server.stop()


def test_cluster_resolver_master_rules(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["w:1"]},
                                                "task": {"type": "worker", "index": 0}}))
    assert tf.distribute.cluster_resolver.TFConfigClusterResolver().master() == ""
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["w:1", "w:2"]},
                                                "task": {"type": "worker", "index": 1},
                                                "session_master": "grpc://m:9"}))
    assert tf.distribute.cluster_resolver.TFConfigClusterResolver().master() == "grpc://m:9"


def test_stop_cluster_stops_every_task(tmp_path):
    import socket
    ports = []
    for _ in range(2):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
    cluster = {"ps": ["127.0.0.1:%d" % ports[0]], "worker": ["127.0.0.1:%d" % ports[1]]}
    ps = tf.train.Server(cluster, job_name="ps", task_index=0, _bind_host="127.0.0.1")
    worker = tf.train.Server(cluster, job_name="worker", task_index=0, _bind_host="127.0.0.1")
    joined = threading.Event()
    t = threading.Thread(target=lambda: (ps.join(), joined.set()))
    t.start()
    worker.stop_cluster(timeout_secs=10)
    t.join(timeout=30)
    assert joined.is_set()  # the ps task's join() returned: the cluster finished by itself
    worker.join()  # the caller stopped too


def test_metrics_port_from_the_environment(monkeypatch):
    # TW_METRICS_PORT (tw launch sets it) gives a task's server a Prometheus endpoint; the
    # program itself names no port, as a TF 1.x program would not.
    import urllib.request
    assert tf.train.Server.create_local_server().metrics_address == ""
    monkeypatch.setenv("TW_METRICS_PORT", "0")
    server = tf.train.Server.create_local_server()
    address = server.metrics_address
    assert address.startswith("127.0.0.1:")
    with tf.Session(server.target) as s:
        s.run(tf.constant(1.0) + 1.0)
    with urllib.request.urlopen("http://%s/metrics" % address, timeout=10) as response:
        text = response.read().decode()
    assert 'tw_steps_total{tw_job="localhost",tw_task="0",code="OK"} 1\n' in text, text
    server.stop()


def listening_ports():
    """The TCP ports this process listens on (its sockets in /proc/self/fd, found in
    /proc/net/tcp and tcp6 in state LISTEN)."""
    import os
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            next(rows)
            for row in rows:
                fields = row.split()
                if fields[3] == "0A" and fields[9] in inodes:
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def chunk_socket_reply(port):
    """The first bytes a fetch of a missing chunk gets on 127.0.0.1:`port`: a chunk socket's
    error reply starts with its magic, "TWC1"; gRPC answers with HTTP/2 or closes."""
    header = b"\x12\x07missing"  # tw.proto.TensorChunk{key: "missing"}
    request = b"TWC1" + struct.pack("<II", 2, len(header)) + header
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        try:
            return s.recv(4)
        except ConnectionResetError:
            return b""


def test_chunk_sockets_from_the_environment(monkeypatch):
    # A server without TLS serves large tensors' chunks on its one port beside gRPC (its
    # chunk socket); TW_CHUNK_SOCKETS=0 keeps them in gRPC calls, as it does for tw server.
    before = listening_ports()
    server = tf.train.Server.create_local_server()
    port = int(server.target.rsplit(":", 1)[1])
    assert listening_ports() - before == {port}
    assert chunk_socket_reply(port) == b"TWC1"
    server.stop()
    assert listening_ports() == before
    monkeypatch.setenv("TW_CHUNK_SOCKETS", "0")
    server = tf.train.Server.create_local_server()
    port = int(server.target.rsplit(":", 1)[1])
    assert listening_ports() - before == {port}
    assert chunk_socket_reply(port) != b"TWC1"
    server.stop()


def test_runtime_settings_carry_the_launchers_restart_count(monkeypatch):
    from tensorweave import _native
    monkeypatch.setenv("TW_RESTART_COUNT", "3")
    assert _native.runtime_settings()["restart_count"] == 3
    monkeypatch.delenv("TW_RESTART_COUNT")
    assert _native.runtime_settings()["restart_count"] == 0
