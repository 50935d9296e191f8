#include "client/api_client.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <optional>

namespace lockstep::client {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

std::string DefaultStateDir() {
  if (const char* d = std::getenv("LOCKSTEP_STATE_DIR"); d && *d) return d;
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.local/state/lockstep";
}

std::string DefaultSocketPath() {
  if (const char* s = std::getenv("LOCKSTEP_SOCKET"); s && *s) return s;
  return DefaultStateDir() + "/lockstepd.sock";
}

std::string DefaultServer() {
  if (const char* s = std::getenv("LOCKSTEP_SERVER"); s && *s) return s;
  return DefaultSocketPath();
}

std::string UrlEncode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == ',') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

namespace {

// The response buffer's capacity (see Call).
constexpr std::size_t kReadBuffer = 64 << 10;

bool IsUrl(const std::string& s) {
  return s.find("://") != std::string::npos;
}

struct HttpsTarget {
  std::string host;  // without brackets
  std::string port;
};

// "https://HOST[:PORT][/]"; HOST may be a bracketed IPv6 address.
Result<HttpsTarget> ParseHttps(const std::string& url) {
  constexpr std::string_view kScheme = "https://";
  if (url.rfind(kScheme, 0) != 0)
    return InvalidArgument("lockstepd's address " + url +
                           " must be https://HOST:PORT (tokens never travel in the clear)");
  std::string rest = url.substr(kScheme.size());
  if (std::size_t slash = rest.find('/'); slash != std::string::npos) {
    if (rest.find_first_not_of('/', slash) != std::string::npos)
      return InvalidArgument("lockstepd's address " + url + " must not have a path");
    rest.resize(slash);
  }
  HttpsTarget t{rest, "443"};
  if (!rest.empty() && rest.front() == '[') {
    std::size_t close = rest.find(']');
    if (close == std::string::npos) return InvalidArgument("bad IPv6 address in " + url);
    t.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') return InvalidArgument("bad address " + url);
      t.port = rest.substr(close + 2);
    }
  } else if (std::size_t colon = rest.rfind(':'); colon != std::string::npos) {
    t.host = rest.substr(0, colon);
    t.port = rest.substr(colon + 1);
  }
  if (t.host.empty() || t.port.empty() ||
      t.port.find_first_not_of("0123456789") != std::string::npos)
    return InvalidArgument("lockstepd's address " + url + " must be https://HOST:PORT");
  return t;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

// One open connection: a Unix socket, or TLS over TCP.
struct ApiClient::Connection {
  asio::io_context io;
  std::optional<asio::local::stream_protocol::socket> unix_socket;
  std::optional<ssl::context> tls_context;
  std::optional<ssl::stream<tcp::socket>> tls;
  boost::beast::flat_buffer buffer;

  template <class F>
  void WithStream(F f) {
    if (tls)
      f(*tls);
    else
      f(*unix_socket);
  }
};

ApiClient::ApiClient(std::string server) : path_(std::move(server)) {}
ApiClient::~ApiClient() = default;
ApiClient::ApiClient(ApiClient&&) noexcept = default;
ApiClient& ApiClient::operator=(ApiClient&&) noexcept = default;

namespace {

Status Unreachable(const std::string& where, const std::string& why, bool tcp) {
  return Status(StatusCode::kUnavailable,
                "cannot reach lockstepd at " + where + " (" + why + ")" +
                    (tcp ? ": is it running with --listen, and is LOCKSTEP_SERVER right?"
                         : ": is it running? Try 'lockstep up'"));
}

// Connects `c` to `url` and completes the TLS handshake, verifying the certificate chain and
// the host name (or IP address).
Status ConnectTls(ApiClient::Connection& c, const std::string& url) {
  Result<HttpsTarget> target = ParseHttps(url);
  if (!target.ok()) return target.status();
  boost::system::error_code ec;
  c.tls_context.emplace(ssl::context::tls_client);
  ssl::context& ctx = *c.tls_context;
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                      ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                  ec);
  std::string ca = Env("LOCKSTEP_CA_CERT");
  if (!ca.empty()) {
    ctx.load_verify_file(ca, ec);
    if (ec)
      return Status(
          StatusCode::kInvalidArgument,
          "cannot read the CA certificate LOCKSTEP_CA_CERT=" + ca + " (" + ec.message() + ")");
  } else {
    ctx.set_default_verify_paths(ec);
  }
  ctx.set_verify_mode(ssl::verify_peer);
  c.tls.emplace(c.io, ctx);
  SSL* ssl_handle = c.tls->native_handle();
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl_handle);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  asio::ip::make_address(target->host, ec);
  if (!ec) {
    X509_VERIFY_PARAM_set1_ip_asc(param, target->host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, target->host.c_str(), 0);
    SSL_set_tlsext_host_name(ssl_handle, target->host.c_str());  // SNI
  }

  tcp::resolver resolver(c.io);
  auto endpoints = resolver.resolve(target->host, target->port, ec);
  if (ec) return Unreachable(url, ec.message(), true);
  asio::connect(c.tls->next_layer(), endpoints, ec);
  if (ec) return Unreachable(url, ec.message(), true);
  c.tls->next_layer().set_option(tcp::no_delay(true), ec);
  c.tls->handshake(ssl::stream_base::client, ec);
  if (ec) {
    long verify = SSL_get_verify_result(ssl_handle);
    if (verify != X509_V_OK) {
      return Status(StatusCode::kUnavailable,
                    "TLS certificate verification of lockstepd at " + url +
                        " failed: " + X509_verify_cert_error_string(verify) +
                        (ca.empty() ? " (set LOCKSTEP_CA_CERT to the CA's PEM file)"
                                    : " (CA: LOCKSTEP_CA_CERT=" + ca + ")"));
    }
    return Status(StatusCode::kUnavailable,
                  "TLS handshake with lockstepd at " + url + " failed: " + ec.message());
  }
  return Status::Ok();
}

