#include "cli/what_if.h"

#include <cstdio>
#include <ctime>

#include "cli/cli_util.h"

namespace lockstep::cli {

std::string TestOnlyLine(const std::string& command, const nlohmann::json& answer) {
  const long long start = answer.value("start", 0LL);
  char when[32] = "Unknown";
  if (start > 0) {
    const std::time_t t = static_cast<std::time_t>(start);
    std::tm tm{};
    ::localtime_r(&t, &tm);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  }
  const std::string nodes = answer.value("nodes", "");
  return command + ": Job " + std::to_string(answer.value("job_id", 0ULL)) + " to start at " +
         when + " using " + std::to_string(answer.value("cpus", 0LL)) + " processors on nodes " +
         (nodes.empty() ? "(null)" : nodes) + " in partition " + answer.value("partition", "") +
         "\n";
}

int ReportTestOnly(const std::string& command, client::ApiClient& api, const jobspec::JobSpec& spec) {
  Result<nlohmann::json> r =
      api.Post("/api/v1/jobs/test", nlohmann::json::parse(jobspec::JobSpecToJson(spec)));
  if (!r.ok()) return Fail(command, "allocation failure: " + r.status().message());
  const std::string line = TestOnlyLine(command, *r);
  std::fputs(line.c_str(), stderr);  // Slurm prints it through its info(), on stderr
  return 0;
}

}  // namespace lockstep::cli
