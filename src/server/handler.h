// The interfaces through which the server hands requests to the application: Handler (one call
// per request, answered through a Responder, now or later) and Authenticator (bearer tokens on
// TCP). Both are asynchronous: the server's few I/O threads call them and must never wait.
//
// Threads:
// - Handler::Handle and Authenticator::Authenticate are called on an I/O thread of the server
//   (one of ServerOptions::io_threads). They must return promptly: no blocking I/O, no waiting
//   for a condition, no lock held for long. Work that blocks goes elsewhere (BlockingHandler in
//   blocking_handler.h runs a blocking function on a worker pool of its own).
// - Responder::Respond and an Authenticator's `done` may be called from any thread, at any
//   later time (a long poll answers when its event comes or its wait ends).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "server/caller.h"
#include "server/http_types.h"

namespace lockstep::server {

// Where a Responder delivers: the connection that asked (implemented by the server).
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  // Called once per request, from any thread. The sink drops the response when the connection
  // or the server is gone.
  virtual void Deliver(Response response) = 0;
};

// The way to answer one request.
//
// Ownership: a copyable handle; all copies share one answer. It keeps the connection's state
// alive (not the server): a Responder may outlive the server, and answering then does nothing.
// Thread-safety: Respond may be called from any thread, concurrently; the first call wins and
// later ones do nothing. When the last copy is destroyed without an answer, the client gets
// 500 {"error": "the request was not answered"} rather than waiting forever.
class Responder {
 public:
  explicit Responder(std::shared_ptr<ResponseSink> sink);

  void Respond(Response response) const;
  // True once Respond was called (by any copy).
  bool answered() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Answers requests. Implemented by the application, borrowed by the server.
//
// Ownership: must outlive the Server that calls it.
// Thread-safety: Handle may be called on several I/O threads at once (one call per request;
// requests of one connection are handed over one at a time, in order).
class Handler {
 public:
  virtual ~Handler() = default;
  // `request` has been read whole (headers and body within the limits) and `caller`
  // authenticated. Answer through `respond` exactly once, now or later, from any thread.
  virtual void Handle(Request request, Caller caller, Responder respond) = 0;
};

// Tells who holds a bearer token (TCP connections only; the Unix socket needs none).
//
// Ownership: must outlive the Server that calls it.
// Thread-safety: Authenticate may be called on several I/O threads at once.
class Authenticator {
 public:
  using Done = std::function<void(Result<Caller>)>;
  virtual ~Authenticator() = default;
  // `token` is never empty. Call `done` exactly once, now or later, from any thread, with the
  // caller (its transport is set by the server), PermissionDenied for a token that is unknown
  // or expired (401 to the client, with the message), or another error (503).
  virtual void Authenticate(std::string token, Done done) = 0;
};

}  // namespace lockstep::server
