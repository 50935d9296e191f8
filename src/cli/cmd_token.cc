// `lockstep token` and `scontrol token`: a bearer token for lockstepd's HTTPS API, as Slurm's
// `scontrol token` prints SLURM_JWT=... . Asked on the Unix socket, where the kernel vouches for
// the caller: never over HTTPS, even with LOCKSTEP_SERVER set. `... token revoke` removes a token
// (by the id printed with it) or every token of a user, on the Unix socket as well.
#include <openssl/evp.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/cli_util.h"
#include "cli/commands.h"

namespace lockstep::cli {
namespace {

// The token's public id, as lockstepd computes it (TokenRegistry::IdOf): the first 16 hex digits
// of its SHA-256. Empty if libcrypto cannot hash.
std::string TokenId(const std::string& token) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(token.data(), token.size(), digest, &len, EVP_sha256(), nullptr) != 1) return "";
  static const char* digits = "0123456789abcdef";
  std::string id;
  for (unsigned int i = 0; i < 8 && i < len; ++i) {
    id += digits[digest[i] >> 4];
    id += digits[digest[i] & 15];
  }
  return id;
}

}  // namespace

int IssueToken(const std::string& command, const std::string& user, long long lifespan) {
  nlohmann::json body = nlohmann::json::object();
  if (!user.empty()) body["user"] = user;
  if (lifespan != 0) body["lifespan"] = lifespan;
  client::ApiClient api(client::DefaultSocketPath());
  Result<nlohmann::json> r = api.Post("/api/v1/tokens", body);
  if (!r.ok()) return Fail(command, r.status());
  const std::string token = r->value("token", "");
  std::printf("LOCKSTEP_TOKEN=%s\nLOCKSTEP_TOKEN_ID=%s\n", token.c_str(), TokenId(token).c_str());
  return 0;
}

int RevokeTokens(const std::string& command, const std::string& id, const std::string& user) {
  if (id.empty() == user.empty())
    return Fail(command, "token revoke: give a token id or a user, not both");
  nlohmann::json body = id.empty() ? nlohmann::json{{"user", user}} : nlohmann::json{{"id", id}};
  client::ApiClient api(client::DefaultSocketPath());
  Result<nlohmann::json> r = api.Post("/api/v1/tokens/revoke", body);
  if (!r.ok()) return Fail(command, r.status());
  std::printf("revoked %llu token(s)\n", r->value("revoked", 0ULL));
  return 0;
}

int RunToken(int argc, char** argv) {
  CLI::App app{
      "Print a bearer token for lockstepd's HTTPS API (LOCKSTEP_SERVER): "
      "LOCKSTEP_TOKEN=<token> and LOCKSTEP_TOKEN_ID=<id>",
      "lockstep token"};
  std::string user;
  long long lifespan = 0;
  app.add_option("-u,--user", user, "for this user (operators only; default: yourself)");
  app.add_option("-l,--lifespan", lifespan, "seconds the token is valid (default 1800)")
      ->check(CLI::PositiveNumber);
  CLI::App* revoke = app.add_subcommand(
      "revoke", "revoke a token by its id, or every token of a user (--user; operators: anyone)");
  std::string id, revoke_user;
  revoke->add_option("id", id, "the LOCKSTEP_TOKEN_ID printed with the token");
  revoke->add_option("-u,--user", revoke_user, "every token of this user");
  CLI11_PARSE(app, argc, argv);
  if (revoke->parsed()) return RevokeTokens("token", id, revoke_user);
  return IssueToken("token", user, lifespan);
}

}  // namespace lockstep::cli
