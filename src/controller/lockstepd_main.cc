// lockstepd: the controller daemon.
//   lockstepd --config cluster.yaml --state-dir DIR [--socket PATH] [--node-timeout S]
//             [--operator UID ...]
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>

#include "controller/api_server.h"
#include "controller/controller.h"

int main(int argc, char** argv) {
  lockstep::controller::ControllerOptions o;
  std::string socket_path;
  CLI::App app{"lockstep's controller daemon", "lockstepd"};
  app.add_option("--config", o.cluster_config, "cluster YAML")->required();
  app.add_option("--state-dir", o.state_dir, "durable state and the socket")->required();
  app.add_option("--socket", socket_path, "Unix socket (default STATE_DIR/lockstepd.sock)");
  app.add_option("--node-timeout", o.node_timeout,
                 "seconds without heartbeat before a node is DOWN");
  app.add_option("--kill-wait", o.kill_wait, "seconds from SIGTERM to SIGKILL");
  app.add_option("--operator", o.operators, "uids allowed to act on every job (root always is)");
  CLI11_PARSE(app, argc, argv);
  if (socket_path.empty()) socket_path = o.state_dir + "/lockstepd.sock";

  // Signals are taken by sigwait below, so no thread is interrupted by them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  auto controller = lockstep::controller::Controller::Start(o);
  if (!controller.ok()) {
    std::fprintf(stderr, "lockstepd: %s\n", controller.status().message().c_str());
    return 1;
  }
  auto server = lockstep::controller::ApiServer::Start(**controller, socket_path);
  if (!server.ok()) {
    std::fprintf(stderr, "lockstepd: %s\n", server.status().message().c_str());
    return 1;
  }
  std::ofstream(o.state_dir + "/lockstepd.pid") << ::getpid() << "\n";
  std::fprintf(stderr, "lockstepd: listening on %s\n", socket_path.c_str());
  int sig = 0;
  sigwait(&signals, &sig);
  std::fprintf(stderr, "lockstepd: signal %d, stopping (jobs keep running)\n", sig);
  server->reset();
  controller->reset();
  return 0;
}
