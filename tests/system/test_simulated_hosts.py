"""Clusters whose tasks are on separate simulated hosts (tw_testing.simulated_hosts): each
task in a network namespace and a PID namespace of its own, so that only TCP between
addresses of those namespaces connects them. Skipped, saying why, where namespaces cannot be
made (they need root; CI runs as root)."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import BUILD
from tw_testing import simulated_hosts
from wordcount_corpus import make_corpus

WORDCOUNT = BUILD / "examples" / "wordcount"
PORT = 2222
TASKS = [("files", 0), ("reduce", 0), ("map", 0), ("map", 1)]  # host i runs TASKS[i]


def simulated(count, program, link_rate=None):
    """`count` simulated hosts for a test of `program`, skipping it (saying why) where either
    is missing; checks afterwards that nothing was left behind."""
    why_not = simulated_hosts.available()
    if why_not:
        pytest.skip(why_not)
    if not program.exists():
        pytest.skip("%s is not built" % program)
    with simulated_hosts.SimulatedHosts(count, link_rate=link_rate) as made:
        yield made
    assert simulated_hosts.namespaces(made.prefix) == [], "simulated hosts left behind"


@pytest.fixture
def hosts():
    yield from simulated(len(TASKS), WORDCOUNT)


def cluster(hosts):
    spec = {}
    for host, (job, index) in enumerate(TASKS):
        spec.setdefault(job, []).append("%s:%d" % (hosts.address(host), PORT))
    return spec


def start_task(hosts, host, list_file, log_dir):
    job, index = TASKS[host]
    env = dict(os.environ, TF_CONFIG=json.dumps(
        {"cluster": cluster(hosts), "task": {"type": job, "index": index}}))
    log = open(pathlib.Path(log_dir, "%s-%d.log" % (job, index)), "a")
    return subprocess.Popen(hosts.command(host, [str(WORDCOUNT), list_file]), env=env,
                            stdout=log, stderr=subprocess.STDOUT)


def wait_all(processes, timeout=60, grace=10):
    """The exit codes, as tw launch --success reduce:0 ends the job: reduce decides, and
    then the others have `grace` seconds to exit by themselves (None if they did not, and
    were killed)."""
    reduce = processes[TASKS.index(("reduce", 0))]
    reduce.wait(timeout=timeout)
    deadline = time.monotonic() + grace
    codes = []
    for p in processes:
        try:
            codes.append(p.wait(timeout=max(0.1, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            codes.append(None)
    return codes


def reduce_log(log_dir):
    return pathlib.Path(log_dir, "reduce-0.log").read_text()


def test_wordcount_with_every_task_on_its_own_host(hosts, tmp_path):
    list_file, gate, total = make_corpus(tmp_path, gate_at=7)
    gate.opened.set()
    try:
        processes = [start_task(hosts, h, list_file, tmp_path) for h in range(len(TASKS))]
        codes = wait_all(processes)
    finally:
        gate.close()
    log = reduce_log(tmp_path)
    assert codes == [0, 0, 0, 0], log
    assert "final total: %d" % total in log


def test_a_killed_host_restarted_loses_nothing(hosts, tmp_path):
    # The host of the map that waits at the gate (in the middle of its batch) dies, and comes
    # back; what its map held is handed out again.
    list_file, gate, total = make_corpus(tmp_path, gate_at=20)
    try:
        processes = [start_task(hosts, h, list_file, tmp_path) for h in range(len(TASKS))]
        assert gate.first_reader.wait(60), "no map opened the gate"
        # Each task is on a host of its own: network and PID namespaces of its own.
        def namespaces_of(pid):
            return tuple(os.readlink("/proc/%d/ns/%s" % (pid, kind)) for kind in ("net", "pid"))
        ours = namespaces_of(os.getpid())
        seen = set()
        for host in range(len(TASKS)):
            # The host's processes: `unshare`, in this PID namespace, and the task in its own.
            tasks = {namespaces_of(pid) for pid in hosts.pids(host)}
            tasks = {ns for ns in tasks if ns[1] != ours[1]}
            assert len(tasks) == 1 and ours[0] not in (t[0] for t in tasks), tasks
            seen |= tasks
        assert len(seen) == len(TASKS), seen
        victim = [h for h in range(len(TASKS)) if gate.reader_pid in hosts.pids(h)]
        assert len(victim) == 1 and TASKS[victim[0]][0] == "map", victim
        victim = victim[0]
        hosts.kill_host(victim)
        processes[victim].wait(timeout=30)
        # The task's process goes a moment after `unshare` (reaped by whoever inherits it).
        deadline = time.monotonic() + 10
        while hosts.pids(victim) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert hosts.pids(victim) == []
        processes[victim] = start_task(hosts, victim, list_file, tmp_path)
        gate.opened.set()
        codes = wait_all(processes)
    finally:
        gate.close()
    log = reduce_log(tmp_path)
    assert codes == [0, 0, 0, 0], log
    assert "final total: %d" % total in log
    assert "round 2: handing out" in log, log  # the dead host's files went out again


TW = BUILD / "tools" / "tw"
LARGE_TENSORS = pathlib.Path(__file__).parent / "programs" / "large_tensors.py"


@pytest.fixture
def two_hosts():
    yield from simulated(2, TW)


@pytest.mark.parametrize("firewall", [False, True], ids=["open", "only the task port open"])
def test_large_tensors_cross_hosts_bit_exact(two_hosts, tmp_path, firewall):
    # A worker on host 0 pushes and pulls a 20 MB tensor to and from a ps task on host 1.
    # Its chunks travel on the ps task's chunk socket, which shares the task port with gRPC:
    # a firewall that lets only the task port through changes nothing. Had a chunk not
    # reached the chunk socket, the worker would have said that it went in a gRPC call, and
    # the ps task's metrics would count PutChunk or RecvChunk calls. (The first push goes
    # before any RunGraph reply: the worker learns of the chunk socket from RegisterGraph's.)
    hosts = two_hosts
    metrics_port = PORT + 1
    if firewall:
        if shutil.which("iptables") is None:
            pytest.skip("iptables is not installed (scripts/setup.sh installs it)")
        hosts.accept_only(1, [PORT, metrics_port])
    cluster = {"ps": ["%s:%d" % (hosts.address(1), PORT)],
               "worker": ["%s:%d" % (hosts.address(0), PORT)]}
    env = dict(os.environ, TF_CONFIG=json.dumps({"cluster": cluster,
                                                 "task": {"type": "ps", "index": 0}}))
    ps_log = tmp_path / "ps.log"
    ps = subprocess.Popen(hosts.command(1, [str(TW), "server", "--metrics-port",
                                            str(metrics_port)]),
                          env=env, stdout=open(ps_log, "w"), stderr=subprocess.STDOUT)
    try:
        env["TF_CONFIG"] = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 0}})
        env["PYTHONPATH"] = str(BUILD / "python")
        worker = subprocess.run(hosts.command(0, [sys.executable, str(LARGE_TENSORS)]), env=env,
                                capture_output=True, text=True, timeout=120)
        scrape = "import urllib.request; print(urllib.request.urlopen(%r, timeout=10).read()" \
                 ".decode())" % ("http://%s:%d/metrics" % (hosts.address(1), metrics_port))
        metrics = subprocess.run(hosts.command(0, [sys.executable, "-c", scrape]),
                                 capture_output=True, text=True, timeout=60).stdout
    finally:
        hosts.kill_host(1)  # `unshare` passes no signal on to the ps task
        ps.wait(timeout=30)
    output = worker.stdout + worker.stderr + ps_log.read_text()
    assert worker.returncode == 0, output
    assert "bit exact" in worker.stdout, output
    ports = set(int(p) for p in re.findall(r"connection to port (\d+)", worker.stdout))
    fallback = "large tensors to and from %s travel in gRPC calls" % hosts.address(1)
    assert ports == {PORT}, output  # gRPC and the chunk socket on the one task port
    assert fallback not in worker.stderr, output
    assert "RunGraph" in metrics, metrics
    assert "PutChunk" not in metrics and "RecvChunk" not in metrics, metrics


MNIST_PS = BUILD / "examples" / "mnist_ps"


@pytest.fixture
def trainer_hosts(fashion_mnist):
    yield from simulated(3, MNIST_PS, link_rate="10gbit")


def start_trainer(hosts, host, job, index, flags, log, workers=2):
    """mnist_ps as task job:index on `host`: ps on host 0, worker i on host 1 + i."""
    worker_hosts = ",".join("%s:%d" % (hosts.address(1 + i), PORT) for i in range(workers))
    argv = [str(MNIST_PS), "--ps_hosts=%s:%d" % (hosts.address(0), PORT),
            "--worker_hosts=" + worker_hosts, "--job_name=" + job,
            "--task_index=%d" % index] + flags
    env = dict(os.environ)
    env.pop("TF_CONFIG", None)
    return subprocess.Popen(hosts.command(host, argv), env=env, stdout=open(log, "a"),
                            stderr=subprocess.STDOUT)


def test_parameter_server_training_across_hosts(trainer_hosts, tmp_path):
    hosts = trainer_hosts
    checkpoints = str(tmp_path / "checkpoints")
    flags = ["--max_steps=400", "--seed=1", "--checkpoint_dir=" + checkpoints]
    logs = [tmp_path / name for name in ("ps.log", "worker0.log", "worker1.log")]
    ps = start_trainer(hosts, 0, "ps", 0, flags, logs[0])
    workers = [start_trainer(hosts, 1 + i, "worker", i, flags, logs[1 + i]) for i in range(2)]
    codes = [w.wait(timeout=240) for w in workers] + [ps.wait(timeout=30)]
    chief = logs[1].read_text()
    assert codes == [0, 0, 0], chief + logs[2].read_text() + logs[0].read_text()
    accuracy = float(chief.rsplit("test accuracy: ", 1)[1].split()[0])
    assert accuracy > 0.7, chief
    # The other worker trained too, across its own link.
    local_steps = re.search(r"worker 1 done after (\d+) local steps", logs[2].read_text())
    assert local_steps and int(local_steps.group(1)) > 0, logs[2].read_text()


def test_a_killed_ps_host_is_recovered_from_its_checkpoint(trainer_hosts, tmp_path):
    hosts = trainer_hosts
    checkpoints = tmp_path / "checkpoints"
    flags = ["--max_steps=3000", "--batch_size=50", "--save_every=300", "--log_every=100",
             "--seed=1", "--checkpoint_dir=%s" % checkpoints]
    logs = [tmp_path / name for name in ("ps.log", "worker0.log")]
    ps = start_trainer(hosts, 0, "ps", 0, flags, logs[0], workers=1)
    chief = start_trainer(hosts, 1, "worker", 0, flags, logs[1], workers=1)
    # Kill the ps host once a checkpoint past the first exists, then bring it back.
    def latest_step():
        steps = [int(re.match(r"model\.ckpt-(\d+)\.index$", p.name).group(1))
                 for p in checkpoints.glob("model.ckpt-*.index")]
        return max(steps, default=-1)

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and latest_step() < 600:
        time.sleep(0.1)
    assert latest_step() >= 600, logs[1].read_text()
    hosts.kill_host(0)
    ps.wait(timeout=30)
    time.sleep(0.5)
    ps = start_trainer(hosts, 0, "ps", 0, flags, logs[0], workers=1)
    try:
        code = chief.wait(timeout=240)
    finally:
        ps.kill()
        ps.wait()
    log = logs[1].read_text()
    assert code == 0, log
    assert "restored the model from" in log, log
    assert "test accuracy: " in log, log


OPENSSL_CONFIG = """[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
[task]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth,clientAuth
subjectAltName = %s
"""


def make_certificates(directory, addresses, localhost=True):
    """A throwaway cluster CA and one task certificate naming `addresses` (IP SANs) and,
    with `localhost`, localhost (a task's sessions on its own server dial
    grpc://localhost:<port>, as docs/security.md says), made with the openssl command line;
    returns the paths of the CA, certificate and key."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed (scripts/setup.sh installs it)")
    config = directory / "openssl.cnf"
    names = ["DNS:localhost", "IP:127.0.0.1"] if localhost else []
    config.write_text(OPENSSL_CONFIG % ",".join(names + ["IP:" + a for a in addresses]))
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def run(*args):
        subprocess.run([openssl] + list(args), check=True, capture_output=True, cwd=directory)

    run("req", "-x509", "-config", str(config), "-extensions", "ca", *ec, "-keyout", "ca.key",
        "-out", "ca.pem", "-days", "2", "-subj", "/CN=simulated cluster CA")
    run("req", "-new", "-config", str(config), *ec, "-keyout", "task.key", "-out", "task.csr",
        "-subj", "/CN=task")
    run("x509", "-req", "-in", "task.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial",
        "2", "-days", "2", "-extfile", str(config), "-extensions", "task", "-out", "task.pem")
    return [str(directory / name) for name in ("ca.pem", "task.pem", "task.key")]


def test_parameter_server_training_across_hosts_over_mutual_tls(trainer_hosts, tmp_path):
    # Every connection between the hosts is mutual TLS, certificates checked against the
    # hosts' addresses; a task without a certificate is refused by the others.
    hosts = trainer_hosts
    ca, cert, key = make_certificates(tmp_path, [hosts.address(h) for h in range(3)])
    tls = ["--tls_ca=" + ca, "--tls_cert=" + cert, "--tls_key=" + key]
    flags = ["--max_steps=200", "--seed=1"]
    logs = [tmp_path / name for name in ("ps.log", "worker0.log", "worker1.log")]
    ps = start_trainer(hosts, 0, "ps", 0, flags + tls, logs[0])
    workers = [start_trainer(hosts, 1 + i, "worker", i, flags + tls, logs[1 + i])
               for i in range(2)]
    codes = [w.wait(timeout=240) for w in workers] + [ps.wait(timeout=30)]
    texts = [log.read_text() for log in logs]
    assert codes == [0, 0, 0], "".join(texts)
    for text in texts:
        assert "mutual TLS" in text, text  # each server's start-up line says how it listens
    assert float(texts[1].rsplit("test accuracy: ", 1)[1].split()[0]) > 0.6, texts[1]
    # From another host, the ps's port refuses a TLS client without a certificate and
    # serves one with a certificate of the cluster CA (HTTP/2's SETTINGS frame comes back).
    ps = start_trainer(hosts, 0, "ps", 0, flags + tls, logs[0])
    try:
        probe = [sys.executable, "-c", TLS_PROBE, hosts.address(0), str(PORT), ca]
        deadline = time.monotonic() + 30
        served = subprocess.run(hosts.command(1, probe + [cert, key]), capture_output=True,
                                text=True)
        while served.stdout.strip() != "served" and time.monotonic() < deadline:
            time.sleep(0.2)  # the ps may not listen yet
            served = subprocess.run(hosts.command(1, probe + [cert, key]), capture_output=True,
                                    text=True)
        refused = subprocess.run(hosts.command(1, probe), capture_output=True, text=True)
    finally:
        ps.kill()
        ps.wait()
    assert served.stdout.strip() == "served", served.stdout + served.stderr
    assert refused.stdout.strip() == "refused", refused.stdout + refused.stderr


def test_a_certificate_that_misses_a_name_fails_every_task_at_once(trainer_hosts, tmp_path):
    # The certificate names the hosts' addresses but not localhost, which the workers'
    # sessions on their own servers dial: a configuration that never works. Every worker
    # fails within seconds with a message saying what the certificate lacks, instead of
    # retrying for minutes; the ps then stops as its chief is gone.
    hosts = trainer_hosts
    ca, cert, key = make_certificates(tmp_path, [hosts.address(h) for h in range(3)],
                                      localhost=False)
    tls = ["--tls_ca=" + ca, "--tls_cert=" + cert, "--tls_key=" + key]
    flags = ["--max_steps=200", "--seed=1"] + tls
    logs = [tmp_path / name for name in ("ps.log", "worker0.log", "worker1.log")]
    ps = start_trainer(hosts, 0, "ps", 0, flags, logs[0])
    workers = [start_trainer(hosts, 1 + i, "worker", i, flags, logs[1 + i]) for i in range(2)]
    try:
        started = time.monotonic()
        codes = [w.wait(timeout=60) for w in workers]
        took = time.monotonic() - started
    finally:
        ps.kill()
        ps.wait()
    texts = [log.read_text() for log in logs[1:]]
    assert codes == [1, 1], "".join(texts)
    assert took < 30, took
    for text in texts:
        assert "Peer name localhost is not in peer certificate" in text, text
        assert "must name the address dialed" in text, text


# argv: HOST PORT CA [CERT KEY]. Prints "served" when the server answers an HTTP/2 preface
# over TLS with a frame, "refused" when the handshake or the first read fails.
TLS_PROBE = """
import socket, ssl, sys
host, port, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3]
context = ssl.create_default_context(cafile=ca)
context.set_alpn_protocols(["h2"])
if len(sys.argv) > 4:
    context.load_cert_chain(sys.argv[4], sys.argv[5])
try:
    with socket.create_connection((host, port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            tls.sendall(b"PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n" + bytes(9))
            print("served" if len(tls.recv(9)) == 9 else "refused")
except (ssl.SSLError, ConnectionError, OSError):
    print("refused")
"""
