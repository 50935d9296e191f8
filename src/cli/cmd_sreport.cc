// sreport: `cluster utilization` and `user top` from lockstep's job accounting, nodes and node
// events (src/cli/format/sreport.h; docs/commands.md). Slurm's command line: options, then the
// report's two words, then its conditions (start=, end=, format=, users=, accounts=, TopCount=,
// group), each word a case-insensitive prefix as sreport takes it.
#include <pwd.h>
#include <strings.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/sreport.h"
#include "cli/slurm/slurm_options.h"
#include "jobspec/sbatch.h"

namespace lockstep::cli {
namespace {

struct SreportRequest {
  SreportOptions options;
  std::string time_format;  // -t
  std::string tres;         // -T/--tres
  Time start = 0, end = 0;  // start=, end= (0: Slurm's default)
};

bool Word(const std::string& typed, const char* name, std::size_t least) {
  return ::strncasecmp(name, typed.c_str(), std::max(typed.size(), least)) == 0;
}

// "a,b,c" in order, empty items dropped.
std::vector<std::string> Split(const std::string& list) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from <= list.size()) {
    std::size_t comma = std::min(list.find(',', from), list.size());
    if (comma > from) out.push_back(list.substr(from, comma - from));
    from = comma + 1;
  }
  return out;
}

// One condition word (key=value, or a bare flag); `user_top` allows user top's own.
Status Condition(const std::string& word, bool user_top, SreportRequest& r, Time now) {
  const std::size_t eq = word.find('=');
  const std::string key = word.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
  auto time = [&](Time& out) -> Status {
    Result<Time> t = jobspec::ParseSlurmTime(value, now);
    if (!t.ok()) return InvalidArgument("Invalid time specification: " + word);
    out = *t;
    return Status::Ok();
  };
  if (eq == std::string::npos) {
    if (Word(key, "all_clusters", 1)) return Status::Ok();  // one cluster: this one
    if (user_top && Word(key, "group", 1)) {
      r.options.group_accounts = true;
      return Status::Ok();
    }
  } else if (Word(key, "Clusters", 1)) {
    for (const std::string& c : Split(value))
      if (c != r.options.cluster)
        return InvalidArgument("unknown cluster '" + c + "' (this one is " + r.options.cluster +
                               ")");
    return Status::Ok();
  } else if (Word(key, "End", 1)) {
    return time(r.end);
  } else if (Word(key, "Format", 1)) {
    r.options.format = Split(value);
    return Status::Ok();
  } else if (Word(key, "Start", 1)) {
    return time(r.start);
  } else if (user_top && Word(key, "TopCount", 1)) {
    try {
      std::size_t used = 0;
      r.options.top_count = std::stoi(value, &used);
      if (used != value.size() || r.options.top_count < 0) throw 0;
    } catch (...) {
      return InvalidArgument("Invalid value for TopCount (" + value + ")");
    }
    return Status::Ok();
  } else if (user_top && Word(key, "Users", 1)) {
    for (const std::string& u : Split(value)) r.options.users.insert(u);
    return Status::Ok();
  } else if (user_top && (Word(key, "Accounts", 2) || Word(key, "Acct", 4))) {
    for (const std::string& a : Split(value)) r.options.accounts.insert(a);
    return Status::Ok();
  }
  return InvalidArgument("Unknown condition: " + word);
}

std::string ProperName(const std::string& login) {
  const passwd* pw = ::getpwnam(login.c_str());
  if (!pw || !pw->pw_gecos) return "";
  std::string gecos = pw->pw_gecos;
  return gecos.substr(0, gecos.find(','));
}

// Every node event lockstepd still keeps (GET /api/v1/events, page by page).
Result<nlohmann::json> NodeEvents(client::ApiClient& api) {
  nlohmann::json all = nlohmann::json::array();
  std::uint64_t from = 0;
  for (;;) {
    Result<nlohmann::json> page = api.Get("/api/v1/events?max=10000&from=" + std::to_string(from));
    if (!page.ok()) return page.status();
    const nlohmann::json& events = (*page)["events"];
    if (!events.is_array() || events.empty()) break;
    for (const nlohmann::json& e : events)
      if (e.value("kind", "").rfind("node_", 0) == 0) all.push_back(e);
    from = (*page).value("next", std::uint64_t{0});
    if (from == 0) break;
  }
  return all;
}

}  // namespace

