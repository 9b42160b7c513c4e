#include "src/rpc/grpc_util.h"

#include <malloc.h>

#include <mutex>

#include "src/rpc/grpc_tls.h"

namespace tw {

void KeepFreedMemory() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
  });
}

std::shared_ptr<grpc::Channel> NewChannel(const std::string& address, const TlsOptions& tls,
                                          int connection) {
  grpc::ChannelArguments args;
  // Part of the key under which gRPC shares subchannels (connections) between channels.
  if (connection != 0) args.SetInt("tw.connection", connection);
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  // Tasks start in any order: retry a peer that is not listening yet after 100 ms, not
  // gRPC's default second (which stacks with CreateSession's own backoff).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  // The chunk connections (connection != 0) keep gRPC's default: only this channel and the
  // servers were measured with the larger window.
  if (connection == 0) args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, kStreamWindowBytes);
  if (tls.enabled() && !tls.server_name.empty()) args.SetSslTargetNameOverride(tls.server_name);
  return grpc::CreateCustomChannel(address, NewChannelCredentials(tls), args);
}

}  // namespace tw
