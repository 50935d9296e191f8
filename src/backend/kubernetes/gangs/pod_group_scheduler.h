// Scheduling pods that others create (Kubeflow, JobSet, plain Deployments...) and that name
// lockstep as their scheduler (spec.schedulerName "lockstep"), whole gangs at a time.
//
// The scheduler watches such pods (and coscheduling PodGroups when their CRD is installed),
// gathers them into gangs (objects/pod_groups.h) and, once a gang is complete (minMember or
// lockstep.dev/gang-size pods exist), queues ONE lockstep job for it through backend::Admission, with
// JobSpec::external = "<namespace>/<gang>". The controller's engine places the whole job at once;
// when it starts it, the core backend calls Bind() with the allocation and the scheduler POSTs
// one Binding per pod. A gang is never left half bound: a binding that fails after others
// succeeded deletes the bound pods (their owners recreate them) and requeues the job
// (EventSink::LaunchFailed). When every pod of a bound gang has ended or is gone, the job ends
// (EventSink::RunExited); when a pending gang loses pods, its job is withdrawn.
// A gang the cluster can never hold gets a Warning Event (reason FailedScheduling) on each pod
// (and its PodGroup), no binding, and is tried again every `retry_interval`.
// Rules and choices in docs/kubernetes.md, "Pod groups".
//
//   PodGroupScheduler gangs(client, controller->events(), controller->admission(), options);
//   gangs.Start();
//   ... backend->Launch(order) with order.external set: gangs.Bind(order);
//   gangs.Stop();
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "backend/kubernetes/client/informer.h"
#include "backend/kubernetes/client/kube_client.h"
#include "backend/kubernetes/gangs/gang_events.h"
#include "backend/kubernetes/gangs/placement_features.h"
#include "backend/kubernetes/gangs/pod_group_status_writer.h"
#include "backend/kubernetes/gangs/work_pool.h"
#include "backend/kubernetes/objects/pod_groups.h"
#include "backend/admission.h"
#include "backend/backend.h"

namespace lockstep::kube {

inline constexpr const char* kTimeLimitAnnotation = "lockstep.dev/time-limit";
inline constexpr const char* kPodGroupApi = "/apis/scheduling.x-k8s.io/v1alpha1/podgroups";

// Documented defaults. (When config::KubernetesSettings lands in cluster_config.h, the core backend
// maps it onto these.)
struct PodGroupSchedulerOptions {
  std::string scheduler_name = kSchedulerName;  // pods naming this in spec.schedulerName
  std::string default_queue;       // partition of pods without lockstep.dev/queue; "": the default
  std::int32_t pods_per_node = 1;  // pods of one gang that may share a node
  // Label selector of the Nodes lockstep places on (the core backend's node_selector): gangs'
  // placement constraints are evaluated against these.
  std::string node_selector;
  // When set, the scheduler has no Node informer of its own (a second cache of every Node):
  // whoever has one (the core backend) forwards its Node events to NodeChanged() and says here
  // when it has listed them all.
  std::function<bool()> nodes_synced;
  ResourceNames names;
  // The pod informer's page size when it lists from etcd (re-lists after 410 Gone; its first
  // list is streamed from the watch cache).
  int list_page_size = 5000;
  // The pods are listed and watched in protobuf (objects/pod_proto.h), which costs the apiserver
  // and lockstep about half what JSON does, and bound pods are kept without what placing them
  // read (SchedulingPodJsonFromProto); false: in JSON, whole.
  bool protobuf_pods = true;
  // The same for its own Node informer (objects/node_proto.h), when the nodes are not forwarded.
  bool protobuf_nodes = true;
  // Concurrent Binding POSTs (and rollback deletions).
  int bind_threads = 16;
  // Concurrent Controller::Submit()s (each a durable commit; concurrent ones share one).
  int submit_threads = 32;
  // When set, Bindings go through a client of their own made from the given client's config with
  // these options (e.g. qps 0: no client-side rate limit); else through the given client.
  std::optional<ClientOptions> bind_client_options;
  // A gang that could not be submitted (never fits, unknown partition...) is tried again after
  // this long; the Event is posted again only when the reason changes.
  std::chrono::milliseconds retry_interval{30'000};
  // gracePeriodSeconds when a cancelled or timed-out job's pods are deleted; unset: the pods'
  // own terminationGracePeriodSeconds.
  std::optional<std::int64_t> terminate_grace_seconds;
  // Pods Events are posted on per gang (its PodGroup gets one too); the rest are counted in the
  // message.
  int max_events_per_gang = 16;
  std::string event_component = "lockstep";
  // PodGroups' status (pod_group_status.h) is written at most this often per PodGroup; a burst
  // of pod events within it becomes one write.
  std::chrono::milliseconds status_interval{1000};
  // Every decision about time (retry_at, status writes' spacing, Events' and scheduling times)
  // reads this clock; the worker's wake-ups stay real time (at most a second apart). Must outlive
  // the scheduler.
  lockstep::Clock* clock = &SystemClock();
};

// Counters for tests, metrics and the benchmark.
struct PodGroupSchedulerStats {
  std::int64_t pods = 0;           // lockstep-scheduled pods known now (listed and watched)
  std::int64_t submitted = 0;      // jobs submitted for gangs
  std::int64_t rejected = 0;       // submissions refused (gangs that cannot fit)
  std::int64_t bind_orders = 0;    // Bind() calls (jobs the controller started)
  std::int64_t bound_pods = 0;     // successful Bindings
  std::int64_t bind_failures = 0;  // gangs whose binding was rolled back
  std::int64_t cancelled = 0;      // pending jobs cancelled because their pods went away
  std::int64_t ended = 0;          // jobs ended by their pods
  std::int64_t events = 0;         // Events posted
  std::int64_t status_writes = 0;  // PodGroup status patches
};

// Owns its threads (a worker that reconciles gangs, `bind_threads` binders, two informers). The
// KubeClient, the EventSink and the Admission must outlive it. Thread-safe: Bind() and
// Terminate() only queue work; Stop() from any thread but the scheduler's own.
class PodGroupScheduler {
 public:
  PodGroupScheduler(KubeClient* client, backend::EventSink& events, backend::Admission& admission,
                    PodGroupSchedulerOptions options = {});
  ~PodGroupScheduler();  // Stop()s
  PodGroupScheduler(const PodGroupScheduler&) = delete;
  PodGroupScheduler& operator=(const PodGroupScheduler&) = delete;

