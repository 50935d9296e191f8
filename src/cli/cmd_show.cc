// squeue, sinfo, sacct, sprio and `lockstep why`: the API's JSON through Slurm's formats
// (src/cli/format), or as JSON with --json.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/field_format.h"
#include "cli/format/sacct.h"
#include "cli/format/sinfo.h"
#include "cli/format/sprio.h"
#include "cli/format/squeue.h"
#include "common/duration.h"

namespace lockstep::cli {
namespace {

int Print(const std::string& command, const Result<std::string>& text) {
  if (!text.ok()) return Fail(command, text.status());
  std::fputs(text->c_str(), stdout);
  return 0;
}

Result<nlohmann::json> Fetch(client::ApiClient& api, const std::string& target) {
  return api.Get(target);
}

// Slurm's state filter names (-t): long or compact, comma separated.
std::string LongStates(const std::string& states) {
  static const std::pair<const char*, const char*> kCompact[] = {
      {"PD", "PENDING"},   {"R", "RUNNING"},        {"CG", "COMPLETING"}, {"CD", "COMPLETED"},
      {"CA", "CANCELLED"}, {"F", "FAILED"},         {"TO", "TIMEOUT"},    {"NF", "NODE_FAIL"},
      {"PR", "PREEMPTED"}, {"OOM", "OUT_OF_MEMORY"}};
  std::string out, item;
  std::stringstream in(states);
  while (std::getline(in, item, ',')) {
    for (char& ch : item) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    for (auto& [c, l] : kCompact)
      if (item == c) item = l;
    out += (out.empty() ? "" : ",") + item;
  }
  return out;
}

}  // namespace

int RunSqueue(int argc, char** argv) {
  CLI::App app{"View jobs in the queue", "squeue"};
  app.set_help_flag("--help", "print this help");  // -h is --noheader, as in Slurm
  std::string users, jobs, states, partitions;
  SqueueOptions o;
  bool json = false;
  app.add_option("-u,--user", users, "only these users' jobs (comma separated)");
  app.add_option("-j,--jobs", jobs, "only these jobs");
  app.add_option("-t,--states", states, "only jobs in these states (PD, R, ... or ALL)");
  app.add_option("-p,--partition", partitions, "only these partitions");
  app.add_option("-o,--format", o.format, "output format, as Slurm's");
  app.add_flag("-l,--long", o.long_format, "long format");
  app.add_flag("--start", o.start, "expected start times of pending jobs");
  app.add_flag("-h,--noheader", o.noheader, "no header");
  app.add_flag("-r,--array", o.array_expanded, "one line per array task");
  app.add_option("-S,--sort", o.sort, "sort keys");
  app.add_flag("--json", json, "the API's JSON");
  CLI11_PARSE(app, argc, argv);
  std::string q = "?";
  if (!users.empty()) q += "user=" + client::UrlEncode(users) + "&";
  if (!jobs.empty()) q += "job=" + client::UrlEncode(jobs) + "&";
  if (!partitions.empty()) q += "partition=" + client::UrlEncode(partitions) + "&";
  if (o.start) states = "PD";
  if (!states.empty() && LongStates(states) != "ALL")
    q += "state=" + client::UrlEncode(LongStates(states)) + "&";
  if (LongStates(states) == "ALL") q += "all=1&";
  client::ApiClient api;
  Result<nlohmann::json> r = Fetch(api, "/api/v1/jobs" + q);
  if (!r.ok()) return Fail("squeue", r.status());
  if (json) {
    std::cout << r->dump(2) << "\n";
    return 0;
  }
  o.now = std::time(nullptr);
  return Print("squeue", FormatSqueue((*r)["jobs"], o));
}

int RunSinfo(int argc, char** argv) {
  CLI::App app{"View partitions and nodes", "sinfo"};
  app.set_help_flag("--help", "print this help");  // -h is --noheader, as in Slurm
  SinfoOptions o;
  bool json = false;
  app.add_flag("-N,--Node", o.node_oriented, "one line per node");
  app.add_flag("-l,--long", o.long_format, "long format");
  app.add_flag("-R,--list-reasons", o.list_reasons, "why nodes are down or drained");
  app.add_flag("-s,--summarize", o.summarize, "one line per partition");
  app.add_flag("-e,--exact", o.exact, "group only identical nodes");
  app.add_flag("-h,--noheader", o.noheader, "no header");
  app.add_option("-o,--format", o.format, "output format, as Slurm's");
  app.add_option("-S,--sort", o.sort, "sort keys");
  app.add_flag("--json", json, "the API's JSON");
  CLI11_PARSE(app, argc, argv);
  client::ApiClient api;
  Result<nlohmann::json> parts = Fetch(api, "/api/v1/partitions");
  if (!parts.ok()) return Fail("sinfo", parts.status());
  Result<nlohmann::json> nodes = Fetch(api, "/api/v1/nodes");
  if (!nodes.ok()) return Fail("sinfo", nodes.status());
  if (json) {
    std::cout << nlohmann::json{{"partitions", (*parts)["partitions"]},
                                {"nodes", (*nodes)["nodes"]}}
                     .dump(2)
              << "\n";
    return 0;
  }
  o.now = std::time(nullptr);
  return Print("sinfo", FormatSinfo((*parts)["partitions"], (*nodes)["nodes"], o));
}

int RunSacct(int argc, char** argv) {
  CLI::App app{"Accounting: jobs that ran or are running", "sacct"};
  app.set_help_flag("--help", "print this help");  // -h is --noheader, as in Slurm
  SacctOptions o;
  std::string jobs, users, start, end;
  bool all_users = false, parsable = false, parsable2 = false, json = false;
  app.add_option("-j,--jobs", jobs, "only these jobs");
  app.add_option("-u,--user", users, "only these users (default: you)");
  app.add_flag("-a,--allusers", all_users, "every user's jobs");
  app.add_option("-S,--starttime", start,
                 "jobs that ran after this (YYYY-MM-DD[THH:MM[:SS]]; default: today)");
  app.add_option("-E,--endtime", end, "jobs that ran before this");
  app.add_option("-o,--format", o.format, "fields, e.g. jobid,jobname%30,state");
  app.add_flag("-b,--brief", o.brief, "jobid,state,exitcode");
  app.add_flag("-n,--noheader", o.noheader, "no header");
  app.add_flag("-X,--allocations", o.allocations, "no step lines");
  app.add_flag("-p,--parsable", parsable, "'|' after every field");
  app.add_flag("-P,--parsable2", parsable2, "'|' between fields");
  app.add_flag("--json", json, "the API's JSON");
  CLI11_PARSE(app, argc, argv);
  if (parsable) o.parsable = SacctParsable::kTrailing;
  if (parsable2) o.parsable = SacctParsable::kNoTrailing;
  if (const char* f = std::getenv("SACCT_FORMAT"); f && o.format.empty()) o.format = f;
  auto to_time = [](const std::string& s, Time* out) -> bool {
    std::tm tm{};
    const char* rest = strptime(
        s.c_str(), s.find('T') != std::string::npos ? "%Y-%m-%dT%H:%M:%S" : "%Y-%m-%d", &tm);
    if (!rest) rest = strptime(s.c_str(), "%Y-%m-%dT%H:%M", &tm);
    if (!rest || *rest) return false;
    tm.tm_isdst = -1;
    *out = std::mktime(&tm);
    return true;
  };
  std::string q = "?";
  // Slurm's default: jobs since midnight, unless jobs are named.
  Time since = 0;
  if (!start.empty()) {
    if (!to_time(start, &since)) return Fail("sacct", "invalid time specification: " + start);
  } else if (jobs.empty()) {
    std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    local.tm_hour = local.tm_min = local.tm_sec = 0;
    since = std::mktime(&local);
  }
  if (since > 0) q += "start=" + std::to_string(since) + "&";
  Time until = 0;
  if (!end.empty()) {
    if (!to_time(end, &until)) return Fail("sacct", "invalid time specification: " + end);
    q += "end=" + std::to_string(until) + "&";
  }
  if (!jobs.empty()) q += "job=" + client::UrlEncode(jobs) + "&";
  if (!users.empty())
    q += "user=" + client::UrlEncode(users) + "&";
  else if (!all_users && ::getuid() != 0)
    q += "user=" + client::UrlEncode(Environment()["USER"]) + "&";
  client::ApiClient api;
  Result<nlohmann::json> r = Fetch(api, "/api/v1/accounting" + q);
  if (!r.ok()) return Fail("sacct", r.status());
  if (json) {
    std::cout << r->dump(2) << "\n";
    return 0;
  }
  o.now = std::time(nullptr);
  return Print("sacct", FormatSacct((*r)["jobs"], o));
}

int RunSprio(int argc, char** argv) {
  CLI::App app{"Pending jobs' priorities by factor", "sprio"};
  app.set_help_flag("--help", "print this help");  // -h is --noheader, as in Slurm
  SprioOptions o;
  std::string users, jobs;
  app.add_option("-u,--user", users, "only these users");
  app.add_option("-j,--jobs", jobs, "only these jobs");
  app.add_flag("-l,--long", o.long_format, "long format");
  app.add_flag("-h,--noheader", o.noheader, "no header");
  app.add_option("-o,--format", o.format, "output format");
  CLI11_PARSE(app, argc, argv);
  o.show_user = !users.empty();
  client::ApiClient api;
  Result<nlohmann::json> r = Fetch(api, "/api/v1/priorities");
  if (!r.ok()) return Fail("sprio", r.status());
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& p : (*r)["priorities"]) {
    std::string id = std::to_string(p["job_id"].get<unsigned long long>());
    if (!users.empty() &&
        ("," + users + ",").find("," + p.value("user", "") + ",") == std::string::npos)
      continue;
    if (!jobs.empty() && ("," + jobs + ",").find("," + id + ",") == std::string::npos) continue;
    rows.push_back(p);
  }
  return Print("sprio", FormatSprio(rows, o));
}

