// The controller's durable state: key-value tables and id counters in one SQLite file in WAL
// mode (or a mode for network file systems, store_mode.h), written by group commit so that many concurrent submitters share one fsync.
// On-disk format, durability guarantees and the commit design: docs/store-format.md.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/latency_histogram.h"
#include "common/status.h"
#include "common/write_fence.h"
#include "store/mutex.h"
#include "store/sqlite_util.h"
#include "store/store_mode.h"

namespace lockstep::store {

// The schema version this build writes, kept in the file's user_version. Files with a larger
// version are refused; see docs/store-format.md for the history.
inline constexpr std::int64_t kSchemaVersion = 1;
// The file's application_id: "LKST" in ASCII, so `file(1)` and tools can tell a store apart.
inline constexpr std::int64_t kApplicationId = 0x4C4B5354;

struct StoreOptions {
  // The SQLite file; its directory must exist. The file is created when missing, with "-wal" and
  // "-shm" files beside it while open. Open makes them private to this process's user (0600)
  // and takes read and write for group and others off the directory (private_files.h).
  std::string path;
  // true: synchronous=FULL in WAL mode, every commit is fsync'd before it is acknowledged.
  // false: no fsync at all; acknowledged writes survive a crash of the process but not of the
  // machine. Only for tests and benchmarks that say so.
  bool sync = true;
  // How long the committer may wait to gather a batch. It waits only when the previous commit
  // carried several calls (their callers tend to come straight back), and at most this long; a
  // lone caller never waits. Zero: never wait, commit whatever is queued.
  std::chrono::microseconds max_batch_delay{2000};
  // Records (or deleted keys, or counter reservations) per transaction at most. One call is
  // never split: a call larger than this commits alone. Must be at least 1.
  std::size_t max_batch = 4096;
  // How long a write or read waits for a lock held by another process using the same file
  // before failing with Unavailable.
  std::chrono::milliseconds busy_timeout{5000};
  // Journaling and locking (store_mode.h); ResolveStoreMode picks it for a directory.
  StoreMode mode = StoreMode::kWal;
  // When set, every transaction checks it before BEGIN and again before COMMIT, and fails with
  // FailedPrecondition once it is closed; the store then refuses every later write (crash-only:
  // a replica that lost its lease must not write). Not owned; must outlive the store.
  const WriteFence* fence = nullptr;
  // The SQLite VFS, the store's environment interface (leveldb's Env); empty: SQLite's default
  // ("unix"). Tests pass FaultInjectionVfs (fault_vfs.h) to simulate power loss.
  std::string vfs;
};

// A record of a table: key and an opaque value (the controller stores JSON). Table and key are
// any bytes except NUL; the table name must not be empty. The value is any bytes. The three
// together must fit SQLite's row limit (SQLITE_MAX_LENGTH, 10^9 bytes by default).
struct Record {
  std::string table;
  std::string key;
  std::string value;
};

// A page of one table for Store::ScanPage: keys from `from` (inclusive; empty: the first) up to
// `to` (exclusive; empty: the table's end), in key order, at most `limit` records, and, when
// `value_contains` is not empty, only records whose value contains those bytes: SQLite applies
// the filter while it walks the table, so rows it rejects are never copied out. The next page
// starts at the last key returned + "\x01" (no key holds NUL: that is the next possible key).
struct KeyRange {
  std::string from;
  std::string to;
  std::size_t limit = 1024;
  std::string value_contains;
};

namespace internal {
struct WriteRequest;  // one call waiting for the committer (store.cc)
}  // namespace internal

// A write queued by Store::PutAsync: Wait() blocks until it is durable (or failed) and returns
// its outcome; later calls return the same. Writes are committed in the order they were queued,
// so a caller that queues under its own lock fixes the order of its writes without waiting for
// the disk under that lock. Dropping a PendingWrite does not cancel the write.
class PendingWrite {
 public:
  PendingWrite() = default;
  Status Wait();

