#include "controller/api_server.h"

#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <ctime>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

#include "controller/api_routes.h"
#include "controller/tokens.h"

namespace lockstep::controller {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using UnixSocket = asio::local::stream_protocol::socket;
using TlsStream = ssl::stream<tcp::socket>;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

namespace {

Caller PeerOf(UnixSocket& s) {
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

Response JsonReply(http::status status, const std::string& error) {
  Response res{status, 11};
  res.set(http::field::content_type, "application/json");
  res.body() = nlohmann::json{{"error", error}}.dump();
  res.prepare_payload();
  return res;
}

// The token of "Authorization: Bearer <token>", or empty.
std::string BearerToken(const Request& req) {
  auto it = req.find(http::field::authorization);
  if (it == req.end()) return "";
  std::string_view v(it->value().data(), it->value().size());
  constexpr std::string_view kScheme = "bearer ";
  if (v.size() <= kScheme.size()) return "";
  for (std::size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(v[i])) != kScheme[i]) return "";
  v.remove_prefix(kScheme.size());
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  return std::string(v);
}

bool IsTokensTarget(const Request& req) {
  std::string_view t(req.target().data(), req.target().size());
  t = t.substr(0, t.find('?'));
  while (t.size() > 1 && t.back() == '/') t.remove_suffix(1);
  return t == "/api/v1/tokens";
}

// "HOST:PORT", "[V6]:PORT".
Result<std::pair<std::string, std::string>> SplitHostPort(const std::string& s) {
  std::size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size())
    return InvalidArgument("--listen " + s + ": expected HOST:PORT");
  std::string host = s.substr(0, colon), port = s.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (port.find_first_not_of("0123456789") != std::string::npos)
    return InvalidArgument("--listen " + s + ": the port is not a number");
  return std::make_pair(host, port);
}

}  // namespace

struct ApiServer::Impl {
  // A connection's thread and how to wake it (shut its socket down) when the server stops.
  struct Connection {
    std::function<void()> shutdown;
    std::atomic<bool> done{false};
    std::thread thread;
  };

  Controller& controller;
  TokenRegistry tokens;
  ApiServerOptions options;
  asio::io_context io;
  asio::local::stream_protocol::acceptor unix_acceptor{io};
  tcp::acceptor tcp_acceptor{io};
  ssl::context tls{ssl::context::tls_server};
  std::thread unix_thread, tcp_thread;
  std::mutex mu;
  std::list<std::unique_ptr<Connection>> connections;  // guarded by mu
  std::atomic<bool> stopping{false};

  explicit Impl(Controller& c) : controller(c), tokens(c.store()) {}

  // Runs `serve` on a thread of its own; reaps the threads of connections that have ended.
  void Launch(std::function<void()> shutdown, std::function<void()> serve) {
    std::lock_guard<std::mutex> lock(mu);
    for (auto it = connections.begin(); it != connections.end();) {
      if ((*it)->done) {
        (*it)->thread.join();
        it = connections.erase(it);
      } else {
        ++it;
      }
    }
    auto conn = std::make_unique<Connection>();
    Connection* raw = conn.get();
    raw->shutdown = std::move(shutdown);
    raw->thread = std::thread([raw, serve = std::move(serve)] {
      serve();
      raw->done = true;
    });
    connections.push_back(std::move(conn));
  }

  // Reads requests and writes `answer`'s responses until the peer or the server stops.
  template <class Stream, class Answer>
  void ServeHttp(Stream& stream, Answer answer) {
    boost::beast::flat_buffer buffer;
    boost::system::error_code ec;
    while (!stopping) {
      Request req;
      http::read(stream, buffer, req, ec);
      if (ec) break;
      Response res = answer(req);
      res.keep_alive(req.keep_alive());
      http::write(stream, res, ec);
      if (ec || !req.keep_alive()) break;
    }
  }