int RunWhy(int argc, char** argv) {
  CLI::App app{
      "Why a job is pending, its priority by factor, its expected start and what blocks it",
      "lockstep why"};
  unsigned long long id = 0;
  bool json = false;
  app.add_option("job_id", id, "the job")->required();
  app.add_flag("--json", json, "the API's JSON");
  CLI11_PARSE(app, argc, argv);
  client::ApiClient api;
  Result<nlohmann::json> r = Fetch(api, "/api/v1/jobs/" + std::to_string(id) + "/why");
  if (!r.ok()) return Fail("lockstep why", r.status());
  const nlohmann::json& j = *r;
  if (json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  // What users wrote (the name, a reason naming them) is printed escaped (JStr).
  std::string state = JStr(j, "state");
  std::printf("job %llu (%s) is %s", id, JStr(j, "name").c_str(), state.c_str());
  const bool pending = state == "PENDING";
  if (!pending)
    std::printf("%s\n", state == "RUNNING" ? (" on " + JStr(j, "nodes")).c_str() : "");
  else
    std::printf(": %s\n", JStr(j, "reason").c_str());
  // Why its last run did not complete: the answer to "was it my code or the machine?".
  if (auto failure = j.find("failure"); failure != j.end() && failure->is_object()) {
    const long long restarts = j.value("restart_count", 0ll);
    const bool requeued = restarts > 0 && (pending || state == "RUNNING");
    std::printf("  %s  %s: %s\n", requeued ? "last run's cause" : "failure cause",
                JStr(*failure, "cause").c_str(), JStr(*failure, "detail").c_str());
    if (restarts > 0) std::printf("  restarts  %lld (SLURM_RESTART_COUNT)\n", restarts);
  }
  if (!pending) return 0;
  std::printf("  priority  %llu", j.value("priority", 0ull));
  if (j.contains("priority_factors")) {
    const auto& f = j["priority_factors"];
    std::printf(
        " = age %.0f + fairshare %.0f + jobsize %.0f + partition %.0f + qos %.0f + tres %.0f - "
        "nice %d",
        f.value("age", 0.0), f.value("fairshare", 0.0), f.value("job_size", 0.0),
        f.value("partition", 0.0), f.value("qos", 0.0), f.value("tres", 0.0), f.value("nice", 0));
  }
  std::printf("\n");
  long long start = j.value("expected_start", 0ll);
  if (start > 0) {
    std::time_t t = static_cast<std::time_t>(start);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
    long long in = start - static_cast<long long>(std::time(nullptr));
    std::printf("  expected start  %s (in %s)%s\n", buf,
                FormatSlurmDuration(std::max(0ll, in)).c_str(),
                j.value("reserved", false) ? ", resources reserved: nothing may delay it" : "");
  } else {
    std::printf("  expected start  unknown\n");
  }
  if (!JStr(j, "reserved_nodes").empty())
    std::printf("  reserved nodes  %s\n", JStr(j, "reserved_nodes").c_str());
  if (j.contains("blocked_by") && !j["blocked_by"].empty())
    std::printf("  waits for jobs  %s to end\n", j["blocked_by"].dump().c_str());
  if (j.contains("ahead") && !j["ahead"].empty())
    std::printf("  ahead of it     %zu pending job(s) of higher priority\n", j["ahead"].size());
  return 0;
}

}  // namespace lockstep::cli
