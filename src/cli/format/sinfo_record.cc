#include "cli/format/sinfo_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>

#include "cli/format/field_format.h"

namespace lockstep::cli {
namespace {

// Slurm's node_state values (slurm.h): base states and the flags sinfo's state sort sees.
constexpr std::uint32_t kUnknown = 0, kDown = 1, kIdle = 2, kAllocated = 3, kMixed = 5, kFuture = 6;
constexpr std::uint32_t kFlagReserved = 0x20, kFlagDrain = 0x200, kFlagCompleting = 0x400,
                        kFlagNoRespond = 0x800, kFlagFail = 0x2000, kFlagMaint = 0x40000,
                        kFlagPlanned = 0x200000;

struct StateEntry {
  std::string_view api, alias, compact, longname;
  std::uint32_t code;
};

constexpr std::array<StateEntry, 14> kStates = {{
    {"idle", "idle", "idle", "idle", kIdle},
    {"allocated", "alloc", "alloc", "allocated", kAllocated},
    {"mixed", "mix", "mix", "mixed", kMixed},
    {"draining", "drng", "drng", "draining", kAllocated | kFlagDrain},
    {"drained", "drain", "drain", "drained", kIdle | kFlagDrain},
    {"down", "down", "down", "down", kDown},
    {"completing", "comp", "comp", "completing", kIdle | kFlagCompleting},
    {"fail", "fail", "fail", "fail", kIdle | kFlagFail},
    {"failing", "failg", "failg", "failing", kAllocated | kFlagFail},
    {"future", "futr", "futr", "future", kFuture},
    {"unknown", "unk", "unk", "unknown", kUnknown},
    {"maint", "maint", "maint", "maint", kIdle | kFlagMaint},
    {"reserved", "resv", "resv", "reserved", kIdle | kFlagReserved},
    {"planned", "plnd", "plnd", "planned", kIdle | kFlagPlanned},
}};

struct HeaderEntry {
  char letter;
  const char* header;
};

constexpr std::array<HeaderEntry, 44> kHeaders = {{
    {'a', "AVAIL"},
    {'A', "NODES(A/I)"},
    {'b', "ACTIVE_FEATURES"},
    {'B', "MAX_CPUS_PER_NODE"},
    {'c', "CPUS"},
    {'C', "CPUS(A/I/O/T)"},
    {'d', "TMP_DISK"},
    {'D', "NODES"},
    {'e', "FREE_MEM"},
    {'E', "REASON"},
    {'f', "AVAIL_FEATURES"},
    {'F', "NODES(A/I/O/T)"},
    {'g', "GROUPS"},
    {'G', "GRES"},
    {'h', "OVERSUBSCRIBE"},
    {'H', "TIMESTAMP"},
    {'i', "RESERVATION"},
    {'I', "PRIO_JOB_FACTOR"},
    {'k', "LIMITS_ENFORCED"},  // lockstep's own letter: the limits a node holds jobs to
    {'l', "TIMELIMIT"},
    {'L', "DEFAULTTIME"},
    {'m', "MEMORY"},
    {'N', "NODELIST"},
    {'O', "CPU_LOAD"},
    {'p', "PRIO_TIER"},
    {'P', "PARTITION"},
    {'r', "ROOT"},
    {'R', "PARTITION"},
    {'s', "JOB_SIZE"},
    {'S', "ALLOCNODES"},
    {'t', "STATE"},
    {'T', "STATE"},
    {'u', "USER"},
    {'U', "USER"},
    {'w', "WEIGHT"},
    {'z', "S:C:T"},
    {'Z', "THREADS"},
    {'M', "PREEMPT_MODE"},
    {'n', "HOSTNAMES"},
    {'o', "NODE_ADDR"},
    {'v', "VERSION"},
    {'V', "CLUSTER"},
    {'X', "SOCKETS"},
    {'Y', "CORES"},
}};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string OrNull(const std::string& s) {
  return s.empty() ? std::string("(null)") : s;
}

// _build_min_max_32_string without a range: "64", or "32+" when the nodes differ.
std::string MinPlus(const MinMax& v, bool units) {
  std::string min = units ? ConvertUnits(v.min, 0) : fmt::format("{}", v.min);
  if (v.min == v.max) return min;
  return min + "+";
}

std::string Duration(const nlohmann::json* part, std::string_view key) {
  if (part == nullptr) return "n/a";
  if (JIsNull(*part, key)) return "infinite";
  auto seconds = JInt(*part, key);
  if (!seconds) return "n/a";
  if (*seconds >= kInfiniteTime) return "infinite";
  return SinfoDuration(*seconds);
}

std::string StrOr(const nlohmann::json* part, std::string_view key, const char* fallback) {
  std::string value = part ? JStr(*part, key) : "";
  return value.empty() ? fallback : value;
}

}  // namespace

NodeState ParseNodeState(std::string_view api_state) {
  NodeState state;
  std::string name = Lower(std::string(api_state));
  bool no_respond = !name.empty() && name.back() == '*';
  if (no_respond) name.pop_back();
  state.compact = state.longname = name;
  for (const auto& entry : kStates) {
    if (name == entry.api || name == entry.alias) {
      state.code = entry.code;
      state.compact = std::string(entry.compact);
      state.longname = std::string(entry.longname);
      break;
    }
  }
  std::uint32_t base = state.code & 0xf;
  state.drain = state.code & kFlagDrain;
  state.fail = state.code & kFlagFail;
  state.down = base == kDown;
  state.alloc = base == kAllocated || base == kMixed || (state.code & kFlagCompleting);
  if (no_respond) {
    state.code |= kFlagNoRespond;
    state.compact += '*';
    state.longname += '*';
  }
  return state;
}

SinfoNode ReadSinfoNode(const nlohmann::json& node) {
  SinfoNode n;
  n.name = JStr(node, "name");
  n.state = ParseNodeState(JStr(node, "state"));
  n.cpus = JIntOr(node, "cpus", 0);
  n.cpus_alloc = JIntOr(node, "cpus_alloc", 0);
  n.mem = JIntOr(node, "mem_mb", 0);
  n.disk = JIntOr(node, "tmp_disk_mb", 0);
  n.weight = JIntOr(node, "weight", 1);
  // Slurm's defaults when only CPUs are configured: one core and thread per socket.
  n.sockets = JIntOr(node, "sockets", n.cpus);
  n.cores = JIntOr(node, "cores_per_socket", 1);
  n.threads = JIntOr(node, "threads_per_core", 1);
  n.features = JStr(node, "features");
  n.gres = JStr(node, "gres");
  n.limits_enforced = JStr(node, "limits_enforced");
  n.gres_used = JStr(node, "gres_used");
  n.reason = JStr(node, "reason");
  n.reason_user = JStr(node, "reason_user");
  n.reason_time = JIntOr(node, "reason_time", 0);
  n.reason_uid = JIntOr(node, "reason_uid", -1);
  return n;
}

void MinMax::Add(std::int64_t v, bool first) {
  if (first) {
    min = max = v;
  } else {
    min = std::min(min, v);
    max = std::max(max, v);
  }
}

void SinfoRecord::Add(const SinfoNode& node) {
  if (!name_set.insert(node.name).second) return;
  bool first_node = nodes_total == 0;
  if (first_node) first = &node;
  names.push_back(node.name);
  cpus.Add(node.cpus, first_node);
  mem.Add(node.mem, first_node);
  disk.Add(node.disk, first_node);
  weight.Add(node.weight, first_node);
  sockets.Add(node.sockets, first_node);
  cores.Add(node.cores, first_node);
  threads.Add(node.threads, first_node);
  bool other = node.state.drain || node.state.down;
  if (node.state.alloc) {
    ++nodes_alloc;
  } else if (other) {
    ++nodes_other;
  } else {
    ++nodes_idle;
  }
  ++nodes_total;
  cpus_alloc += node.cpus_alloc;
  cpus_total += node.cpus;
  (other ? cpus_other : cpus_idle) += node.cpus - node.cpus_alloc;
}

const char* SinfoHeader(char letter) {
  for (const auto& entry : kHeaders) {
    if (entry.letter == letter) return entry.header;
  }
  return nullptr;
}

bool IsPartitionLetter(char letter) {
  return std::string_view("aBghIlLMpPrRsS").find(letter) != std::string_view::npos;
}

bool IsNodeMatchLetter(char letter) {
  return std::string_view("bEfGHktTuU").find(letter) != std::string_view::npos;
}

bool IsExactMatchLetter(char letter) {
  return std::string_view("cCdmwXYzZ").find(letter) != std::string_view::npos;
}

std::string PartitionValue(char letter, const nlohmann::json* part) {
  if (part == nullptr && letter != 'P' && letter != 'R') return "n/a";
  switch (letter) {
    case 'a': {  // Slurm's AVAIL: up, down, drain or inact
      const std::string state = Lower(StrOr(part, "state", "up"));
      return state == "inactive" ? "inact" : state;
    }
    case 'B':
      return StrOr(part, "max_cpus_per_node", "UNLIMITED");
    case 'g':
      return StrOr(part, "allow_groups", "all");
    case 'h':
      return StrOr(part, "oversubscribe", "NO");
    case 'I':
      return fmt::format("{}", JIntOr(*part, "priority_job_factor", 1));
    case 'l':
      return Duration(part, "max_time");
    case 'L':  // no DefaultTime: Slurm's n/a (MaxTime applies)
      return part && JIsNull(*part, "default_time") ? "n/a" : Duration(part, "default_time");
    case 'M':  // as scontrol show partition's PreemptMode
      return StrOr(part, "preempt_mode", "OFF");
    case 'p':
      return fmt::format("{}", JIntOr(*part, "priority_tier", 1));
    case 'P':
    case 'R':
      return part ? JStr(*part, "name") : "n/a";
    case 'r':
      return JBool(*part, "root_only") ? "yes" : "no";
    case 's': {
      std::int64_t min = JIntOr(*part, "min_nodes", 1);
      auto max = JInt(*part, "max_nodes");
      if (min < 1 && (!max || *max > 0)) min = 1;
      // Slurm's INFINITE: no limit, however the API spells it (null or INT32_MAX).
      if (!max || *max >= std::numeric_limits<std::int32_t>::max())
        return fmt::format("{}-infinite", ConvertUnits(min, 0));
      if (*max == min) return ConvertUnits(min, 0);
      return fmt::format("{}-{}", ConvertUnits(min, 0), ConvertUnits(*max, 0));
    }
    case 'S':
      return StrOr(part, "allow_alloc_nodes", "all");
    default:
      return "";
  }
}

std::string NodeMatchValue(char letter, const SinfoNode& node) {
  switch (letter) {
    case 'b':
    case 'f':
      return node.features;
    case 'E':
      return node.reason;
    case 'G':
      return node.gres;
    case 'H':
      return fmt::format("{}", node.reason_time);
    case 'k':
      return node.limits_enforced;
    case 't':
    case 'T':
      return node.state.longname;
    case 'u':
    case 'U':
      return node.reason_user;
    case 'c':
    case 'C':
      return fmt::format("{}", node.cpus);
    case 'd':
      return fmt::format("{}", node.disk);
    case 'm':
      return fmt::format("{}", node.mem);
    case 'w':
      return fmt::format("{}", node.weight);
    case 'z':
      return fmt::format("{}:{}:{}", node.sockets, node.cores, node.threads);
    case 'Z':
      return fmt::format("{}", node.threads);
    case 'X':
      return fmt::format("{}", node.sockets);
    case 'Y':
      return fmt::format("{}", node.cores);
    default:
      return "";
  }
}

std::string RecordValue(char letter, const SinfoRecord& r) {
  if (IsPartitionLetter(letter)) return PartitionValue(letter, r.part);
  const SinfoNode* n = r.first;
  switch (letter) {
    case 'A':
      return fmt::format("{}/{}", r.nodes_alloc, r.nodes_idle);
    case 'b':
    case 'f':
      return OrNull(n ? n->features : "");
    case 'c':
      return MinPlus(r.cpus, true);
    case 'C':
      return fmt::format("{}/{}/{}/{}", r.cpus_alloc, r.cpus_idle, r.cpus_other, r.cpus_total);
    case 'd':
      return MinPlus(r.disk, false);
    case 'D':
      return fmt::format("{}", r.nodes_total);
    case 'e':
    case 'O':
      return "N/A";
    case 'E': {
      std::string reason = n ? n->reason : "";
      return reason.empty() ? "none" : reason;
    }
    case 'F':
      return fmt::format("{}/{}/{}/{}", r.nodes_alloc, r.nodes_idle, r.nodes_other, r.nodes_total);
    case 'G':
      return OrNull(n ? n->gres : "");
    case 'H':
      return n && n->reason_time ? TimeStamp(n->reason_time) : "Unknown";
    case 'k':
      return n && !n->limits_enforced.empty() ? n->limits_enforced : "n/a";
    case 'i':
      return "";
    case 'm':
      return MinPlus(r.mem, false);
    case 't':
      return n ? n->state.compact : "n/a";
    case 'T':
      return n ? n->state.longname : "n/a";
    case 'u':
      return n && !n->reason_user.empty() ? n->reason_user : "Unknown";
    case 'U': {
      if (!n || n->reason_user.empty()) return "Unknown";
      if (n->reason_uid < 0) return n->reason_user;
      return fmt::format("{}({})", n->reason_user, n->reason_uid);
    }
    case 'w':
      return MinPlus(r.weight, false);
    case 'z':
      return MinPlus(r.sockets, true) + ":" + MinPlus(r.cores, true) + ":" +
             MinPlus(r.threads, true);
    case 'Z':
      return MinPlus(r.threads, true);
    case 'X':
      return MinPlus(r.sockets, true);
    case 'Y':
      return MinPlus(r.cores, true);
    case 'v':  // the node daemon's version: agents do not report one
    case 'V':  // the federation's cluster: none
      return "N/A";
    default:
      return "";
  }
}

}  // namespace lockstep::cli
