#include "src/rpc/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "src/core/buffer_pool.h"

namespace tw::shm {
namespace {

// Every block starts with a header; the payload follows at kHeaderBytes (64-byte aligned).
constexpr uint64_t kMagic = 0x7477626c6f636b31;  // "twblock1"
constexpr size_t kHeaderBytes = 64;
struct BlockHeader {
  uint64_t magic;
  uint64_t block_id;            // random: a reopened fd number or a reused pid cannot pass for it
  std::atomic<uint64_t> state;  // ticket << 2 | Phase
};
static_assert(sizeof(BlockHeader) <= kHeaderBytes);
// The state word is shared between processes: it must not hide a lock.
static_assert(std::atomic<uint64_t>::is_always_lock_free);

enum Phase : uint64_t { kIdle = 0, kWritten = 1, kReleased = 2 };
constexpr uint64_t kMaxTicket = (uint64_t{1} << 62) - 1;
uint64_t StateOf(uint64_t ticket, Phase phase) { return ticket << 2 | phase; }

constexpr size_t kMaxOwnedBytes = size_t{1} << 30;   // this process's blocks
constexpr size_t kMaxMappedBytes = size_t{1} << 30;  // peers' blocks kept mapped

std::atomic<uint64_t> exported_count{0}, imported_count{0}, reclaimed_count{0}, opened_count{0};

uint64_t RandomId() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

// The key file: kKeyMagic, the key id, then kKeyBytes of key; nothing else.
constexpr uint64_t kKeyMagic = 0x7477736d6b657931;  // "twsmkey1"
constexpr size_t kKeyBytes = 32;
constexpr size_t kKeyFileBytes = 16 + kKeyBytes;

// This process's key, in a memfd peers on this host (as this user) read through /proc.
struct OwnKey {
  int fd = -1;
  uint64_t id = 0;
  std::string key;
};

// Created once; null when no memfd can be had (shared memory is then off).
const OwnKey* TheKey() {
  static const OwnKey* key = []() -> const OwnKey* {
    auto own = std::make_unique<OwnKey>();
    std::random_device rd;
    own->key.resize(kKeyBytes);
    for (size_t i = 0; i < kKeyBytes; i += 4) {
      const uint32_t r = rd();
      std::memcpy(own->key.data() + i, &r, 4);
    }
    own->id = RandomId();
    own->fd = memfd_create("tensorweave-key", MFD_CLOEXEC);
    if (own->fd < 0) return nullptr;
    char file[kKeyFileBytes];
    std::memcpy(file, &kKeyMagic, 8);
    std::memcpy(file + 8, &own->id, 8);
    std::memcpy(file + 16, own->key.data(), kKeyBytes);
    if (pwrite(own->fd, file, sizeof file, 0) != static_cast<ssize_t>(sizeof file)) {
      close(own->fd);
      return nullptr;
    }
    return own.release();
  }();
  return key;
}

// Equality that takes the same time wherever the first difference is.
bool SameKey(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  }
  return diff == 0;
}

std::string ProcFdPath(int64_t pid, int64_t fd) { return absl::StrCat("/proc/", pid, "/fd/", fd); }

// Whether a memfd of this process reopens through /proc/<getpid()>/fd as the same file
// (it would not where /proc belongs to another pid namespace).
bool ProcFdReopenWorks() {
  const int fd = memfd_create("tensorweave-probe", MFD_CLOEXEC);
  if (fd < 0) return false;
  const int again = open(ProcFdPath(getpid(), fd).c_str(), O_RDWR | O_CLOEXEC);
  struct stat a {
  }, b{};
  const bool same = again >= 0 && fstat(fd, &a) == 0 && fstat(again, &b) == 0 &&
                    a.st_dev == b.st_dev && a.st_ino == b.st_ino;
  if (again >= 0) close(again);
  close(fd);
  return same;
}

std::string ComputeHostIdentity() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  if (!(boot >> boot_id)) return "";
  struct stat ns {};
  if (stat("/proc/self/ns/pid", &ns) != 0) return "";
  if (!ProcFdReopenWorks()) return "";
  if (TheKey() == nullptr) return "";
  return absl::StrCat(boot_id, "/pidns:", ns.st_dev, ":", ns.st_ino, "/uid:", getuid());
}

