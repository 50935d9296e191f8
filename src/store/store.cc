#include "store/store.h"

#include <fmt/format.h>

#include <filesystem>
#include <limits>
#include <system_error>
#include <utility>

#include "store/private_files.h"
#include "store/schema.h"

namespace lockstep::store {

using internal::BindBlob;
using internal::BindText;
using internal::ColumnBytes;
using internal::SqliteError;

// One call waiting for the committer, shared by the queue and its caller (PendingWrite). Between being
// queued and `done`, the committer alone touches the other fields; the caller reads them after
// it sees `done` under done_mu, which orders the two.
namespace internal {
struct WriteRequest {
  enum class Kind { kPut, kDelete, kAllocate };

  explicit WriteRequest(Kind k) : kind(k) {}

  // Rows the request touches, for max_batch and stats.
  std::size_t weight() const {
    switch (kind) {
      case Kind::kPut:
        return records.size();
      case Kind::kDelete:
        return keys.size();
      case Kind::kAllocate:
        return 1;
    }
    return 1;
  }

  const Kind kind;
  std::vector<Record> records;    // kPut
  std::string name;               // kDelete: the table; kAllocate: the counter
  std::vector<std::string> keys;  // kDelete
  std::uint64_t count = 0;        // kAllocate: ids wanted
  std::uint64_t first_id = 0;     // kAllocate: the answer, written by the committer

  Status status;  // the call's outcome

  // Completion has its own mutex so that waking a batch's callers never holds up the queue.
  Mutex done_mu;
  bool done LOCKSTEP_GUARDED_BY(done_mu) = false;
  CondVar done_cv;  // signalled once `done`
};
}  // namespace internal

namespace {

constexpr std::uint64_t kMaxCounter = std::numeric_limits<std::int64_t>::max();  // SQLite INTEGER

// Table and counter names must be non-empty; keys may be empty. None may hold NUL, which SQLite
// TEXT functions and the sqlite3 CLI would cut short.
Status CheckName(std::string_view what, const std::string& name, bool may_be_empty) {
  if (name.empty() && !may_be_empty) return InvalidArgument(fmt::format("{} is empty", what));
  if (name.find('\0') != std::string::npos) {
    return InvalidArgument(fmt::format("{} contains a NUL byte", what));
  }
  return Status::Ok();
}

// A row (table, key and value, plus the record header) must fit SQLite's length limit.
Status CheckSize(std::size_t index, const Record& record, std::size_t max_row_bytes) {
  const std::size_t bytes = record.table.size() + record.key.size() + record.value.size() + 64;
  if (bytes <= max_row_bytes) return Status::Ok();
  return InvalidArgument(fmt::format("Put: record {}: {} bytes exceed SQLite's row limit of {}",
                                     index, bytes, max_row_bytes));
}

// A failed bind (out of memory) fails the batch, like any SQLite error.
Status CheckBind(int rc, sqlite3* db, const std::string& path) {
  return rc == SQLITE_OK ? Status::Ok() : SqliteError(path, db, rc, "bind");
}

Status CheckDirectory(const std::string& path) {
  if (path.empty()) return InvalidArgument("store path is empty");
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return NotFound(fmt::format("{}: directory '{}' does not exist", path, dir.string()));
  }
  return Status::Ok();
}

bool IsFatal(const Status& status) {
  return status.code() == StatusCode::kIoError || status.code() == StatusCode::kFailedPrecondition;
}

}  // namespace

