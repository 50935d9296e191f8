// The stateful Scheduler (src/engine/scheduler.h) on the cluster and queue of
// bench/bench_workload.h: the cost of planning after one event, a submission or the end of a
// running job, with 100,000 pending jobs on 10,000 nodes x 8 GPUs under EASY.
//
// Each iteration moves the clock 5 s (ending the jobs that reach their limits, as lockstepd
// does), applies one event (untimed), then times Scheduler::Plan alone; the plan's
// starts are then applied (untimed), as a controller or the simulator would. Every iteration's
// time is kept and the median and 99th percentile are reported as counters: wall (p50_ms,
// p99_ms) and this thread's CPU time (cpu_p50_ms, cpu_p99_ms).
// BM_SchedulerFirstPass times the first pass of a fresh Scheduler (the full pass) for
// comparison with plan() in engine_bench. The EveryJobQosLimited variant puts every job under a
// QoS MaxTRESPerUser that never binds: the cost of usage limits, which no block skipping
// avoids yet.
//
// Goals (issue 13): one event, median <= 1 ms and p99 <= 10 ms of planning; a full pass <= 60 ms.
//
//   build-bench/bin/engine_scheduler_bench --benchmark_min_time=2000x
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <vector>

#include "bench/bench_workload.h"
#include "engine/plan_checker.h"
#include "engine/scheduler.h"

namespace lockstep::bench {
namespace {

using engine::PlanDetail;

const engine::Snapshot& Workload() {
  static const std::unique_ptr<engine::Snapshot> s = [] {
    BenchWorkload w;
    return std::make_unique<engine::Snapshot>(MakeBenchSnapshot(w));
  }();
  return *s;
}

engine::PolicyOptions Easy() {
  engine::PolicyOptions o;
  o.reservation_depth = 1;
  o.estimate_starts = false;
  return o;
}

// This thread's CPU time: on two cores shared with other work, wall time measures the
// neighbours as much as the code; both are reported.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double WallMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::size_t k = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

void ApplyStarts(engine::Scheduler& sched, const engine::Plan& p) {
  for (const engine::Start& st : p.starts) sched.StartJob(st.job, st.allocation);
}

// lockstepd kills a job at its time limit: the clock of the benchmark moves on, and so do they.
void EndJobsPastTheirLimits(engine::Scheduler& sched, Time now) {
  std::vector<JobId> ended;
  for (const engine::Job& j : sched.snapshot().running)
    if (j.start_time + j.req.time_limit <= now) ended.push_back(j.id);
  for (JobId id : ended) sched.SetFinished(id, engine::Outcome::kCompleted);
}

// The workload with a MaxTRESPerUser on the QoS every job uses, high enough never to hold a
// job back: every job is bound by a usage limit, so no block of the queue is skipped.
const engine::Snapshot& LimitedWorkload() {
  static const std::unique_ptr<engine::Snapshot> s = [] {
    auto limited = std::make_unique<engine::Snapshot>(Workload());
    limited->qos[0].max_tres_per_user.gpus = 1'000'000;
    return limited;
  }();
  return *s;
}

void OneEvent(benchmark::State& state, PlanDetail detail, bool limited = false) {
  const engine::Snapshot& s = limited ? LimitedWorkload() : Workload();
  engine::Scheduler sched(s, Easy());
  Time now = s.now;
  // The first pass starts what fits; events are timed from the steady state after it.
  ApplyStarts(sched, sched.Plan(now));
  std::mt19937_64 rng(7);
  JobId next_id = 90'000'000;
  std::vector<double> cpu_ms, wall_ms;
  bool checked = false;
  std::size_t i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    now += 5;
    EndJobsPastTheirLimits(sched, now);
    const engine::Snapshot& cur = sched.snapshot();
    if (i++ % 2 == 0 || cur.running.empty()) {  // a submission like one already queued
      engine::Job j = cur.pending[rng() % cur.pending.size()];
      j.id = next_id++;
      j.submit_time = now;
      sched.SetPending(std::move(j));
    } else {  // a running job ends
      sched.SetFinished(cur.running[rng() % cur.running.size()].id, engine::Outcome::kCompleted);
    }
    state.ResumeTiming();
    const double t0 = ThreadCpuMs(), w0 = WallMs();
    engine::Plan p = sched.Plan(now, detail);
    cpu_ms.push_back(ThreadCpuMs() - t0);
    wall_ms.push_back(WallMs() - w0);
    state.PauseTiming();
    if (!checked && detail == PlanDetail::kFull) {  // once: the timing means nothing otherwise
      checked = true;
      if (Status st = engine::CheckPlan(sched.snapshot(), sched.options(), p); !st.ok())
        state.SkipWithError(("invalid plan: " + st.message()).c_str());
    }
    ApplyStarts(sched, p);
    { engine::Plan gone = std::move(p); }
    state.ResumeTiming();
  }
  state.counters["p50_ms"] = Percentile(wall_ms, 50);
  state.counters["p99_ms"] = Percentile(wall_ms, 99);
  state.counters["cpu_p50_ms"] = Percentile(cpu_ms, 50);
  state.counters["cpu_p99_ms"] = Percentile(cpu_ms, 99);
  state.counters["pending"] = static_cast<double>(sched.snapshot().pending.size());
  state.counters["running"] = static_cast<double>(sched.snapshot().running.size());
}

void FirstPass(benchmark::State& state) {
  const engine::Snapshot& s = Workload();
  for (auto _ : state) {
    state.PauseTiming();
    auto sched = std::make_unique<engine::Scheduler>(s, Easy());
    state.ResumeTiming();
    engine::Plan p = sched->Plan(s.now);
    benchmark::DoNotOptimize(p.starts.data());
    state.PauseTiming();
    sched.reset();
    state.ResumeTiming();
  }
}

BENCHMARK_CAPTURE(OneEvent, BM_SchedulerEasyOneEvent_100kPending_10kNodes_FullPlan,
                  PlanDetail::kFull)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1000);
BENCHMARK_CAPTURE(OneEvent, BM_SchedulerEasyOneEvent_100kPending_10kNodes_Decisions,
                  PlanDetail::kDecisions)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1000);
BENCHMARK_CAPTURE(OneEvent, BM_SchedulerEasyOneEvent_100kPending_10kNodes_EveryJobQosLimited,
                  PlanDetail::kDecisions, /*limited=*/true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1000);
BENCHMARK(FirstPass)
    ->Name("BM_SchedulerFirstPass_100kPending_10kNodes")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(5);

}  // namespace
}  // namespace lockstep::bench

BENCHMARK_MAIN();
