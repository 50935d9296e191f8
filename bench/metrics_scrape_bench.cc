// One metrics scrape of a large cluster, in lockstepd's own code: 10,000 nodes of 8 GPUs and
// 100,000 jobs (100 arrays of 1,000 one-GPU tasks from 50 users: 80,000 run, 20,000 pend).
// The controller runs as in lockstepd (its threads, a real store), with a backend that accepts
// every launch. What is timed is what a GET /metrics costs lockstepd: Controller::Metrics (its
// part under the controller's lock, then the copy) and RenderMetrics, on the calling thread
// (Google Benchmark's CPU time is that thread's). docs/benchmarks.md, "Metrics scrape".
//
//   build/bin/metrics_scrape_bench [--benchmark_repetitions=5]
//   NODES=1000 JOBS=10000 build/bin/metrics_scrape_bench   # a smaller cluster
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "controller/controller.h"
#include "controller/job_tally.h"
#include "controller/metrics_text.h"

namespace {

using namespace lockstep;

class AcceptingBackend : public backend::Backend {
 public:
  Status Launch(backend::LaunchOrder) override { return Status::Ok(); }
  Status Terminate(backend::RunId, Seconds) override { return Status::Ok(); }
  Status Signal(backend::RunId, int) override { return Status::Ok(); }
  bool SupportsSteps() const override { return false; }
  Status LaunchStep(backend::StepLaunch) override { return FailedPrecondition("no steps"); }
  Status SignalStep(JobId, std::int32_t, int, Seconds) override { return Status::Ok(); }
  Result<std::string> Logs(const backend::LogsRequest&) override { return NotFound("none"); }
};

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

// The cluster, built once for every benchmark of the run.
struct BigCluster {
  std::string dir;
  AcceptingBackend backend;
  std::unique_ptr<controller::Controller> c;
  int nodes = EnvInt("NODES", 10'000);
  int jobs = EnvInt("JOBS", 100'000);

  BigCluster() {
    char tmpl[] = "/tmp/metrics_scrape.XXXXXX";
    dir = ::mkdtemp(tmpl);
    std::ofstream(dir + "/cluster.yaml")
        << "nodes:\n  - {names: \"vn[1-" << nodes
        << "]\", cpus: 32, memory: 64G, gpus: 8, gpu_type: h100}\n"
        << "partitions:\n  - {name: main, nodes: ALL, default: true}\n";
    controller::ControllerOptions o;
    o.state_dir = dir + "/state";
    o.cluster_config = dir + "/cluster.yaml";
    auto started = controller::Controller::Start(o);
    if (!started.ok()) {
      std::fprintf(stderr, "metrics_scrape_bench: %s\n", started.status().message().c_str());
      std::exit(1);
    }
    c = std::move(*started);
    c->AttachBackend(&backend);
    std::vector<backend::NodeReport> reports(nodes);
    for (int n = 0; n < nodes; ++n) reports[n].name = "vn" + std::to_string(n + 1);
    c->events().NodesReported(std::move(reports), true);
    const int per_array = 1000;
    for (int a = 0; a * per_array < jobs; ++a) {
      jobspec::JobSpec s;
      s.name = "train";
      s.script = "#!/bin/sh\ntrue\n";
      s.work_dir = "/tmp";
      s.min_nodes = s.max_nodes = 1;
      s.gpus = 1;
      s.time_limit = 3600;
      jobspec::ArraySpec array;
      for (int i = 0; i < per_array && a * per_array + i < jobs; ++i) array.indices.push_back(i);
      array.text = "0-" + std::to_string(array.indices.size() - 1);
      s.array = array;
      const std::uint32_t uid = 1000 + a % 50;
      Result<JobId> id = c->Submit({uid, uid, "user" + std::to_string(a % 50)}, std::move(s));
      if (!id.ok()) {
        std::fprintf(stderr, "metrics_scrape_bench: %s\n", id.status().message().c_str());
        std::exit(1);
      }
    }
    c->PassForTest();  // every job that fits starts
  }
  ~BigCluster() {
    c->DetachBackend();
    c.reset();
    std::filesystem::remove_all(dir);
  }
};

BigCluster& Cluster() {
  static BigCluster* cluster = new BigCluster();  // lives to the end of the process
  return *cluster;
}

// The first scrape counts every job (the tally starts empty); it runs once.
void BM_FirstScrape(benchmark::State& state) {
  BigCluster& b = Cluster();
  for (auto _ : state) {
    std::string text = RenderMetrics(b.c->Metrics(), controller::MetricsEndpoint::kAll);
    benchmark::DoNotOptimize(text);
    state.counters["bytes"] = static_cast<double>(text.size());
  }
}
BENCHMARK(BM_FirstScrape)->Iterations(1)->Unit(benchmark::kMillisecond);

// A scrape of /metrics (every family) once the tally is up to date.
void BM_Scrape(benchmark::State& state) {
  BigCluster& b = Cluster();
  for (auto _ : state) {
    std::string text = RenderMetrics(b.c->Metrics(), controller::MetricsEndpoint::kAll);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_Scrape)->Unit(benchmark::kMillisecond);

// Its two halves: the view (the controller's lock is held for part of it) and the text.
void BM_MetricsView(benchmark::State& state) {
  BigCluster& b = Cluster();
  for (auto _ : state) benchmark::DoNotOptimize(b.c->Metrics());
}
BENCHMARK(BM_MetricsView)->Unit(benchmark::kMillisecond);

void BM_Render(benchmark::State& state) {
  BigCluster& b = Cluster();
  const controller::MetricsView view = b.c->Metrics();
  for (auto _ : state)
    benchmark::DoNotOptimize(RenderMetrics(view, controller::MetricsEndpoint::kAll));
}
BENCHMARK(BM_Render)->Unit(benchmark::kMillisecond);

// What counting the jobs of a burst of changes costs where it is done now, in the scheduling
// thread's replay of the changes (JobTally::Count per changed job): 100,000 jobs shaped as the
// cluster's (100 arrays sharing a spec each, 80,000 running on one GPU of 10,000 nodes), counted
// into an empty tally.
void BM_TallyCount(benchmark::State& state) {
  const int nodes = EnvInt("NODES", 10'000), jobs = EnvInt("JOBS", 100'000);
  std::vector<controller::JobEntry> entries(jobs);
  std::vector<std::string> names(nodes);
  for (int n = 0; n < nodes; ++n) names[n] = "vn" + std::to_string(n + 1);
  std::shared_ptr<const jobspec::JobSpec> spec;
  for (int j = 0; j < jobs; ++j) {
    if (j % 1000 == 0) spec = std::make_shared<jobspec::JobSpec>();
    controller::JobEntry& e = entries[j];
    e.id = static_cast<JobId>(j + 1);
    e.spec = spec;
    e.uid = 1000 + (j / 1000) % 50;
    e.user = "user" + std::to_string((j / 1000) % 50);
    if (j < jobs * 8 / 10) {
      e.state = controller::JobState::kRunning;
      e.placement.push_back({names[j % nodes], 1, 1024, std::uint64_t{1} << (j / nodes % 8)});
    }
  }
  controller::JobTally::Lookup lookup;
  lookup.partition = [](const controller::JobEntry&) { return std::string("main"); };
  lookup.node_count = [&] { return names.size(); };
  lookup.node_name = [&](std::uint32_t n) -> const std::string& { return names[n]; };
  for (auto _ : state) {
    state.PauseTiming();
    controller::JobTally tally;
    for (const controller::JobEntry& e : entries) tally.Count(e.id, &e, lookup);  // as before
    for (const controller::JobEntry& e : entries) tally.Touch(e.id);
    state.ResumeTiming();
    for (const controller::JobEntry& e : entries) tally.Count(e.id, &e, lookup);
    tally.ForgetChanges();
    benchmark::DoNotOptimize(tally.groups());
  }
}
BENCHMARK(BM_TallyCount)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