Result<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  LOCKSTEP_RETURN_IF_ERROR(CheckDirectory(options.path));
  if (options.max_batch < 1) return InvalidArgument("StoreOptions.max_batch must be at least 1");
  const std::string& path = options.path;
  LOCKSTEP_RETURN_IF_ERROR(MakeStoreFilesPrivate(path));
  Result<internal::Db> writer = internal::OpenConnection(
      path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, options.vfs, options.busy_timeout);
  if (!writer.ok()) return writer.status();
  LOCKSTEP_RETURN_IF_ERROR(
      internal::InitializeSchema(writer->get(), path, options.sync, options.mode));
  internal::Db reader;
  if (options.mode == StoreMode::kWal) {
    // Reading a WAL file needs write access to its -shm index, hence READWRITE plus query_only.
    Result<internal::Db> opened =
        internal::OpenConnection(path, SQLITE_OPEN_READWRITE, options.vfs, options.busy_timeout);
    if (!opened.ok()) return opened.status();
    LOCKSTEP_RETURN_IF_ERROR(internal::Exec(opened->get(), path, "PRAGMA query_only = 1"));
    reader = std::move(*opened);
  }

  std::unique_ptr<Store> store(new Store(options, std::move(*writer), std::move(reader)));
  store->max_row_bytes_ =
      static_cast<std::size_t>(sqlite3_limit(store->writer_.get(), SQLITE_LIMIT_LENGTH, -1));
  LOCKSTEP_RETURN_IF_ERROR(store->PrepareStatements());
  store->committer_ = std::thread(&Store::CommitterLoop, store.get());
  return store;
}

Store::Store(const StoreOptions& options, internal::Db writer, internal::Db reader)
    : options_(options), writer_(std::move(writer)), reader_(std::move(reader)) {
  MutexLock lock(&read_mu_);
  read_db_ = reader_ ? reader_.get() : writer_.get();  // exclusive locking: one connection
}

Status Store::PrepareStatements() {
  struct Want {
    internal::Stmt* stmt;
    sqlite3* db;
    const char* sql;
  };
  MutexLock lock(&read_mu_);
  const Want wanted[] = {
      {&begin_, writer_.get(), "BEGIN IMMEDIATE"},
      {&commit_, writer_.get(), "COMMIT"},
      {&rollback_, writer_.get(), "ROLLBACK"},
      {&put_, writer_.get(), "INSERT OR REPLACE INTO records(tbl, key, value) VALUES(?1, ?2, ?3)"},
      {&delete_, writer_.get(), "DELETE FROM records WHERE tbl = ?1 AND key = ?2"},
      {&counter_get_, writer_.get(), "SELECT next FROM counters WHERE name = ?1"},
      {&counter_set_, writer_.get(), "INSERT OR REPLACE INTO counters(name, next) VALUES(?1, ?2)"},
      {&get_, read_db_, "SELECT value FROM records WHERE tbl = ?1 AND key = ?2"},
      {&scan_, read_db_, "SELECT key, value FROM records WHERE tbl = ?1 ORDER BY key"},
  };
  for (const Want& want : wanted) {
    Result<internal::Stmt> stmt = internal::Prepare(want.db, options_.path, want.sql);
    if (!stmt.ok()) return stmt.status();
    *want.stmt = std::move(*stmt);
  }
  return Status::Ok();
}

Store::~Store() {
  if (!committer_.joinable()) return;  // Open failed before starting it
  {
    MutexLock lock(&mu_);
    closing_ = true;
    work_cv_.SignalAll();
  }
  committer_.join();
}

Status Store::Put(std::vector<Record> records) {
  for (std::size_t i = 0; i < records.size(); ++i) {
    LOCKSTEP_RETURN_IF_ERROR(CheckName(fmt::format("Put: record {}: table", i), records[i].table,
                                       /*may_be_empty=*/false));
    LOCKSTEP_RETURN_IF_ERROR(
        CheckName(fmt::format("Put: record {}: key", i), records[i].key, /*may_be_empty=*/true));
    LOCKSTEP_RETURN_IF_ERROR(CheckSize(i, records[i], max_row_bytes_));
  }
  if (records.empty()) return Status::Ok();
  return PutAsync(std::move(records)).Wait();
}

PendingWrite Store::PutAsync(std::vector<Record> records) {
  for (std::size_t i = 0; i < records.size(); ++i) {
    Status s = CheckName(fmt::format("Put: record {}: table", i), records[i].table,
                         /*may_be_empty=*/false);
    if (s.ok())
      s = CheckName(fmt::format("Put: record {}: key", i), records[i].key, /*may_be_empty=*/true);
    if (s.ok()) s = CheckSize(i, records[i], max_row_bytes_);
    if (!s.ok()) return PendingWrite(s);
  }
  if (records.empty()) return PendingWrite(Status::Ok());
  auto request = std::make_shared<Request>(Request::Kind::kPut);
  request->records = std::move(records);
  Status queued = Enqueue(request);
  if (!queued.ok()) return PendingWrite(queued);
  return PendingWrite(std::move(request));
}

