// GPUs from NVIDIA's management library, loaded at run time with dlopen so that hosts without
// the driver (and this project's CI) run the agent unchanged: no driver, no GPUs, no error.
#pragma once

#include <vector>

#include "backend/agent/agent.h"

namespace lockstep::agent {

// The host's GPUs (index, UUID, type from the product name: "NVIDIA H100 80GB HBM3" -> "h100"),
// or nothing when libnvidia-ml cannot be loaded or initialised.
std::vector<AgentNode::Gpu> DetectNvidiaGpus();

}  // namespace lockstep::agent
