// scontrol show config as Slurm 22.05 prints it, from GET /api/v1/config: a dated first line,
// every key Slurm prints in Slurm's order ("Key = Value", keys padded to 23 columns), lockstep's
// own keys after them, then a blank line and the controller's state. Pure; thread-safe.
#pragma once

#include <ctime>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

namespace lockstep::cli {

// One key of Slurm's `scontrol show config` and the value Slurm prints when slurm.conf does
// not set it.
struct SlurmConfigKey {
  const char* name;
  const char* slurm_default;
};

// Slurm 22.05's keys in the order it prints them (scontrol_config_keys.cc).
std::span<const SlurmConfigKey> SlurmConfigKeys();

// `config` is lockstepd's {"Key": "value"}: its value wins where it has one, Slurm's default
// fills the rest. Its keys Slurm does not have follow Slurm's, sorted. BOOT_TIME may be a time
// stamp (seconds), printed in local time as the first line's `now` is. The last line names
// SlurmctldHost[0] as UP: the configuration was just read from it.
std::string FormatScontrolShowConfig(const nlohmann::json& config, std::time_t now);

}  // namespace lockstep::cli
