// The stateful Scheduler against the pure plan(), its oracle: long random sequences of events
// (submit, start, end, cancel, hold and release, preemption, node loss and return, node
// resources, limits, usage, time), and after every event the Scheduler's plan must equal
// plan() on a Snapshot kept here independently, by the plainest means. Every plan is also
// checked against the plan invariants.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "engine/plan_checker.h"
#include "engine/scheduler.h"
#include "engine/snapshot_builder.h"

namespace lockstep::engine {
namespace {

// A cluster with two GPU types, MIG slices, two leaf switches, two partitions (the higher tier
// preempts the lower), a QoS with per-user and group limits, and two accounts.
Snapshot RandomCluster(std::mt19937_64& rng) {
  SnapshotBuilder b;
  b.Now(1'000'000);
  b.snapshot().gpu_types = {"h100", "a100", "a100_3g.20gb"};
  b.Switch("leaf0", 2).Switch("leaf1", 2).Switch("spine");
  b.Partition("low", 1, PreemptMode::kRequeue);
  b.Nodes(6, 64, 512 * 1024, 8, 0, 0, "h");
  b.Nodes(5, 64, 512 * 1024, 8, 1, 1, "a");
  b.Nodes(2, 32, 256 * 1024, 0, 1, 0, "c");
  Snapshot& s = b.snapshot();
  // Two MIG nodes: four GPUs, two of them cut into two 3g slices each.
  for (int m = 0; m < 2; ++m) {
    Node n;
    n.name = "mig" + std::to_string(m);
    n.cpus = 32;
    n.mem_mb = 256 * 1024;
    n.leaf_switch = 1;
    for (std::uint16_t g = 0; g < 2; ++g) n.gpus.push_back({g, 1, -1, ""});
    for (std::uint16_t k = 0; k < 4; ++k)
      n.gpus.push_back(
          {static_cast<std::uint16_t>(2 + k), 2, static_cast<std::int16_t>(2 + k / 2), ""});
    n.features = 1;
    s.nodes.push_back(n);
    s.partitions[0].nodes.push_back(static_cast<std::uint32_t>(s.nodes.size() - 1));
  }
  s.features = {"mig"};
  s.partitions[0].grace_time = 30;
  Partition high = s.partitions[0];
  high.name = "high";
  high.priority_tier = 2;
  high.preempt_mode = PreemptMode::kOff;
  high.max_time = 6 * 3600;
  s.partitions.push_back(high);
  s.qos[0].max_tres_per_user.gpus = 40;
  s.qos.push_back({});
  s.qos[1].name = "limited";
  s.qos[1].grp_tres.gpus = 16;
  s.qos[1].priority = 100;
  s.accounts.push_back({"a", 0, 2, {}});
  s.accounts.push_back({"b", 0, 1, {}});
  s.accounts[2].grp_tres.nodes = 6;
  s.accounts[1].grp_jobs = 12;
  s.qos[1].max_jobs_per_user = 3;
  for (std::uint32_t u = 0; u < 4; ++u) b.User(u, 1 + u % 2, 1, double(rng() % 1000));
  return b.Build();
}

// Which usage limits a sequence's cluster has: RandomCluster's, only those of QoS "limited" and
// account "b" (the jobs of other QoS and accounts are free of limits), or none. The Scheduler's
// plans of decisions skip blocks of the queue whose jobs no limit binds (pass_skip.cc).
enum class LimitSet { kAll, kSome, kNone };

void DropLimits(Snapshot& s, LimitSet keep) {
  if (keep == LimitSet::kSome) {
    s.qos[0].max_tres_per_user = {};
    s.accounts[1].grp_jobs = kUnlimited;
    return;
  }
  for (Qos& q : s.qos) {
    q.max_tres_per_user = {};
    q.grp_tres = {};
    q.grp_jobs = q.max_jobs_per_user = q.max_jobs_per_account = kUnlimited;
  }
  for (Account& a : s.accounts) {
    a.grp_tres = {};
    a.grp_jobs = a.max_jobs = kUnlimited;
  }
  for (Association& as : s.associations) as.max_jobs = kUnlimited;
}

class Sequence {
 public:
  Sequence(std::uint64_t seed, PolicyOptions o, LimitSet limits = LimitSet::kAll)
      : rng_(seed), mirror_(Cluster(rng_, limits)), o_(o), limits_(limits), sched_(mirror_, o) {
    // Blocks of a few jobs, so that short queues span many of them.
    sched_.SetQueueBlockCapacityForTest(2 + seed % 7);
  }

