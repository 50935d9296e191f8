// Internal to the server: opening its listening sockets and its TLS context.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl/context.hpp>
#include <string>
#include <utility>

#include "common/status.h"

namespace lockstep::server {

// "HOST:PORT" or "[V6]:PORT" -> (host, port). InvalidArgument naming --listen otherwise.
Result<std::pair<std::string, std::string>> SplitHostPort(const std::string& listen);

// A server context with TLS 1.2 and later, the certificate chain and its key (checked to match).
Status LoadTlsContext(boost::asio::ssl::context& tls, const std::string& cert_file,
                      const std::string& key_file);

// Listening on `listen` (HOST:PORT; port 0 picks one).
Result<boost::asio::ip::tcp::acceptor> ListenTcp(const boost::asio::any_io_executor& executor,
                                                 const std::string& listen);

// Listening on `path`, replacing a stale socket file; the socket is made world-connectable.
Result<boost::asio::local::stream_protocol::acceptor> ListenUnix(
    const boost::asio::any_io_executor& executor, const std::string& path);

}  // namespace lockstep::server