  void ServeUnix(UnixSocket& socket) {
    Caller caller = PeerOf(socket);
    ServeHttp(socket, [&](const Request& req) {
      if (IsTokensTarget(req))
        return HandleTokenRequest(controller, tokens, caller, req, std::time(nullptr));
      return HandleRequest(controller, options.agents, caller, req);
    });
  }

  // On TCP every request carries its own token: a connection is not a login.
  Response AnswerTcp(const Request& req) {
    std::string token = BearerToken(req);
    if (token.empty()) {
      Response res =
          JsonReply(http::status::unauthorized, "no bearer token (Authorization: Bearer <token>)");
      res.set(http::field::www_authenticate, "Bearer");
      return res;
    }
    Result<Caller> caller = tokens.Authenticate(token, std::time(nullptr));
    if (!caller.ok()) {
      if (caller.status().code() != StatusCode::kPermissionDenied)
        return JsonReply(http::status::service_unavailable, caller.status().message());
      Response res = JsonReply(http::status::unauthorized, caller.status().message());
      res.set(http::field::www_authenticate, "Bearer error=\"invalid_token\"");
      return res;
    }
    // A token never begets another: a stolen one cannot be renewed forever.
    if (IsTokensTarget(req))
      return JsonReply(http::status::forbidden,
                       "tokens are issued only on lockstepd's Unix socket (lockstep token)");
    return HandleRequest(controller, options.agents, *caller, req);
  }

  void ServeTls(TlsStream& stream) {
    boost::system::error_code ec;
    stream.handshake(ssl::stream_base::server, ec);
    if (ec) return;
    ServeHttp(stream, [&](const Request& req) { return AnswerTcp(req); });
  }

  void UnixAcceptLoop() {
    while (!stopping) {
      auto socket = std::make_shared<UnixSocket>(io);
      boost::system::error_code ec;
      unix_acceptor.accept(*socket, ec);
      if (ec) {
        if (stopping) break;
        continue;
      }
      Launch(
          [socket] {
            boost::system::error_code ignored;
            socket->shutdown(UnixSocket::shutdown_both, ignored);
          },
          [this, socket] {
            ServeUnix(*socket);
            boost::system::error_code ignored;
            socket->shutdown(UnixSocket::shutdown_both, ignored);
            socket->close(ignored);
          });
    }
  }

  void TcpAcceptLoop() {
    while (!stopping) {
      auto stream = std::make_shared<TlsStream>(io, tls);
      boost::system::error_code ec;
      tcp_acceptor.accept(stream->next_layer(), ec);
      if (ec) {
        if (stopping) break;
        // Out of descriptors, say: do not spin.
        if (ec != asio::error::connection_aborted)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      stream->next_layer().set_option(tcp::no_delay(true), ec);
      Launch(
          [stream] {
            boost::system::error_code ignored;
            stream->next_layer().shutdown(tcp::socket::shutdown_both, ignored);
          },
          [this, stream] {
            ServeTls(*stream);
            boost::system::error_code ignored;
            stream->next_layer().shutdown(tcp::socket::shutdown_both, ignored);
            stream->next_layer().close(ignored);
          });
    }
  }

  Status ListenUnix() {
    const std::string& path = options.socket_path;
    ::unlink(path.c_str());
    boost::system::error_code ec;
    asio::local::stream_protocol::endpoint ep(path);
    unix_acceptor.open(ep.protocol(), ec);
    if (!ec) unix_acceptor.bind(ep, ec);
    if (!ec) unix_acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return IoError("cannot listen on " + path + ": " + ec.message());
    ::chmod(path.c_str(), 0777);
    return Status::Ok();
  }

  Status ListenTcp() {
    if (options.tls_cert.empty() || options.tls_key.empty())
      return InvalidArgument(
          "--listen needs --tls-cert and --tls-key: lockstepd does not serve plain HTTP on TCP, "
          "where bearer tokens would travel in the clear");
    boost::system::error_code ec;
    tls.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                        ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                        ssl::context::single_dh_use,
                    ec);
    tls.use_certificate_chain_file(options.tls_cert, ec);
    if (ec)
      return InvalidArgument("cannot load --tls-cert " + options.tls_cert + ": " + ec.message());
    tls.use_private_key_file(options.tls_key, ssl::context::pem, ec);
    if (ec)
      return InvalidArgument("cannot load --tls-key " + options.tls_key + ": " + ec.message());
    if (SSL_CTX_check_private_key(tls.native_handle()) != 1)
      return InvalidArgument("--tls-key " + options.tls_key + " does not match --tls-cert " +
                             options.tls_cert);
    Result<std::pair<std::string, std::string>> hp = SplitHostPort(options.listen);
    if (!hp.ok()) return hp.status();
    tcp::resolver resolver(io);
    auto endpoints = resolver.resolve(hp->first, hp->second, tcp::resolver::passive, ec);
    if (ec || endpoints.empty())
      return InvalidArgument("--listen " + options.listen + ": " +
                             (ec ? ec.message() : "no address"));
    tcp::endpoint ep = endpoints.begin()->endpoint();
    tcp_acceptor.open(ep.protocol(), ec);
    if (!ec) tcp_acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) tcp_acceptor.bind(ep, ec);
    if (!ec) tcp_acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return IoError("cannot listen on " + options.listen + ": " + ec.message());
    return Status::Ok();
  }
};

