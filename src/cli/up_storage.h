// `lockstep up --storage DIR[:ro]` (docs/storage.md, "On one machine"): host directories that
// every node and every job pod sees at the same path, the one-machine form of a shared file
// system, written as the `storage:` section of the cluster YAML.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep::cli {

// The `storage:` section for the given DIR or DIR:ro values ("" when none): each a host path
// named after its last component (made unique), read-only with ":ro". Each DIR must be an
// existing directory; a relative one is made absolute.
Result<std::string> UpStorageYaml(const std::vector<std::string>& dirs);

}  // namespace lockstep::cli