  // One random event applied to both, then the plans compared.
  void Step(int step) {
    int kind = Pick(0, 99);
    if (kind < 27)
      Submit();
    else if (kind < 30)
      SubmitBurst();
    else if (kind < 50)
      ApplyPlan();
    else if (kind < 62)
      EndOne();
    else if (kind < 67)
      CancelOne();
    else if (kind < 73)
      HoldOrRelease();
    else if (kind < 80)
      Advance(Pick(1, 1800));
    else if (kind < 84)
      ChangeNodeState();
    else if (kind < 87)
      Usage();
    else if (kind < 88)
      Limits();
    else if (kind < 89)
      NodeResources();
    else if (kind < 91)
      Windows();
    else
      Advance(0);
    Compare(step);
  }

 private:
  int Pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  static Snapshot Cluster(std::mt19937_64& rng, LimitSet limits) {
    Snapshot s = RandomCluster(rng);
    if (limits != LimitSet::kAll) DropLimits(s, limits);
    return s;
  }

  // The Scheduler's plan in full and its plan of decisions (what lockstepd plans on events and
  // the simulator on every event), in either order: a pass leaves nothing behind.
  void Compare(int step) {
    ForgetOldFinished();
    Plan want = plan(mirror_, o_);
    const bool decisions_first = step % 2 == 0;
    if (decisions_first) CompareDecisions(step, want);
    Plan got = sched_.Plan(mirror_.now);
    ASSERT_EQ(DescribePlan(got), DescribePlan(want)) << "step " << step;
    if (!decisions_first) CompareDecisions(step, want);
    Status st = CheckPlan(mirror_, o_, want);
    ASSERT_TRUE(st.ok()) << "step " << step << ": " << st.ToString();
    seen.starts += want.starts.size();
    for (const Start& st : want.starts)
      for (const Job& j : mirror_.pending)
        if (j.id == st.job && j.reservation != kNone) ++seen.window_starts;
    seen.preemptions += want.preemptions.size();
    for (const Pending& p : want.pending) {
      seen.reserved += p.reserved;
      seen.dependency += p.reason == PendingReason::kDependency;
      seen.limits +=
          p.reason == PendingReason::kQOSGrpGRES || p.reason == PendingReason::kAssocGrpNodeLimit;
      seen.job_counts += p.reason == PendingReason::kQOSGrpJobsLimit ||
                         p.reason == PendingReason::kQOSMaxJobsPerUserLimit ||
                         p.reason == PendingReason::kAssocMaxJobsLimit ||
                         p.reason == PendingReason::kAssocGrpJobsLimit;
    }
    last_ = std::move(want);
  }

  void CompareDecisions(int step, const Plan& want) {
    Plan got = sched_.Plan(mirror_.now, PlanDetail::kDecisions);
    ASSERT_EQ(DescribePlan(got, PlanDetail::kDecisions), DescribePlan(want, PlanDetail::kDecisions))
        << "step " << step << " (decisions)";
    seen.skipped += sched_.SkippedJobsForTest();
    // A plan of starts defers, and often never makes, the reservations it is sure of.
    Plan starts = sched_.Plan(mirror_.now, PlanDetail::kStarts);
    ASSERT_EQ(DescribePlan(starts, PlanDetail::kStarts), DescribePlan(want, PlanDetail::kStarts))
        << "step " << step << " (starts)";
  }

 public:
  // What the plans of the sequence did: a sequence that exercised nothing proves nothing.
  struct Seen {
    std::size_t starts = 0, preemptions = 0, reserved = 0, dependency = 0, limits = 0,
                job_counts = 0, skipped = 0, windows = 0, window_starts = 0;
  } seen;