// A block this process owns.
struct OwnedBlock {
  int fd = -1;
  char* base = nullptr;  // header, then `capacity` payload bytes
  size_t capacity = 0;
  uint64_t id = 0;
  uint64_t ticket = 0;
  bool in_flight = false;  // handed out and not yet released or taken back
  absl::Time handed_out;
  BlockHeader* header() const { return reinterpret_cast<BlockHeader*>(base); }
  ~OwnedBlock() {
    if (base != nullptr) munmap(base, kHeaderBytes + capacity);
    if (fd >= 0) close(fd);
  }
};

// This process's blocks. Blocks are destroyed only while not in flight, under the lock, so
// the one Acquire returns stays valid while its caller fills it.
class Owner {
 public:
  StatusOr<OwnedBlock*> Acquire(size_t n) {
    absl::MutexLock lock(&mu_);
    CollectLocked(absl::Now(), kUnclaimedAfter);
    OwnedBlock* best = nullptr;
    for (const auto& b : blocks_) {
      if (!b->in_flight && b->capacity >= n && (best == nullptr || b->capacity < best->capacity)) {
        best = b.get();
      }
    }
    // A much larger idle block would waste memory for as long as this transfer runs.
    if (best == nullptr || best->capacity > 2 * n) {
      // CreateLocked may drop idle blocks to make room, `best` among them.
      TW_ASSIGN_OR_RETURN(best, CreateLocked(n));
    }
    if (best->ticket == kMaxTicket) best->ticket = 0;
    ++best->ticket;
    best->in_flight = true;
    best->handed_out = absl::Now();
    return best;
  }

  void Reclaim(absl::Duration age) {
    absl::MutexLock lock(&mu_);
    CollectLocked(absl::Now(), age);
  }

  void Count(Stats* stats) {
    absl::MutexLock lock(&mu_);
    stats->blocks = blocks_.size();
    stats->block_bytes = owned_bytes_;
  }

 private:
  // Marks released blocks idle, and takes back those handed out more than `age` ago.
  void CollectLocked(absl::Time now, absl::Duration age) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const auto& b : blocks_) {
      if (!b->in_flight) continue;
      uint64_t written = StateOf(b->ticket, kWritten);
      const uint64_t state = b->header()->state.load(std::memory_order_acquire);
      if (state == StateOf(b->ticket, kReleased)) {
        b->in_flight = false;
      } else if (now - b->handed_out >= age) {
        // Either this wins and a late reader fails its own swap, or the reader released it.
        if (b->header()->state.compare_exchange_strong(written, StateOf(b->ticket, kIdle),
                                                       std::memory_order_acq_rel)) {
          reclaimed_count.fetch_add(1, std::memory_order_relaxed);
        }
        b->in_flight = false;
      }
    }
  }

  StatusOr<OwnedBlock*> CreateLocked(size_t n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t capacity =
        (BufferPool::BlockSize(n) + kHeaderBytes + page - 1) / page * page - kHeaderBytes;
    // Make room by dropping idle blocks, the largest first.
    while (owned_bytes_ + capacity > kMaxOwnedBytes) {
      auto victim = blocks_.end();
      for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
        if (!(*it)->in_flight &&
            (victim == blocks_.end() || (*it)->capacity > (*victim)->capacity)) {
          victim = it;
        }
      }
      if (victim == blocks_.end()) {
        return errors::ResourceExhausted("shared-memory blocks in flight hold ", owned_bytes_,
                                         " bytes, the limit");
      }
      owned_bytes_ -= (*victim)->capacity;
      blocks_.erase(victim);
    }
    auto block = std::make_unique<OwnedBlock>();
    block->fd = memfd_create("tensorweave-tensor", MFD_CLOEXEC);
    if (block->fd < 0) return errors::ResourceExhausted("memfd_create: ", std::strerror(errno));
    const size_t total = kHeaderBytes + capacity;
    if (ftruncate(block->fd, static_cast<off_t>(total)) != 0) {
      return errors::ResourceExhausted("sizing a shared-memory block: ", std::strerror(errno));
    }
    // Populated now: the pages are touched once, not at every transfer.
    void* base =
        mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, block->fd, 0);
    if (base == MAP_FAILED) {
      return errors::ResourceExhausted("mapping a shared-memory block: ", std::strerror(errno));
    }
    block->base = static_cast<char*>(base);
    block->capacity = capacity;
    block->id = RandomId();
    BlockHeader* h = block->header();
    h->magic = kMagic;
    h->block_id = block->id;
    h->state.store(StateOf(0, kIdle), std::memory_order_release);
    owned_bytes_ += capacity;
    blocks_.push_back(std::move(block));
    return blocks_.back().get();
  }

  absl::Mutex mu_;
  std::vector<std::unique_ptr<OwnedBlock>> blocks_ ABSL_GUARDED_BY(mu_);
  size_t owned_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

