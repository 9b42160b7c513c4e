// Test helper: a TCP port on 127.0.0.1 that is free right now (bound to port 0, then
// released), for clusters whose addresses must be known before their servers start.
#ifndef TENSORWEAVE_TESTING_PORTS_H_
#define TENSORWEAVE_TESTING_PORTS_H_

namespace tw::testing {

// Never the same port twice in one process (the kernel may hand a released port out
// again). -1 when no socket could be bound. Another process can still take the port
// before the caller binds it.
int PickUnusedPort();

}  // namespace tw::testing

#endif  // TENSORWEAVE_TESTING_PORTS_H_
