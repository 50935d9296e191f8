// scontrol: show job/node/partition/hostnames; hold, release, requeue; update of nodes here, of
// jobs and partitions and notify in scontrol_update.cc; token (cmd_token.cc).
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <set>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/scontrol.h"
#include "cli/format/reservations.h"
#include "cli/format/scontrol_config.h"
#include "cli/scontrol_show.h"
#include "cli/slurm/job_filter.h"
#include "cli/scontrol_suspend.h"
#include "cli/scontrol_update.h"
#include "cli/scontrol_options.h"
#include "cli/scontrol_reservation.h"
#include "cli/slurm/slurm_options.h"
#include "common/duration.h"
#include "common/hostlist.h"

namespace lockstep::cli {
namespace {

constexpr const char* kUsage =
    "usage: scontrol show job [ID] | show node [NAME] | show partition [NAME] | show hostnames "
    "LIST | show config\n"
    "       scontrol show steps [JOBID[.STEP]] | show topology [NAME]\n"
    "       scontrol hold|uhold|release|requeue JOBID[,JOBID...] [JOBID...]\n"
    "       scontrol requeuehold [State=SpecialExit] JOBID[,JOBID...]\n"
    "       scontrol suspend|resume JOBID[,JOBID...] [JOBID...]\n"
    "       scontrol notify JOBID MESSAGE...\n"
    "       scontrol ping\n"
    "       scontrol write batch_script JOBID [FILE|-]\n"
    "       scontrol update JobId=ID[,ID...] [TimeLimit=[+|-]T] [Priority=N] [Nice=N]\n"
    "                [JobName=X] [Comment=X] [ArrayTaskThrottle=N], and of a pending job\n"
    "                [Account=A] [Partition=P] [QOS=Q] [NumNodes=N[-M]] [NumCPUs=N]\n"
    "                [MinMemoryNode=M|MinMemoryCPU=M] [Gres=gpu[:type]:N] [ReqNodeList=L]\n"
    "                [ExcNodeList=L] [Dependency=LIST] [StartTime=T]\n"
    "       scontrol update NodeName=NODES State=DRAIN|RESUME|DOWN [Reason=TEXT]\n"
    "       scontrol update PartitionName=P [State=UP|DOWN|DRAIN|INACTIVE] [MaxTime=T]\n"
    "                [Default=YES|NO]\n"
    "       scontrol show reservation [NAME]\n"
    "       scontrol create reservation StartTime=T Duration=D|EndTime=T Nodes=LIST|NodeCnt=N\n"
    "                Users=U[,U...]|Accounts=A[,A...] [ReservationName=NAME] [PartitionName=P]\n"
    "                [Flags=MAINT,IGNORE_JOBS,DAILY,WEEKLY,FLEX,OVERLAP,PURGE_COMP[=T]]\n"
    "       scontrol update ReservationName=NAME KEY=VALUE... (Users+=U, Flags-=F, ...)\n"
    "       scontrol delete ReservationName=NAME\n"
    "       scontrol token [username=NAME] [lifespan=SECONDS]\n"
    "       scontrol token revoke id=ID | username=NAME\n";

// An error, then the usage on lines of their own (the message itself is printed escaped).
int FailWithUsage(const std::string& message) {
  Fail("scontrol", message);
  std::fputs(kUsage, stderr);
  return 1;
}

// "Key=Value" words, keys case-insensitive (Slurm's scontrol accepts any case).
std::map<std::string, std::string> KeyValues(const std::vector<std::string>& words,
                                             std::string* bad) {
  std::map<std::string, std::string> kv;
  for (const std::string& w : words) {
    std::size_t eq = w.find('=');
    if (eq == std::string::npos) {
      *bad = w;
      return {};
    }
    std::string key = w.substr(0, eq);
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    kv[key] = w.substr(eq + 1);
  }
  return kv;
}

// scontrol ping: whether lockstepd answers, in Slurm's words.
int Ping(client::ApiClient& api) {
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  const bool up = api.Get("/api/v1/diag").ok();
  std::printf("Slurmctld(primary) at %s is %s\n", host, up ? "UP" : "DOWN");
  return up ? 0 : 1;
}

// -o/--oneliner: each record of `text` (records apart by blank lines) on one line.
std::string OneLiner(const std::string& text) {
  std::string out, line;
  std::stringstream in(text);
  bool first = true;
  while (std::getline(in, line)) {
    std::size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) {
      if (!first) out += "\n";
      first = true;
      continue;
    }
    out += (first ? "" : " ") + line.substr(start);
    first = false;
  }
  return first ? out : out + "\n";
}

// The records `scontrol show job NAME` prints, as {"jobs": [...]}: the job, or every component
// of a heterogeneous job named by its leader's id, or the one "43+1" names.
Result<nlohmann::json> ShowJobRecords(client::ApiClient& api, const std::string& name) {
  const std::size_t plus = name.find('+');
  Result<nlohmann::json> one = api.Get("/api/v1/jobs/" + name.substr(0, plus));
  if (!one.ok()) return one.status();
  const std::uint64_t het = one->value("het_job_id", std::uint64_t{0});
  if (het == 0 && plus == std::string::npos) return nlohmann::json{{"jobs", {*one}}};
  Result<std::vector<JobIdPattern>> pattern = ParseJobIdList(name);
  if (!pattern.ok() || pattern->size() != 1) return NotFound("Invalid job id specified");
  Result<nlohmann::json> all = api.Get("/api/v1/jobs?all=1&job=" + std::to_string(het));
  if (!all.ok()) return all.status();
  nlohmann::json out = {{"jobs", nlohmann::json::array()}};
  for (const nlohmann::json& job : (*all)["jobs"])
    if (JobMatches(job, pattern->front())) out["jobs"].push_back(job);
  if (out["jobs"].empty()) return NotFound("Invalid job id specified");
  return out;
}

// `show hostlist`: the hosts in the order given, neighbours with one prefix and width in one
// bracket, ascending runs as ranges (Slurm's unsorted hostlist: "n3,n1,n2" -> "n[3,1-2]").
std::string HostlistInOrder(const std::vector<std::string>& hosts) {
  struct Group {
    std::string prefix;
    std::size_t width = 0;
    std::vector<std::pair<long long, long long>> runs;  // [first, last]
  };
  std::vector<Group> groups;
  for (const std::string& h : hosts) {
    std::size_t d = h.size();
    while (d > 0 && std::isdigit(static_cast<unsigned char>(h[d - 1]))) --d;
    const std::string digits = h.substr(d);
    if (digits.empty() || digits.size() > 18) {
      groups.push_back({h, 0, {}});
      continue;
    }
    const long long n = std::stoll(digits);
    const std::size_t width = digits.size() > 1 && digits[0] == '0' ? digits.size() : 0;
    Group* last = groups.empty() ? nullptr : &groups.back();
    if (last && !last->runs.empty() && last->prefix == h.substr(0, d) && last->width == width) {
      if (last->runs.back().second + 1 == n)
        last->runs.back().second = n;
      else
        last->runs.push_back({n, n});
      continue;
    }
    groups.push_back({h.substr(0, d), width, {{n, n}}});
  }
  std::string out;
  auto number = [](long long n, std::size_t width) {
    std::string s = std::to_string(n);
    return s.size() < width ? std::string(width - s.size(), '0') + s : s;
  };
  for (const Group& g : groups) {
    if (!out.empty()) out += ',';
    if (g.runs.empty()) {
      out += g.prefix;
      continue;
    }
    if (g.runs.size() == 1 && g.runs[0].first == g.runs[0].second) {
      out += g.prefix + number(g.runs[0].first, g.width);
      continue;
    }
    out += g.prefix + '[';
    for (std::size_t i = 0; i < g.runs.size(); ++i) {
      if (i) out += ',';
      out += number(g.runs[i].first, g.width);
      if (g.runs[i].second != g.runs[i].first) out += '-' + number(g.runs[i].second, g.width);
    }
    out += ']';
  }
  return out;
}

// A job verb's error: an unknown job in Slurm's words ("Invalid job id specified for job 42",
// which scripts look for), anything else as lockstep says it.
int JobError(const std::string& id, const std::string& what, const Status& s) {
  if (s.code() != StatusCode::kNotFound) return Fail("scontrol", what + s.message());
  std::fprintf(stderr, "Invalid job id specified for job %s\n", id.c_str());
  return 1;
}

// `oneliner`: -o/--oneliner, each record on one line.
int Show(client::ApiClient& api, const std::vector<std::string>& a, bool oneliner) {
  ScontrolOptions o;
  o.now = std::time(nullptr);
  std::string what = a.size() > 1 ? a[1] : "";
  std::string name = a.size() > 2 ? a[2] : "";
  Result<std::string> text = std::string();
  if (what == "job" || what == "jobs" || what == "jobid") {
    Result<nlohmann::json> r = name.empty() ? api.Get("/api/v1/jobs") : ShowJobRecords(api, name);
    if (!r.ok() && r.status().code() == StatusCode::kNotFound) {
      std::fputs("slurm_load_jobs error: Invalid job id specified\n", stderr);  // Slurm's words
      return 1;
    }
    if (!r.ok()) return Fail("scontrol", r.status());
    text = FormatScontrolShowJob((*r)["jobs"], o);
  } else if (what == "node" || what == "nodes") {
    Result<nlohmann::json> r = api.Get("/api/v1/nodes");
    if (!r.ok()) return Fail("scontrol", r.status());
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : (*r)["nodes"])
      if (name.empty() || n["name"] == name) nodes.push_back(n);
    if (nodes.empty()) {
      std::printf("Node %s not found\n", name.c_str());  // on stdout, as Slurm's
      return 1;
    }
    text = FormatScontrolShowNode(nodes, o);
  } else if (what == "partition" || what == "partitions") {
    Result<nlohmann::json> p = api.Get("/api/v1/partitions"), n = api.Get("/api/v1/nodes");
    if (!p.ok() || !n.ok()) return Fail("scontrol", (!p.ok() ? p : n).status());
    nlohmann::json parts = nlohmann::json::array();
    for (const auto& x : (*p)["partitions"])
      if (name.empty() || x["name"] == name) parts.push_back(x);
    if (parts.empty()) {
      std::printf("Partition %s not found\n", name.c_str());  // on stdout, as Slurm's
      return 1;
    }
    text = FormatScontrolShowPartition(parts, (*n)["nodes"], o);
  } else if (what == "config") {
    Result<nlohmann::json> r = api.Get("/api/v1/config");
    if (!r.ok()) return Fail("scontrol", r.status());
    text = FormatScontrolShowConfig(*r, std::time(nullptr));
  } else if (IsReservationEntity(what)) {
    Result<nlohmann::json> r = api.Get("/api/v1/reservations");
    if (!r.ok()) return Fail("scontrol", r.status());
    text = FormatScontrolShowReservations((*r)["reservations"], name);
    if (!name.empty() && text->rfind("Reservation " + name + " not found", 0) == 0) {
      std::fputs(text->c_str(), stdout);  // on stdout, as Slurm's
      return 1;
    }
  } else if (what == "step" || what == "steps") {
    return ShowSteps(api, name, oneliner);
  } else if (what == "topology") {
    return ShowTopology(api, name);
  } else if (what == "hostnames" || what == "hostname") {
    text = FormatScontrolShowHostnames(name.empty() ? Environment()["SLURM_JOB_NODELIST"] : name);
  } else if (what == "hostlist" || what == "hostlistsorted") {
    // The names (a list, or one a line from show hostnames) as one hostlist expression.
    Result<std::vector<std::string>> hosts = ExpandHostlist(name);
    if (!hosts.ok()) return Fail("scontrol", hosts.status());
    text = (what == "hostlistsorted" ? CompressHostlist(*hosts) : HostlistInOrder(*hosts)) + "\n";
  } else {
    std::fprintf(stderr, "invalid entity:%s for keyword:show \n", what.c_str());  // Slurm's words
    return 1;
  }
  if (!text.ok()) return Fail("scontrol", text.status());
  std::fputs((oneliner ? OneLiner(*text) : *text).c_str(), stdout);
  return 0;
}