Owner& TheOwner() {
  static auto* owner = new Owner();
  return *owner;
}

// A peer's block, mapped into this process until evicted and no longer in use.
struct Mapping {
  char* base = nullptr;
  size_t size = 0;
  Mapping(char* b, size_t s) : base(b), size(s) {}
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { munmap(base, size); }
};

// Peers' blocks this process has mapped, by (pid, fd, block id), least recently used first
// out when they exceed kMaxMappedBytes.
class Mappings {
 public:
  StatusOr<std::shared_ptr<Mapping>> Get(const proto::SharedMemoryRef& ref) {
    const Key key{ref.pid(), ref.fd(), ref.block_id()};
    {
      absl::MutexLock lock(&mu_);
      if (auto it = entries_.find(key); it != entries_.end()) {
        it->second.last_use = ++clock_;
        return it->second.mapping;
      }
    }
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Mapping> mapping, Open(ref));
    absl::MutexLock lock(&mu_);
    auto [it, inserted] = entries_.try_emplace(key, Entry{mapping, ++clock_});
    if (!inserted) return it->second.mapping;  // another thread mapped it meanwhile
    mapped_bytes_ += mapping->size;
    EvictLocked();
    return mapping;
  }

 private:
  using Key = std::tuple<int64_t, int64_t, uint64_t>;
  struct Entry {
    std::shared_ptr<Mapping> mapping;
    uint64_t last_use;
  };

  static StatusOr<std::shared_ptr<Mapping>> Open(const proto::SharedMemoryRef& ref) {
    const std::string path = ProcFdPath(ref.pid(), ref.fd());
    opened_count.fetch_add(1, std::memory_order_relaxed);
    // Whatever the sender says that fd is: never block on it, or become its controlling
    // terminal.
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
      return errors::Unavailable("cannot open the sender's shared-memory block ", path, ": ",
                                 std::strerror(errno));
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size < static_cast<off_t>(kHeaderBytes)) {
      close(fd);
      return errors::Unavailable(path, " is not a shared-memory block");
    }
    const size_t size = static_cast<size_t>(st.st_size);
    void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    close(fd);
    if (base == MAP_FAILED) {
      return errors::Unavailable("cannot map the sender's shared-memory block ", path, ": ",
                                 std::strerror(errno));
    }
    auto mapping = std::make_shared<Mapping>(static_cast<char*>(base), size);
    const auto* h = reinterpret_cast<const BlockHeader*>(mapping->base);
    if (h->magic != kMagic || h->block_id != ref.block_id()) {
      return errors::Unavailable(path, " is not shared-memory block ", ref.block_id(),
                                 " (the sender closed it, or exited)");
    }
    return mapping;
  }

  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    while (mapped_bytes_ > kMaxMappedBytes && entries_.size() > 1) {
      auto oldest = entries_.begin();
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->second.last_use < oldest->second.last_use) oldest = it;
      }
      mapped_bytes_ -= oldest->second.mapping->size;
      entries_.erase(oldest);  // unmapped once no Import still copies from it
    }
  }

  absl::Mutex mu_;
  std::map<Key, Entry> entries_ ABSL_GUARDED_BY(mu_);
  size_t mapped_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t clock_ ABSL_GUARDED_BY(mu_) = 0;
};

