#include "server/server_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/beast/http.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace lockstep::server::testing {

namespace http = boost::beast::http;

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "lockstep-server-XXXXXX").string();
  path_ = ::mkdtemp(tmpl.data()) ? tmpl : "";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

ServerOptions TestOptions(const std::string& dir) {
  ServerOptions o;
  o.socket_path = dir + "/api.sock";
  o.io_threads = 2;
  o.max_connections = 8;
  o.max_tcp_connections = 4;
  o.max_body_bytes = 1024;
  return o;
}

Request MakeRequest(const std::string& target, const std::string& body, const std::string& token) {
  Request req{body.empty() ? http::verb::get : http::verb::post, target, 11};
  req.set(http::field::host, "lockstepd");
  if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
  req.keep_alive(true);
  req.body() = body;
  req.prepare_payload();
  return req;
}

bool ClosedByPeer(int fd, std::chrono::seconds limit) {
  timeval tv{static_cast<time_t>(limit.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == ECONNRESET || errno == EPIPE;
    }
  }
}

UnixClient::UnixClient(const std::string& socket_path) {
  boost::system::error_code ec;
  socket_.connect(boost::asio::local::stream_protocol::endpoint(socket_path), ec);
}

Result<Response> UnixClient::Call(const Request& request) {
  boost::system::error_code ec;
  http::write(socket_, request, ec);
  Response res;
  if (!ec) http::read(socket_, buffer_, res, ec);
  if (ec) return IoError(ec.message());
  return res;
}

void UnixClient::SendRaw(const std::string& bytes) {
  boost::system::error_code ec;
  boost::asio::write(socket_, boost::asio::buffer(bytes), ec);
}

TlsClient::TlsClient(int port) {
  ctx_.set_verify_mode(boost::asio::ssl::verify_none);
  boost::system::error_code ec;
  stream_.next_layer().connect(
      {boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)}, ec);
  if (!ec) stream_.handshake(boost::asio::ssl::stream_base::client, ec);
}

Result<Response> TlsClient::Call(const Request& request) {
  boost::system::error_code ec;
  http::write(stream_, request, ec);
  Response res;
  if (!ec) http::read(stream_, buffer_, res, ec);
  if (ec) return IoError(ec.message());
  return res;
}

int ConnectTcp(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

int ConnectUnix(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool MakeSelfSigned(const std::string& prefix) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  if (!key || !cert) return false;
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  bool ok = X509_sign(cert, key, EVP_sha256()) > 0;
  FILE* c = std::fopen((prefix + ".crt").c_str(), "w");
  FILE* k = std::fopen((prefix + ".key").c_str(), "w");
  ok = ok && c && k && PEM_write_X509(c, cert) == 1 &&
       PEM_write_PrivateKey(k, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  if (c) std::fclose(c);
  if (k) std::fclose(k);
  X509_free(cert);
  EVP_PKEY_free(key);
  return ok;
}

void ScriptedHandler::Handle(Request request, Caller caller, Responder respond) {
  std::string target(request.target());
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++calls_;
    if (target == "/hold") {
      held_.push_back(respond);
      changed_.notify_all();
      return;
    }
  }
  if (target == "/drop") return;  // the Responder goes unanswered
  Response res{http::status::ok, 11};
  if (target == "/quick") {
    res.body() = nlohmann::json{{"uid", caller.uid},
                                {"transport", caller.transport == Transport::kTls ? "tls" : "unix"},
                                {"body", request.body()}}
                     .dump();
  } else {
    res.result(http::status::not_found);
  }
  respond.Respond(std::move(res));
}

bool ScriptedHandler::WaitForHeld(std::size_t n, std::chrono::seconds limit) {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_for(lock, limit, [&] { return held_.size() >= n; });
}

void ScriptedHandler::ReleaseHeld() {
  std::vector<Responder> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    held.swap(held_);
  }
  for (Responder& r : held) {
    Response res{http::status::ok, 11};
    res.body() = R"({"released": true})";
    r.Respond(std::move(res));
  }
}

std::size_t ScriptedHandler::calls() {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

void TestAuthenticator::Authenticate(std::string token, Done done) {
  if (token == "good") {
    Caller c;
    c.uid = 1000;
    c.gid = 1000;
    c.user = "alice";
    return done(c);
  }
  if (token == "broken") return done(Status(StatusCode::kUnavailable, "the token store is down"));
  done(PermissionDenied("invalid token"));
}

}  // namespace lockstep::server::testing
