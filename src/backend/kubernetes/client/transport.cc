#include "backend/kubernetes/client/transport.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <limits>

#include "backend/kubernetes/client/api_error.h"

namespace lockstep::kube {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

constexpr uint64_t kNoBodyLimit = std::numeric_limits<uint64_t>::max();

bool IsIpAddress(const std::string& host) {
  error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// One TLS connection with its own io_context: each operation is started asynchronously (so the
// tcp_stream's deadline applies) and the context is run on the calling thread until it is done.
class Connection {
 public:
  // beast reads at most the read buffer's free capacity, and no less than 512 bytes: left to grow
  // on demand, the buffer would stay at 512 bytes, and a list of 10,000 pods take 20,000 reads.
  // 16 KiB is the largest TLS record, the most one read can return.
  explicit Connection(ssl::context& ctx) : stream_(ioc_, ctx) { buffer_.reserve(16 * 1024); }

  Status Open(const ServerUrl& url, const std::string& verify_name, bool verify,
              std::chrono::milliseconds timeout) {
    tcp::resolver resolver(ioc_);
    error_code ec;
    const auto endpoints = resolver.resolve(url.host, url.port, ec);
    if (ec) return Fail("cannot resolve " + url.host + ": " + ec.message());
    beast::get_lowest_layer(stream_).expires_after(timeout);
    ec = Run([&](auto h) { beast::get_lowest_layer(stream_).async_connect(endpoints, h); });
    if (ec) return Fail("cannot connect to " + url.host + ":" + url.port + ": " + ec.message());
    beast::get_lowest_layer(stream_).socket().set_option(tcp::no_delay(true), ec);
    SSL* ssl_handle = stream_.native_handle();
    if (!IsIpAddress(verify_name)) SSL_set_tlsext_host_name(ssl_handle, verify_name.c_str());
    if (verify) {
      X509_VERIFY_PARAM* param = SSL_get0_param(ssl_handle);
      if (IsIpAddress(verify_name)) {
        X509_VERIFY_PARAM_set1_ip_asc(param, verify_name.c_str());
      } else {
        X509_VERIFY_PARAM_set1_host(param, verify_name.c_str(), 0);
      }
    }
    beast::get_lowest_layer(stream_).expires_after(timeout);
    ec = Run([&](auto h) { stream_.async_handshake(ssl::stream_base::client, h); });
    if (ec) return Fail("TLS handshake with " + url.host + ":" + url.port + ": " + ec.message());
    return Status::Ok();
  }

  Status Write(http::request<http::string_body>& req, std::chrono::milliseconds timeout) {
    beast::get_lowest_layer(stream_).expires_after(timeout);
    const error_code ec = Run([&](auto h) { http::async_write(stream_, req, h); });
    if (ec) return Fail("sending the request: " + ec.message());
    return Status::Ok();
  }

  Status ReadResponse(http::response_parser<http::string_body>& parser,
                      std::chrono::milliseconds timeout) {
    beast::get_lowest_layer(stream_).expires_after(timeout);
    const error_code ec = Run([&](auto h) { http::async_read(stream_, buffer_, parser, h); });
    if (ec) return Fail("reading the response: " + ec.message());
    if (!parser.get().keep_alive()) reusable_ = false;
    return Status::Ok();
  }

  Status ReadHeader(http::response_parser<http::buffer_body>& parser,
                    std::chrono::milliseconds timeout) {
    beast::get_lowest_layer(stream_).expires_after(timeout);
    const error_code ec =
        Run([&](auto h) { http::async_read_header(stream_, buffer_, parser, h); });
    if (ec) return Fail("reading the response header: " + ec.message());
    return Status::Ok();
  }

  // Reads until some body bytes arrive in [data, data+size) or the message ends; returns the
  // number of bytes written (0 at the end).
  Result<size_t> ReadBody(http::response_parser<http::buffer_body>& parser, char* data, size_t size,
                          std::chrono::milliseconds idle_timeout) {
    while (!parser.is_done()) {
      if (cancelled_.load()) return Fail("cancelled");
      parser.get().body().data = data;
      parser.get().body().size = size;
      beast::get_lowest_layer(stream_).expires_after(idle_timeout);
      error_code ec = Run([&](auto h) { http::async_read_some(stream_, buffer_, parser, h); });
      if (ec == http::error::need_buffer) ec = {};
      if (cancelled_.load()) return Fail("cancelled");
      if (ec)
        return Fail(ec == beast::error::timeout
                        ? "no data for " + std::to_string(idle_timeout.count()) + " ms"
                        : ec.message());
      if (Status st = ParseBuffered(parser); !st.ok()) return st;
      const size_t n = size - parser.get().body().size;
      if (n > 0) return n;
    }
    return size_t{0};
  }

  // async_read_some parses one element of the body (a chunk header, a chunk's bytes) per call,
  // and a watch's server writes a chunk per event: the rest of what came with the read is
  // parsed here, without a trip through the io_context per element, until the body's buffer
  // is full or only part of an element is left. (The parser's eager option would do this, but
  // then a read that ends between two chunks waits for the next chunk: a watch's next event.)
  Status ParseBuffered(http::response_parser<http::buffer_body>& parser) {
    while (buffer_.size() > 0 && !parser.is_done() && parser.get().body().size > 0) {
      error_code ec;
      const size_t used = parser.put(buffer_.data(), ec);
      buffer_.consume(used);
      if (ec == http::error::need_more || ec == http::error::need_buffer) break;
      if (ec) return Fail("reading the response body: " + ec.message());
      if (used == 0) break;
    }
    return Status::Ok();
  }

  // Thread-safe: closes the socket from the connection's own context.
  void Cancel() {
    cancelled_.store(true);
    asio::post(ioc_, [this] {
      error_code ignored;
      beast::get_lowest_layer(stream_).socket().close(ignored);
    });
  }

  bool reusable() const { return reusable_ && !cancelled_.load(); }
  void MarkUnusable() { reusable_ = false; }

 private:
  template <typename Start>
  error_code Run(Start&& start) {
    error_code result = asio::error::would_block;
    start([&result](error_code ec, auto&&...) { result = ec; });
    ioc_.restart();
    ioc_.run();
    return result;
  }

  Status Fail(const std::string& what) {
    reusable_ = false;
    return Status(StatusCode::kUnavailable, what);
  }

  asio::io_context ioc_;
  beast::ssl_stream<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
  bool reusable_ = true;
  std::atomic<bool> cancelled_{false};
};

class BeastResponseStream : public ResponseStream {
 public:
  BeastResponseStream(std::unique_ptr<Connection> conn,
                      std::unique_ptr<http::response_parser<http::buffer_body>> parser)
      : conn_(std::move(conn)), parser_(std::move(parser)) {}

  int status() const override { return static_cast<int>(parser_->get().result_int()); }

  Result<std::string> ReadSome(std::chrono::milliseconds idle_timeout) override {
    Result<size_t> n = conn_->ReadBody(*parser_, chunk_.data(), chunk_.size(), idle_timeout);
    if (!n.ok()) return n.status();
    return std::string(chunk_.data(), *n);
  }

  void Cancel() override { conn_->Cancel(); }

 private:
  std::unique_ptr<Connection> conn_;
  std::unique_ptr<http::response_parser<http::buffer_body>> parser_;
  std::array<char, 64 * 1024> chunk_{};
};

class BeastTransport : public Transport {
 public:
  BeastTransport(ServerUrl url, const KubeConfig& config, TransportOptions options)
      : url_(std::move(url)),
        options_(std::move(options)),
        token_(config.token),
        verify_(!config.insecure_skip_tls_verify),
        verify_name_(config.tls_server_name.empty() ? url_.host : config.tls_server_name),
        ctx_(ssl::context::tls_client) {}

  Status Init(const KubeConfig& config) {
    error_code ec;
    ctx_.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    if (verify_) {
      ctx_.set_verify_mode(ssl::verify_peer, ec);
      if (config.ca_pem.empty()) {
        ctx_.set_default_verify_paths(ec);
      } else {
        ctx_.add_certificate_authority(asio::buffer(config.ca_pem), ec);
        if (ec) return Bad(config, "certificate authority", ec);
      }
    } else {
      ctx_.set_verify_mode(ssl::verify_none, ec);
    }
    if (!config.client_cert_pem.empty()) {
      ctx_.use_certificate_chain(asio::buffer(config.client_cert_pem), ec);
      if (ec) return Bad(config, "client certificate", ec);
      ctx_.use_private_key(asio::buffer(config.client_key_pem), ssl::context::pem, ec);
      if (ec) return Bad(config, "client key", ec);
    }
    return Status::Ok();
  }

  Exchange RoundTrip(const HttpRequest& request) override {
    Exchange ex;
    const std::string what = request.method + " " + request.target;
    // A pooled connection may have been closed by the server while idle: then try once more on
    // a fresh one (the server did not act on a request it never read).
    for (int attempt = 0; attempt < 2; ++attempt) {
      bool pooled = false;
      std::unique_ptr<Connection> conn = attempt == 0 ? TakeIdle() : nullptr;
      if (conn) {
        pooled = true;
      } else {
        Result<std::unique_ptr<Connection>> fresh = Connect();
        if (!fresh.ok()) {
          ex.error = ConnectionError(fresh.status().message(), what);
          ex.sent = false;
          return ex;
        }
        conn = std::move(*fresh);
      }
      http::request<http::string_body> req = Build(request);
      Status st = conn->Write(req, options_.request_timeout);
      http::response_parser<http::string_body> parser;
      parser.body_limit(kNoBodyLimit);
      if (st.ok()) st = conn->ReadResponse(parser, options_.request_timeout);
      if (!st.ok()) {
        if (pooled && attempt == 0) {
          DropIdle();  // the server closed this one; the others are likely stale too
          continue;
        }
        ex.error = ConnectionError(st.message(), what);
        ex.sent = true;
        return ex;
      }
      http::response<http::string_body> res = parser.release();
      ex.error = Status::Ok();
      ex.sent = true;
      ex.response.status = static_cast<int>(res.result_int());
      if (auto it = res.find(http::field::retry_after); it != res.end()) {
        ex.response.retry_after = std::string(it->value());
      }
      ex.response.body = std::move(res.body());
      if (conn->reusable()) GiveBack(std::move(conn));
      return ex;
    }
    ex.error = ConnectionError("unreachable", what);
    return ex;
  }

  Result<std::unique_ptr<ResponseStream>> OpenStream(const HttpRequest& request) override {
    const std::string what = request.method + " " + request.target;
    Result<std::unique_ptr<Connection>> conn = Connect();
    if (!conn.ok()) return ConnectionError(conn.status().message(), what);
    http::request<http::string_body> req = Build(request);
    Status st = (*conn)->Write(req, options_.request_timeout);
    auto parser = std::make_unique<http::response_parser<http::buffer_body>>();
    parser->body_limit(kNoBodyLimit);
    if (st.ok()) st = (*conn)->ReadHeader(*parser, options_.request_timeout);
    if (!st.ok()) return ConnectionError(st.message(), what);
    (*conn)->MarkUnusable();
    return std::unique_ptr<ResponseStream>(
        std::make_unique<BeastResponseStream>(std::move(*conn), std::move(parser)));
  }

  size_t IdleConnectionsForTest() override {
    std::lock_guard<std::mutex> lock(mu_);
    return idle_.size();
  }

 private:
  Status Bad(const KubeConfig& config, const std::string& what, const error_code& ec) {
    return InvalidArgument(config.source + ": context " + config.context + ": " + what +
                           " is not usable PEM: " + ec.message());
  }

  http::request<http::string_body> Build(const HttpRequest& r) const {
    http::request<http::string_body> req{http::string_to_verb(r.method),
                                         url_.path_prefix + r.target, 11};
    req.set(http::field::host, url_.host + ":" + url_.port);
    req.set(http::field::user_agent, options_.user_agent);
    req.set(http::field::accept, r.accept);
    if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);
    if (!r.content_type.empty()) req.set(http::field::content_type, r.content_type);
    for (const auto& [name, value] : options_.extra_headers) req.insert(name, value);
    req.keep_alive(true);
    req.body() = r.body;
    req.prepare_payload();
    return req;
  }

  Result<std::unique_ptr<Connection>> Connect() {
    auto conn = std::make_unique<Connection>(ctx_);
    Status st = conn->Open(url_, verify_name_, verify_, options_.connect_timeout);
    if (!st.ok()) return st;
    return conn;
  }

  std::unique_ptr<Connection> TakeIdle() {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.empty()) return nullptr;
    std::unique_ptr<Connection> c = std::move(idle_.back());
    idle_.pop_back();
    return c;
  }

