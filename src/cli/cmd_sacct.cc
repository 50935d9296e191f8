// sacct and sprio: accounting records and pending jobs' priorities from the API, filtered as
// Slurm's options say, printed through Slurm's formats (src/cli/format).
#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/sacct.h"
#include "cli/format/sprio.h"
#include "cli/format/unknown_letters.h"
#include "cli/slurm/job_filter.h"
#include "cli/slurm/slurm_options.h"
#include "cli/slurm_json_cli.h"
#include "cli/sprio_inputs.h"
#include "jobspec/sbatch.h"

namespace lockstep::cli {

namespace {

struct SacctRequest {
  SacctOptions format;
  JobFilter filter;
  std::string start, end;
  bool all_users = false, parsable = false, parsable2 = false, json = false;
  bool yaml = false;  // --yaml: the --json document as YAML
  bool help_format = false;  // -e: the field names, and nothing else
};

std::vector<SlurmOption> SacctOptionTable(SacctRequest& r) {
  auto flag = [](bool& b) {
    return [&b](const std::string&) {
      b = true;
      return Status::Ok();
    };
  };
  auto text = [](std::string& t) {
    return [&t](const std::string& v) {
      t = v;
      return Status::Ok();
    };
  };
  auto ignore = [](const std::string&) { return Status::Ok(); };
  auto states = [&r](const std::string& v) {
    for (const std::string& w : CommaSet(v)) {
      std::string name = JobStateName(w);
      if (name.empty()) return InvalidArgument("Invalid state: " + w);
      r.filter.states.insert(name);
    }
    return Status::Ok();
  };
  auto jobs = [&r](const std::string& v) {
    Result<std::vector<JobIdPattern>> ids = ParseJobIdList(v);
    if (!ids.ok()) return ids.status();
    r.filter.ids.insert(r.filter.ids.end(), ids->begin(), ids->end());
    return Status::Ok();
  };
  return {
      {"allusers", 'a', OptArg::kNone, flag(r.all_users), "display jobs for all users"},
      {"accounts", 'A', OptArg::kRequired, AddCommaItems(r.filter.accounts), "only jobs charged to these accounts", "account_list"},
      {"array", 0, OptArg::kNone, ignore, "display one array task per line (always)"},
      {"brief", 'b', OptArg::kNone, flag(r.format.brief), "jobid, state and exit code only"},
      {"batch-script", 'B', OptArg::kNone, ignore, "print the batch script (not kept in accounting)"},
      {"completion", 'c', OptArg::kNone, ignore, "use job completion data (no effect)"},
      {"constraints", 'C', OptArg::kRequired, ignore, "only jobs with these constraints", "constraint_list"},
      {"delimiter", 0, OptArg::kRequired, text(r.format.delimiter), "delimiter with -p/-P (default '|')", "characters"},
      {"duplicates", 'D', OptArg::kNone, ignore, "show every run of a requeued job (latest only)"},
      {"env-vars", 0, OptArg::kNone, ignore, "print the environment (not kept in accounting)"},
      {"endtime", 'E', OptArg::kRequired, text(r.end), "jobs that ran before this time", "time"},
      {"federation", 0, OptArg::kNone, ignore, "jobs of the federation (this cluster's)"},
      {"file", 'f', OptArg::kRequired, ignore, "read a job completion file (no effect: lockstep's accounting)", "file"},
      {"flags", 'F', OptArg::kRequired, ignore, "filter flags (no effect)", "flags"},
      {"gid", 'g', OptArg::kRequired, ignore, "only jobs of these groups", "gid_list"},
      {"group", 'g', OptArg::kRequired, ignore, nullptr},
      {"helpformat", 'e', OptArg::kNone, flag(r.help_format), "print the fields -o can show"},
      {"nnodes", 'i', OptArg::kRequired, ignore, "only jobs with this many nodes", "min[-max]"},
      {"ncpus", 'I', OptArg::kRequired, ignore, "only jobs with this many CPUs", "min[-max]"},
      {"jobs", 'j', OptArg::kRequired, jobs, "only these jobs", "job(.step)"},
      {"timelimit-min", 'k', OptArg::kRequired, ignore, "only jobs with a longer time limit", "time"},
      {"timelimit-max", 'K', OptArg::kRequired, ignore, "only jobs with a shorter time limit", "time"},
      {"local", 0, OptArg::kNone, ignore, "jobs of this cluster only (the only one)"},
      {"long", 'l', OptArg::kNone, flag(r.format.long_format), "long format (usage and TRES fields)"},
      {"allclusters", 'L', OptArg::kNone, ignore, "all clusters (this one)"},
      {"clusters", 'M', OptArg::kRequired, ignore, "clusters (this one)", "cluster_list"},
      {"name", 0, OptArg::kRequired, AddCommaItems(r.filter.names), "only jobs with these names", "jobname_list"},
      {"noheader", 'n', OptArg::kNone, flag(r.format.noheader), "no header"},
      {"nodelist", 'N', OptArg::kRequired, [&r](const std::string& v) { return AddNodes(r.filter, v); }, "only jobs that ran on these nodes", "node_list"},
      {"noconvert", 0, OptArg::kNone, ignore, "don't convert units"},
      {"format", 'o', OptArg::kRequired, text(r.format.format), "fields, e.g. jobid,jobname%30,state", "field_list"},
      {"parsable", 'p', OptArg::kNone, flag(r.parsable), "'|' after every field"},
      {"parsable2", 'P', OptArg::kNone, flag(r.parsable2), "'|' between fields"},
      {"qos", 'q', OptArg::kRequired, AddCommaItems(r.filter.qos), "only jobs of these QOS", "qos"},
      {"partition", 'r', OptArg::kRequired, AddCommaItems(r.filter.partitions), "only jobs of these partitions", "partition_list"},
      {"reason", 'R', OptArg::kRequired, ignore, "only jobs pending for these reasons", "reason_list"},
      {"state", 's', OptArg::kRequired, states, "only jobs in these states", "state_list"},
      {"starttime", 'S', OptArg::kRequired, text(r.start), "jobs that ran after this time (default: midnight)", "time"},
      {"truncate", 'T', OptArg::kNone, ignore, "truncate times to the window"},
      {"uid", 'u', OptArg::kRequired, AddCommaItems(r.filter.users), nullptr},
      {"user", 'u', OptArg::kRequired, AddCommaItems(r.filter.users), "only these users (default: you)", "user_list"},
      {"units", 0, OptArg::kRequired, ignore, "units of memory fields", "[KMGTP]"},
      {"use-local-uid", 0, OptArg::kNone, ignore, "use the local uid (no effect)"},
      {"verbose", 'v', OptArg::kNone, ignore, "verbosity level"},
      {"version", 'V', OptArg::kNone, ignore, "output version information and exit"},
      {"wckeys", 'W', OptArg::kRequired, ignore, "only jobs with these wckeys", "wckey_list"},
      {"whole-hetjob", 0, OptArg::kOptional, ignore, "whole heterogeneous jobs (no effect)"},
      {"associations", 'x', OptArg::kRequired, ignore, "only jobs of these associations", "assoc_list"},
      {"allocations", 'X', OptArg::kNone, flag(r.format.allocations), "no step lines"},
      {"json", 0, OptArg::kNone, flag(r.json), "produce JSON output"},
      {"yaml", 0, OptArg::kNone, flag(r.yaml), "produce YAML output"},
  };
}

// A time of -S/-E: Slurm's forms (now-1hour, today, 2026-12-01T10:00, ...); 0 after an error.
Result<Time> SacctTime(const std::string& option, const std::string& text) {
  Result<Time> t = jobspec::ParseSlurmTime(text, std::time(nullptr));
  if (!t.ok()) return InvalidArgument("Invalid time specification (" + option + "): " + text);
  return t;
}

}  // namespace

int RunSacct(int argc, char** argv) {
  SacctRequest r;
  ParsedCommandLine cl = ParseSlurmCommandLine("sacct", argc, argv, SacctOptionTable(r));
  if (cl.exit_code) return *cl.exit_code;
  if (r.help_format) {
    std::fputs(SacctHelpFormat().c_str(), stdout);
    return 0;
  }
  if (r.format.long_format && !r.format.format.empty()) {
    std::fputs("sacct: fatal: Options -o(--format) and -l(--long) are mutually exclusive. "
               "Please remove one and retry.\n", stderr);
    return 1;
  }
  if (r.parsable) r.format.parsable = SacctParsable::kTrailing;
  if (r.parsable2) r.format.parsable = SacctParsable::kNoTrailing;
  // Slurm reads SACCT_FORMAT only when neither -o, -b nor -l chose the fields.
  if (const char* f = std::getenv("SACCT_FORMAT");
      f && r.format.format.empty() && !r.format.brief && !r.format.long_format)
    r.format.format = f;
  std::string q = "?";
  // Slurm's default: jobs since midnight, unless jobs are named.
  std::string start = r.start.empty() && r.filter.ids.empty() ? "today" : r.start;
  if (!start.empty()) {
    Result<Time> t = SacctTime("--starttime", start);
    if (!t.ok()) return Fail("sacct", t.status());
    q += "start=" + std::to_string(*t) + "&";
  }
  if (!r.end.empty()) {
    Result<Time> t = SacctTime("--endtime", r.end);
    if (!t.ok()) return Fail("sacct", t.status());
    q += "end=" + std::to_string(*t) + "&";
  }
  // Jobs named: lockstepd reads only their records (and their arrays' tasks) from the store,
  // not every job it ever ran; the patterns' tasks are picked here, below.
  if (!r.filter.ids.empty()) {
    std::string ids;
    for (const JobIdPattern& p : r.filter.ids)
      ids += (ids.empty() ? "" : ",") + std::to_string(p.id);
    q += "job=" + ids + "&";
  }
  if (r.filter.users.empty() && !r.all_users && ::getuid() != 0)
    q += "user=" + client::UrlEncode(Environment()["USER"]) + "&";
  client::ApiClient api;
  Result<nlohmann::json> got = api.Get("/api/v1/accounting" + q);
  if (!got.ok()) return Fail("sacct", got.status());
  nlohmann::json jobs = nlohmann::json::array();
  for (nlohmann::json& j : (*got)["jobs"])
    if (Passes(j, r.filter)) jobs.push_back(std::move(j));
  if (r.yaml) return PrintSlurmJson("sacct", SacctJson(jobs, CliSlurmJsonContext()), true);
  if (r.json) {
    return StreamSlurmJson("sacct", [&](const TextSink& write) {
      return WriteSacctJson(jobs, CliSlurmJsonContext(), write);
    });
  }
  r.format.now = std::time(nullptr);
  Result<std::string> text = FormatSacct(jobs, r.format);
  if (!text.ok()) return Fail("sacct", text.status());
  std::fputs(text->c_str(), stdout);
  return 0;
}

int RunSprio(int argc, char** argv) {
  SprioOptions o;
  JobFilter filter;
  auto flag = [](bool& b) {
    return [&b](const std::string&) {
      b = true;
      return Status::Ok();
    };
  };
  auto ignore = [](const std::string&) { return Status::Ok(); };
  std::vector<SlurmOption> table = {
      {"federation", 0, OptArg::kNone, ignore, "display jobs in federation (no effect)"},
      {"noheader", 'h', OptArg::kNone, flag(o.noheader), "no headers on output"},
      {"jobs", 'j', OptArg::kOptional, [&](const std::string& v) {
         Result<std::vector<JobIdPattern>> ids = ParseJobIdList(v);
         if (!ids.ok()) return ids.status();
         filter.ids.insert(filter.ids.end(), ids->begin(), ids->end());
         return Status::Ok(); }, "comma separated list of jobs to view", "jobs"},
      {"local", 0, OptArg::kNone, ignore, "display jobs on local cluster only"},
      {"long", 'l', OptArg::kNone, flag(o.long_format), "long report"},
      {"cluster", 'M', OptArg::kRequired, ignore, "cluster to issue commands to (this one)", "cluster_name"},
      {"clusters", 'M', OptArg::kRequired, ignore, nullptr},
      {"norm", 'n', OptArg::kNone, flag(o.normalized), "display normalized values"},
      {"format", 'o', OptArg::kRequired, [&](const std::string& v) { o.format = v; return Status::Ok(); }, "format specification", "format"},
      {"sibling", 0, OptArg::kNone, ignore, "display job records per federation cluster (no effect)"},
      {"partition", 'p', OptArg::kRequired, AddCommaItems(filter.partitions),
       "comma separated list of partitions", "partition_name"},
      {"user", 'u', OptArg::kRequired, AddCommaItems(filter.users),
       "comma separated list of users to view", "user_name"},
      {"verbose", 'v', OptArg::kNone, ignore, "verbosity level"},
      {"version", 'V', OptArg::kNone, ignore, "output version information and exit"},
      {"sort", 'S', OptArg::kRequired, [&](const std::string& v) { o.sort = v; return Status::Ok(); }, "comma separated list of fields to sort on", "sort_list"},
      {"weights", 'w', OptArg::kNone, flag(o.weights_only), "show the weights for each priority factor"},
  };
  ParsedCommandLine cl = ParseSlurmCommandLine("sprio", argc, argv, table);
  if (cl.exit_code) return *cl.exit_code;
  for (char c : UnknownLetters(o.format, SprioLetterKnown))
    std::fprintf(stderr, "sprio: error: Invalid job format specification: %c\n", c);
  o.show_user = !filter.users.empty();
  client::ApiClient api;
  Result<SprioConfig> config = FetchSprioConfig(api);
  if (!config.ok()) return Fail("sprio", config.status());
  o.weights = config->weights;
  Result<std::set<unsigned long long>> held = FetchHeldJobs(api);
  if (!held.ok()) return Fail("sprio", held.status());
  Result<nlohmann::json> r = api.Get("/api/v1/priorities");
  if (!r.ok()) return Fail("sprio", r.status());
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& p : (*r)["priorities"])
    if (Passes(p, filter) && !held->count(p.value("job_id", 0ULL))) {
      rows.push_back(p);
      rows.back()["cluster"] = config->cluster;  // %c
    }
  Result<std::string> text = FormatSprio(rows, o);
  if (!text.ok()) return Fail("sprio", text.status());
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace lockstep::cli
