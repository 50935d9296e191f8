#include "controller/api_server.h"

#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>

#include "controller/api_routes.h"

namespace lockstep::controller {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using Socket = asio::local::stream_protocol::socket;

struct ApiServer::Impl {
  Controller& controller;
  std::string path;
  asio::io_context io;
  asio::local::stream_protocol::acceptor acceptor{io};
  std::thread accept_thread;
  std::mutex mu;
  std::list<std::pair<std::shared_ptr<Socket>, std::thread>> connections;  // guarded by mu
  std::atomic<bool> stopping{false};

  explicit Impl(Controller& c) : controller(c) {}

  static Caller PeerOf(Socket& s) {
    Caller c;
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(s.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
      c.uid = cred.uid;
      c.gid = cred.gid;
    }
    passwd pw{}, *result = nullptr;
    char buf[4096];
    if (::getpwuid_r(c.uid, &pw, buf, sizeof buf, &result) == 0 && result)
      c.user = pw.pw_name;
    else
      c.user = std::to_string(c.uid);
    return c;
  }

  void Serve(std::shared_ptr<Socket> socket) {
    Caller caller = PeerOf(*socket);
    boost::beast::flat_buffer buffer;
    boost::system::error_code ec;
    while (!stopping) {
      http::request<http::string_body> req;
      http::read(*socket, buffer, req, ec);
      if (ec) break;
      http::response<http::string_body> res = HandleRequest(controller, caller, req);
      res.keep_alive(req.keep_alive());
      http::write(*socket, res, ec);
      if (ec || !req.keep_alive()) break;
    }
    socket->shutdown(Socket::shutdown_both, ec);
  }

  void AcceptLoop() {
    while (!stopping) {
      auto socket = std::make_shared<Socket>(io);
      boost::system::error_code ec;
      acceptor.accept(*socket, ec);
      if (ec) {
        if (stopping) break;
        continue;
      }
      std::lock_guard<std::mutex> lock(mu);
      // Reap the threads of connections that have ended.
      for (auto it = connections.begin(); it != connections.end();) {
        if (!it->first->is_open() || it->first.use_count() == 1) {
          if (it->second.joinable()) it->second.join();
          it = connections.erase(it);
        } else {
          ++it;
        }
      }
      connections.emplace_back(socket, std::thread());
      auto& slot = connections.back();
      slot.second = std::thread([this, socket] {
        Serve(socket);
        boost::system::error_code ignored;
        socket->close(ignored);
      });
    }
  }
};

ApiServer::ApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<ApiServer>> ApiServer::Start(Controller& controller,
                                                    const std::string& socket_path) {
  auto impl = std::make_unique<Impl>(controller);
  impl->path = socket_path;
  ::unlink(socket_path.c_str());
  boost::system::error_code ec;
  asio::local::stream_protocol::endpoint ep(socket_path);
  impl->acceptor.open(ep.protocol(), ec);
  if (!ec) impl->acceptor.bind(ep, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return IoError("cannot listen on " + socket_path + ": " + ec.message());
  ::chmod(socket_path.c_str(), 0777);
  Impl* raw = impl.get();
  impl->accept_thread = std::thread([raw] { raw->AcceptLoop(); });
  return std::unique_ptr<ApiServer>(new ApiServer(std::move(impl)));
}

ApiServer::~ApiServer() {
  impl_->stopping = true;
  boost::system::error_code ec;
  // Wake the blocking accept by connecting to ourselves, then close.
  {
    Socket poke(impl_->io);
    poke.connect(asio::local::stream_protocol::endpoint(impl_->path), ec);
  }
  if (impl_->accept_thread.joinable()) impl_->accept_thread.join();
  impl_->acceptor.close(ec);
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (auto& [socket, thread] : impl_->connections) {
    socket->shutdown(Socket::shutdown_both, ec);
    if (thread.joinable()) thread.join();
  }
  ::unlink(impl_->path.c_str());
}

}  // namespace lockstep::controller