int RunSreport(int argc, char** argv) {
  SreportRequest r;
  auto ignore = [](const std::string&) { return Status::Ok(); };
  auto set = [](std::string& s) {
    return [&s](const std::string& v) {
      s = v;
      return Status::Ok();
    };
  };
  auto parsable = [&r](int kind) {
    return [&r, kind](const std::string&) {
      r.options.parsable = kind;
      return Status::Ok();
    };
  };
  const std::vector<SlurmOption> table = {
      {"all_clusters", 'a', OptArg::kNone, ignore, "use all clusters (this one)"},
      {"cluster", 'M', OptArg::kRequired, ignore, "cluster to issue commands to (this one)",
       "names"},
      {"federation", 0, OptArg::kNone, ignore, "report federated information (no effect)"},
      {"local", 0, OptArg::kNone, ignore, "report local cluster information only"},
      {"noheader", 'n', OptArg::kNone,
       [&r](const std::string&) {
         r.options.noheader = true;
         return Status::Ok();
       },
       "don't print header lines"},
      {"parsable", 'p', OptArg::kNone, parsable(1), "output '|' delimited with a trailing '|'"},
      {"parsable2", 'P', OptArg::kNone, parsable(2), "output '|' delimited without a trailing '|'"},
      {"quiet", 'Q', OptArg::kNone, ignore, "quiet mode: do not print warnings"},
      {"time", 't', OptArg::kRequired, set(r.time_format),
       "time format: Minutes, Seconds, Hours, Percent, MinPer, SecPer, HourPer", "time_format"},
      {"tres", 'T', OptArg::kRequired, set(r.tres),
       "TRES to report (cpu, mem, node, billing, energy, gres/gpu; ALL)", "tres_list"},
      {"verbose", 'v', OptArg::kNone, ignore, "more messages"},
      {"version", 'V', OptArg::kNone, ignore, "version information"},
  };
  ParsedCommandLine cl = ParseSlurmCommandLine(
      "sreport", argc, argv, table, "[OPTIONS] cluster utilization|user top [CONDITIONS]");
  if (cl.exit_code) return *cl.exit_code;
  const std::vector<std::string>& words = cl.operands;
  const bool cluster_util =
      words.size() >= 2 && Word(words[0], "cluster", 2) && Word(words[1], "Utilization", 2);
  const bool user_top = words.size() >= 2 && Word(words[0], "user", 1) && Word(words[1], "Top", 1);
  if (!cluster_util && !user_top)
    return Fail("sreport", "lockstep's sreport offers `cluster utilization` and `user top`" +
                               std::string(words.empty() ? "" : ", not: " + words[0]));
  const Time now = std::time(nullptr);
  if (!r.time_format.empty()) {
    Result<SreportTime> t = ParseSreportTime(r.time_format);
    if (!t.ok()) return Fail("sreport", t.status());
    r.options.time = *t;
  }
  if (!r.tres.empty() && r.tres != "ALL" && r.tres != "all") r.options.tres = Split(r.tres);
  if (r.tres == "ALL" || r.tres == "all")
    r.options.tres = {"cpu", "mem", "energy", "node", "billing", "gres/gpu"};
  for (std::size_t i = 2; i < words.size(); ++i)
    if (Status st = Condition(words[i], user_top, r, now); !st.ok()) return Fail("sreport", st);
  r.options.now = now;
  r.options.window = MakeSreportWindow(r.start, r.end, now);
  r.options.proper_name = ProperName;

  client::ApiClient api;
  Result<nlohmann::json> jobs =
      api.Get("/api/v1/accounting?start=" + std::to_string(r.options.window.start) +
              "&end=" + std::to_string(r.options.window.end));
  if (!jobs.ok()) return Fail("sreport", jobs.status());
  Result<nlohmann::json> nodes = api.Get("/api/v1/nodes");
  if (!nodes.ok()) return Fail("sreport", nodes.status());
  nlohmann::json events = nlohmann::json::array();
  if (cluster_util) {
    Result<nlohmann::json> got = NodeEvents(api);
    if (!got.ok()) return Fail("sreport", got.status());
    events = std::move(*got);
  }
  Result<std::string> text =
      cluster_util ? FormatClusterUtilization((*jobs)["jobs"], (*nodes)["nodes"], events, r.options)
                   : FormatUserTop((*jobs)["jobs"], (*nodes)["nodes"], r.options);
  if (!text.ok()) return Fail("sreport", text.status());
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace lockstep::cli
