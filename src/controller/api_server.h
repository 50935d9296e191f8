// The controller's side of lockstep's API server (src/server): the routes of api_routes.h
// behind the server's asynchronous Handler, and bearer tokens (tokens.h) behind its
// Authenticator. lockstepd gives an ApiService to server::Server::Start as both.
//
// The routes are blocking functions: they run on worker pools of their own (BlockingHandler),
// never on the server's I/O threads. The two long polls that still block (an agent's command
// poll, srun's step output, up to 30 s each) have a pool of their own, so that they cannot
// take the threads of quick requests. Once the controller answers those through the server's
// async interface (server::Handler: keep the Responder, answer when the event comes), the long
// poll pool can go.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "common/status.h"
#include "controller/api_routes.h"
#include "controller/controller.h"
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
  // Threads at most for the blocking long polls, one per poll in progress. Beyond it polls wait
  // for a thread, so keep it at the server's connection cap (each poll holds a connection).
  std::size_t long_poll_threads = 1024;
  // The agents' endpoints (api_routes.h); null: none. Not owned; outlives the service.
  AgentEndpoints* agents = nullptr;
};

// Ownership: borrows the controller (and its store), which must outlive the service; owns its
// worker pools. Destroy the server that calls it first: the destructor waits for the routes
// that are running (a long poll: up to 30 s).
// Thread-safety: Handle and Authenticate may be called from any number of threads at once.
class ApiService : public server::Handler, public server::Authenticator {
 public:
  // Also removes expired tokens from the store.
  static Result<std::unique_ptr<ApiService>> Create(Controller& controller,
                                                    const ApiServiceOptions& options = {});
  ~ApiService() override = default;

  // server::Handler: runs the request's route on a worker thread.
  void Handle(server::Request request, server::Caller caller, server::Responder respond) override;
  // server::Authenticator: the token's user, checked in the store on a worker thread.
  void Authenticate(std::string token, Done done) override;

 private:
  ApiService(Controller& controller, const ApiServiceOptions& options);
  server::Response Route(const server::Request& request, const server::Caller& caller);

  Controller& controller_;
  AgentEndpoints* const agents_;
  TokenRegistry tokens_;
  server::WorkerPool route_pool_;
  server::WorkerPool long_poll_pool_;
  server::BlockingHandler routes_;
  server::BlockingHandler long_polls_;
};

}  // namespace lockstep::controller
