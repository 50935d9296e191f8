// `lockstep drain` and `lockstep resume`: node maintenance. `drain --rolling` maintains the
// nodes a batch at a time (rolling_drain.h); plain `drain NODES --reason TEXT` and
// `resume NODES` set the state of every node, after checking that all of them exist.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/rolling_drain.h"
#include "common/duration.h"
#include "common/hostlist.h"

namespace lockstep::cli {
namespace {

// Drain only, or resume only: every node named must exist before any changes.
int SetAll(const std::string& verb, const std::vector<std::string>& words, const std::string& state,
           const std::string& reason, bool dry_run) {
  Result<std::vector<std::string>> names = ExpandNodes(words);
  if (!names.ok()) return Fail("lockstep " + verb, names.status());
  client::ApiClient api;
  Result<std::vector<NodeBefore>> nodes = ReadNodes(api, *names);
  if (!nodes.ok()) return Fail("lockstep " + verb, nodes.status());
  std::string list = CompressHostlist(*names);
  if (dry_run) {
    std::printf("%s: %s (dry run, nothing is changed)\n", list.c_str(), verb.c_str());
    return 0;
  }
  for (const NodeBefore& n : *nodes) {
    Status s = SetNodeState(api, n.name, state, reason);
    if (!s.ok()) return Fail("lockstep " + verb, n.name + ": " + s.message());
  }
  std::printf("%s: %s%s\n", list.c_str(), state == "DRAIN" ? "drain" : "resumed",
              state == "DRAIN" ? (" (" + reason + ")").c_str() : "");
  return 0;
}

}  // namespace

int RunDrain(int argc, char** argv) {
  CLI::App app{
      "Drain nodes; with --rolling, maintain them a batch at a time: drain, wait for their jobs, "
      "--exec, resume",
      "lockstep drain"};
  std::vector<std::string> words;
  RollingDrainOptions o;
  bool rolling = false, no_resume = false;
  int max_unavailable = 0;
  std::string deadline;
  app.add_option("NODES", words, "a hostlist: node[1-4], gpu[001-064] (default: --reservation's)");
  app.add_flag("--rolling", rolling, "rolling maintenance, a batch at a time");
  app.add_option("--reservation", o.reservation,
                 "wait for this reservation's window and maintain its nodes in it");
  app.add_option("--batch", o.batch, "nodes drained at a time (default 1)")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-unavailable", max_unavailable, "the same as --batch")
      ->check(CLI::PositiveNumber);
  app.add_option("--deadline", deadline,
                 "wait at most this long for a batch's jobs (Slurm duration: 30:00, 0:30), "
                 "then requeue them (cancel those that may not be requeued)");
  app.add_option("--exec", o.exec,
                 "run once per batch by /bin/sh, with LOCKSTEP_NODES and LOCKSTEP_NODE_COUNT");
  app.add_option("--reason", o.reason, "why (the nodes' drain reason)");
  app.add_flag("--no-resume", no_resume, "leave every batch drained");
  app.add_flag("--dry-run", o.dry_run, "print the batches; change nothing");
  app.add_flag("--json", o.json, "a JSON report on stdout (progress lines go to stderr)");
  app.add_option("--interval", o.interval_s, "seconds between polls of lockstepd (default 1)")
      ->check(CLI::Range(0.05, 3600.0));
  CLI11_PARSE(app, argc, argv);
  o.resume = !no_resume;
  if (!rolling) {
    if (!o.reservation.empty()) return Fail("lockstep drain", "--reservation needs --rolling");
    if (words.empty()) return Fail("lockstep drain", "name the NODES to drain");
    if (o.reason.empty())
      return Fail("lockstep drain", "give a --reason (or --rolling for rolling maintenance)");
    if (!o.exec.empty() || !deadline.empty() || max_unavailable || o.json || !o.resume)
      return Fail("lockstep drain",
                  "--exec, --deadline, --batch, --no-resume and --json need --rolling");
    return SetAll("drain", words, "DRAIN", o.reason, o.dry_run);
  }
  if (max_unavailable && app.count("--batch") && max_unavailable != o.batch)
    return Fail("lockstep drain",
                "--batch and --max-unavailable differ (they are the same option)");
  if (max_unavailable) o.batch = max_unavailable;
  if (!deadline.empty()) {
    Result<Seconds> d = ParseSlurmDuration(deadline);
    if (!d.ok()) return Fail("lockstep drain", "--deadline: " + d.status().message());
    if (*d < kUnlimited) o.deadline = *d;
  }
  client::ApiClient api;
  if (!o.reservation.empty()) {
    Result<std::vector<std::string>> in_window = ReservationNodes(api, o.reservation);
    if (!in_window.ok()) return Fail("lockstep drain", in_window.status());
    if (words.empty()) words = *in_window;
    Result<std::vector<std::string>> named = ExpandNodes(words);
    if (!named.ok()) return Fail("lockstep drain", named.status());
    for (const std::string& n : *named)
      if (std::find(in_window->begin(), in_window->end(), n) == in_window->end())
        return Fail("lockstep drain", n + " is not in reservation " + o.reservation);
  }
  if (words.empty()) return Fail("lockstep drain", "name the NODES (or a --reservation)");
  Result<std::vector<std::string>> names = ExpandNodes(words);
  if (!names.ok()) return Fail("lockstep drain", names.status());
  o.nodes = *names;
  Result<std::vector<NodeBefore>> nodes = ReadNodes(api, o.nodes);
  if (!nodes.ok()) return Fail("lockstep drain", nodes.status());
  return RunRollingDrain(api, std::move(o), std::move(*nodes));
}

int RunResume(int argc, char** argv) {
  CLI::App app{"Resume drained or down nodes (State=RESUME)", "lockstep resume"};
  std::vector<std::string> words;
  bool dry_run = false;
  app.add_option("NODES", words, "a hostlist: node[1-4]")->required();
  app.add_flag("--dry-run", dry_run, "check the nodes; change nothing");
  CLI11_PARSE(app, argc, argv);
  return SetAll("resume", words, "RESUME", "", dry_run);
}

}  // namespace lockstep::cli
