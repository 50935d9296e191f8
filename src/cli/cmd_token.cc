// `lockstep token` and `scontrol token`: a bearer token for lockstepd's HTTPS API, as Slurm's
// `scontrol token` prints SLURM_JWT=... . Asked on the Unix socket, where the kernel vouches for
// the caller: never over HTTPS, even with LOCKSTEP_SERVER set.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/cli_util.h"
#include "cli/commands.h"

namespace lockstep::cli {

int IssueToken(const std::string& command, const std::string& user, long long lifespan) {
  nlohmann::json body = nlohmann::json::object();
  if (!user.empty()) body["user"] = user;
  if (lifespan != 0) body["lifespan"] = lifespan;
  client::ApiClient api(client::DefaultSocketPath());
  Result<nlohmann::json> r = api.Post("/api/v1/tokens", body);
  if (!r.ok()) return Fail(command, r.status());
  std::printf("LOCKSTEP_TOKEN=%s\n", r->value("token", "").c_str());
  return 0;
}

int RunToken(int argc, char** argv) {
  CLI::App app{
      "Print a bearer token for lockstepd's HTTPS API (LOCKSTEP_SERVER): "
      "LOCKSTEP_TOKEN=<token>",
      "lockstep token"};
  std::string user;
  long long lifespan = 0;
  app.add_option("-u,--user", user, "for this user (operators only; default: yourself)");
  app.add_option("-l,--lifespan", lifespan, "seconds the token is valid (default 1800)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  return IssueToken("token", user, lifespan);
}

}  // namespace lockstep::cli
