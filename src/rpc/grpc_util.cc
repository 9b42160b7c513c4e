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

std::shared_ptr<grpc::Channel> NewChannel(const std::string& address, const TlsOptions& tls) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  if (tls.enabled() && !tls.server_name.empty()) args.SetSslTargetNameOverride(tls.server_name);
  return grpc::CreateCustomChannel(address, NewChannelCredentials(tls), args);
}

}  // namespace tw
