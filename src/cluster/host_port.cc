#include "src/cluster/host_port.h"

#include "absl/strings/ascii.h"

namespace tw {
namespace {

Status BadAddress(std::string_view address, std::string_view reason) {
  return errors::InvalidArgument("Could not interpret \"", address,
                                 "\" as a host-port pair: ", reason);
}

}  // namespace

StatusOr<HostPort> ParseHostPort(std::string_view address) {
  HostPort result;
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return BadAddress(address, "no \":port\"");
  std::string_view host = address.substr(0, colon);
  const std::string_view port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    result.bracketed = true;
  }
  if (host.empty()) return BadAddress(address, "empty host");
  for (char c : host) {
    if (c == '/' || c == '[' || c == ']' || absl::ascii_isspace(static_cast<unsigned char>(c)) ||
        absl::ascii_iscntrl(static_cast<unsigned char>(c))) {
      return BadAddress(address, "the host contains '" + std::string(1, c) + "'");
    }
  }
  if (port.empty() || port.size() > 5) {
    return BadAddress(address, "the port must be a number in 0-65535");
  }
  int value = 0;
  for (char c : port) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return BadAddress(address, "the port must be a number in 0-65535");
    }
    value = value * 10 + (c - '0');
  }
  if (value > 65535) return BadAddress(address, "the port must be a number in 0-65535");
  result.host = std::string(host);
  result.port = value;
  return result;
}

std::string UnbracketedHost(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::string(host);
}

bool IsWildcardHost(std::string_view host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
}

bool IsValidJobName(std::string_view name) {
  if (name.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::string JoinHostPort(std::string_view host, int port) {
  const bool v6 = host.find(':') != std::string_view::npos && !host.starts_with("[");
  std::string out;
  if (v6) out += '[';
  out += host;
  if (v6) out += ']';
  out += ':';
  out += std::to_string(port);
  return out;
}

}  // namespace tw
