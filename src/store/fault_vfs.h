// A SQLite VFS for tests that loses power on demand (after leveldb's FaultInjectionTestEnv in
// db/fault_injection_test.cc). SQLite's VFS is the store's environment interface: this one wraps
// the default VFS, remembers the old contents under every write that no sync of its file has yet
// covered, and after a power cut puts them back, leaving on disk only what was fsync'd.
// Test-only: linked into store_test, never into lockstep_store.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/mutex.h"

namespace lockstep::store {

// Registers itself with SQLite under `name` for its lifetime; pass the name as StoreOptions.vfs.
// Owns its bookkeeping; every connection using it must be closed before it is destroyed.
// Thread-safe: SQLite may call it from any thread, and CutPower from any thread at any moment.
class FaultInjectionVfs {
 public:
  explicit FaultInjectionVfs(std::string name);
  ~FaultInjectionVfs();
  FaultInjectionVfs(const FaultInjectionVfs&) = delete;
  FaultInjectionVfs& operator=(const FaultInjectionVfs&) = delete;

  const std::string& name() const { return name_; }

  // The machine stops: from now on every write, sync, truncate, delete and open through this VFS
  // fails with an I/O error, so nothing more reaches the files. Reads still work.
  void CutPower();
  // What the disk holds after the power cut: undoes every write and truncation not covered by a
  // later sync of its file (main database, journal and WAL files). Call once every connection
  // through this VFS is closed; afterwards the VFS works normally again.
  Status DropUnsyncedWrites();
  // Successful syncs so far.
  std::uint64_t syncs() const;

 private:
  // The sqlite3_vfs and sqlite3_io_methods callbacks (fault_vfs.cc).
  friend struct FaultVfsCallbacks;

  struct Undo {
    std::uint64_t offset;
    std::string bytes;  // the old contents at `offset`, all below the synced size
  };
  struct FileState {
    std::uint64_t synced_size = 0;  // the file's size at its last sync (or when first opened)
    std::vector<Undo> undo;         // writes and truncations since the last sync, oldest first
  };

  const std::string name_;
  sqlite3_vfs* const base_;  // SQLite's default VFS, which does the real work
  sqlite3_vfs vfs_;          // registered with SQLite; pAppData points back here

  mutable Mutex mu_;
  bool power_cut_ LOCKSTEP_GUARDED_BY(mu_) = false;
  std::map<std::string, FileState> files_ LOCKSTEP_GUARDED_BY(mu_);  // by full path
  std::uint64_t syncs_ LOCKSTEP_GUARDED_BY(mu_) = 0;
};

}  // namespace lockstep::store
