// MPI steps on the agent (docs/mpi.md): the PMIx server, started at the first step that asks
// for it, registers each step's tasks; their fences go up to lockstepd as "gather" events and
// come back as "gather_done" commands.
#include <algorithm>

#include "backend/agent/agent.h"
#include "backend/agent/agent_unit.h"
#include "backend/agent/step_gather.h"
#include "common/base64.h"
#include "common/log.h"

namespace lockstep::agent {
namespace {

// The launch command's "mpi_layout" (step_gather.h, MpiLayoutJson), checked whole.
Result<MpiStepLayout> DecodeMpiLayout(const nlohmann::json& c, std::uint64_t job, int step,
                                      uid_t uid, gid_t gid) {
  MpiStepLayout layout;
  layout.job = job;
  layout.step = step;
  layout.uid = uid;
  layout.gid = gid;
  layout.mpi = c.value("mpi", std::string());
  const std::string where = "job " + std::to_string(job) + " step " + std::to_string(step);
  if (step < 0) return InvalidArgument(where + ": only a step (srun) may use --mpi");
  if (!c.contains("mpi_layout") || !c["mpi_layout"].is_array() || c["mpi_layout"].empty())
    return InvalidArgument(where + ": the launch has no 'mpi_layout'");
  int next_rank = 0;
  for (const auto& n : c["mpi_layout"]) {
    if (!n.is_object() || !n.contains("node") || !n["node"].is_string() ||
        !n.contains("ranks") || !n["ranks"].is_array())
      return InvalidArgument(where + ": 'mpi_layout' holds {node, agent, ranks} objects");
    MpiNode node;
    node.node = n["node"].get<std::string>();
    node.agent = n.value("agent", std::string());
    for (const auto& r : n["ranks"]) {
      // Ranks run 0..size-1, node after node: the PMIx maps say the same on every node.
      if (!r.is_number_integer() || r.get<int>() != next_rank)
        return InvalidArgument(where + ": 'mpi_layout' ranks must run from 0, node after node");
      node.ranks.push_back(next_rank++);
    }
    if (node.ranks.empty()) return InvalidArgument(where + ": node " + node.node + " has no rank");
    layout.nodes.push_back(std::move(node));
  }
  return layout;
}

}  // namespace

Result<PmixServer*> Agent::MpiServer() {
  std::lock_guard<std::mutex> lock(pmix_start_mu_);
  if (pmix_) return pmix_.get();
  if (!pmix_error_.empty()) return FailedPrecondition(pmix_error_);
  PmixServerOptions o;
  o.tmpdir = options_.spool_dir + "/pmix";
  for (const AgentNode& n : options_.nodes) o.local_nodes.insert(n.name);
  o.send_contribution = [this](std::uint64_t job, std::int32_t step, std::uint64_t fence,
                               std::vector<std::string> nodes, std::string data) {
    nlohmann::json event = GatherPartEvent({job, step, fence, std::move(nodes), std::move(data)});
    std::lock_guard<std::mutex> lock(mpi_mu_);
    gather_outbox_.push_back(std::move(event));
  };
  Result<std::unique_ptr<PmixServer>> server = PmixServer::Start(std::move(o));
  if (!server.ok()) {
    // Once: PMIx_server_init is not to be tried twice in one process.
    pmix_error_ = "the agent's PMIx server could not start: " + server.status().message();
    return FailedPrecondition(pmix_error_);
  }
  pmix_ = std::move(*server);
  log::Info("PMIx server started in {}/pmix", options_.spool_dir);
  return pmix_.get();
}

Result<std::map<int, std::map<std::string, std::string>>> Agent::PrepareMpi(
    const Unit& unit, const nlohmann::json& c) {
  Result<MpiStepLayout> layout = DecodeMpiLayout(c, unit.job, unit.step_id, unit.uid, unit.gid);
  if (!layout.ok()) return layout.status();
  std::vector<int> ranks;
  for (const auto& t : c["tasks"]) ranks.push_back(t.value("rank", 0));
  const auto mine = std::find_if(layout->nodes.begin(), layout->nodes.end(),
                                 [&](const MpiNode& n) { return n.node == unit.node; });
  if (mine == layout->nodes.end() || mine->ranks != ranks)
    return InvalidArgument("job " + std::to_string(unit.job) + " step " +
                           std::to_string(unit.step_id) + ": the tasks of node " + unit.node +
                           " differ from the step's MPI layout");
  Result<PmixServer*> server = MpiServer();
  if (!server.ok()) return server.status();
  Result<std::map<int, std::map<std::string, std::string>>> env =
      (*server)->AddTasks(*layout, unit.node, ranks);
  if (!env.ok()) return env.status();
  for (auto& [rank, vars] : *env) vars["SLURM_MPI_TYPE"] = layout->mpi;
  return env;
}

void Agent::MpiGatherDone(const nlohmann::json& c) {
  PmixServer* server = nullptr;
  {
    std::lock_guard<std::mutex> lock(pmix_start_mu_);
    server = pmix_.get();
  }
  if (server == nullptr) return;  // no MPI step ran here
  Result<std::string> data = Base64Decode(c.value("data", std::string()));
  if (!data.ok()) {
    log::Warning("gather_done: {}", data.status().message());
    return;
  }
  server->FenceDone(c.value("job_id", std::uint64_t{0}), c.value("step_id", 0),
                    c.value("fence", std::uint64_t{0}), std::move(*data), c.value("ok", false));
}

void Agent::EndMpiUnits() {
  std::vector<std::tuple<std::uint64_t, std::int32_t, std::string>> ended;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ended.swap(mpi_ended_);
  }
  if (ended.empty()) return;
  PmixServer* server = nullptr;
  {
    std::lock_guard<std::mutex> lock(pmix_start_mu_);
    server = pmix_.get();
  }
  if (server == nullptr) return;
  for (const auto& [job, step, node] : ended) server->NodeEnded(job, step, node);
}

}  // namespace lockstep::agent
