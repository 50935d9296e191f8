// kube-scheduler and lockstep side by side (docs/benchmarks.md, "kube-scheduler side by side"):
// on one kube-apiserver v1.20.2 (scripts/kube-apiserver.sh, its own etcd, free ports), N fake
// Nodes (API objects with capacity and Ready; no kubelet, nobody runs the pods) and, round after
// round, P unbound pods (8 CPUs, 64 GiB, 1 GPU: 16 fit a node) created in a namespace of their
// own before the scheduler starts:
//   (a) kube-scheduler v1.20.2 (built from the same source: `kube-apiserver.sh build
//       kube-scheduler`) on plain pods (schedulerName default-scheduler);
//   (b) lockstepd (backend kubernetes) on plain pods naming it (each pod a job of one task);
//   (c) lockstepd on gangs of G (the lockstep.dev/gang annotations), bound whole.
// Each round runs the real binary as a process, from its start until every pod has a node
// (counted by a watch), then stops it and deletes the pods. Both schedulers get the same
// client limits (qps 5000, burst 10000). Prints pods bound per second of each round (from the
// process's start, and between the first and the last binding), and with --runs R > 1 the
// medians and lockstep's ratios to kube-scheduler.
//
//   kube_scheduler_bench [--nodes 1000] [--pods 10000] [--gang 8] [--runs 1]
// SCHED_BENCH_KEEP=1: lockstepd logs at info, and the run directory (logs, etcd) is kept.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "backend/kubernetes/client/informer.h"
#include "backend/kubernetes/client/kube_client.h"
#include "backend/kubernetes/client/kubeconfig.h"
#include "backend/kubernetes/objects/pod_proto.h"

