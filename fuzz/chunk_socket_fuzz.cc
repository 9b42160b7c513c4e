// Fuzzes the chunk socket server (src/rpc/chunk_socket.h) with the bytes a peer sends on one
// connection: any byte stream must get well-formed replies, in order, one per request the
// server could read, and then an orderly end, never a crash or a hang. A fetch that succeeds
// must carry exactly the offered tensor's bytes.
//
// Each input is what a client writes on a new connection (a socket pair handed to the
// server as the task's port would hand it over), then it closes its sending side. The
// store offers a 1000-byte tensor at (step 1, "offered") for every input, so that fetches
// can succeed; puts may name anything.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "src/rpc/chunk_socket.h"
#include "src/rpc/tensor_chunks.h"

namespace {

constexpr size_t kFrameBytes = 12;
constexpr size_t kOfferedBytes = 1000;

uint32_t U32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// Reads exactly `n` bytes; false at the end of the stream.
bool ReadExactly(int fd, void* dst, size_t n) {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t got = recv(fd, p, n, 0);
    if (got < 0 && errno == EINTR) continue;  // libFuzzer's timer signal
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static tw::ChunkStore* store = new tw::ChunkStore();
  static tw::ChunkSocketServer* server = new tw::ChunkSocketServer(store);
  tw::Tensor offered(tw::DT_UINT8, tw::TensorShape({static_cast<int64_t>(kOfferedBytes)}));
  for (size_t i = 0; i < kOfferedBytes; ++i) {
    static_cast<uint8_t*>(offered.raw_data())[i] = static_cast<uint8_t>(i * 7 + 1);
  }
  store->Offer(1, "offered", offered);

  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return 0;
  server->Adopt(fds[1], "fuzz");
  std::thread writer([fd = fds[0], data, size] {
    size_t sent = 0;
    while (sent < size) {
      const ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // the server closed after an error
      sent += static_cast<size_t>(n);
    }
    shutdown(fd, SHUT_WR);
  });

  // The requests the server can read, in order, each answered before the next is read.
  size_t at = 0;
  for (;;) {
    if (at + kFrameBytes > size) break;  // no whole frame: the server ends without a reply
    const uint32_t magic = U32(data + at);
    const uint32_t op = U32(data + at + 4);
    const uint32_t header_size = U32(data + at + 8);
    at += kFrameBytes;
    tw::proto::TensorChunk chunk;
    bool well_formed = magic == U32(reinterpret_cast<const uint8_t*>(tw::kChunkSocketMagic)) &&
                       (op == 1 || op == 2) && header_size <= (64u << 10);
    if (well_formed) {
      if (at + header_size > size) break;  // stops mid-header: no reply
      well_formed = chunk.ParseFromArray(data + at, static_cast<int>(header_size));
      at += header_size;
    }
    if (well_formed && op == 1) {
      // A put's bytes: when they are not all there, the server may answer or not.
      if (chunk.length() > size - at) break;
      at += chunk.length();
    }
    uint8_t frame[kFrameBytes];
    if (!ReadExactly(fds[0], frame, kFrameBytes)) {
      Check(well_formed && op == 1);  // only a put whose bytes broke off goes unanswered
      break;
    }
    Check(U32(frame) == U32(reinterpret_cast<const uint8_t*>(tw::kChunkSocketMagic)));
    const uint32_t code = U32(frame + 4);
    const uint32_t message_size = U32(frame + 8);
    Check(code <= 16 && message_size <= 4096);
    std::string message(message_size, '\0');
    Check(ReadExactly(fds[0], message.data(), message_size));
    Check((code == 0) == message.empty());
    if (code != 0) break;  // the server closes the connection after an error
    Check(well_formed);
    if (op == 2) {
      // A fetch that succeeded: the offered tensor's bytes [offset, offset + length).
      Check(chunk.step_id() == 1 && chunk.key() == "offered");
      Check(chunk.offset() + chunk.length() <= kOfferedBytes);
      std::string bytes(chunk.length(), '\0');
      Check(ReadExactly(fds[0], bytes.data(), bytes.size()));
      Check(std::memcmp(bytes.data(), static_cast<const char*>(offered.raw_data()) + chunk.offset(),
                        bytes.size()) == 0);
    }
  }
  // Then the end of the stream (after at most the rest of an error's drain).
  char rest[4096];
  for (ssize_t n; (n = recv(fds[0], rest, sizeof(rest), 0)) > 0 || (n < 0 && errno == EINTR);) {
  }
  writer.join();
  close(fds[0]);
  // The connection's thread ends now; waiting for it keeps each input's work (and memory)
  // within the input, as the leak check expects.
  for (int i = 0; i < 5000 && server->OpenConnections() > 0; ++i) usleep(1000);
  return 0;
}
