// Fuzzes the decoders of the agents' bodies (register, events, output, health), which lockstepd
// reads from anyone who can reach /api/v1/agent. The input is a JSON body, given to all four.
// Properties: nothing crashes or throws; what decodes is within the ranges the agents' backend
// relies on (job ids from 1, step ids from -1, signals 0..255, non-empty agent and node lists).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/agent/agent_messages.h"
#include "fuzz_check.h"

namespace {

void CheckRegistration(const nlohmann::json& body) {
  lockstep::Result<lockstep::agent::Registration> r = lockstep::agent::DecodeRegistration(body);
  if (!r.ok()) {
    FUZZ_CHECK(r.status().message().rfind("register: ", 0) == 0);
    return;
  }
  FUZZ_CHECK(!r->agent.empty() && !r->nodes.empty());
  for (const lockstep::agent::RunningUnit& u : r->running) {
    FUZZ_CHECK(u.run.job >= 1 && u.run.run >= 0 && u.step_id >= -1);
  }
}

void CheckEvents(const nlohmann::json& body) {
  lockstep::Result<std::vector<lockstep::agent::AgentEvent>> events =
      lockstep::agent::DecodeEvents(body);
  if (!events.ok()) {
    FUZZ_CHECK(events.status().message().rfind("events", 0) == 0);
    return;
  }
  for (const lockstep::agent::AgentEvent& e : *events) {
    FUZZ_CHECK(e.run.job >= 1 && e.run.run >= 0 && e.step_id >= -1);
    FUZZ_CHECK(e.exit.signal >= 0 && e.exit.signal <= 255);
    // An MPI fence's part names its step and at least one node.
    if (e.gather) FUZZ_CHECK(e.gather->job >= 1 && e.gather->step >= 0 && !e.gather->nodes.empty());
  }
}

void CheckOutput(const nlohmann::json& body) {
  lockstep::Result<std::vector<lockstep::backend::OutputChunk>> chunks =
      lockstep::agent::DecodeOutput(body);
  if (!chunks.ok()) {
    FUZZ_CHECK(chunks.status().message().rfind("output: ", 0) == 0);
    return;
  }
  for (const lockstep::backend::OutputChunk& c : *chunks) {
    FUZZ_CHECK(c.job >= 1 && c.step >= 0 && c.rank >= 0);
  }
}

void CheckHealth(const nlohmann::json& body) {
  lockstep::Result<lockstep::agent::HealthReports> h = lockstep::agent::DecodeHealth(body);
  if (!h.ok()) {
    FUZZ_CHECK(h.status().message().rfind("health: ", 0) == 0);
    return;
  }
  for (const lockstep::backend::NodeHealthReport& r : h->reports) {
    FUZZ_CHECK(r.gpus.size() <= 64 && r.findings.size() <= 256);
    for (const lockstep::backend::HealthFinding& f : r.findings)
      FUZZ_CHECK(f.gpu >= -1 && f.gpu <= 63 && f.value >= 0 && f.detail.size() <= 256);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json body =
      nlohmann::json::parse(data, data + size, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return 0;
  CheckRegistration(body);
  CheckEvents(body);
  CheckHealth(body);
  CheckOutput(body);
  return 0;
}
