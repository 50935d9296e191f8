// Gang binding against a real kube-apiserver v1.20.2 on this machine (docs/benchmarks.md,
// "Kubernetes gang binding"): N Nodes (128 CPUs, 1 TiB, 16 GPUs) and P pods (8 CPUs, 64 GiB,
// 1 GPU: 16 fit a node) in gangs of G, created unbound with
// schedulerName lockstep; then
//   (a) the ceiling: a plain KubeClient (no client-side limit) POSTs the same P Bindings to a
//       second identical set of pods, from `threads` threads;
//   (b) lockstep: a Controller in-process and the PodGroupScheduler, from Start() to P pods bound;
//   (c) the ceiling again, on a third set.
// Prints pods/s of each and lockstep's ratio to the mean of (a) and (c). Starts its own apiserver
// with scripts/kube-apiserver.sh (built once with `scripts/kube-apiserver.sh build`) on free ports,
// and stops it at the end.
//
//   kube_gang_bench [--nodes 1000] [--pods 10000] [--gang 8] [--threads 16] [--runs 1]
//                   [--default-qps]
// With --runs R > 1, R runs (each on a fresh apiserver) and the median of their ratios.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "controller/controller.h"
#include "backend/kubernetes/client/kube_client.h"
#include "backend/kubernetes/client/kubeconfig.h"
#include "backend/kubernetes/gangs/pod_group_scheduler.h"

namespace lockstep::kube {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// CPU seconds (user + system) a process has used so far, from /proc/PID/stat; 0 when unknown.
double CpuSecondsOf(const std::string& pid) {
  std::ifstream f("/proc/" + pid + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; fields >> field && i <= 15; ++i)
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The CPU used by this program, the apiserver and etcd between two readings: where the two
// cores went during a phase.
struct CpuReading {
  double self = 0, apiserver = 0, etcd = 0;
  static CpuReading Now(const std::string& run) {
    auto pid = [&](const char* name) {
      std::ifstream f(run + "/" + name + ".pid");
      std::string p;
      f >> p;
      return p;
    };
    return {CpuSecondsOf("self"), CpuSecondsOf(pid("apiserver")), CpuSecondsOf(pid("etcd"))};
  }
  std::string Since(const CpuReading& before) const {
    char line[160];
    std::snprintf(line, sizeof line, "CPU s: this process %.2f, apiserver %.2f, etcd %.2f",
                  self - before.self, apiserver - before.apiserver, etcd - before.etcd);
    return line;
  }
};

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// GANG_BENCH_PROGRESS: print progress every this many seconds ("1" or any non-number: each
// second); 0 when unset.
double ProgressInterval() {
  const char* env = std::getenv("GANG_BENCH_PROGRESS");
  if (env == nullptr) return 0;
  const double every = std::atof(env);
  return every >= 0.05 ? every : 1;
}

// Runs fn(i) for i in [0, n) on `threads` threads; false when any call failed.
bool Parallel(int n, int threads, const std::function<Status(int)>& fn) {
  std::atomic<int> next{0};
  std::atomic<bool> ok{true};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      for (int i; (i = next++) < n;) {
        Status st = fn(i);
        if (!st.ok() && ok.exchange(false)) std::fprintf(stderr, "%s\n", st.ToString().c_str());
      }
    });
  for (std::thread& t : ts) t.join();
  return ok;
}

class Forwarder : public backend::Backend {
 public:
  PodGroupScheduler* scheduler = nullptr;
  Status Launch(backend::LaunchOrder order) override {
    if (!order.external.empty()) scheduler->Bind(order);
    return Status::Ok();
  }
  Status Terminate(backend::RunId run, Seconds) override {
    scheduler->Terminate(run.job, run.run);
    return Status::Ok();
  }
  Status Signal(backend::RunId, int) override { return Status::Ok(); }
  bool SupportsSteps() const override { return false; }
  Status LaunchStep(backend::StepLaunch) override { return FailedPrecondition("no steps"); }
  Status SignalStep(JobId, std::int32_t, int, Seconds) override {
    return FailedPrecondition("no steps");
  }
  Result<std::string> Logs(const backend::LogsRequest&) override { return NotFound("none"); }
};

struct Args {
  int nodes = 1000, pods = 10000, gang = 8, threads = 16, runs = 1;
  bool default_qps = false;
};

Json NodeObject(int i) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", "node-" + std::to_string(i)}}}};
}

