// What one sstat sample of a task costs the agent (docs/benchmarks.md, "Task usage samples"):
// Launcher::Usage of a task of N processes, through its cgroup v2 where the host gives one (the
// agent's case), else its process group from /proc. The agent takes one per running task every
// --acct-gather-frequency seconds.
#include <benchmark/benchmark.h>
#include <signal.h>

#include <string>

#include "backend/agent/launcher.h"

namespace {

using lockstep::agent::Launcher;
using lockstep::agent::TaskSpec;

Launcher& TheLauncher() {
  static std::unique_ptr<Launcher> launcher = [] {
    auto l = Launcher::Create({});
    if (!l.ok()) std::abort();
    return std::move(*l);
  }();
  return *launcher;
}

// A task of `processes` processes: a shell and processes-1 sleeping children.
pid_t StartTask(int processes, bool cgroup) {
  TaskSpec spec;
  std::string script;
  for (int i = 1; i < processes; ++i) script += "sleep 600 & ";
  script += "wait";
  spec.argv = {"/bin/sh", "-c", script};
  spec.cwd = "/tmp";
  spec.uid = ::getuid();
  spec.gid = ::getgid();
  if (cgroup && TheLauncher().cgroups_enabled())
    spec.cgroup_name =
        "bench_usage_" + std::to_string(::getpid()) + "_" + std::to_string(processes);
  auto pid = TheLauncher().Spawn(spec);
  if (!pid.ok()) std::abort();
  // Until every child is there: a sample of a half-started task would measure less.
  for (int tries = 0; tries < 200; ++tries) {
    auto u = TheLauncher().Usage(*pid);
    if (u.ok() && static_cast<int>(u->pids.size()) >= processes) break;
    ::usleep(10000);
  }
  return *pid;
}

void BM_TaskUsage(benchmark::State& state) {
  const int processes = static_cast<int>(state.range(0));
  const bool cgroup = state.range(1) != 0;
  const pid_t pid = StartTask(processes, cgroup);
  for (auto _ : state) {
    auto u = TheLauncher().Usage(pid);
    benchmark::DoNotOptimize(u);
  }
  state.SetLabel(cgroup && TheLauncher().cgroups_enabled() ? "cgroup" : "process group");
  (void)TheLauncher().Terminate(pid, std::chrono::seconds(1));
  (void)TheLauncher().Wait(pid);
}
BENCHMARK(BM_TaskUsage)->ArgsProduct({{1, 8, 64}, {1, 0}})->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
