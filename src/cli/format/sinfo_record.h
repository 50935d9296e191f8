// sinfo's lines before printing (Slurm's sinfo_data_t): a partition and the nodes grouped with
// it, with their counts and value ranges. Internal to the sinfo formatter; exposed for its tests.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::cli {

// A node state as sinfo reads it from the API's lower-case long name ("drained", "idle*").
struct NodeState {
  std::uint32_t code = 0;  // Slurm's node_state bits, for sorting ("-t")
  std::string compact;     // "drain", "idle*"
  std::string longname;    // "drained", "idle*"
  bool drain = false;
  bool down = false;
  bool fail = false;
  bool alloc = false;  // allocated, mixed or completing: counted as A in NODES(A/I/O/T)
};
NodeState ParseNodeState(std::string_view api_state);

// One node, read from its JSON once.
struct SinfoNode {
  std::string name;
  NodeState state;
  std::int64_t cpus = 0, cpus_alloc = 0, mem = 0, disk = 0, weight = 0;
  std::int64_t sockets = 0, cores = 0, threads = 0;
  std::string features, gres, gres_used, reason, reason_user;
  std::string limits_enforced;  // "memory,cpus", "memory", "cpus" or "none" (sinfo %k)
  std::int64_t reason_time = 0;
  std::int64_t reason_uid = -1;
};
SinfoNode ReadSinfoNode(const nlohmann::json& node);

struct MinMax {
  std::int64_t min = 0, max = 0;
  void Add(std::int64_t v, bool first);
};

// One output line.
struct SinfoRecord {
  const nlohmann::json* part = nullptr;  // null when grouping ignores partitions
  int part_inx = 0;                      // the partition's position in the API's list
  std::vector<std::string> names;        // node names, unique, in insertion order
  std::set<std::string> name_set;
  const SinfoNode* first = nullptr;  // the node whose attributes the line shows
  MinMax cpus, mem, disk, weight, sockets, cores, threads;
  std::int64_t nodes_alloc = 0, nodes_idle = 0, nodes_other = 0, nodes_total = 0;
  std::int64_t cpus_alloc = 0, cpus_idle = 0, cpus_other = 0, cpus_total = 0;

  // Adds a node (Slurm's _update_sinfo); a node already in the line is ignored.
  void Add(const SinfoNode& node);
};

// The header of sinfo's `letter`, or nullptr when unknown. Headers are cut to their column,
// except NODELIST's.
const char* SinfoHeader(char letter);

// Whether `letter` shows a partition attribute (grouping compares partitions on it) or a node
// attribute that splits lines (always, or only with -e for sizes).
bool IsPartitionLetter(char letter);
bool IsNodeMatchLetter(char letter);
bool IsExactMatchLetter(char letter);

// A partition attribute as sinfo prints it (and compares it when grouping).
std::string PartitionValue(char letter, const nlohmann::json* part);

// A node attribute that splits lines, for grouping.
std::string NodeMatchValue(char letter, const SinfoNode& node);

// The text of `letter` for `record`, except 'P' and 'N' whose widths the report computes.
std::string RecordValue(char letter, const SinfoRecord& record);

}  // namespace lockstep::cli
