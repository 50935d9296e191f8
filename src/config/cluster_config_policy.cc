// The `partitions:`, `qos:`, `accounts:`, `users:` and `scheduler:` sections of the cluster
// config.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>

#include "config/cluster_config_parser.h"

namespace lockstep::config {
namespace {

constexpr std::int64_t kMaxU32 = UINT32_MAX;
constexpr std::int64_t kMaxPriorityTier = 65533;  // Slurm's limit for PriorityTier/JobFactor

}  // namespace

// ---------------------------------------------------------------------------------------------
// partitions

void ClusterConfigParser::ReadPartitions(const YAML::Node& list) {
  if (reader_.failed()) return;
  engine::Snapshot& s = config_.base;
  std::optional<std::uint32_t> flagged;
  reader_.ForEach(list, "partitions", [&](const YAML::Node& item, const std::string& path) {
    MapView m(reader_, item, path);
    engine::Partition p;
    p.name = m.RequiredString("name");
    CheckName(m, "name", p.name);
    std::vector<std::uint32_t> nodes;
    YAML::Node v = m.Value("nodes");
    const bool takes_all = v.IsScalar() && MapView::EqualsIgnoreCase(v.Scalar(), "ALL");
    if (takes_all) {
      for (std::uint32_t i = 0; i < s.nodes.size(); ++i) nodes.push_back(i);
    } else {
      nodes = NodeIndexes(m, "nodes", m.Hostlist("nodes"));
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    p.nodes = std::move(nodes);
    const bool is_default = m.Bool("default", false);
    p.max_time = m.Duration("max_time", kUnlimited);
    // Slurm: a partition without DefaultTime gives jobs its MaxTime.
    p.default_time = m.Duration("default_time", p.max_time);
    const std::int64_t max_nodes = m.Int("max_nodes", kUnlimited, 1, INT32_MAX, true);
    p.max_nodes = max_nodes == kUnlimited ? INT32_MAX : static_cast<std::int32_t>(max_nodes);
    p.priority_tier = static_cast<std::uint32_t>(m.Int("priority_tier", 1, 0, kMaxPriorityTier));
    p.priority_job_factor =
        static_cast<std::uint32_t>(m.Int("priority_job_factor", 1, 0, kMaxPriorityTier));
    p.preempt_mode = m.PreemptMode("preempt_mode", engine::PreemptMode::kOff);
    p.grace_time = m.DurationSeconds("grace_time", 0);
    m.Finish();
    if (reader_.failed()) return;
    if (p.nodes.empty() && !(takes_all && config_.backend == "kubernetes")) {
      reader_.Fail(m.MarkOf("nodes"), m.KeyPath("nodes"),
                   "partition '" + p.name + "' has no nodes");
      return;
    }
    if (p.default_time > p.max_time) {
      m.Fail("default_time", "is longer than max_time");
      return;
    }
    for (const engine::Partition& other : s.partitions) {
      if (other.name == p.name) {
        m.Fail("name", "partition '" + p.name + "' is defined twice");
        return;
      }
    }
    if (is_default) {
      if (flagged) {
        m.Fail("default", "partition '" + s.partitions[*flagged].name + "' is already the default");
        return;
      }
      flagged = static_cast<std::uint32_t>(s.partitions.size());
    }
    s.partitions.push_back(std::move(p));
    config_.partition_takes_all.push_back(takes_all);
  });
  if (reader_.failed()) return;
  if (s.partitions.empty()) {
    engine::Partition batch;
    batch.name = "batch";
    for (std::uint32_t i = 0; i < s.nodes.size(); ++i) batch.nodes.push_back(i);
    s.partitions.push_back(std::move(batch));
    config_.partition_takes_all.push_back(true);
  }
  config_.default_partition = flagged.value_or(0);
}

// ---------------------------------------------------------------------------------------------
// qos

namespace {
// A running-job count limit (GrpJobs, MaxJobs, ...): absent, -1 or UNLIMITED is no limit.
std::int64_t JobCount(MapView& m, std::string_view key) {
  return m.Int(key, kUnlimited, 0, INT32_MAX, /*allow_unlimited=*/true);
}
}  // namespace

void ClusterConfigParser::ReadQos(const YAML::Node& list) {
  if (reader_.failed()) return;
  engine::Snapshot& s = config_.base;
  struct Preempts {
    std::vector<std::string> names;
    YAML::Mark mark;
    std::string path;
  };
  std::vector<Preempts> preempts;
  reader_.ForEach(list, "qos", [&](const YAML::Node& item, const std::string& path) {
    MapView m(reader_, item, path);
    engine::Qos q;
    q.name = m.RequiredString("name");
    CheckName(m, "name", q.name);
    q.priority = static_cast<std::uint32_t>(m.Int("priority", 0, 0, kMaxU32));
    q.max_wall = m.Duration("max_wall", kUnlimited);
    q.max_tres_per_user = m.Tres("max_tres_per_user");
    q.grp_tres = m.Tres("grp_tres");
    q.grp_jobs = JobCount(m, "grp_jobs");
    q.max_jobs_per_user = JobCount(m, "max_jobs_per_user");
    q.max_jobs_per_account = JobCount(m, "max_jobs_per_account");
    preempts.push_back({m.StringList("preempt"), m.MarkOf("preempt"), m.KeyPath("preempt")});
    q.preempt_mode = m.PreemptMode("preempt_mode", engine::PreemptMode::kOff);
    q.grace_time = m.DurationSeconds("grace_time", 0);
    m.Finish();
    if (reader_.failed()) return;
    for (const engine::Qos& other : s.qos) {
      if (other.name == q.name) {
        m.Fail("name", "QoS '" + q.name + "' is defined twice");
        return;
      }
    }
    s.qos.push_back(std::move(q));
  });
  if (reader_.failed()) return;
  // Preempt lists may name QoS defined further down.
  for (std::size_t i = 0; i < s.qos.size(); ++i) {
    for (const std::string& name : preempts[i].names) {
      std::uint32_t target = config_.QosIndex(name);
      if (target == engine::kNone) {
        reader_.Fail(preempts[i].mark, preempts[i].path, "unknown QoS '" + name + "'");
        return;
      }
      if (std::find(s.qos[i].preempts.begin(), s.qos[i].preempts.end(), target) ==
          s.qos[i].preempts.end()) {
        s.qos[i].preempts.push_back(target);
      }
    }
  }
  if (s.qos.empty()) s.qos.push_back(MakeQos("normal"));
  std::uint32_t normal = config_.QosIndex("normal");
  config_.default_qos = normal == engine::kNone ? 0 : normal;
}

// ---------------------------------------------------------------------------------------------
// accounts and users

void ClusterConfigParser::ReadAccounts(const YAML::Node& list) {
  if (reader_.failed()) return;
  engine::Snapshot& s = config_.base;
  engine::Account root = MakeAccount("root", engine::kNone);
  struct Def {
    engine::Account account;
    std::string parent;
    YAML::Mark parent_mark;
    std::string parent_path;
  };
  std::vector<Def> defs;
  bool root_seen = false;
  reader_.ForEach(list, "accounts", [&](const YAML::Node& item, const std::string& path) {
    MapView m(reader_, item, path);
    Def d;
    d.account.name = m.RequiredString("name");
    CheckName(m, "name", d.account.name);
    const bool has_parent = m.Has("parent");
    d.parent = m.String("parent", "root");
    d.parent_mark = m.MarkOf("parent");
    d.parent_path = m.KeyPath("parent");
    d.account.shares = static_cast<std::uint32_t>(m.Int("shares", 1, 1, kMaxU32));
    d.account.grp_tres = m.Tres("grp_tres");
    d.account.grp_jobs = JobCount(m, "grp_jobs");
    d.account.max_jobs = JobCount(m, "max_jobs");
    m.Finish();
    if (reader_.failed()) return;
    if (d.account.name == "root") {  // settings of the implicit root
      if (root_seen) m.Fail("name", "account 'root' is defined twice");
      if (has_parent) m.Fail("parent", "the root account has no parent");
      root_seen = true;
      root.shares = d.account.shares;
      root.grp_tres = d.account.grp_tres;
      root.grp_jobs = d.account.grp_jobs;
      root.max_jobs = d.account.max_jobs;
      return;
    }
    for (const Def& other : defs) {
      if (other.account.name == d.account.name) {
        m.Fail("name", "account '" + d.account.name + "' is defined twice");
        return;
      }
    }
    defs.push_back(std::move(d));
  });
  if (reader_.failed()) return;
  if (!defs.empty()) config_.submit_limits.default_account_open = false;

  for (const Def& d : defs) {
    bool known = d.parent == "root" || std::any_of(defs.begin(), defs.end(), [&](const Def& o) {
                   return o.account.name == d.parent;
                 });
    if (!known) {
      reader_.Fail(d.parent_mark, d.parent_path, "unknown account '" + d.parent + "'");
      return;
    }
  }
  // Parents before children, in file order otherwise; what never gets placed is on a cycle.
  s.accounts = {root};
  std::vector<bool> placed(defs.size(), false);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t i = 0; i < defs.size(); ++i) {
      if (placed[i]) continue;
      std::uint32_t parent = config_.AccountIndex(defs[i].parent);
      if (parent == engine::kNone) continue;
      engine::Account a = defs[i].account;
      a.parent = parent;
      s.accounts.push_back(std::move(a));
      placed[i] = progress = true;
    }
  }
  auto def_of = [&](const std::string& name) -> const Def& {
    return *std::find_if(defs.begin(), defs.end(),
                         [&](const Def& o) { return o.account.name == name; });
  };
  for (std::size_t i = 0; i < defs.size(); ++i) {
    if (placed[i]) continue;
    // An account left over is on a cycle or below one: walk up onto the cycle, start from its
    // first account in the file, and spell it out; the error is at the edge that closes it.
    std::string at = defs[i].account.name;
    for (std::size_t steps = 0; steps < defs.size(); ++steps) at = def_of(at).parent;
    const Def* start = &def_of(at);
    for (std::string p = start->parent; p != at; p = def_of(p).parent) {
      if (&def_of(p) < start) start = &def_of(p);
    }
    std::string cycle = start->account.name;
    const Def* d = start;
    for (;;) {
      cycle += " -> " + d->parent;
      if (d->parent == start->account.name) break;
      d = &def_of(d->parent);
    }
    reader_.Fail(d->parent_mark, d->parent_path,
                 "accounts form a cycle (child -> parent): " + cycle);
    return;
  }
}

