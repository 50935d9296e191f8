// End to end: every option spelling of Slurm 22.05's query and control commands (the tables of
// bench/peers/options, which bench/peers/options_side_by_side.sh also runs against the Slurm
// peer) through the real CLI against lockstepd and an agent: each is accepted (exit 0, no option
// error), and what lockstep honours does what Slurm's does. And the golden --help of every Slurm
// command (tests/golden/help/<command>.txt; LOCKSTEP_UPDATE_GOLDEN=1 rewrites them after a
// deliberate change of the help text).
// sbatch, srun and salloc run through their parser in src/jobspec/slurm_option_table_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;

const char* const kCommands[] = {"sbatch",  "srun",    "salloc",   "squeue",   "sinfo",
                                 "sacct",   "scancel", "scontrol", "sprio",    "sdiag",
                                 "sshare",  "sstat",   "sattach",  "sreport",  "sacctmgr",
                                 "sbcast"};

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SlurmHelp, EveryCommandPrintsItsGoldenHelp) {
  Cluster c;  // not started: --help asks no daemon
  for (const char* command : kCommands) {
    SCOPED_TRACE(command);
    CommandResult r = c.Run({command, "--help"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    fs::path golden = fs::path(LOCKSTEP_GOLDEN_HELP_DIR) / (std::string(command) + ".txt");
    if (std::getenv("LOCKSTEP_UPDATE_GOLDEN")) {
      std::ofstream(golden) << r.out;
      continue;
    }
    ASSERT_TRUE(fs::exists(golden))
        << "missing " << golden << " (LOCKSTEP_UPDATE_GOLDEN=1 writes it)";
    EXPECT_EQ(r.out, ReadAll(golden)) << "the help of " << command << " changed: review it, then "
                                      << "LOCKSTEP_UPDATE_GOLDEN=1 rewrites " << golden;
  }
}

TEST(SlurmHelp, VersionIsSlurmsReleaseThenLockstepsOnEveryCommand) {
  Cluster c;
  for (const char* command : kCommands) {
    CommandResult r = c.Run({command, "-V"});
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_EQ(r.out.rfind("slurm 22.05.", 0), 0u) << command << ": " << r.out;
  }
}

struct Expect {
  std::vector<std::string> args;
  int exit_code;
  std::string out, err;  // exactly
};

class SlurmOptionTables : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ClusterOptions o;
    o.nodes = 4;
    o.extra_yaml = "partitions:\n  - name: gpu\n    nodes: ALL\n    default: true\n";
    cluster_ = new Cluster(o);
    ASSERT_TRUE(cluster_->Start());
    held_ = Submit(*cluster_, {"--hold", "-J", "optcheck", "-o", "/dev/null", "--wrap", "true"});
    ASSERT_NE(held_, 0u);
    user_ = UserName();
    ASSERT_NE(user_, "");
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  // The words of a table line, placeholders filled (bench/peers/options/README.md).
  static std::vector<std::string> Words(const std::string& line, unsigned long long job) {
    const std::map<std::string, std::string> values = {
        {"{partition}", "gpu"},
        {"{node}", "node1"},
        {"{node2}", "node4"},
        {"{user}", user_},
        {"{account}", user_},
        {"{qos}", "normal"},
        {"{cluster}", "lockstep"},
        {"{dir}", cluster_->work()},
        {"{file}", cluster_->work() + "/optcheck.txt"},
        {"{feature}", "optcheck"},
        {"{license}", "optcheck"},
        {"{reservation}", "optcheck"},
        {"{wckey}", "none"},
        {"{gid}", "0"},
        {"{job}", std::to_string(job)},
    };
    std::vector<std::string> words;
    std::istringstream in(line);
    for (std::string w; in >> w;) {
      for (const auto& [key, value] : values)
        for (std::size_t at = w.find(key); at != std::string::npos; at = w.find(key))
          w.replace(at, key.size(), value);
      words.push_back(w);
    }
    return words;
  }

  static std::string UserName() {
    CommandResult r = cluster_->Run({"scontrol", "show", "job", std::to_string(held_)});
    std::size_t at = r.out.find("UserId=");
    return at == std::string::npos ? "" : r.out.substr(at + 7, r.out.find('(', at) - at - 7);
  }

  // Runs every line of `command`'s table with `tail` after it; each must be accepted.
  void RunTable(const std::string& command, const std::vector<std::string>& tail) {
    std::ifstream in(std::string(LOCKSTEP_OPTIONS_DIR) + "/" + command + ".txt");
    ASSERT_TRUE(in);
    int lines = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      ++lines;
      const std::string first = line.substr(0, line.find_first_of(" ="));
      // squeue's and sinfo's -i report until stopped (the side by side runs them with a timeout).
      const bool iterate = command == "squeue" || command == "sinfo";
      if (iterate && (first == "-i" || first == "--iterate")) continue;
      unsigned long long job = held_;
      if (command == "scancel")
        job = Submit(*cluster_, {"--hold", "-J", "optcheck", "--wrap", "true"});
      std::vector<std::string> args = {command};
      for (const std::string& w : Words(line, job)) args.push_back(w);
      for (const std::string& w : tail) args.push_back(w == "{job}" ? std::to_string(job) : w);
      CommandResult r = cluster_->Run(args);
      EXPECT_EQ(r.exit_code, 0) << ::testing::PrintToString(args) << "\n" << r.out << r.err;
      EXPECT_EQ(r.err.find("unrecognized option"), std::string::npos) << line;
    }
    EXPECT_GT(lines, 10);
  }

  static Cluster* cluster_;
  static unsigned long long held_;  // a held job named optcheck: {job}
  static std::string user_;         // the test's user, as lockstepd names it: {user}
};
Cluster* SlurmOptionTables::cluster_ = nullptr;
unsigned long long SlurmOptionTables::held_ = 0;
std::string SlurmOptionTables::user_;

