// sinfo: partitions and nodes from the API, filtered as Slurm's options say
// (src/cli/slurm/node_filter.h), printed through Slurm's formats (src/cli/format/sinfo.h).
#include <cstdio>
#include <ctime>
#include <thread>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/reservations.h"
#include "cli/format/sinfo.h"
#include "cli/format/sinfo_record.h"
#include "cli/format/unknown_letters.h"
#include "cli/slurm/job_filter.h"
#include "cli/slurm/long_format.h"
#include "cli/slurm/node_filter.h"
#include "cli/slurm/slurm_options.h"
#include "cli/slurm_json_cli.h"
#include "common/hostlist.h"

namespace lockstep::cli {
namespace {

struct SinfoRequest {
  SinfoOptions format;
  NodeFilter filter;
  bool json = false;
  bool yaml = false;  // --yaml: the --json document as YAML
  bool reservations = false;  // -T: the reservations instead of the nodes
  int iterate = 0;
};

std::vector<SlurmOption> SinfoOptionTable(SinfoRequest& r) {
  auto flag = [](bool& b) {
    return [&b](const std::string&) {
      b = true;
      return Status::Ok();
    };
  };
  auto ignore = [](const std::string&) { return Status::Ok(); };
  auto nodes = [&r](const std::string& v) {
    Result<std::vector<std::string>> hosts = ExpandHostlist(v);
    if (!hosts.ok()) return InvalidArgument("Invalid node name specified: " + v);
    r.filter.nodes.insert(hosts->begin(), hosts->end());
    return Status::Ok();
  };
  return {
      {"all", 'a', OptArg::kNone, ignore, "show all partitions (all are shown)"},
      {"dead", 'd', OptArg::kNone, flag(r.filter.dead_only), "show only non-responding nodes"},
      {"exact", 'e', OptArg::kNone, flag(r.format.exact), "group nodes only on exact match of configuration"},
      {"federation", 0, OptArg::kNone, ignore, "report federated information (no effect)"},
      {"noheader", 'h', OptArg::kNone, flag(r.format.noheader), "no headers on output"},
      {"hide", 0, OptArg::kNone, ignore, "do not show hidden partitions"},
      {"iterate", 'i', OptArg::kRequired, [&r](const std::string& v) {
         try { r.iterate = std::stoi(v); } catch (...) { r.iterate = 0; }
         if (r.iterate <= 0) return InvalidArgument("invalid --iterate value: " + v);
         return Status::Ok(); }, "report every so many seconds", "seconds"},
      {"json", 0, OptArg::kNone, flag(r.json), "produce JSON output"},
      {"local", 0, OptArg::kNone, ignore, "show only the local cluster"},
      {"long", 'l', OptArg::kNone, flag(r.format.long_format), "long output - displays more information"},
      {"clusters", 'M', OptArg::kRequired, ignore, "clusters to issue commands to (this one)", "names"},
      {"nodes", 'n', OptArg::kRequired, nodes, "report on specific node(s)", "NODES"},
      {"noconvert", 0, OptArg::kNone, ignore, "don't convert units from their original type"},
      {"Node", 'N', OptArg::kNone, flag(r.format.node_oriented), "Node-centric format"},
      {"format", 'o', OptArg::kRequired, [&r](const std::string& v) { r.format.format = v; return Status::Ok(); }, "format specification", "format"},
      {"Format", 'O', OptArg::kRequired, [&r](const std::string& v) {
         Result<std::string> f = SinfoLongFormat(v);
         if (!f.ok()) return f.status();
         r.format.format = *f;
         return Status::Ok(); }, "long format specification", "format"},
      {"partition", 'p', OptArg::kRequired, AddCommaItems(r.filter.partitions), "report on specific partition", "PARTITION"},
      {"responding", 'r', OptArg::kNone, flag(r.filter.responding_only), "report only responding nodes"},
      {"list-reasons", 'R', OptArg::kNone, flag(r.format.list_reasons), "list reason nodes are down or drained"},
      {"summarize", 's', OptArg::kNone, flag(r.format.summarize), "report state summary only"},
      {"sort", 'S', OptArg::kRequired, [&r](const std::string& v) { r.format.sort = v; return Status::Ok(); }, "comma separated list of fields to sort on", "fields"},
      {"states", 't', OptArg::kRequired, [&r](const std::string& v) { return AddNodeStates(r.filter, v); }, "specify the what states of nodes to view", "node_state"},
      {"reservation", 'T', OptArg::kNone, flag(r.reservations), "show only reservation information"},
      {"verbose", 'v', OptArg::kNone, ignore, "verbosity level"},
      {"version", 'V', OptArg::kNone, ignore, "output version information and exit"},
      {"yaml", 0, OptArg::kNone, flag(r.yaml), "produce YAML output"},
  };
}

// sinfo -T: the reservations (-l: after the date line, as Slurm's).
int ReportReservations(client::ApiClient& api, const SinfoRequest& r) {
  Result<nlohmann::json> all = api.Get("/api/v1/reservations");
  if (!all.ok()) return Fail("sinfo", all.status());
  if (r.format.long_format) std::printf("%s\n", DateLine(std::time(nullptr)).c_str());
  std::fputs(FormatSinfoReservations((*all)["reservations"]).c_str(), stdout);
  std::fflush(stdout);
  return 0;
}

int Report(client::ApiClient& api, SinfoRequest& r) {
  if (r.reservations) return ReportReservations(api, r);
  Result<nlohmann::json> parts = api.Get("/api/v1/partitions");
  if (!parts.ok()) return Fail("sinfo", parts.status());
  Result<nlohmann::json> nodes = api.Get("/api/v1/nodes");
  if (!nodes.ok()) return Fail("sinfo", nodes.status());
  nlohmann::json kept = FilterSinfo((*parts)["partitions"], (*nodes)["nodes"], r.filter);
  if (r.json || r.yaml)
    return PrintSlurmJson("sinfo", SinfoJson(kept["nodes"], CliSlurmJsonContext()), r.yaml);
  r.format.now = std::time(nullptr);
  Result<std::string> text = FormatSinfo(kept["partitions"], kept["nodes"], r.format);
  if (!text.ok()) return Fail("sinfo", text.status());
  std::fputs(text->c_str(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int RunSinfo(int argc, char** argv) {
  SinfoRequest r;
  ParsedCommandLine cl = ParseSlurmCommandLine("sinfo", argc, argv, SinfoOptionTable(r));
  if (cl.exit_code) return *cl.exit_code;
  for (char c : UnknownLetters(r.format.format, [](char l) { return SinfoHeader(l) != nullptr; }))
    std::fprintf(stderr, "Invalid node format specification: %c\n", c);  // Slurm's words, no prefix
  if (!cl.operands.empty()) {
    std::fprintf(stderr, "sinfo: error: Unrecognized option: %s\n", cl.operands[0].c_str());
    return 1;
  }
  client::ApiClient api;
  int rc = Report(api, r);
  while (r.iterate > 0 && rc == 0) {
    std::this_thread::sleep_for(std::chrono::seconds(r.iterate));  // sinfo -i: the user's period
    std::fputs("\n", stdout);
    rc = Report(api, r);
  }
  return rc;
}

}  // namespace lockstep::cli
