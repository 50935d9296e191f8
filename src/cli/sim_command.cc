// `lockstep sim`: replay a trace, print a summary, optionally write per-job rows and charts.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <iostream>

#include "sim/simulator.h"
#include "cli/commands.h"
#include "config/cluster_config.h"
#include "trace/trace.h"

namespace lockstep::cli {
namespace {

struct SimArgs {
  std::string trace;
  std::string format;  // swf | alibaba | lockstep; empty: from the file
  std::string cluster;
  std::string nodes;   // the Alibaba node list
  std::string policy;  // fcfs | easy | conservative; empty: the cluster file's
  int depth = 0;
  bool json = false;
  std::string jobs_out;
  std::string plot_dir;
  std::string events_out;
  std::vector<std::string> reservations;  // --reservation "WORDS", one each
};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string GuessFormat(const std::string& path) {
  if (EndsWith(path, ".swf") || EndsWith(path, ".swf.gz")) return "swf";
  auto text = trace::ReadFileMaybeGzip(path);
  if (text.ok() && text->rfind("name,cpu_milli", 0) == 0) return "alibaba";
  return "lockstep";
}

Result<trace::Trace> LoadTrace(SimArgs& a) {
  if (a.format.empty()) a.format = GuessFormat(a.trace);
  if (a.format == "swf") return trace::ReadSwf(a.trace);
  if (a.format == "lockstep") return trace::ReadLockstepCsv(a.trace);
  if (a.format == "alibaba") {
    std::string nodes = a.nodes;
    if (nodes.empty()) {
      auto slash = a.trace.find_last_of('/');
      std::string dir = slash == std::string::npos ? "" : a.trace.substr(0, slash + 1);
      nodes = dir + "openb_node_list_gpu_node.csv";
      if (access(nodes.c_str(), R_OK) != 0 && a.cluster.empty())
        return InvalidArgument(
            "an Alibaba trace needs its node list: give --nodes FILE or --cluster FILE");
      if (access(nodes.c_str(), R_OK) != 0) nodes.clear();
    }
    return trace::ReadAlibaba(a.trace, nodes);
  }
  return InvalidArgument("--format: '" + a.format + "' is not one of swf, alibaba, lockstep");
}

Status ApplyPolicy(const SimArgs& a, config::ClusterConfig& cluster, sim::SimOptions& o) {
  o.policy = cluster.policy;
  o.policy.estimate_starts = false;  // the replay needs decisions, not forecasts
  o.fairshare_half_life = cluster.fairshare_half_life;
  if (a.policy == "fcfs") {
    o.policy.reservation_depth = 0;
  } else if (a.policy == "easy") {
    o.policy.reservation_depth = 1;
  } else if (a.policy == "conservative") {
    o.policy.reservation_depth =
        a.depth > 0 ? a.depth : std::max(100, cluster.policy.reservation_depth);
  } else if (!a.policy.empty()) {
    return InvalidArgument("--policy: '" + a.policy + "' is not one of fcfs, easy, conservative");
  }
  if (a.depth > 0 && a.policy.empty()) o.policy.reservation_depth = a.depth;
  int d = o.policy.reservation_depth;
  o.policy_name = d == 0 ? "fcfs" : d == 1 ? "easy" : "conservative(" + std::to_string(d) + ")";
  return Status::Ok();
}

int Fail(const Status& s) {
  std::fprintf(stderr, "lockstep sim: %s\n", s.message().c_str());
  return 1;
}

}  // namespace

int RunSim(int argc, char** argv) {
  SimArgs a;
  CLI::App app{"Replay a workload trace through lockstep's scheduler in virtual time.",
               "lockstep sim"};
  app.add_option("--trace", a.trace, "the trace file (.gz is read too)")->required();
  app.add_option("--format", a.format, "swf, alibaba or lockstep (default: from the file)");
  app.add_option("--cluster", a.cluster, "cluster YAML (default: the cluster the trace names)");
  app.add_option("--nodes", a.nodes, "the Alibaba node list (default: beside the trace)");
  app.add_option("--policy", a.policy, "fcfs, easy or conservative (default: the cluster file's)");
  app.add_option("--depth", a.depth, "reservations for conservative (default 100)");
  app.add_option("--reservation", a.reservations,
                 "a reservation held during the replay, as scontrol create reservation's words "
                 "(\"StartTime=now+1hour Duration=120 Nodes=n[1-2] Flags=MAINT Users=root\"); "
                 "now is the trace's first submission; repeatable");
  app.add_flag("--json", a.json, "print the summary as one JSON object");
  app.add_option("--jobs-out", a.jobs_out, "write one CSV row per job");
  app.add_option("--plot", a.plot_dir, "write SVG charts into this directory");
  app.add_option("--events-out", a.events_out,
                 "write the placement log (starts, ends, preemptions)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  Result<trace::Trace> trace = LoadTrace(a);
  if (!trace.ok()) return Fail(trace.status());
  Result<config::ClusterConfig> cluster =
      a.cluster.empty() ? sim::ClusterFromTrace(*trace) : config::LoadClusterConfig(a.cluster);
  if (!cluster.ok()) return Fail(cluster.status());
  sim::SimOptions o;
  if (Status s = ApplyPolicy(a, *cluster, o); !s.ok()) return Fail(s);
  o.progress = isatty(STDERR_FILENO) && !a.json;
  for (const std::string& text : a.reservations) {
    std::istringstream words(text);
    o.reservations.emplace_back(std::istream_iterator<std::string>(words),
                                std::istream_iterator<std::string>());
  }
  std::ofstream events;
  if (!a.events_out.empty()) {
    events.open(a.events_out);
    if (!events) return Fail(IoError("cannot write " + a.events_out));
    o.event_log = &events;
  }
  Result<sim::SimResult> result = sim::Simulate(*trace, std::move(*cluster), o);
  if (!result.ok()) return Fail(result.status());
  sim::Summary summary = sim::Summarize(*result);
  std::cout << (a.json ? sim::SummaryJson(*result, summary) + "\n"
                       : sim::FormatSummary(*result, summary));
  if (!a.jobs_out.empty())
    if (Status s = sim::WriteJobsCsv(*result, a.jobs_out); !s.ok()) return Fail(s);
  if (!a.plot_dir.empty()) {
    if (Status s = sim::WritePlots(*result, a.plot_dir); !s.ok()) return Fail(s);
    if (!a.json) std::cout << "charts: " << a.plot_dir << "/{utilization,queue,wait_cdf}.svg\n";
  }
  return 0;
}

}  // namespace lockstep::cli