 private:
  // Many jobs between two plans (an array, a script's loop of sbatch), some of them cancelled
  // or held before the plan: the queue takes them in as one batch.
  void SubmitBurst() {
    for (int n = Pick(2, 40); n > 0; --n) {
      Submit();
      if (Pick(0, 9) == 0) CancelOne();
      if (Pick(0, 9) == 0) HoldOrRelease();
    }
  }

  void Submit() {
    Job j;
    j.id = next_id_++;
    j.name = "j" + std::to_string(Pick(0, 3));
    std::uint32_t assoc = static_cast<std::uint32_t>(Pick(0, 3));
    j.assoc = assoc;
    j.user = mirror_.associations[assoc].user;
    j.partition = static_cast<std::uint32_t>(Pick(0, 3) == 0);
    j.qos = static_cast<std::uint32_t>(Pick(0, 4) == 0);
    j.submit_time = mirror_.now;
    JobRequest& r = j.req;
    int shape = Pick(0, 9);
    if (shape < 2) {  // a gang of whole GPU nodes
      r.min_nodes = Pick(2, 5);
      r.gpus_per_node = 8;
      r.max_switches = Pick(0, 1);
      r.switches_wait = Pick(0, 1) * 600;
    } else if (shape < 3) {
      // Whole nodes, charged whole against the limits whatever they ask for.
      r.exclusive = true;
      r.gpus_per_node = Pick(0, 8);
    } else if (shape < 4) {  // a MIG slice
      r.gpus_per_node = 1;
      r.gpu_type = 2;
      r.features = 1;
    } else if (shape < 5) {  // CPUs only
      r.cpus_per_task = Pick(1, 16);
      r.ntasks = Pick(1, 4);
    } else {
      r.gpus_per_node = Pick(1, 8);
      if (Pick(0, 2) == 0) r.gpu_type = static_cast<std::uint32_t>(Pick(0, 1));
      r.cpus_per_task = Pick(1, 8);
      r.mem_per_node_mb = Pick(0, 4) * 32 * 1024;
    }
    r.ntasks = std::max(r.ntasks, r.min_nodes);
    if (Pick(0, 7) == 0) {  // -w and -x: one node required, or one or two excluded, or both
      boost::intrusive_ptr<NodeFilter> filter(new NodeFilter);
      const int nodes = static_cast<int>(mirror_.nodes.size());
      int kind = Pick(0, 2);
      if (kind != 1) filter->required.push_back(static_cast<std::uint32_t>(Pick(0, nodes - 1)));
      if (kind != 0)
        for (int x = Pick(1, 2); x > 0; --x) {
          auto n = static_cast<std::uint32_t>(Pick(0, nodes - 1));
          if (!filter->Requires(n) && !filter->Excludes(n)) {
            filter->excluded.push_back(n);
            std::sort(filter->excluded.begin(), filter->excluded.end());
          }
        }
      r.node_filter = std::move(filter);
    }
    if (!mirror_.windows.empty() && Pick(0, 5) == 0)
      j.reservation = mirror_.windows[Pick(0, static_cast<int>(mirror_.windows.size()) - 1)].id;
    const Seconds limits[] = {300, 900, 3600, 4 * 3600, 8 * 3600};
    r.time_limit = limits[Pick(0, 4)];
    j.nice = Pick(0, 5) == 0 ? Pick(-50, 50) : 0;
    j.held_by_user = Pick(0, 19) == 0;
    j.requeue = Pick(0, 4) != 0;
    if (Pick(0, 9) == 0) j.begin_time = mirror_.now + Pick(1, 3600);
    if (Pick(0, 5) == 0 && next_id_ > 3) {
      const DependencyKind kinds[] = {DependencyKind::kAfter, DependencyKind::kAfterAny,
                                      DependencyKind::kAfterOk, DependencyKind::kAfterNotOk,
                                      DependencyKind::kSingleton};
      j.dependencies.push_back(
          {kinds[Pick(0, 4)], static_cast<JobId>(Pick(1, static_cast<int>(next_id_ - 2)))});
      j.dependencies_any = Pick(0, 1) == 1;
    }
    if (Pick(0, 9) == 0) {
      j.array_job_id = 900000 + Pick(0, 2);
      j.array_task_id = static_cast<std::uint32_t>(j.id);
      j.array_max_running = 2;
    }
    mirror_.pending.push_back(j);
    sched_.SetPending(j);
  }

