// sbatch.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <iterator>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "jobspec/sbatch.h"

namespace lockstep::cli {

int RunSbatch(int argc, char** argv) {
  jobspec::SbatchInput in;
  in.args = Args(argc, argv);
  if (std::optional<int> rc = SbatchHelpRequested(in.args, false)) return *rc;
  in.env = Environment();
  in.cwd = CurrentDir();
  in.now = std::time(nullptr);
  in.read_file = ReadTextFile;
  in.read_stdin = []() -> Result<std::string> {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  };
  Result<jobspec::JobSpec> job = jobspec::ParseSbatch(in);
  if (!job.ok()) return FailOptions("sbatch", job.status());
  client::ApiClient api;
  Result<nlohmann::json> r =
      api.Post("/api/v1/jobs", nlohmann::json::parse(jobspec::JobSpecToJson(*job)));
  if (!r.ok()) return Fail("sbatch", "Batch job submission failed: " + r.status().message());
  if (job->parsable)
    std::printf("%llu\n", (*r)["job_id"].get<unsigned long long>());
  else
    std::printf("Submitted batch job %llu\n", (*r)["job_id"].get<unsigned long long>());
  return 0;
}

}  // namespace lockstep::cli
