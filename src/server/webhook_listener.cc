#include "server/webhook_listener.h"

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "server/listen.h"

namespace lockstep::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;

struct WebhookListener::Impl {
  Options options;
  Serve serve;
  std::atomic<std::size_t> open{0};  // before io: connections the context drops count down
  asio::io_context io;
  ssl::context tls{ssl::context::tls_server};
  std::optional<asio::ip::tcp::acceptor> acceptor;
  std::vector<std::thread> threads;

  void Accept();
};

namespace {

// One connection: the TLS handshake, then requests one after another while the client keeps it
// alive, each read, answered and written within the deadline.
struct Connection : std::enable_shared_from_this<Connection> {
  Connection(asio::ip::tcp::socket s, WebhookListener::Impl& l)
      : stream(std::move(s), l.tls), owner(l) {}
  ~Connection() { owner.open.fetch_sub(1); }

  void Run() {
    beast::get_lowest_layer(stream).expires_after(owner.options.deadline);
    stream.async_handshake(ssl::stream_base::server,
                           [self = shared_from_this()](beast::error_code ec) {
                             if (!ec) self->Read(true);
                           });
  }

  void Read(bool first) {
    parser.emplace();
    parser->header_limit(16 * 1024);
    parser->body_limit(owner.options.max_body_bytes);
    // Between requests the idle timeout; once bytes come, the deadline (set in Answer's
    // write callback for the next one, and here for the first).
    beast::get_lowest_layer(stream).expires_after(first ? owner.options.deadline
                                                        : owner.options.idle_timeout);
    http::async_read(stream, buffer, *parser,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec == http::error::body_limit) {
                         self->Reply(JsonError(http::status::payload_too_large,
                                               "the request is larger than this webhook takes"),
                                     false);
                         return;
                       }
                       if (!ec) self->Answer();
                     });
  }

  void Answer() {
    beast::get_lowest_layer(stream).expires_after(owner.options.deadline);
    const Request& req = parser->get();
    Response res = req.method() == http::verb::post
                       ? owner.serve(req)
                       : JsonError(http::status::method_not_allowed, "only POST is served here");
    Reply(std::move(res), req.keep_alive());
  }

  void Reply(Response res, bool keep_alive) {
    response = std::move(res);
    response.keep_alive(keep_alive);
    response.prepare_payload();
    http::async_write(stream, response,
                      [self = shared_from_this(), keep_alive](beast::error_code ec, std::size_t) {
                        if (ec) return;
                        if (keep_alive) {
                          self->Read(false);
                          return;
                        }
                        beast::get_lowest_layer(self->stream).expires_after(std::chrono::seconds(2));
                        self->stream.async_shutdown([self](beast::error_code) {});
                      });
  }

  beast::ssl_stream<beast::tcp_stream> stream;
  WebhookListener::Impl& owner;
  beast::flat_buffer buffer;
  std::optional<http::request_parser<http::string_body>> parser;
  Response response;
};

}  // namespace

void WebhookListener::Impl::Accept() {
  acceptor->async_accept([this](beast::error_code ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) {
      if (open.fetch_add(1) >= options.max_connections) {
        open.fetch_sub(1);  // closed at once: the API server opens another later
      } else {
        socket.set_option(asio::ip::tcp::no_delay(true), ec);
        std::make_shared<Connection>(std::move(socket), *this)->Run();
      }
    }
    Accept();
  });
}

Result<std::unique_ptr<WebhookListener>> WebhookListener::Start(const Options& options,
                                                                Serve serve) {
  if (options.max_connections < 1 || options.threads < 1)
    return InvalidArgument("admission.webhook: max_connections and threads must be at least 1");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->serve = std::move(serve);
  if (Status s = LoadTlsContext(impl->tls, options.tls_cert, options.tls_key); !s.ok())
    return InvalidArgument("admission.webhook: " + s.message());
  Result<asio::ip::tcp::acceptor> acceptor = ListenTcp(impl->io.get_executor(), options.listen);
  if (!acceptor.ok()) return InvalidArgument("admission.webhook.listen: " + acceptor.status().message());
  impl->acceptor.emplace(std::move(*acceptor));
  impl->Accept();
  Impl* raw = impl.get();
  for (int i = 0; i < options.threads; ++i) impl->threads.emplace_back([raw] { raw->io.run(); });
  return std::unique_ptr<WebhookListener>(new WebhookListener(std::move(impl)));
}

WebhookListener::WebhookListener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

WebhookListener::~WebhookListener() {
  impl_->io.stop();  // connections in flight are dropped with the context
  for (std::thread& t : impl_->threads) t.join();
}

int WebhookListener::port() const { return impl_->acceptor->local_endpoint().port(); }

}  // namespace lockstep::server