  // Probes the PodGroup CRD, starts the informers and the worker, which recovers group -> job
  // from Admission::ExternalJobs once Nodes and PodGroups are listed, submits complete gangs while
  // the pods stream in, and looks at the recovered gangs once every pod is listed. Problems (no
  // PodGroup CRD, a bind client that cannot be made: the given client binds) are logged
  // (common/log.h).
  void Start();
  // Prompt; idempotent. Queued orders are dropped: the controller's recovery deals with them.
  void Stop();

  // The controller started `order.job` (order.external is "<namespace>/<gang>"): bind its pods to
  // the order's nodes. Only queues the work.
  void Bind(const backend::LaunchOrder& order);
  // The controller ends the job (cancel, time limit): delete its pods. Only queues the work.
  void Terminate(JobId job, std::int32_t run);
  // A Node added or changed (`present`), or deleted, when options.nodes_synced is set.
  void NodeChanged(const Json& node, bool present);

  // True once the informers have synced and the mapping is recovered.
  bool WaitForReady(std::chrono::milliseconds timeout);
  bool pod_groups_available() const { return pod_groups_available_; }
  PodGroupSchedulerStats stats() const;
  // The job submitted for gang "<namespace>/<name>", 0 when none.
  JobId JobOfGangForTest(const std::string& key) const;
  // Whether the PodGroup informer has handed this scheduler PodGroup "<namespace>/<name>" (and
  // not its deletion since).
  bool HasPodGroupForTest(const std::string& key) const;
  // The worker ticks now: gangs whose retry_at has passed by the injected clock (which a test
  // advanced) are tried again.
  void TickForTest();
  // A barrier instead of a sleep: waits until the pod informer has handed this scheduler every
  // pod change up to `resource_version` (e.g. a test's own write), the PodGroup informer every
  // PodGroup change up to `pod_groups_rv`, and the worker has handled
  // every order, gang, Node change and tick those (or earlier calls) made pending, with the
  // Submissions, Bindings and deletions it handed to its pools done. What did not happen by then
  // was decided against: a test asserts it then. False when `timeout` passes first.
  bool SettleForTest(std::uint64_t resource_version, std::chrono::milliseconds timeout,
                     std::uint64_t pod_groups_rv = 0);
  // A barrier for PodGroup status writes: waits until the status writer has nothing due, every
  // PodGroup marked so far written or found unchanged (it may wait for status_interval, by the
  // injected clock). True at once without the PodGroup CRD; false when `timeout` passes first.
  bool StatusSettledForTest(std::chrono::milliseconds timeout);
  // Runs on the worker after a gang's pods were checked and before its Bindings are posted.
  void SetBeforeBindForTest(std::function<void(const std::string& key)> hook) {
    before_bind_for_test_ = std::move(hook);
  }
  // Runs on the status writer before each PodGroup status patch; set before Start().
  void SetBeforeStatusWriteForTest(std::function<void(const std::string& key)> hook) {
    before_status_write_for_test_ = std::move(hook);
  }

