// The controller's side of lockstep's API server (src/server): the routes of api_routes.h
// behind the server's asynchronous Handler, and bearer tokens (tokens.h) behind its
// Authenticator. lockstepd gives an ApiService to server::Server::Start as both.
//
// The routes run on a worker pool of their own (server::WorkerPool), never on the server's I/O
// threads: most answer at once (some wait for the store's group commit). The two long polls (an
// agent's command poll, srun's step output, up to 30 s each) only register a waiter that holds
// the request's Responder, with the agents' backend or the controller, and return: the waiter
// answers when commands or output come, the step ends, or the wait ends. A long poll holds no
// thread, so any number of them (up to the server's connection cap) leave the pool to quick
// requests.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "common/status.h"
#include "controller/api_routes.h"
#include "controller/controller.h"
#include "controller/login_endpoints.h"
#include "controller/observe_routes.h"
#include "controller/policy_routes.h"
#include "identity/user_directory.h"
#include "controller/tokens.h"
#include "server/blocking_handler.h"
#include "server/handler.h"

namespace lockstep::controller {

// Threads are started on demand and end after 30 s without work (server::WorkerPool).
struct ApiServiceOptions {
  // Threads at most for every request but the blocking long polls (and for token checks).
  // Most of them wait for the store's group commit: more concurrent submissions make larger
  // commits.
  std::size_t route_threads = 32;
  // The agents' endpoints (api_routes.h); null: none. Not owned; outlives the service.
  AgentEndpoints* agents = nullptr;
  // What the metrics show beyond the controller's state (the agents' heartbeats).
  ObserveSources observe;
  // The login environments (login_endpoints.h); null: the bare hosts' answer. Not owned.
  LoginEndpoints* login = nullptr;
  // The users lockstepd knows (identity/identity_source.h): callers' names, whom tokens stand
  // for (a user gone from it has their tokens refused). Null: the host's users.
  std::function<std::shared_ptr<const identity::UserDirectory>()> directory;
  // The admission policy's log and test routes (policy_routes.h).
  PolicyEndpoints policy;
};

// Ownership: borrows the controller (and its store), which must outlive the service; owns its
// worker pool. Destroy the server that calls it first: the destructor waits for the routes
// that are running (long polls waiting are not: their waiters answer into closed connections).
// Thread-safety: Handle and Authenticate may be called from any number of threads at once.
class ApiService : public server::Handler, public server::Authenticator {
 public:
  // Also removes expired tokens from the store.
  static Result<std::unique_ptr<ApiService>> Create(Controller& controller,
                                                    const ApiServiceOptions& options = {});
  ~ApiService() override = default;

  // server::Handler: runs the request's route on a worker thread (a long poll's only registers
  // its waiter there).
  void Handle(server::Request request, server::Caller caller, server::Responder respond) override;
  // server::Authenticator: the token's user, checked in the store on a worker thread.
  void Authenticate(std::string token, Done done) override;

 private:
  ApiService(Controller& controller, const ApiServiceOptions& options);
  void Route(const server::Request& request, const server::Caller& caller,
             const server::Responder& respond);

  Controller& controller_;
  AgentEndpoints* const agents_;
  const ObserveSources observe_;
  LoginEndpoints* const login_;
  const PolicyEndpoints policy_;
  const std::function<std::shared_ptr<const identity::UserDirectory>()> directory_;
  TokenRegistry tokens_;
  server::WorkerPool route_pool_;
};

}  // namespace lockstep::controller
