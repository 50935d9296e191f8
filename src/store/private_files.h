// The store's files are lockstepd's alone: job scripts and environments (secrets included) are
// in them. MakeStoreFilesPrivate runs before SQLite opens the database:
//   - the directory loses read and write for group and others (mode & ~0066, so at most 0711:
//     others may still pass through it to lockstepd's socket, which lives there too, but may
//     not list it);
//   - the database file is created 0600 when missing, and an existing one, its -wal and its -shm
//     are set to 0600. SQLite creates -wal and -shm with the database file's mode, so they stay
//     0600 after this.
// Symbolic links are refused (O_NOFOLLOW): a link planted in the directory must not make
// lockstepd chmod or write someone else's file. Not thread-safe with respect to another process
// changing the same files; called once per Store::Open.
#pragma once

#include <string>

#include "common/status.h"

namespace lockstep::store {

// Mode bits of the directory that are removed, and of the files.
inline constexpr unsigned kDirectoryDenyBits = 0066;
inline constexpr unsigned kFileMode = 0600;

// `db_path` is the database file; its directory must exist. IoError or PermissionDenied naming
// the path when a mode cannot be set.
Status MakeStoreFilesPrivate(const std::string& db_path);

}  // namespace lockstep::store
