// lockstep's own cluster description: nodes, topology, partitions, QoS, accounts, users and the
// scheduler's policy, read from one YAML file (docs/configuration.md) into the engine's model.
//
//   Result<ClusterConfig> c = LoadClusterConfig("cluster.yaml");
//   if (!c.ok()) { /* c.status().message(): "cluster.yaml:12: partitions[0].max_time: ..." */ }
//   engine::Snapshot s = c->base;  // add jobs, set now, plan()
//
// A ClusterConfig is a plain value: copy it freely. It is not thread-safe; AssociationFor()
// changes it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "config/health_config.h"
#include "config/job_hooks_config.h"
#include "config/admission_config.h"
#include "config/login_config.h"
#include "config/storage_config.h"
#include "config/submit_limits.h"
#include "engine/model.h"

namespace lockstep::config {

// The `kubernetes:` section (docs/configuration.md): how lockstepd reaches the cluster and how
// it runs jobs there when `backend: kubernetes`. A plain value; defaults documented here.
struct KubernetesSettings {
  enum class Pods : std::uint8_t { kPerNode, kPerTask };
  std::string kubeconfig;              // "" : $KUBECONFIG, else in-cluster, else ~/.kube/config
  std::string context;                 // "" : the kubeconfig's current-context
  std::string ns = "lockstep";         // where job pods and Services are created
  std::string image = "ubuntu:24.04";  // jobs without --container-image
  Pods pods = Pods::kPerNode;          // one pod per allocated node, or one per task
  // Topology labels, root first (zone, block, rack), and the block (NVLink domain) label.
  std::vector<std::string> switch_labels = {
      "topology.kubernetes.io/zone", "topology.lockstep.dev/block", "topology.lockstep.dev/rack"};
  std::string block_label = "nvidia.com/gpu.clique";
  std::string node_selector;                // a label selector: only these Nodes are lockstep's
  std::vector<std::string> ignored_taints;  // NoExecute taints that do not make a node DOWN
  // Node conditions that drain a node ("k8s: ..."), until they clear: TYPE (trouble when True)
  // or TYPE=False|Unknown (docs/health.md, "On Kubernetes").
  std::vector<std::string> health_conditions = {"XidCriticalError", "AcceleratedHardwareReady=False",
                                                "KernelDeadlock", "ReadonlyFilesystem"};
  std::int32_t master_port = 29500;         // MASTER_PORT, a port of the job's headless Service
  double qps = 200;                         // client-side rate limit; <= 0: none
  std::int32_t burst = 400;
  // Bindings of pods that others create go through a client of their own with this limit; the
  // default 0 (none) lets a gang scheduler bind at the apiserver's pace, which protects itself
  // (max-in-flight, 429 with Retry-After, which the client honours).
  double bind_qps = 0;
  bool leader_elect = false;  // replicas elect one active lockstepd with a Lease
  std::string lease_name = "lockstepd";
  // How long the pods of a finished run are kept (their logs, `kubectl describe`) after its last
  // pod ended, like a Job's ttlSecondsAfterFinished; the job's Service goes with them. 0: at
  // once; kUnlimited: kept until someone deletes them.
  Seconds finished_pod_ttl = 24 * 3600;
};

struct ClusterConfig {
  // Nodes, switches, blocks, gpu_types, features, partitions, qos, accounts (root first, parents
  // before children) and associations. No jobs; now = 0.
  engine::Snapshot base;
  // From the `scheduler:` section.
  engine::PolicyOptions policy;
  // scheduler.kill_invalid_depend (Slurm's SchedulerParameters=kill_invalid_depend): a job whose
  // dependency can never be satisfied is cancelled, with cause `scheduler`, instead of pending
  // with reason DependencyNeverSatisfied.
  bool kill_invalid_depend = false;
  // scheduler.max_switch_wait (Slurm's SchedulerParameters=max_switch_wait): the longest a job
  // waits for its --switches count, and the wait of one that names none; then it runs on any
  // switches. 0: --switches never holds a job back.
  Seconds max_switch_wait = 300;
  // scheduler.max_array_size (Slurm's MaxArraySize): array indices are below it. Slurm's default
  // is 1001; lockstep's is its ceiling, 4,000,001, since a pending array costs one record.
  std::uint32_t max_array_size = 4'000'001;
  // What a user may submit (submit_limits.h): accounts, sizes, job counts.
  SubmitLimits submit_limits;
  // PriorityDecayHalfLife: how fast recorded usage decays for fair share.
  Seconds fairshare_half_life = 7 * 24 * 3600;
  // The partition flagged `default: true`, else the first one.
  std::uint32_t default_partition = 0;
  // The QoS named "normal" if there is one, else 0. A file without QoS gets a "normal" one.
  std::uint32_t default_qos = 0;
  // uid -> name for the users named in the file, and those AssociationFor() added: a uid in the
  // engine's Job and Association is an index into this table.
  std::vector<std::string> users;

  // The association of `user` in `account`, created when absent (shares 1); its index into
  // base.associations. An unknown user is added to `users`; an unknown account is created under
  // the root with shares 1. An empty `account` means the user's first association, or, for a
  // user without one, the account "default". For trace users that the file does not name.
  std::uint32_t AssociationFor(const std::string& user, const std::string& account);
  // After users, accounts or associations were changed in place (sacctmgr), reordered or
  // removed: the next AssociationFor() rebuilds its index from the tables.
  void InvalidateAssociationIndex() { index_ = AssociationIndex{}; index_.users_seen = ~std::size_t{0}; }

