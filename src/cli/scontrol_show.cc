#include "cli/scontrol_show.h"

#include <cstdio>
#include <ctime>

#include "cli/cli_util.h"
#include "cli/format/scontrol_steps.h"
#include "cli/format/scontrol_topology.h"

namespace lockstep::cli {

int ShowSteps(client::ApiClient& api, const std::string& id, bool oneliner) {
  const std::size_t dot = id.find('.');
  const std::string job = id.substr(0, dot);
  const std::string step = dot == std::string::npos ? "" : id.substr(dot + 1);
  Result<nlohmann::json> jobs =
      job.empty() ? api.Get("/api/v1/jobs") : api.Get("/api/v1/jobs/" + job);
  if (!jobs.ok() && jobs.status().code() == StatusCode::kNotFound) {
    std::fputs("slurm_get_job_steps error: Invalid job id specified\n", stderr);  // Slurm's words
    return 1;
  }
  if (!jobs.ok()) return Fail("scontrol", jobs.status());
  Result<std::string> text = FormatScontrolShowSteps(*jobs, step, {oneliner, std::time(nullptr)});
  if (!text.ok()) return Fail("scontrol", text.status());
  if (!text->empty()) {
    std::fputs(text->c_str(), stdout);
    return 0;
  }
  if (job.empty()) {
    std::puts("No job steps in the system");
    return 0;
  }
  // Slurm 22.05 prints the step it looked for; for a whole job that is NO_VAL (0xfffffffe).
  std::printf("Job step %s.%s not found\n", job.c_str(),
              step.empty() ? "4294967294" : step.c_str());
  return 1;
}

int ShowTopology(client::ApiClient& api, const std::string& name) {
  Result<nlohmann::json> topology = api.Get("/api/v1/topology");
  if (!topology.ok()) return Fail("scontrol", topology.status());
  Result<std::string> text = FormatScontrolShowTopology(*topology, name);
  if (!text.ok()) {
    Fail("scontrol", text.status());  // "scontrol: error: ...", as Slurm's error()
    return 0;
  }
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace lockstep::cli