TEST_F(SlurmOptionTables, SqueueAcceptsEverySpellingOfSlurm) {
  RunTable("squeue", {});
}
TEST_F(SlurmOptionTables, SinfoAcceptsEverySpellingOfSlurm) {
  RunTable("sinfo", {});
}
TEST_F(SlurmOptionTables, SacctAcceptsEverySpellingOfSlurm) {
  RunTable("sacct", {});
}
TEST_F(SlurmOptionTables, SprioAcceptsEverySpellingOfSlurm) {
  RunTable("sprio", {});
}
TEST_F(SlurmOptionTables, ScontrolAcceptsEverySpellingOfSlurm) {
  RunTable("scontrol", {"show", "job", "{job}"});
}
TEST_F(SlurmOptionTables, ScancelAcceptsEverySpellingOfSlurm) {
  RunTable("scancel", {"{job}"});
}

// What the accepted options do where lockstep honours them, as Slurm's commands do.
TEST_F(SlurmOptionTables, HonouredOptionsDoWhatSlurmsDo) {
  Cluster& c = *cluster_;
  const std::string id = std::to_string(held_);
  EXPECT_EQ(c.Run({"squeue", "-h", "-o", "%i", "-n", "optcheck"}).out.find(id + "\n"), 0u);
  EXPECT_EQ(c.Run({"squeue", "-h", "-o", "%i", "--name=nothing"}).out, "");
  EXPECT_EQ(c.Run({"squeue", "-h", "-O", "JobID:10", "-j", id}).out,
            id + std::string(10 - id.size(), ' ') + "\n");
  EXPECT_EQ(c.Run({"sinfo", "-h", "-o", "%P", "-p", "gpu"}).out, "gpu*\n");
  EXPECT_EQ(c.Run({"sinfo", "-h", "-N", "-o", "%N", "-n", "node2"}).out, "node2\n");
  // sprio leaves held jobs out, and -w prints the cluster's weights, as Slurm's.
  CommandResult prio = c.Run({"sprio", "-h", "-o", "%i"});
  EXPECT_EQ(prio.exit_code, 0) << prio.err;
  EXPECT_EQ(prio.out.find(id), std::string::npos) << prio.out;
  EXPECT_NE(c.Run({"sprio", "-w"}).out.find("Weights"), std::string::npos);
  CommandResult oneline = c.Run({"scontrol", "show", "job", id, "-o"});
  EXPECT_EQ(std::count(oneline.out.begin(), oneline.out.end(), '\n'), 1) << oneline.out;
  // scancel -s KILL cancels a pending job, as Slurm's does.
  unsigned long long victim = Submit(c, {"--hold", "--wrap", "true"});
  CommandResult killed = c.Run({"scancel", "-s", "KILL", std::to_string(victim)});
  EXPECT_EQ(killed.exit_code, 0) << killed.err;
  EXPECT_EQ(c.Job(victim)["state"], "CANCELLED");
}

// Names the cluster does not define are refused in Slurm's words and exit code.
TEST_F(SlurmOptionTables, UndefinedReservationIsRefusedAsSlurmDoes) {
  CommandResult r = cluster_->Run({"sbatch", "--reservation=optcheck", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "sbatch: error: Batch job submission failed: Requested reservation is invalid\n");
  r = cluster_->Run({"salloc", "-L", "optcheck", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "salloc: error: Job submit/allocate failed: Invalid license specification\n");
}

// Unknown jobs, nodes, partitions and verbs in scontrol's words and exit codes (Slurm 22.05's,
// which scripts match on).
TEST_F(SlurmOptionTables, ScontrolNamesUnknownThingsAsSlurmDoes) {
  const Expect cases[] = {
      {{"scontrol", "show", "job", "999999"},
       1,
       "",
       "slurm_load_jobs error: Invalid job id specified\n"},
      {{"scontrol", "hold", "999999"},
       1,
       "",
       "Invalid job id specified for job 999999\nslurm_suspend error: Invalid job id specified\n"},
      {{"scontrol", "update", "JobId=999999", "TimeLimit=5"},
       1,
       "",
       "Invalid job id specified for job 999999\n"},
      {{"scontrol", "show", "node", "nosuch"}, 1, "Node nosuch not found\n", ""},
      {{"scontrol", "show", "partition", "nosuch"}, 1, "Partition nosuch not found\n", ""},
      {{"scontrol", "bogus"}, 1, "", "invalid keyword: bogus\n"},
  };
  for (const Expect& e : cases) {
    CommandResult r = cluster_->Run(e.args);
    const std::string label = ::testing::PrintToString(e.args);
    EXPECT_EQ(r.exit_code, e.exit_code) << label;
    EXPECT_EQ(r.out, e.out) << label;
    EXPECT_EQ(r.err, e.err) << label;
  }
}

// sinfo and squeue print an unknown format letter as text and say so, as Slurm 22.05's do.
TEST_F(SlurmOptionTables, UnknownFormatLettersAreWarnedNotFatal) {
  CommandResult r = cluster_->Run({"sinfo", "-h", "-o", "%P|%.5Q|%a"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "gpu*|%.5Q|up\n");
  EXPECT_EQ(r.err, "Invalid node format specification: Q\n");
}

}  // namespace
}  // namespace lockstep::testing
