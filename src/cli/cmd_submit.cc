// sbatch.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/what_if.h"
#include "jobspec/container_mounts.h"
#include "jobspec/sbatch.h"

namespace lockstep::cli {

namespace {

// sbatch --wait: polls the job until it ends; its exit code, as Slurm's sbatch returns it (1 for
// a job that ended without one: cancelled, timed out, failed on its node).
int AwaitEnd(client::ApiClient& api, unsigned long long id) {
  const std::string where = "/api/v1/jobs/" + std::to_string(id);
  while (true) {
    Result<nlohmann::json> j = api.Get(where);
    if (!j.ok()) return Fail("sbatch", j.status());
    const std::string state = (*j)["state"];
    if (state == "COMPLETED") return 0;
    if (state == "FAILED" && (*j).value("exit_code", 0) != 0) return (*j)["exit_code"].get<int>();
    if (state != "PENDING" && state != "RUNNING" && state != "COMPLETING" &&
        state != "SUSPENDED") {
      std::fprintf(stderr, "sbatch: error: Job %llu ended %s\n", id, state.c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the user's wait, polled
  }
}

// --container-mounts: each source a directory here, where the submitter sees the shared storage
// as the nodes do. A pod whose hostPath directory is missing would wait for it without end.
Status CheckMountSources(const std::string& text) {
  Result<std::vector<jobspec::ContainerMount>> mounts = jobspec::ParseContainerMounts(text);
  if (!mounts.ok()) return mounts.status();  // the parser refused it already
  for (const jobspec::ContainerMount& m : *mounts) {
    struct stat st {};
    if (::stat(m.source.c_str(), &st) != 0)
      return InvalidArgument("--container-mounts: " + m.source + ": " + std::strerror(errno));
    if (!S_ISDIR(st.st_mode))
      return InvalidArgument("--container-mounts: " + m.source +
                             ": not a directory (only directories are mounted)");
  }
  return Status::Ok();
}

}  // namespace

int RunSbatch(int argc, char** argv) {
  jobspec::SbatchInput in;
  in.args = Args(argc, argv);
  if (std::optional<int> rc = SbatchHelpRequested(in.args, "sbatch")) return *rc;
  in.env = Environment();
  in.cwd = CurrentDir();
  in.now = std::time(nullptr);
  in.read_file = ReadTextFile;
  in.read_stdin = []() -> Result<std::string> {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  };
  Result<jobspec::JobSpec> job = jobspec::ParseSbatch(in);
  if (!job.ok()) return FailOptions("sbatch", job.status());
  job->submit_line = SubmitLine(argc, argv);
  PrintOptionWarnings(job->warnings);
  if (Status st = CheckMountSources(job->container_mounts); !st.ok())
    return FailOptions("sbatch", st);
  client::ApiClient api;
  if (job->test_only) return ReportTestOnly("sbatch", api, *job);
  Result<nlohmann::json> r =
      api.Post("/api/v1/jobs", nlohmann::json::parse(jobspec::JobSpecToJson(*job)));
  if (!r.ok()) return Fail("sbatch", "Batch job submission failed: " + r.status().message());
  const unsigned long long id = (*r)["job_id"].get<unsigned long long>();
  if (r->contains("warnings"))
    for (const nlohmann::json& w : (*r)["warnings"])
      if (w.is_string()) std::fprintf(stderr, "sbatch: warning: %s\n", w.get<std::string>().c_str());
  if (job->parsable)
    std::printf("%llu\n", id);
  else
    std::printf("Submitted batch job %llu\n", id);
  std::fflush(stdout);
  return job->wait ? AwaitEnd(api, id) : 0;
}

}  // namespace lockstep::cli
