// The shared file systems as users see them (docs/storage.md): `lockstep storage`
// (GET /api/v1/storage) and the LockstepStorage line of scontrol show config; and what a
// submission asks of them: `--container-mounts` (only declared file systems) and the warning
// for a job whose directory is on none.
#include <fmt/format.h>

#include <algorithm>

#include "common/hostlist.h"
#include "controller/controller.h"
#include "jobspec/container_mounts.h"

namespace lockstep::controller {

namespace {

// The declared file system `path` lies on, or null.
const config::FileSystem* FileSystemOf(const std::vector<config::FileSystem>& storage,
                                       const std::string& path) {
  for (const config::FileSystem& fs : storage)
    if (jobspec::PathWithin(path, fs.MountPoint())) return &fs;
  return nullptr;
}

// The directories job pods get from the storage (the categories and host paths): a mount's
// target must not be one of them, as a pod's volume mounts each have their own path.
bool IsStorageDirectory(const std::vector<config::FileSystem>& storage, const std::string& path) {
  return std::any_of(storage.begin(), storage.end(), [&](const config::FileSystem& fs) {
    return path == (fs.kind == config::FileSystem::Kind::kHostPath ? fs.source : fs.category);
  });
}

}  // namespace

Status Controller::CheckContainerMountsLocked(const jobspec::JobSpec& spec) const {
  if (spec.container_mounts.empty()) return Status::Ok();
  if (!jobs_in_images_)
    return InvalidArgument(
        "--container-mounts: this cluster's jobs run on its hosts, not in containers; they see "
        "the declared file systems at their own paths (lockstep storage)");
  Result<std::vector<jobspec::ContainerMount>> mounts =
      jobspec::ParseContainerMounts(spec.container_mounts);
  if (!mounts.ok()) return InvalidArgument("--container-mounts: " + mounts.status().message());
  std::string partition = spec.partition;  // a lockstep job has one
  if (partition.empty() && !cluster_.base.partitions.empty())
    partition = cluster_.base.partitions[cluster_.default_partition].name;
  for (const jobspec::ContainerMount& m : *mounts) {
    const config::FileSystem* fs = FileSystemOf(cluster_.storage, m.source);
    if (!fs)
      return InvalidArgument(fmt::format(
          "--container-mounts: {} is not on a declared file system; only those are mounted "
          "into jobs (lockstep storage lists them)",
          m.source));
    if (!fs->partitions.empty() &&
        std::find(fs->partitions.begin(), fs->partitions.end(), partition) == fs->partitions.end())
      return InvalidArgument(fmt::format(
          "--container-mounts: {} is on {}, which partition {} does not get", m.source,
          fs->DisplayName(), partition));
    if (IsStorageDirectory(cluster_.storage, m.target))
      return InvalidArgument(fmt::format(
          "--container-mounts: {} is where job pods see the shared storage already; choose "
          "another target",
          m.target));
  }
  return Status::Ok();
}

std::vector<backend::BindMount> Controller::BindMountsLocked(const jobspec::JobSpec& spec) const {
  std::vector<backend::BindMount> out;
  Result<std::vector<jobspec::ContainerMount>> mounts =
      jobspec::ParseContainerMounts(spec.container_mounts);
  if (!mounts.ok()) return out;  // checked at submission
  for (const jobspec::ContainerMount& m : *mounts) {
    const config::FileSystem* fs = FileSystemOf(cluster_.storage, m.source);
    // Read-only storage stays read-only whatever the flag; a file system removed from the YAML
    // since submission mounts nothing (the pod would not find it).
    if (!fs) continue;
    out.push_back({m.source, m.target, m.read_only || fs->read_only});
  }
  return out;
}

std::vector<std::string> Controller::SubmitWarnings(const jobspec::JobSpec& spec) const {
  HeldLock lock(*this);
  std::vector<std::string> warnings = LimitWarningsLocked(spec);
  if (!jobs_in_images_ || spec.work_dir.empty()) return warnings;
  if (!FileSystemOf(cluster_.storage, spec.work_dir))
    warnings.push_back(fmt::format(
        "{} is not on a declared file system (lockstep storage): the job runs in its image's "
        "directory and its output goes to its pods' logs (lockstep logs)",
        spec.work_dir));
  return warnings;
}

nlohmann::json Controller::StorageView() const {
  HeldLock lock(*this);
  nlohmann::json list = nlohmann::json::array();
  const std::vector<std::vector<std::string>> nodes = cluster_.StorageNodes();
  for (std::size_t i = 0; i < cluster_.storage.size(); ++i) {
    const config::FileSystem& fs = cluster_.storage[i];
    list.push_back({{"name", fs.name},
                    {"display_name", fs.DisplayName()},
                    {"kind", config::FileSystemKindName(fs.kind)},
                    {"source", fs.source},
                    {"options", fs.options},
                    {"path", fs.MountPoint()},
                    {"category", fs.category},
                    {"read_only", fs.read_only},
                    {"partitions", fs.partitions},
                    {"nodes", CompressHostlist(nodes[i])}});
  }
  return {{"storage", list}};
}

void Controller::SetStorage(std::vector<config::FileSystem> storage) {
  HeldLock lock(*this);
  cluster_.storage = std::move(storage);
}

std::string Controller::StorageSummaryLocked() const {
  std::string out;
  for (const config::FileSystem& fs : cluster_.storage)
    out += (out.empty() ? "" : ",") + fs.DisplayName() + "=" + fs.MountPoint() + "(" +
           config::FileSystemKindName(fs.kind) + (fs.read_only ? ",ro" : ",rw") + ")";
  return out.empty() ? "(null)" : out;
}

}  // namespace lockstep::controller
