// Concurrent submissions through lockstepd's REST API: C clients, each on its own connection,
// submit N jobs in total as fast as lockstepd acknowledges them (each acknowledgement means the
// job is durable). Prints submissions per second, the latency percentiles and, with --pid,
// lockstepd's resident memory after the last one.
//   submit_load --socket STATE/lockstepd.sock --clients 32 --jobs 100000 [--hold] [--pid PID]
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

}  // namespace

int main(int argc, char** argv) {
  std::string socket = lockstep::client::DefaultSocketPath();
  int clients = 32;
  long jobs = 10000;
  bool hold = false;
  int pid = 0;
  CLI::App app{"concurrent submissions through lockstepd's API", "submit_load"};
  app.add_option("--socket", socket, "lockstepd's Unix socket");
  app.add_option("--clients", clients, "concurrent clients")->check(CLI::Range(1, 1024));
  app.add_option("--jobs", jobs, "jobs in total")->check(CLI::Range(1L, 100000000L));
  app.add_flag("--hold", hold, "submit held jobs (sbatch -H), so that none starts");
  app.add_option("--pid", pid, "lockstepd's pid, to report its memory");
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
  return failures.load() == 0 ? 0 : 1;
}
