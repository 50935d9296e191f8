#include "server/metrics_listener.h"

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <thread>

#include "server/listen.h"

namespace lockstep::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

struct MetricsListener::Impl {
  Options options;
  Serve serve;
  std::atomic<std::size_t> open{0};  // before io: connections the context drops count down
  asio::io_context io;
  std::optional<asio::ip::tcp::acceptor> acceptor;
  std::thread thread;

  void Accept();
  void Session(asio::ip::tcp::socket socket);
};

namespace {

// One connection: one request read within the deadline, one answer, then close.
struct Connection : std::enable_shared_from_this<Connection> {
  Connection(asio::ip::tcp::socket s, MetricsListener::Impl& l) : stream(std::move(s)), owner(l) {}
  ~Connection() { owner.open.fetch_sub(1); }

  void Run() {
    stream.expires_after(owner.options.deadline);
    parser.header_limit(8 * 1024);
    parser.body_limit(4 * 1024);
    http::async_read(stream, buffer, parser,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (!ec) self->Answer();
                     });
  }

  void Answer() {
    const Request& req = parser.get();
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      response = JsonError(http::status::method_not_allowed, "only GET is served here");
    } else {
      response = owner.serve(req);
    }
    response.keep_alive(false);
    if (req.method() == http::verb::head) response.body().clear();
    response.prepare_payload();
    http::async_write(
        stream, response, [self = shared_from_this()](beast::error_code, std::size_t) {
          beast::error_code ignored;
          self->stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
        });
  }

  beast::tcp_stream stream;
  MetricsListener::Impl& owner;
  beast::flat_buffer buffer;
  http::request_parser<http::string_body> parser;
  Response response;
};

}  // namespace

void MetricsListener::Impl::Accept() {
  acceptor->async_accept([this](beast::error_code ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) Session(std::move(socket));
    Accept();
  });
}

void MetricsListener::Impl::Session(asio::ip::tcp::socket socket) {
  if (open.fetch_add(1) >= options.max_connections) {
    open.fetch_sub(1);
    return;  // closed at once: scrapers retry at their next interval
  }
  std::make_shared<Connection>(std::move(socket), *this)->Run();
}

Result<std::unique_ptr<MetricsListener>> MetricsListener::Start(const Options& options,
                                                                Serve serve) {
  if (options.max_connections < 1)
    return InvalidArgument("--metrics-listen: max_connections must be at least 1");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->serve = std::move(serve);
  Result<asio::ip::tcp::acceptor> acceptor = ListenTcp(impl->io.get_executor(), options.listen);
  if (!acceptor.ok()) return InvalidArgument("--metrics-listen: " + acceptor.status().message());
  impl->acceptor.emplace(std::move(*acceptor));
  impl->Accept();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->io.run(); });
  return std::unique_ptr<MetricsListener>(new MetricsListener(std::move(impl)));
}

MetricsListener::MetricsListener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsListener::~MetricsListener() {
  impl_->io.stop();  // connections in flight are dropped with the context
  impl_->thread.join();
}

int MetricsListener::port() const {
  return impl_->acceptor->local_endpoint().port();
}

}  // namespace lockstep::server
