// `lockstep why`: a pending job's reason, priority by factor, expected start and blockers.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/field_format.h"
#include "common/duration.h"

namespace lockstep::cli {
namespace {

Result<nlohmann::json> Fetch(client::ApiClient& api, const std::string& target) {
  return api.Get(target);
}

}  // namespace

int RunWhy(int argc, char** argv) {
  CLI::App app{
      "Why a job is pending, its priority by factor, its expected start and what blocks it",
      "lockstep why"};
  unsigned long long id = 0;
  bool json = false;
  app.add_option("job_id", id, "the job")->required();
  app.add_flag("--json", json, "the API's JSON");
  CLI11_PARSE(app, argc, argv);
  client::ApiClient api;
  Result<nlohmann::json> r = Fetch(api, "/api/v1/jobs/" + std::to_string(id) + "/why");
  if (!r.ok()) return Fail("lockstep why", r.status());
  const nlohmann::json& j = *r;
  if (json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  // What users wrote (the name, a reason naming them) is printed escaped (JStr).
  std::string state = JStr(j, "state");
  std::printf("job %llu (%s) is %s", id, JStr(j, "name").c_str(), state.c_str());
  const bool pending = state == "PENDING";
  if (!pending)
    std::printf("%s\n", state == "RUNNING" ? (" on " + JStr(j, "nodes")).c_str() : "");
  else
    std::printf(": %s\n", JStr(j, "reason").c_str());
  // Why its last run did not complete: the answer to "was it my code or the machine?".
  if (auto failure = j.find("failure"); failure != j.end() && failure->is_object()) {
    const long long restarts = j.value("restart_count", 0ll);
    const bool requeued = restarts > 0 && (pending || state == "RUNNING");
    std::printf("  %s  %s: %s\n", requeued ? "last run's cause" : "failure cause",
                JStr(*failure, "cause").c_str(), JStr(*failure, "detail").c_str());
    if (restarts > 0) std::printf("  restarts  %lld (SLURM_RESTART_COUNT)\n", restarts);
  }
  if (!pending) return 0;
  std::printf("  priority  %llu", j.value("priority", 0ull));
  if (j.contains("priority_factors")) {
    const auto& f = j["priority_factors"];
    std::printf(
        " = age %.0f + fairshare %.0f + jobsize %.0f + partition %.0f + qos %.0f + tres %.0f - "
        "nice %d",
        f.value("age", 0.0), f.value("fairshare", 0.0), f.value("job_size", 0.0),
        f.value("partition", 0.0), f.value("qos", 0.0), f.value("tres", 0.0), f.value("nice", 0));
  }
  std::printf("\n");
  long long start = j.value("expected_start", 0ll);
  if (start > 0) {
    std::time_t t = static_cast<std::time_t>(start);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
    long long in = start - static_cast<long long>(std::time(nullptr));
    std::printf("  expected start  %s (in %s)%s\n", buf,
                FormatSlurmDuration(std::max(0ll, in)).c_str(),
                j.value("reserved", false) ? ", resources reserved: nothing may delay it" : "");
  } else {
    std::printf("  expected start  unknown\n");
  }
  if (!JStr(j, "reserved_nodes").empty())
    std::printf("  reserved nodes  %s\n", JStr(j, "reserved_nodes").c_str());
  if (j.contains("blocked_by") && !j["blocked_by"].empty())
    std::printf("  waits for jobs  %s to end\n", j["blocked_by"].dump().c_str());
  if (j.contains("ahead") && !j["ahead"].empty())
    std::printf("  ahead of it     %zu pending job(s) of higher priority\n", j["ahead"].size());
  return 0;
}

}  // namespace lockstep::cli
