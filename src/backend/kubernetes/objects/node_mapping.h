// Node objects (as the apiserver returns them) to lockstep's description of a node: allocatable
// CPUs, memory and GPUs (whole GPUs by type, MIG slices by profile), features, topology and
// state. Pure functions; safe to call from any thread. The rules are in docs/kubernetes.md,
// "Objects".
//
//   Result<KubeNode> n = NodeFromObject(node_json, options);        // one Node object
//   Result<engine::Snapshot> s = AddNodes(config.base, {nodes...});  // into the engine's tables
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "engine/model.h"

namespace lockstep::kube {

// The label keys and resource names the mapping reads. Defaults follow NVIDIA's device plugin
// and GPU Feature Discovery, and Kubernetes' well-known labels.
struct NodeMappingOptions {
  // The extended resource of whole GPUs (with MIG strategy "single": of MIG devices).
  std::string gpu_resource = "nvidia.com/gpu";
  // MIG strategy "mixed": resources "<prefix><profile>", e.g. nvidia.com/mig-1g.10gb.
  std::string mig_resource_prefix = "nvidia.com/mig-";
  // GPU Feature Discovery's product label, e.g. "NVIDIA-A100-SXM4-80GB".
  std::string gpu_product_label = "nvidia.com/gpu.product";
  // product -> GPU type, consulted before the rule of GpuTypeFromProduct().
  std::map<std::string, std::string> gpu_type_by_product;
  // Labels whose value is a feature (e.g. nvidia.com/gpu.family=ampere gives "ampere").
  std::vector<std::string> feature_labels = {"nvidia.com/gpu.family"};
  // Labels "<prefix><feature>" give the feature <feature> unless their value is "false"
  // (feature.lockstep.dev/ib=true gives "ib"). Empty: none.
  std::string feature_label_prefix = "feature.lockstep.dev/";
  // The levels of the switch tree, root first: each label present on a node adds a level under
  // the previous one; the deepest present level is the node's leaf switch.
  std::vector<std::string> switch_labels = {
      "topology.kubernetes.io/zone", "topology.lockstep.dev/block", "topology.lockstep.dev/rack"};
  // The label naming the node's block (Slurm's topology/block): by default the NVLink domain.
  std::string block_label = "nvidia.com/gpu.clique";
  // Slurm's node Weight (lower preferred), from this label when present and a positive integer.
  std::string weight_label = "lockstep.dev/weight";
  // NoExecute taints with these keys do not make a node DOWN.
  std::vector<std::string> ignored_taints;
};

// GPUs of one type on a node.
struct GpuGroup {
  std::string type;  // "a100", or "mig-1g.10gb" for MIG slices
  std::int32_t count = 0;
  std::string resource;  // the extended resource: "nvidia.com/gpu", "nvidia.com/mig-1g.10gb"
  bool operator==(const GpuGroup&) const = default;
};

// One Node object in lockstep's terms, names not yet interned into a Snapshot.
struct KubeNode {
  std::string name;
  std::int64_t cpu_milli = 0;            // status.allocatable.cpu
  std::int64_t memory_bytes = 0;         // status.allocatable.memory
  std::int32_t cpus = 0;                 // whole CPUs the engine may give: floor(cpu_milli / 1000)
  std::int64_t mem_mb = 0;               // MiB, rounded down
  std::string gpu_product;               // the raw product label ("" when absent)
  std::vector<GpuGroup> gpus;            // whole GPUs first, then MIG profiles in name order
  std::vector<std::string> features;     // sorted, without duplicates
  std::vector<std::string> switch_path;  // the label values of switch_labels present, root first
  std::string block;                     // the block label's value, "" when absent
  std::int32_t weight = 1;
  engine::NodeState state = engine::NodeState::kUp;
  std::string reason;  // why DRAIN or DOWN
};

// The GPU type for a product label: the override of `options`, else the rule: lowercase; the
// vendor and brand words "nvidia", "tesla", "geforce", "quadro" dropped; "rtx", "gtx" and
// "titan" joined to the word after them; then the first word. A product with "-MIG-<profile>"
// (MIG strategy single) is "mig-<profile>".
//   "NVIDIA-A100-SXM4-80GB" -> "a100", "Tesla-T4" -> "t4", "NVIDIA-H100-80GB-HBM3" -> "h100",
//   "NVIDIA-GeForce-RTX-3090" -> "rtx3090", "A100-SXM4-40GB-MIG-1g.5gb" -> "mig-1g.5gb".
// An empty product gives "gpu".
std::string GpuTypeFromProduct(std::string_view product, const NodeMappingOptions& options = {});

// One Node object. State: DOWN when the Ready condition is not True (reason "<reason>:
// <message>" of the condition, or "no Ready condition"), else DOWN when it has a NoExecute taint
// not ignored (reason: the taint's key), else DRAIN when spec.unschedulable (reason
// "cordoned"), else UP. Errors (InvalidArgument, naming the node and the field): no name, a bad
// quantity, more GPU devices than a node can track (engine::kMaxDevicesPerNode) or more
// distinct GPU types (engine::kMaxGpuTypesPerNode), a bad weight label.
Result<KubeNode> NodeFromObject(const nlohmann::json& node, const NodeMappingOptions& options);

// `base` with `nodes` appended to base.nodes: GPU types, features, switches and blocks interned
// into its tables (existing entries reused by name). Switches are named by their path, root
// first, joined with "/" ("us-east-1a", "us-east-1a/rack7"), so equal rack names in two zones
// stay apart. Each node's GPU devices are numbered from 0 in the order of KubeNode::gpus; MIG
// slices have no parent (the device plugin does not say which GPU holds them). Partitions are
// not touched. Errors: a node name already present, more than 64 features in all.
Result<engine::Snapshot> AddNodes(engine::Snapshot base, const std::vector<KubeNode>& nodes);

}  // namespace lockstep::kube
