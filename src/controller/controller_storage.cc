// The shared file systems as users see them (docs/storage.md): `lockstep storage`
// (GET /api/v1/storage) and the LockstepStorage line of scontrol show config.
#include "common/hostlist.h"
#include "controller/controller.h"

namespace lockstep::controller {

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
