#include "backend/kubernetes/client/exec_stream.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <cctype>
#include <deque>
#include <fstream>
#include <iterator>

#include "backend/kubernetes/client/transport.h"

namespace lockstep::kube {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

Status Unavailable(std::string m) {
  return Status(StatusCode::kUnavailable, std::move(m));
}

bool IsIpAddress(const std::string& host) {
  error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// The kubeconfig's trust and identity, as the Transport sets them (transport.cc).
Status ConfigureTls(ssl::context& ctx, const KubeConfig& config) {
  error_code ec;
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                  ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  if (config.insecure_skip_tls_verify) {
    ctx.set_verify_mode(ssl::verify_none, ec);
  } else {
    ctx.set_verify_mode(ssl::verify_peer, ec);
    if (config.ca_pem.empty())
      ctx.set_default_verify_paths(ec);
    else
      ctx.add_certificate_authority(asio::buffer(config.ca_pem), ec);
    if (ec) return InvalidArgument(config.source + ": certificate authority: " + ec.message());
  }
  if (!config.client_cert_pem.empty()) {
    ctx.use_certificate_chain(asio::buffer(config.client_cert_pem), ec);
    if (!ec) ctx.use_private_key(asio::buffer(config.client_key_pem), ssl::context::pem, ec);
    if (ec) return InvalidArgument(config.source + ": client certificate: " + ec.message());
  }
  return Status::Ok();
}

// SNI and the name the server's certificate must carry, as the Transport checks them.
void CheckServerName(SSL* handle, const std::string& name, bool verify) {
  if (!IsIpAddress(name)) SSL_set_tlsext_host_name(handle, name.c_str());
  if (!verify) return;
  X509_VERIFY_PARAM* param = SSL_get0_param(handle);
  if (IsIpAddress(name))
    X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
  else
    X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
}

// The bearer token: a token file (a projected ServiceAccount token) is read at each exec, as it
// is rotated; else the kubeconfig's.
std::string BearerTokenOf(const KubeConfig& config) {
  if (config.token_file.empty()) return config.token;
  std::ifstream in(config.token_file);
  std::string fresh((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!fresh.empty() && std::isspace(static_cast<unsigned char>(fresh.back()))) fresh.pop_back();
  return fresh.empty() ? config.token : fresh;
}

class BeastExecStream : public ExecStream {
 public:
  explicit BeastExecStream(OutputFn on_output)
      : ctx_(ssl::context::tls_client), on_output_(std::move(on_output)) {}

  Status Open(const KubeConfig& config, const std::string& target,
              std::chrono::milliseconds timeout) {
    // The context first: a stream copies its verification and identity when it is made.
    LOCKSTEP_RETURN_IF_ERROR(ConfigureTls(ctx_, config));
    ws_ = std::make_unique<WebSocket>(ioc_, ctx_);
    WebSocket& ws = *ws_;
    Result<ServerUrl> url = ParseServerUrl(config.server);
    if (!url.ok()) return url.status();
    const std::string what = "exec " + target.substr(0, target.find('?'));
    tcp::resolver resolver(ioc_);
    error_code ec;
    const auto endpoints = resolver.resolve(url->host, url->port, ec);
    if (ec) return Unavailable(what + ": cannot resolve " + url->host + ": " + ec.message());
    auto& tcp_layer = beast::get_lowest_layer(ws);
    tcp_layer.expires_after(timeout);
    ec = RunOne([&](auto h) { tcp_layer.async_connect(endpoints, h); });
    if (ec) return Unavailable(what + ": cannot connect to " + config.server + ": " + ec.message());
    tcp_layer.socket().set_option(tcp::no_delay(true), ec);
    CheckServerName(ws.next_layer().native_handle(),
                    config.tls_server_name.empty() ? url->host : config.tls_server_name,
                    !config.insecure_skip_tls_verify);
    tcp_layer.expires_after(timeout);
    ec = RunOne([&](auto h) { ws.next_layer().async_handshake(ssl::stream_base::client, h); });
    if (ec) return Unavailable(what + ": TLS handshake: " + ec.message());
    const std::string token = BearerTokenOf(config);
    ws.set_option(websocket::stream_base::decorator([token](websocket::request_type& req) {
      req.set(http::field::sec_websocket_protocol, kExecSubprotocol);
      req.set(http::field::user_agent, "lockstep/0.1");
      if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    }));
    websocket::response_type res;
    tcp_layer.expires_after(timeout);
    ec = RunOne([&](auto h) {
      ws.async_handshake(res, url->host + ":" + url->port, url->path_prefix + target, h);
    });
    if (ec) {
      std::string answer = res.result_int() != 0 ? " (HTTP " + std::to_string(res.result_int()) +
                                                       ": " + res.body().substr(0, 300) + ")"
                                                 : "";
      return Unavailable(what + ": " + ec.message() + answer);
    }
    // The command may stay silent for as long as it likes: no deadline from here on.
    tcp_layer.expires_never();
    ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::client));
    ws.binary(true);
    return Status::Ok();
  }

  Result<int> Run() override {
    ReadNext();
    ioc_.restart();
    ioc_.run();
    if (closed_.load()) return Unavailable("exec stream closed");
    if (!status_.empty()) return ExitCodeOfExecStatus(status_);
    if (!frame_error_.ok()) return frame_error_;
    return Unavailable("exec stream ended without the command's status: " + read_error_.message());
  }

  void SendStdin(std::string data) override {
    if (!data.empty()) Post(EncodeExecFrame(ExecChannel::kStdin, data));
  }

  void Resize(int rows, int cols) override {
    Post(EncodeExecFrame(ExecChannel::kResize, EncodeTerminalSize(rows, cols)));
  }

  void Close() override {
    closed_.store(true);
    asio::post(ioc_, [this] {
      error_code ignored;
      beast::get_lowest_layer(*ws_).socket().close(ignored);
    });
  }

 private:
  // Runs one asynchronous step to completion on this thread (Open only: before Run).
  template <typename Start>
  error_code RunOne(Start&& start) {
    error_code result = asio::error::would_block;
    start([&result](error_code ec, auto&&...) { result = ec; });
    ioc_.restart();
    ioc_.run();
    return result;
  }

  void ReadNext() {
    ws_->async_read(in_, [this](error_code ec, std::size_t) {
      if (ec) {
        read_error_ = ec;
        error_code ignored;
        beast::get_lowest_layer(*ws_).socket().close(ignored);  // ends pending writes too
        return;
      }
      const std::string message = beast::buffers_to_string(in_.data());
      in_.consume(in_.size());
      Result<ExecFrame> frame = DecodeExecFrame(message);
      if (!frame.ok()) {
        frame_error_ = frame.status();
      } else if (frame->channel == ExecChannel::kError) {
        status_ += frame->data;
      } else if (!frame->data.empty() && (frame->channel == ExecChannel::kStdout ||
                                          frame->channel == ExecChannel::kStderr)) {
        on_output_(frame->channel, std::move(frame->data));
      }
      ReadNext();
    });
  }

  void Post(std::string message) {
    asio::post(ioc_, [this, m = std::move(message)]() mutable {
      out_.push_back(std::move(m));
      if (out_.size() == 1) WriteNext();
    });
  }

  void WriteNext() {
    ws_->async_write(asio::buffer(out_.front()), [this](error_code ec, std::size_t) {
      if (ec) {
        out_.clear();
        return;
      }
      out_.pop_front();
      if (!out_.empty()) WriteNext();
    });
  }

  asio::io_context ioc_;
  ssl::context ctx_;
  using WebSocket = websocket::stream<beast::ssl_stream<beast::tcp_stream>>;
  std::unique_ptr<WebSocket> ws_;  // made by Open
  OutputFn on_output_;
  beast::flat_buffer in_;        // Run's thread only
  std::deque<std::string> out_;  // Run's thread only: messages being written, in order
  std::string status_;           // the error channel's bytes
  Status frame_error_;
  error_code read_error_;
  std::atomic<bool> closed_{false};
};

}  // namespace

Result<std::unique_ptr<ExecStream>> ExecStream::Open(const KubeConfig& config,
                                                     const std::string& target,
                                                     std::chrono::milliseconds timeout,
                                                     OutputFn on_output) {
  auto s = std::make_unique<BeastExecStream>(std::move(on_output));
  LOCKSTEP_RETURN_IF_ERROR(s->Open(config, target, timeout));
  return std::unique_ptr<ExecStream>(std::move(s));
}

}  // namespace lockstep::kube
