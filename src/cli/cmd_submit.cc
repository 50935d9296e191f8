// sbatch and scancel.
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
  in.env = Environment();
  in.cwd = CurrentDir();
  in.now = std::time(nullptr);
  in.read_file = ReadTextFile;
  bool has_script = false;
  for (const std::string& a : in.args) has_script |= !a.empty() && a[0] != '-';
  if (!isatty(STDIN_FILENO) &&
      in.args.end() ==
          std::find_if(in.args.begin(), in.args.end(),
                       [](const std::string& a) { return a.rfind("--wrap", 0) == 0; }) &&
      !has_script)
    in.stdin_script.assign(std::istreambuf_iterator<char>(std::cin),
                           std::istreambuf_iterator<char>());
  Result<jobspec::JobSpec> job = jobspec::ParseSbatch(in);
  if (!job.ok()) return Fail("sbatch", job.status());
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

namespace {

int SignalNumber(const std::string& name) {
  static const std::pair<const char*, int> kSignals[] = {
      {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"KILL", SIGKILL},
      {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"CONT", SIGCONT},
      {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}};
  std::string n = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
  for (auto& [s, v] : kSignals)
    if (n == s) return v;
  try {
    return std::stoi(n);
  } catch (...) {
    return -1;
  }
}

// The names a user may give a job by: "42", its array's "40", and "40_2".
std::vector<std::string> NamesOf(const nlohmann::json& j) {
  std::vector<std::string> names = {std::to_string(j["job_id"].get<unsigned long long>())};
  if (j.contains("array_job_id")) {
    std::string array = std::to_string(j["array_job_id"].get<unsigned long long>());
    names.push_back(array);
    names.push_back(array + "_" + std::to_string(j["array_task_id"].get<unsigned>()));
  }
  return names;
}

bool Named(const nlohmann::json& j, const std::string& want) {
  std::vector<std::string> names = NamesOf(j);
  return std::find(names.begin(), names.end(), want) != names.end();
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
  if (!signal.empty() && (signo = SignalNumber(signal)) <= 0)
    return Fail("scancel", "Invalid signal specified: " + signal);
  if (ids.empty() && user.empty() && name.empty() && state.empty())
    return Fail("scancel", "No job identification provided");
  client::ApiClient api;
  std::string query = "?";
  if (!user.empty()) query += "user=" + client::UrlEncode(user) + "&";
  if (!state.empty())
    query += "state=" +
             client::UrlEncode(state == "PD"  ? "PENDING"
                               : state == "R" ? "RUNNING"
                                              : state) +
             "&";
  Result<nlohmann::json> list = api.Get("/api/v1/jobs" + query);
  if (!list.ok()) return Fail("scancel", list.status());
  const nlohmann::json& jobs = (*list)["jobs"];
  int rc = 0;
  for (const auto& j : jobs) {
    bool wanted = ids.empty() || std::any_of(ids.begin(), ids.end(),
                                             [&](const std::string& w) { return Named(j, w); });
    if (!wanted || (!name.empty() && j.value("name", "") != name)) continue;
    std::string id = NamesOf(j).back();
    Result<nlohmann::json> r = api.Post(
        "/api/v1/jobs/" + std::to_string(j["job_id"].get<unsigned long long>()) + "/cancel",
        {{"signal", signo}});
    if (!r.ok()) {
      std::fprintf(stderr, "scancel: error: Kill job error on job id %s: %s\n", id.c_str(),
                   r.status().message().c_str());
      rc = 1;
    }
  }
  for (const std::string& want : ids) {
    if (std::none_of(jobs.begin(), jobs.end(),
                     [&](const nlohmann::json& j) { return Named(j, want); })) {
      std::fprintf(stderr, "scancel: error: Invalid job id %s\n", want.c_str());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace lockstep::cli
