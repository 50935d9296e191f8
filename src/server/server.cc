#include "server/server.h"

#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cerrno>
#include <chrono>
#include <thread>
#include <vector>

#include "server/listen.h"
#include "server/server_core.h"
#include "server/sessions.h"

namespace lockstep::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using unix_protocol = asio::local::stream_protocol;

namespace {

// Accepts connections on one listening socket and hands each to `serve`, on a strand of its
// own. Owned by its pending accept (shared_ptr) and by the Server's Runtime.
template <class Protocol>
class AcceptLoop : public std::enable_shared_from_this<AcceptLoop<Protocol>> {
 public:
  using Acceptor = typename Protocol::acceptor;
  using Socket = typename Protocol::socket;
  using Serve = void (*)(std::shared_ptr<ServerCore>, Socket);

  AcceptLoop(std::shared_ptr<ServerCore> core, Acceptor acceptor, Serve serve)
      : core_(std::move(core)),
        acceptor_(std::move(acceptor)),
        retry_(acceptor_.get_executor()),
        serve_(serve) {}

  void Start() {
    asio::dispatch(acceptor_.get_executor(), [self = this->shared_from_this()] { self->Accept(); });
  }
  // Any thread: closes the listening socket (on its strand).
  void Stop() {
    asio::post(acceptor_.get_executor(), [self = this->shared_from_this()] {
      boost::system::error_code ignored;
      self->acceptor_.close(ignored);
      self->retry_.cancel();
    });
  }

 private:
  void Accept() {
    acceptor_.async_accept(
        asio::make_strand(core_->io),
        [self = this->shared_from_this()](boost::system::error_code ec, Socket socket) {
          self->OnAccept(ec, std::move(socket));
        });
  }

  void OnAccept(boost::system::error_code ec, Socket socket) {
    if (!acceptor_.is_open() || ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors before the cap (RLIMIT_NOFILE below max_connections): free one as
      // the cap would. Any error: try again a little later rather than spin.
      const bool shed =
          (ec.value() == EMFILE || ec.value() == ENFILE) && core_->connections.CloseOneIdle();
      retry_.expires_after(std::chrono::milliseconds(shed ? 1 : 10));
      retry_.async_wait([self = this->shared_from_this()](boost::system::error_code e) {
        if (!e && self->acceptor_.is_open()) self->Accept();
      });
      return;
    }
    if (!core_->IsStopped()) serve_(core_, std::move(socket));
    Accept();
  }

  std::shared_ptr<ServerCore> core_;
  Acceptor acceptor_;
  asio::steady_timer retry_;
  Serve serve_;
};

}  // namespace

struct Server::Runtime {
  std::shared_ptr<AcceptLoop<unix_protocol>> unix_loop;
  std::shared_ptr<AcceptLoop<tcp>> tcp_loop;
  int tcp_port = 0;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;
};

Result<std::unique_ptr<Server>> Server::Start(const ServerOptions& options, Handler& handler,
                                              Authenticator* authenticator) {
  LOCKSTEP_RETURN_IF_ERROR(ValidateServerOptions(options));
  if (!options.listen.empty() && authenticator == nullptr)
    return InvalidArgument("server: --listen needs an authenticator for bearer tokens");
  auto core = std::make_shared<ServerCore>(options, handler, authenticator);
  auto runtime = std::make_unique<Runtime>();
  if (!options.listen.empty()) {
    LOCKSTEP_RETURN_IF_ERROR(LoadTlsContext(core->tls, options.tls_cert, options.tls_key));
    Result<tcp::acceptor> acceptor = ListenTcp(asio::make_strand(core->io), options.listen);
    if (!acceptor.ok()) return acceptor.status();
    boost::system::error_code ec;
    runtime->tcp_port = acceptor->local_endpoint(ec).port();
    runtime->tcp_loop =
        std::make_shared<AcceptLoop<tcp>>(core, std::move(*acceptor), &ServeTlsConnection);
  }
  Result<unix_protocol::acceptor> unix_acceptor =
      ListenUnix(asio::make_strand(core->io), options.socket_path);
  if (!unix_acceptor.ok()) return unix_acceptor.status();
  runtime->unix_loop = std::make_shared<AcceptLoop<unix_protocol>>(core, std::move(*unix_acceptor),
                                                                   &ServeUnixConnection);

  runtime->unix_loop->Start();
  if (runtime->tcp_loop) runtime->tcp_loop->Start();
  runtime->work.emplace(core->io.get_executor());
  for (int i = 0; i < options.io_threads; ++i)
    runtime->threads.emplace_back([io = &core->io] { io->run(); });
  return std::unique_ptr<Server>(new Server(std::move(core), std::move(runtime)));
}

Server::Server(std::shared_ptr<ServerCore> core, std::unique_ptr<Runtime> runtime)
    : core_(std::move(core)), runtime_(std::move(runtime)) {}

Server::~Server() {
  // From now on answers are dropped and nothing new is admitted; then every socket closes,
  // which completes every pending operation, and the I/O threads run out of work.
  core_->MarkStopped();
  runtime_->unix_loop->Stop();
  if (runtime_->tcp_loop) runtime_->tcp_loop->Stop();
  core_->connections.CloseAll();
  runtime_->work.reset();
  for (std::thread& t : runtime_->threads) t.join();
  ::unlink(core_->options.socket_path.c_str());
}

int Server::tcp_port() const {
  return runtime_->tcp_port;
}

std::size_t Server::connection_count() const {
  return core_->connections.size();
}

std::size_t Server::tcp_connection_count() const {
  return core_->connections.tcp_size();
}

}  // namespace lockstep::server
