// squeue: jobs from the API, filtered as Slurm's options say (src/cli/slurm/job_filter.h), printed
// through Slurm's formats (src/cli/format/squeue.h), or with --json in Slurm 22.05's schema
// (src/cli/format/slurm_json.h).
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <thread>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/squeue.h"
#include "cli/format/squeue_fields.h"
#include "cli/format/unknown_letters.h"
#include "cli/slurm/job_filter.h"
#include "cli/slurm/long_format.h"
#include "cli/slurm/slurm_options.h"
#include "cli/slurm_json_cli.h"

namespace lockstep::cli {
namespace {

struct SqueueRequest {
  SqueueOptions format;
  JobFilter filter;
  std::string states;  // -t as given
  bool json = false;
  bool yaml = false;  // --yaml: the --json document as YAML
  bool me = false;
  bool steps = false;
  int iterate = 0;  // -i: seconds between reports; 0: one report
};

Status Flag(bool& b) {
  b = true;
  return Status::Ok();
}

std::vector<SlurmOption> SqueueOptionTable(SqueueRequest& r) {
  auto ignore = [](const std::string&) { return Status::Ok(); };
  auto jobs = [&r](const std::string& v) {
    Result<std::vector<JobIdPattern>> ids = ParseJobIdList(v);
    if (!ids.ok()) return ids.status();
    r.filter.ids.insert(r.filter.ids.end(), ids->begin(), ids->end());
    return Status::Ok();
  };
  auto format = [&r](const std::string& v) {
    r.format.format = v;
    return Status::Ok();
  };
  auto long_format = [&r](const std::string& v) {
    Result<std::string> f = SqueueLongFormat(v);
    if (!f.ok()) return f.status();
    r.format.format = *f;
    return Status::Ok();
  };
  return {
      {"account", 'A', OptArg::kRequired, AddCommaItems(r.filter.accounts), "comma separated list of accounts to view", "account(s)"},
      {"accounts", 'A', OptArg::kRequired, AddCommaItems(r.filter.accounts), nullptr},
      {"all", 'a', OptArg::kNone, ignore, "display jobs in hidden partitions (all are shown)"},
      {"array", 'r', OptArg::kNone, [&r](const std::string&) { return Flag(r.format.array_expanded); }, "display one job array element per line"},
      {"array-unique", 0, OptArg::kNone, ignore, "display one unique pending job array element per line"},
      {"clusters", 'M', OptArg::kRequired, ignore, "cluster to issue commands to (this one)", "cluster_name"},
      {"cluster", 'M', OptArg::kRequired, ignore, nullptr},
      {"federation", 0, OptArg::kNone, ignore, "report federated information (no effect)"},
      {"Format", 'O', OptArg::kRequired, long_format, "format specification (type[:[.]size],...)", "format"},
      {"format", 'o', OptArg::kRequired, format, "format specification", "format"},
      {"hide", 0, OptArg::kNone, ignore, "do not display jobs in hidden partitions"},
      {"iterate", 'i', OptArg::kRequired, [&r](const std::string& v) {
         try { r.iterate = std::stoi(v); } catch (...) { r.iterate = 0; }
         if (r.iterate <= 0) return InvalidArgument("invalid --iterate value: " + v);
         return Status::Ok(); }, "report every so many seconds", "seconds"},
      {"jobs", 'j', OptArg::kRequired, jobs, "comma separated list of jobs IDs to view", "job(s)"},
      {"json", 0, OptArg::kNone, [&r](const std::string&) { return Flag(r.json); }, "produce JSON output"},
      {"local", 0, OptArg::kNone, ignore, "report only jobs of the local cluster"},
      {"long", 'l', OptArg::kNone, [&r](const std::string&) { return Flag(r.format.long_format); }, "long report"},
      {"licenses", 'L', OptArg::kRequired, ignore, "jobs using these licenses (lockstep has none)", "license(s)"},
      {"me", 0, OptArg::kNone, [&r](const std::string&) { return Flag(r.me); }, "only your own jobs"},
      {"name", 'n', OptArg::kRequired, AddCommaItems(r.filter.names), "comma separated list of job names to view", "job_name(s)"},
      {"noconvert", 0, OptArg::kNone, ignore, "don't convert units from their original type"},
      {"noheader", 'h', OptArg::kNone, [&r](const std::string&) { return Flag(r.format.noheader); }, "no headers on output"},
      {"nodelist", 'w', OptArg::kRequired, [&r](const std::string& v) { return AddNodes(r.filter, v); }, "list of nodes to view", "hostlist"},
      {"nodes", 'w', OptArg::kRequired, [&r](const std::string& v) { return AddNodes(r.filter, v); }, nullptr},
      {"partition", 'p', OptArg::kRequired, AddCommaItems(r.filter.partitions), "comma separated list of partitions to view", "partition(s)"},
      {"partitions", 'p', OptArg::kRequired, AddCommaItems(r.filter.partitions), nullptr},
      {"priority", 'P', OptArg::kNone, ignore, "sort by priority across partitions"},
      {"qos", 'q', OptArg::kRequired, AddCommaItems(r.filter.qos), "comma separated list of qos's to view", "qos(s)"},
      {"reservation", 'R', OptArg::kRequired, AddCommaItems(r.filter.reservations), "reservation to view", "name"},
      {"sibling", 0, OptArg::kNone, ignore, "report sibling jobs (no effect)"},
      {"steps", 's', OptArg::kOptional, [&r](const std::string&) { return Flag(r.steps); }, "list job steps", "step(s)"},
      {"sort", 'S', OptArg::kRequired, [&r](const std::string& v) { r.format.sort = v; return Status::Ok(); }, "comma separated list of fields to sort on", "fields"},
      {"start", 0, OptArg::kNone, [&r](const std::string&) { return Flag(r.format.start); }, "print expected start times of pending jobs"},
      {"states", 't', OptArg::kRequired, [&r](const std::string& v) { r.states = v; return Status::Ok(); }, "comma separated list of states to view ('all' for all)", "states"},
      {"user", 'u', OptArg::kRequired, AddCommaItems(r.filter.users), "comma separated list of users to view", "user_name(s)"},
      {"users", 'u', OptArg::kRequired, AddCommaItems(r.filter.users), nullptr},
      {"verbose", 'v', OptArg::kNone, ignore, "verbosity level"},
      {"version", 'V', OptArg::kNone, ignore, "output version information and exit"},
      {"yaml", 0, OptArg::kNone, [&r](const std::string&) { return Flag(r.yaml); },
       "produce YAML output"},
  };
}

// %g prints the group's name, which Slurm's squeue resolves here: the API sends the gid.
void AddGroupNames(nlohmann::json& jobs) {
  for (nlohmann::json& j : jobs) {
    if (j.contains("group") || !j.contains("gid") || !j["gid"].is_number_unsigned()) continue;
    if (std::string name = GroupName(j["gid"].get<unsigned>()); !name.empty()) j["group"] = name;
  }
}

std::string UserName() {
  if (const passwd* pw = ::getpwuid(::getuid())) return pw->pw_name;
  return std::to_string(::getuid());
}

// One report: 0, or 1 after an error (printed).
int Report(client::ApiClient& api, SqueueRequest& r, const std::string& state_query,
           const std::set<std::string>& states) {
  Result<nlohmann::json> got = api.Get("/api/v1/jobs" + state_query);
  if (!got.ok()) return Fail("squeue", got.status());
  // 100,000 jobs are a large tree: every step below moves the jobs it keeps, never copies.
  nlohmann::json jobs = nlohmann::json::array();
  for (nlohmann::json& j : (*got)["jobs"])
    if (Passes(j, r.filter)) jobs.push_back(std::move(j));
  jobs = NarrowArrayRests(std::move(jobs), r.filter);
  // Like Slurm's slurm_load_job: one job asked for by id that is not there is an error.
  if (r.filter.ids.size() == 1 && jobs.empty()) {
    std::fprintf(stderr, "slurm_load_jobs error: Invalid job id specified\n");
    return 1;
  }
  if (!states.empty()) {
    nlohmann::json kept = nlohmann::json::array();
    for (nlohmann::json& j : jobs)
      if (states.count(j.value("state", ""))) kept.push_back(std::move(j));
    jobs = std::move(kept);
  }
  if (r.yaml) return PrintSlurmJson("squeue", SqueueJson(jobs, CliSlurmJsonContext()), true);
  if (r.json) {
    return StreamSlurmJson("squeue", [&](const TextSink& write) {
      return WriteSqueueJson(jobs, CliSlurmJsonContext(), write);
    });
  }
  r.format.now = std::time(nullptr);
  AddGroupNames(jobs);
  if (!r.format.array_expanded) jobs = CollapsePendingArrays(std::move(jobs));
  Result<std::string> text = FormatSqueue(jobs, r.format);
  if (!text.ok()) return Fail("squeue", text.status());
  std::fputs(text->c_str(), stdout);
  std::fflush(stdout);
  return 0;
}

// The API's query for squeue -t: Slurm's long or compact state names, comma separated; "all".
// An unknown name is returned in `bad`.
std::string SqueueStateQuery(const std::string& states, std::string& bad) {
  std::string out;
  for (std::string item : CommaSet(states)) {
    if (item == "all" || item == "ALL") return "?all=1";
    std::string name = JobStateName(item);
    if (name.empty()) {
      bad = item;
      return "";
    }
    out += (out.empty() ? "" : ",") + name;
  }
  return out.empty() ? "" : "?state=" + client::UrlEncode(out);
}

}  // namespace

int RunSqueue(int argc, char** argv) {
  SqueueRequest r;
  ParsedCommandLine cl = ParseSlurmCommandLine("squeue", argc, argv, SqueueOptionTable(r));
  if (cl.exit_code) return *cl.exit_code;
  for (char c : UnknownLetters(r.format.format, [](char l) { return SqueueHeader(l).has_value(); }))
    std::fprintf(stderr, "squeue: error: Invalid job format specification: %c\n", c);
  if (!cl.operands.empty()) {
    std::fprintf(stderr, "squeue: error: Unrecognized option: %s\n", cl.operands[0].c_str());
    return 1;
  }
  if (r.me) r.filter.users.insert(UserName());
  std::string bad;
  std::string q = SqueueStateQuery(r.format.start ? "PD" : r.states, bad);
  if (!bad.empty()) {
    std::fprintf(stderr, "squeue: error: Invalid job state specified: %s\n", bad.c_str());
    return 1;
  }
  // Jobs named by id: any state unless -t says (squeue(1)), and an id that names nothing is
  // told apart from one whose jobs the state filter leaves out.
  std::set<std::string> wanted_states;
  if (!r.filter.ids.empty()) {
    if (q.rfind("?state=", 0) == 0)
      for (const std::string& w : CommaSet(r.states)) wanted_states.insert(JobStateName(w));
    // lockstepd looks the jobs up by id (their arrays' tasks with them): the answer does not
    // grow with the queue. Task patterns ("40_2") are narrowed here.
    std::set<std::uint64_t> ids;
    for (const JobIdPattern& p : r.filter.ids) ids.insert(p.id);
    q = "?all=1&job=";
    for (std::uint64_t id : ids) q += (q.back() == '=' ? "" : ",") + std::to_string(id);
  }
  client::ApiClient api;
  int rc = Report(api, r, q, wanted_states);
  while (r.iterate > 0 && rc == 0) {
    std::this_thread::sleep_for(std::chrono::seconds(r.iterate));  // squeue -i: the user's period
    std::fputs("\n", stdout);
    rc = Report(api, r, q, wanted_states);
  }
  return rc;
}

}  // namespace lockstep::cli
