// lockstepd's side of the fences of MPI steps (docs/mpi.md): each agent sends its nodes' part of
// a step's fence up (an event "gather"); once every node of the step has sent its part, the
// concatenation goes down to each of the step's agents (a command "gather_done"). lockstepd
// knows nothing of what the parts hold (the agents' PMIx servers made them).
//
// Thread-safety: StepGathers is a plain value; AgentBackend keeps one under its mutex.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "backend/backend.h"
#include "common/status.h"

namespace lockstep::agent {

// One agent's part of one fence of a step.
struct GatherPart {
  JobId job = 0;
  std::int32_t step = 0;
  std::uint64_t fence = 0;          // the fence's number in the step, from 0
  std::vector<std::string> nodes;   // the step's nodes it covers (those its agent serves)
  std::string data;                 // opaque
};

// The "gather" event's fields (`where` names it in errors); data is base64 in the event.
Result<GatherPart> DecodeGatherPart(const nlohmann::json& event, const std::string& where);
nlohmann::json GatherPartEvent(const GatherPart& part);
// The "gather_done" command: the fence's data (every part), or its failure.
nlohmann::json GatherDoneCommand(JobId job, std::int32_t step, std::uint64_t fence,
                                 const std::string& data, bool ok);

// The step's layout for the agents' PMIx servers: each node's ranks and the agent serving it.
// `agent_of`: node -> agent.
nlohmann::json MpiLayoutJson(const backend::StepLaunch& step,
                             const std::map<std::string, std::string>& agent_of);

class StepGathers {
 public:
  // Adds a part of a fence of a step whose nodes are `members`. When every member is covered:
  // the fence's data (the parts concatenated), and the fence is forgotten. A part naming a node
  // that is not a member, or covered already, is refused.
  Result<std::optional<std::string>> Add(const GatherPart& part,
                                         const std::set<std::string>& members);
  // The step ended (or failed): its fences waiting for parts, dropped; their numbers.
  std::vector<std::uint64_t> Drop(JobId job, std::int32_t step);
  std::size_t pending() const { return fences_.size(); }

 private:
  struct Fence {
    std::set<std::string> covered;
    std::string data;
  };
  std::map<std::tuple<JobId, std::int32_t, std::uint64_t>, Fence> fences_;
};

}  // namespace lockstep::agent