Status PendingWrite::Wait() {
  if (!request_) return status_;
  {
    MutexLock lock(&request_->done_mu);
    while (!request_->done) request_->done_cv.Wait(&request_->done_mu);
    status_ = request_->status;
  }
  request_.reset();
  return status_;
}

Status Store::Delete(std::string table, std::vector<std::string> keys) {
  LOCKSTEP_RETURN_IF_ERROR(CheckName("Delete: table", table, /*may_be_empty=*/false));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    LOCKSTEP_RETURN_IF_ERROR(
        CheckName(fmt::format("Delete: key {}", i), keys[i], /*may_be_empty=*/true));
  }
  if (keys.empty()) return Status::Ok();
  auto request = std::make_shared<Request>(Request::Kind::kDelete);
  request->name = std::move(table);
  request->keys = std::move(keys);
  return Submit(request);
}

Result<std::uint64_t> Store::AllocateIds(const std::string& name, std::uint64_t count) {
  LOCKSTEP_RETURN_IF_ERROR(CheckName("AllocateIds: counter name", name, /*may_be_empty=*/false));
  if (count < 1 || count > kMaxCounter) {
    return InvalidArgument(fmt::format("AllocateIds: count {} is not in [1, 2^63)", count));
  }
  auto request = std::make_shared<Request>(Request::Kind::kAllocate);
  request->name = name;
  request->count = count;
  LOCKSTEP_RETURN_IF_ERROR(Submit(request));
  return request->first_id;
}

Status Store::Submit(const std::shared_ptr<Request>& request) {
  LOCKSTEP_RETURN_IF_ERROR(Enqueue(request));
  MutexLock lock(&request->done_mu);
  while (!request->done) request->done_cv.Wait(&request->done_mu);
  return request->status;
}

Status Store::Enqueue(std::shared_ptr<Request> request) {
  {
    MutexLock lock(&mu_);
    if (!fatal_error_.ok()) return fatal_error_;
    if (closing_) return FailedPrecondition(fmt::format("{}: store is closing", options_.path));
    queued_weight_ += request->weight();
    queue_.push_back(std::move(request));
    // Wake the committer only when it waits for this: idle (the queue was empty) or gathering
    // and now at its target. Waking it for every call costs a context switch each.
    if (queue_.size() == 1 || queue_.size() >= gather_target_ ||
        queued_weight_ >= options_.max_batch) {
      work_cv_.Signal();
    }
  }
  return Status::Ok();
}

void Store::CommitterLoop() {
  std::size_t expected = 1;  // requests the previous commit carried
  mu_.Lock();
  for (;;) {
    while (queue_.empty() && !closing_) work_cv_.Wait(&mu_);
    if (queue_.empty()) break;  // closing, and every queued write is done
    GatherLocked(expected);

    std::vector<std::shared_ptr<Request>> batch;
    std::size_t weight = 0;
    while (!queue_.empty() &&
           (batch.empty() || weight + queue_.front()->weight() <= options_.max_batch)) {
      batch.push_back(queue_.front());
      weight += queue_.front()->weight();
      queue_.pop_front();
    }
    queued_weight_ -= weight;

    Status status = fatal_error_;
    if (status.ok()) {
      mu_.Unlock();  // callers keep queueing while this batch commits
      if (options_.mode == StoreMode::kWal) {
        status = CommitBatch(batch);
      } else {
        MutexLock read_lock(&read_mu_);  // reads share the one connection
        status = CommitBatch(batch);
      }
      mu_.Lock();
      if (IsFatal(status)) fatal_error_ = status;
    }
    expected = batch.size();
    mu_.Unlock();
    for (const std::shared_ptr<Request>& request : batch) {
      // Signalled under done_mu: once the caller can see `done` it may destroy the request.
      MutexLock done_lock(&request->done_mu);
      if (!status.ok()) request->status = status;
      request->done = true;
      request->done_cv.SignalAll();  // a PendingWrite may have several waiters
    }
    mu_.Lock();
  }
  mu_.Unlock();
}