// $LOCKSTEP_TOKEN, else the first line of the file $LOCKSTEP_TOKEN_FILE (a login pod's, which
// lockstepd renews in place: read at each request).
std::string BearerToken() {
  std::string token = Env("LOCKSTEP_TOKEN");
  if (!token.empty()) return token;
  const std::string file = Env("LOCKSTEP_TOKEN_FILE");
  if (file.empty()) return "";
  std::ifstream in(file);
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  return token;
}

Status FromResponse(unsigned code, const nlohmann::json& j) {
  std::string msg = j.is_object() ? j.value("error", "request failed") : "request failed";
  if (code == 401) {
    std::string hint = BearerToken().empty()
                           ? "set LOCKSTEP_TOKEN (lockstep token, on a host of the cluster)"
                           : !Env("LOCKSTEP_TOKEN").empty()
                               ? "LOCKSTEP_TOKEN was refused; get a new one (lockstep token)"
                               : "the token of LOCKSTEP_TOKEN_FILE was refused";
    return Status(StatusCode::kPermissionDenied, "authentication failed: " + msg + "; " + hint);
  }
  StatusCode sc = code == 403   ? StatusCode::kPermissionDenied
                  : code == 404 ? StatusCode::kNotFound
                  : code == 400 ? StatusCode::kInvalidArgument
                  : code == 409 ? StatusCode::kFailedPrecondition
                  : code == 503 ? StatusCode::kUnavailable
                                : StatusCode::kInternal;
  return Status(sc, msg);
}

}  // namespace

Result<nlohmann::json> ApiClient::Call(int method, const std::string& target,
                                       const std::string& body) {
  Result<std::pair<unsigned, std::string>> answer = Exchange(method, target, body);
  if (!answer.ok()) return answer.status();
  const auto& [code, text] = *answer;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    if (code >= 400)
      return Status(StatusCode::kInternal, "lockstepd answered HTTP " + std::to_string(code));
    return Internal("lockstepd answered something that is not JSON");
  }
  if (code >= 400) return FromResponse(code, j);
  return j;
}

Result<std::pair<unsigned, std::string>> ApiClient::GetRaw(const std::string& target) {
  return Exchange(static_cast<int>(http::verb::get), target, "");
}

Result<std::string> ApiClient::GetText(const std::string& target) {
  Result<std::pair<unsigned, std::string>> answer =
      Exchange(static_cast<int>(http::verb::get), target, "");
  if (!answer.ok()) return answer.status();
  auto& [code, text] = *answer;
  if (code >= 400) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded())
      return Status(StatusCode::kInternal, "lockstepd answered HTTP " + std::to_string(code));
    return FromResponse(code, j);
  }
  return std::move(text);
}

Result<std::pair<unsigned, std::string>> ApiClient::Exchange(int method, const std::string& target,
                                                             const std::string& body) {
  const bool https = IsUrl(path_);
  // One retry on a fresh connection: the server may have closed an idle keep-alive one.
  for (int attempt = 0; attempt < 2; ++attempt) {
    boost::system::error_code ec;
    if (!conn_) {
      conn_ = std::make_unique<Connection>();
      if (https) {
        Status s = ConnectTls(*conn_, path_);
        if (!s.ok()) {
          conn_.reset();
          return s;
        }
      } else {
        conn_->unix_socket.emplace(conn_->io);
        conn_->unix_socket->connect(asio::local::stream_protocol::endpoint(path_), ec);
        if (ec) {
          conn_.reset();
          return Unreachable(path_, ec.message(), false);
        }
      }
    }
    http::request<http::string_body> req{static_cast<http::verb>(method), target, 11};
    req.set(http::field::host, "lockstepd");
    req.set(http::field::content_type, "application/json");
    if (https) {
      std::string token = BearerToken();
      if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    }
    req.keep_alive(true);
    req.body() = body;
    req.prepare_payload();
    http::response<http::string_body> res;
    // Room for large reads: Beast reads max(512, free capacity) at a time, so an empty buffer
    // would take a listing of thousands of jobs 512 bytes per system call.
    if (conn_->buffer.capacity() < kReadBuffer) conn_->buffer.reserve(kReadBuffer);
    conn_->WithStream([&](auto& stream) {
      http::write(stream, req, ec);
      if (!ec) http::read(stream, conn_->buffer, res, ec);
    });
    if (ec) {
      conn_.reset();
      if (attempt == 0) continue;
      return Status(StatusCode::kUnavailable,
                    "lost the connection to lockstepd at " + path_ + ": " + ec.message());
    }
    if (!res.keep_alive()) conn_.reset();
    return std::make_pair(res.result_int(), std::move(res.body()));
  }
  return Internal("unreachable");
}

Result<nlohmann::json> ApiClient::Get(const std::string& target) {
  return Call(static_cast<int>(http::verb::get), target, "");
}
Result<nlohmann::json> ApiClient::Post(const std::string& target, const nlohmann::json& body) {
  return Call(static_cast<int>(http::verb::post), target, body.dump());
}
Result<nlohmann::json> ApiClient::Patch(const std::string& target, const nlohmann::json& body) {
  return Call(static_cast<int>(http::verb::patch), target, body.dump());
}

}  // namespace lockstep::client
