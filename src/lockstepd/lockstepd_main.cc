// lockstepd: the controller daemon.
//   lockstepd --config cluster.yaml --state-dir DIR [--socket PATH] [--node-timeout S]
//             [--backend agent|kubernetes] [--kubeconfig FILE] [--store-mode MODE]
//             [--operator UID ...] [--listen HOST:PORT --tls-cert FILE --tls-key FILE]
//             [--metrics-listen HOST:PORT]
//             [--log-level LEVEL] [--log-file FILE|-]
#include <malloc.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "backend/agent/agent_backend.h"
#include "backend/kubernetes/backend/kubernetes_backend.h"
#include "backend/kubernetes/client/kube_client.h"
#include "backend/kubernetes/client/kubeconfig.h"
#include "common/log.h"
#include "config/cluster_config.h"
#include "controller/api_server.h"
#include "controller/controller.h"
#include "controller/web_routes.h"
#include "engine/gpu_devices.h"
#include "lockstepd/agent_endpoints.h"
#include "lockstepd/health_only_sink.h"
#include "lockstepd/login_wiring.h"
#include "lockstepd/policy_wiring.h"
#include "lockstepd/config_watch.h"
#include "lockstepd/observe_wiring.h"
#include "lockstepd/state_dir_lock.h"
#include "server/server.h"
#ifdef LOCKSTEP_HAVE_KUBE_LEADER
#include "backend/kubernetes/leader/fence_watchdog.h"
#include "backend/kubernetes/leader/leader_election.h"
#endif

namespace {

// The `kubernetes` backend's pieces, made before the controller opens its store (leader
// election must be won first) and stopped after the API server, before the controller.
struct Kubernetes {
#ifdef LOCKSTEP_HAVE_KUBE_LEADER
  // Our own shutdown (or a failed start) steps down: losing the lease then is expected. Set
  // first, before any member goes.
  ~Kubernetes() { stepping_down = true; }
  // The store commits only while the lease is renewed in time; the watchdog ends the process
  // when it is not (crash-only fencing, docs/kubernetes.md). Declared before the elector and
  // the watchdog, which use them until they are gone.
  lockstep::WriteFence fence;
  std::atomic<bool> stepping_down{false};
#endif
  std::unique_ptr<lockstep::kube::KubeClient> client;
  std::unique_ptr<lockstep::kube::KubeClient> election_client;
  std::unique_ptr<lockstep::kube::KubernetesBackend> backend;
#ifdef LOCKSTEP_HAVE_KUBE_LEADER
  std::unique_ptr<lockstep::kube::LeaderElector> elector;
  std::unique_ptr<lockstep::kube::FenceWatchdog> watchdog;
#endif
};

#ifdef LOCKSTEP_HAVE_KUBE_LEADER
// The lease is gone or could not be renewed in time: another replica may lead from now on. The
// store already refuses commits; exit at once, without the orderly shutdown (whose last writes
// would be refused anyway). Acknowledged jobs are durable, running pods are adopted by the next
// leader.
[[noreturn]] void ExitFenced(const std::string& lease, const char* why) {
  lockstep::log::Error("lost the leadership (lease {}): {}; another replica may lead now: exiting",
                       lease, why);
  std::_Exit(1);
}
#endif

lockstep::Result<std::unique_ptr<lockstep::kube::KubeClient>> KubeClientFor(
    const lockstep::config::KubernetesSettings& k, lockstep::kube::ClientOptions options) {
  lockstep::Result<lockstep::kube::KubeConfig> cfg =
      k.kubeconfig.empty() ? lockstep::kube::LoadDefaultConfig()
                           : lockstep::kube::LoadKubeConfigFile(k.kubeconfig, k.context);
  if (!cfg.ok()) return cfg.status();
  return lockstep::kube::KubeClient::Create(*cfg, options);
}

}  // namespace

