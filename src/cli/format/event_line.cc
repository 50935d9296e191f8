#include "cli/format/event_line.h"

#include <ctime>

#include "cli/format/field_format.h"

namespace lockstep::cli {
namespace {

std::string IsoTime(std::int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

// A value as text: strings with control characters escaped (users name their jobs).
std::string Text(const nlohmann::json& v) {
  if (v.is_string()) return EscapeControl(v.get<std::string>());
  if (v.is_array()) {
    std::string out;
    for (const nlohmann::json& x : v) out += (out.empty() ? "" : ",") + Text(x);
    return out;
  }
  return v.dump();
}

}  // namespace

std::string FormatEventLine(const nlohmann::json& e) {
  std::string out = IsoTime(e.value("time", std::int64_t{0}));
  const std::string kind = e.value("kind", "");
  if (e.contains("job"))
    out += " job " + Text(e["job"]) + " " + kind;
  else if (e.contains("node"))
    out += " node " + Text(e["node"]) + " " + (kind.rfind("node_", 0) == 0 ? kind.substr(5) : kind);
  else
    out += " " + kind;
  for (const char* key :
       {"state", "exit_code", "signal", "reason", "cause", "user", "partition", "name", "nodes"}) {
    if (!e.contains(key) || (e[key].is_string() && e[key].get<std::string>().empty())) continue;
    out += std::string(" ") + key + "=" + Text(e[key]);
  }
  return out;
}

}  // namespace lockstep::cli
