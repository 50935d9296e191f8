// End to end: MPI through srun (docs/mpi.md). Open MPI programs built with Debian's mpicc run as
// an ordinary user's step with --mpi=pmix, wired up by the agents' PMIx servers, their fences
// gathered across nodes through lockstepd; srun's --mpi=list, unknown types and SLURM_MPI_TYPE;
// the PMIx server's directory and its check of who connects.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

using namespace std::chrono_literals;
constexpr int kNobody = 65534;

// A ring: each rank sends its number to the next and receives the previous one's.
constexpr const char* kMpiHello = R"(#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, got = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* node = getenv("SLURMD_NODENAME");
  MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size,
               0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  printf("rank %d of %d on %s got token from rank %d\n", rank, size, node ? node : "?", got);
  MPI_Finalize();
  return 0;
}
)";

// A PMIx client alone: connects with the variables it was given and says how that went.
constexpr const char* kPmixClient = R"(#include <pmix.h>
#include <stdio.h>
int main(void) {
  pmix_proc_t me;
  pmix_status_t rc = PMIx_Init(&me, NULL, 0);
  if (rc != PMIX_SUCCESS) {
    printf("refused: %s\n", PMIx_Error_string(rc));
    return 1;
  }
  printf("connected as %s rank %u\n", me.nspace, me.rank);
  PMIx_Finalize(NULL, 0);
  return 0;
}
)";

// A PMI-2 program (Slurm's libpmi2, as MPICH's PMI-2 clients): each rank puts a card, fences,
// and reads the next rank's.
constexpr const char* kPmi2Ring = R"(#include <slurm/pmi2.h>
#include <stdio.h>
int main(void) {
  int spawned, size, rank, appnum, len = 0, found = 0;
  if (PMI2_Init(&spawned, &size, &rank, &appnum) != PMI2_SUCCESS) return 1;
  char key[64], value[PMI2_MAX_VALLEN], jobid[64], map[PMI2_MAX_VALLEN];
  if (PMI2_Job_GetId(jobid, sizeof jobid) != PMI2_SUCCESS) return 2;
  snprintf(key, sizeof key, "card-%d", rank);
  snprintf(value, sizeof value, "card;of %d", rank);
  if (PMI2_KVS_Put(key, value) != PMI2_SUCCESS || PMI2_KVS_Fence() != PMI2_SUCCESS) return 3;
  snprintf(key, sizeof key, "card-%d", (rank + 1) % size);
  if (PMI2_KVS_Get(jobid, PMI2_ID_NULL, key, value, sizeof value, &len) != PMI2_SUCCESS) return 4;
  if (PMI2_Info_GetJobAttr("PMI_process_mapping", map, sizeof map, &found) != PMI2_SUCCESS) return 5;
  printf("rank %d of %d read '%s' map %s\n", rank, size, value, found ? map : "none");
  return PMI2_Finalize() == PMI2_SUCCESS ? 0 : 6;
}
)";

// A directory every user may read and enter, for the programs the steps run.
class ProgramDir {
 public:
  ProgramDir() {
    char tmpl[] = "/tmp/lockstep-mpi-XXXXXX";
    path_ = ::mkdtemp(tmpl);
    ::chmod(path_.c_str(), 0755);
  }
  ~ProgramDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  // Compiles `source` into an executable here with `compiler` (a shell command line); its
  // compiler's output when it failed, else "".
  std::string Build(const std::string& name, const char* source, const std::string& compiler,
                    const std::string& libs = "") {
    std::ofstream(path_ + "/" + name + ".c") << source;
    const std::string cmd = "cd " + path_ + " && " + compiler + " -o " + name + " " + name +
                            ".c " + libs + " > " + name + ".log 2>&1";
    if (std::system(cmd.c_str()) == 0) return "";
    std::ifstream log(path_ + "/" + name + ".log");
    return std::string(std::istreambuf_iterator<char>(log), {}) + " (" + cmd + ")";
  }

 private:
  std::string path_;
};

ClusterOptions TwoNodes() {
  ClusterOptions o;
  o.nodes = 2;
  o.gpus_per_node = 0;
  o.cpus_per_node = 4;
  return o;
}

// The ring's lines: rank -> (node, the rank it got its token from).
std::map<int, std::pair<std::string, int>> RingLines(const std::string& out) {
  std::map<int, std::pair<std::string, int>> ranks;
  static const std::regex line(R"(rank (\d+) of 4 on (\S+) got token from rank (\d+))");
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line)) ranks[std::stoi(m[1])] = {m[2], std::stoi(m[3])};
  }
  return ranks;
}

void ExpectRing(const CommandResult& r) {
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto ranks = RingLines(r.out);
  ASSERT_EQ(ranks.size(), 4u) << r.out << r.err;
  std::map<std::string, int> per_node;
  for (const auto& [rank, seen] : ranks) {
    ++per_node[seen.first];
    EXPECT_EQ(seen.second, (rank + 3) % 4) << r.out;  // its token came from the previous rank
  }
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"node1", 2}, {"node2", 2}})) << r.out;
}

