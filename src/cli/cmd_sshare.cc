// sshare: the fair-share tree as Slurm prints it (GET /api/v1/shares; docs/commands.md).
#include <pwd.h>
#include <unistd.h>

#include <cstdio>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/sshare.h"
#include "cli/slurm/job_filter.h"
#include "cli/slurm/slurm_options.h"

namespace lockstep::cli {
namespace {

std::string CallerName() {
  if (const passwd* pw = ::getpwuid(::getuid())) return pw->pw_name;
  return std::to_string(::getuid());
}

}  // namespace

int RunSshare(int argc, char** argv) {
  SshareOptions o;
  bool all = false, json = false;
  std::set<std::string> users;
  auto flag = [](bool& b) {
    return [&b](const std::string&) {
      b = true;
      return Status::Ok();
    };
  };
  auto set_parsable = [&o](int kind) {
    return [&o, kind](const std::string&) {
      o.parsable = kind;
      return Status::Ok();
    };
  };
  auto ignore = [](const std::string&) { return Status::Ok(); };
  const std::vector<SlurmOption> table = {
      {"all", 'a', OptArg::kNone, flag(all), "list all users"},
      {"accounts", 'A', OptArg::kRequired, AddCommaItems(o.accounts),
       "display specific accounts (comma separated list)", "accounts"},
      {"json", 0, OptArg::kNone, flag(json), "the tree as JSON (lockstep's /api/v1/shares)"},
      {"long", 'l', OptArg::kNone, flag(o.long_format), "include normalized usage in output"},
      {"cluster", 'M', OptArg::kRequired, ignore, "clusters to issue commands to (this one)",
       "names"},
      {"noheader", 'n', OptArg::kNone, flag(o.noheader), "omit header from output"},
      {"noheader", 'h', OptArg::kNone, flag(o.noheader), nullptr},  // 22.05 still takes -h
      {"parsable", 'p', OptArg::kNone, set_parsable(1), "'|' delimited output with a trailing '|'"},
      {"parsable2", 'P', OptArg::kNone, set_parsable(2),
       "'|' delimited output without a trailing '|'"},
      {"users", 'u', OptArg::kRequired, AddCommaItems(users),
       "display specific users (comma separated list)", "users"},
      {"Users", 'U', OptArg::kNone, flag(o.users_only), "display only user information"},
      {"verbose", 'v', OptArg::kNone, ignore, "display more information"},
      {"version", 'V', OptArg::kNone, ignore, "display tool version number"},
  };
  ParsedCommandLine cl = ParseSlurmCommandLine("sshare", argc, argv, table);
  if (cl.exit_code) return *cl.exit_code;
  if (!cl.operands.empty()) return Fail("sshare", "unexpected argument: " + cl.operands[0]);
  // As Slurm's: the caller's own lines unless -a or -u says whose.
  if (!users.empty())
    o.users = users;
  else if (!all)
    o.users = {CallerName()};
  client::ApiClient api;
  Result<nlohmann::json> r = api.Get("/api/v1/shares");
  if (!r.ok()) return Fail("sshare", r.status());
  if (json) {
    std::printf("%s\n", r->dump(2).c_str());
    return 0;
  }
  Result<std::string> text = FormatSshare(*r, o);
  if (!text.ok()) return Fail("sshare", text.status());
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace lockstep::cli
