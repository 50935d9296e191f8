// lockstep web --port N: the web view on a local port, for the user who runs it. A small HTTP
// proxy on 127.0.0.1 that forwards GET requests to lockstepd as that user (its Unix socket, or
// $LOCKSTEP_SERVER with $LOCKSTEP_TOKEN), so that the page sees what the user may see. Other
// local users could reach the port too: it answers only a browser that brings the secret key of
// the printed URL (then kept in a cookie). Runs until interrupted.
#include <CLI/CLI.hpp>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>

#include "cli/cli_util.h"
#include "cli/commands.h"

namespace lockstep::cli {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string RandomKey() {
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  unsigned char bytes[16] = {};
  urandom.read(reinterpret_cast<char*>(bytes), sizeof bytes);
  static const char* hex = "0123456789abcdef";
  std::string key;
  for (unsigned char b : bytes) key += {hex[b >> 4], hex[b & 15]};
  return key;
}

// Whether the request brings the key: in the cookie, or as ?key= (the printed URL).
bool HasKey(const http::request<http::string_body>& req, const std::string& key) {
  const std::string cookie(req[http::field::cookie]);
  if (cookie.find("lockstep_web=" + key) != std::string::npos) return true;
  const std::string target(req.target());
  return target.find("key=" + key) != std::string::npos;
}

http::response<http::string_body> Answer(unsigned code, std::string body, const char* type) {
  http::response<http::string_body> res{static_cast<http::status>(code), 11};
  res.set(http::field::content_type, type);
  res.set(http::field::cache_control, "no-store");
  res.body() = std::move(body);
  res.keep_alive(false);
  res.prepare_payload();
  return res;
}

void Serve(tcp::socket socket, const std::string& key, std::atomic<int>& open) {
  beast::error_code ec;
  beast::flat_buffer buffer;
  http::request<http::string_body> req;
  http::read(socket, buffer, req, ec);
  if (!ec) {
    http::response<http::string_body> res;
    std::string target(req.target());
    if (!HasKey(req, key)) {
      res = Answer(403, "open the URL that lockstep web printed (it carries the key)\n",
                   "text/plain");
    } else if (req.method() != http::verb::get) {
      res = Answer(405, "{\"error\":\"the web view only reads\"}", "application/json");
    } else {
      const bool page = target == "/" || target.rfind("/?", 0) == 0 || target.rfind("/web", 0) == 0;
      client::ApiClient api;  // one per request: a long poll holds its own connection
      Result<std::pair<unsigned, std::string>> got = api.GetRaw(page ? "/web" : target);
      if (!got.ok())
        res = Answer(502, nlohmann::json{{"error", got.status().message()}}.dump(),
                     "application/json");
      else
        res = Answer(got->first, std::move(got->second),
                     page ? "text/html; charset=utf-8" : "application/json");
      if (page)
        res.set(http::field::set_cookie,
                "lockstep_web=" + key + "; HttpOnly; SameSite=Strict; Path=/");
    }
    http::write(socket, res, ec);
  }
  socket.shutdown(tcp::socket::shutdown_both, ec);
  open.fetch_sub(1);
}

}  // namespace

int RunWeb(int argc, char** argv) {
  CLI::App app{"Serve the web view on a local port, as you", "lockstep web"};
  int port = 8080;
  app.add_option("--port", port, "the local port (127.0.0.1)")->check(CLI::Range(1, 65535));
  CLI11_PARSE(app, argc, argv);
  {  // lockstepd answers before the browser is pointed at us.
    client::ApiClient api;
    Result<nlohmann::json> me = api.Get("/api/v1/web/whoami");
    if (!me.ok()) return Fail("lockstep web", me.status());
  }
  asio::io_context io;
  tcp::acceptor acceptor(io);
  beast::error_code ec;
  tcp::endpoint at(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port));
  acceptor.open(at.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(at, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Fail("lockstep web", "--port " + std::to_string(port) + ": " + ec.message());
  const std::string key = RandomKey();
  std::printf("lockstep web: open http://127.0.0.1:%d/?key=%s\n", port, key.c_str());
  std::fflush(stdout);
  std::atomic<int> open{0};
  constexpr int kMaxConnections = 64;  // each long poll of the page holds one
  for (;;) {
    tcp::socket socket(io);
    acceptor.accept(socket, ec);
    if (ec) continue;
    if (open.load() >= kMaxConnections) continue;  // closed: the browser retries
    open.fetch_add(1);
    std::thread([s = std::move(socket), &key, &open]() mutable {
      Serve(std::move(s), key, open);
    }).detach();
  }
}

}  // namespace lockstep::cli