// scontrol write batch_script JOBID [FILE]: slurm-JOBID.sh by default, "-" for stdout.
int WriteBatchScript(client::ApiClient& api, const std::vector<std::string>& a) {
  if (a.size() < 3 || a.size() > 4 || (a[1] != "batch_script" && a[1] != "batch_scripts"))
    return FailWithUsage("invalid write command");
  Result<nlohmann::json> r = api.Get("/api/v1/jobs/" + a[2] + "/script");
  if (!r.ok()) return Fail("scontrol", r.status());
  const std::string script = r->value("script", "");
  const std::string file = a.size() == 4 ? a[3] : "slurm-" + a[2] + ".sh";
  if (file == "-") {
    std::fwrite(script.data(), 1, script.size(), stdout);
    return 0;
  }
  std::FILE* out = std::fopen(file.c_str(), "w");
  if (!out) return Fail("scontrol", "cannot open " + file + ": " + std::strerror(errno));
  const bool written = std::fwrite(script.data(), 1, script.size(), out) == script.size();
  if (std::fclose(out) != 0 || !written) return Fail("scontrol", "cannot write " + file);
  std::printf("batch script for job %s written to %s\n", a[2].c_str(), file.c_str());
  return 0;
}

// requeuehold's "State=SpecialExit" (or "State=SE"), as Slurm's scontrol reads it: any case,
// the value by its prefix.
bool IsSpecialExit(std::string word) {
  for (char& ch : word) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (word.rfind("state=", 0) != 0) return false;
  const std::string value = word.substr(6);
  return value.rfind("specialexit", 0) == 0 || value.rfind("se", 0) == 0;
}

