// The store's schema: creating it in a new file and refusing files this build cannot use.
// Private to the store. Thread-safety: uses only the connection it is given.
#pragma once

#include <sqlite3.h>

#include <string>

#include "common/status.h"
#include "store/store_mode.h"

namespace lockstep::store::internal {

// Makes the connection's file a lockstep store at kSchemaVersion: checks that an existing file
// is a store this build can read (before writing anything to it), sets the locking and journal
// modes of `mode` (store_mode.h: EXCLUSIVE locking is set before the file is first read, so that
// WAL then keeps its index in memory and never maps a -shm file), sets
// synchronous (FULL when `sync`, else OFF) and creates the tables of a new file. Errors name
// `path`: FailedPrecondition for a file that is not SQLite, a SQLite file that is not a store,
// or a store from a newer version.
Status InitializeSchema(sqlite3* db, const std::string& path, bool sync, StoreMode mode);

}  // namespace lockstep::store::internal
