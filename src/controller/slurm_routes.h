// The routes behind Slurm's commands that are not the jobs' own (docs/api.md): sacctmgr's
// GET/POST /api/v1/accounts, sbatch/srun --test-only's POST /api/v1/jobs/test, scontrol write
// batch_script's GET /api/v1/jobs/{id}/script, scontrol show config's GET /api/v1/config and
// scontrol show topology's GET /api/v1/topology.
#pragma once

#include <optional>
#include <string_view>

#include "controller/api_routes.h"
#include "controller/controller.h"

namespace lockstep::controller {

// The answer when `path` is one of these routes, else nullopt.
std::optional<ApiResponse> SlurmCommandsRoute(
    Controller& c, const Caller& caller, std::string_view path,
    const boost::beast::http::request<boost::beast::http::string_body>& req);

}  // namespace lockstep::controller
