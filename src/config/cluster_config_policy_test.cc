// The `partitions:`, `qos:`, `accounts:`, `users:` and `scheduler:` sections
// (cluster_config_policy.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/cluster_config.h"
#include "config/cluster_config_test_util.h"

namespace lockstep::config {
namespace {

using engine::kNone;
using test::ErrorOf;
using test::kFourNodes;
using test::Parse;
using test::WithNodes;
using ::testing::StartsWith;

// ---------------------------------------------------------------------------------------------
// Partitions

TEST(ClusterConfigTest, PartitionDefaults) {
  Result<ClusterConfig> r = Parse(kFourNodes);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->base.partitions.size(), 1u);
  const engine::Partition& p = r->base.partitions[0];
  EXPECT_EQ(p.name, "batch");
  EXPECT_EQ(p.nodes, (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(p.max_time, kUnlimited);
  EXPECT_EQ(r->default_partition, 0u);

  r = Parse(WithNodes(R"(
partitions:
  - name: a
    nodes: n[3-4],n1,n3
    max_time: 1-00:00:00
  - name: b
    nodes: all
    max_time: UNLIMITED
    default_time: 2:00:00
    max_nodes: 2
    priority_tier: 10
    priority_job_factor: 5
    preempt_mode: CANCEL
    grace_time: 1:00
)"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const engine::Partition& a = r->base.partitions[0];
  EXPECT_EQ(a.nodes, (std::vector<std::uint32_t>{0, 2, 3}));  // sorted, once each
  EXPECT_EQ(a.default_time, 86400);                           // Slurm: DefaultTime = MaxTime
  EXPECT_EQ(a.max_nodes, 0x7fffffff);
  EXPECT_EQ(r->default_partition, 0u);  // none flagged: the first
  const engine::Partition& b = r->base.partitions[1];
  EXPECT_EQ(b.nodes.size(), 4u);
  EXPECT_EQ(b.max_time, kUnlimited);
  EXPECT_EQ(b.default_time, 7200);
  EXPECT_EQ(b.max_nodes, 2);
  EXPECT_EQ(b.priority_tier, 10u);
  EXPECT_EQ(b.priority_job_factor, 5u);
  EXPECT_EQ(b.preempt_mode, engine::PreemptMode::kCancel);
  EXPECT_EQ(b.grace_time, 60);

  r = Parse(WithNodes("partitions: []\n"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->base.partitions[0].name, "batch");
}

TEST(ClusterConfigTest, PartitionErrors) {
  EXPECT_EQ(ErrorOf(WithNodes(R"(
partitions:
  - name: gpu
    nodes: ALL
    max_time: abc
)")),
            "cluster.yaml:8: partitions[0].max_time: 'abc' is not a Slurm duration (minutes, "
            "[days-]hours:minutes:seconds, days-hours or UNLIMITED)");
  EXPECT_THAT(ErrorOf(WithNodes(R"(
partitions:
  - name: gpu
    nodes: n[1-9]
)")),
              StartsWith("cluster.yaml:7: partitions[0].nodes: unknown node 'n5'"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
partitions:
  - name: gpu
)")),
              StartsWith("cluster.yaml:6: partitions[0].nodes: partition 'gpu' has no nodes"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
partitions:
  - name: gpu
    nodes: ""
)")),
              StartsWith("cluster.yaml:7: partitions[0].nodes: partition 'gpu' has no nodes"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
partitions:
  - name: gpu
    nodes: ALL
  - name: gpu
    nodes: n1
)")),
              StartsWith("cluster.yaml:8: partitions[1].name: partition 'gpu' is defined twice"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
partitions:
  - {name: a, nodes: ALL, default: true}
  - {name: b, nodes: ALL, default: yes}
)")),
              StartsWith("cluster.yaml:7: partitions[1].default: partition 'a' is already the "
                         "default"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
partitions:
  - {name: a, nodes: ALL, max_time: 1:00:00, default_time: 2:00:00}
)")),
              StartsWith("cluster.yaml:6: partitions[0].default_time: is longer than max_time"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
partitions:
  - {name: a, nodes: ALL, preempt_mode: suspend}
)")),
              StartsWith("cluster.yaml:6: partitions[0].preempt_mode: 'suspend' is not one of "
                         "off|cancel|requeue"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
partitions:
  - {nodes: ALL}
)")),
              StartsWith("cluster.yaml:6: partitions[0].name: required"));
}

// ---------------------------------------------------------------------------------------------
// QoS

TEST(ClusterConfigTest, QosFields) {
  Result<ClusterConfig> r = Parse(WithNodes(R"(
qos:
  - name: scavenger
    preempt_mode: requeue
    grace_time: 30
  - name: normal
    priority: 10
    max_wall: 1-00:00:00
    max_tres_per_user: {cpu: 256, mem: 1T, gpu: 64, node: 8}
    grp_tres: {gres/gpu: 128, mem: UNLIMITED}
    grp_jobs: 20
    max_jobs_per_user: 4
    max_jobs_per_account: UNLIMITED
    preempt: [scavenger, high]
  - name: high
)"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ClusterConfig& c = *r;
  EXPECT_EQ(c.default_qos, 1u);
  const engine::Qos& n = c.base.qos[1];
  EXPECT_EQ(n.priority, 10u);
  EXPECT_EQ(n.max_wall, 86400);
  EXPECT_EQ(n.max_tres_per_user.cpus, 256);
  EXPECT_EQ(n.max_tres_per_user.mem_mb, 1024 * 1024);
  EXPECT_EQ(n.max_tres_per_user.gpus, 64);
  EXPECT_EQ(n.max_tres_per_user.nodes, 8);
  EXPECT_EQ(n.grp_tres.gpus, 128);
  EXPECT_EQ(n.grp_tres.mem_mb, kUnlimited);
  EXPECT_EQ(n.grp_tres.cpus, kUnlimited);
  EXPECT_EQ(n.grp_jobs, 20);
  EXPECT_EQ(n.max_jobs_per_user, 4);
  EXPECT_EQ(n.max_jobs_per_account, kUnlimited);
  EXPECT_EQ(c.base.qos[0].grp_jobs, kUnlimited);
  EXPECT_EQ(n.preempts, (std::vector<std::uint32_t>{0, 2}));
  EXPECT_EQ(c.base.qos[0].preempt_mode, engine::PreemptMode::kRequeue);
  EXPECT_EQ(c.base.qos[0].grace_time, 30);

  r = Parse(kFourNodes);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->base.qos.size(), 1u);
  EXPECT_EQ(r->base.qos[0].name, "normal");
  EXPECT_EQ(r->default_qos, 0u);

  r = Parse(WithNodes("qos:\n  - name: low\n  - name: mid\n"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->default_qos, 0u);  // no "normal": the first
}

TEST(ClusterConfigTest, QosErrors) {
  EXPECT_THAT(ErrorOf(WithNodes(R"(
qos:
  - name: high
    preempt: [scavenger]
)")),
              StartsWith("cluster.yaml:7: qos[0].preempt: unknown QoS 'scavenger'"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
qos:
  - name: high
  - name: high
)")),
              StartsWith("cluster.yaml:7: qos[1].name: QoS 'high' is defined twice"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
qos:
  - name: high
    grp_tres: {gpu: -5}
)")),
              StartsWith("cluster.yaml:7: qos[0].grp_tres.gpu: -5 is out of range"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
qos:
  - name: high
    max_wall: 10 days
)")),
              StartsWith("cluster.yaml:7: qos[0].max_wall: '10 days' is not a Slurm duration"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
qos:
  - name: high
    grp_jobs: -3
)")),
              StartsWith("cluster.yaml:7: qos[0].grp_jobs: -3 is out of range"));
}

// ---------------------------------------------------------------------------------------------
// Accounts and users

TEST(ClusterConfigTest, AccountTreeParentsFirst) {
  Result<ClusterConfig> r = Parse(WithNodes(R"(
accounts:
  - name: nlp
    parent: research
    shares: 3
  - name: research
    shares: 10
    grp_tres: {gpu: 128}
    grp_jobs: 50
    max_jobs: 5
  - name: root
    grp_tres: {node: 100}
    grp_jobs: 1000
users:
  - name: alice
    account: nlp
    shares: 2
    max_jobs: 8
  - name: bob
    account: research
  - name: alice
    account: research
)"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ClusterConfig& c = *r;
  const auto& a = c.base.accounts;
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].name, "root");
  EXPECT_EQ(a[0].parent, kNone);
  EXPECT_EQ(a[0].grp_tres.nodes, 100);
  EXPECT_EQ(a[1].name, "research");
  EXPECT_EQ(a[1].parent, 0u);
  EXPECT_EQ(a[1].grp_tres.gpus, 128);
  EXPECT_EQ(a[1].grp_jobs, 50);
  EXPECT_EQ(a[1].max_jobs, 5);
  EXPECT_EQ(a[0].grp_jobs, 1000);
  EXPECT_EQ(a[2].max_jobs, kUnlimited);
  EXPECT_EQ(a[2].name, "nlp");
  EXPECT_EQ(a[2].parent, 1u);
  EXPECT_EQ(a[2].shares, 3u);
  EXPECT_EQ(c.users, (std::vector<std::string>{"alice", "bob"}));
  ASSERT_EQ(c.base.associations.size(), 3u);
  EXPECT_EQ(c.base.associations[0].user, 0u);
  EXPECT_EQ(c.base.associations[0].account, 2u);
  EXPECT_EQ(c.base.associations[0].shares, 2u);
  EXPECT_EQ(c.base.associations[0].max_jobs, 8);
  EXPECT_EQ(c.base.associations[1].max_jobs, kUnlimited);
  EXPECT_EQ(c.base.associations[2].user, 0u);
  EXPECT_EQ(c.base.associations[2].account, 1u);
}

TEST(ClusterConfigTest, AccountAndUserErrors) {
  EXPECT_THAT(ErrorOf(WithNodes(R"(
accounts:
  - name: nlp
    parent: reserch
)")),
              StartsWith("cluster.yaml:7: accounts[0].parent: unknown account 'reserch'"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
accounts:
  - name: leaf
    parent: a
  - name: a
    parent: b
  - name: b
    parent: a
)")),
              StartsWith("cluster.yaml:11: accounts[2].parent: accounts form a cycle (child -> "
                         "parent): a -> b -> a"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
accounts:
  - name: a
  - name: a
)")),
              StartsWith("cluster.yaml:7: accounts[1].name: account 'a' is defined twice"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
users:
  - name: alice
    account: nope
)")),
              StartsWith("cluster.yaml:7: users[0].account: unknown account 'nope'"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
users:
  - name: alice
  - name: alice
    account: root
)")),
              StartsWith("cluster.yaml:7: users[1].name: user 'alice' is already in account "
                         "'root'"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
accounts:
  - name: root
    parent: x
)")),
              StartsWith("cluster.yaml:7: accounts[0].parent: the root account has no parent"));
}

// ---------------------------------------------------------------------------------------------
// Scheduler

TEST(ClusterConfigTest, SchedulerPolicyMapping) {
  auto policy = [](std::string_view scheduler) {
    Result<ClusterConfig> r = Parse(WithNodes(scheduler));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->policy : engine::PolicyOptions{};
  };
  const engine::PolicyOptions defaults;
  EXPECT_EQ(policy("").reservation_depth, defaults.reservation_depth);
  EXPECT_EQ(policy("scheduler: {policy: fcfs}").reservation_depth, 0);
  EXPECT_EQ(policy("scheduler: {policy: easy}").reservation_depth, 1);
  EXPECT_EQ(policy("scheduler: {policy: conservative}").reservation_depth, 100);
  EXPECT_EQ(policy("scheduler: {policy: Conservative, reservation_depth: 7}").reservation_depth, 7);
  EXPECT_EQ(policy("scheduler: {reservation_depth: 5}").reservation_depth, 5);
  EXPECT_EQ(policy("scheduler: {policy: fcfs, reservation_depth: 0}").reservation_depth, 0);

  engine::PolicyOptions o = policy(R"(
scheduler:
  placement: best_fit
  preempt_type: qos
  max_jobs_tested: 500
  estimate_starts: false
  priority_calc_period: "5:00"
  min_job_age: 1-00:00:00
  max_reservation_rounds: 4096
  weights: {age: 1000, fairshare: 10000, job_size: 1, partition: 2, qos: 3, tres_cpu: 4,
            tres_mem: 5, tres_gpu: 6}
  max_age: 1-00:00:00
  favor_small: true
)");
  EXPECT_EQ(o.placement, engine::PlacementPolicy::kBestFit);
  EXPECT_EQ(o.preempt, engine::PreemptType::kQos);
  EXPECT_EQ(o.max_jobs_tested, 500);
  EXPECT_FALSE(o.estimate_starts);
  EXPECT_EQ(o.priority_calc_period, 300);
  EXPECT_EQ(o.min_job_age, 86400);
  EXPECT_EQ(o.max_reservation_rounds, 4096);
  EXPECT_EQ(o.weights.age, 1000u);
  EXPECT_EQ(o.weights.fairshare, 10000u);
  EXPECT_EQ(o.weights.job_size, 1u);
  EXPECT_EQ(o.weights.partition, 2u);
  EXPECT_EQ(o.weights.qos, 3u);
  EXPECT_EQ(o.weights.tres_cpu, 4u);
  EXPECT_EQ(o.weights.tres_mem, 5u);
  EXPECT_EQ(o.weights.tres_gpu, 6u);
  EXPECT_EQ(o.weights.max_age, 86400);
  EXPECT_TRUE(o.weights.favor_small);
  EXPECT_EQ(policy("scheduler: {preempt_type: partition_priority}").preempt,
            engine::PreemptType::kPartitionPriority);
  EXPECT_EQ(policy("scheduler: {preempt_type: preempt/partition_prio}").preempt,
            engine::PreemptType::kPartitionPriority);
  EXPECT_EQ(policy("scheduler: {placement: topology_first}").placement,
            engine::PlacementPolicy::kTopologyFirst);

  Result<ClusterConfig> r = Parse(WithNodes("scheduler: {fairshare_half_life: 14-0}\n"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->fairshare_half_life, 14 * 86400);
}

TEST(ClusterConfigTest, SchedulerErrors) {
  EXPECT_THAT(ErrorOf(WithNodes("scheduler:\n  policy: fcfs\n  reservation_depth: 3\n")),
              StartsWith("cluster.yaml:7: scheduler.reservation_depth: policy fcfs means depth 0"));
  EXPECT_THAT(ErrorOf(WithNodes("scheduler:\n  policy: backfill\n")),
              StartsWith("cluster.yaml:6: scheduler.policy: 'backfill' is not one of "
                         "fcfs|easy|conservative"));
  EXPECT_THAT(ErrorOf(WithNodes("scheduler:\n  favor_small: maybe\n")),
              StartsWith("cluster.yaml:6: scheduler.favor_small: 'maybe' is not true or false"));
  EXPECT_THAT(ErrorOf(WithNodes("scheduler:\n  weights: {age: -1}\n")),
              StartsWith("cluster.yaml:6: scheduler.weights.age: -1 is out of range"));
  EXPECT_THAT(ErrorOf(WithNodes("scheduler: fast\n")),
              StartsWith("cluster.yaml:5: scheduler: expected a map (key: value), found 'fast'"));
}

TEST(SchedulerConfig, MaxArraySizeIsTheCeilingByDefaultAndRangeChecked) {
  Result<ClusterConfig> def = Parse(kFourNodes);
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->max_array_size, 4'000'001u);
  Result<ClusterConfig> slurm =
      Parse(std::string(kFourNodes) + "scheduler:\n  max_array_size: 1001\n");
  ASSERT_TRUE(slurm.ok()) << slurm.status().ToString();
  EXPECT_EQ(slurm->max_array_size, 1001u);
  EXPECT_THAT(ErrorOf(std::string(kFourNodes) + "scheduler:\n  max_array_size: 4000002\n"),
              ::testing::HasSubstr("cluster.yaml:6: scheduler.max_array_size"));
  EXPECT_THAT(ErrorOf(std::string(kFourNodes) + "scheduler:\n  max_array_size: 0\n"),
              ::testing::HasSubstr("cluster.yaml:6: scheduler.max_array_size"));
}

TEST(SchedulerConfig, KillInvalidDependIsOffByDefault) {
  Result<ClusterConfig> off = Parse(kFourNodes);
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->kill_invalid_depend);
  Result<ClusterConfig> on =
      Parse(std::string(kFourNodes) + "scheduler:\n  kill_invalid_depend: true\n");
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(on->kill_invalid_depend);
  EXPECT_THAT(ErrorOf(std::string(kFourNodes) + "scheduler:\n  kill_invalid_depend: maybe\n"),
              ::testing::HasSubstr("cluster.yaml:6: scheduler.kill_invalid_depend"));
}

// Issue 27: what a user may submit. Slurm's defaults (names of 1024 bytes, 4 MB scripts,
// MaxJobCount 10000, associations enforced), each key range-checked with its place named.
TEST(SchedulerConfig, SubmitLimitsHaveSlurmsDefaultsAndAreRangeChecked) {
  Result<ClusterConfig> def = Parse(kFourNodes);
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  const SubmitLimits& d = def->submit_limits;
  EXPECT_TRUE(d.enforce_associations);
  EXPECT_TRUE(d.default_account_open);
  EXPECT_EQ(d.max_name_length, 1024u);
  EXPECT_EQ(d.max_script_size, 4u << 20);
  EXPECT_EQ(d.max_env_size, 2u << 20);
  EXPECT_EQ(d.max_job_count, 10000u);
  EXPECT_EQ(d.max_submit_jobs, kUnlimited);

  Result<ClusterConfig> set = Parse(std::string(kFourNodes) +
                                    "scheduler:\n  accounting_storage_enforce: none\n"
                                    "  max_name_length: 64\n  max_script_size: 1000\n"
                                    "  max_env_size: 5000\n  max_job_count: 3\n"
                                    "  max_submit_jobs: 2\n");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  const SubmitLimits& l = set->submit_limits;
  EXPECT_FALSE(l.enforce_associations);
  EXPECT_EQ(l.max_name_length, 64u);
  EXPECT_EQ(l.max_script_size, 1000u);
  EXPECT_EQ(l.max_env_size, 5000u);
  EXPECT_EQ(l.max_job_count, 3u);
  EXPECT_EQ(l.max_submit_jobs, 2);

  EXPECT_THAT(ErrorOf(std::string(kFourNodes) + "scheduler:\n  accounting_storage_enforce: qos\n"),
              StartsWith("cluster.yaml:6: scheduler.accounting_storage_enforce: 'qos' is not one "
                         "of associations|none"));
  EXPECT_THAT(ErrorOf(std::string(kFourNodes) + "scheduler:\n  max_job_count: 0\n"),
              StartsWith("cluster.yaml:6: scheduler.max_job_count: 0 is out of range"));
  EXPECT_THAT(ErrorOf(std::string(kFourNodes) + "scheduler:\n  max_script_size: 4M\n"),
              StartsWith("cluster.yaml:6: scheduler.max_script_size: '4M' is not an integer"));
}

// Accounts or users in the file close the account "default" to users without an association.
TEST(SchedulerConfig, TheDefaultAccountIsOpenOnlyWithoutAccountsOrUsers) {
  Result<ClusterConfig> accounts =
      Parse(std::string(kFourNodes) + "accounts:\n  - {name: physics}\n");
  ASSERT_TRUE(accounts.ok()) << accounts.status().ToString();
  EXPECT_FALSE(accounts->submit_limits.default_account_open);
  Result<ClusterConfig> users =
      Parse(std::string(kFourNodes) + "users:\n  - {name: alice}\n");
  ASSERT_TRUE(users.ok()) << users.status().ToString();
  EXPECT_FALSE(users->submit_limits.default_account_open);
}

}  // namespace
}  // namespace lockstep::config
