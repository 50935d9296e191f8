#include "store/schema.h"

#include <fmt/format.h>

#include <cstdint>

#include "store/sqlite_util.h"
#include "store/store.h"

namespace lockstep::store::internal {
namespace {

// The whole schema of version 1; docs/store-format.md describes it byte by byte.
constexpr const char* kCreateTables =
    "CREATE TABLE records("
    "tbl TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY(tbl, key)"
    ") WITHOUT ROWID;"
    "CREATE TABLE counters(name TEXT NOT NULL PRIMARY KEY, next INTEGER NOT NULL) WITHOUT ROWID;";

enum class FileKind { kNew, kCurrent };

// What the file holds: nothing yet (a new or empty file) or a store this build can use.
Result<FileKind> Identify(sqlite3* db, const std::string& path) {
  Result<std::int64_t> objects = QueryInt(db, path, "SELECT count(*) FROM sqlite_master");
  if (!objects.ok()) {
    const Status& s = objects.status();
    if (s.code() != StatusCode::kFailedPrecondition) return s;
    // Not SQLite at all, or damaged beyond reading its schema; errmsg still says which.
    return FailedPrecondition(
        fmt::format("{}: not a lockstep store (not a SQLite file, or a damaged one): {}", path,
                    sqlite3_errmsg(db)));
  }
  Result<std::int64_t> version = QueryInt(db, path, "PRAGMA user_version");
  if (!version.ok()) return version.status();
  Result<std::int64_t> app = QueryInt(db, path, "PRAGMA application_id");
  if (!app.ok()) return app.status();
  if (*objects == 0 && *version == 0 && *app == 0) return FileKind::kNew;
  if (*app != kApplicationId) {
    return FailedPrecondition(fmt::format(
        "{}: a SQLite database but not a lockstep store (application_id {:#x}, expected {:#x})",
        path, *app, kApplicationId));
  }
  if (*version > kSchemaVersion) {
    return FailedPrecondition(fmt::format(
        "{}: store schema version {} is newer than this lockstep understands (at most {}); "
        "use a newer lockstep",
        path, *version, kSchemaVersion));
  }
  if (*version < 1) {
    return FailedPrecondition(
        fmt::format("{}: lockstep store with invalid schema version {}", path, *version));
  }
  return FileKind::kCurrent;
}

Status CreateTables(sqlite3* db, const std::string& path) {
  LOCKSTEP_RETURN_IF_ERROR(Exec(db, path, kCreateTables));
  const std::string pragmas = fmt::format("PRAGMA application_id = {}; PRAGMA user_version = {};",
                                          kApplicationId, kSchemaVersion);
  return Exec(db, path, pragmas.c_str());
}

}  // namespace

Status InitializeSchema(sqlite3* db, const std::string& path, bool sync, StoreMode store_mode) {
  // Before the first read: a WAL file first opened in exclusive locking never maps its -shm.
  if (store_mode != StoreMode::kWal) {
    Result<std::string> locking = QueryText(db, path, "PRAGMA locking_mode = EXCLUSIVE");
    if (!locking.ok()) return locking.status();
    if (*locking != "exclusive") {
      return FailedPrecondition(
          fmt::format("{}: cannot set exclusive locking (locking_mode is '{}')", path, *locking));
    }
  }
  // Identify first, read-only: a foreign or newer file must be left exactly as it was.
  Result<FileKind> kind = Identify(db, path);
  if (!kind.ok()) return kind.status();

  const bool wal = store_mode != StoreMode::kTruncate;
  Result<std::string> mode = QueryText(
      db, path, wal ? "PRAGMA journal_mode = WAL" : "PRAGMA journal_mode = TRUNCATE");
  if (!mode.ok()) return mode.status();
  if (*mode != (wal ? "wal" : "truncate")) {
    return FailedPrecondition(fmt::format("{}: cannot switch to {} journaling (journal_mode is '{}')",
                                          path, wal ? "WAL" : "TRUNCATE", *mode));
  }
  LOCKSTEP_RETURN_IF_ERROR(
      Exec(db, path, sync ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = OFF"));
  if (*kind == FileKind::kCurrent) return Status::Ok();

  // A new file. Another process may be creating it too: check again under the write lock.
  LOCKSTEP_RETURN_IF_ERROR(Exec(db, path, "BEGIN IMMEDIATE"));
  kind = Identify(db, path);
  Status status = !kind.ok()                ? kind.status()
                  : *kind == FileKind::kNew ? CreateTables(db, path)
                                            : Status::Ok();
  if (!status.ok()) {
    (void)Exec(db, path, "ROLLBACK");  // the error being returned says what went wrong
    return status;
  }
  return Exec(db, path, "COMMIT");
}

}  // namespace lockstep::store::internal
