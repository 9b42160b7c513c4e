// Same-host tensor transfer through shared memory.
//
// Tasks of one cluster often share a machine (every test, `tw launch`, a ps next to its
// workers). Between them a tensor need not cross the TCP stack: the sender copies its bytes
// into a block of shared memory it owns (a memfd, mapped once and reused), the message
// carries a SharedMemoryRef instead of the bytes, and the receiver maps the block through
// /proc/<pid>/fd/<fd> (mapped once per block and cached), copies the bytes into its tensor
// and releases the block. On the 2-core machines this runs on, a loopback gRPC transfer of
// 1 MB costs about 1 ms of CPU in kernel copies, wake-ups and gRPC framing; two memcpys cost
// a tenth of that (docs/performance.md).
//
// Who may use it: a receiver says in its request which host it is on (HostIdentity: kernel
// boot, pid namespace and uid, the three things that decide whether it can open the
// sender's /proc/<pid>/fd entries). A sender puts a tensor in shared memory only when the
// receiver's identity equals its own; otherwise, or when a block cannot be had, the bytes
// travel in the gRPC message as before. ServerOptions.shared_memory = false (`tw server` and
// RunConfig take it from TW_SHARED_MEMORY=0) turns the path off for the whole process
// through TurnOff() (HostIdentity() is then empty, so nobody sends it shared memory and it
// sends none).
//
// Who may make a process open anything: a reference in a *request* comes from whoever can
// reach the server's port, and the host identity in it is a string anyone can copy. A
// server that opened /proc/<pid>/fd/<fd> for any such reference would let every client probe
// which fds the task (or another process of its user) has open, and open and map them. So
// each process keeps a random key in a memfd of its own; its replies say where it is
// (KeyLocation), a caller on the same host running as the same user reads it there
// (PeerKey: the very access shared memory needs anyway) and puts it in every reference it
// sends that process. ImportFromRequest refuses a reference without the key with
// InvalidArgument before touching the file system. References in *replies* come from a
// server the caller dialed, and are trusted as the rest of its reply is (Import).
//
// A block's life: the sender owns it and hands it out for one transfer at a time (a ticket
// numbers each use). Its header holds an atomic state word; the receiver moves it from
// "written" to "released" after copying, and the sender reuses released blocks. A block
// nobody released within kUnclaimedAfter (the receiver failed or gave up) is taken back by
// the sender; both moves are compare-and-swaps on the same word, so a receiver that loses
// that race learns it (DataLoss) instead of returning bytes that were being overwritten.
#ifndef TENSORWEAVE_SRC_RPC_SHARED_MEMORY_H_
#define TENSORWEAVE_SRC_RPC_SHARED_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "tensorweave/protobuf/worker.pb.h"
#include "tensorweave/status.h"

namespace tw::shm {

// Tensors smaller than this travel inline: their gRPC cost is small, and the block, the
// reference and the release would cost about as much.
constexpr size_t kMinSharedBytes = size_t{128} << 10;

// A block not released this long after it was handed out is taken back by its sender.
constexpr absl::Duration kUnclaimedAfter = absl::Seconds(60);

// This process's host identity, or "" when shared memory is off (TurnOff(), or memfds
// cannot be created and reopened through /proc here). Computed once. Thread-safe.
const std::string& HostIdentity();

// Turns shared memory off for this process, for good: HostIdentity() is "" from now on.
// OK when it is off already; FailedPrecondition when the identity was computed and is not
// empty (a message of this process may have offered shared memory already, so turning it
// off now could break a transfer in flight). Thread-safe.
Status TurnOff();

// Whether a peer that reported `peer_identity` can read this process's blocks (and this
// process the peer's): both identities are known and equal.
bool SameHost(const std::string& peer_identity);

// Where this process's key can be read, for its replies; pid 0 when shared memory is off.
proto::SharedMemoryKeyRef KeyLocation();

// The key of the peer whose reply carried `where`, read through /proc/<pid>/fd/<fd> (non-
// blocking, only a regular file of the key's exact size and magic) and cached; "" when it
// cannot be read (another host or user, the peer exited). Only for a location taken from
// the reply of a server this process dialed, never from a request.
std::string PeerKey(const proto::SharedMemoryKeyRef& where);

// Copies `n` bytes from `src` into a block of this process and describes it in `ref`, with
// `receiver_key` (PeerKey of the receiver; empty in replies). ResourceExhausted when no
// block can be had (memory limit, memfd failure): the caller then sends the bytes inline.
Status Export(const void* src, size_t n, const std::string& receiver_key,
              proto::SharedMemoryRef* ref);

// Copies the bytes `ref` describes into `dst` (`n` bytes, which must equal ref.length) and
// releases the block. For refs in replies. The ref still comes from the network, so
// everything is checked: InvalidArgument for a malformed ref, Unavailable when the block
// cannot be opened (another host, the sender exited), DataLoss when the block was taken
// back or reused before the copy finished.
Status Import(const proto::SharedMemoryRef& ref, void* dst, size_t n);

// For refs in requests: InvalidArgument, without touching the file system, unless the ref
// carries this process's key (so its sender could read this process's /proc entries, and
// offered the block to this process).
Status CheckOffered(const proto::SharedMemoryRef& ref);
// CheckOffered, then Import.
Status ImportFromRequest(const proto::SharedMemoryRef& ref, void* dst, size_t n);

// Counters of this process, for tests and benchmarks.
struct Stats {
  uint64_t exported = 0;     // blocks handed out
  uint64_t imported = 0;     // blocks read and released
  uint64_t blocks = 0;       // blocks this process owns now
  uint64_t block_bytes = 0;  // their total size
  uint64_t reclaimed = 0;    // blocks taken back unreleased
  uint64_t opened = 0;       // peers' blocks opened through /proc (once each, then cached)
};
Stats GetStats();

// For tests: takes back every block handed out at least `age` ago and not yet released,
// as the sender does by itself after kUnclaimedAfter.
void ReclaimUnclaimed(absl::Duration age);

}  // namespace tw::shm

#endif  // TENSORWEAVE_SRC_RPC_SHARED_MEMORY_H_