  // `backend: kubernetes` in the file: nodes come from the cluster's Node objects while
  // lockstepd runs (AddNode), so the file may name none.
  std::string backend = "agent";
  // `store_mode:` auto, wal, exclusive or truncate: how the state directory's SQLite file is
  // journaled (store/store_mode.h; lockstepd --store-mode replaces it).
  std::string store_mode = "auto";
  // Per partition: declared with `nodes: ALL`, so nodes added later join it.
  std::vector<bool> partition_takes_all;
  // The `kubernetes:` section (read whatever `backend` says; used when it is kubernetes).
  KubernetesSettings kubernetes;
  // The `health:` section (health_config.h).
  HealthConfig health;
  // `prolog:` and `epilog:` (job_hooks_config.h).
  JobHooksConfig job_hooks;
  // `storage:`, the shared file systems (storage_config.h), in the file's order.
  std::vector<FileSystem> storage;
  // The file systems node `node` gets (its partitions' and its own), as indexes into `storage`.
  std::vector<std::size_t> StorageOfNode(std::uint32_t node) const;
  // For each file system of `storage`, in order, the names of the nodes that get it.
  std::vector<std::vector<std::string>> StorageNodes() const;
  // `identity:` and `login:` (login_config.h, docs/login.md).
  IdentityConfig identity;
  LoginConfig login;
  // `admission:` (admission_config.h, docs/policy.md).
  AdmissionConfig admission;
  // The reservations' window ids by name (engine::Window::id), kept by whoever keeps the
  // reservations (lockstepd, the simulator): --reservation=NAME becomes Job::reservation.
  std::map<std::string, std::uint32_t, std::less<>> reservation_ids;

  // Adds a node found at run time (Kubernetes) to the cluster and to every partition declared
  // with `nodes: ALL`; its index. Names of GPU types, features, switches and blocks are
  // looked up or added with the Intern* calls first.
  std::uint32_t AddNode(engine::Node node);
  std::uint32_t InternGpuType(const std::string& name);
  std::uint32_t InternFeature(const std::string& name);  // kNone past 64 features
  // A switch under `parent` (kNone: a top switch), added when absent.
  std::uint32_t InternSwitch(const std::string& name, std::uint32_t parent);
  std::uint32_t InternBlock(const std::string& name);

  // Index lookups; engine::kNone when absent.
  std::uint32_t NodeIndex(std::string_view name) const;
  std::uint32_t PartitionIndex(std::string_view name) const;
  std::uint32_t QosIndex(std::string_view name) const;
  std::uint32_t GpuTypeIndex(std::string_view name) const;
  std::uint32_t FeatureIndex(std::string_view name) const;
  std::uint32_t AccountIndex(std::string_view name) const;
  std::uint32_t SwitchIndex(std::string_view name) const;
  std::uint32_t BlockIndex(std::string_view name) const;
  std::uint32_t UserIndex(std::string_view name) const;

 private:
  // Hash indexes behind AssociationFor(), so that a trace of a million jobs does not scan the
  // tables per job. Rebuilt whenever the tables they index have changed size or disagree.
  struct AssociationIndex {
    std::size_t users_seen = 0, accounts_seen = 0, associations_seen = 0;
    std::unordered_map<std::string, std::uint32_t> user;
    std::unordered_map<std::string, std::uint32_t> account;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> association;  // (uid, acct)
    std::unordered_map<std::uint32_t, std::uint32_t> first_association;            // uid -> assoc
  };
  bool AssociationIndexCurrent() const;
  void RebuildAssociationIndex();
  std::uint32_t InternUser(const std::string& user);
  std::uint32_t InternAccount(const std::string& account);
  AssociationIndex index_;

  // Node names to indices behind NodeIndex(): the controller asks per node of an allocation, at
  // 10,000 nodes. `base.nodes` is a public table that callers may change, so an answer is
  // checked against it and the map rebuilt when it disagrees; a name the map lacks is looked up
  // in the table. Guarded by its own mutex (lookups are const and may come from several
  // threads); a copy of the config starts with an empty map.
  struct NodeNameIndex {
    NodeNameIndex() = default;
    NodeNameIndex(const NodeNameIndex&) {}
    NodeNameIndex& operator=(const NodeNameIndex&) {
      std::lock_guard<std::mutex> lock(mu);
      index.clear();
      return *this;
    }
    std::mutex mu;
    std::unordered_map<std::string, std::uint32_t> index;
  };
  mutable NodeNameIndex node_names_;
};

// Reads and parses `path`. Errors name the file and line: "cluster.yaml:12: key: problem".
// `backend`, when not empty, replaces the file's `backend:` (lockstepd --backend).
Result<ClusterConfig> LoadClusterConfig(const std::string& path, std::string_view backend = "");

// Parses YAML text; `source_name` is the file name used in errors.
Result<ClusterConfig> ParseClusterConfig(std::string_view yaml_text, std::string_view source_name,
                                         std::string_view backend = "");

// A homogeneous cluster, for traces that carry only a job's size (SWF): `nodes` nodes named
// prefix1..prefixN with the given CPUs, memory and GPUs each (of type `gpu_type`, "gpu" when
// empty), one partition "batch" (default) holding them all, the root account, a QoS "normal", and
// the default policy. Aborts on a non-positive node count or more GPUs than a node can track.
ClusterConfig HomogeneousCluster(int nodes, int cpus_per_node, std::int64_t mem_mb_per_node,
                                 int gpus_per_node, std::string gpu_type,
                                 std::string prefix = "node");

}  // namespace lockstep::config
