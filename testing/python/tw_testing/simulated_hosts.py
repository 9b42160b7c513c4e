#!/usr/bin/python3
"""Simulated hosts on this machine: each host is a network namespace of its own, joined to
the others through a bridge, with an address that exists only inside these namespaces;
programs run in it in a PID namespace of their own, so that tensorweave's shared-memory path
sees another host (its host identity includes the PID namespace) and only TCP connects them.

    testing/python/tw_testing/simulated_hosts.py up --hosts N [--prefix P] [--link-rate RATE]
    testing/python/tw_testing/simulated_hosts.py run --prefix P HOST -- COMMAND...
    testing/python/tw_testing/simulated_hosts.py down [--prefix P]

Host i (0-based) is the namespace P-hI with the address 10.77.0.(i+1)/24 on its eth0;
the bridge lives in the namespace P-br. --link-rate (tc's rates: 10gbit, 500mbit) shapes
each host's outgoing traffic with a token bucket (tc tbf), both ways of every link.
`down` removes what `up` made with that prefix, and kills the processes still in it.

Tests and benchmarks import it (`from tw_testing import simulated_hosts`, with testing/python
on PYTHONPATH) and use the SimulatedHosts class, a context manager that removes everything it
made, also when the code inside it fails or is interrupted. Needs root (or
CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2; available() says why not, when it cannot.
"""

import argparse
import os
import signal
import subprocess
import sys

ADDRESS_FORMAT = "10.77.0.%d"
DEFAULT_PREFIX = "twsim"


def _ip(*args, check=True):
    return subprocess.run(["ip"] + list(args), capture_output=True, text=True, check=check)


def _netns(namespace, *command, check=True):
    return subprocess.run(["ip", "netns", "exec", namespace] + list(command),
                          capture_output=True, text=True, check=check)


def available():
    """None when simulated hosts can be made here, else why not (for a skip message)."""
    if os.geteuid() != 0:
        return "simulated hosts need root (network namespaces, veth pairs and tc)"
    probe = "twsim-probe-%d" % os.getpid()
    try:
        made = _ip("netns", "add", probe, check=False)
    except FileNotFoundError:
        return "simulated hosts need iproute2's ip command"
    if made.returncode != 0:
        return "cannot make a network namespace: " + made.stderr.strip()
    _ip("netns", "del", probe, check=False)
    try:
        pid_namespace = subprocess.run(["unshare", "--pid", "--fork", "true"],
                                       capture_output=True, text=True)
    except FileNotFoundError:
        return "simulated hosts need util-linux's unshare command"
    if pid_namespace.returncode != 0:
        return "cannot make a PID namespace: " + pid_namespace.stderr.strip()
    return None


def namespaces(prefix):
    """The namespaces with this prefix that exist now."""
    listed = _ip("netns", "list", check=False).stdout.split("\n")
    names = [line.split()[0] for line in listed if line.strip()]
    return [n for n in names if n == prefix + "-br" or n.startswith(prefix + "-h")]