// Slurm's requeuehold: each job requeued and held until released, in one request, so that no
// scheduling pass can start it between the two; `special_exit`: State=SpecialExit.
int RequeueHold(client::ApiClient& api, const std::string& ids, bool special_exit) {
  int rc = 0;
  std::stringstream in(ids);
  std::string id;
  nlohmann::json body = {{"hold", true}};
  if (special_exit) body["special_exit"] = true;
  while (std::getline(in, id, ',')) {
    Result<nlohmann::json> r = api.Post("/api/v1/jobs/" + id + "/requeue", body);
    if (!r.ok()) rc = JobError(id, "requeuehold of job " + id + ": ", r.status());
  }
  return rc;
}

// NodeName= takes a host list, as Slurm's does ("n[1-2]", "n1,n3"): every node must exist
// before any changes, then each is set in turn.
int UpdateNodes(client::ApiClient& api, std::map<std::string, std::string>& kv) {
  Result<std::vector<std::string>> names = ExpandHostlist(kv["nodename"]);
  if (!names.ok() || names->empty())
    return Fail("scontrol", "Invalid node name specified: " + kv["nodename"]);
  Result<nlohmann::json> all = api.Get("/api/v1/nodes");
  if (!all.ok()) return Fail("scontrol", all.status());
  std::set<std::string> known;
  for (const nlohmann::json& n : (*all)["nodes"]) known.insert(n.value("name", ""));
  for (const std::string& name : *names)
    if (!known.count(name)) return Fail("scontrol", "Invalid node name specified: " + name);
  const nlohmann::json body = {{"state", kv.count("state") ? kv["state"] : ""},
                               {"reason", kv.count("reason") ? kv["reason"] : ""}};
  for (const std::string& name : *names) {
    Result<nlohmann::json> r = api.Post("/api/v1/nodes/" + name + "/state", body);
    if (!r.ok()) return Fail("scontrol", "update of node " + name + ": " + r.status().message());
  }
  return 0;
}