  static void Erase(std::vector<Job>& v, JobId id) {
    std::erase_if(v, [&](const Job& j) { return j.id == id; });
  }
  Job* FindIn(std::vector<Job>& v, JobId id) {
    for (Job& j : v)
      if (j.id == id) return &j;
    return nullptr;
  }

  void Finish(JobId id, Outcome outcome) {
    Erase(mirror_.pending, id);
    Erase(mirror_.running, id);
    std::erase_if(mirror_.finished, [&](const FinishedJob& f) { return f.id == id; });
    std::erase_if(finished_at_, [&](const auto& f) { return f.second == id; });
    mirror_.finished.push_back({id, outcome});
    finished_at_.push_back({mirror_.now, id});
    sched_.SetFinished(id, outcome);
  }

  // Does what the last plan says, as a controller would.
  void ApplyPlan() {
    for (const Preemption& p : last_.preemptions) {
      Job* victim = FindIn(mirror_.running, p.victim);
      if (!victim) continue;
      if (p.mode == PreemptMode::kCancel) {
        Finish(p.victim, Outcome::kCancelled);
        continue;
      }
      Job back = *victim;
      back.start_time = 0;
      back.allocation = {};
      Erase(mirror_.running, p.victim);
      mirror_.pending.push_back(back);
      ASSERT_TRUE(sched_.Requeue(p.victim));
    }
    for (const Start& s : last_.starts) {
      Job* j = FindIn(mirror_.pending, s.job);
      if (!j) continue;
      Job run = *j;
      run.start_time = mirror_.now;
      run.allocation = s.allocation;
      Erase(mirror_.pending, s.job);
      mirror_.running.push_back(run);
      ASSERT_TRUE(sched_.StartJob(s.job, s.allocation));
    }
  }

  void EndOne() {
    if (mirror_.running.empty()) return;
    JobId id = mirror_.running[Pick(0, static_cast<int>(mirror_.running.size()) - 1)].id;
    const Outcome outcomes[] = {Outcome::kCompleted, Outcome::kCompleted, Outcome::kFailed};
    Finish(id, outcomes[Pick(0, 2)]);
  }

  void CancelOne() {
    if (mirror_.pending.empty()) return;
    Finish(mirror_.pending[Pick(0, static_cast<int>(mirror_.pending.size()) - 1)].id,
           Outcome::kCancelled);
  }

  void HoldOrRelease() {
    if (mirror_.pending.empty()) return;
    Job& j = mirror_.pending[Pick(0, static_cast<int>(mirror_.pending.size()) - 1)];
    j.held_by_user = !j.held_by_user;
    if (Pick(0, 3) == 0) j.admin_priority = j.admin_priority ? 0 : 5000;
    sched_.SetPending(j);
  }

  void Advance(Seconds by) { mirror_.now += by; }

  // MinJobAge, as the Scheduler documents it (at each Plan): a finished job is forgotten once
  // it is older than min_job_age and no pending job's dependency names it.
  void ForgetOldFinished() {
    auto awaited = [&](JobId id) {
      return std::any_of(mirror_.pending.begin(), mirror_.pending.end(), [&](const Job& j) {
        return std::any_of(j.dependencies.begin(), j.dependencies.end(), [&](const Dependency& d) {
          return d.kind != DependencyKind::kSingleton && d.target == id;
        });
      });
    };
    std::erase_if(finished_at_, [&](const std::pair<Time, JobId>& e) {
      if (mirror_.now - e.first <= o_.min_job_age || awaited(e.second)) return false;
      std::erase_if(mirror_.finished, [&](const FinishedJob& f) { return f.id == e.second; });
      return true;
    });
  }