  void DropIdle() {
    std::vector<std::unique_ptr<Connection>> stale;
    std::lock_guard<std::mutex> lock(mu_);
    stale.swap(idle_);
  }

  void GiveBack(std::unique_ptr<Connection> conn) {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.size() < options_.max_idle_connections) idle_.push_back(std::move(conn));
  }

  const ServerUrl url_;
  const TransportOptions options_;
  const std::string token_;
  const bool verify_;
  const std::string verify_name_;
  ssl::context ctx_;  // read-only after Init(); OpenSSL contexts are safe to share then
  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;  // guarded by mu_
};

}  // namespace

Result<ServerUrl> ParseServerUrl(const std::string& server) {
  const std::string scheme = "https://";
  if (server.rfind(scheme, 0) != 0) {
    return InvalidArgument("server '" + server + "' is not an https:// URL");
  }
  std::string rest = server.substr(scheme.size());
  ServerUrl url;
  const size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    url.path_prefix = rest.substr(slash);
    rest.resize(slash);
    while (!url.path_prefix.empty() && url.path_prefix.back() == '/') url.path_prefix.pop_back();
  }
  url.port = "443";
  if (!rest.empty() && rest[0] == '[') {
    const size_t close = rest.find(']');
    if (close == std::string::npos)
      return InvalidArgument("server '" + server + "': bad IPv6 host");
    url.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') url.port = rest.substr(close + 2);
  } else if (const size_t colon = rest.rfind(':'); colon != std::string::npos) {
    url.host = rest.substr(0, colon);
    url.port = rest.substr(colon + 1);
  } else {
    url.host = rest;
  }
  if (url.host.empty() || url.port.empty() ||
      url.port.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("server '" + server + "': expected https://host[:port]");
  }
  return url;
}

std::string QueryEscape(const std::string& value) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

Result<std::unique_ptr<Transport>> Transport::Create(const KubeConfig& config,
                                                     TransportOptions options) {
  Result<ServerUrl> url = ParseServerUrl(config.server);
  if (!url.ok()) return url.status();
  auto t = std::make_unique<BeastTransport>(std::move(*url), config, std::move(options));
  LOCKSTEP_RETURN_IF_ERROR(t->Init(config));
  return std::unique_ptr<Transport>(std::move(t));
}

}  // namespace lockstep::kube
