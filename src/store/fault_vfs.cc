#include "store/fault_vfs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace lockstep::store {
namespace {

// One open file. SQLite allocates szOsFile bytes for it (8-byte aligned): this header, then the
// base VFS's file.
struct FaultFile {
  sqlite3_file base;  // first, as SQLite requires
  FaultInjectionVfs* vfs;
  const char* path;  // the full path (valid while open); null for files no crash can hurt
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};
static_assert(alignof(FaultFile) <= 8 && sizeof(FaultFile) % 8 == 0,
              "the base VFS's file must stay 8-byte aligned after the header");

FaultFile* AsFault(sqlite3_file* file) {
  return reinterpret_cast<FaultFile*>(file);
}
sqlite3_file* Real(sqlite3_file* file) {
  return AsFault(file)->real();
}

// [offset, offset + size) of the real file as it is now; bytes past its end read as zeros.
std::string ReadNow(sqlite3_file* real, std::uint64_t offset, std::uint64_t size) {
  std::string bytes(size, '\0');
  if (size > 0) {
    // SQLITE_IOERR_SHORT_READ zero-fills the rest, which is what we want.
    (void)real->pMethods->xRead(real, bytes.data(), static_cast<int>(size),
                                static_cast<sqlite3_int64>(offset));
  }
  return bytes;
}

Status PosixError(const std::string& path, const char* what) {
  return IoError(fmt::format("{}: {}: {}", path, what, std::strerror(errno)));
}

}  // namespace

struct FaultVfsCallbacks {
  static FaultInjectionVfs* Self(sqlite3_vfs* vfs) {
    return static_cast<FaultInjectionVfs*>(vfs->pAppData);
  }

  // Saves the old contents of [offset, end) that lie below the synced size, before they change.
  static void Remember(FaultInjectionVfs* self, FaultFile* file, std::uint64_t offset,
                       std::uint64_t end) LOCKSTEP_REQUIRES(self->mu_) {
    if (file->path == nullptr) return;
    FaultInjectionVfs::FileState& state = self->files_[file->path];
    end = std::min(end, state.synced_size);
    if (offset >= end) return;
    state.undo.push_back({offset, ReadNow(file->real(), offset, end - offset)});
  }