Mappings& TheMappings() {
  static auto* mappings = new Mappings();
  return *mappings;
}

// Peers' keys, by where they were read; a restarted peer (same pid and fd) has a new id.
class PeerKeys {
 public:
  std::string Get(const proto::SharedMemoryKeyRef& where) {
    const Key k{where.pid(), where.fd(), where.key_id()};
    {
      absl::MutexLock lock(&mu_);
      if (auto it = keys_.find(k); it != keys_.end()) return it->second;
    }
    std::string key = Read(where);
    if (key.empty()) return key;
    absl::MutexLock lock(&mu_);
    if (keys_.size() >= kMaxPeers) keys_.clear();  // peers come and go; a few re-reads
    keys_.emplace(k, key);
    return key;
  }

 private:
  using Key = std::tuple<int64_t, int64_t, uint64_t>;
  static constexpr size_t kMaxPeers = 4096;

  static std::string Read(const proto::SharedMemoryKeyRef& where) {
    if (where.pid() <= 0 || where.fd() < 0) return "";
    const int fd = open(ProcFdPath(where.pid(), where.fd()).c_str(),
                        O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return "";
    struct stat st {};
    char file[kKeyFileBytes];
    const bool whole = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                       st.st_size == static_cast<off_t>(kKeyFileBytes) &&
                       pread(fd, file, sizeof file, 0) == static_cast<ssize_t>(sizeof file);
    close(fd);
    uint64_t magic = 0, id = 0;
    if (whole) {
      std::memcpy(&magic, file, 8);
      std::memcpy(&id, file + 8, 8);
    }
    if (!whole || magic != kKeyMagic || id != where.key_id()) return "";
    return std::string(file + 16, kKeyBytes);
  }

  absl::Mutex mu_;
  std::map<Key, std::string> keys_ ABSL_GUARDED_BY(mu_);
};

PeerKeys& ThePeerKeys() {
  static auto* keys = new PeerKeys();
  return *keys;
}

}  // namespace

// The identity is fixed once, the first time it is needed or when TurnOff() comes first;
// after that it is read without a lock on every message.
namespace {
absl::Mutex identity_mu(absl::kConstInit);
std::atomic<const std::string*> host_identity{nullptr};
}  // namespace

const std::string& HostIdentity() {
  if (const std::string* id = host_identity.load(std::memory_order_acquire)) return *id;
  absl::MutexLock lock(&identity_mu);
  if (host_identity.load(std::memory_order_relaxed) == nullptr) {
    host_identity.store(new std::string(ComputeHostIdentity()), std::memory_order_release);
  }
  return *host_identity.load(std::memory_order_relaxed);
}

Status TurnOff() {
  absl::MutexLock lock(&identity_mu);
  const std::string* id = host_identity.load(std::memory_order_relaxed);
  if (id == nullptr) {
    host_identity.store(new std::string(), std::memory_order_release);
    return OkStatus();
  }
  if (id->empty()) return OkStatus();
  return errors::FailedPrecondition(
      "shared memory cannot be turned off: this process already uses it (it is a process-wide "
      "setting; turn it off on the process's first server, before any tensor is sent)");
}

bool SameHost(const std::string& peer_identity) {
  return !peer_identity.empty() && peer_identity == HostIdentity();
}

proto::SharedMemoryKeyRef KeyLocation() {
  proto::SharedMemoryKeyRef where;
  const OwnKey* own = TheKey();
  if (HostIdentity().empty() || own == nullptr) return where;
  where.set_pid(getpid());
  where.set_fd(own->fd);
  where.set_key_id(own->id);
  return where;
}

std::string PeerKey(const proto::SharedMemoryKeyRef& where) {
  if (HostIdentity().empty()) return "";
  const OwnKey* own = TheKey();
  if (own != nullptr && where.pid() == getpid() && where.fd() == own->fd &&
      where.key_id() == own->id) {
    return own->key;  // a server of this process
  }
  return ThePeerKeys().Get(where);
}

