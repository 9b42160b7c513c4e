// Parsing of task addresses, "host:port".
#ifndef TENSORWEAVE_SRC_CLUSTER_HOST_PORT_H_
#define TENSORWEAVE_SRC_CLUSTER_HOST_PORT_H_

#include <string>
#include <string_view>

#include "tensorweave/status.h"

namespace tw {

struct HostPort {
  std::string host;  // without brackets for IPv6 ("::1")
  int port = 0;
  bool bracketed = false;  // written as "[v6]:port"
};

// Splits at the last ':' ("[::1]:2222" and raw "::1:2222" both give host "::1"). The host
// must be non-empty without '/' or spaces; the port a decimal number in 0-65535.
// InvalidArgument: `Could not interpret "<addr>" as a host-port pair: <reason>`.
StatusOr<HostPort> ParseHostPort(std::string_view address);

// "host:port", with an IPv6 host ("::1", one containing ':') in brackets ("[::1]:2222"),
// as gRPC and every address parser here expect. A host already in brackets is kept.
std::string JoinHostPort(std::string_view host, int port);

// `host` without the brackets an IPv6 literal may be written in ("[::1]" gives "::1"), as
// the socket calls want it.
std::string UnbracketedHost(std::string_view host);

// Whether a bind host means every address of the machine: "", "0.0.0.0", "::" or "[::]".
bool IsWildcardHost(std::string_view host);

// True when `name` matches [A-Za-z][A-Za-z0-9_]*, the rule for job names.
bool IsValidJobName(std::string_view name);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_CLUSTER_HOST_PORT_H_
