// Thin RAII and error helpers over the SQLite C API, private to the store. Every failure becomes a
// Status naming the file and carrying sqlite3_errmsg, so callers never see a bare result code.
// Thread-safety: the helpers keep no state; a connection they are given must not be used by two
// threads at once (the store opens connections with SQLITE_OPEN_NOMUTEX and locks itself).
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace lockstep::store::internal {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
// An open connection; closing it is the last thing it does.
using Db = std::unique_ptr<sqlite3, DbCloser>;

struct StmtFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
// A prepared statement; must be destroyed before the connection it belongs to.
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

// The Status for SQLite result code `rc` (primary or extended): "<path>: <what>: <errmsg>".
// Busy and locked become Unavailable; "not a database" and corruption FailedPrecondition; I/O,
// full disk, read-only and cannot-open IoError; anything else Internal. `db` may be null.
Status SqliteError(const std::string& path, sqlite3* db, int rc, std::string_view what);

// Opens a connection with `flags` (SQLITE_OPEN_NOMUTEX is added) through `vfs` (empty: SQLite's
// default) and sets busy_timeout.
Result<Db> OpenConnection(const std::string& path, int flags, const std::string& vfs,
                          std::chrono::milliseconds busy_timeout);

// Runs SQL that returns no rows.
Status Exec(sqlite3* db, const std::string& path, const char* sql);

Result<Stmt> Prepare(sqlite3* db, const std::string& path, const char* sql);

// Runs SQL whose first row's first column is the answer (a PRAGMA, a count).
Result<std::int64_t> QueryInt(sqlite3* db, const std::string& path, const char* sql);
Result<std::string> QueryText(sqlite3* db, const std::string& path, const char* sql);

// Binds without copying: the string must outlive the next sqlite3_step of `stmt`. Never binds
// NULL, even for an empty string.
int BindText(sqlite3_stmt* stmt, int index, const std::string& text);
int BindBlob(sqlite3_stmt* stmt, int index, const std::string& bytes);
// A column as bytes (TEXT or BLOB); empty for NULL.
std::string ColumnBytes(sqlite3_stmt* stmt, int column);

}  // namespace lockstep::store::internal