// Compiles the MPI ring with Debian's mpicc: the test fails (not skips) without it, since
// scripts/install-deps.sh installs it.
void BuildRing(ProgramDir& dir) {
  const std::string error = dir.Build("mpi_hello", kMpiHello, "mpicc");
  ASSERT_EQ(error, "") << "mpicc (openmpi-bin, libopenmpi-dev) must be installed";
}

// The PMI-2 ring's output, each rank having read the next one's card.
void ExpectPmi2Ring(const CommandResult& r, const std::string& map) {
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_NE(r.out.find("rank " + std::to_string(rank) + " of 4 read 'card;of " +
                         std::to_string((rank + 1) % 4) + "' map " + map + "\n"),
              std::string::npos)
        << r.out << r.err;
}

void BuildPmi2Ring(ProgramDir& dir) {
  ASSERT_EQ(dir.Build("pmi2_ring", kPmi2Ring, "cc", "-lpmi2"), "")
      << "Slurm's PMI-2 client library (libpmi2-0-dev) must be installed";
}

// lockstep up's shape: one agent serves both nodes; its one PMIx server serves the 4 ranks.
TEST(Mpi, PmixRingAcrossTwoNodesOfOneAgentAsAnOrdinaryUser) {
  ProgramDir programs;
  BuildRing(programs);
  Cluster c(TwoNodes());
  ASSERT_TRUE(c.Start());
  const CommandResult r = c.Run({"srun", "--mpi=pmix", "-N2", "-n4", programs.path() + "/mpi_hello"},
                                programs.path(), kNobody);
  ExpectRing(r);
  // pmix_v4 is pmix under its version's name; SLURM_MPI_TYPE is honoured like --mpi.
  ExpectRing(c.Run({"srun", "--mpi=pmix_v4", "-N2", "-n4", programs.path() + "/mpi_hello"},
                   programs.path(), kNobody));
  ExpectRing(c.Run({"srun", "-N2", "-n4", programs.path() + "/mpi_hello"}, programs.path(),
                   kNobody, "", {{"SLURM_MPI_TYPE", "pmix"}}));
  // PMI-2: the agent's PMI-2 server; one host of 4 ranks to the MPI library.
  BuildPmi2Ring(programs);
  ExpectPmi2Ring(c.Run({"srun", "--mpi=pmi2", "-N2", "-n4", programs.path() + "/pmi2_ring"},
                       programs.path(), kNobody),
                 "(vector,(0,1,4))");
}

// The issue's shape: two agents, two nodes on this machine; Open MPI sees two hosts and talks
// between them over TCP (the loopback interface here: the only one a test machine surely has).
TEST(Mpi, PmixRingAcrossTwoAgents) {
  ProgramDir programs;
  BuildRing(programs);
  Cluster c(TwoNodes());
  c.Start(/*with_agent=*/false);
  c.StartNodeAgent("node1", {});
  c.StartNodeAgent("node2", {});
  ASSERT_TRUE(c.WaitNodes("idle", 2));
  const CommandResult r =
      c.Run({"srun", "--mpi=pmix", "-N2", "-n4", programs.path() + "/mpi_hello"}, programs.path(),
            kNobody, "", {{"OMPI_MCA_btl_tcp_if_include", "lo"}, {"OMPI_MCA_btl", "self,tcp"}});
  ExpectRing(r);
  // PMI-2 across the two agents: two hosts of 2 ranks, the fence through lockstepd.
  BuildPmi2Ring(programs);
  ExpectPmi2Ring(c.Run({"srun", "--mpi=pmi2", "-N2", "-n4", programs.path() + "/pmi2_ring"},
                       programs.path(), kNobody),
                 "(vector,(0,2,2))");
}

