// lockstepd's `kubernetes` backend (backend/backend.h): nodes from Node objects, jobs as Pods
// bound to the nodes the engine chose, their ends as task events. docs/kubernetes.md, "Running
// lockstepd on Kubernetes".
//
//   KubernetesBackend backend(client, controller->events(), &controller->admission(),
//                             {.settings = config.kubernetes});
//   controller->AttachBackend(&backend);
//   backend.Start();
//   if (!backend.WaitForNodes(std::chrono::seconds(30))) ...;
//   ...
//   controller->DetachBackend();
//   backend.Stop();
//
// Threads: a Node informer and a Pod informer (all namespaces: pods of other schedulers take
// room on their nodes; lockstep's own pods carry the job's events), a reporter that sends the
// nodes to the controller (debounced), and one worker that makes every API call of launches,
// terminations and signals in the order they were asked. The Backend calls only queue work; the
// events go to the EventSink (which only queues them), from these threads. The KubeClient, the
// EventSink and the Admission are not owned and must outlive the backend; it is thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "backend/kubernetes/client/informer.h"
#include "backend/kubernetes/client/kube_client.h"
#include "backend/kubernetes/objects/node_health.h"
#include "backend/kubernetes/objects/node_mapping.h"
#include "backend/kubernetes/objects/pod_events.h"
#include "backend/admission.h"
#include "backend/backend.h"
#include "config/cluster_config.h"

namespace lockstep::kube {

// The label and annotation lockstep adds to the pods of a job's run (beside pod_builder's).
inline constexpr const char* kRunLabel = "lockstep.dev/run";
inline constexpr const char* kPodCountAnnotation = "lockstep.dev/pods";

// Creates namespace `ns` when it is missing (an identity that may not create namespaces is fine
// if it exists). lockstepd calls it before leader election, whose Lease lives there.
Status EnsureNamespace(KubeClient& client, const std::string& ns);

class PodGroupSchedulerHandle;  // the gangs component, when built in (kubernetes_backend.cc)
class ExecSteps;                // steps through the pods' exec (exec_steps.h)

struct KubernetesBackendOptions {
  config::KubernetesSettings settings;
  // terminationGracePeriodSeconds of job pods, and the grace of the pods a failing pod's run
  // still has (lockstepd's --kill-wait).
  Seconds kill_wait = 30;
  // Node changes are gathered this long before the nodes are reported to the controller.
  std::chrono::milliseconds report_delay{100};
  // Pods still there this long after their grace period are deleted at once (gracePeriod 0),
  // as SIGKILL follows SIGTERM: a node without a kubelet never confirms a graceful delete.
  std::chrono::milliseconds force_delete_after{3000};
  // Nodes are listed and watched in protobuf (objects/node_proto.h), without the status.images
  // and other parts nothing here reads; false: in JSON.
  bool protobuf_nodes = true;
  // The cluster's shared file systems (docs/storage.md): their host directories go into every
  // job pod, and a job whose directory lies on one starts there and writes its output files
  // there. SetStorage replaces the list (the cluster YAML changed).
  std::vector<config::FileSystem> storage;
  // A user's supplementary groups (the identity source's), the pods' supplementalGroups; null:
  // none.
  std::function<std::vector<std::uint32_t>(const std::string& user)> groups_of;
  // Every decision about time (forced deletions, finished_pod_ttl, pods' end times) reads this
  // clock; waits on condition variables keep real-time timeouts. Must outlive the backend.
  // Tests give a ManualClock, advance it, then call WakeForTest().
  lockstep::Clock* clock = &SystemClock();
};

class KubernetesBackend : public backend::Backend {
 public:
  // Reports to `events`; queues pod groups through `admission` (null: pods of others are not
  // scheduled). Both must outlive the backend.
  KubernetesBackend(KubeClient* client, backend::EventSink& events, backend::Admission* admission,
                    KubernetesBackendOptions options);
  ~KubernetesBackend() override;  // Stop()s
  KubernetesBackend(const KubernetesBackend&) = delete;
  KubernetesBackend& operator=(const KubernetesBackend&) = delete;

  // The worker recomputes what is due by the injected clock (after a test advanced it).
  void WakeForTest();

  // Creates the namespace when it is missing, starts the informers and threads.
  Status Start();
  // True once both informers have listed and the nodes have been reported to the controller.
  bool WaitForNodes(std::chrono::milliseconds timeout);
  // Prompt; pending API work is dropped (pods keep running: a restarted lockstepd adopts them).
  void Stop();

  Status Launch(backend::LaunchOrder order) override;
  Status Terminate(backend::RunId run, Seconds grace) override;
  Status Signal(backend::RunId run, int signo) override;
  // Steps run in the job's pods through their exec subresource (kubernetes_backend_exec.cc).
  bool SupportsSteps() const override { return true; }
  bool RunsJobsInImages() const override { return true; }
  Status LaunchStep(backend::StepLaunch step) override;
  Status SignalStep(JobId job, std::int32_t step, int signo, Seconds grace) override;
  Result<std::string> Logs(const backend::LogsRequest& request) override;

  // The shared file systems of later launches (KubernetesBackendOptions::storage).
  void SetStorage(std::vector<config::FileSystem> storage);