int Update(client::ApiClient& api, const std::vector<std::string>& a) {
  std::string bad;
  std::map<std::string, std::string> kv = KeyValues({a.begin() + 1, a.end()}, &bad);
  if (!bad.empty()) return FailWithUsage("update: '" + bad + "' is not Key=Value");
  if (kv.count("nodename")) return UpdateNodes(api, kv);
  if (kv.count("partitionname")) return UpdatePartition(api, {a.begin() + 1, a.end()});
  if (!kv.count("jobid") && !kv.count("job"))
    return FailWithUsage("update: name a JobId=, a NodeName= or a PartitionName=");
  return UpdateJobs(api, {a.begin() + 1, a.end()});
}

// scontrol token revoke id=ID | username=NAME.
int TokenRevoke(const std::vector<std::string>& a) {
  std::string bad;
  std::map<std::string, std::string> kv =
      KeyValues(std::vector<std::string>(a.begin() + 2, a.end()), &bad);
  if (!bad.empty()) return Fail("scontrol", "token revoke: invalid argument: " + bad);
  std::string id, user;
  for (const auto& [k, v] : kv) {
    if (k == "id") {
      id = v;
    } else if (k == "username") {
      user = v;
    } else {
      return Fail("scontrol", "token revoke: invalid argument: " + k);
    }
  }
  return RevokeTokens("scontrol", id, user);
}