void Store::GatherLocked(std::size_t expected) {
  if (expected <= 1 || options_.max_batch_delay.count() <= 0) return;
  const auto deadline = std::chrono::steady_clock::now() + options_.max_batch_delay;
  gather_target_ = expected;
  while (!closing_ && queue_.size() < expected && queued_weight_ < options_.max_batch) {
    if (!work_cv_.WaitUntil(&mu_, deadline)) break;
  }
  gather_target_ = kNotGathering;
}

namespace {

// Steps a statement that returns no rows and resets it.
Status StepDone(sqlite3* db, const std::string& path, sqlite3_stmt* stmt, std::string_view what) {
  const int rc = sqlite3_step(stmt);
  Status status = rc == SQLITE_DONE ? Status::Ok() : SqliteError(path, db, rc, what);
  sqlite3_reset(stmt);
  return status;
}

}  // namespace

Status Store::CommitBatch(const std::vector<std::shared_ptr<Request>>& batch) {
  const auto started = std::chrono::steady_clock::now();
  sqlite3* db = writer_.get();
  LOCKSTEP_RETURN_IF_ERROR(CheckFence("before the transaction"));
  LOCKSTEP_RETURN_IF_ERROR(StepDone(db, options_.path, begin_.get(), "begin transaction"));
  Status status;
  std::uint64_t rows = 0;
  for (const std::shared_ptr<Request>& request : batch) {
    switch (request->kind) {
      case Request::Kind::kPut:
        status = ApplyPut(*request);
        break;
      case Request::Kind::kDelete:
        status = ApplyDelete(*request);
        break;
      case Request::Kind::kAllocate:
        status = ApplyAllocate(request.get());
        break;
    }
    if (!status.ok()) break;
    if (request->status.ok()) rows += request->weight();
  }
  // Again before COMMIT: building a large batch may take long enough for the lease to lapse.
  if (status.ok()) status = CheckFence("before its commit");
  if (status.ok()) status = StepDone(db, options_.path, commit_.get(), "commit");
  if (!status.ok()) {
    // SQLite has already rolled back after some errors (an I/O error in COMMIT among them).
    if (sqlite3_get_autocommit(db) == 0) {
      (void)StepDone(db, options_.path, rollback_.get(), "rollback");  // `status` says why
    }
    return status;
  }
  commits_.fetch_add(1, std::memory_order_relaxed);
  records_.fetch_add(rows, std::memory_order_relaxed);
  commit_latency_.Record(std::chrono::steady_clock::now() - started);
  return Status::Ok();
}

Status Store::CheckFence(std::string_view when) const {
  if (options_.fence == nullptr || options_.fence->IsOpen()) return Status::Ok();
  return FailedPrecondition(
      fmt::format("{}: write refused {}: the write fence is closed (this replica no longer "
                  "holds the lease, or could not renew it in time)",
                  options_.path, when));
}

Status Store::ApplyPut(const Request& request) {
  sqlite3* db = writer_.get();
  sqlite3_stmt* stmt = put_.get();
  for (const Record& record : request.records) {
    LOCKSTEP_RETURN_IF_ERROR(CheckBind(BindText(stmt, 1, record.table), db, options_.path));
    LOCKSTEP_RETURN_IF_ERROR(CheckBind(BindText(stmt, 2, record.key), db, options_.path));
    LOCKSTEP_RETURN_IF_ERROR(CheckBind(BindBlob(stmt, 3, record.value), db, options_.path));
    LOCKSTEP_RETURN_IF_ERROR(StepDone(db, options_.path, stmt, "put"));
  }
  return Status::Ok();
}

