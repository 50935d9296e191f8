#include "store/sqlite_util.h"

#include <fmt/format.h>

namespace lockstep::store::internal {

Status SqliteError(const std::string& path, sqlite3* db, int rc, std::string_view what) {
  // sqlite3_errmsg describes the connection's latest failure; without a connection (or if the
  // connection's latest call succeeded) fall back to the generic text for the code.
  const char* detail =
      db != nullptr && sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string message = fmt::format("{}: {}: {}", path, what, detail);
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status(StatusCode::kUnavailable, std::move(message));
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return FailedPrecondition(std::move(message));
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return IoError(std::move(message));
    default:
      return Internal(std::move(message));
  }
}

Result<Db> OpenConnection(const std::string& path, int flags, const std::string& vfs,
                          std::chrono::milliseconds busy_timeout) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX,
                                 vfs.empty() ? nullptr : vfs.c_str());
  Db db(raw);  // sqlite3_open_v2 hands back a connection to close even when it fails
  if (rc != SQLITE_OK) return SqliteError(path, db.get(), rc, "cannot open");
  sqlite3_extended_result_codes(db.get(), 1);
  const int busy_rc = sqlite3_busy_timeout(db.get(), static_cast<int>(busy_timeout.count()));
  if (busy_rc != SQLITE_OK) return SqliteError(path, db.get(), busy_rc, "busy_timeout");
  return db;
}

Status Exec(sqlite3* db, const std::string& path, const char* sql) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteError(path, db, rc, sql);
  return Status::Ok();
}

Result<Stmt> Prepare(sqlite3* db, const std::string& path, const char* sql) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  Stmt stmt(raw);
  if (rc != SQLITE_OK) return SqliteError(path, db, rc, fmt::format("prepare '{}'", sql));
  return stmt;
}

namespace {

// Steps `sql` to its first row and hands the statement to `read`.
template <typename T, typename Read>
Result<T> QueryFirst(sqlite3* db, const std::string& path, const char* sql, Read read) {
  Result<Stmt> stmt = Prepare(db, path, sql);
  if (!stmt.ok()) return stmt.status();
  const int rc = sqlite3_step(stmt->get());
  if (rc != SQLITE_ROW) {
    if (rc == SQLITE_DONE) return Internal(fmt::format("{}: '{}' returned no row", path, sql));
    return SqliteError(path, db, rc, sql);
  }
  return T(read(stmt->get()));
}

}  // namespace

Result<std::int64_t> QueryInt(sqlite3* db, const std::string& path, const char* sql) {
  return QueryFirst<std::int64_t>(db, path, sql,
                                  [](sqlite3_stmt* s) { return sqlite3_column_int64(s, 0); });
}

Result<std::string> QueryText(sqlite3* db, const std::string& path, const char* sql) {
  return QueryFirst<std::string>(db, path, sql, [](sqlite3_stmt* s) { return ColumnBytes(s, 0); });
}

int BindText(sqlite3_stmt* stmt, int index, const std::string& text) {
  // std::string::data() is never null, so an empty string binds '' rather than NULL.
  return sqlite3_bind_text64(stmt, index, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8);
}

int BindBlob(sqlite3_stmt* stmt, int index, const std::string& bytes) {
  if (bytes.empty()) return sqlite3_bind_zeroblob(stmt, index, 0);  // a null pointer binds NULL
  return sqlite3_bind_blob64(stmt, index, bytes.data(), bytes.size(), SQLITE_STATIC);
}

std::string ColumnBytes(sqlite3_stmt* stmt, int column) {
  const void* data = sqlite3_column_blob(stmt, column);
  const int size = sqlite3_column_bytes(stmt, column);
  if (data == nullptr || size <= 0) return std::string();
  return std::string(static_cast<const char*>(data), static_cast<std::size_t>(size));
}

}  // namespace lockstep::store::internal
