// Internal to the server: one connection's HTTP/1.1 exchange, shared by the Unix socket and the
// TLS transports (after Beast's advanced server: a CRTP base over the transport's stream).
//
// Every member function runs on the connection's strand, except Deliver and CloseSoon, which
// any thread may call and which post to the strand. The session is owned by its pending
// asynchronous operations and by the Responders of its requests (shared_ptr); the server's
// ConnectionTable holds only a weak reference.
//
// The exchange, with the deadline that bounds each step (ServerOptions):
//   [transport start: SO_PEERCRED, or the TLS handshake (tls_handshake_timeout)]
//   read the headers (header_timeout) -> authorize (Derived) -> read the body (body_timeout)
//   -> the handler (no deadline: long polls) -> write the answer (write_timeout)
//   -> keep-alive: wait for the next request's first byte (idle_timeout), then its headers.
// A refusal (400, 401, 413, 431, 503) is written with "Connection: close"; the server then
// reads and discards what the client still sends for linger_timeout and closes.
#pragma once

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "server/server_core.h"

namespace lockstep::server {

namespace session_detail {
// True for the errors of a malformed request (as opposed to a closed or timed-out stream).
bool IsMalformedRequest(const boost::system::error_code& ec);
// The 413 answer, naming the limit.
Response BodyTooLarge(std::uint64_t limit);
}  // namespace session_detail

template <class Derived>
class HttpSession : public ResponseSink,
                    public Closable,
                    public std::enable_shared_from_this<HttpSession<Derived>> {
 public:
  explicit HttpSession(std::shared_ptr<ServerCore> core) : core_(std::move(core)) {}
  ~HttpSession() override {
    if (!closed_) core_->connections.Remove(id_);
  }

  // Takes the connection into the table (closing an idle one when full) and starts it.
  void Run(Transport transport) {
    executor_ = Lowest().get_executor();
    boost::asio::dispatch(executor_, [self = Self(), transport] {
      HttpSession& s = *self;
      s.id_ = s.core_->connections.Admit(s.weak_from_this(), transport);
      if (s.id_ == 0) {  // every connection is busy: refused
        s.closed_ = true;
        s.Lowest().close();
        return;
      }
      s.derived().Begin();
    });
  }

  // ResponseSink: any thread.
  void Deliver(Response response) override {
    auto self = Self();
    core_->PostUnlessStopped(executor_, [self, r = std::move(response)]() mutable {
      self->WriteAnswer(std::move(r), false);
    });
  }

  // Closable: any thread.
  void CloseSoon() override {
    boost::asio::post(executor_, [self = Self()] { self->Close(); });
  }

 protected:
  Derived& derived() { return static_cast<Derived&>(*this); }
  auto& Lowest() { return boost::beast::get_lowest_layer(derived().stream()); }
  std::shared_ptr<HttpSession> Self() { return this->shared_from_this(); }
  // The connection's strand: safe to use from any thread once Run has started.
  const boost::asio::any_io_executor& executor() const { return executor_; }
  const ServerOptions& options() const { return core_->options; }
  ServerCore& core() { return *core_; }
  ConnectionTable::Id id() const { return id_; }
  bool closed() const { return closed_; }
  Caller& caller() { return caller_; }
  const Request& request_header() { return parser_->get(); }

  // A request's headers, within header_timeout: from the connection's start, or from the first
  // byte of a later request.
  void ReadRequestHeaders() {
    Lowest().expires_after(options().header_timeout);
    ReadHeader();
  }

  // Derived's Authorize() ends here when the request may proceed: reads its body.
  void ReadBody() {
    if (closed_) return;
    if (parser_->is_done()) return Dispatch();
    Lowest().expires_after(options().body_timeout);
    boost::beast::http::async_read(
        derived().stream(), buffer_, *parser_,
        [self = Self()](boost::system::error_code ec, std::size_t) { self->OnBody(ec); });
  }

  // Answers with "Connection: close", then lingers and closes: nothing more is read.
  void Refuse(Response response) {
    if (closed_) return;
    WriteAnswer(std::move(response), true);
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    core_->connections.Remove(id_);
    boost::system::error_code ignored;
    Lowest().socket().shutdown(boost::asio::socket_base::shutdown_both, ignored);
    Lowest().close();
  }

 private:
  void ReadHeader() {
    parser_.emplace();
    parser_->body_limit(options().max_body_bytes);
    parser_->header_limit(options().max_header_bytes);
    boost::beast::http::async_read_header(
        derived().stream(), buffer_, *parser_,
        [self = Self()](boost::system::error_code ec, std::size_t) { self->OnHeader(ec); });
  }

  void OnHeader(boost::system::error_code ec) {
    namespace http = boost::beast::http;
    if (closed_) return;
    if (ec == http::error::body_limit)
      return Refuse(session_detail::BodyTooLarge(options().max_body_bytes));
    if (ec == http::error::header_limit)
      return Refuse(JsonError(http::status::request_header_fields_too_large,
                              "the request's headers are larger than the limit of " +
                                  std::to_string(options().max_header_bytes) + " bytes"));
    if (ec && session_detail::IsMalformedRequest(ec))
      return Refuse(JsonError(http::status::bad_request, "malformed HTTP request"));
    if (ec) return Close();  // closed by the client, or the deadline passed
    derived().Authorize();
  }

  void OnBody(boost::system::error_code ec) {
    namespace http = boost::beast::http;
    if (closed_) return;
    if (ec == http::error::body_limit)
      return Refuse(session_detail::BodyTooLarge(options().max_body_bytes));
    if (ec && session_detail::IsMalformedRequest(ec))
      return Refuse(JsonError(http::status::bad_request, "malformed HTTP request"));
    if (ec) return Close();
    Dispatch();
  }

  // The request is whole: the handler has it until it answers. No deadline meanwhile.
  void Dispatch() {
    core_->connections.MarkBusy(id_);
    Lowest().expires_never();
    Request request = parser_->release();
    parser_.reset();
    keep_alive_ = request.keep_alive();
    Responder respond(Self());
    try {
      core_->handler.Handle(std::move(request), caller_, respond);
    } catch (...) {  // a handler must not throw; the client is told nothing of the exception
      respond.Respond(JsonError(boost::beast::http::status::internal_server_error,
                                "internal error while handling the request"));
    }
  }

  void WriteAnswer(Response response, bool close_after) {
    if (closed_) return;
    const bool keep = !close_after && keep_alive_ && response.keep_alive();
    auto answer = std::make_shared<Response>(std::move(response));
    answer->keep_alive(keep);
    answer->prepare_payload();
    core_->connections.MarkBusy(id_);
    Lowest().expires_after(options().write_timeout);
    boost::beast::http::async_write(
        derived().stream(), *answer,
        [self = Self(), answer, keep, close_after](boost::system::error_code ec, std::size_t) {
          self->OnWritten(ec, keep, close_after);
        });
  }

  void OnWritten(boost::system::error_code ec, bool keep, bool lingering) {
    if (closed_) return;
    if (ec) return Close();
    if (lingering) return Linger();
    if (!keep) return Close();
    core_->connections.MarkIdle(id_);
    WaitForNextRequest();
  }

  // Keep-alive: the next request's first byte within idle_timeout, then its headers within
  // header_timeout. Bytes already buffered (a pipelined request) start the headers at once.
  void WaitForNextRequest() {
    if (buffer_.size() > 0) return ReadRequestHeaders();
    Lowest().expires_after(options().idle_timeout);
    derived().stream().async_read_some(
        buffer_.prepare(1024), [self = Self()](boost::system::error_code ec, std::size_t n) {
          if (self->closed_) return;
          if (ec) return self->Close();
          self->buffer_.commit(n);
          self->ReadRequestHeaders();
        });
  }

  // After a refusal: no more writing; what the client still sends is read and discarded until
  // it closes or linger_timeout passes, so that it reads the answer rather than a reset.
  void Linger() {
    core_->connections.MarkIdle(id_);
    boost::system::error_code ignored;
    Lowest().socket().shutdown(boost::asio::socket_base::shutdown_send, ignored);
    Lowest().expires_after(options().linger_timeout);
    DiscardInput();
  }

  void DiscardInput() {
    Lowest().async_read_some(boost::asio::buffer(discard_),
                             [self = Self()](boost::system::error_code ec, std::size_t) {
                               if (self->closed_) return;
                               if (ec) return self->Close();
                               self->DiscardInput();
                             });
  }

  std::shared_ptr<ServerCore> core_;
  boost::asio::any_io_executor executor_;  // set by Run, before the session is shared
  ConnectionTable::Id id_ = 0;
  bool closed_ = false;
  bool keep_alive_ = true;
  Caller caller_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  char discard_[4096];
};

}  // namespace lockstep::server
