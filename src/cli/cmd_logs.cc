// lockstep logs JOBID [-f]: the output of a job's run. On the kubernetes backend, its pods' logs
// (prefixed by pod when there are several); with lockstep's agents, the job's output file when
// lockstepd's host has it. -f follows the run until the job ends, as `kubectl logs -f` does.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <thread>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/log_follow.h"

namespace lockstep::cli {
namespace {

void Print(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

bool Finished(const std::string& state) {
  return state != "PENDING" && state != "RUNNING" && state != "CONFIGURING" &&
         state != "COMPLETING" && state != "SUSPENDED" && state != "REQUEUED";
}

// Polls the job and its logs until the job has ended, printing what is new: new lines as they
// are written, each run's from its start. Logs that cannot be read yet (a pod still starting)
// are waited for; once the job has ended, the last read is final.
int Follow(client::ApiClient& api, const std::string& id) {
  LogFollower follower(std::stoull(id));
  long long run = -1;
  for (;;) {
    // A job that ended more than MinJobAge ago is no longer listed: its why (from the store).
    Result<nlohmann::json> job = api.Get("/api/v1/jobs/" + id);
    if (!job.ok() && job.status().code() == StatusCode::kNotFound)
      job = api.Get("/api/v1/jobs/" + id + "/why");
    if (!job.ok()) return Fail("lockstep logs", job.status());
    const bool finished = Finished(job->value("state", ""));
    if (long long r = job->value("restart_count", 0LL); r != run) {
      if (run >= 0) follower = LogFollower(std::stoull(id));  // a requeued job's new run
      run = r;
    }
    Result<nlohmann::json> logs = api.Get("/api/v1/jobs/" + id + "/logs");
    if (logs.ok()) Print(follower.Next(logs->value("logs", ""), finished));
    if (finished) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));  // the API has no watch on logs
  }
}

}  // namespace

int RunLogs(int argc, char** argv) {
  CLI::App app{"Print the output of a job (its pods' logs on Kubernetes)", "lockstep logs"};
  std::string id;
  bool follow = false;
  app.add_option("job_id", id, "the job")->required();
  app.add_flag("-f,--follow", follow, "print new output as it comes, until the job ends");
  CLI11_PARSE(app, argc, argv);
  if (id.empty() || id.size() > 19 || id.find_first_not_of("0123456789") != std::string::npos)
    return Fail("lockstep logs", "invalid job id specified: " + id);
  client::ApiClient api;
  if (follow) return Follow(api, id);
  Result<nlohmann::json> r = api.Get("/api/v1/jobs/" + id + "/logs");
  if (!r.ok()) return Fail("lockstep logs", r.status());
  std::string text = r->value("logs", "");
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
  return 0;
}

}  // namespace lockstep::cli
