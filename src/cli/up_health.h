// `lockstep up`'s fleet-health options (docs/health.md, "On one machine"): the `health:` section
// of the cluster it writes, and the host's GPUs as NVML sees them, for `lockstep up --nvml`.
#pragma once

#include <string>

#include "common/status.h"

namespace lockstep::cli {

// The cluster YAML's `health:` section for --health-program and --health-interval ("" when
// neither is given). The program must be an executable file, named absolutely in the YAML.
Result<std::string> UpHealthYaml(const std::string& program, int interval_s);

// The cluster YAML's `prolog:` and `epilog:` for --prolog and --epilog ("" when neither is
// given); each must be an executable file, named absolutely in the YAML.
Result<std::string> UpJobHooksYaml(const std::string& prolog, const std::string& epilog);

struct HostGpus {
  int count = 0;
  std::string type;  // "h100", from the product name
};

// The host's GPUs through NVML, as `lockstep-agent --list-gpus` (beside this binary) reports
// them; an error when there are none (no driver, or libnvidia-ml.so.1 cannot be loaded).
Result<HostGpus> DetectHostGpus(const std::string& agent_path, const std::string& state_dir);

}  // namespace lockstep::cli
