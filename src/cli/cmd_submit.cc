// sbatch and scancel.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <iterator>
#include <string>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "spec/sbatch.h"

namespace lockstep::cli {

int RunSbatch(int argc, char** argv) {
  spec::SbatchInput in;
  in.args = Args(argc, argv);
  in.env = Environment();
  in.cwd = CurrentDir();
  in.now = std::time(nullptr);
  in.read_file = ReadTextFile;
  bool has_script = false;
  for (const std::string& a : in.args) has_script |= !a.empty() && a[0] != '-';
  if (!isatty(STDIN_FILENO) && in.args.end() == std::find_if(in.args.begin(), in.args.end(), [](const std::string& a) {
        return a.rfind("--wrap", 0) == 0;
      }) && !has_script)
    in.stdin_script.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  Result<spec::JobSpec> job = spec::ParseSbatch(in);
  if (!job.ok()) return Fail("sbatch", job.status());
  client::ApiClient api;
  Result<nlohmann::json> r = api.Post("/api/v1/jobs", nlohmann::json::parse(spec::JobSpecToJson(*job)));
  if (!r.ok()) return Fail("sbatch", "Batch job submission failed: " + r.status().message());
  if (job->parsable) std::printf("%llu\n", (*r)["job_id"].get<unsigned long long>());
  else std::printf("Submitted batch job %llu\n", (*r)["job_id"].get<unsigned long long>());
  return 0;
}

namespace {

int SignalNumber(const std::string& name) {
  static const std::pair<const char*, int> kSignals[] = {
      {"HUP", SIGHUP}, {"INT", SIGINT}, {"QUIT", SIGQUIT}, {"KILL", SIGKILL}, {"USR1", SIGUSR1},
      {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}};
  std::string n = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
  for (auto& [s, v] : kSignals)
    if (n == s) return v;
  try {
    return std::stoi(n);
  } catch (...) {
    return -1;
  }
}

}  // namespace

int RunScancel(int argc, char** argv) {
  CLI::App app{"Cancel jobs, or signal them", "scancel"};
  std::vector<std::string> ids;
  std::string user, state, name, signal;
  app.add_option("job_id", ids, "JOBID, JOBID_TASK or an array's JOBID");
  app.add_option("-u,--user", user, "cancel this user's jobs");
  app.add_option("-t,--state", state, "only jobs in this state (PENDING, RUNNING, SUSPENDED)");
  app.add_option("-n,--name,--jobname", name, "only jobs with this name");
  app.add_option("-s,--signal", signal, "send this signal instead of cancelling");
  CLI11_PARSE(app, argc, argv);
  int signo = 0;
  if (!signal.empty() && (signo = SignalNumber(signal)) <= 0) return Fail("scancel", "Invalid signal specified: " + signal);
  if (ids.empty() && user.empty() && name.empty() && state.empty())
    return Fail("scancel", "No job identification provided");
  client::ApiClient api;
  std::string query = "?";
  if (!user.empty()) query += "user=" + client::UrlEncode(user) + "&";
  if (!state.empty()) query += "state=" + client::UrlEncode(state == "PD" ? "PENDING" : state == "R" ? "RUNNING" : state) + "&";
  Result<nlohmann::json> list = api.Get("/api/v1/jobs" + query);
  if (!list.ok()) return Fail("scancel", list.status());
  int rc = 0;
  bool matched_any = false;
  for (const auto& j : (*list)["jobs"]) {
    std::string id = std::to_string(j["job_id"].get<unsigned long long>());
    std::string array_id = j.contains("array_job_id") ? std::to_string(j["array_job_id"].get<unsigned long long>()) : "";
    std::string task = j.contains("array_task_id") ? array_id + "_" + std::to_string(j["array_task_id"].get<unsigned>()) : "";
    bool wanted = ids.empty();
    for (const std::string& want : ids) wanted |= want == id || want == array_id || want == task;
    if (!wanted || (!name.empty() && j.value("name", "") != name)) continue;
    matched_any = true;
    Result<nlohmann::json> r = api.Post("/api/v1/jobs/" + id + "/cancel", {{"signal", signo}});
    if (!r.ok()) {
      std::fprintf(stderr, "scancel: error: Kill job error on job id %s: %s\n", task.empty() ? id.c_str() : task.c_str(),
                   r.status().message().c_str());
      rc = 1;
    }
  }
  for (const std::string& want : ids) {
    bool found = false;
    for (const auto& j : (*list)["jobs"]) {
      std::string id = std::to_string(j["job_id"].get<unsigned long long>());
      std::string array_id = j.contains("array_job_id") ? std::to_string(j["array_job_id"].get<unsigned long long>()) : "";
      std::string task = j.contains("array_task_id") ? array_id + "_" + std::to_string(j["array_task_id"].get<unsigned>()) : "";
      found |= want == id || want == array_id || want == task;
    }
    if (!found) {
      std::fprintf(stderr, "scancel: error: Invalid job id %s\n", want.c_str());
      rc = 1;
    }
  }
  (void)matched_any;
  return rc;
}

}  // namespace lockstep::cli