  void ChangeNodeState() {
    auto n = static_cast<std::uint32_t>(Pick(0, static_cast<int>(mirror_.nodes.size()) - 1));
    const NodeState states[] = {NodeState::kUp, NodeState::kUp, NodeState::kDrain,
                                NodeState::kDown};
    NodeState state = states[Pick(0, 3)];
    mirror_.nodes[n].state = state;
    sched_.SetNodeState(n, state, "test");
    if (state != NodeState::kDown) return;
    // The controller requeues (or ends) the jobs of a node that went down.
    std::vector<JobId> lost;
    for (const Job& j : mirror_.running)
      for (const NodeAllocation& a : j.allocation.nodes)
        if (a.node == n) lost.push_back(j.id);
    for (JobId id : lost) {
      Job back = *FindIn(mirror_.running, id);
      if (!back.requeue) {
        Finish(id, Outcome::kFailed);
        continue;
      }
      back.start_time = 0;
      back.allocation = {};
      Erase(mirror_.running, id);
      mirror_.pending.push_back(back);
      ASSERT_TRUE(sched_.Requeue(id));
    }
  }

  void Usage() {
    auto a = static_cast<std::uint32_t>(Pick(0, 3));
    mirror_.associations[a].usage = Pick(0, 100000);
    sched_.SetUsage(a, mirror_.associations[a].usage);
  }

  // Reservations' windows: those not ended kept (or, one time in four, all deleted), and up
  // to two more on nodes of their own, starting now or within 90 minutes and lasting up to two
  // hours; the jobs submitted from now on may name one.
  void Windows() {
    std::vector<Window> windows;
    const int nodes = static_cast<int>(mirror_.nodes.size());
    std::vector<bool> taken(nodes, false);
    if (Pick(0, 3) != 0)
      for (const Window& w : mirror_.windows) {
        if (w.end <= mirror_.now) continue;
        for (std::uint32_t n : w.nodes) taken[n] = true;
        windows.push_back(w);
      }
    for (int k = Pick(0, 2); k > 0; --k) {
      Window w;
      w.id = next_window_id_++;
      w.start = mirror_.now + Pick(0, 3) * 1800;
      w.end = w.start + Pick(1, 4) * 1800;
      for (int n = 0; n < nodes; ++n)
        if (!taken[n] && Pick(0, 3) == 0) {
          w.nodes.push_back(static_cast<std::uint32_t>(n));
          taken[n] = true;
        }
      if (!w.nodes.empty()) windows.push_back(std::move(w));
    }
    mirror_.windows = windows;
    sched_.SetWindows(std::move(windows));
    ++seen.windows;
  }

  void Limits() {
    if (limits_ == LimitSet::kNone) {
      mirror_.partitions[1].max_time = Pick(1, 8) * 3600;
      sched_.SetLimits(mirror_.partitions, mirror_.qos, mirror_.accounts, mirror_.associations);
      return;
    }
    mirror_.qos[1].grp_tres.gpus = Pick(4, 32);
    mirror_.qos[1].grp_jobs = Pick(0, 1) ? kUnlimited : Pick(2, 10);
    mirror_.accounts[2].max_jobs = Pick(0, 1) ? kUnlimited : Pick(1, 6);
    mirror_.associations[0].max_jobs = Pick(0, 2) ? kUnlimited : Pick(1, 4);
    mirror_.partitions[1].max_time = Pick(1, 8) * 3600;
    sched_.SetLimits(mirror_.partitions, mirror_.qos, mirror_.accounts, mirror_.associations);
  }

  // A CPU-only node grows or shrinks, never below what runs on it.
  void NodeResources() {
    std::uint32_t n = 11 + static_cast<std::uint32_t>(Pick(0, 1));
    int used = 0;
    for (const Job& j : mirror_.running)
      for (const NodeAllocation& a : j.allocation.nodes)
        if (a.node == n) used += a.cpus;
    mirror_.nodes[n].cpus = std::max(used, 32 + 16 * Pick(0, 2));
    if (Pick(0, 1) == 0)
      sched_.SetNode(n, mirror_.nodes[n]);
    else
      sched_.SetCluster(mirror_);  // as lockstepd when a backend's nodes change
  }

