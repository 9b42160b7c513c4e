#!/usr/bin/python3
"""The TCP path between simulated hosts (tw_testing.simulated_hosts): ps tasks (`tw server`)
on hosts 1..N with an iperf3 server on host 1, bench/tcp_path_bench on host 0 as the worker
task, over a bridge whose links are shaped with tc tbf (default 10gbit).

    sudo PYTHONPATH=testing/python bench/between_hosts_bench.py [--build build]
        [--link-rate 10gbit] [--ps-tasks N] [--ps-link-rate RATE] [-- BENCH ARGS]

Prints tcp_path_bench's tables: push/pull against iperf3 between the same namespaces, in
turns; with --ps-tasks 2 or more, also a variable partitioned over the ps tasks against the
whole variable on one; and the tiny step against the raw round trip. --ps-link-rate gives
the ps hosts slower links than the worker's: a ps link at half the rate stands for one that
two workers share, the case where partitioning a variable over ps tasks pays. Needs root; removes the
hosts it made, also when interrupted.
"""

import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
try:
    from tw_testing import simulated_hosts
except ImportError:
    sys.exit("between_hosts_bench: needs testing/python on PYTHONPATH (tw_testing)")

PS_PORT, WORKER_PORT, IPERF3_PORT = 2222, 2223, 5201


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--link-rate", default="10gbit",
                        help="tc rate of every link, or 'none' for unshaped veth links")
    parser.add_argument("--ps-tasks", type=int, default=1, choices=range(1, 9))
    parser.add_argument("--ps-link-rate", default=None, help="tc rate of the ps hosts' links")
    parser.add_argument("bench_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    why_not = simulated_hosts.available()
    if why_not:
        print("between_hosts_bench: " + why_not, file=sys.stderr)
        return 1
    build = pathlib.Path(args.build).resolve()
    tw, bench = build / "tools" / "tw", build / "bench" / "tcp_path_bench"
    for program in (tw, bench, pathlib.Path("/usr/bin/iperf3")):
        if not program.exists():
            print("between_hosts_bench: %s is missing" % program, file=sys.stderr)
            return 1
    # SIGTERM (timeout(1), a CI's cancel) unwinds like Ctrl-C, so the hosts are removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rate = None if args.link_rate == "none" else args.link_rate
    bench_args = args.bench_args[1:] if args.bench_args[:1] == ["--"] else args.bench_args
    ps_rates = {1 + i: args.ps_link_rate for i in range(args.ps_tasks)} if args.ps_link_rate else {}
    with simulated_hosts.SimulatedHosts(1 + args.ps_tasks, link_rate=rate,
                                        host_link_rates=ps_rates) as hosts:
        ps = ["%s:%d" % (hosts.address(1 + i), PS_PORT) for i in range(args.ps_tasks)]
        worker = "%s:%d" % (hosts.address(0), WORKER_PORT)
        servers = [
            subprocess.Popen(hosts.command(1, ["/usr/bin/iperf3", "-s", "-B", hosts.address(1),
                                               "-p", str(IPERF3_PORT)]),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        for i in range(args.ps_tasks):
            tf_config = json.dumps({"cluster": {"ps": ps, "worker": [worker]},
                                    "task": {"type": "ps", "index": i}})
            servers.append(subprocess.Popen(hosts.command(1 + i, [str(tw), "server"]),
                                            env=dict(os.environ, TF_CONFIG=tf_config),
                                            stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL))
        try:
            time.sleep(0.5)  # iperf3 has no readiness signal; the bench waits for the ps
            print("Link rate: %s (ps hosts: %s); ps on %s, worker on %s\n" %
                  (rate or "unshaped", args.ps_link_rate or "the same", ", ".join(ps), worker))
            done = subprocess.run(hosts.command(0, [
                str(bench), "--ps", ",".join(ps), "--worker", worker,
                "--iperf3", "%s:%d" % (hosts.address(1), IPERF3_PORT)] + bench_args))
            return done.returncode
        finally:
            for server in servers:
                server.kill()
                server.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