namespace lockstep::kube {
namespace {

namespace fs = std::filesystem;
using Steady = std::chrono::steady_clock;

struct Args {
  int nodes = 1000, pods = 10000, gang = 8, runs = 1, threads = 16;
};

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

double Since(Steady::time_point t0, Steady::time_point t = Steady::now()) {
  return std::chrono::duration<double>(t - t0).count();
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

// A child process with its output in `log`; the PID.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

void StopProcess(pid_t pid) {
  kill(pid, SIGTERM);
  for (int i = 0; i < 200; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

Status CreateNodes(KubeClient* k, const Args& a) {
  const bool ok = Parallel(a.nodes, a.threads, [&](int i) {
    const std::string name = "node-" + std::to_string(i);
    Result<Json> r =
        k->Create(NodesPath(), {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}});
    if (!r.ok()) return r.status();
    Json res = {{"cpu", "128"}, {"memory", "1Ti"}, {"pods", "110"}, {"nvidia.com/gpu", "16"}};
    Json status = {{"status",
                    {{"capacity", res},
                     {"allocatable", res},
                     {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    return k->Patch(NodePath(name) + "/status", PatchType::kStrategicMerge, status).status();
  });
  return ok ? Status::Ok() : Internal("creating the Nodes failed");
}

// P pods in namespace `ns` for `scheduler`, in gangs of `gang` (1: no gang annotations).
Status CreatePods(KubeClient* k, const Args& a, const std::string& ns,
                  const std::string& scheduler, int gang) {
  Result<Json> created = k->Create(
      NamespacesPath(), {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
  if (!created.ok()) return created.status();
  const bool ok = Parallel(a.pods, a.threads, [&](int i) {
    Json res = {{"cpu", "8"}, {"memory", "64Gi"}, {"nvidia.com/gpu", "1"}};
    Json meta = {{"name", "p-" + std::to_string(i)}, {"namespace", ns}};
    if (gang > 1)
      meta["annotations"] = {{"lockstep.dev/gang", "g-" + std::to_string(i / gang)},
                             {"lockstep.dev/gang-size", std::to_string(gang)}};
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", meta},
                {"spec",
                 {{"schedulerName", scheduler},
                  {"containers",
                   {{{"name", "main"},
                     {"image", "busybox"},
                     {"resources", {{"requests", res}, {"limits", res}}}}}}}}};
    return k->Create(PodsPath(ns), pod).status();
  });
  return ok ? Status::Ok() : Internal("creating the pods of " + ns + " failed");
}

// Deletes the round's pods at once (no kubelet: grace 0) and waits until they are gone, so the
// next round finds the Nodes empty.
void DeletePods(KubeClient* k, const std::string& ns) {
  DeleteOptions now;
  now.grace_period_seconds = 0;
  (void)k->Delete(PodsPath(ns), now);
  for (int i = 0; i < 1200; ++i) {
    ListOptions one;
    one.limit = 1;
    Result<Json> left = k->List(PodsPath(ns), one);
    if (left.ok() && (*left)["items"].empty()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::fprintf(stderr, "pods of %s still there after 120 s\n", ns.c_str());
}

struct RoundResult {
  double total_s = 0;     // from the scheduler's start to the last pod bound
  double first_s = 0;     // from its start to the first pod bound
  double pods_per_s = 0;  // P / total_s
  double steady = 0;      // pods bound per second between the first and the last binding
};

// Starts `argv`, counts the pods of `ns` that have a node until all P have; stops the process.
RoundResult RunRound(KubeClient* k, const Args& a, const std::string& ns,
                     const std::vector<std::string>& argv, const std::string& log,
                     const char* label) {
  std::unordered_set<std::string> bound;
  std::atomic<int> count{0};
  InformerOptions io;
  io.path = PodsPath(ns);
  io.keep_objects = false;
  io.protobuf = &PodJsonFromProto;
  InformerHandlers h;
  h.on_upsert = [&](Json pod) {
    const Json& spec = pod["spec"];
    if (spec.is_object() && !spec.value("nodeName", "").empty() &&
        bound.insert(pod["metadata"].value("name", "")).second)
      ++count;
  };
  Informer watch(k, io, h);
  watch.Start();
  if (!watch.WaitForSync(std::chrono::seconds(120))) std::fprintf(stderr, "watch not synced\n");
  const auto t0 = Steady::now();
  const pid_t pid = Spawn(argv, log);
  Steady::time_point first{};
  while (count.load() < a.pods && Since(t0) < 900) {
    if (first == Steady::time_point{} && count.load() > 0) first = Steady::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto last = Steady::now();
  if (first == Steady::time_point{}) first = last;
  StopProcess(pid);
  watch.Stop();
  RoundResult r;
  r.total_s = Since(t0, last);
  r.first_s = Since(t0, first);
  r.pods_per_s = count.load() / r.total_s;
  r.steady = r.total_s > r.first_s ? (count.load() - 1) / (r.total_s - r.first_s) : 0;
  std::printf("%s: %d of %d pods bound in %.2f s (first at %.2f s): %.0f pods/s; %.0f pods/s "
              "from the first binding to the last\n",
              label, count.load(), a.pods, r.total_s, r.first_s, r.pods_per_s, r.steady);
  if (count.load() < a.pods) {
    std::fprintf(stderr, "%s: not all pods were bound; see %s\n", label, log.c_str());
    r.pods_per_s = 0;
  }
  return r;
}

std::vector<std::string> KubeSchedulerCommand(const std::string& bin, const std::string& run) {
  std::ofstream(run + "/kube-scheduler.yaml")
      << "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
         "kind: KubeSchedulerConfiguration\n"
         "clientConnection:\n  kubeconfig: "
      << run << "/kubeconfig\n  qps: 5000\n  burst: 10000\n"
      << "leaderElection:\n  leaderElect: false\n";
  return {bin + "/kube-scheduler", "--config=" + run + "/kube-scheduler.yaml", "--port=0",
          "--secure-port=0", "--v=1"};
}

std::vector<std::string> LockstepdCommand(const std::string& lockstepd, const std::string& run,
                                          const std::string& dir) {
  fs::create_directories(dir);
  std::ofstream(dir + "/cluster.yaml")
      << "backend: kubernetes\nkubernetes:\n  kubeconfig: " << run << "/kubeconfig\n"
      << "  namespace: lockstep-bench\n  qps: 5000\n  burst: 10000\n"
      << "partitions:\n  - {name: gpu, nodes: ALL, default: true}\n";
  return {lockstepd, "--config", dir + "/cluster.yaml", "--state-dir", dir, "--log-level",
          std::getenv("SCHED_BENCH_KEEP") != nullptr ? "info" : "warning"};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

int Measure(const Args& a, const std::string& run, const std::string& kube_bin,
            const std::string& lockstepd) {
  auto cfg = LoadKubeConfigFile(run + "/kubeconfig");
  if (!cfg.ok()) return 1;
  ClientOptions unlimited;
  unlimited.qps = 0;
  unlimited.transport.max_idle_connections = static_cast<std::size_t>(a.threads);
  auto client = KubeClient::Create(*cfg, unlimited);
  if (!client.ok()) return 1;
  KubeClient* k = client->get();
  auto t0 = Steady::now();
  if (Status s = CreateNodes(k, a); !s.ok()) return 1;
  std::printf("setup: %d Nodes in %.1f s\n", a.nodes, Since(t0));
  std::vector<double> kube, plain, gangs;
  for (int r = 1; r <= a.runs; ++r) {
    const std::string n = std::to_string(r);
    struct Round {
      std::string ns, scheduler;
      int gang;
      std::vector<std::string> argv;
      std::string label;
      std::vector<double>* out;
    };
    const std::vector<Round> rounds = {
        {"kube-" + n, "default-scheduler", 1, KubeSchedulerCommand(kube_bin, run),
         "(a) kube-scheduler, plain pods", &kube},
        {"plain-" + n, "lockstep", 1, LockstepdCommand(lockstepd, run, run + "/plain-" + n),
         "(b) lockstep, plain pods", &plain},
        {"gangs-" + n, "lockstep", a.gang, LockstepdCommand(lockstepd, run, run + "/gangs-" + n),
         "(c) lockstep, gangs of " + std::to_string(a.gang), &gangs}};
    if (a.runs > 1) std::printf("== round %d of %d\n", r, a.runs);
    for (const Round& round : rounds) {
      t0 = Steady::now();
      if (Status s = CreatePods(k, a, round.ns, round.scheduler, round.gang); !s.ok()) {
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        return 1;
      }
      std::printf("  %d pods created in %.1f s\n", a.pods, Since(t0));
      const RoundResult res =
          RunRound(k, a, round.ns, round.argv, run + "/" + round.ns + ".log", round.label.c_str());
      if (res.pods_per_s <= 0) return 1;
      round.out->push_back(res.pods_per_s);
      DeletePods(k, round.ns);
    }
  }
  const double mk = Median(kube), mp = Median(plain), mg = Median(gangs);
  std::printf(
      "medians over %d rounds: kube-scheduler %.0f pods/s, lockstep plain %.0f pods/s (%.0f%% of "
      "kube-scheduler), lockstep gangs of %d %.0f pods/s (%.0f%%)\n",
      a.runs, mk, mp, 100 * mp / mk, a.gang, mg, 100 * mg / mk);
  return 0;
}

int Main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (k == "--nodes") a.nodes = next();
    else if (k == "--pods") a.pods = next();
    else if (k == "--gang") a.gang = next();
    else if (k == "--runs") a.runs = next();
    else {
      std::fprintf(stderr,
                   "usage: kube_scheduler_bench [--nodes N] [--pods P] [--gang G] [--runs R]\n");
      return 2;
    }
  }
  if (a.nodes < 1 || a.pods < 1 || a.gang < 1 || a.runs < 1 || a.pods % a.gang != 0 ||
      a.pods > a.nodes * 16) {
    std::fprintf(stderr,
                 "kube_scheduler_bench: --nodes, --pods, --gang and --runs must be positive, "
                 "--pods a multiple of --gang and at most 16 per node\n");
    return 2;
  }
  const char* work = std::getenv("KUBE_WORK");
  const std::string kube_bin = std::string(work && *work ? work : "/var/tmp/kube-apiserver") + "/bin";
  const std::string source = LOCKSTEP_SOURCE_DIR_FOR_BENCH;
  const std::string lockstepd = LOCKSTEP_BIN_DIR_FOR_BENCH "/lockstepd";
  for (const std::string& need : {kube_bin + "/kube-apiserver", kube_bin + "/kube-scheduler"})
    if (!fs::exists(need)) {
      std::fprintf(stderr, "%s is not built: run scripts/kube-apiserver.sh build kube-scheduler\n",
                   need.c_str());
      return 1;
    }
  char tmpl[] = "/tmp/lockstep-sched-bench.XXXXXX";
  const std::string run = mkdtemp(tmpl);
  const std::string env = "KUBE_RUN=" + run + " API_PORT=" + std::to_string(FreePort()) +
                          " ETCD_PORT=" + std::to_string(FreePort()) +
                          " ETCD_PEER_PORT=" + std::to_string(FreePort()) +
                          " KUBE_OWNER_PID=" + std::to_string(getpid()) + " KUBE_STOP_TIMEOUT=3";
  auto script = [&](const char* cmd) {
    return std::system((env + " " + source + "/scripts/kube-apiserver.sh " + cmd + " >&2").c_str());
  };
  int rc = 1;
  if (script("up") == 0) rc = Measure(a, run, kube_bin, lockstepd);
  script("down");
  if (rc == 0 && std::getenv("SCHED_BENCH_KEEP") == nullptr) {
    std::error_code ec;
    fs::remove_all(run, ec);
  } else {
    std::fprintf(stderr, "logs kept in %s\n", run.c_str());
  }
  return rc;
}

}  // namespace
}  // namespace lockstep::kube

int main(int argc, char** argv) {
  return lockstep::kube::Main(argc, argv);
}