class SimulatedHosts:
    """N simulated hosts; `with SimulatedHosts(3) as hosts: hosts.address(0)`."""

    def __init__(self, count, prefix=None, link_rate=None, host_link_rates=None):
        """`link_rate` shapes every host's link; `host_link_rates` ({host: rate}) overrides
        it for some hosts (a slower link, or one standing for a link shared with others)."""
        if count < 1 or count > 200:
            raise ValueError("between 1 and 200 simulated hosts, not %d" % count)
        self.count = count
        self.prefix = prefix or "%s%d" % (DEFAULT_PREFIX, os.getpid())
        self.link_rate = link_rate
        self.host_link_rates = dict(host_link_rates or {})

    def namespace(self, host):
        return "%s-h%d" % (self.prefix, host)

    def address(self, host):
        return ADDRESS_FORMAT % (host + 1)

    def up(self):
        bridge = self.prefix + "-br"
        try:
            _ip("netns", "add", bridge)
            _netns(bridge, "ip", "link", "add", "br0", "type", "bridge")
            _netns(bridge, "ip", "link", "set", "br0", "up")
            for host in range(self.count):
                ns = self.namespace(host)
                _ip("netns", "add", ns)
                _netns(ns, "ip", "link", "set", "lo", "up")
                # Made in the host's namespace, one end moved to the bridge's.
                _netns(ns, "ip", "link", "add", "eth0", "type", "veth", "peer", "name",
                       "v%d" % host)
                _netns(ns, "ip", "link", "set", "v%d" % host, "netns", bridge)
                _netns(ns, "ip", "addr", "add", self.address(host) + "/24", "dev", "eth0")
                _netns(ns, "ip", "link", "set", "eth0", "up")
                _netns(bridge, "ip", "link", "set", "v%d" % host, "master", "br0")
                _netns(bridge, "ip", "link", "set", "v%d" % host, "up")
                rate = self.host_link_rates.get(host, self.link_rate)
                if rate:
                    for where, dev in ((ns, "eth0"), (bridge, "v%d" % host)):
                        _netns(where, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate",
                               rate, "burst", "1mb", "latency", "50ms")
        except subprocess.CalledProcessError as e:
            self.down()
            raise RuntimeError("cannot make simulated host: %s: %s" %
                               (" ".join(e.cmd), (e.stderr or "").strip())) from e
        return self

    def command(self, host, argv):
        """`argv` run on `host`: in its network namespace and a PID namespace of its own."""
        return ["ip", "netns", "exec", self.namespace(host), "unshare", "--pid", "--fork",
                "--kill-child"] + list(argv)

    def pids(self, host):
        out = _ip("netns", "pids", self.namespace(host), check=False).stdout.split()
        return [int(p) for p in out]

    def accept_only(self, host, ports):
        """A firewall on `host` that refuses (with a TCP reset) every incoming connection
        but those to `ports`, as a Kubernetes NetworkPolicy that opens only the task port.
        Needs iptables; removed with the host."""
        ns = self.namespace(host)
        try:
            for port in ports:
                _netns(ns, "iptables", "-A", "INPUT", "-p", "tcp", "--dport", str(port),
                       "-j", "ACCEPT")
            _netns(ns, "iptables", "-A", "INPUT", "-p", "tcp", "--syn", "-j", "REJECT",
                   "--reject-with", "tcp-reset")
        except FileNotFoundError as e:
            raise RuntimeError("a firewall on a simulated host needs iptables "
                               "(scripts/setup.sh installs it)") from e
        except subprocess.CalledProcessError as e:
            raise RuntimeError("cannot set a firewall on simulated host %d: %s" %
                               (host, (e.stderr or "").strip())) from e

    def kill_host(self, host):
        """Kills every process on `host` with SIGKILL, as a host that loses power."""
        for pid in self.pids(host):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def down(self):
        remove(self.prefix)

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()
        return False


def remove(prefix):
    """Removes the namespaces of `prefix`, killing what still runs in them (a veth pair
    goes with its namespace)."""
    for ns in namespaces(prefix):
        for pid in _ip("netns", "pids", ns, check=False).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        _ip("netns", "del", ns, check=False)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="make the hosts")
    up.add_argument("--hosts", type=int, required=True)
    up.add_argument("--prefix", default=DEFAULT_PREFIX)
    up.add_argument("--link-rate", default=None)
    run = sub.add_parser("run", help="run a command on a host")
    run.add_argument("--prefix", default=DEFAULT_PREFIX)
    run.add_argument("host", type=int)
    run.add_argument("argv", nargs=argparse.REMAINDER)
    down = sub.add_parser("down", help="remove the hosts")
    down.add_argument("--prefix", default=DEFAULT_PREFIX)
    args = parser.parse_args(argv)
    why_not = available()
    if why_not:
        print("simulated_hosts: " + why_not, file=sys.stderr)
        return 1
    if args.command == "up":
        try:
            hosts = SimulatedHosts(args.hosts, args.prefix, args.link_rate).up()
        except (RuntimeError, ValueError) as e:
            print("simulated_hosts: %s" % e, file=sys.stderr)
            return 1
        for host in range(args.hosts):
            print("%s %s" % (hosts.namespace(host), hosts.address(host)))
        return 0
    if args.command == "down":
        remove(args.prefix)
        return 0
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        print("simulated_hosts: run needs a command after --", file=sys.stderr)
        return 2
    hosts = SimulatedHosts(args.host + 1, args.prefix)
    os.execvp("ip", hosts.command(args.host, argv))
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
