// The agent's PMI-2 server for `srun --mpi=pmi2` (docs/mpi.md): Slurm's and MPICH's PMI-2 wire
// protocol, which their client libraries (Debian's libpmi2, MPICH's simple PMI) speak over the
// descriptor named by PMI_FD. Each task gets one end of a socket pair of its own (no socket on
// the file system: only the task holds its end), so a connection is its rank.
//
// The key-value space is the step's: puts are kept until a fence; when every local task of the
// step has called kvs-fence, this agent's puts go up to lockstepd (the same gather as PMIx's
// fences, step_gather.h) and the whole comes back (FenceDone), after which every task's puts
// may be read. Served: init, fullinit, job-getid, kvs-put, kvs-fence, kvs-get, info-getjobattr
// (PMI_process_mapping), info-putnodeattr and info-getnodeattr (this host's), finalize, abort.
// Spawn, connect and the name service are answered with an error.
//
// Thread-safety: every method may be called from any thread; one thread of its own serves the
// connections. Ownership: the agent owns it; the destructor stops the thread and closes them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backend/agent/cgroup.h"  // UniqueFd
#include "backend/agent/pmix_server.h"  // MpiStepLayout
#include "common/status.h"

namespace lockstep::agent {

struct Pmi2ServerOptions {
  std::set<std::string> local_nodes;  // the nodes this agent serves
  // As PmixServerOptions::send_contribution (called from the server's thread; only queue).
  std::function<void(std::uint64_t job, std::int32_t step, std::uint64_t fence,
                     std::vector<std::string> nodes, std::string data)>
      send_contribution;
};

// What a task needs to reach the server: its variables (PMI_FD names `task_end`'s number, which
// the task inherits: the launcher keeps it open across exec, TaskSpec::inherit_fd) and its end.
struct Pmi2TaskLink {
  std::map<std::string, std::string> env;
  UniqueFd task_end;
};

class Pmi2Server {
 public:
  static Result<std::unique_ptr<Pmi2Server>> Start(Pmi2ServerOptions options);
  ~Pmi2Server();
  Pmi2Server(const Pmi2Server&) = delete;
  Pmi2Server& operator=(const Pmi2Server&) = delete;

  // Registers the step (the first time) and a connection for each of `ranks`, its tasks on
  // `node`.
  Result<std::map<int, Pmi2TaskLink>> AddTasks(const MpiStepLayout& layout,
                                               const std::string& node,
                                               const std::vector<int>& ranks);
  // As PmixServer's: the step goes once none of its local nodes runs.
  void NodeEnded(std::uint64_t job, std::int32_t step, const std::string& node);
  void FenceDone(std::uint64_t job, std::int32_t step, std::uint64_t fence, std::string data,
                 bool ok);

  struct Impl;

 private:
  explicit Pmi2Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The wire format, for tests: a command's fields ("cmd=kvs-put;key=a;value=b;", ";;" standing
// for a ';' in a value), and a message with its 6-character length header.
std::map<std::string, std::string> ParsePmi2Command(const std::string& body);
std::string Pmi2Message(const std::vector<std::pair<std::string, std::string>>& fields);
// MPICH's PMI_process_mapping of a layout: "(vector,(first_node,node_count,ranks_per_node),...)",
// nodes as the MPI library sees them (one per agent).
std::string Pmi2ProcessMapping(const MpiStepLayout& layout);

}  // namespace lockstep::agent
