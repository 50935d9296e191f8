// lockstep logs JOBID: the output of a job's run. On the kubernetes backend, its pods' logs
// (prefixed by pod when there are several); with lockstep's agents, the job's output file when
// lockstepd's host has it.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/cli_util.h"
#include "cli/commands.h"

namespace lockstep::cli {

int RunLogs(int argc, char** argv) {
  CLI::App app{"Print the output of a job (its pods' logs on Kubernetes)", "lockstep logs"};
  std::string id;
  app.add_option("job_id", id, "the job")->required();
  CLI11_PARSE(app, argc, argv);
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    return Fail("lockstep logs", "invalid job id specified: " + id);
  client::ApiClient api;
  Result<nlohmann::json> r = api.Get("/api/v1/jobs/" + id + "/logs");
  if (!r.ok()) return Fail("lockstep logs", r.status());
  std::string text = r->value("logs", "");
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
  return 0;
}

}  // namespace lockstep::cli
