// MPI steps on the agent (docs/mpi.md): the PMIx server (--mpi=pmix) or the PMI-2 server
// (--mpi=pmi2), each started at the first step that asks for it, registers each step's tasks;
// their fences go up to lockstepd as "gather" events and come back as "gather_done" commands.
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

namespace {

std::set<std::string> NodeNames(const std::vector<AgentNode>& nodes) {
  std::set<std::string> names;
  for (const AgentNode& n : nodes) names.insert(n.name);
  return names;
}

}  // namespace

Result<Pmi2Server*> Agent::Pmi2() {
  std::lock_guard<std::mutex> lock(pmix_start_mu_);
  if (pmi2_) return pmi2_.get();
  Pmi2ServerOptions o;
  o.local_nodes = NodeNames(options_.nodes);
  o.send_contribution = [this](std::uint64_t job, std::int32_t step, std::uint64_t fence,
                               std::vector<std::string> nodes, std::string data) {
    nlohmann::json event = GatherPartEvent({job, step, fence, std::move(nodes), std::move(data)});
    std::lock_guard<std::mutex> lock(mpi_mu_);
    gather_outbox_.push_back(std::move(event));
  };
  Result<std::unique_ptr<Pmi2Server>> server = Pmi2Server::Start(std::move(o));
  if (!server.ok()) return server.status();
  pmi2_ = std::move(*server);
  return pmi2_.get();
}

Result<PmixServer*> Agent::MpiServer() {
  std::lock_guard<std::mutex> lock(pmix_start_mu_);
  if (pmix_) return pmix_.get();
  if (!pmix_error_.empty()) return FailedPrecondition(pmix_error_);
  PmixServerOptions o;
  o.tmpdir = options_.spool_dir + "/pmix";
  o.local_nodes = NodeNames(options_.nodes);
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

Result<std::map<int, Agent::MpiTask>> Agent::PrepareMpi(const Unit& unit,
                                                        const nlohmann::json& c) {
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
  std::map<int, MpiTask> tasks;
  if (layout->mpi == "pmi2") {
    Result<Pmi2Server*> server = Pmi2();
    if (!server.ok()) return server.status();
    Result<std::map<int, Pmi2TaskLink>> links = (*server)->AddTasks(*layout, unit.node, ranks);
    if (!links.ok()) return links.status();
    for (auto& [rank, link] : *links) tasks[rank] = {std::move(link.env), std::move(link.task_end)};
  } else if (layout->mpi == "pmix") {
    Result<PmixServer*> server = MpiServer();
    if (!server.ok()) return server.status();
    Result<std::map<int, std::map<std::string, std::string>>> env =
        (*server)->AddTasks(*layout, unit.node, ranks);
    if (!env.ok()) return env.status();
    for (auto& [rank, vars] : *env) tasks[rank].env = std::move(vars);
  } else {
    return InvalidArgument("job " + std::to_string(unit.job) + ": unknown MPI type '" +
                           layout->mpi + "'");
  }
  for (auto& [rank, task] : tasks) task.env["SLURM_MPI_TYPE"] = layout->mpi;
  return tasks;
}

void Agent::MpiGatherDone(const nlohmann::json& c) {
  PmixServer* pmix = nullptr;
  Pmi2Server* pmi2 = nullptr;
  {
    std::lock_guard<std::mutex> lock(pmix_start_mu_);
    pmix = pmix_.get();
    pmi2 = pmi2_.get();
  }
  Result<std::string> data = Base64Decode(c.value("data", std::string()));
  if (!data.ok()) {
    log::Warning("gather_done: {}", data.status().message());
    return;
  }
  const std::uint64_t job = c.value("job_id", std::uint64_t{0});
  const int step = c.value("step_id", 0);
  const std::uint64_t fence = c.value("fence", std::uint64_t{0});
  const bool ok = c.value("ok", false);
  // The step is one server's; the other knows no such step and ignores it.
  if (pmix) pmix->FenceDone(job, step, fence, *data, ok);
  if (pmi2) pmi2->FenceDone(job, step, fence, std::move(*data), ok);
}

void Agent::EndMpiUnits() {
  std::vector<std::tuple<std::uint64_t, std::int32_t, std::string>> ended;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ended.swap(mpi_ended_);
  }
  if (ended.empty()) return;
  PmixServer* pmix = nullptr;
  Pmi2Server* pmi2 = nullptr;
  {
    std::lock_guard<std::mutex> lock(pmix_start_mu_);
    pmix = pmix_.get();
    pmi2 = pmi2_.get();
  }
  for (const auto& [job, step, node] : ended) {
    if (pmix) pmix->NodeEnded(job, step, node);
    if (pmi2) pmi2->NodeEnded(job, step, node);
  }
}

}  // namespace lockstep::agent