ApiServer::ApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<ApiServer>> ApiServer::Start(Controller& controller,
                                                    const std::string& socket_path) {
  ApiServerOptions options;
  options.socket_path = socket_path;
  return Start(controller, options);
}

Result<std::unique_ptr<ApiServer>> ApiServer::Start(Controller& controller,
                                                    const ApiServerOptions& options) {
  auto impl = std::make_unique<Impl>(controller);
  impl->options = options;
  if (options.listen.empty() && (!options.tls_cert.empty() || !options.tls_key.empty()))
    return InvalidArgument("--tls-cert and --tls-key are for --listen HOST:PORT");
  // TCP first: a bad certificate must not leave a socket file behind.
  if (!options.listen.empty()) {
    Status s = impl->ListenTcp();
    if (!s.ok()) return s;
  }
  Result<std::size_t> gone = impl->tokens.RemoveExpired(std::time(nullptr));
  if (!gone.ok()) return gone.status();
  Status s = impl->ListenUnix();
  if (!s.ok()) return s;
  Impl* raw = impl.get();
  impl->unix_thread = std::thread([raw] { raw->UnixAcceptLoop(); });
  if (impl->tcp_acceptor.is_open()) impl->tcp_thread = std::thread([raw] { raw->TcpAcceptLoop(); });
  return std::unique_ptr<ApiServer>(new ApiServer(std::move(impl)));
}

int ApiServer::tcp_port() const {
  boost::system::error_code ec;
  if (!impl_->tcp_acceptor.is_open()) return 0;
  tcp::endpoint ep = impl_->tcp_acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

ApiServer::~ApiServer() {
  impl_->stopping = true;
  boost::system::error_code ec;
  // Wake the blocking accepts: a connection to ourselves for the Unix socket; on Linux,
  // shutdown(2) of a listening TCP socket makes a blocked accept(2) return.
  {
    UnixSocket poke(impl_->io);
    poke.connect(asio::local::stream_protocol::endpoint(impl_->options.socket_path), ec);
  }
  if (impl_->unix_thread.joinable()) impl_->unix_thread.join();
  if (impl_->tcp_thread.joinable()) {
    ::shutdown(impl_->tcp_acceptor.native_handle(), SHUT_RDWR);
    impl_->tcp_thread.join();
  }
  impl_->unix_acceptor.close(ec);
  impl_->tcp_acceptor.close(ec);
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (auto& conn : impl_->connections) {
    conn->shutdown();
    if (conn->thread.joinable()) conn->thread.join();
  }
  ::unlink(impl_->options.socket_path.c_str());
}

}  // namespace lockstep::controller