Json PodObject(const std::string& ns, const std::string& scheduler, int i, int gang) {
  Json res = {{"cpu", "8"}, {"memory", "64Gi"}, {"nvidia.com/gpu", "1"}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", "p-" + std::to_string(i)},
            {"namespace", ns},
            {"annotations",
             {{kGangAnnotation, "g-" + std::to_string(i / gang)},
              {kGangSizeAnnotation, std::to_string(gang)}}}}},
          {"spec",
           {{"schedulerName", scheduler},
            {"containers",
             {{{"name", "main"},
               {"image", "busybox"},
               {"resources", {{"requests", res}, {"limits", res}}}}}}}}};
}

// The apiserver's ceiling: the plain client POSTs the Bindings of namespace `ns`'s pods from
// `a.threads` threads without a client-side limit. Pods per second, 0 on a failure.
double CeilingRound(KubeClient* k, const Args& a, const std::string& run, const std::string& ns,
                    const char* label) {
  const auto t0 = Clock::now();
  const CpuReading cpu0 = CpuReading::Now(run);
  std::atomic<int> bound{0};
  std::atomic<bool> done{false};
  // With GANG_BENCH_PROGRESS, the Bindings done each interval, as lockstep's round prints them:
  // the two rates can then be compared interval by interval.
  std::thread progress([&] {
    const double every = ProgressInterval();
    if (every == 0) return;
    for (double next = every; !done.load();
         std::this_thread::sleep_for(std::chrono::milliseconds(5)))
      if (Since(t0) >= next) {
        std::printf("    %.1f s: %d pods bound\n", Since(t0), bound.load());
        next += every;
      }
  });
  const bool ok = Parallel(a.pods, a.threads, [&](int i) {
    Status st = k->Bind(ns, "p-" + std::to_string(i), "node-" + std::to_string(i / a.gang));
    if (st.ok()) ++bound;
    return st;
  });
  done = true;
  progress.join();
  const double secs = Since(t0);
  std::printf(
      "%s: %d Bindings from %d threads, plain KubeClient, no client limit: %.2f s, "
      "%.0f pods/s\n",
      label, a.pods, a.threads, secs, a.pods / secs);
  std::printf("    %s\n", CpuReading::Now(run).Since(cpu0).c_str());
  return ok ? a.pods / secs : 0;
}

