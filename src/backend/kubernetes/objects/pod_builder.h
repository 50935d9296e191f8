// The Pods and the headless Service that run one lockstep job on Kubernetes. Pure functions:
// the objects are returned as JSON for the client to create; safe to call from any thread.
//
// Every pod is created bound (spec.nodeName is the allocated node, schedulerName "lockstep"),
// restartPolicy Never, with requests = limits = its share of the allocation (so Guaranteed QoS),
// running as the submitter's uid/gid, without owner. Pods are named "<prefix>-<jobid>-<rank>"
// and are also their own hostname under the subdomain "<prefix>-<jobid>", the headless Service
// that selects the job's pods; so rank 0 answers at MASTER_ADDR = "<prefix>-<jobid>-0.<prefix>-
// <jobid>" from every pod of the namespace. Rules in docs/kubernetes.md, "Objects".
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "backend/kubernetes/objects/node_mapping.h"
#include "common/status.h"
#include "common/types.h"

namespace lockstep::kube {

enum class PodMode : std::uint8_t {
  kPerNode,  // one pod per allocated node, with all of that node's share (torchrun style)
  kPerTask,  // one pod per task; a node's share is split evenly among its tasks
};

// One node's share of the job's allocation.
struct PodNodeAllocation {
  std::string node;            // the Node's name
  std::int32_t cpus = 0;       // whole CPUs
  std::int64_t mem_mb = 0;     // MiB
  std::vector<GpuGroup> gpus;  // GPUs by extended resource (GpuGroup::resource, count)
  std::int32_t tasks = 1;      // tasks on this node (kPerTask)
};

// lockstepd ends a job at its time limit itself (TIMEOUT, SIGTERM then SIGKILL after the grace);
// the pods' activeDeadlineSeconds is the node's backstop for when lockstepd is away, this much
// later, so that the kubelet's kill (a plain SIGKILL, FAILED) never races lockstepd's.
inline constexpr Seconds kDeadlineSlack = 60;

// A host directory every pod of the job sees (docs/storage.md): a category's parent directory,
// where the nodes mount its file systems, or a host path, at the same path; or a directory of
// sbatch --container-mounts at its target. A hostPath volume (type Directory: never created)
// with mountPropagation HostToContainer, so file systems mounted under it on the host later
// appear in running pods, and removed ones disappear.
struct HostMount {
  std::string path;    // absolute, on the host
  std::string target;  // absolute, in the pod; "": `path`
  bool read_only = false;
};

struct JobPodsSpec {
  JobId job_id = 0;
  std::string job_name;
  std::string user;  // the submitter's name (an annotation)
  std::uint32_t uid = 0, gid = 0;
  std::vector<std::uint32_t> groups;  // supplementary (the pods' supplementalGroups)
  std::string partition;
  std::string ns = "default";  // the namespace of the pods and the Service
  std::string image;
  // A batch script: its text goes into the env var LOCKSTEP_SCRIPT, which a fixed /bin/sh
  // launcher writes to an emptyDir file and executes with `args` (its shebang picks the
  // interpreter). When empty, `command` runs as given (argv, no shell), with `args`.
  std::string script;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::string work_dir;                    // "": the image's
  std::vector<HostMount> host_mounts;      // shared storage, in every pod
  // The batch script's output and error files (rank 0's pod; the others' go to their logs),
  // opened by the pod's launcher as the job's user, truncated unless `append_output`; empty:
  // the pod's log. An empty error path (or the same as stdout) shares the output file.
  std::string stdout_path, stderr_path;
  bool append_output = false;
  std::map<std::string, std::string> env;  // Slurm's and PyTorch's, from the controller
  std::vector<PodNodeAllocation> allocation;
  PodMode mode = PodMode::kPerNode;
  std::map<std::string, std::string> labels;       // added to every pod (not lockstep.dev/*)
  std::map<std::string, std::string> annotations;  // added to every pod
  Seconds termination_grace = 30;                  // terminationGracePeriodSeconds
  // activeDeadlineSeconds = time_limit + kDeadlineSlack; 0 or kUnlimited: none.
  Seconds time_limit = 0;
  std::int32_t master_port = 0;                    // a port of the Service (MASTER_PORT); 0: none
  nlohmann::json tolerations = nlohmann::json::array();  // copied into every pod
  std::string name_prefix = "lockstep";
  std::string scheduler_name = "lockstep";
};

struct JobPods {
  std::vector<nlohmann::json> pods;  // in rank order
  nlohmann::json service;
  std::string service_name;
  std::string master_addr;  // "<pod 0's hostname>.<service>"
};

// The job's pods and Service. Each pod's environment is spec.env (less CUDA_VISIBLE_DEVICES:
// inside a container the device plugin's GPUs are numbered from 0) plus, per pod,
// SLURM_NODEID (its node's index), SLURM_PROCID and RANK (its rank), SLURM_LOCALID and
// LOCAL_RANK (its rank on its node; 0 per node), SLURMD_NODENAME and MASTER_ADDR (replaced);
// kPerTask adds LOCAL_WORLD_SIZE (its node's tasks).
// Ranks: kPerNode, the node's index; kPerTask, the tasks of node 0 first, then node 1's...
// Every `$` of user text is written `$$`, so Kubernetes' $(VAR) expansion leaves it as it is.
// Errors (InvalidArgument): no job id, image, allocation or command; names that are not
// DNS-1123 labels; labels that are not valid; an env name Kubernetes rejects; a per-task share
// that is not whole (GPUs not divisible by the node's tasks, less than one milli-CPU or MiB).
Result<JobPods> BuildJobPods(const JobPodsSpec& spec);

// "<prefix>-<jobid>-<rank>" and "<prefix>-<jobid>".
std::string JobPodName(std::string_view prefix, JobId job, std::int32_t rank);
std::string JobServiceName(std::string_view prefix, JobId job);

// RFC 1123 label: 1-63 of [a-z0-9-], starting and ending with a letter or digit.
bool IsDns1123Label(std::string_view s);
// A label value: empty, or up to 63 of [A-Za-z0-9-_.] starting and ending alphanumeric.
bool IsLabelValue(std::string_view s);
// A label or annotation key: [prefix/]name, prefix a DNS-1123 subdomain of at most 253
// characters, name 1-63 of [A-Za-z0-9-_.] starting and ending alphanumeric.
bool IsQualifiedName(std::string_view s);

// Kubernetes expands $(VAR) in env values, command and args; `$$` stands for `$`. The text with
// every `$` doubled, so it reaches the container as written.
std::string EscapeDollars(std::string_view text);

}  // namespace lockstep::kube
