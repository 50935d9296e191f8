// `lockstep login [--user NAME] [-- COMMAND ARGS...]` (docs/login.md): the caller's login
// environment. On Kubernetes, a session in the user's login pod through lockstepd (docs/api.md,
// "Login"): with a terminal, an interactive shell (raw mode, window size, every key to the pod's
// terminal); with a command, the command run by the user's shell without a terminal, its output
// and exit status as `ssh host cmd` gives them. On bare hosts, the user's shell here (or on the
// login host, through ssh), with the environment that reaches lockstepd.
#include <pwd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/srun_input.h"
#include "common/base64.h"

namespace lockstep::cli {
namespace {

using Json = nlohmann::json;
constexpr int kSshFailure = 255;  // ssh's own failures: the command's status is 0-254

bool WriteAll(int fd, const std::string& data) {
  for (std::size_t at = 0; at < data.size();) {
    const ssize_t n = ::write(fd, data.data() + at, data.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += static_cast<std::size_t>(n);
  }
  return true;
}

std::string CurrentUserName() {
  passwd pw{}, *found = nullptr;
  char buf[4096];
  if (::getpwuid_r(::getuid(), &pw, buf, sizeof buf, &found) != 0 || !found) return "";
  return pw.pw_name;
}

std::string HostName() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// Bare hosts: the user's shell, here or on a login host.
int LoginOnHost(const Json& how, const std::string& user, const std::vector<std::string>& command) {
  std::vector<std::string> hosts = how.value("hosts", std::vector<std::string>{});
  const std::string here = HostName();
  const bool local = hosts.empty() || std::find(hosts.begin(), hosts.end(), here) != hosts.end() ||
                     std::find(hosts.begin(), hosts.end(), here.substr(0, here.find('.'))) != hosts.end();
  std::vector<std::string> argv;
  if (!local) {
    // The login host's own `lockstep login` sets the environment up there.
    argv = {"ssh", command.empty() ? "-t" : "-T", hosts.front(), "lockstep", "login"};
    if (!user.empty()) argv.insert(argv.end(), {"--user", user});
    if (!command.empty()) argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
  } else if (!user.empty() && user != CurrentUserName()) {
    // An operator as someone else: su gives the user's own login environment.
    argv = {"su", "-", user};
    if (!command.empty()) {
      std::string line;
      for (const std::string& w : command) line += (line.empty() ? "" : " ") + w;
      argv.insert(argv.end(), {"-c", line});
    }
  } else {
    const char* shell = std::getenv("SHELL");
    const std::string sh = shell && *shell ? shell : "/bin/sh";
    // In the home directory, as a login is; where it is when there is none.
    if (const char* home = std::getenv("HOME"); home && *home) (void)!::chdir(home);
    if (command.empty()) {
      argv = {sh, "-l"};
    } else {
      std::string line;
      for (const std::string& w : command) line += (line.empty() ? "" : " ") + w;
      argv = {sh, "-c", line};
    }
  }
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::fprintf(stderr, "lockstep login: cannot run %s: %s\n", argv[0].c_str(), std::strerror(errno));
  return kSshFailure;
}

// Kubernetes: a session in the user's login pod, relayed through lockstepd.
int LoginInPod(const std::string& user, const std::string& pool,
               const std::vector<std::string>& command) {
  // ssh's rule: a command runs without a terminal; a shell gets one when there is one here.
  const bool tty = command.empty() && ::isatty(0) && ::isatty(1);
  Json open = {{"tty", tty}, {"stdin", tty || !StdinIsEmpty()}};
  if (!user.empty()) open["user"] = user;
  if (!pool.empty()) open["pool"] = pool;
  if (!command.empty()) open["command"] = command;
  int rows = 0, cols = 0;
  if (tty && TerminalSize(rows, cols)) open["rows"] = rows, open["cols"] = cols;
  client::ApiClient api;
  Result<Json> session = api.Post("/api/v1/login", open);
  if (!session.ok()) {
    std::fprintf(stderr, "lockstep login: %s\n", session.status().message().c_str());
    return kSshFailure;
  }
  const std::string base = "/api/v1/login/sessions/" + session->value("session", "");
  std::optional<RawTerminal> raw;
  if (tty) raw.emplace();
  std::unique_ptr<StdinForwarder> input;
  if (open["stdin"].get<bool>()) input = std::make_unique<StdinForwarder>(base + "/input", tty);
  std::uint64_t offset = 0;
  for (;;) {
    Result<Json> out = api.Get(base + "/output?offset=" + std::to_string(offset));
    if (!out.ok()) {
      raw.reset();
      std::fprintf(stderr, "\r\nlockstep login: %s\n", out.status().message().c_str());
      return kSshFailure;
    }
    for (const Json& c : out->value("chunks", Json::array())) {
      Result<std::string> data = Base64Decode(c.value("data", ""));
      if (data.ok()) WriteAll(c.value("fd", 1) == 2 ? 2 : 1, *data);
    }
    offset = out->value("next", offset);
    if (out->contains("exit") || out->contains("error")) {
      input.reset();
      raw.reset();
      if (out->contains("error")) {
        std::fprintf(stderr, "\r\nlockstep login: %s\n", (*out)["error"].get<std::string>().c_str());
        return kSshFailure;
      }
      return (*out)["exit"].get<int>();
    }
  }
}

// --ssh: where the user's sshd in their login pod answers, as the ssh command to type.
int PrintSshCommand(const std::string& user) {
  Json open = {{"ssh", true}};
  if (!user.empty()) open["user"] = user;
  client::ApiClient api;
  Result<Json> r = api.Post("/api/v1/login", open);
  if (!r.ok()) {
    std::fprintf(stderr, "lockstep login: %s\n", r.status().message().c_str());
    return kSshFailure;
  }
  const Json& ssh = (*r)["ssh"];
  if (r->contains("warning"))
    std::fprintf(stderr, "lockstep login: warning: %s\n", (*r)["warning"].get<std::string>().c_str());
  std::printf("ssh -p %d %s@%s\n", ssh.value("port", 0), ssh.value("user", "").c_str(),
              ssh.value("host", "").c_str());
  return 0;
}

}  // namespace

int RunLogin(int argc, char** argv) {
  CLI::App app{
      "Open a shell in your login environment (on Kubernetes, your own login pod), or run "
      "COMMAND there and exit with its status, as `ssh host COMMAND` does",
      "lockstep login"};
  std::string user;
  std::vector<std::string> command;
  app.add_option("-u,--user", user, "log in as this user (operators only)");
  std::string pool;
  app.add_option("--pool", pool, "log in to this shared pool of your team's (login.pools)");
  bool ssh = false;
  app.add_flag("--ssh", ssh,
               "print how to reach your login pod's sshd with your SSH keys (login.ssh), and "
               "start it if needed");
  app.add_option("command", command, "a command and its arguments, after --");
  app.positionals_at_end();
  CLI11_PARSE(app, argc, argv);
  client::ApiClient api;
  Result<Json> how = api.Get("/api/v1/login");
  if (!how.ok()) {
    std::fprintf(stderr, "lockstep login: %s\n", how.status().message().c_str());
    return kSshFailure;
  }
  const bool pods = how->value("mode", "") == "kubernetes";
  if (ssh && !command.empty()) {
    std::fprintf(stderr, "lockstep login: --ssh takes no command: it prints the ssh command\n");
    return 2;
  }
  if (!pool.empty() && (ssh || !pods)) {
    std::fprintf(stderr, "lockstep login: --pool is for shared login pods on Kubernetes\n");
    return kSshFailure;
  }
  if (ssh && !pods) {
    std::fprintf(stderr, "lockstep login: --ssh is for login pods on Kubernetes; on hosts, ssh to "
                         "a login host\n");
    return kSshFailure;
  }
  if (ssh) return PrintSshCommand(user);
  if (pods) return LoginInPod(user, pool, command);
  return LoginOnHost(*how, user, command);
}

int RunLoginAlias(const std::string& name, int argc, char** argv) {
  client::ApiClient api;
  Result<Json> how = api.Get("/api/v1/login");
  if (how.ok() && !name.empty() && how->value("alias", "") == name) return RunLogin(argc, argv);
  std::fprintf(stderr, "lockstep: unknown command name '%s' (try 'lockstep help')\n", name.c_str());
  return 2;
}

}  // namespace lockstep::cli