int main(int argc, char** argv) {
  lockstep::controller::ControllerOptions o;
  lockstep::server::ServerOptions api;
  CLI::App app{"lockstep's controller daemon", "lockstepd"};
  app.add_option("--config", o.cluster_config, "cluster YAML")->required();
  app.add_option("--state-dir", o.state_dir, "durable state and the socket")->required();
  app.add_option("--socket", api.socket_path, "Unix socket (default STATE_DIR/lockstepd.sock)");
  lockstep::Seconds node_timeout = 30;
  app.add_option("--node-timeout", node_timeout,
                 "seconds without heartbeat before a node is DOWN");
  app.add_option("--kill-wait", o.kill_wait, "seconds from SIGTERM to SIGKILL");
  app.add_option("--operator", o.operators, "uids allowed to act on every job (root always is)");
  app.add_option("--listen", api.listen,
                 "also serve the API with HTTPS on HOST:PORT; callers need a bearer token "
                 "(lockstep token)");
  app.add_option("--tls-cert", api.tls_cert, "PEM certificate chain for --listen");
  app.add_option("--tls-key", api.tls_key, "PEM private key for --listen");
  std::string metrics_listen;
  app.add_option("--metrics-listen", metrics_listen,
                 "HOST:PORT: plain HTTP serving only the metrics (/metrics...), no token");
  std::string kubeconfig;
  app.add_option("--backend", o.backend, "agent or kubernetes (overrides the YAML's backend:)")
      ->check(CLI::IsMember({"agent", "kubernetes"}));
  app.add_option("--kubeconfig", kubeconfig,
                 "the cluster's kubeconfig (overrides the YAML's kubernetes.kubeconfig)");
  app.add_option("--store-mode", o.store_mode,
                 "auto, wal, exclusive or truncate: the store's journaling (overrides the YAML's "
                 "store_mode; auto: exclusive on a network file system, else wal)");
  std::string policy_file;
  app.add_option("--policy", policy_file,
                 "the admission policy's rules (YAML, docs/policy.md; overrides the YAML's "
                 "admission.policy_file)");
  std::string log_level = "info", log_file;
  app.add_option("--log-level", log_level, "trace, debug, info, warn(ing), error or off")
      ->capture_default_str();
  app.add_option("--log-file", log_file,
                 "the log, created 0600 (default STATE_DIR/lockstepd.log; - for stderr only)");
  CLI11_PARSE(app, argc, argv);
  if (api.socket_path.empty()) api.socket_path = o.state_dir + "/lockstepd.sock";
  // The log before any thread: lines go to the file, and to stderr too unless stderr is the
  // file (lockstep up sends lockstepd's stderr there).
  {
    lockstep::Result<lockstep::log::Level> level = lockstep::log::ParseLevel(log_level);
    if (!level.ok()) {
      std::fprintf(stderr, "lockstepd: %s\n", level.status().message().c_str());
      return 2;
    }
    ::mkdir(o.state_dir.c_str(), 0711);  // as the controller makes it; the store makes it private
    lockstep::log::Options lo;
    lo.program = "lockstepd";
    lo.level = *level;
    lo.file = log_file.empty() ? o.state_dir + "/lockstepd.log" : log_file == "-" ? "" : log_file;
    lo.mode = 0600;  // it names users' jobs
    lo.also_stderr = true;
    if (lockstep::Status s = lockstep::log::Init(lo); !s.ok()) {
      std::fprintf(stderr, "lockstepd: %s\n", s.message().c_str());
      return 2;
    }
  }
  if (!api.listen.empty() && (api.tls_cert.empty() || api.tls_key.empty())) {
    lockstep::log::Error(
        "--listen needs --tls-cert and --tls-key: lockstepd does not serve plain HTTP on TCP, "
        "where bearer tokens would travel in the clear");
    return 2;
  }

  if (!metrics_listen.empty()) {
    if (lockstep::Status s = lockstep::lockstepd::CheckMetricsListen(metrics_listen); !s.ok()) {
      lockstep::log::Error("{}", s.message());
      return 2;
    }
  }

  // Signals are taken by sigwait below, so no thread is interrupted by them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  // A pass over a million pending jobs allocates and frees vectors of hundreds of MB. glibc's
  // default raises its mmap threshold after such frees and then keeps those vectors in the heap,
  // where their pages stay resident; a fixed threshold gives them back to the kernel at once.
  ::mallopt(M_MMAP_THRESHOLD, 1 << 20);

  // --- kubernetes backend: the client, and leadership before anything is opened ---
  Kubernetes kube;
  lockstep::config::KubernetesSettings kset;
  std::vector<std::string> configured_nodes;
  lockstep::config::HealthConfig health;
  lockstep::config::JobHooksConfig job_hooks;
  std::map<std::string, int> configured_gpus;  // per node, for the agents' GPU count check
  std::vector<lockstep::config::FileSystem> storage;  // the file YAML's, as last applied
  nlohmann::json agent_storage = nlohmann::json::array();
  std::unique_ptr<lockstep::lockstepd::LoginWiring> logins;  // identity and login environments
  std::unique_ptr<lockstep::lockstepd::PolicyWiring> policy;  // the admission policy; may be null
  {
    auto cluster = lockstep::config::LoadClusterConfig(o.cluster_config, o.backend);
    if (!cluster.ok()) {
      lockstep::log::Error("{}", cluster.status().message());
      return 1;
    }
    auto wiring = lockstep::lockstepd::LoginWiring::Create(*cluster);
    if (!wiring.ok()) {
      lockstep::log::Error("{}", wiring.status().message());
      return 1;
    }
    logins = std::move(*wiring);
    if (!policy_file.empty()) {
      std::error_code ec;
      cluster->admission.policy_file = std::filesystem::absolute(policy_file, ec).string();
    }
    auto admission = lockstep::lockstepd::PolicyWiring::Create(*cluster, o.state_dir,
                                                               logins->Directory());
    if (!admission.ok()) {
      lockstep::log::Error("{}", admission.status().message());
      return 1;
    }
    policy = std::move(*admission);
    if (cluster->backend == "kubernetes") o.backend = "kubernetes";
    kset = cluster->kubernetes;
    health = cluster->health;
    job_hooks = cluster->job_hooks;
    storage = cluster->storage;
    agent_storage = lockstep::lockstepd::AgentStorageSettings(*cluster);
    for (const lockstep::engine::Node& n : cluster->base.nodes) {
      configured_nodes.push_back(n.name);
      configured_gpus[n.name] = lockstep::engine::PhysicalGpuCount(n);
    }
  }
  if (!kubeconfig.empty()) kset.kubeconfig = kubeconfig;
  if (o.backend == "kubernetes") {
    lockstep::kube::ClientOptions co;
    co.qps = kset.qps;
    co.burst = kset.burst;
    auto client = KubeClientFor(kset, co);
    if (!client.ok()) {
      lockstep::log::Error("kubernetes: {}", client.status().message());
      return 1;
    }
    kube.client = std::move(*client);
    // The namespace holds the jobs' pods and the leader Lease.
    if (lockstep::Status ns = lockstep::kube::EnsureNamespace(*kube.client, kset.ns); !ns.ok()) {
      lockstep::log::Error("kubernetes: {}", ns.message());
      return 1;
    }
    lockstep::log::Info("kubernetes: API at {}, namespace {}", kube.client->config().server,
                        kset.ns);
  }
  if (o.backend == "kubernetes" && kset.leader_elect) {
#ifdef LOCKSTEP_HAVE_KUBE_LEADER
    lockstep::kube::LeaderElectionOptions lo;
    lo.ns = kset.ns;
    lo.name = kset.lease_name;
    lo.identity = lockstep::kube::DefaultLeaderIdentity();
    lo.fence = &kube.fence;
    o.write_fence = &kube.fence;
    // A write refused by the closed fence means the lease is lost, not a broken disk: exit as the
    // watchdog does (whichever notices first), and the next leader recovers from the store.
    o.on_store_failure = [&kube, lease = lo.ns + "/" + lo.name](const lockstep::Status& s) {
      if (!kube.fence.IsOpen()) ExitFenced(lease, "a store write was refused by the closed fence");
      lockstep::log::Error("store write failed: {}", s.ToString());
      lockstep::log::Error("stopping: memory and disk would differ; start lockstepd again to "
                           "recover from the store");
      std::abort();
    };
    auto ec = KubeClientFor(kset, lockstep::kube::LeaderElectionClientOptions(lo));
    if (!ec.ok()) {
      lockstep::log::Error("kubernetes: {}", ec.status().message());
      return 1;
    }
    kube.election_client = std::move(*ec);
    kube.elector = std::make_unique<lockstep::kube::LeaderElector>(
        kube.election_client.get(), lo, [] {},
        [&kube, lease = lo.ns + "/" + lo.name] {
          if (!kube.stepping_down) ExitFenced(lease, "the lease is held by another or not renewed");
        });
    kube.elector->Start();
    lockstep::log::Info("waiting to lead (lease {}/{}, identity {})", lo.ns, lo.name, lo.identity);
    // A standby opens nothing (the state volume may be shared) until it leads.
    timespec tick{0, 200'000'000};
    while (!kube.elector->IsLeader()) {
      if (sigtimedwait(&signals, nullptr, &tick) > 0) {
        kube.elector->Stop();
        return 0;
      }
    }
    lockstep::log::Info("leading (lease {}/{})", lo.ns, lo.name);
    kube.watchdog = std::make_unique<lockstep::kube::FenceWatchdog>(
        kube.fence, [&kube, lease = lo.ns + "/" + lo.name] {
          if (!kube.stepping_down)
            ExitFenced(lease, "not renewed within the renew deadline");
        });
#else
    // TODO(kubernetes-leader): leader election once src/backend/kubernetes/leader is built in.
    lockstep::log::Error("kubernetes.leader_elect is not supported by this build");
    return 1;
#endif
  }

  // One lockstepd per state directory. A leader waits for the one before it to let go (it exits
  // once its lease is lost); anyone else is refused.
  lockstep::Result<int> state_lock = lockstep::lockstepd::LockStateDir(o.state_dir);
#ifdef LOCKSTEP_HAVE_KUBE_LEADER
  for (bool told = false; !state_lock.ok() && kube.elector &&
                          state_lock.status().code() == lockstep::StatusCode::kFailedPrecondition;
       told = true) {
    if (!told) lockstep::log::Info("{}; waiting for it to exit", state_lock.status().message());
    timespec tick{0, 200'000'000};
    if (sigtimedwait(&signals, nullptr, &tick) > 0) {
      kube.elector->Stop();
      return 0;
    }
    state_lock = lockstep::lockstepd::LockStateDir(o.state_dir);
  }
#endif
  if (!state_lock.ok()) {
    lockstep::log::Error("{}", state_lock.status().message());
    return 1;
  }

  auto controller = lockstep::controller::Controller::Start(o);
  if (!controller.ok()) {
    lockstep::log::Error("{}", controller.status().message());
    return 1;
  }
  // The backend: lockstep's agents, or Kubernetes.
  std::unique_ptr<lockstep::lockstepd::HealthOnlySink> health_only_sink;  // outlives `agents`
  std::unique_ptr<lockstep::agent::AgentBackend> agents;
  std::unique_ptr<lockstep::lockstepd::AgentEndpointsOf> agent_endpoints;
  if (!kube.client) {
    lockstep::agent::AgentBackendOptions ao;
    ao.nodes = configured_nodes;
    ao.node_timeout = node_timeout;
    ao.health_settings =
        lockstep::lockstepd::AgentHealthSettings(health, configured_gpus, agent_storage);
    ao.prolog = {job_hooks.prolog.program, job_hooks.prolog.timeout};
    ao.epilog = {job_hooks.epilog.program, job_hooks.epilog.timeout};
    ao.core_max_mb = health.core_max_mb;
    agents = std::make_unique<lockstep::agent::AgentBackend>((*controller)->events(), ao);
    agent_endpoints = std::make_unique<lockstep::lockstepd::AgentEndpointsOf>(*agents);

    (*controller)->AttachBackend(agents.get());
  } else {
    // Health-only agents (deploy/kubernetes/health-agent.yaml): health reports of the cluster's
    // Nodes, and nothing else; Kubernetes stays the backend.
    health_only_sink =
        std::make_unique<lockstep::lockstepd::HealthOnlySink>((*controller)->events());
    lockstep::agent::AgentBackendOptions ao;
    ao.any_node = true;
    ao.node_timeout = node_timeout;
    ao.health_settings =
        lockstep::lockstepd::AgentHealthSettings(health, configured_gpus, agent_storage);
    agents = std::make_unique<lockstep::agent::AgentBackend>(*health_only_sink, ao);
    agent_endpoints = std::make_unique<lockstep::lockstepd::AgentEndpointsOf>(*agents);
  }
  if (kube.client) {
    lockstep::kube::KubernetesBackendOptions bo;
    bo.settings = kset;
    bo.kill_wait = o.kill_wait;
    bo.storage = storage;
    bo.groups_of = logins->GroupsOf();
    kube.backend = std::make_unique<lockstep::kube::KubernetesBackend>(
        kube.client.get(), (*controller)->events(), &(*controller)->admission(), bo);
    (*controller)->AttachBackend(kube.backend.get());
    lockstep::Status started = kube.backend->Start();
    constexpr int kSyncSeconds = 60;
    if (started.ok() && !kube.backend->WaitForNodes(std::chrono::seconds(kSyncSeconds)))
      started = lockstep::Status(
          lockstep::StatusCode::kUnavailable,
          "the Nodes and Pods of " + kube.client->config().server + " were not listed within " +
              std::to_string(kSyncSeconds) +
              " s: is the API server reachable, and may this identity list nodes and pods?");
    if (!started.ok()) {
      lockstep::log::Error("kubernetes: {}", started.message());
      (*controller)->DetachBackend();
      kube.backend.reset();
      return 1;
    }
    lockstep::log::Info("kubernetes: nodes listed");
  }
  lockstep::controller::ApiServiceOptions service_options;
  if (policy) {
    (*controller)->SetPolicy(&policy->gate());
    service_options.policy = policy->Endpoints();
    service_options.observe.extra_metrics = [p = policy.get()] { return p->gate().MetricsText(); };
    if (lockstep::Status s = policy->Start(); !s.ok()) {
      lockstep::log::Error("{}", s.message());
      (*controller)->DetachBackend();
      return 1;
    }
  }
  service_options.agents = agent_endpoints.get();
  service_options.login = logins.get();
  service_options.directory = logins->Directory();
  if (agents)
    service_options.observe.agent_heartbeats = lockstep::lockstepd::AgentHeartbeatsOf(*agents);
  auto service = lockstep::controller::ApiService::Create(**controller, service_options);
  if (!service.ok()) {
    lockstep::log::Error("{}", service.status().message());
    return 1;
  }
  // The web view's page on HTTPS without a token: it asks for one.
  if (!api.listen.empty()) api.public_pages["/web"] = lockstep::controller::WebPage();
  auto server = lockstep::server::Server::Start(api, **service, service->get());
  if (!server.ok()) {
    lockstep::log::Error("{}", server.status().message());
    return 1;
  }
  std::unique_ptr<lockstep::server::MetricsListener> metrics;
  if (!metrics_listen.empty()) {
    auto started = lockstep::lockstepd::StartMetricsListener(metrics_listen, **controller,
                                                             service_options.observe);
    if (!started.ok()) {
      lockstep::log::Error("{}", started.status().message());
      server->reset();
      (*controller)->DetachBackend();
      return 1;
    }
    metrics = std::move(*started);
    lockstep::log::Info("metrics on http://{} (port {})", metrics_listen, metrics->port());
  }
  if (lockstep::Status s = logins->Start(**controller, kube.client.get(), kset.ns,
                                         {api.listen, api.tls_cert});
      !s.ok()) {
    lockstep::log::Error("{}", s.message());
    server->reset();
    (*controller)->DetachBackend();
    return 1;
  }
  std::ofstream(o.state_dir + "/lockstepd.pid") << ::getpid() << "\n";
  lockstep::log::Info("listening on {}", api.socket_path);
  if (!api.listen.empty())
    lockstep::log::Info("listening on https://{} (port {})", api.listen, (*server)->tcp_port());
  // A changed storage list in the file (or its ConfigMap) goes to the agents and users at once.
  auto watch = std::make_unique<lockstep::lockstepd::ConfigWatch>(
      o.cluster_config, o.backend, std::chrono::seconds(2),
      [&](const lockstep::config::ClusterConfig& changed) {
        if (storage == changed.storage) return;
        storage = changed.storage;
        (*controller)->SetStorage(storage);
        if (kube.backend) kube.backend->SetStorage(storage);
        logins->SetStorage(storage);
        if (policy) policy->SetStorage(storage);
        if (agents)
          agents->SetHealthSettings(lockstep::lockstepd::AgentHealthSettings(
              health, configured_gpus, lockstep::lockstepd::AgentStorageSettings(changed)));
        lockstep::log::Info("{}: storage now {} file system(s)", o.cluster_config, storage.size());
      });
  int sig = 0;
  sigwait(&signals, &sig);
  lockstep::log::Info("signal {}, stopping (jobs keep running)", sig);
  watch.reset();
  metrics.reset();
  server->reset();
  service->reset();
  logins.reset();  // its sessions close; login pods stay for the next lockstepd
  (*controller)->SetPolicy(nullptr);
  (*controller)->DetachBackend();
  if (kube.backend) kube.backend->Stop();
  agents.reset();  // its watchdog reports to the controller: it goes first
  controller->reset();
  kube.backend.reset();
#ifdef LOCKSTEP_HAVE_KUBE_LEADER
  kube.stepping_down = true;
  kube.watchdog.reset();
  if (kube.elector) kube.elector->Stop();  // releases the lease for a standby
#endif
  return 0;
}