void ClusterConfigParser::ReadUsers(const YAML::Node& list) {
  if (reader_.failed()) return;
  engine::Snapshot& s = config_.base;
  reader_.ForEach(list, "users", [&](const YAML::Node& item, const std::string& path) {
    MapView m(reader_, item, path);
    std::string name = m.RequiredString("name");
    CheckName(m, "name", name);
    std::string account = m.String("account", "root");
    auto shares = static_cast<std::uint32_t>(m.Int("shares", 1, 1, kMaxU32));
    const std::int64_t max_jobs = JobCount(m, "max_jobs");
    m.Finish();
    if (reader_.failed()) return;
    std::uint32_t acct = config_.AccountIndex(account);
    if (acct == engine::kNone) {
      m.Fail("account", "unknown account '" + account + "'");
      return;
    }
    std::uint32_t uid = Intern(config_.users, name);
    for (const engine::Association& a : s.associations) {
      if (a.user == uid && a.account == acct) {
        m.Fail("name", "user '" + name + "' is already in account '" + account + "'");
        return;
      }
    }
    s.associations.push_back({.user = uid, .account = acct, .shares = shares, .max_jobs = max_jobs});
    config_.submit_limits.default_account_open = false;
  });
}

// ---------------------------------------------------------------------------------------------
// scheduler

