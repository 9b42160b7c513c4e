"""A real Prometheus (Debian's package) scrapes a training cluster that `tw launch` runs:
every task's metrics endpoint, found from tw launch's start-up line, then the series are
read back through Prometheus' HTTP query API. Skipped, saying why, where Prometheus or the
Fashion-MNIST data is missing (scripts/setup.sh installs both)."""

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from conftest import launched_training

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(port, expression):
    """The instant vector of `expression`: [(labels, value)]."""
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (
        port, urllib.parse.urlencode({"query": expression}))
    with urllib.request.urlopen(url, timeout=5) as response:
        body = json.load(response)
    assert body["status"] == "success", body
    return [(r["metric"], float(r["value"][1])) for r in body["data"]["result"]]


def test_prometheus_scrapes_every_task_of_a_launched_cluster(tw_tool, tmp_path):
    if not os.path.exists(PROMETHEUS):
        pytest.skip("prometheus is not installed (scripts/setup.sh installs it)")
    with launched_training(tw_tool) as targets:
        port = free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\n"
            "scrape_configs:\n  - job_name: tw\n    static_configs:\n"
            "      - targets: [%s]\n" % ", ".join('"%s"' % t for t in targets.values()))
        prometheus = subprocess.Popen(
            [PROMETHEUS, "--config.file=%s" % config, "--storage.tsdb.path=%s" % (tmp_path / "data"),
             "--web.listen-address=127.0.0.1:%d" % port, "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "w"))
        try:
            def steps():
                try:
                    return sum(v for _, v in query(port, 'tw_steps_total{code="OK"}'))
                except OSError:
                    return 0  # not answering yet
            def scrapes_of_the_chief():
                # Rates need two samples in their window.
                found = query(port, 'count_over_time(tw_step_seconds_count{tw_job="worker",'
                                    'tw_task="0"}[10s])')
                return found[0][1] if found else 0
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and (steps() < 100 or len(query(port, "up == 1")) < 3
                                                   or scrapes_of_the_chief() < 2):
                time.sleep(0.5)
            up = query(port, "up")
            assert sorted(m["instance"] for m, v in up if v == 1) == sorted(targets.values()), up

            # Each task's series carry its job and task, and say sensible things.
            workers = query(port, 'sum by (tw_task) (tw_steps_total{code="OK",tw_job="worker"})')
            assert {m["tw_task"] for m, v in workers if v > 0} == {"0", "1"}, workers
            graph_runs = query(port, 'tw_rpc_server_handled_total{tw_job="ps",'
                                     'method="WorkerService/RunGraph",code="OK"}')
            assert graph_runs and graph_runs[0][1] > 0, graph_runs
            # The ps holds the model's variables: 784*256 + 256 + 256*10 + 10 floats, and
            # Adagrad's accumulator of each, at least.
            variable_bytes = query(port, 'sum(tw_variable_bytes{tw_job="ps"})')
            assert variable_bytes and variable_bytes[0][1] >= 2 * 203530 * 4, variable_bytes
            memory = query(port, "process_resident_memory_bytes")
            assert len(memory) == 3 and all(v > 10e6 for _, v in memory), memory
            latency = query(port, 'histogram_quantile(0.5, rate(tw_step_seconds_bucket'
                                  '{tw_job="worker",tw_task="0"}[10s]))')
            assert latency and 0 < latency[0][1] < 1, latency
            sent = query(port, 'sum(tw_tensor_bytes_sent_total{tw_job="ps"})')
            assert sent and sent[0][1] > 0, sent
        finally:
            prometheus.terminate()
            prometheus.wait(timeout=30)