Status Store::ApplyDelete(const Request& request) {
  sqlite3* db = writer_.get();
  sqlite3_stmt* stmt = delete_.get();
  for (const std::string& key : request.keys) {
    LOCKSTEP_RETURN_IF_ERROR(CheckBind(BindText(stmt, 1, request.name), db, options_.path));
    LOCKSTEP_RETURN_IF_ERROR(CheckBind(BindText(stmt, 2, key), db, options_.path));
    LOCKSTEP_RETURN_IF_ERROR(StepDone(db, options_.path, stmt, "delete"));
  }
  return Status::Ok();
}

Status Store::ApplyAllocate(Request* request) {
  sqlite3* db = writer_.get();
  sqlite3_stmt* get = counter_get_.get();
  LOCKSTEP_RETURN_IF_ERROR(CheckBind(BindText(get, 1, request->name), db, options_.path));
  std::uint64_t next = 1;
  const int rc = sqlite3_step(get);
  if (rc == SQLITE_ROW) next = static_cast<std::uint64_t>(sqlite3_column_int64(get, 0));
  Status status = rc == SQLITE_ROW || rc == SQLITE_DONE
                      ? Status::Ok()
                      : SqliteError(options_.path, db, rc, "read counter");
  sqlite3_reset(get);
  LOCKSTEP_RETURN_IF_ERROR(status);

  if (next < 1 || next > kMaxCounter || request->count > kMaxCounter - next) {
    // This request's own failure: the rest of the batch still commits.
    request->status =
        FailedPrecondition(fmt::format("{}: counter '{}' at {} cannot reserve {} more ids",
                                       options_.path, request->name, next, request->count));
    return Status::Ok();
  }
  sqlite3_stmt* set = counter_set_.get();
  LOCKSTEP_RETURN_IF_ERROR(CheckBind(BindText(set, 1, request->name), db, options_.path));
  LOCKSTEP_RETURN_IF_ERROR(
      CheckBind(sqlite3_bind_int64(set, 2, static_cast<std::int64_t>(next + request->count)), db,
                options_.path));
  LOCKSTEP_RETURN_IF_ERROR(StepDone(db, options_.path, set, "advance counter"));
  request->first_id = next;
  return Status::Ok();
}

Result<std::vector<Record>> Store::Scan(const std::string& table) const {
  MutexLock lock(&read_mu_);
  sqlite3_stmt* stmt = scan_.get();
  LOCKSTEP_RETURN_IF_ERROR(CheckBind(BindText(stmt, 1, table), read_db_, options_.path));
  std::vector<Record> records;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    records.push_back(Record{table, ColumnBytes(stmt, 0), ColumnBytes(stmt, 1)});
  }
  Status status = rc == SQLITE_DONE ? Status::Ok()
                                    : SqliteError(options_.path, read_db_, rc,
                                                  fmt::format("scan table '{}'", table));
  sqlite3_reset(stmt);  // ends the read transaction
  if (!status.ok()) return status;
  return records;
}

Result<std::optional<std::string>> Store::Get(const std::string& table,
                                              const std::string& key) const {
  MutexLock lock(&read_mu_);
  sqlite3_stmt* stmt = get_.get();
  LOCKSTEP_RETURN_IF_ERROR(CheckBind(BindText(stmt, 1, table), read_db_, options_.path));
  LOCKSTEP_RETURN_IF_ERROR(CheckBind(BindText(stmt, 2, key), read_db_, options_.path));
  const int rc = sqlite3_step(stmt);
  std::optional<std::string> value;
  if (rc == SQLITE_ROW) value = ColumnBytes(stmt, 0);
  Status status = rc == SQLITE_ROW || rc == SQLITE_DONE
                      ? Status::Ok()
                      : SqliteError(options_.path, read_db_, rc,
                                    fmt::format("get '{}' from table '{}'", key, table));
  sqlite3_reset(stmt);
  if (!status.ok()) return status;
  return value;
}

Store::Stats Store::stats() const {
  return Stats{commits_.load(std::memory_order_relaxed), records_.load(std::memory_order_relaxed)};
}

}  // namespace lockstep::store