  // --- sqlite3_io_methods ---
  static int Close(sqlite3_file* file) { return Real(file)->pMethods->xClose(Real(file)); }
  static int Read(sqlite3_file* file, void* buf, int amount, sqlite3_int64 offset) {
    return Real(file)->pMethods->xRead(Real(file), buf, amount, offset);
  }
  static int Write(sqlite3_file* file, const void* buf, int amount, sqlite3_int64 offset) {
    FaultFile* f = AsFault(file);
    MutexLock lock(&f->vfs->mu_);
    if (f->vfs->power_cut_) return SQLITE_IOERR_WRITE;
    const auto start = static_cast<std::uint64_t>(offset);
    Remember(f->vfs, f, start, start + static_cast<std::uint64_t>(amount));
    return f->real()->pMethods->xWrite(f->real(), buf, amount, offset);
  }
  static int Truncate(sqlite3_file* file, sqlite3_int64 size) {
    FaultFile* f = AsFault(file);
    MutexLock lock(&f->vfs->mu_);
    if (f->vfs->power_cut_) return SQLITE_IOERR_TRUNCATE;
    Remember(f->vfs, f, static_cast<std::uint64_t>(size), UINT64_MAX);
    return f->real()->pMethods->xTruncate(f->real(), size);
  }
  static int Sync(sqlite3_file* file, int flags) {
    FaultFile* f = AsFault(file);
    MutexLock lock(&f->vfs->mu_);
    if (f->vfs->power_cut_) return SQLITE_IOERR_FSYNC;
    const int rc = f->real()->pMethods->xSync(f->real(), flags);
    if (rc != SQLITE_OK) return rc;
    ++f->vfs->syncs_;
    if (f->path != nullptr) {
      sqlite3_int64 size = 0;
      if (f->real()->pMethods->xFileSize(f->real(), &size) != SQLITE_OK) return SQLITE_IOERR_FSTAT;
      FaultInjectionVfs::FileState& state = f->vfs->files_[f->path];
      state.synced_size = static_cast<std::uint64_t>(size);
      state.undo.clear();
    }
    return SQLITE_OK;
  }
  static int FileSize(sqlite3_file* file, sqlite3_int64* size) {
    return Real(file)->pMethods->xFileSize(Real(file), size);
  }
  static int Lock(sqlite3_file* file, int level) {
    return Real(file)->pMethods->xLock(Real(file), level);
  }
  static int Unlock(sqlite3_file* file, int level) {
    return Real(file)->pMethods->xUnlock(Real(file), level);
  }
  static int CheckReservedLock(sqlite3_file* file, int* out) {
    return Real(file)->pMethods->xCheckReservedLock(Real(file), out);
  }
  static int FileControl(sqlite3_file* file, int op, void* arg) {
    return Real(file)->pMethods->xFileControl(Real(file), op, arg);
  }
  static int SectorSize(sqlite3_file* file) {
    return Real(file)->pMethods->xSectorSize(Real(file));
  }
  static int DeviceCharacteristics(sqlite3_file* file) {
    return Real(file)->pMethods->xDeviceCharacteristics(Real(file));
  }
  // The -shm index is shared memory, rebuilt from the WAL by the first connection after a crash;
  // it needs no fault injection.
  static int ShmMap(sqlite3_file* file, int page, int size, int extend, void volatile** out) {
    return Real(file)->pMethods->xShmMap(Real(file), page, size, extend, out);
  }
  static int ShmLock(sqlite3_file* file, int offset, int n, int flags) {
    return Real(file)->pMethods->xShmLock(Real(file), offset, n, flags);
  }
  static void ShmBarrier(sqlite3_file* file) { Real(file)->pMethods->xShmBarrier(Real(file)); }
  static int ShmUnmap(sqlite3_file* file, int delete_flag) {
    return Real(file)->pMethods->xShmUnmap(Real(file), delete_flag);
  }
  static int Fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
    return Real(file)->pMethods->xFetch(Real(file), offset, amount, out);
  }
  static int Unfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
    return Real(file)->pMethods->xUnfetch(Real(file), offset, page);
  }

  static const sqlite3_io_methods* Methods() {
    static const sqlite3_io_methods methods = {
        3,
        Close,
        Read,
        Write,
        Truncate,
        Sync,
        FileSize,
        Lock,
        Unlock,
        CheckReservedLock,
        FileControl,
        SectorSize,
        DeviceCharacteristics,
        ShmMap,
        ShmLock,
        ShmBarrier,
        ShmUnmap,
        Fetch,
        Unfetch,
    };
    return &methods;
  }

  // --- sqlite3_vfs ---
  static int Open(sqlite3_vfs* vfs, const char* name, sqlite3_file* file, int flags,
                  int* out_flags) {
    FaultInjectionVfs* self = Self(vfs);
    FaultFile* f = AsFault(file);
    f->base.pMethods = nullptr;
    f->vfs = self;
    f->real()->pMethods = nullptr;
    MutexLock lock(&self->mu_);
    if (self->power_cut_) return SQLITE_CANTOPEN;
    const int rc = self->base_->xOpen(self->base_, name, f->real(), flags, out_flags);
    if (rc != SQLITE_OK) {
      if (f->real()->pMethods != nullptr) f->real()->pMethods->xClose(f->real());
      return rc;
    }
    const int durable = SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_WAL;
    f->path = name != nullptr && (flags & durable) != 0 ? name : nullptr;
    if (f->path != nullptr && self->files_.count(f->path) == 0) {
      sqlite3_int64 size = 0;
      (void)f->real()->pMethods->xFileSize(f->real(), &size);  // what is on disk counts as synced
      self->files_[f->path].synced_size = static_cast<std::uint64_t>(size);
    }
    f->base.pMethods = Methods();
    return SQLITE_OK;
  }
  static int Delete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
    FaultInjectionVfs* self = Self(vfs);
    MutexLock lock(&self->mu_);
    if (self->power_cut_) return SQLITE_IOERR_DELETE;
    const int rc = self->base_->xDelete(self->base_, name, sync_dir);
    if (rc == SQLITE_OK) self->files_.erase(name);
    return rc;
  }
  static int Access(sqlite3_vfs* vfs, const char* name, int flags, int* out) {
    return Self(vfs)->base_->xAccess(Self(vfs)->base_, name, flags, out);
  }
  static int FullPathname(sqlite3_vfs* vfs, const char* name, int size, char* out) {
    return Self(vfs)->base_->xFullPathname(Self(vfs)->base_, name, size, out);
  }
  static void* DlOpen(sqlite3_vfs* vfs, const char* name) {
    return Self(vfs)->base_->xDlOpen(Self(vfs)->base_, name);
  }
  static void DlError(sqlite3_vfs* vfs, int size, char* out) {
    Self(vfs)->base_->xDlError(Self(vfs)->base_, size, out);
  }
  static void (*DlSym(sqlite3_vfs* vfs, void* handle, const char* symbol))(void) {
    return Self(vfs)->base_->xDlSym(Self(vfs)->base_, handle, symbol);
  }
  static void DlClose(sqlite3_vfs* vfs, void* handle) {
    Self(vfs)->base_->xDlClose(Self(vfs)->base_, handle);
  }
  static int Randomness(sqlite3_vfs* vfs, int size, char* out) {
    return Self(vfs)->base_->xRandomness(Self(vfs)->base_, size, out);
  }
  static int Sleep(sqlite3_vfs* vfs, int micros) {
    return Self(vfs)->base_->xSleep(Self(vfs)->base_, micros);
  }
  static int CurrentTime(sqlite3_vfs* vfs, double* out) {
    return Self(vfs)->base_->xCurrentTime(Self(vfs)->base_, out);
  }
  static int GetLastError(sqlite3_vfs* vfs, int size, char* out) {
    return Self(vfs)->base_->xGetLastError(Self(vfs)->base_, size, out);
  }
  static int CurrentTimeInt64(sqlite3_vfs* vfs, sqlite3_int64* out) {
    return Self(vfs)->base_->xCurrentTimeInt64(Self(vfs)->base_, out);
  }
};