 private:
  using RunKey = std::pair<JobId, std::int32_t>;
  struct PodState {
    std::string name;
    std::string uid;
    bool gone = false;  // deleted from the apiserver
    PodStatusEvent status;
    // When it ended (wall clock, Unix seconds): its containers' finishedAt, else when this
    // lockstepd saw it end. finished_pod_ttl counts from its run's last.
    Time ended_at = 0;
    // Succeeded or Failed (not merely given up on: a pod that cannot start stays Pending).
    bool terminal() const {
      return status.phase == PodPhase::kSucceeded || status.phase == PodPhase::kFailed;
    }
    // It ended badly, or went before it ended.
    bool failed() const {
      return (status.ended && (status.exit_code != 0 || status.signal != 0)) ||
             (gone && !status.ended);
    }
  };
  struct RunState {
    std::string ns;
    std::int32_t expected = -1;  // pods of the run; -1 until known
    bool launching = false;      // the worker has yet to create its pods
    bool launch_failed = false;
    bool external = false;  // a pod group of others (the gangs component runs it)
    bool terminating = false;
    int kill_signal = 0;           // what ends pods deleted without a status: SIGTERM, or SIGKILL
    std::int32_t cause_rank = -1;  // the failing pod that made lockstep delete the others
    std::chrono::steady_clock::time_point force_at{};  // terminating: delete at once after
    bool reported = false;                             // RunExited sent
    std::map<std::int32_t, PodState> pods;             // by rank
  };
  // How a run ended, for RunExited.
  struct RunExit {
    int exit_code = 0, signal = 0;
    bool oom = false;
  };
  static RunExit RunExitOf(const RunState& r);
  // One unit of the worker's work.
  struct Op {
    enum Kind { kLaunch, kDelete, kForce, kDeleteService } kind = kLaunch;
    backend::LaunchOrder order;  // kLaunch
    RunKey key{};
    std::int64_t grace = 0;  // kDelete
    int signal = 0;          // kDelete: the signal pods without a status are said to end with
  };
  // A device of a reported node: its type and extended resource, by device index.
  struct Device {
    std::string type, resource;
  };

  void OnNode();
  void OnPod(const Json* old_pod, const Json* pod, bool deleted);
  // A pod of this lockstepd's jobs: labelled with a job id, in its namespace.
  bool IsOwnJobPod(const Json& pod) const;
  // A pod whose requests hold room lockstep cannot give: bound, unfinished, and another
  // scheduler's or another lockstepd's.
  bool TakesRoom(const Json& pod) const;
  // The injected clock: monotonic, and wall (Unix seconds).
  lockstep::Clock::Monotonic MonoNow() const { return options_.clock->MonotonicNow(); }
  Time WallNow() const { return options_.clock->Now(); }
  void ReportLoop();
  void ReportNodes();
  // The nodes' health (conditions, allocatable GPUs) to the sink, for those whose findings
  // changed since last sent.
  void ReportNodeHealth(const std::vector<nlohmann::json>& nodes);
  void WorkLoop();
  // Once, when the pods are first known: running jobs whose pods vanished meanwhile.
  void ReconcileVanishedRuns();
  // Once, after that: Services of jobs that have no pods left (deleted while lockstepd was away).
  void DeleteOrphanServices();
  // With mu_ held: the run has been reported; its pods go finished_pod_ttl after its last ended.
  void ScheduleExpiryLocked(const RunKey& key, const RunState& r);
  // With mu_ held: when the next finished run's pods are due (max() when none).
  std::chrono::steady_clock::time_point NextExpiryLocked() const;
  // Deletes the pods of finished runs whose finished_pod_ttl has passed.
  void DoExpire();
  void Run(Op op);
  void DoLaunch(const backend::LaunchOrder& order);
  void DoDelete(const RunKey& key, std::int64_t grace, int signal);
  void DoForce();
  void DoDeleteService(JobId job, const std::string& ns);
  void Enqueue(Op op);
  // With mu_ held: if every pod of the run has ended, marks it reported and returns its
  // controller call; when a pod failed while others run, queues their deletion.
  std::function<void()> CheckRunLocked(const RunKey& key);
  std::vector<std::pair<std::int32_t, std::string>> RunPodsFromCache(const RunKey& key,
                                                                     std::string* ns) const;

  KubeClient* const client_;
  backend::EventSink& events_;
  backend::Admission* const admission_;
  const KubernetesBackendOptions options_;
  NodeMappingOptions mapping_;
  std::vector<TroubleCondition> trouble_conditions_;  // settings.health_conditions
  // guarded by mu_: each node's last health findings sent, so only changes go to the sink.
  std::map<std::string, std::string> node_health_sent_;

  std::unique_ptr<Informer> nodes_;
  std::unique_ptr<Informer> pods_;
  std::unique_ptr<PodGroupSchedulerHandle> gangs_;
  std::unique_ptr<ExecSteps> exec_steps_;  // thread-safe itself

  mutable std::mutex mu_;
  std::vector<config::FileSystem> storage_;  // guarded by mu_: options_.storage, or newer
  std::condition_variable cv_;       // work_, nodes_dirty_, stopping_, reported_once_
  bool stopping_ = false;            // guarded by mu_
  bool nodes_dirty_ = false;         // guarded by mu_
  bool reported_once_ = false;       // guarded by mu_
  std::deque<Op> work_;              // guarded by mu_
  std::map<RunKey, RunState> runs_;  // guarded by mu_
  // guarded by mu_: finished runs whose pods are to be deleted, by when (wall clock, Unix s).
  std::set<std::pair<Time, RunKey>> expiries_;
  bool expiries_changed_ = false;  // guarded by mu_: the worker's wait is to be recomputed
  std::map<std::string, std::vector<Device>> devices_;  // guarded by mu_: by node name
  std::set<std::string> node_errors_;                   // guarded by mu_: logged once
  std::set<int> unsupported_signals_;                   // guarded by mu_: logged once
  std::thread reporter_;
  std::thread worker_;
};

}  // namespace lockstep::kube
