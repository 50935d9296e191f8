// scancel: cancel or signal jobs, array tasks and steps named by id or chosen by filters.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/slurm/job_filter.h"
#include "cli/slurm/slurm_options.h"

namespace lockstep::cli {

int SignalNumber(const std::string& name) {
  static const std::pair<const char*, int> kSignals[] = {
      {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ABRT", SIGABRT},
      {"KILL", SIGKILL}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"PIPE", SIGPIPE},
      {"ALRM", SIGALRM}, {"TERM", SIGTERM}, {"CONT", SIGCONT}, {"STOP", SIGSTOP},
      {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU}, {"URG", SIGURG},
      {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
      {"WINCH", SIGWINCH}};
  std::string n = name;
  for (char& c : n) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (n.rfind("SIG", 0) == 0) n = n.substr(3);
  for (auto& [s, v] : kSignals)
    if (n == s) return v;
  if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 2)
    return -1;
  int v = std::stoi(n);
  return v >= 1 && v <= 64 ? v : -1;
}

namespace {

struct ScancelRequest {
  JobFilter filter;
  std::string signal;
  // Where a signal goes (Slurm's scancel): the steps by default, -b the batch script's shell
  // alone, -f the batch script with its children and every step.
  std::string target = "steps";
  bool me = false;
  bool quiet = false;
  bool verbose = false;
};

std::vector<SlurmOption> ScancelOptionTable(ScancelRequest& r) {
  auto ignore = [](const std::string&) { return Status::Ok(); };
  auto states = [&r](const std::string& v) {
    for (const std::string& w : CommaSet(v)) {
      std::string name = JobStateName(w);
      if (name != "PENDING" && name != "RUNNING" && name != "SUSPENDED")
        return InvalidArgument("Invalid job state specified: " + w);
      r.filter.states.insert(name);
    }
    return Status::Ok();
  };
  return {
      {"account", 'A', OptArg::kRequired, AddCommaItems(r.filter.accounts), "act only on jobs charging this account", "account"},
      {"batch", 'b', OptArg::kNone, [&r](const std::string&) { r.target = "batch"; return Status::Ok(); }, "signal only the batch shell of specified job"},
      {"full", 'f', OptArg::kNone, [&r](const std::string&) { r.target = "full"; return Status::Ok(); }, "signal batch shell and all steps for specified job"},
      {"hurry", 'H', OptArg::kNone, ignore, "avoid burst buffer stage out (no effect)"},
      {"interactive", 'i', OptArg::kNone, ignore, "require response from user for each job (no effect)"},
      {"clusters", 'M', OptArg::kRequired, ignore, "clusters to issue commands to (this one)", "clusters"},
      {"ctld", 0, OptArg::kNone, ignore, "send the request to the controller (always)"},
      {"me", 0, OptArg::kNone, [&r](const std::string&) { r.me = true; return Status::Ok(); }, "act only on your own jobs"},
      {"name", 'n', OptArg::kRequired, AddCommaItems(r.filter.names), "act only on jobs with this name", "job_name"},
      {"jobname", 'n', OptArg::kRequired, AddCommaItems(r.filter.names), nullptr},
      {"partition", 'p', OptArg::kRequired, AddCommaItems(r.filter.partitions), "act only on jobs in this partition", "partition"},
      {"quiet", 'Q', OptArg::kNone, [&r](const std::string&) { r.quiet = true; return Status::Ok(); }, "disable warnings"},
      {"qos", 'q', OptArg::kRequired, AddCommaItems(r.filter.qos), "act only on jobs with this quality of service", "qos"},
      {"reservation", 'R', OptArg::kRequired, AddCommaItems(r.filter.reservations), "act only on jobs with this reservation", "reservation"},
      {"sibling", 0, OptArg::kRequired, ignore, "remove an active sibling job (no effect)", "cluster_name"},
      {"signal", 's', OptArg::kRequired, [&r](const std::string& v) { r.signal = v; return Status::Ok(); }, "signal to send to job, default is SIGKILL", "name | integer"},
      {"state", 't', OptArg::kRequired, states, "act only on jobs in this state (PENDING, RUNNING, SUSPENDED)", "states"},
      {"user", 'u', OptArg::kRequired, AddCommaItems(r.filter.users), "act only on jobs of this user", "user_name"},
      {"verbose", 'v', OptArg::kNone, [&r](const std::string&) { r.verbose = true; return Status::Ok(); }, "verbosity level"},
      {"version", 'V', OptArg::kNone, ignore, "output version information and exit"},
      {"nodelist", 'w', OptArg::kRequired, [&r](const std::string& v) { return AddNodes(r.filter, v); }, "act only on jobs on these nodes", "hosts"},
      {"wckey", 0, OptArg::kRequired, ignore, "act only on jobs with this workload characterization key", "wckey"},
  };
}

// "42.3" -> the step's path; "" when the word names no step.
std::string StepPath(const std::string& word) {
  std::size_t dot = word.find('.');
  if (dot == std::string::npos) return "";
  return "/api/v1/jobs/" + word.substr(0, dot) + "/steps/" + word.substr(dot + 1) + "/cancel";
}

// Whether the filter picks the whole of an array's record of unstarted tasks: no id names
// it, or one names the array without tasks ("scancel 40", not "scancel 40_7").
bool NamesWholeArray(const nlohmann::json& rest, const JobFilter& f) {
  if (f.ids.empty()) return true;
  return std::any_of(f.ids.begin(), f.ids.end(),
                     [&](const JobIdPattern& p) { return !p.tasks && JobMatches(rest, p); });
}

// "scancel 40_7" of a task lockstepd still keeps in its array's record: by the task's name.
int CancelTasksOfRest(client::ApiClient& api, const nlohmann::json& rest, const JobFilter& f) {
  const std::uint64_t array = rest.value("array_job_id", std::uint64_t{0});
  const std::string text = rest.value("array_task_str", "");
  int rc = 0;
  for (const JobIdPattern& p : f.ids) {
    if (p.id != array || !p.tasks) continue;
    for (std::int64_t task : *p.tasks) {
      if (!TaskTextHolds(text, task)) continue;
      std::string name = std::to_string(array) + "_" + std::to_string(task);
      Result<nlohmann::json> done = api.Post("/api/v1/jobs/" + name + "/cancel", {{"signal", 0}});
      if (!done.ok()) {
        std::fprintf(stderr, "scancel: error: Kill job error on job id %s: %s\n", name.c_str(),
                     done.status().message().c_str());
        rc = 1;
      }
    }
  }
  return rc;
}

// The unfinished tasks of `array` that run or wait as jobs of their own: what is left of an
// array whose record lost its last tasks to the scheduler between scancel's listing and its
// cancel. A task that ended meanwhile is no error.
int CancelSplitTasks(client::ApiClient& api, std::uint64_t array) {
  Result<nlohmann::json> list = api.Get("/api/v1/jobs");
  if (!list.ok()) return Fail("scancel", list.status());
  int rc = 0;
  for (const nlohmann::json& j : (*list)["jobs"]) {
    if (j.value("array_job_id", std::uint64_t{0}) != array || j.value("array_rest", false))
      continue;
    const std::string id = std::to_string(j["job_id"].get<unsigned long long>());
    Result<nlohmann::json> done = api.Post("/api/v1/jobs/" + id + "/cancel", {{"signal", 0}});
    if (!done.ok() && done.status().code() != StatusCode::kFailedPrecondition) {
      std::fprintf(stderr, "scancel: error: Kill job error on job id %s: %s\n", id.c_str(),
                   done.status().message().c_str());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace

int RunScancel(int argc, char** argv) {
  ScancelRequest r;
  ParsedCommandLine cl = ParseSlurmCommandLine("scancel", argc, argv, ScancelOptionTable(r),
                                               "[OPTIONS] [job_id[_array_id][.step_id]]");
  if (cl.exit_code) return *cl.exit_code;
  int signo = 0;
  if (!r.signal.empty() && (signo = SignalNumber(r.signal)) <= 0)
    return Fail("scancel", "Invalid signal specified: " + r.signal);
  // SIGKILL is what scancel sends by default: the job is cancelled, pending or running, as when
  // no -s is given (Slurm's scancel -s KILL cancels a pending job too).
  if (signo == SIGKILL) signo = 0;
  if (r.me) {
    const passwd* pw = ::getpwuid(::getuid());
    r.filter.users.insert(pw ? pw->pw_name : std::to_string(::getuid()));
  }
  std::vector<std::string> steps;
  for (const std::string& word : cl.operands) {
    if (!StepPath(word).empty()) {
      steps.push_back(word);
      continue;
    }
    Result<std::vector<JobIdPattern>> ids = ParseJobIdList(word);
    if (!ids.ok()) return Fail("scancel", ids.status());
    r.filter.ids.insert(r.filter.ids.end(), ids->begin(), ids->end());
  }
  const JobFilter& f = r.filter;
  if (f.ids.empty() && steps.empty() && f.users.empty() && f.names.empty() &&
      f.states.empty() && f.partitions.empty() && f.accounts.empty() && f.qos.empty() &&
      f.nodes.empty() && f.reservations.empty())
    return Fail("scancel", "No job identification provided");
  client::ApiClient api;
  int rc = 0;
  for (const std::string& step : steps) {
    Result<nlohmann::json> done = api.Post(StepPath(step), {{"signal", signo}});
    if (!done.ok()) {
      std::fprintf(stderr, "scancel: error: Kill job error on job id %s: %s\n", step.c_str(),
                   done.status().message().c_str());
      rc = 1;
    }
  }
  if (f.ids.empty() && steps.size() == cl.operands.size() && !steps.empty()) return rc;
  Result<nlohmann::json> list = api.Get("/api/v1/jobs");
  if (!list.ok()) return Fail("scancel", list.status());
  const nlohmann::json& jobs = (*list)["jobs"];
  // An id that names no job, as Slurm 22.05's scancel: a plain cancel (no filter, no -s) of a
  // job that is gone is no failure and says so only with -v, so scripts may cancel jobs that
  // ended; with a filter or a signal it is an error (exit 1). So is a job that ended between
  // the listing and its cancel (an array's tasks end by the hundred while scancel runs).
  const bool plain = r.signal.empty() && f.users.empty() && f.names.empty() &&
                     f.states.empty() && f.partitions.empty() && f.accounts.empty() &&
                     f.qos.empty() && f.nodes.empty() && f.reservations.empty();
  for (const auto& j : jobs) {
    if (!Passes(j, f)) continue;
    // A heterogeneous job's other components go with their leader, unless named as "43+1".
    if (j.value("het_job_offset", 0) > 0 &&
        std::none_of(f.ids.begin(), f.ids.end(), [&](const JobIdPattern& p) {
          return p.het_offset && JobMatches(j, p);
        }))
      continue;
    std::string id = std::to_string(j["job_id"].get<unsigned long long>());
    // An array's tasks lockstepd keeps in one record are cancelled as one; a signal reaches
    // only tasks that run.
    const bool rest = j.value("array_rest", false);
    if (rest && signo != 0) continue;
    if (rest && !NamesWholeArray(j, f)) {
      rc |= CancelTasksOfRest(api, j, f);
      continue;
    }
    nlohmann::json body = {{"signal", signo}};
    if (signo != 0) body["target"] = r.target;
    if (rest) body["array_rest"] = true;
    Result<nlohmann::json> done = api.Post("/api/v1/jobs/" + id + "/cancel", body);
    if (rest && !done.ok() && done.status().code() == StatusCode::kNotFound) {
      // Its last tasks were split off into jobs of their own since the listing: cancel those.
      rc |= CancelSplitTasks(api, j.value("array_job_id", std::uint64_t{0}));
      continue;
    }
    const bool ended = !done.ok() &&
                       done.status().code() == StatusCode::kFailedPrecondition &&
                       done.status().message().find("has already finished") != std::string::npos;
    if (ended && plain && !r.verbose) continue;
    if (!done.ok()) {
      std::fprintf(stderr, "scancel: error: Kill job error on job id %s: %s\n", id.c_str(),
                   done.status().message().c_str());
      rc = 1;
    }
  }
  for (const JobIdPattern& want : f.ids) {
    if (std::none_of(jobs.begin(), jobs.end(),
                     [&](const nlohmann::json& j) { return JobMatches(j, want); })) {
      if (!r.quiet && (!plain || r.verbose))
        std::fprintf(stderr,
                     "scancel: error: Kill job error on job id %s: Invalid job id specified\n",
                     want.text.c_str());
      if (!plain) rc = 1;
    }
  }
  return rc;
}

}  // namespace lockstep::cli