FaultInjectionVfs::FaultInjectionVfs(std::string name)
    : name_(std::move(name)), base_(sqlite3_vfs_find(nullptr)) {
  LOCKSTEP_CHECK(base_ != nullptr && base_->iVersion >= 2);
  vfs_ = sqlite3_vfs{};
  vfs_.iVersion = 2;
  vfs_.szOsFile = static_cast<int>(sizeof(FaultFile)) + base_->szOsFile;
  vfs_.mxPathname = base_->mxPathname;
  vfs_.zName = name_.c_str();
  vfs_.pAppData = this;
  vfs_.xOpen = FaultVfsCallbacks::Open;
  vfs_.xDelete = FaultVfsCallbacks::Delete;
  vfs_.xAccess = FaultVfsCallbacks::Access;
  vfs_.xFullPathname = FaultVfsCallbacks::FullPathname;
  vfs_.xDlOpen = FaultVfsCallbacks::DlOpen;
  vfs_.xDlError = FaultVfsCallbacks::DlError;
  vfs_.xDlSym = FaultVfsCallbacks::DlSym;
  vfs_.xDlClose = FaultVfsCallbacks::DlClose;
  vfs_.xRandomness = FaultVfsCallbacks::Randomness;
  vfs_.xSleep = FaultVfsCallbacks::Sleep;
  vfs_.xCurrentTime = FaultVfsCallbacks::CurrentTime;
  vfs_.xGetLastError = FaultVfsCallbacks::GetLastError;
  vfs_.xCurrentTimeInt64 = FaultVfsCallbacks::CurrentTimeInt64;
  LOCKSTEP_CHECK(sqlite3_vfs_register(&vfs_, /*makeDflt=*/0) == SQLITE_OK);
}

FaultInjectionVfs::~FaultInjectionVfs() {
  sqlite3_vfs_unregister(&vfs_);
}

void FaultInjectionVfs::CutPower() {
  MutexLock lock(&mu_);
  power_cut_ = true;
}

std::uint64_t FaultInjectionVfs::syncs() const {
  MutexLock lock(&mu_);
  return syncs_;
}

Status FaultInjectionVfs::DropUnsyncedWrites() {
  MutexLock lock(&mu_);
  for (const auto& [path, state] : files_) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) continue;
      return PosixError(path, "open");
    }
    Status status;
    for (auto undo = state.undo.rbegin(); undo != state.undo.rend() && status.ok(); ++undo) {
      const auto written =
          ::pwrite(fd, undo->bytes.data(), undo->bytes.size(), static_cast<off_t>(undo->offset));
      if (written != static_cast<ssize_t>(undo->bytes.size())) status = PosixError(path, "pwrite");
    }
    if (status.ok() && ::ftruncate(fd, static_cast<off_t>(state.synced_size)) != 0) {
      status = PosixError(path, "ftruncate");
    }
    ::close(fd);
    LOCKSTEP_RETURN_IF_ERROR(status);
  }
  files_.clear();
  power_cut_ = false;
  return Status::Ok();
}

}  // namespace lockstep::store