// One lockstep round: a fresh controller over the nodes, the scheduler for `scheduler` pods.
double LockstepRound(KubeClient* client, const Args& a, const std::string& run,
                     const std::string& dir, const std::string& scheduler,
                     std::optional<ClientOptions> bind_options) {
  fs::create_directories(dir);
  std::ofstream(dir + "/cluster.yaml")
      << "backend: kubernetes\npartitions:\n  - {name: gpu, nodes: ALL, default: true}\n";
  controller::ControllerOptions co;
  co.state_dir = dir;
  co.cluster_config = dir + "/cluster.yaml";
  auto c = controller::Controller::Start(co);
  if (!c.ok()) {
    std::fprintf(stderr, "controller: %s\n", c.status().ToString().c_str());
    std::exit(1);
  }
  std::vector<backend::NodeReport> reports;
  for (int i = 0; i < a.nodes; ++i) {
    backend::NodeReport r;
    r.name = "node-" + std::to_string(i);
    backend::NodeResources& res = r.resources.emplace();
    res.cpus = 128;
    res.mem_mb = 1024 * 1024;
    res.gpus.assign(16, "gpu");
    reports.push_back(std::move(r));
  }
  (*c)->events().NodesReported(std::move(reports), /*complete=*/true);
  (*c)->SettleForTest();
  Forwarder fwd;
  PodGroupSchedulerOptions o;
  o.scheduler_name = scheduler;
  o.bind_threads = a.threads;
  o.bind_client_options = bind_options;
  PodGroupScheduler s(client, (*c)->events(), (*c)->admission(), o);
  fwd.scheduler = &s;
  (*c)->AttachBackend(&fwd);
  const auto t0 = Clock::now();
  const double every = ProgressInterval();
  const bool verbose = every > 0;
  // steady_clock is CLOCK_MONOTONIC: `perf record -k CLOCK_MONOTONIC` then `perf report --time`.
  auto monotonic = [] {
    return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  };
  if (verbose) std::printf("    round starts at %.6f (CLOCK_MONOTONIC)\n", monotonic());
  const CpuReading cpu0 = CpuReading::Now(run);
  s.Start();
  double ready = 0, submitted = 0, first_bound = 0, next_report = every;
  while (s.stats().bound_pods < a.pods) {
    if (Since(t0) > 600) {
      std::fprintf(stderr, "lockstep: only %lld pods bound after 600 s\n",
                   static_cast<long long>(s.stats().bound_pods));
      break;
    }
    PodGroupSchedulerStats now = s.stats();
    if (ready == 0 && s.WaitForReady(std::chrono::milliseconds(0))) ready = Since(t0);
    if (submitted == 0 && now.submitted * a.gang >= a.pods) submitted = Since(t0);
    if (first_bound == 0 && now.bound_pods > 0) first_bound = Since(t0);
    if (verbose && Since(t0) >= next_report) {
      std::printf("    %.1f s: %lld pods known, %lld submitted, %lld started, %lld pods bound\n",
                  Since(t0), static_cast<long long>(now.pods),
                  static_cast<long long>(now.submitted), static_cast<long long>(now.bind_orders),
                  static_cast<long long>(now.bound_pods));
      next_report += every;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::printf(
      "  synced and recovered at %.2f s, first pods bound at %.2f s, all submitted at "
      "%.2f s\n",
      ready, first_bound, submitted);
  const double secs = Since(t0);
  const CpuReading cpu1 = CpuReading::Now(run);
  if (verbose) std::printf("    round ends at %.6f (CLOCK_MONOTONIC)\n", monotonic());
  PodGroupSchedulerStats st = s.stats();
  std::printf("  %s: %lld jobs, %lld pods bound in %.2f s, %lld rejected, %lld rollbacks\n",
              scheduler.c_str(), static_cast<long long>(st.submitted),
              static_cast<long long>(st.bound_pods), secs, static_cast<long long>(st.rejected),
              static_cast<long long>(st.bind_failures));
  std::printf("    %s\n", cpu1.Since(cpu0).c_str());
  s.Stop();
  (*c)->DetachBackend();
  return st.bound_pods / secs;
}

// Setup and the rounds (a), (b), (c) against the apiserver of run directory `run`: lockstep's
// ratio to the ceiling, or nullopt when something failed.
std::optional<double> Measure(const Args& a, const std::string& run) {
  ClientOptions unlimited;
  unlimited.qps = 0;
  // A kept-alive connection per thread, as the scheduler's bind client has.
  unlimited.transport.max_idle_connections = static_cast<std::size_t>(a.threads);
  auto cfg = LoadKubeConfigFile(run + "/kubeconfig");
  if (!cfg.ok()) return std::nullopt;
  auto client = KubeClient::Create(*cfg, unlimited);
  if (!client.ok()) return std::nullopt;
  KubeClient* k = client->get();
  auto t0 = Clock::now();
  bool ok = Parallel(a.nodes, a.threads, [&](int i) {
    Result<Json> r = k->Create(NodesPath(), NodeObject(i));
    if (!r.ok()) return r.status();
    Json res = {{"cpu", "128"}, {"memory", "1Ti"}, {"pods", "110"}, {"nvidia.com/gpu", "16"}};
    Json status = {{"status",
                    {{"capacity", res},
                     {"allocatable", res},
                     {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    return k
        ->Patch(NodePath("node-" + std::to_string(i)) + "/status", PatchType::kStrategicMerge,
                status)
        .status();
  });
  // The ceiling is measured before and after lockstep's round, on sets of their own, and
  // lockstep is compared with the mean of the two: the apiserver's cost per Binding drifts
  // as its history grows, and a round measured only first would be favoured.
  std::vector<std::pair<std::string, std::string>> sets = {
      {"ceiling", "lockstep"}, {"gangs", "lockstep"}, {"ceiling-after", "lockstep"}};
  if (a.default_qps) sets.push_back({"gangs-default", "lockstep-default"});
  for (auto& [ns, sched] : sets) {
    ok =
        ok && k->Create(NamespacesPath(),
                        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}})
                  .ok();
    // The ceiling's pods name no scheduler lockstep answers to.
    const std::string name = ns.rfind("ceiling", 0) == 0 ? "none" : sched;
    ok = ok && Parallel(a.pods, a.threads, [&](int i) {
           return k->Create(PodsPath(ns), PodObject(ns, name, i, a.gang)).status();
         });
  }
  std::printf("setup: %d nodes, %zu x %d pods in %.1f s\n", a.nodes, sets.size(), a.pods,
              Since(t0));
  if (!ok) return std::nullopt;

  const double before = CeilingRound(k, a, run, "ceiling", "(a) ceiling");
  std::printf("(b) lockstep, bind client without limit (qps 0), %d binders:\n", a.threads);
  const double fast = LockstepRound(k, a, run, run + "/state-a", "lockstep", unlimited);
  const double after = CeilingRound(k, a, run, "ceiling-after", "(c) ceiling again");
  const double ceiling = (before + after) / 2;
  std::printf(
      "lockstep: %.0f pods/s = %.0f%% of the ceiling (%.0f pods/s, the mean of %.0f "
      "before and %.0f after)\n",
      fast, 100 * fast / ceiling, ceiling, before, after);
  if (before <= 0 || after <= 0) return std::nullopt;
  if (a.default_qps) {
    auto limited = KubeClient::Create(*cfg);  // qps 200, burst 400
    if (!limited.ok()) return std::nullopt;
    std::printf("(b') lockstep, one client with the defaults (qps 200, burst 400):\n");
    const double slow =
        LockstepRound(limited->get(), a, run, run + "/state-b", "lockstep-default", std::nullopt);
    std::printf("    %.0f pods/s = %.0f%% of the ceiling\n", slow, 100 * slow / ceiling);
  }
  return fast / ceiling;
}

// One run on an apiserver of its own, started and stopped here.
std::optional<double> RunOnce(const Args& a, const std::string& source) {
  char tmpl[] = "/tmp/lockstep-gang-bench.XXXXXX";
  const std::string run = mkdtemp(tmpl);
  const std::string env = "KUBE_RUN=" + run + " API_PORT=" + std::to_string(FreePort()) +
                          " ETCD_PORT=" + std::to_string(FreePort()) +
                          " ETCD_PEER_PORT=" + std::to_string(FreePort()) +
                          " KUBE_OWNER_PID=" + std::to_string(getpid()) + " KUBE_STOP_TIMEOUT=3";
  auto script = [&](const char* cmd) {
    return std::system((env + " " + source + "/scripts/kube-apiserver.sh " + cmd + " >&2").c_str());
  };
  std::optional<double> ratio;
  if (script("up") == 0) ratio = Measure(a, run);
  script("down");
  std::error_code ec;
  fs::remove_all(run, ec);
  return ratio;
}

int Main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (k == "--nodes")
      a.nodes = next();
    else if (k == "--pods")
      a.pods = next();
    else if (k == "--gang")
      a.gang = next();
    else if (k == "--threads")
      a.threads = next();
    else if (k == "--runs")
      a.runs = next();
    else if (k == "--default-qps")
      a.default_qps = true;
    else {
      std::fprintf(stderr,
                   "usage: kube_gang_bench [--nodes N] [--pods P] [--gang G] "
                   "[--threads T] [--runs R] [--default-qps]\n");
      return 2;
    }
  }
  if (a.runs < 1 || a.nodes < 1 || a.pods < 1 || a.gang < 1 || a.threads < 1) {
    std::fprintf(stderr,
                 "kube_gang_bench: --nodes, --pods, --gang, --threads and --runs must be "
                 "positive numbers\n");
    return 2;
  }
  const char* work = std::getenv("KUBE_WORK");
  const char* src = std::getenv("LOCKSTEP_SOURCE_DIR");
  const std::string source = src && *src ? src : LOCKSTEP_SOURCE_DIR_FOR_BENCH;
  if (!fs::exists(std::string(work && *work ? work : "/var/tmp/kube-apiserver") +
                  "/bin/kube-apiserver")) {
    std::fprintf(stderr, "kube-apiserver is not built: run scripts/kube-apiserver.sh build\n");
    return 1;
  }
  // Each run has an apiserver of its own; on this shared machine only the median of several
  // runs says much (docs/benchmarks.md).
  std::vector<double> ratios;
  for (int r = 1; r <= a.runs; ++r) {
    if (a.runs > 1) std::printf("== run %d of %d\n", r, a.runs);
    std::optional<double> ratio = RunOnce(a, source);
    if (!ratio) return 1;
    ratios.push_back(*ratio);
  }
  if (a.runs > 1) {
    std::vector<double> sorted = ratios;
    std::sort(sorted.begin(), sorted.end());
    std::string list;
    for (double x : sorted)
      list += (list.empty() ? "" : ", ") + std::to_string(std::lround(100 * x)) + "%";
    const double median = sorted.size() % 2
                              ? sorted[sorted.size() / 2]
                              : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
    std::printf("lockstep over %d runs: median %.0f%% of the ceiling (%s)\n", a.runs, 100 * median,
                list.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace lockstep::kube

int main(int argc, char** argv) {
  return lockstep::kube::Main(argc, argv);
}
