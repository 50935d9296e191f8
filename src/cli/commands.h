// The commands of the lockstep binary. Each takes its own argv (argv[0] is the command's name)
// and returns the process exit code: 0 ok, 1 failure, 2 bad usage.
#pragma once

#include <string>

namespace lockstep::cli {

int RunSim(int argc, char** argv);
int RunSbatch(int argc, char** argv);
int RunSrun(int argc, char** argv);
int RunSalloc(int argc, char** argv);  // cmd_salloc.cc
int RunScancel(int argc, char** argv);
int RunSqueue(int argc, char** argv);
int RunSinfo(int argc, char** argv);
int RunSacct(int argc, char** argv);
int RunSprio(int argc, char** argv);
int RunSacctmgr(int argc, char** argv);  // cmd_sacctmgr.cc
int RunScontrol(int argc, char** argv);
int RunWhy(int argc, char** argv);
int RunHealth(int argc, char** argv);  // cmd_health.cc
int RunStorage(int argc, char** argv);  // cmd_storage.cc
int RunPolicy(int argc, char** argv);   // cmd_policy.cc
int RunLogs(int argc, char** argv);  // cmd_logs.cc
// Observability (cmd_observe.cc).
int RunSdiag(int argc, char** argv);
int RunSshare(int argc, char** argv);  // cmd_sshare.cc
int RunSstat(int argc, char** argv);   // cmd_sstat.cc
int RunSattach(int argc, char** argv);  // cmd_sattach.cc
int RunSbcast(int argc, char** argv);   // cmd_sbcast.cc
int RunSreport(int argc, char** argv);  // cmd_sreport.cc
int RunEvents(int argc, char** argv);
int RunMetrics(int argc, char** argv);
int RunWeb(int argc, char** argv);  // cmd_web.cc
int RunUp(int argc, char** argv);
int RunDown(int argc, char** argv);
int RunInstallAliases(int argc, char** argv);
int RunToken(int argc, char** argv);
int RunLogin(int argc, char** argv);  // cmd_login.cc
int RunLoginAs(int argc, char** argv);  // login_as.cc: lockstepd's, in shared login pods
// Called by another name (a link a site made): `lockstep login` when lockstepd's login.alias is
// that name, else an error.
int RunLoginAlias(const std::string& name, int argc, char** argv);
// Node maintenance (cmd_drain.cc): drain [--rolling] NODES, resume NODES.
int RunDrain(int argc, char** argv);
int RunResume(int argc, char** argv);
// Asks lockstepd (Unix socket) for a token for `user` (empty: the caller) valid `lifespan`
// seconds (0: the default) and prints LOCKSTEP_TOKEN=...; errors go out as "<command>: error:".
int IssueToken(const std::string& command, const std::string& user, long long lifespan);
// Asks lockstepd (Unix socket) to revoke the token `id` or every token of `user` (exactly one
// given) and prints "revoked N token(s)".
int RevokeTokens(const std::string& command, const std::string& id, const std::string& user);

}  // namespace lockstep::cli