 private:
  friend class Store;
  explicit PendingWrite(Status done) : status_(std::move(done)) {}
  explicit PendingWrite(std::shared_ptr<internal::WriteRequest> request)
      : request_(std::move(request)) {}
  std::shared_ptr<internal::WriteRequest> request_;
  Status status_;
};

// Durable key-value tables over SQLite in WAL mode.
//
// Thread-safety: all methods may be called from any number of threads at once. A single
// committer thread, owned by the Store, groups concurrent Put/Delete/AllocateIds calls into one
// transaction and wakes each caller when its writes are durable. Reads use their own connection
// and see every acknowledged write.
//
// Ownership: Open returns the only owner. Destroying the Store drains queued writes, joins the
// committer and closes the file; no call may be in progress or begin once destruction starts.
//
// Errors: a failed write is reported to every caller of its batch and nothing of the batch is
// written, except after an I/O error during the commit itself, when the batch may or may not be
// on disk. After an I/O error, a full disk or corruption the store refuses all further writes
// (with the original error): reopen it to recover. A call with bad input fails alone.
class Store {
 public:
  static Result<std::unique_ptr<Store>> Open(const StoreOptions& options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Inserts or replaces the records, atomically. Durable when it returns ok. Within one call a
  // later record with the same table and key wins. An empty vector returns ok at once.
  Status Put(std::vector<Record> records);
  // Put without waiting: checks the records and queues them (no I/O), and returns the write to
  // wait on. A bad record or a closed store gives a PendingWrite that is already failed.
  PendingWrite PutAsync(std::vector<Record> records);
  // Removes the keys from the table, atomically; missing keys are not an error.
  Status Delete(std::string table, std::vector<std::string> keys);
  // Atomically reserves `count` (>= 1) consecutive ids from the durable counter `name` and
  // returns the first; a new counter's first id is 1. Durable before it returns, so an id is
  // never handed out twice, even across crashes (a crash may skip ids, never repeat them).
  Result<std::uint64_t> AllocateIds(const std::string& name, std::uint64_t count);

  // Every record of a table ordered by key (byte-wise), for recovery at start.
  Result<std::vector<Record>> Scan(const std::string& table) const;
  // One page of a table (KeyRange): memory bounded by the page, not the table, and the read
  // lock held for one page at a time. A table larger than memory is read page by page.
  Result<std::vector<Record>> ScanPage(const std::string& table, const KeyRange& range) const;
  // The table's greatest key, or nullopt when the table is empty.
  Result<std::optional<std::string>> LastKey(const std::string& table) const;
  // The value of one key, or nullopt when absent.
  Result<std::optional<std::string>> Get(const std::string& table, const std::string& key) const;

  struct Stats {
    std::uint64_t commits;  // transactions committed
    std::uint64_t records;  // records written, keys deleted and counters advanced, all commits
  };
  Stats stats() const;
  // How long each committed transaction took, from BEGIN to the end of COMMIT (its fsync).
  const LatencyHistogram& commit_latency() const { return commit_latency_; }

 private:
  using Request = internal::WriteRequest;

  Store(const StoreOptions& options, internal::Db writer, internal::Db reader);
  Status PrepareStatements();

  // Queues `request`, wakes the committer and waits until the request is done.
  Status Submit(const std::shared_ptr<Request>& request) LOCKSTEP_EXCLUDES(mu_);
  // Queues `request` and wakes the committer; fails when the store is closing or broken.
  Status Enqueue(std::shared_ptr<Request> request) LOCKSTEP_EXCLUDES(mu_);
  void CommitterLoop() LOCKSTEP_EXCLUDES(mu_);
  // Waits up to max_batch_delay for `expected` queued requests (see StoreOptions).
  void GatherLocked(std::size_t expected) LOCKSTEP_REQUIRES(mu_);
  // Writes the batch in one transaction (committer thread only). On an SQLite error rolls back
  // and returns it for the whole batch; a request's own error (a counter overflow) is left in
  // that request's status and the rest of the batch commits.
  Status CommitBatch(const std::vector<std::shared_ptr<Request>>& batch);
  Status ApplyPut(const Request& request);
  Status ApplyDelete(const Request& request);
  Status ApplyAllocate(Request* request);
  // FailedPrecondition when options_.fence is set and closed.
  Status CheckFence(std::string_view when) const;

  const StoreOptions options_;

  Mutex mu_;
  CondVar work_cv_;  // signalled when a request is queued or the store closes
  std::deque<std::shared_ptr<Request>> queue_ LOCKSTEP_GUARDED_BY(mu_);
  std::size_t queued_weight_ LOCKSTEP_GUARDED_BY(mu_) = 0;  // rows the queued requests touch
  // While the committer gathers a batch: the queue length at which it wants waking.
  static constexpr std::size_t kNotGathering = static_cast<std::size_t>(-1);
  std::size_t gather_target_ LOCKSTEP_GUARDED_BY(mu_) = kNotGathering;
  bool closing_ LOCKSTEP_GUARDED_BY(mu_) = false;
  Status fatal_error_ LOCKSTEP_GUARDED_BY(mu_);  // set after an I/O error or corruption

  std::size_t max_row_bytes_ = 0;  // SQLite's length limit; set by Open, then read-only

  std::atomic<std::uint64_t> commits_{0};
  LatencyHistogram commit_latency_;
  std::atomic<std::uint64_t> records_{0};

  // The write connection and its statements: used only by the committer thread (and by Open
  // before the thread starts). Statements are declared after their connection so that they are
  // finalized first.
  internal::Db writer_;
  internal::Stmt begin_, commit_, rollback_, put_, delete_, counter_get_, counter_set_;

  // The read connection and its statements; Scan and Get are const but use them. In the modes
  // with exclusive locking there is no reader: reads use the writer's connection (read_db_), and
  // the committer holds read_mu_ while it commits.
  mutable Mutex read_mu_;
  internal::Db reader_ LOCKSTEP_GUARDED_BY(read_mu_);
  sqlite3* read_db_ LOCKSTEP_GUARDED_BY(read_mu_) = nullptr;
  internal::Stmt get_ LOCKSTEP_GUARDED_BY(read_mu_);
  internal::Stmt scan_ LOCKSTEP_GUARDED_BY(read_mu_);

  std::thread committer_;  // started last, once everything above is set up
};

}  // namespace lockstep::store