 private:
  enum class Phase : std::uint8_t { kNone, kSubmitting, kPending, kBinding, kRunning };
  // How a bound gang ended, for RunExited.
  struct GangExit {
    int exit_code = 0, signal = 0;
    bool oom = false;
  };
  struct Group {
    std::string key;
    Phase phase = Phase::kNone;
    JobId job = 0;
    std::int32_t run = 0;
    std::map<std::string, std::string> pods;  // the job's pods: name -> uid
    std::int32_t pods_per_node = 1;
    // The placement feature its job asks for (placement_features.h); "" when none.
    std::string feature;
    bool terminate_requested = false;
    std::string failure;  // the last submission's error, evented once
    std::chrono::steady_clock::time_point retry_at{};
    std::set<std::string> evented;  // messages already posted for this gang
    std::string schedule_start;     // RFC 3339: when its job was submitted (PodGroup status)
    GangExit exit;                  // Reconcile's scratch: a bound gang that ended
  };
  struct BindBatch;
  struct Order {
    bool bind = true;  // else terminate
    JobId job = 0;
    std::int32_t run = 0;
    std::string external;
    std::vector<std::string> nodes;
  };

  // Files a pod added, changed (`present`) or deleted; keeps `pod`.
  void OnPod(Json pod, bool present);
  void OnPodGroup(const Json& group, bool present);
  // Placement features moved: gangs that failed are tried again now.
  void RetryFailedGangs();
  // Whether the gang still needs its placement feature: its job waits, or it will be submitted
  // again; mu_ held.
  static bool WaitsLocked(const Group& g);
  void Run();
  // Before the pods are listed: the gangs of the jobs an earlier lockstepd submitted, from
  // Controller::ListJobs (recovering_).
  void RecoverJobs();
  // Once the pods are listed: the recovered gangs' pods, and the orders held for them.
  void FinishRecovery();
  void Reconcile(const std::string& key);
  // Gang `key` has fewer pods than its size (PodGroup minMember, or gang-size annotation), so
  // cannot be complete; false when its size cannot be read (Reconcile reports why); mu_ held.
  bool TooFewPodsLocked(const std::string& key) const;
  // Pending jobs of gangs that ended without being bound (scancel): their gangs wait, with an
  // Event, until their pods change.
  void CheckPendingJobs();
  // `seen`: the gang's last change (last_change_) that the Reconcile submitting it looked at.
  void SubmitGang(const std::string& key, const Gang& gang, std::uint64_t seen);
  // How bound gang `g` ended when every pod has ended or is gone, else nullopt; mu_ held.
  std::optional<GangExit> RunningGangEndedLocked(const Group& g) const;
  void EndRunningGang(const std::string& key, const Group& g);
  void HandleBind(const Order& order);
  void HandleTerminate(const Order& order);
  void FinishBatch(const std::shared_ptr<BindBatch>& batch);
  void DeletePods(const std::string& ns, const std::vector<std::string>& names,
                  std::optional<std::int64_t> grace);
  // Posts `message` once per gang on its pods (and PodGroup).
  void EventGang(const std::string& key, const std::vector<SharedPod>& pods,
                 const std::string& reason,
                 const std::string& message);
  void MarkDirty(const std::string& key);
  // Posts `task` to `pool`, counted in pool_tasks_ until it has run (SettleForTest); mu_ not held.
  void PostCounted(WorkPool& pool, std::function<void()> task);
  // Records a change of gang `key`'s pods or PodGroup and marks it for a look; mu_ held.
  void ChangedLocked(const std::string& key);
  // The PodGroup `key` ("<ns>/<name>") wants its status looked at (a no-op without the CRD).
  void MarkStatusDirty(const std::string& key);
  // The status to write to PodGroup `key`, nullopt when it is gone or its status says it already.
  std::optional<PodGroupStatusPatch> StatusPatchOf(const std::string& key) const;
  // The gang's pods, by name; `lock`: take mu_ (else the caller holds it).
  std::vector<SharedPod> PodsOf(const std::string& key, bool lock = false) const;
  std::map<std::string, Json> PodGroupsFor(const std::vector<SharedPod>& pods) const;