// What a user may submit (submit_limits.h), from keys of the `scheduler:` section.
void ClusterConfigParser::ReadSubmitLimits(MapView& m) {
  SubmitLimits& l = config_.submit_limits;
  l.enforce_associations = m.Enum<bool>("accounting_storage_enforce",
                                        {{"associations", true}, {"none", false}},
                                        l.enforce_associations);
  l.enforce_part_limits = m.Enum<bool>(
      "enforce_part_limits", {{"no", false}, {"yes", true}, {"all", true}, {"any", true}},
      l.enforce_part_limits);
  auto bytes = [&](std::string_view key, std::uint64_t def, std::int64_t max) {
    return static_cast<std::uint64_t>(m.Int(key, static_cast<std::int64_t>(def), 1, max));
  };
  l.max_name_length = bytes("max_name_length", l.max_name_length, std::int64_t{1} << 20);
  l.max_script_size = bytes("max_script_size", l.max_script_size, std::int64_t{512} << 20);
  l.max_env_size = bytes("max_env_size", l.max_env_size, std::int64_t{512} << 20);
  l.max_job_count = bytes("max_job_count", l.max_job_count, INT32_MAX);
  l.max_submit_jobs = JobCount(m, "max_submit_jobs");
}

void ClusterConfigParser::ReadScheduler(const YAML::Node& map) {
  if (reader_.failed()) return;
  engine::PolicyOptions& o = config_.policy;
  MapView m(reader_, map, "scheduler");

  enum class Policy { kUnset, kFcfs, kEasy, kConservative };
  const Policy policy = m.Enum<Policy>(
      "policy",
      {{"fcfs", Policy::kFcfs}, {"easy", Policy::kEasy}, {"conservative", Policy::kConservative}},
      Policy::kUnset);
  const bool has_depth = m.Has("reservation_depth");
  const int depth = static_cast<int>(m.Int("reservation_depth", 100, 0, INT32_MAX));
  if (policy == Policy::kFcfs || policy == Policy::kEasy) {
    const int implied = policy == Policy::kFcfs ? 0 : 1;
    if (has_depth && depth != implied) {
      m.Fail("reservation_depth", std::string("policy ") + (implied == 0 ? "fcfs" : "easy") +
                                      " means depth " + std::to_string(implied));
    }
    o.reservation_depth = implied;
  } else if (policy == Policy::kConservative || has_depth) {
    o.reservation_depth = depth;
  }

  using engine::PlacementPolicy;
  o.placement = m.Enum<PlacementPolicy>("placement",
                                        {{"best_fit", PlacementPolicy::kBestFit},
                                         {"topology_first", PlacementPolicy::kTopologyFirst}},
                                        o.placement);
  using engine::PreemptType;
  o.preempt = m.Enum<PreemptType>("preempt_type",
                                  {{"off", PreemptType::kOff},
                                   {"partition_priority", PreemptType::kPartitionPriority},
                                   {"qos", PreemptType::kQos},
                                   {"preempt/none", PreemptType::kOff},
                                   {"preempt/partition_prio", PreemptType::kPartitionPriority},
                                   {"preempt/qos", PreemptType::kQos}},
                                  o.preempt);
  o.max_jobs_tested = static_cast<int>(m.Int("max_jobs_tested", 0, 0, INT32_MAX));
  o.estimate_starts = m.Bool("estimate_starts", o.estimate_starts);
  config_.kill_invalid_depend = m.Bool("kill_invalid_depend", config_.kill_invalid_depend);
  config_.max_switch_wait = m.DurationSeconds("max_switch_wait", config_.max_switch_wait);
  config_.max_array_size = static_cast<std::uint32_t>(
      m.Int("max_array_size", config_.max_array_size, 1, 4'000'001));  // kMaxArrayIndex + 1
  o.priority_calc_period = m.Duration("priority_calc_period", o.priority_calc_period);
  o.min_job_age = m.DurationSeconds("min_job_age", o.min_job_age);
  o.max_reservation_rounds =
      static_cast<int>(m.Int("max_reservation_rounds", o.max_reservation_rounds, 0, INT32_MAX));
  config_.fairshare_half_life = m.Duration("fairshare_half_life", config_.fairshare_half_life);
  ReadSubmitLimits(m);

  engine::PriorityWeights& w = o.weights;
  MapView wm(reader_, m.Value("weights"), m.KeyPath("weights"));
  auto weight = [&](const char* key, std::uint32_t def) {
    return static_cast<std::uint32_t>(wm.Int(key, def, 0, kMaxU32));
  };
  w.age = weight("age", w.age);
  w.fairshare = weight("fairshare", w.fairshare);
  w.job_size = weight("job_size", w.job_size);
  w.partition = weight("partition", w.partition);
  w.qos = weight("qos", w.qos);
  w.tres_cpu = weight("tres_cpu", w.tres_cpu);
  w.tres_mem = weight("tres_mem", w.tres_mem);
  w.tres_gpu = weight("tres_gpu", w.tres_gpu);
  wm.Finish();
  w.max_age = m.Duration("max_age", w.max_age);
  w.favor_small = m.Bool("favor_small", w.favor_small);
  m.Finish();
}

}  // namespace lockstep::config
