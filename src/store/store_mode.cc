#include "store/store_mode.h"

#include <fmt/format.h>
#include <sys/vfs.h>

#include <cerrno>
#include <cstring>

namespace lockstep::store {

namespace {

// statfs f_type values (linux/magic.h and the file systems' own sources) of file systems whose
// shared memory is not coherent across hosts. FUSE covers GlusterFS, s3fs, CephFS and Lustre
// through their FUSE clients; EFS and Filestore are NFS.
struct NetworkMagic {
  unsigned long magic;
  const char* name;
};
constexpr NetworkMagic kNetworkFilesystems[] = {
    {0x6969, "nfs"},          {0x517B, "smb"},          {0xFF534D42, "cifs"},
    {0xFE534D42, "smb2"},     {0x00C36400, "cephfs"},   {0x65735546, "fuse"},
    {0x0BD00BD0, "lustre"},   {0x47504653, "gpfs"},     {0x5346414F, "afs"},
    {0x6B414653, "afs"},      {0x01021997, "9p"},       {0x7461636F, "ocfs2"},
    {0x01161970, "gfs2"},     {0x13661366, "orangefs"}, {0x19830326, "beegfs"},
};

}  // namespace

std::string_view StoreModeName(StoreMode mode) {
  switch (mode) {
    case StoreMode::kWal:
      return "wal";
    case StoreMode::kExclusive:
      return "exclusive";
    case StoreMode::kTruncate:
      return "truncate";
  }
  return "wal";
}

Result<FilesystemKind> DetectFilesystem(const std::string& directory) {
  struct statfs st {};
  if (::statfs(directory.c_str(), &st) != 0) {
    return IoError(fmt::format("{}: statfs: {}", directory, std::strerror(errno)));
  }
  const auto magic = static_cast<unsigned long>(st.f_type) & 0xFFFFFFFFUL;
  for (const NetworkMagic& n : kNetworkFilesystems) {
    if (n.magic == magic) return FilesystemKind{n.name, true};
  }
  return FilesystemKind{fmt::format("local (statfs type {:#x})", magic), false};
}

Result<StoreMode> ChooseStoreMode(std::string_view setting, const FilesystemKind& fs,
                                  std::string_view where) {
  if (setting == "auto") return fs.network ? StoreMode::kExclusive : StoreMode::kWal;
  if (setting == "exclusive") return StoreMode::kExclusive;
  if (setting == "truncate") return StoreMode::kTruncate;
  if (setting == "wal") {
    if (!fs.network) return StoreMode::kWal;
    return InvalidArgument(fmt::format(
        "{}: wal needs shared memory that {} does not keep coherent; use exclusive, truncate or "
        "auto on this volume",
        where, fs.name));
  }
  return InvalidArgument(fmt::format(
      "{}: '{}' is not a store mode (auto, wal, exclusive or truncate)", where, setting));
}

Result<StoreMode> ResolveStoreMode(std::string_view setting, const std::string& directory,
                                   std::string_view where) {
  Result<FilesystemKind> fs = DetectFilesystem(directory);
  if (!fs.ok()) return fs.status();
  return ChooseStoreMode(setting, *fs, where);
}

}  // namespace lockstep::store
