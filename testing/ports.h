// Test helpers for TCP ports: one on 127.0.0.1 that is free right now (bound to port 0,
// then released), for clusters whose addresses must be known before their servers start;
// the ports a process listens on, and the connections to a port.
#ifndef TENSORWEAVE_TESTING_PORTS_H_
#define TENSORWEAVE_TESTING_PORTS_H_

#include <vector>

namespace tw::testing {

// Never the same port twice in one process (the kernel may hand a released port out
// again). -1 when no socket could be bound. Another process can still take the port
// before the caller binds it.
int PickUnusedPort();

// The TCP ports process `pid` listens on, ascending (its sockets in /proc/<pid>/fd matched
// against /proc/net/tcp and tcp6 of this network namespace).
std::vector<int> ListeningPorts(int pid);

// The TCP connections of this network namespace that are established to `port` (one per
// connection: its client side).
int ConnectionsTo(int port);

// A plain TCP connection to 127.0.0.1:`port`, whose receives time out after
// `timeout_seconds`; -1 with errno set (ECONNREFUSED: nothing listens) when none is made.
int ConnectToLoopback(int port, int timeout_seconds = 5);

// Whether this host has an IPv6 loopback address (::1 can be bound).
bool HasIpv6Loopback();

}  // namespace tw::testing

#endif  // TENSORWEAVE_TESTING_PORTS_H_