Status Export(const void* src, size_t n, const std::string& receiver_key,
              proto::SharedMemoryRef* ref) {
  if (HostIdentity().empty()) return errors::ResourceExhausted("shared memory is off");
  TW_ASSIGN_OR_RETURN(OwnedBlock * block, TheOwner().Acquire(n));
  if (n > 0) std::memcpy(block->base + kHeaderBytes, src, n);
  block->header()->state.store(StateOf(block->ticket, kWritten), std::memory_order_release);
  ref->set_pid(getpid());
  ref->set_fd(block->fd);
  ref->set_block_id(block->id);
  ref->set_ticket(block->ticket);
  ref->set_length(n);
  ref->set_key(receiver_key);
  exported_count.fetch_add(1, std::memory_order_relaxed);
  return OkStatus();
}

Status Import(const proto::SharedMemoryRef& ref, void* dst, size_t n) {
  if (ref.length() != n) {
    return errors::InvalidArgument("shared-memory reference of ", ref.length(),
                                   " bytes for a tensor of ", n, " bytes");
  }
  if (ref.pid() <= 0 || ref.fd() < 0 || ref.ticket() == 0 || ref.ticket() > kMaxTicket) {
    return errors::InvalidArgument("malformed shared-memory reference (pid ", ref.pid(), ", fd ",
                                   ref.fd(), ", ticket ", ref.ticket(), ")");
  }
  if (HostIdentity().empty()) {
    return errors::Unavailable(
        "a shared-memory reference reached a process with shared memory off");
  }
  TW_ASSIGN_OR_RETURN(std::shared_ptr<Mapping> mapping, TheMappings().Get(ref));
  if (n > mapping->size - kHeaderBytes) {
    return errors::InvalidArgument("shared-memory reference of ", n, " bytes into a block of ",
                                   mapping->size - kHeaderBytes);
  }
  auto* h = reinterpret_cast<BlockHeader*>(mapping->base);
  uint64_t written = StateOf(ref.ticket(), kWritten);
  if (h->state.load(std::memory_order_acquire) != written) {
    return errors::DataLoss("shared-memory block ", ref.block_id(), " of process ", ref.pid(),
                            " no longer holds use ", ref.ticket(), " (read twice, or taken back)");
  }
  if (n > 0) std::memcpy(dst, mapping->base + kHeaderBytes, n);
  if (!h->state.compare_exchange_strong(written, StateOf(ref.ticket(), kReleased),
                                        std::memory_order_acq_rel)) {
    return errors::DataLoss("shared-memory block ", ref.block_id(), " of process ", ref.pid(),
                            " was taken back while it was read");
  }
  imported_count.fetch_add(1, std::memory_order_relaxed);
  return OkStatus();
}

Status CheckOffered(const proto::SharedMemoryRef& ref) {
  const OwnKey* own = TheKey();
  if (HostIdentity().empty() || own == nullptr || !SameKey(ref.key(), own->key)) {
    return errors::InvalidArgument(
        "shared-memory reference (pid ", ref.pid(), ", fd ", ref.fd(),
        ") was not offered to this task: it does not carry this task's shared-memory key, "
        "which only a process on this host running as this task's user can read");
  }
  return OkStatus();
}

Status ImportFromRequest(const proto::SharedMemoryRef& ref, void* dst, size_t n) {
  // Before anything else: the request may come from anyone who can reach the port.
  TW_RETURN_IF_ERROR(CheckOffered(ref));
  return Import(ref, dst, n);
}

Stats GetStats() {
  Stats stats;
  stats.exported = exported_count.load(std::memory_order_relaxed);
  stats.imported = imported_count.load(std::memory_order_relaxed);
  stats.reclaimed = reclaimed_count.load(std::memory_order_relaxed);
  stats.opened = opened_count.load(std::memory_order_relaxed);
  TheOwner().Count(&stats);
  return stats;
}

void ReclaimUnclaimed(absl::Duration age) { TheOwner().Reclaim(age); }

}  // namespace tw::shm
