// What the CLI spends turning the API's answer into Slurm's reports, at scale: squeue --json and
// sacct --json (Slurm 22.05's schema) over N jobs, sinfo --json over 10,000 nodes, and sreport
// cluster utilization and user top over N jobs, 10,000 nodes and their events
// (docs/benchmarks.md, "Slurm JSON and sreport").
//
//   build/bin/slurm_reports_bench [--benchmark_repetitions=3]
#include <benchmark/benchmark.h>

#include <string>

#include "cli/format/slurm_json.h"
#include "cli/format/sreport.h"

namespace {

using namespace lockstep;
using namespace lockstep::cli;

constexpr Time kNow = 1796256000;

// `n` jobs as the API lists them: half ran for an hour on two nodes (with a batch and an srun
// step), half pend; 50 users in 10 accounts.
nlohmann::json Jobs(int n) {
  nlohmann::json jobs = nlohmann::json::array();
  for (int i = 0; i < n; ++i) {
    const bool ran = i % 2 == 0;
    const int node = (i * 2) % 10000;
    const std::string nodes = "gpu" + std::to_string(node) + ",gpu" + std::to_string(node + 1);
    nlohmann::json j = {
        {"job_id", i + 1}, {"name", "train"}, {"user", "user" + std::to_string(i % 50)},
        {"uid", 1000 + i % 50}, {"gid", 1000}, {"account", "acct" + std::to_string(i % 10)},
        {"partition", "gpu"}, {"qos", "normal"}, {"state", ran ? "COMPLETED" : "PENDING"},
        {"reason", ran ? "None" : "Priority"}, {"nodes", ran ? nodes : ""}, {"node_count", 2},
        {"cpus", 32}, {"gpus", 16}, {"mem_mb", 65536}, {"tasks", 16},
        {"tres_per_node", "gres/gpu:8"}, {"time_limit", 7200}, {"submit_time", kNow - 7200},
        {"eligible_time", kNow - 7200}, {"start_time", ran ? kNow - 5400 : 0},
        {"end_time", ran ? kNow - 1800 : 0}, {"expected_start", ran ? 0 : kNow + 600},
        {"priority", 1000 + i}, {"exit_code", 0}, {"signal", 0}, {"work_dir", "/home/u"},
        {"dependency", ""}, {"restart_count", 0}, {"requeue", true}, {"nice", 0},
        {"features", ""}, {"req_nodes", ""}, {"exc_nodes", ""},
        {"batch_host", ran ? "gpu" + std::to_string(node) : ""}, {"command", "train.sh"},
        {"stdout", "/home/u/slurm.out"}, {"stderr", "/home/u/slurm.out"},
        {"steps", nlohmann::json::array()}};
    if (ran)
      j["steps"] = {{{"step_id", "batch"}, {"name", "batch"}, {"state", "COMPLETED"},
                     {"exit_code", 0}, {"signal", 0}, {"start_time", kNow - 5400},
                     {"end_time", kNow - 1800}, {"nodes", "gpu" + std::to_string(node)}},
                    {{"step_id", 0}, {"name", "python"}, {"state", "COMPLETED"},
                     {"exit_code", 0}, {"signal", 0}, {"start_time", kNow - 5390},
                     {"end_time", kNow - 1810}, {"nodes", nodes}, {"ntasks", 16}}};
    jobs.push_back(std::move(j));
  }
  return jobs;
}

nlohmann::json Nodes(int n) {
  nlohmann::json nodes = nlohmann::json::array();
  for (int i = 0; i < n; ++i)
    nodes.push_back({{"name", "gpu" + std::to_string(i)}, {"state", i % 100 ? "mixed" : "drained"},
                     {"reason", ""}, {"reason_user", ""}, {"reason_time", 0}, {"cpus", 128},
                     {"cpus_alloc", 32}, {"mem_mb", 2097152}, {"mem_alloc_mb", 65536},
                     {"gpus", 8}, {"gpus_alloc", 4}, {"gpu_type", "h100"},
                     {"gres", "gpu:h100:8"}, {"gres_used", "gpu:h100:4(IDX:0-3)"},
                     {"features", "ib"}, {"partitions", {"gpu"}}, {"weight", 1}});
  return nodes;
}

nlohmann::json Events(int nodes) {
  nlohmann::json events = nlohmann::json::array();
  for (int i = 0; i < nodes; i += 100) {
    events.push_back({{"kind", "node_drained"}, {"node", "gpu" + std::to_string(i)},
                      {"time", kNow - 3000}});
    events.push_back({{"kind", "node_resumed"}, {"node", "gpu" + std::to_string(i)},
                      {"time", kNow - 1000}});
  }
  return events;
}

SlurmJsonContext Ctx() {
  SlurmJsonContext c;
  c.now = kNow;
  return c;
}

void BM_SqueueJson(benchmark::State& state) {
  const nlohmann::json jobs = Jobs(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    Result<nlohmann::ordered_json> doc = SqueueJson(jobs, Ctx());
    benchmark::DoNotOptimize(doc->dump(2));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SqueueJson)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_SacctJson(benchmark::State& state) {
  const nlohmann::json jobs = Jobs(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    Result<nlohmann::ordered_json> doc = SacctJson(jobs, Ctx());
    benchmark::DoNotOptimize(doc->dump(2));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SacctJson)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_SinfoJson(benchmark::State& state) {
  const nlohmann::json nodes = Nodes(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    Result<nlohmann::ordered_json> doc = SinfoJson(nodes, Ctx());
    benchmark::DoNotOptimize(doc->dump(2));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SinfoJson)->Arg(10000)->Unit(benchmark::kMillisecond);

SreportOptions Options() {
  SreportOptions o;
  o.now = kNow;
  o.window = MakeSreportWindow(kNow - 86400, kNow, kNow);
  return o;
}

void BM_SreportClusterUtilization(benchmark::State& state) {
  const nlohmann::json jobs = Jobs(static_cast<int>(state.range(0)));
  const nlohmann::json nodes = Nodes(10000), events = Events(10000);
  for (auto _ : state)
    benchmark::DoNotOptimize(FormatClusterUtilization(jobs, nodes, events, Options()));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SreportClusterUtilization)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_SreportUserTop(benchmark::State& state) {
  const nlohmann::json jobs = Jobs(static_cast<int>(state.range(0)));
  const nlohmann::json nodes = Nodes(10000);
  for (auto _ : state) benchmark::DoNotOptimize(FormatUserTop(jobs, nodes, Options()));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SreportUserTop)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