  std::mt19937_64 rng_;
  Snapshot mirror_;
  PolicyOptions o_;
  LimitSet limits_;
  Scheduler sched_;
  Plan last_;
  JobId next_id_ = 1;
  std::uint32_t next_window_id_ = 1;
  std::vector<std::pair<Time, JobId>> finished_at_;
};

Sequence::Seen RunSequence(std::uint64_t seed, PolicyOptions o, int steps,
                           LimitSet limits = LimitSet::kAll) {
  Sequence seq(seed, o, limits);
  for (int i = 0; i < steps; ++i) {
    seq.Step(i);
    if (::testing::Test::HasFatalFailure()) {
      ADD_FAILURE() << "seed " << seed;
      return seq.seen;
    }
  }
  EXPECT_GT(seq.seen.starts, 100u) << "seed " << seed;
  EXPECT_GT(seq.seen.window_starts, 0u) << "seed " << seed << ": no job of a window started";
  EXPECT_GT(seq.seen.reserved, 0u) << "seed " << seed;
  EXPECT_GT(seq.seen.dependency, 0u) << "seed " << seed;
  if (limits != LimitSet::kNone) {
    EXPECT_GT(seq.seen.limits, 0u) << "seed " << seed;
    EXPECT_GT(seq.seen.job_counts, 0u) << "seed " << seed;
  }
  return seq.seen;
}

PolicyOptions Policy(int depth) {
  PolicyOptions o;
  o.reservation_depth = depth;
  o.weights.age = 1000;
  o.weights.fairshare = 2000;
  o.weights.job_size = 500;
  o.weights.qos = 300;
  o.weights.partition = 100;
  o.min_job_age = 1200;
  return o;
}

TEST(SchedulerDifferential, EasyWithPriorityFactorsMatchesPlanAfterEveryEvent) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) RunSequence(seed, Policy(1), 1500);
}

TEST(SchedulerDifferential, ConservativeAndFifoMatchPlanAfterEveryEvent) {
  RunSequence(11, Policy(8), 1500);
  PolicyOptions fifo = Policy(0);
  Sequence seq(12, fifo);
  for (int i = 0; i < 1500 && !HasFatalFailure(); ++i) seq.Step(i);
  EXPECT_GT(seq.seen.starts, 50u);  // FIFO: reservations' windows hold the whole queue back
}

// Without preemption, plans of decisions skip the blocks of the queue whose jobs cannot start
// and no limit binds (pass_skip.cc); they must still be plan()'s.
TEST(SchedulerDifferential, PlansOfDecisionsThatSkipBlocksMatchPlan) {
  std::size_t skipped = 0;
  skipped += RunSequence(41, Policy(1), 1500, LimitSet::kNone).skipped;
  const std::size_t with_some_limits = RunSequence(42, Policy(1), 1500, LimitSet::kSome).skipped;
  EXPECT_GT(with_some_limits, 1000u) << "jobs free of limits are skipped beside bound ones";
  PolicyOptions conservative = Policy(3);
  conservative.max_jobs_tested = 40;
  skipped += RunSequence(44, conservative, 1000, LimitSet::kNone).skipped;
  EXPECT_GT(skipped, 10000u) << "the sequences must exercise skipping";
  Sequence fifo(45, Policy(0), LimitSet::kNone);
  for (int i = 0; i < 1000 && !HasFatalFailure(); ++i) fifo.Step(i);
  EXPECT_GT(fifo.seen.skipped, 1000u);
}

TEST(SchedulerDifferential, PreemptionByPartitionAndQosMatchesPlan) {
  PolicyOptions o = Policy(1);
  o.preempt = PreemptType::kPartitionPriority;
  EXPECT_GT(RunSequence(21, o, 1500).preemptions + RunSequence(22, o, 1500).preemptions, 0u);
}