// scontrol token [username=NAME] [lifespan=SECONDS], as Slurm's (which prints SLURM_JWT=...).
int Token(const std::vector<std::string>& a) {
  if (a.size() >= 2 && a[1] == "revoke") return TokenRevoke(a);
  std::string bad;
  std::map<std::string, std::string> kv =
      KeyValues(std::vector<std::string>(a.begin() + 1, a.end()), &bad);
  if (!bad.empty()) return Fail("scontrol", "token: invalid argument: " + bad);
  long long lifespan = 0;
  std::string user;
  for (const auto& [k, v] : kv) {
    if (k == "username") {
      user = v;
    } else if (k == "lifespan") {
      char* end = nullptr;
      lifespan = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end || lifespan <= 0)
        return Fail("scontrol", "token: lifespan=" + v + " is not a positive number of seconds");
    } else {
      return Fail("scontrol", "token: invalid argument: " + k);
    }
  }
  return IssueToken("scontrol", user, lifespan);
}

}  // namespace

int RunScontrol(int argc, char** argv) {
  std::vector<std::string> a = Args(argc, argv);
  if (!a.empty() && (a[0] == "-h" || a[0] == "--help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  ScontrolCommandLine cl = ParseScontrolCommandLine(argc, argv);
  if (cl.exit_code) return *cl.exit_code;
  a = std::move(cl.words);
  const bool oneliner = cl.oneliner;
  if (a.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string& verb = a[0];
  if (verb == "token") return Token(a);
  client::ApiClient api;
  if (verb == "show") return Show(api, a, oneliner);
  if (verb == "version") {
    std::fputs(SlurmVersionText().c_str(), stdout);
    return 0;
  }
  if (verb == "ping") return Ping(api);
  if (verb == "write") return WriteBatchScript(api, a);
  if (verb == "requeuehold" && (a.size() == 2 || a.size() == 3)) {
    // scontrol requeuehold [State=SpecialExit|SE] JOBID[,JOBID...]
    bool special_exit = false;
    if (a.size() == 3 && !(special_exit = IsSpecialExit(a[1]))) {
      // Slurm 22.05's words: it takes a word that is not State=SE for a job id.
      std::fprintf(stderr, "Invalid job id specified for job %s\n", a[1].c_str());
      return 1;
    }
    return RequeueHold(api, a.back(), special_exit);
  }
  const bool job_list_verb = verb == "hold" || verb == "release" || verb == "requeue" ||
                             verb == "uhold" || verb == "suspend" || verb == "resume" ||
                             verb == "notify";
  if (job_list_verb && a.size() < 2) {
    std::fprintf(stderr, "too few arguments for keyword:%s\n", verb.c_str());  // Slurm's words
    return 1;
  }
  if (verb == "hold" || verb == "release" || verb == "requeue" || verb == "uhold")
    return JobActions(api, verb, {a.begin() + 1, a.end()});
  if (verb == "notify") return Notify(api, {a.begin() + 1, a.end()});
  if (verb == "create" && a.size() >= 2 && IsReservationEntity(a[1]))
    return CreateReservation(api, {a.begin() + 2, a.end()});
  if (verb == "update" && a.size() >= 2 && IsReservationKey(a[1]))
    return UpdateReservation(api, {a.begin() + 1, a.end()});
  if (verb == "delete" && a.size() == 2 && IsReservationKey(a[1]))
    return DeleteReservation(api, a[1].substr(a[1].find('=') + 1));
  if (verb == "delete" && a.size() == 3 && IsReservationEntity(a[1]))
    return DeleteReservation(api, a[2]);
  if (verb == "update") return Update(api, a);
  if (verb == "suspend" || verb == "resume") {  // "1 2", "1,2" or both: each job in turn
    int rc = 0;
    for (std::size_t i = 1; i < a.size(); ++i) rc |= SuspendJobs(api, verb, a[i], cl.quiet);
    return rc;
  }
  std::fprintf(stderr, "invalid keyword: %s\n", verb.c_str());  // Slurm's words
  return 1;
}

}  // namespace lockstep::cli
