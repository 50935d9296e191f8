// Observability of the scheduler's policy end to end (docs/observability.md): sshare's
// fair-share tree against the factor sprio weighs, the QoS list, and the health checks' own
// results in /metrics, read by Prometheus' parser, from a real lockstepd, agent and CLI.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

// sshare -P lines, by "account/user" (user "" for an account's line): field -> value.
std::map<std::string, std::map<std::string, std::string>> SshareRows(const std::string& out) {
  std::map<std::string, std::map<std::string, std::string>> rows;
  std::istringstream in(out);
  std::vector<std::string> header;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream fs(line);
    for (std::string f; std::getline(fs, f, '|');) fields.push_back(f);
    if (line.ends_with("|")) fields.push_back("");
    if (header.empty()) {
      header = fields;
      continue;
    }
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    std::string account = row["Account"];
    account.erase(0, account.find_first_not_of(' '));
    rows[account + "/" + row["User"]] = row;
  }
  return rows;
}

// sprio's FAIRSHARE column of each pending job, by job id.
std::map<unsigned long long, long> SprioFairshare(Cluster& c) {
  CommandResult r = c.Run({"sprio", "-h", "-o", "%i %F"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<unsigned long long, long> out;
  std::istringstream in(r.out);
  unsigned long long id;
  long fs;
  while (in >> id >> fs) out[id] = fs;
  return out;
}

constexpr char kPolicyYaml[] =
    "accounts:\n"
    "  - {name: physics, shares: 3}\n"
    "  - {name: biology, shares: 1}\n"
    "users:\n"
    "  - {name: root, account: physics}\n"
    "  - {name: root, account: biology}\n"
    "  - {name: alice, account: physics}\n"
    "  - {name: bob, account: biology}\n"
    "qos:\n"
    "  - {name: normal}\n"
    "  - {name: high, priority: 100, max_wall: 2-00:00:00, preempt: [normal], "
    "preempt_mode: requeue, max_tres_per_user: {gpu: 4}}\n"
    "scheduler:\n"
    "  weights: {fairshare: 10000}\n";

TEST(ObservePolicy, SshareShowsTheTreeAndTheFactorSprioWeighs) {
  ClusterOptions o;
  o.extra_yaml = kPolicyYaml;
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  // Two jobs that wait for their begin time, one in each of root's accounts.
  const unsigned long long in_physics =
      Submit(c, {"-A", "physics", "--begin=now+3600", "--wrap", "true"});
  const unsigned long long in_biology =
      Submit(c, {"-A", "biology", "--begin=now+3600", "--wrap", "true"});
  std::map<unsigned long long, long> sprio;
  ASSERT_TRUE(WaitFor([&] {
    sprio = SprioFairshare(c);
    return sprio.count(in_physics) && sprio.count(in_biology);
  }, std::chrono::seconds(20)));

  CommandResult all = c.Run({"sshare", "-a", "-l", "-P"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  auto rows = SshareRows(all.out);
  // Fair Tree with no usage yet: every Level FS is infinite, so the two accounts tie, their
  // users are ranked as one list (Slurm's rule for tied sibling accounts), and all four tie at
  // the top (1.0). Issue 37: configuration order used to break the tie (biology's 0.5).
  EXPECT_EQ(rows["physics/"]["NormShares"], "0.750000") << all.out;
  EXPECT_EQ(rows["biology/"]["NormShares"], "0.250000") << all.out;
  EXPECT_EQ(rows["physics/"]["FairShare"], "") << "Fair Tree gives accounts no factor";
  EXPECT_EQ(rows["physics/root"]["FairShare"], "1.000000") << all.out;
  EXPECT_EQ(rows["physics/alice"]["FairShare"], "1.000000") << all.out;
  EXPECT_EQ(rows["biology/root"]["FairShare"], "1.000000") << all.out;
  EXPECT_EQ(rows["biology/bob"]["FairShare"], "1.000000") << all.out;
  EXPECT_EQ(rows["physics/root"]["RawShares"], "1");
  EXPECT_EQ(rows["physics/root"]["NormShares"], "0.500000");
  EXPECT_EQ(rows["physics/root"]["LevelFS"], "inf");
  EXPECT_EQ(rows["root/"]["EffectvUsage"], "1.000000");
  // sprio's FAIRSHARE is that factor times PriorityWeightFairshare.
  EXPECT_EQ(sprio[in_physics], std::lround(std::stod(rows["physics/root"]["FairShare"]) * 10000));
  EXPECT_EQ(sprio[in_biology], std::lround(std::stod(rows["biology/root"]["FairShare"]) * 10000));
  EXPECT_EQ(sprio[in_physics], 10000);
  EXPECT_EQ(sprio[in_biology], 10000);

  // Without -a: the tree and the caller's own lines; -u names whose; -A which accounts.
  auto mine = SshareRows(c.Run({"sshare", "-P"}).out);
  EXPECT_TRUE(mine.count("physics/root") && mine.count("physics/"));
  EXPECT_FALSE(mine.count("physics/alice"));
  auto bob = SshareRows(c.Run({"sshare", "-P", "-u", "bob", "-A", "biology"}).out);
  EXPECT_EQ(bob.size(), 2u);
  EXPECT_TRUE(bob.count("biology/bob"));
  CommandResult table = c.Run({"sshare", "-a"});
  EXPECT_TRUE(table.out.starts_with(
      "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  "
      "FairShare \n-------------------- ---------- "))
      << table.out;
  CommandResult bad = c.Run({"sshare", "--bogus"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("sshare: unrecognized option '--bogus'"), std::string::npos) << bad.err;

  // The QoS list the web view shows.
  const nlohmann::json qos = c.Get("/api/v1/qos")["qos"];
  ASSERT_EQ(qos.size(), 2u) << qos;
  EXPECT_EQ(qos[1]["name"], "high");
  EXPECT_EQ(qos[1]["max_wall"], 2 * 86400);
  EXPECT_EQ(qos[1]["preempt"], nlohmann::json::array({"normal"}));
  EXPECT_EQ(qos[1]["preempt_mode"], "REQUEUE");
  EXPECT_EQ(qos[1]["max_tres_per_user"], "gres/gpu=4");
  EXPECT_EQ(qos[0]["max_wall"], nullptr) << "unlimited";
}

// The value of `name`{labels} in Prometheus' reading of `text` (NaN when absent).
double Sample(const Cluster& c, const std::string& text, const std::string& name,
              const nlohmann::json& labels) {
  const std::string file = c.dir() + "/health-scrape.txt";
  std::ofstream(file) << text;
  const std::string cmd = "/usr/bin/python3 " LOCKSTEP_SOURCE_DIR_FOR_TEST
                          "/tests/metrics/parse_exposition.py < " + file;
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[65536];
  for (std::size_t n; p && (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(p ? ::pclose(p) : -1, 0) << "the Prometheus parser rejected:\n" << text;
  const nlohmann::json f = nlohmann::json::parse(out, nullptr, false);
  if (f.is_discarded() || !f.contains(name)) return NAN;
  for (const nlohmann::json& s : f[name]["samples"])
    if (s[0] == name && s[1] == labels) return s[2].get<double>();
  return NAN;
}

TEST(ObservePolicy, HealthResultsInMetrics) {
  char tmpl[] = "/tmp/lockstep-obs-health-XXXXXX";
  const std::string files = ::mkdtemp(tmpl);
  ::chmod(files.c_str(), 0755);
  // Critical (exit 2) with the text of health-NODE while that file exists, else ok.
  const std::string program = files + "/check.sh";
  std::ofstream(program) << "#!/bin/sh\nf=" << files << "/health-$SLURMD_NODENAME\n"
                         << "if [ -f \"$f\" ]; then cat \"$f\"; exit 2; fi\necho fine\nexit 0\n";
  ::chmod(program.c_str(), 0755);
  ClusterOptions o;
  o.extra_yaml = "health:\n  interval: 1\n  timeout: 5\n  program: " + program + "\n";
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  auto metric = [&](const std::string& name, const nlohmann::json& labels) {
    CommandResult r = c.Run({"metrics", "nodes"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Sample(c, r.out, name, labels);
  };
  const nlohmann::json node1_program = {{"node", "node1"}, {"check", "program"}};
  ASSERT_TRUE(WaitFor([&] { return metric("lockstep_health_check_status", node1_program) == 0; },
                      std::chrono::seconds(20)));
  std::ofstream(files + "/health-node1") << "disk /scratch full\n";
  ASSERT_TRUE(WaitFor([&] { return metric("lockstep_health_drained", {{"node", "node1"}}) == 1; },
                      std::chrono::seconds(20)));
  EXPECT_EQ(metric("lockstep_health_check_status", node1_program), 2);
  EXPECT_EQ(metric("lockstep_health_drains", {{"node", "node1"}}), 1);
  std::filesystem::remove(files + "/health-node1");
  ASSERT_TRUE(WaitFor([&] { return metric("lockstep_health_drained", {{"node", "node1"}}) == 0; },
                      std::chrono::seconds(20)));
  // One scrape, read as a whole: the results agree with each other.
  CommandResult r = c.Run({"metrics", "nodes"});
  for (const char* node : {"node1", "node2"}) {
    const nlohmann::json n = {{"node", node}};
    const nlohmann::json program_of = {{"node", node}, {"check", "program"}};
    EXPECT_EQ(Sample(c, r.out, "lockstep_health_check_status", program_of), 0) << node;
    const double rounds = Sample(c, r.out, "lockstep_health_rounds", n);
    EXPECT_GE(rounds, 1) << node;
    // Every round runs the program; no agent here reports events between rounds.
    EXPECT_EQ(Sample(c, r.out, "lockstep_health_check_runs", program_of), rounds) << node;
    EXPECT_EQ(Sample(c, r.out, "lockstep_health_reports", n), rounds) << node;
  }
  EXPECT_EQ(Sample(c, r.out, "lockstep_health_drains", {{"node", "node1"}}), 1);
  EXPECT_EQ(Sample(c, r.out, "lockstep_health_drains", {{"node", "node2"}}), 0);
  std::filesystem::remove_all(files);
}

}  // namespace
}  // namespace lockstep::testing