TEST(Mpi, SrunListsTheMpiTypesAndRefusesAnUnknownOne) {
  Cluster c(TwoNodes());
  ASSERT_TRUE(c.Start());
  const CommandResult list = c.Run({"srun", "--mpi=list"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out,
            "MPI plugin types are...\n\tnone\n\tpmi2\n\tpmix\n"
            "specific pmix plugin versions available: pmix_v4\n");
  const CommandResult bad = c.Run({"srun", "--mpi=openmpi", "-n1", "true"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err,
            "srun: error: Couldn't find the specified plugin name for mpi/openmpi looking at all "
            "files\nsrun: error: cannot find mpi plugin for mpi/openmpi\nsrun: error: MPI: Cannot "
            "create context for mpi/openmpi\nsrun: error: MPI: Unable to load any plugin\n"
            "srun: error: Invalid MPI type 'openmpi', --mpi=list for acceptable types\n");
  const CommandResult bad_env = c.Run({"srun", "-n1", "true"}, "", -1, "", {{"SLURM_MPI_TYPE", "x"}});
  EXPECT_EQ(bad_env.exit_code, 1);
  EXPECT_NE(bad_env.err.find("Invalid MPI type 'x'"), std::string::npos) << bad_env.err;
  // Nothing was submitted for them.
  EXPECT_EQ(c.Get("/api/v1/jobs?all=1")["jobs"].size(), 0u);
  // --mpi=none (and --mpi over SLURM_MPI_TYPE): today's steps, no PMIx server variables.
  const CommandResult none = c.Run({"srun", "--mpi=none", "-n1", "sh", "-c",
                                    "echo type=${SLURM_MPI_TYPE:-unset} ns=${PMIX_NAMESPACE:-unset}"},
                                   "", -1, "", {{"SLURM_MPI_TYPE", "pmix"}});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out, "type=none ns=unset\n");
  const CommandResult pmix = c.Run({"srun", "--mpi=pmix", "-n1", "sh", "-c",
                                    "echo type=$SLURM_MPI_TYPE ns=$PMIX_NAMESPACE"});
  EXPECT_EQ(pmix.exit_code, 0) << pmix.err;
  EXPECT_TRUE(std::regex_match(pmix.out, std::regex("type=pmix ns=lockstep\\.\\d+\\.0\n")))
      << pmix.out;
}

// Files under `dir` that a user could change: writable by others, or not root's.
std::vector<std::string> NotRootsAlone(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    struct stat st {};
    if (::lstat(e.path().c_str(), &st) != 0 || (st.st_mode & S_IWOTH) != 0 || st.st_uid != 0)
      found.push_back(e.path().string());
  }
  return found;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs `program` as `uid` with exactly the environment `env` (KEY=VALUE lines); its output.
CommandResult RunAs(int uid, const std::string& program, const std::string& env) {
  int out[2];
  EXPECT_EQ(::pipe(out), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    std::vector<std::string> vars;
    std::istringstream in(env);
    for (std::string l; std::getline(in, l);) vars.push_back(l);
    std::vector<char*> envp;
    for (std::string& v : vars) envp.push_back(v.data());
    envp.push_back(nullptr);
    if (::setgid(uid) != 0 || ::setuid(uid) != 0) ::_exit(126);
    ::alarm(30);  // a client that hangs instead of being refused fails the test, not hangs it
    char* argv[] = {const_cast<char*>(program.c_str()), nullptr};
    ::execve(argv[0], argv, envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  CommandResult r;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) r.out.append(buf, n);
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The step's task (nobody's) connects; another user's process with the very same variables
// (namespace, rank, the server's address) is refused by the server; nothing in the server's
// directory is writable by others.
TEST(Mpi, OnlyTheStepsUserConnectsAsItsTasks) {
  ProgramDir programs;
  ASSERT_EQ(programs.Build("pmix_client", kPmixClient, "cc $(pkg-config --cflags pmix)",
                           "$(pkg-config --libs pmix)"),
            "");
  Cluster c(TwoNodes());
  ASSERT_TRUE(c.Start());
  const std::string share = programs.path() + "/share";
  ASSERT_EQ(::mkdir(share.c_str(), 0777), 0);
  ::chmod(share.c_str(), 0777);
  // The task leaves its variables for the test, waits for its go, then connects itself.
  const std::string script = "env | grep '^PMIX_' > " + share + "/env.tmp && mv " + share +
                             "/env.tmp " + share + "/env; while [ ! -e " + share +
                             "/go ]; do sleep 0.1; done; exec " + programs.path() + "/pmix_client";
  const CommandResult submitted =
      c.Run({"sbatch", "--parsable", "-N1", "-n1", "--wrap",
             "srun --mpi=pmix -n1 sh -c \"" + script + "\""},
            share, kNobody);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(share + "/env"); }, 30s))
      << c.ReadFile(c.dir() + "/agent.log");
  const std::string env = Slurp(share + "/env");
  ASSERT_NE(env.find("PMIX_NAMESPACE=lockstep."), std::string::npos) << env;
  // The server's directory, while the step runs: nobody else may write there.
  std::vector<std::string> dirs;
  for (const auto& e : std::filesystem::recursive_directory_iterator(c.dir()))
    if (e.is_directory() && e.path().filename() == "pmix") dirs.push_back(e.path().string());
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_EQ(NotRootsAlone(dirs.front()), std::vector<std::string>{});
  struct stat st {};
  ASSERT_EQ(::stat(dirs.front().c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  // Another user with the task's variables: refused.
  const CommandResult impostor = RunAs(4242, programs.path() + "/pmix_client", env);
  EXPECT_NE(impostor.exit_code, 0) << impostor.out;
  EXPECT_EQ(impostor.out.find("connected"), std::string::npos) << impostor.out;
  // The task itself connects.
  std::ofstream(share + "/go") << "";
  const nlohmann::json jobs = c.Get("/api/v1/jobs?all=1");
  ASSERT_EQ(jobs["jobs"].size(), 1u);
  const unsigned long long id = jobs["jobs"][0]["job_id"].get<unsigned long long>();
  const nlohmann::json job = c.WaitJob(id, 30);
  EXPECT_EQ(job["state"], "COMPLETED") << job.dump();
  const std::string out = c.ReadFile(share + "/slurm-" + std::to_string(id) + ".out");
  EXPECT_NE(out.find("connected as lockstep." + std::to_string(id) + ".0 rank 0"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace lockstep::testing