TEST(SchedulerDifferential, PriorityCalcPeriodAndBestFitMatchPlan) {
  PolicyOptions o = Policy(2);
  o.priority_calc_period = 600;
  o.placement = PlacementPolicy::kBestFit;
  RunSequence(31, o, 1500);
}

PendingReason ReasonOf(const Plan& p, JobId id) {
  for (const Pending& x : p.pending)
    if (x.job == id) return x.reason;
  return PendingReason::kNone;
}

// A met afterok stays met while the dependent waits for resources longer than MinJobAge
// (Slurm resolves a dependency when its target ends); the target is forgotten once nothing
// pending names it.
TEST(Scheduler, KeepsAFinishedJobWhilePendingJobsDependOnIt) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(1, 64, 1 << 20, 8);
  b.Running(9, {0}, 8, 3600, 0);  // the whole node's GPUs, for an hour
  PolicyOptions o;
  o.min_job_age = 300;
  Scheduler sched(b.snapshot(), o);
  Job target = b.snapshot().running[0];
  target.id = 1;
  target.allocation = {};
  sched.SetPending(target);
  sched.SetFinished(1, Outcome::kCompleted);
  Job dependent = target;
  dependent.id = 2;
  dependent.dependencies = {{DependencyKind::kAfterOk, 1}};
  sched.SetPending(dependent);

  EXPECT_EQ(ReasonOf(sched.Plan(100), 2), PendingReason::kResources);
  EXPECT_EQ(ReasonOf(sched.Plan(1800), 2), PendingReason::kResources)
      << "the target ended 1,800 s ago, beyond min_job_age, and the dependency stays met";
  ASSERT_EQ(sched.snapshot().finished.size(), 1u);

  sched.SetFinished(9, Outcome::kCompleted);  // the node is free
  Plan p = sched.Plan(1900);
  ASSERT_EQ(p.starts.size(), 1u);
  EXPECT_EQ(p.starts[0].job, 2u);
  ASSERT_TRUE(sched.StartJob(2, p.starts[0].allocation));
  sched.Plan(2300);
  for (const FinishedJob& f : sched.snapshot().finished)
    EXPECT_NE(f.id, 1u) << "nothing pending names job 1 any more: it is forgotten";
}

// A plan of starts defers the head's reservation only when the search cannot fail: behind a
// job that holds its node forever, the head has no reservation, so the queue behind it
// backfills as without one (a deferral would have failed its search). With an end in sight,
// the deferred reservation still keeps a long job from delaying the head.
TEST(Scheduler, PlanOfStartsDefersOnlyTheReservationsItIsSureOf) {
  for (Seconds blocker_limit : {kUnlimited, Seconds{3600}}) {
    SnapshotBuilder b;
    b.Partition("gpu").Nodes(2, 64, 1 << 20, 8);
    b.Running(9, {0}, 8, blocker_limit, 0);
    b.Pending(1, 2, 8, 600, 1);   // the head: both nodes
    b.Pending(2, 1, 8, 7200, 2);  // would run past the blocker's end
    b.Pending(3, 1, 4, 600, 3);   // ends before it
    Scheduler sched(b.snapshot(), PolicyOptions{});
    Plan decisions = sched.Plan(100, PlanDetail::kDecisions);
    Plan starts = sched.Plan(100, PlanDetail::kStarts);
    EXPECT_EQ(DescribePlan(starts, PlanDetail::kStarts),
              DescribePlan(decisions, PlanDetail::kStarts))
        << "blocker limit " << blocker_limit;
    std::vector<JobId> started;
    for (const Start& st : starts.starts) started.push_back(st.job);
    if (blocker_limit == kUnlimited)
      EXPECT_EQ(started, (std::vector<JobId>{2})) << "no reservation can hold job 2 back";
    else
      EXPECT_EQ(started, (std::vector<JobId>{3})) << "job 2 would delay the head";
    for (const Pending& p : starts.pending) EXPECT_FALSE(p.reserved) << "job " << p.job;
  }
}

}  // namespace
}  // namespace lockstep::engine
