// Observability verbs: sdiag (the scheduler's statistics, as Slurm prints them), lockstep
// events (job and node changes, once or followed), lockstep metrics (the Prometheus text that
// lockstepd serves on /metrics). docs/observability.md.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/event_line.h"
#include "cli/format/sdiag.h"
#include "cli/slurm/slurm_options.h"

namespace lockstep::cli {

int RunSdiag(int argc, char** argv) {
  CLI::App app{"Scheduler diagnostics: scheduling cycles, jobs and RPCs", "sdiag"};
  bool json = false, version = false, ignored = false;
  app.add_flag("--json", json, "the statistics as JSON");
  app.add_flag("-V,--version", version, "print Slurm's release this answers as, and lockstep's");
  // Slurm's sorting of the RPC tables and -a (every cluster): nothing to change here.
  app.add_flag("-a,--all,-i,--sort-by-id,-t,--sort-by-time,-T,--sort-by-time2", ignored,
               "accepted, no effect");
  CLI11_PARSE(app, argc, argv);
  if (version) {
    std::fputs(SlurmVersionText().c_str(), stdout);
    return 0;
  }
  client::ApiClient api;
  Result<nlohmann::json> r = api.Get("/api/v1/sdiag");
  if (!r.ok()) return Fail("sdiag", r.status());
  const std::string text = json ? r->dump(2) + "\n" : FormatSdiag(*r);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

int RunEvents(int argc, char** argv) {
  CLI::App app{"Job and node events: submitted, started, ended, requeued, node drained, ...",
               "lockstep events"};
  bool follow = false, json = false;
  unsigned long long from = 0;
  app.add_flag("-f,--follow", follow, "keep printing events as they come");
  app.add_flag("--json", json, "one JSON object per line, with its \"seq\"");
  app.add_option("--from", from, "start at this sequence number (one past the last seen)");
  CLI11_PARSE(app, argc, argv);
  client::ApiClient api;
  for (;;) {
    // A long poll when following: lockstepd answers when an event comes or the wait ends.
    const std::string target =
        "/api/v1/events?from=" + std::to_string(from) + "&wait_ms=" + (follow ? "25000" : "0");
    Result<nlohmann::json> r = api.Get(target);
    if (!r.ok()) return Fail("lockstep events", r.status());
    const std::uint64_t dropped = r->value("dropped", std::uint64_t{0});
    if (dropped > 0)
      std::fprintf(stderr, "lockstep events: %llu events were dropped before they were read\n",
                   static_cast<unsigned long long>(dropped));
    const nlohmann::json& events = (*r)["events"];
    for (const nlohmann::json& e : events) {
      const std::string line = json ? e.dump() : FormatEventLine(e);
      std::printf("%s\n", line.c_str());
    }
    std::fflush(stdout);
    const unsigned long long next = r->value("next", from);
    const bool moved = next != from;
    from = next;
    if (!follow && !moved) return 0;  // read to the end
  }
}

int RunMetrics(int argc, char** argv) {
  CLI::App app{"Print lockstepd's metrics (Prometheus text)", "lockstep metrics"};
  std::string part;
  app.add_option("part", part, "jobs, nodes, partitions, scheduler or jobs-users-accts")
      ->check(CLI::IsMember({"jobs", "nodes", "partitions", "scheduler", "jobs-users-accts"}));
  CLI11_PARSE(app, argc, argv);
  client::ApiClient api;
  Result<std::string> r = api.GetText(part.empty() ? "/metrics" : "/metrics/" + part);
  if (!r.ok()) return Fail("lockstep metrics", r.status());
  std::fwrite(r->data(), 1, r->size(), stdout);
  return 0;
}

}  // namespace lockstep::cli