  KubeClient* const client_;
  backend::EventSink& sink_;
  backend::Admission& admission_;
  const PodGroupSchedulerOptions options_;
  std::unique_ptr<KubeClient> bind_client_;  // when options_.bind_client_options
  KubeClient* binder_ = nullptr;             // bind_client_ or client_
  std::unique_ptr<GangEvents> events_;
  std::unique_ptr<WorkPool> pool_;         // Bindings and deletions
  std::unique_ptr<WorkPool> submit_pool_;  // Controller::Submit()s
  std::unique_ptr<Informer> pods_informer_;
  std::unique_ptr<Informer> groups_informer_;
  std::unique_ptr<Informer> nodes_informer_;
  std::unique_ptr<PlacementFeatures> features_;
  std::unique_ptr<PodGroupStatusWriter> status_;  // when the PodGroup CRD is installed
  bool pod_groups_available_ = false;

  // Lock order: features_'s mutex before mu_ (its Retain() asks WaitsLocked under both), so
  // features_ is never called with mu_ held.
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool started_ = false, stop_ = false, ready_ = false;  // guarded by mu_
  bool nodes_changed_ = false;  // guarded by mu_: labels or taints of Nodes changed
  bool tick_for_test_ = false;  // guarded by mu_
  bool working_ = false;         // guarded by mu_: the worker handles what it took
  std::uint64_t pods_applied_rv_ = 0;  // guarded by mu_: the last pod change OnPod() handled
  std::uint64_t groups_applied_rv_ = 0;  // guarded by mu_: the last OnPodGroup() handled
  int pool_tasks_ = 0;                   // guarded by mu_: PostCounted tasks not yet run
  std::condition_variable settled_;      // working_, pods_applied_rv_, pool_tasks_
  // Gang key -> pod name -> pod: every lockstep-scheduled pod not created by lockstep.
  std::map<std::string, std::map<std::string, SharedPod>> pods_;  // guarded by mu_
  std::map<std::string, std::string> pod_gang_;              // guarded by mu_: "ns/pod" -> gang key
  std::map<std::string, Json> pod_groups_;                   // guarded by mu_; "ns/name"
  std::map<std::string, Group> groups_;                      // guarded by mu_
  std::map<JobId, std::string> job_keys_;                    // guarded by mu_
  std::set<std::string> dirty_;                              // guarded by mu_
  // Gang key -> the sequence number of its pods' (or PodGroup's) last change.
  std::map<std::string, std::uint64_t> last_change_;  // guarded by mu_
  std::uint64_t change_seq_ = 0;                      // guarded by mu_
  std::deque<Order> orders_;                          // guarded by mu_
  // Gangs of recovered jobs whose pods are not all listed yet -> their job's node count; they
  // are not looked at, and their orders are held, until then.
  std::map<std::string, int> recovering_;  // guarded by mu_
  std::vector<Order> held_;                // guarded by mu_
  std::vector<Order> deferred_;   // guarded by mu_: Bind()s of jobs whose Submit() is returning
  PodGroupSchedulerStats stats_;  // guarded by mu_
  std::thread worker_;
  std::function<void(const std::string&)> before_bind_for_test_;
  std::function<void(const std::string&)> before_status_write_for_test_;
};

// The gang key ("<namespace>/<name>") a pod belongs to, by the rules of pod_groups.h, without
// validating sizes: its PodGroup label (unless `pod_groups` is false, the CRD missing, and the
// pod has a gang annotation), else its gang annotation, else its own name.
std::string GangKeyOf(const nlohmann::json& pod, bool pod_groups = true);

}  // namespace lockstep::kube
