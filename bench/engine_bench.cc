// Benchmarks of one scheduling pass, plan(), on large GPU clusters (bench/bench_workload.h).
// Only plan() is timed: the Snapshot is built once per size, outside the loop.
//
// Goals (the scaling issue): EASY with 100,000 pending on 10,000 x 8 GPUs <= 100 ms;
// conservative with 1,000 reservations <= 1 s. docs/benchmarks.md has the figures.
//
//   build-bench/bin/engine_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "bench/bench_workload.h"
#include "engine/model.h"
#include "engine/plan_checker.h"

namespace lockstep::bench {
namespace {

using engine::Plan;
using engine::PolicyOptions;
using engine::Snapshot;

// One Snapshot per size, built on first use and kept for the whole run.
const Snapshot& SnapshotFor(int nodes, int pending) {
  static std::map<std::pair<int, int>, std::unique_ptr<Snapshot>> cache;
  auto& slot = cache[{nodes, pending}];
  if (!slot) {
    BenchWorkload w;
    w.nodes = nodes;
    w.pending = pending;
    slot = std::make_unique<Snapshot>(MakeBenchSnapshot(w));
  }
  return *slot;
}

struct Case {
  std::string name;
  int nodes;
  int pending;
  int depth;
  bool estimate_starts;
  bool fairshare;  // multifactor priority (age + fair-share + size) instead of FIFO order
};

void RunCase(benchmark::State& state, Case c) {
  const Snapshot& s = SnapshotFor(c.nodes, c.pending);
  PolicyOptions o;
  o.reservation_depth = c.depth;
  o.estimate_starts = c.estimate_starts;
  if (c.fairshare) {
    o.weights.age = 1000;
    o.weights.fairshare = 10000;
    o.weights.job_size = 100;
  }
  // Once, untimed: the plan must be valid, or the timing means nothing.
  static std::map<std::string, bool> checked;
  if (!checked[c.name]) {
    checked[c.name] = true;
    Plan p = engine::plan(s, o);
    if (Status st = engine::CheckPlan(s, o, p); !st.ok()) {
      state.SkipWithError(("invalid plan: " + st.message()).c_str());
      return;
    }
  }
  std::size_t starts = 0, reservations = 0, with_estimate = 0;
  std::int64_t tested = 0;
  for (auto _ : state) {
    Plan p = engine::plan(s, o);
    state.PauseTiming();  // counting and freeing the plan are not the pass
    starts = p.starts.size();
    reservations = with_estimate = 0;
    for (const auto& pd : p.pending) {
      reservations += pd.reserved;
      with_estimate += pd.expected_start != 0;
    }
    tested = p.jobs_tested;
    { Plan gone = std::move(p); }
    state.ResumeTiming();
  }
  state.counters["starts"] = static_cast<double>(starts);
  state.counters["reservations"] = static_cast<double>(reservations);
  state.counters["estimated"] = static_cast<double>(with_estimate);
  state.counters["tested"] = static_cast<double>(tested);
  state.counters["running"] = static_cast<double>(s.running.size());
}

void Register(const std::string& name, Case c) {
  c.name = name;
  benchmark::RegisterBenchmark(name.c_str(), [c](benchmark::State& st) { RunCase(st, c); })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}

// Sizes: {nodes, pending, label}.
struct Size {
  int nodes, pending;
  const char* label;
};
constexpr Size kSizes[] = {
    {1000, 10000, "10kPending_1kNodes"},
    {3000, 30000, "30kPending_3kNodes"},
    {10000, 100000, "100kPending_10kNodes"},
};

const bool registered = [] {
  for (const Size& z : kSizes) {
    std::string l = z.label;
    Register("BM_PlanFifo_" + l, {"", z.nodes, z.pending, 0, false, false});
    Register("BM_PlanEasy_" + l, {"", z.nodes, z.pending, 1, false, false});
    Register("BM_PlanEasy_" + l + "_EstimateStarts", {"", z.nodes, z.pending, 1, true, false});
    Register("BM_PlanEasy_" + l + "_Multifactor", {"", z.nodes, z.pending, 1, false, true});
    std::string cons = z.nodes == 10000 ? "BM_PlanConservative_1000Reservations"
                                        : "BM_PlanConservative_1000Reservations_" + l;
    Register(cons, {"", z.nodes, z.pending, 1000, false, false});
  }
  return true;
}();

}  // namespace
}  // namespace lockstep::bench

BENCHMARK_MAIN();
