// Fencing of the state store (docs/kubernetes.md, "The state store on a shared volume"): a
// leader cut off from the apiserver stops committing and exits before its lease can pass to the
// standby, which shares its state directory (the RWX volume) and then leads with every job the
// old leader acknowledged. Against the real apiserver of kubernetes_test.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/kubernetes_test_fixture.h"
#include "tests/partitionable_proxy.h"

namespace lockstep::testing {
namespace {

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string LeaseHolder(KubeClient& k, const std::string& ns, const std::string& name) {
  Result<Json> l =
      k.Get("/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases/" + name);
  if (!l.ok()) return "";
  return (*l)["spec"].value("holderIdentity", "");
}

TEST_F(KubernetesBackendTest, APartitionedLeaderStopsWritingBeforeTheStandbyLeads) {
  const std::string ns = "kbe-fence";
  CreateNode(ns, "kbe-fence-1", 8);
  const std::string elect = "  leader_elect: true\n  lease_name: kbe-fence\nstore_mode: exclusive\n";
  ClusterOptions o;
  o.kill_wait_s = 1;
  o.daemon_args = {"--log-level", "debug"};

  // The leader reaches the apiserver through a proxy that the test partitions.
  const std::string server = kc().config().server;  // https://127.0.0.1:PORT
  const std::string api_port = server.substr(server.rfind(':') + 1);
  PartitionableProxy proxy(std::stoi(api_port));
  auto leader = std::make_unique<Cluster>(o);
  const std::string kubeconfig = leader->dir() + "/kubeconfig-through-proxy";
  std::ofstream(kubeconfig) << Replace(leader->ReadFile(run_dir_ + "/kubeconfig"),
                                       "127.0.0.1:" + api_port,
                                       "127.0.0.1:" + std::to_string(proxy.port()));
  WriteClusterYaml(*leader, ns, elect);
  const std::string yaml = Replace(leader->ReadFile(leader->dir() + "/cluster.yaml"),
                                   run_dir_ + "/kubeconfig", kubeconfig);
  std::ofstream(leader->dir() + "/cluster.yaml") << yaml;
  leader->Start(/*with_agent=*/false);
  ASSERT_TRUE(leader->WaitNodes("idle", 1, 30)) << DaemonLog(*leader);
  const std::string holder = LeaseHolder(kc(), ns, "kbe-fence");
  ASSERT_FALSE(holder.empty());

  // The standby: the same state directory (the shared volume), a socket and log of its own.
  ClusterOptions so = o;
  so.state_dir = leader->dir();
  auto standby = std::make_unique<Cluster>(so);
  WriteClusterYaml(*standby, ns, elect);
  standby->Start(/*with_agent=*/false);
  ASSERT_TRUE(WaitFor([&] { return Contains(DaemonLog(*standby), "waiting to lead"); }, kWait));

  std::vector<unsigned long long> acknowledged;
  for (int i = 0; i < 3; ++i) {
    acknowledged.push_back(Submit(*leader, {"--wrap", "true"}));
    ASSERT_NE(acknowledged.back(), 0u);
  }

  // Cut off: renewals hang. Users keep submitting to the leader until it stops answering.
  proxy.Partition();
  std::atomic<bool> stop{false};
  std::mutex mu;
  int refused = 0;
  std::thread submitter([&] {
    while (!stop) {
      CommandResult r = leader->Run({"sbatch", "--parsable", "--wrap", "true"});
      std::lock_guard<std::mutex> lock(mu);
      if (r.exit_code == 0)
        acknowledged.push_back(std::strtoull(r.out.c_str(), nullptr, 10));
      else
        ++refused;
    }
  });
  std::optional<int> exited;
  const bool gone = WaitFor([&] { return (exited = leader->DaemonExited()).has_value(); },
                            std::chrono::seconds(40), milliseconds(10));
  // The lease is still the old leader's when it is gone: it stopped before anyone could lead.
  const std::string holder_at_exit = LeaseHolder(kc(), ns, "kbe-fence");
  stop = true;
  submitter.join();
  ASSERT_TRUE(gone) << DaemonLog(*leader);
  EXPECT_EQ(holder_at_exit, holder);
  EXPECT_TRUE(WIFEXITED(*exited) && WEXITSTATUS(*exited) == 1) << *exited;
  EXPECT_TRUE(Contains(DaemonLog(*leader), "lost the leadership")) << DaemonLog(*leader);
  EXPECT_GT(refused, 0);  // the submissions after it were not acknowledged

  // The standby leads once the lease has expired, with every acknowledged job.
  ASSERT_TRUE(WaitFor(
      [&] {
        const std::string now = LeaseHolder(kc(), ns, "kbe-fence");
        return !now.empty() && now != holder;
      },
      std::chrono::seconds(40)))
      << DaemonLog(*standby);
  ASSERT_TRUE(WaitFor([&] { return standby->Job(acknowledged.front()).contains("job_id"); },
                      kWait))
      << DaemonLog(*standby);
  std::fprintf(stderr, "%zu jobs acknowledged (%zu after the partition), %d refused\n",
               acknowledged.size(), acknowledged.size() - 3, refused);
  for (unsigned long long id : acknowledged) {
    const Json job = standby->Job(id);
    EXPECT_EQ(job.value("job_id", 0ull), id) << job.dump();
  }
}

}  // namespace
}  // namespace lockstep::testing
