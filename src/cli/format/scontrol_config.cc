#include "cli/format/scontrol_config.h"

#include <cstdio>
#include <map>
#include <set>

namespace lockstep::cli {
namespace {

// Slurm's time stamp (slurm_make_time_str): "2025-12-02T17:20:00" in local time.
std::string LocalStamp(std::time_t t) {
  char when[32];
  std::tm tm{};
  ::localtime_r(&t, &tm);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  return when;
}

// "Key = Value" with the key padded to 23 columns (slurm_print_key_pairs' "%-23s = %s").
std::string KeyLine(const std::string& key, const std::string& value) {
  char padded[64];
  std::snprintf(padded, sizeof padded, "%-23s = ", key.c_str());
  return padded + value + "\n";
}

// lockstepd's value as printed: strings as they are, BOOT_TIME's seconds as a time stamp.
std::string ValueText(const std::string& key, const nlohmann::json& value) {
  if (key == "BOOT_TIME" && value.is_number_integer())
    return LocalStamp(static_cast<std::time_t>(value.get<std::int64_t>()));
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

std::string FormatScontrolShowConfig(const nlohmann::json& config, std::time_t now) {
  std::string out = "Configuration data as of " + LocalStamp(now) + "\n";
  std::set<std::string> slurms;
  for (const SlurmConfigKey& key : SlurmConfigKeys()) {
    slurms.insert(key.name);
    const auto it = config.find(key.name);
    out += KeyLine(key.name, it != config.end() ? ValueText(key.name, *it) : key.slurm_default);
  }
  std::map<std::string, std::string> lockstep_only;  // sorted
  for (const auto& [key, value] : config.items())
    if (!slurms.count(key)) lockstep_only[key] = ValueText(key, value);
  for (const auto& [key, value] : lockstep_only) out += KeyLine(key, value);
  // scontrol pings the controllers after the keys; the answer just read says this one is up.
  const auto host = config.find("SlurmctldHost[0]");
  out += "\nSlurmctld(primary) at " +
         (host != config.end() ? ValueText("", *host) : std::string("localhost")) + " is UP\n";
  return out;
}

}  // namespace lockstep::cli
