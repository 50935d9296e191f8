// How the store's SQLite file is journaled and locked, and which mode a state directory needs.
// SQLite's WAL mode keeps its index in a shared-memory file (-shm) mapped by every connection;
// network file systems (NFS, CephFS, SMB, EFS...) do not keep such mappings coherent, so there
// the store must use a mode that needs no shared memory (docs/store-format.md, "Modes").
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace lockstep::store {

enum class StoreMode {
  // WAL with its shared-memory index; a writer and a reader connection. Local disks only.
  kWal,
  // WAL with locking_mode=EXCLUSIVE: the index lives in the process's heap, no -shm file, and
  // the file stays locked by this one process while open. One connection for reads and writes.
  kExclusive,
  // A rollback journal (journal_mode=TRUNCATE) with locking_mode=EXCLUSIVE: no WAL file either.
  kTruncate,
};

// "wal", "exclusive", "truncate".
std::string_view StoreModeName(StoreMode mode);

// What statfs(2) says of the directory holding the store.
struct FilesystemKind {
  std::string name;      // "nfs", "cephfs", "ext4/xfs/other local", ...
  bool network = false;  // shared memory over it is not coherent between hosts
};
Result<FilesystemKind> DetectFilesystem(const std::string& directory);

// The mode for `setting` ("auto", "wal", "exclusive" or "truncate") and the directory: auto is
// exclusive on a network file system, else wal. An explicit wal on a network file system is
// refused (it would corrupt the file when two hosts open it). InvalidArgument names `where`
// (the flag or the config key) for an unknown setting.
Result<StoreMode> ResolveStoreMode(std::string_view setting, const std::string& directory,
                                   std::string_view where);
// The same choice for a file system already detected (pure; the unit tests' entry).
Result<StoreMode> ChooseStoreMode(std::string_view setting, const FilesystemKind& fs,
                                  std::string_view where);

}  // namespace lockstep::store
