// The site's health program (Slurm's HealthCheckProgram, LBNL NHC): run for one node, its exit
// code read with the Nagios convention (0 healthy, 1 warning, 2 critical, 3 unknown) and the
// first line of its output taken as the reason. A program that outlives its timeout is killed
// (its whole process group) and reads as unknown, as does one that cannot be started or exits
// with another code or a signal.
#pragma once

#include <chrono>
#include <string>

#include "backend/health.h"

namespace lockstep::agent {

// Runs `program` with SLURMD_NODENAME and LOCKSTEP_NODE set to `node`, stdin from /dev/null;
// blocks until it ends or `timeout` passes. A finding of check "program".
backend::HealthFinding RunHealthProgram(const std::string& program, const std::string& node,
                                        std::chrono::seconds timeout);

}  // namespace lockstep::agent
