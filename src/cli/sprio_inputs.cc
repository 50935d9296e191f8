#include "cli/sprio_inputs.h"

#include <string>

namespace lockstep::cli {
namespace {

// A weight as scontrol show config prints it: a decimal number; anything else is a bad answer.
Result<std::int64_t> Weight(const nlohmann::json& config, const char* key) {
  if (!config.contains(key)) return std::int64_t{0};
  const nlohmann::json& v = config[key];
  if (v.is_number_integer()) return v.get<std::int64_t>();
  const std::string text = v.is_string() ? v.get<std::string>() : "";
  std::size_t used = 0;
  std::int64_t n = 0;
  try {
    n = std::stoll(text, &used);
  } catch (...) {
    used = 0;
  }
  if (text.empty() || used != text.size())
    return InvalidArgument(std::string("lockstepd's ") + key + " is not a number: " + v.dump());
  return n;
}

}  // namespace

Result<SprioConfig> FetchSprioConfig(client::ApiClient& api) {
  Result<nlohmann::json> config = api.Get("/api/v1/config");
  if (!config.ok()) return config.status();
  SprioConfig out;
  out.cluster = config->value("ClusterName", "");
  SprioWeights& w = out.weights;
  const std::pair<const char*, std::int64_t*> keys[] = {
      {"PriorityWeightAge", &w.age},
      {"PriorityWeightAssoc", &w.assoc},
      {"PriorityWeightFairShare", &w.fairshare},
      {"PriorityWeightJobSize", &w.job_size},
      {"PriorityWeightPartition", &w.partition},
      {"PriorityWeightQOS", &w.qos},
  };
  for (const auto& [key, field] : keys) {
    Result<std::int64_t> v = Weight(*config, key);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  const std::string tres = config->value("PriorityWeightTRES", "");
  w.tres = tres == "(null)" ? "" : tres;
  return out;
}

Result<std::set<unsigned long long>> FetchHeldJobs(client::ApiClient& api) {
  Result<nlohmann::json> jobs = api.Get("/api/v1/jobs?state=PENDING");
  if (!jobs.ok()) return jobs.status();
  std::set<unsigned long long> held;
  for (const nlohmann::json& j : (*jobs)["jobs"]) {
    const std::string reason = j.value("reason", "");
    if (reason == "JobHeldUser" || reason == "JobHeldAdmin") held.insert(j.value("job_id", 0ULL));
  }
  return held;
}

}  // namespace lockstep::cli
