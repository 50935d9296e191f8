// Internal to the server: the state its listeners and sessions share.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <mutex>
#include <utility>

#include "server/connection_table.h"
#include "server/handler.h"
#include "server/server_options.h"

namespace lockstep::server {

// Ownership: shared by the Server, its listeners and its sessions (and, through sessions, by
// Responders), so that a late answer finds it alive. The handler and the authenticator are
// borrowed from the Server's owner.
// Thread-safety: the options, handler and authenticator are read-only; `connections` and
// PostUnlessStopped are safe from any thread; `io` and `tls` are used as Asio allows.
struct ServerCore {
  ServerCore(ServerOptions o, Handler& h, Authenticator* a)
      : options(std::move(o)),
        handler(h),
        authenticator(a),
        connections(options.max_connections, options.max_tcp_connections) {}

  // Runs `fn` on `executor` unless the server has stopped (then drops it): how answers and
  // authentication results come back from other threads. Any thread.
  template <class Executor, class Fn>
  void PostUnlessStopped(const Executor& executor, Fn&& fn) {
    std::lock_guard<std::mutex> lock(mu);
    if (!stopped) boost::asio::post(executor, std::forward<Fn>(fn));
  }
  void MarkStopped() {
    std::lock_guard<std::mutex> lock(mu);
    stopped = true;
  }
  bool IsStopped() {
    std::lock_guard<std::mutex> lock(mu);
    return stopped;
  }

  const ServerOptions options;
  Handler& handler;
  Authenticator* const authenticator;  // null without TCP
  ConnectionTable connections;
  boost::asio::ssl::context tls{boost::asio::ssl::context::tls_server};
  // Declared last, destroyed first: handlers it still holds may refer to the members above.
  boost::asio::io_context io;

 private:
  std::mutex mu;
  bool stopped = false;  // guarded by mu
};

}  // namespace lockstep::server
