#include "cli/format/scontrol_config.h"

#include <cstdio>
#include <map>

namespace lockstep::cli {

std::string FormatScontrolShowConfig(const nlohmann::json& config, std::time_t now) {
  char when[32];
  std::tm tm{};
  ::localtime_r(&now, &tm);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out = std::string("Configuration data as of ") + when + "\n";
  std::map<std::string, std::string> sorted;
  for (const auto& [key, value] : config.items())
    sorted[key] = value.is_string() ? value.get<std::string>() : value.dump();
  for (const auto& [key, value] : sorted) {
    char line[64];
    std::snprintf(line, sizeof line, "%-23s = ", key.c_str());
    out += line + value + "\n";
  }
  return out;
}

}  // namespace lockstep::cli
