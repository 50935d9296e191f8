// Reads of a table in pages (Store::ScanPage) and its last key: what a reader of a table larger
// than memory uses (the controller's accounting, and its recovery, over every job ever run).
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "store/store.h"

namespace lockstep::store {

using internal::BindBlob;
using internal::BindText;
using internal::ColumnBytes;

namespace {

// The statement of a page: its bounds and filter only when asked, so that SQLite walks the
// primary key's range and nothing more.
std::string PageSql(const KeyRange& range) {
  std::string sql = "SELECT key, value FROM records WHERE tbl = ?1 AND key >= ?2";
  if (!range.to.empty()) sql += " AND key < ?3";
  if (!range.value_contains.empty()) sql += " AND instr(value, ?4) > 0";
  return sql + " ORDER BY key LIMIT ?5";
}

Status Bound(int rc, sqlite3* db, const std::string& path) {
  if (rc == SQLITE_OK) return Status::Ok();
  return internal::SqliteError(path, db, rc, "bind");
}

}  // namespace

Result<std::vector<Record>> Store::ScanPage(const std::string& table, const KeyRange& range) const {
  if (range.limit == 0) return InvalidArgument("ScanPage: limit 0");
  MutexLock lock(&read_mu_);
  Result<internal::Stmt> prepared =
      internal::Prepare(read_db_, options_.path, PageSql(range).c_str());
  if (!prepared.ok()) return prepared.status();
  sqlite3_stmt* stmt = prepared->get();
  LOCKSTEP_RETURN_IF_ERROR(Bound(BindText(stmt, 1, table), read_db_, options_.path));
  LOCKSTEP_RETURN_IF_ERROR(Bound(BindText(stmt, 2, range.from), read_db_, options_.path));
  if (!range.to.empty())
    LOCKSTEP_RETURN_IF_ERROR(Bound(BindText(stmt, 3, range.to), read_db_, options_.path));
  // A BLOB needle against BLOB values: instr() compares bytes.
  if (!range.value_contains.empty())
    LOCKSTEP_RETURN_IF_ERROR(
        Bound(BindBlob(stmt, 4, range.value_contains), read_db_, options_.path));
  const auto limit = static_cast<sqlite3_int64>(
      std::min<std::size_t>(range.limit, std::numeric_limits<sqlite3_int64>::max()));
  LOCKSTEP_RETURN_IF_ERROR(Bound(sqlite3_bind_int64(stmt, 5, limit), read_db_, options_.path));
  std::vector<Record> records;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
    records.push_back(Record{table, ColumnBytes(stmt, 0), ColumnBytes(stmt, 1)});
  if (rc != SQLITE_DONE)
    return internal::SqliteError(options_.path, read_db_, rc,
                                 fmt::format("scan a page of table '{}'", table));
  return records;  // the statement is finalized here, which ends the read transaction
}

Result<std::optional<std::string>> Store::LastKey(const std::string& table) const {
  MutexLock lock(&read_mu_);
  Result<internal::Stmt> prepared = internal::Prepare(
      read_db_, options_.path, "SELECT key FROM records WHERE tbl = ?1 ORDER BY key DESC LIMIT 1");
  if (!prepared.ok()) return prepared.status();
  sqlite3_stmt* stmt = prepared->get();
  LOCKSTEP_RETURN_IF_ERROR(Bound(BindText(stmt, 1, table), read_db_, options_.path));
  const int rc = sqlite3_step(stmt);
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW)
    return internal::SqliteError(options_.path, read_db_, rc,
                                 fmt::format("last key of table '{}'", table));
  return std::optional<std::string>(ColumnBytes(stmt, 0));
}

}  // namespace lockstep::store
