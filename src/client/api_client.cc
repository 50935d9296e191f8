#include "client/api_client.h"

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cstdlib>

namespace lockstep::client {

namespace asio = boost::asio;
namespace http = boost::beast::http;

std::string DefaultStateDir() {
  if (const char* d = std::getenv("LOCKSTEP_STATE_DIR"); d && *d) return d;
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.local/state/lockstep";
}

std::string DefaultSocketPath() {
  if (const char* s = std::getenv("LOCKSTEP_SOCKET"); s && *s) return s;
  return DefaultStateDir() + "/lockstepd.sock";
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

struct ApiClient::Connection {
  asio::io_context io;
  asio::local::stream_protocol::socket socket{io};
  boost::beast::flat_buffer buffer;
};

ApiClient::ApiClient(std::string socket_path) : path_(std::move(socket_path)) {}
ApiClient::~ApiClient() = default;
ApiClient::ApiClient(ApiClient&&) noexcept = default;
ApiClient& ApiClient::operator=(ApiClient&&) noexcept = default;

Result<nlohmann::json> ApiClient::Call(int method, const std::string& target,
                                       const std::string& body) {
  // One retry on a fresh connection: the server may have closed an idle keep-alive one.
  for (int attempt = 0; attempt < 2; ++attempt) {
    boost::system::error_code ec;
    if (!conn_) {
      conn_ = std::make_unique<Connection>();
      conn_->socket.connect(asio::local::stream_protocol::endpoint(path_), ec);
      if (ec) {
        conn_.reset();
        return Status(StatusCode::kUnavailable, "cannot reach lockstepd at " + path_ + " (" +
                                                    ec.message() +
                                                    "): is it running? Try 'lockstep up'");
      }
    }
    http::request<http::string_body> req{static_cast<http::verb>(method), target, 11};
    req.set(http::field::host, "lockstepd");
    req.set(http::field::content_type, "application/json");
    req.keep_alive(true);
    req.body() = body;
    req.prepare_payload();
    http::write(conn_->socket, req, ec);
    http::response<http::string_body> res;
    if (!ec) http::read(conn_->socket, conn_->buffer, res, ec);
    if (ec) {
      conn_.reset();
      if (attempt == 0) continue;
      return Status(StatusCode::kUnavailable,
                    "lost the connection to lockstepd at " + path_ + ": " + ec.message());
    }
    if (!res.keep_alive()) conn_.reset();
    nlohmann::json j = nlohmann::json::parse(res.body(), nullptr, false);
    if (j.is_discarded()) return Internal("lockstepd answered something that is not JSON");
    unsigned code = res.result_int();
    if (code >= 400) {
      std::string msg = j.value("error", "request failed");
      StatusCode sc = code == 403   ? StatusCode::kPermissionDenied
                      : code == 404 ? StatusCode::kNotFound
                      : code == 400 ? StatusCode::kInvalidArgument
                      : code == 409 ? StatusCode::kFailedPrecondition
                                    : StatusCode::kInternal;
      return Status(sc, msg);
    }
    return j;
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
