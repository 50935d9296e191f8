// Concurrent submissions through lockstepd's REST API: C clients, each on its own connection,
// submit N jobs in total as fast as lockstepd acknowledges them (each acknowledgement means the
// job is durable). Prints submissions per second, the latency percentiles and, with --pid,
// lockstepd's resident memory after the last one.
//   submit_load --socket STATE/lockstepd.sock --clients 32 --jobs 100000 [--hold] [--pid PID]
// The start latency of a job that fits, with a queue that does not:
//   submit_load ... --fill-nodes 9999 --partition main --probe-partition express --probes 20
// first submits one exclusive job of 9,999 nodes in `main` and waits for it to run, then the
// load (one-GPU jobs in `main`, which all pend behind it), then, one at a time, `--probes`
// one-GPU jobs in `express` (nodes of its own), each timed from its submission to the first
// answer that no longer says PENDING; at the end it cancels the fill job.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "client/api_client.h"

namespace {

using Clock = std::chrono::steady_clock;

// VmRSS and VmHWM of a process, in MiB, from /proc.
std::pair<double, double> MemoryOf(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  double rss = 0, hwm = 0;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) rss = std::stod(line.substr(6)) / 1024;
    if (line.rfind("VmHWM:", 0) == 0) hwm = std::stod(line.substr(6)) / 1024;
  }
  return {rss, hwm};
}

// Polls `id` until it is no longer PENDING: its state then, or an error.
lockstep::Result<std::string> WaitWhilePending(lockstep::client::ApiClient& api, long id) {
  for (;;) {
    auto job = api.Get("/api/v1/jobs/" + std::to_string(id));
    if (!job.ok()) return job.status();
    std::string state = (*job).value("state", "");
    if (state != "PENDING") return state;
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // a poll, not a sync
  }
}

lockstep::Result<long> SubmitOne(lockstep::client::ApiClient& api, const nlohmann::json& spec) {
  auto r = api.Post("/api/v1/jobs", spec);
  if (!r.ok()) return r.status();
  return (*r).value("job_id", 0L);
}

// Submits `probes` jobs in turn and prints the percentiles of submission-to-start.
bool ProbeStartLatency(lockstep::client::ApiClient& api, nlohmann::json spec, int probes) {
  std::vector<double> ms;
  for (int i = 0; i < probes; ++i) {
    auto s = Clock::now();
    lockstep::Result<long> id = SubmitOne(api, spec);
    if (!id.ok()) {
      std::fprintf(stderr, "submit_load: probe: %s\n", id.status().message().c_str());
      return false;
    }
    lockstep::Result<std::string> state = WaitWhilePending(api, *id);
    if (!state.ok()) return false;
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("start latency of %d jobs that fit (ms): min %.1f median %.1f max %.1f\n", probes,
              ms.front(), ms[ms.size() / 2], ms.back());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket = lockstep::client::DefaultSocketPath();
  int clients = 32;
  long jobs = 10000;
  bool hold = false;
  int pid = 0;
  int fill_nodes = 0, probes = 0;
  std::string partition, probe_partition;
  CLI::App app{"concurrent submissions through lockstepd's API", "submit_load"};
  app.add_option("--socket", socket, "lockstepd's Unix socket");
  app.add_option("--clients", clients, "concurrent clients")->check(CLI::Range(1, 1024));
  app.add_option("--jobs", jobs, "jobs in total")->check(CLI::Range(1L, 100000000L));
  app.add_flag("--hold", hold, "submit held jobs (sbatch -H), so that none starts");
  app.add_option("--pid", pid, "lockstepd's pid, to report its memory");
  app.add_option("--partition", partition, "partition of the load's jobs (default: the default)");
  app.add_option("--fill-nodes", fill_nodes, "first run an exclusive job of this many nodes");
  app.add_option("--probe-partition", probe_partition, "partition of the start-latency probes");
  app.add_option("--probes", probes, "jobs that fit, timed from submission to start");
  CLI11_PARSE(app, argc, argv);

  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd)) return 1;
  nlohmann::json spec = {{"name", "load"},
                         {"script", "#!/bin/sh\ntrue\n"},
                         {"work_dir", cwd},
                         {"hold", hold},
                         {"min_nodes", 1},
                         {"ntasks", 1},
                         {"gpus", 1},
                         {"time_limit", 60},
                         {"output", "/dev/null"}};
  if (!partition.empty()) spec["partition"] = partition;
  lockstep::client::ApiClient control(socket);
  long fill_job = 0;
  if (fill_nodes > 0) {
    nlohmann::json fill = spec;
    fill["name"] = "fill";
    fill["script"] = "#!/bin/sh\nexec sleep 86400\n";
    fill["min_nodes"] = fill_nodes;
    fill["exclusive"] = true;
    fill.erase("gpus");
    fill["max_nodes"] = fill_nodes;
    fill["time_limit"] = 86400;
    lockstep::Result<long> id = SubmitOne(control, fill);
    lockstep::Result<std::string> state = id.ok() ? WaitWhilePending(control, *id)
                                                  : lockstep::Result<std::string>(id.status());
    if (!state.ok() || *state != "RUNNING") {
      std::fprintf(stderr, "submit_load: the fill job did not start: %s\n",
                   state.ok() ? state->c_str() : state.status().message().c_str());
      return 1;
    }
    fill_job = *id;
  }
  std::atomic<long> next{0};
  std::atomic<long> failures{0};
  std::vector<std::vector<double>> latencies(clients);
  auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      lockstep::client::ApiClient api(socket);
      while (next.fetch_add(1) < jobs) {
        auto s = Clock::now();
        auto r = api.Post("/api/v1/jobs", spec);
        latencies[c].push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
        if (!r.ok() && failures.fetch_add(1) == 0)
          std::fprintf(stderr, "submit_load: %s\n", r.status().message().c_str());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) { return all[static_cast<std::size_t>(p * (all.size() - 1))]; };
  std::printf(
      "%ld submissions, %d clients, %.2f s: %.0f submissions/s; latency ms p50 %.2f p99 %.2f"
      " max %.2f; %ld failed\n",
      jobs, clients, seconds, jobs / seconds, pct(0.5), pct(0.99), all.back(), failures.load());
  if (pid > 0) {
    auto [rss, hwm] = MemoryOf(pid);
    std::printf("lockstepd pid %d: VmRSS %.0f MiB, VmHWM %.0f MiB\n", pid, rss, hwm);
  }
  bool probed = true;
  if (probes > 0) {
    nlohmann::json probe = spec;
    probe["name"] = "probe";
    if (!probe_partition.empty()) probe["partition"] = probe_partition;
    probed = ProbeStartLatency(control, probe, probes);
  }
  if (fill_job != 0) (void)control.Post("/api/v1/jobs/" + std::to_string(fill_job) + "/cancel", {});
  return failures.load() == 0 && probed ? 0 : 1;
}
