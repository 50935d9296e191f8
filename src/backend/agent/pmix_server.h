// The agent's PMIx server (docs/mpi.md): one per agent process, over Debian's OpenPMIx
// (libpmix). Steps launched with `srun --mpi=pmix` get a namespace of their own,
// "lockstep.JOB.STEP", registered with the whole step's layout (every node and its ranks); each
// local task is registered as a client with its user's uid and gid, which the PMIx library
// checks when the task connects, and gets the variables of PMIx_server_setup_fork.
//
// Fences span nodes: when every local task of a step has called PMIx_Fence, the library hands
// this node's data to `fence_nb`; the server passes it to the agent (SendContribution), which
// sends it up to lockstepd; lockstepd gathers the blobs of all the step's nodes and sends the
// concatenation down, and the agent calls FenceDone. Only fences over the whole namespace are
// served (Open MPI's MPI_Init and MPI_Finalize are); direct modex is not, as fences collect
// every task's data.
//
// Thread-safety: every method may be called from any thread but the PMIx library's own (its
// callbacks only queue). Ownership: the agent owns it; its destructor finalizes the library.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace lockstep::agent {

// One node of a step: its ranks, and the agent serving it. Nodes one agent serves share its
// PMIx server and host: the MPI library sees them as one node (its local peers, shared memory).
struct MpiNode {
  std::string node;
  std::string agent;
  std::vector<int> ranks;  // ascending
};

// A step as the MPI library sees it, the same on every node's agent.
struct MpiStepLayout {
  std::uint64_t job = 0;
  std::int32_t step = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<MpiNode> nodes;  // every node of the step, in node order
  std::string mpi = "pmix";    // srun --mpi: "pmix" (pmix_server.h) or "pmi2" (pmi2_server.h)
  int size() const;
  std::string nspace() const;  // "lockstep.JOB.STEP"
};

// A host as the MPI library sees it: the step's nodes one agent serves (named by the first).
struct MpiHost {
  std::string name;
  std::vector<int> ranks;  // ascending
  bool local = false;      // this agent's
};
// The step's hosts in node order; `local_nodes`: the nodes this agent serves (pmix_info.cc).
std::vector<MpiHost> MpiHostsOf(const MpiStepLayout& layout,
                                const std::set<std::string>& local_nodes);

struct PmixServerOptions {
  // The server's own directory (its rendezvous files): created 0755, owned by the agent, so that
  // tasks of any user find the server but may write nothing there.
  std::string tmpdir;
  // The nodes this agent serves: their tasks are this server's clients, one another's local
  // peers (they run on one host).
  std::set<std::string> local_nodes;
  // Called (from the PMIx library's thread; it must only queue) with this agent's part of a
  // step's fence: the step, the fence's number in that step (from 0), the nodes it covers, and
  // the data to gather.
  std::function<void(std::uint64_t job, std::int32_t step, std::uint64_t fence,
                     std::vector<std::string> nodes, std::string data)>
      send_contribution;
};

class PmixServer {
 public:
  // Initializes the library as this process's PMIx server (once per process).
  static Result<std::unique_ptr<PmixServer>> Start(PmixServerOptions options);
  ~PmixServer();
  PmixServer(const PmixServer&) = delete;
  PmixServer& operator=(const PmixServer&) = delete;

  // Registers the step's namespace (the first time) and `ranks`, its tasks on `node`; the
  // variables each of those tasks needs, by rank, to be merged into its environment.
  Result<std::map<int, std::map<std::string, std::string>>> AddTasks(const MpiStepLayout& layout,
                                                                      const std::string& node,
                                                                      const std::vector<int>& ranks);
  // The step's tasks on `node` ended: once none of the step's local nodes runs, its clients and
  // namespace are deregistered and its pending fences fail.
  void NodeEnded(std::uint64_t job, std::int32_t step, const std::string& node);
  // A fence's gathered data (every node's contribution, concatenated), or its failure.
  void FenceDone(std::uint64_t job, std::int32_t step, std::uint64_t fence, std::string data,
                 bool ok);

  // How many steps are registered now (tests).
  std::size_t StepsForTest() const;

  struct Impl;

 private:
  explicit PmixServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep::agent
