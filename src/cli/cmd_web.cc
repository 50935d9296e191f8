// lockstep web --port N: the web view on a local port, for the user who runs it. A small HTTP
// proxy on 127.0.0.1 that forwards GET requests to lockstepd as that user (its Unix socket, or
// $LOCKSTEP_SERVER with $LOCKSTEP_TOKEN), so that the page sees what the user may see. Other
// local users can reach the port too:
//   - it answers only a browser that holds the cookie of its secret key. The key never goes on
//     a command line (where `ps` shows it to everyone) nor in a URL sent to the proxy: it is
//     written to a login file only the user can read (`login.html`, in a private directory);
//     the file sends the browser to /login#KEY, whose page posts the fragment back and gets the
//     cookie (docs/security.md, "Findings of the adversarial test (LOW)");
//   - one thread serves every connection, each with a deadline to send its request, and the key
//     is checked once the headers are in. At the connection cap, the oldest connection that has
//     not shown the key is closed to make room: idle connections of others never lock the
//     owner out.
// Runs until interrupted; then removes the login file.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <list>
#include <memory>
#include <thread>

#include "cli/cli_util.h"
#include "cli/commands.h"

namespace lockstep::cli {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// Each long poll of the page holds one connection; a browser opens at most six to one host.
constexpr std::size_t kMaxConnections = 64;
// To send a request's headers and body, from the connection's start.
constexpr auto kReadTimeout = std::chrono::seconds(10);
constexpr auto kWriteTimeout = std::chrono::seconds(30);

std::string RandomKey() {
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  unsigned char bytes[16] = {};
  urandom.read(reinterpret_cast<char*>(bytes), sizeof bytes);
  static const char* hex = "0123456789abcdef";
  std::string key;
  for (unsigned char b : bytes) key += {hex[b >> 4], hex[b & 15]};
  return key;
}

// In time independent of where they differ.
bool SameSecret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// The cookie's name: a browser keeps one cookie per name and host whatever the port, and
// proxies of several users (or ports) may serve one browser.
std::string CookieName(int port) {
  return "lockstep_web_" + std::to_string(port);
}

// Whether the request's Cookie header holds NAME=KEY.
bool HasKey(const http::request<http::string_body>& req, const std::string& cookie,
            const std::string& key) {
  const std::string_view cookies(req[http::field::cookie].data(),
                                 req[http::field::cookie].size());
  const std::string name = cookie + "=";
  std::size_t at = 0;
  while (at < cookies.size()) {
    std::size_t end = cookies.find(';', at);
    if (end == std::string_view::npos) end = cookies.size();
    std::string_view pair = cookies.substr(at, end - at);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    if (pair.substr(0, name.size()) == name && SameSecret(pair.substr(name.size()), key))
      return true;
    at = end + 1;
  }
  return false;
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

// GET /login (no key needed): takes the key from the URL's fragment, which no request carries,
// posts it back for the cookie, and drops it from the address bar and the history.
const char* kLoginPage = R"(<!doctype html>
<html><head><meta charset="utf-8"><title>lockstep web</title></head>
<body><p id="m">Signing in...</p><script>
const key = location.hash.slice(1);
history.replaceState(null, "", "/login");
fetch("/login", {method: "POST", body: key, credentials: "same-origin"}).then((r) => {
  if (r.ok) location.replace("/");
  else document.getElementById("m").textContent =
      "This key is not the proxy's: open the login file that lockstep web printed.";
});
</script></body></html>
)";

// The login file: sends the browser to the proxy's /login with the key in the fragment.
std::string LoginFile(int port, const std::string& key) {
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/login#" + key;
  return "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>lockstep web</title>\n"
         "<meta http-equiv=\"refresh\" content=\"0; url=" + url + "\"></head>\n"
         "<body><script>location.replace(\"" + url + "\");</script>\n"
         "<p>Opening <a href=\"" + url + "\">lockstep web</a>. This file holds your key: do not "
         "pass this address on a command line.</p></body></html>\n";
}

class Proxy;

// One connection, one request (the answer closes it). Lives on the proxy's one thread; the
// forward to lockstepd runs on a thread of its own and posts its answer back.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, Proxy& proxy) : stream_(std::move(socket)), proxy_(proxy) {}
  void Start();
  void Close();
  // Brought the key: never closed to make room.
  bool owner() const { return owner_; }

 private:
  void OnHeader(beast::error_code ec);
  void OnLogin(beast::error_code ec);
  void Forward(std::string target);
  void Reply(http::response<http::string_body> res);

  beast::tcp_stream stream_;
  Proxy& proxy_;
  beast::flat_buffer buffer_;
  http::request_parser<http::string_body> parser_;
  http::response<http::string_body> res_;
  bool owner_ = false;
  bool closed_ = false;
};

// The listening socket, the key and the open connections, oldest first. Not thread-safe: all
// of it runs on the thread of `io`.
class Proxy {
 public:
  Proxy(tcp::acceptor acceptor, std::string cookie, std::string key)
      : acceptor_(std::move(acceptor)), cookie_(std::move(cookie)), key_(std::move(key)) {}
  void Accept() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (!ec) Admit(std::move(socket));
      Accept();
    });
  }
  const std::string& cookie() const { return cookie_; }
  const std::string& key() const { return key_; }
  void Forget(Connection* c) {
    open_.remove_if([c](const std::shared_ptr<Connection>& o) { return o.get() == c; });
  }

 private:
  // At the cap, the oldest connection that did not show the key makes room; when every one
  // did, the new one is closed (the browser retries).
  void Admit(tcp::socket socket) {
    if (open_.size() >= kMaxConnections) {
      auto idle = std::find_if(open_.begin(), open_.end(),
                               [](const std::shared_ptr<Connection>& c) { return !c->owner(); });
      if (idle == open_.end()) return;
      (*idle)->Close();
    }
    open_.push_back(std::make_shared<Connection>(std::move(socket), *this));
    open_.back()->Start();
  }

  tcp::acceptor acceptor_;
  const std::string cookie_, key_;
  std::list<std::shared_ptr<Connection>> open_;
};

void Connection::Start() {
  parser_.body_limit(1024);  // only /login has a body: the key
  stream_.expires_after(kReadTimeout);
  http::async_read_header(stream_, buffer_, parser_,
                          [self = shared_from_this()](beast::error_code ec, std::size_t) {
                            self->OnHeader(ec);
                          });
}

void Connection::Close() {
  if (closed_) return;
  closed_ = true;
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.close();
  proxy_.Forget(this);  // may drop the last reference but one: the caller's `self`
}

void Connection::OnHeader(beast::error_code ec) {
  if (ec) return Close();
  const http::request<http::string_body>& req = parser_.get();
  std::string target(req.target());
  if (target == "/login" || target.rfind("/login?", 0) == 0) {
    if (req.method() == http::verb::get) return Reply(Answer(200, kLoginPage, "text/html"));
    if (req.method() != http::verb::post) return Reply(Answer(405, "", "text/plain"));
    http::async_read(stream_, buffer_, parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       self->OnLogin(ec);
                     });
    return;
  }
  // The key is checked before anything more is read or done.
  if (!HasKey(req, proxy_.cookie(), proxy_.key()))
    return Reply(Answer(403, "open the login file that lockstep web printed (it holds the key)\n",
                        "text/plain"));
  owner_ = true;
  if (req.method() != http::verb::get)
    return Reply(Answer(405, "{\"error\":\"the web view only reads\"}", "application/json"));
  Forward(std::move(target));
}

void Connection::OnLogin(beast::error_code ec) {
  if (ec) return Close();
  if (!SameSecret(parser_.get().body(), proxy_.key()))
    return Reply(Answer(403, "not the key of this proxy\n", "text/plain"));
  http::response<http::string_body> res = Answer(204, "", "text/plain");
  res.set(http::field::set_cookie,
          proxy_.cookie() + "=" + proxy_.key() + "; HttpOnly; SameSite=Strict; Path=/");
  Reply(std::move(res));
}

void Connection::Forward(std::string target) {
  stream_.expires_never();  // a long poll of the page waits as long as lockstepd has it wait
  std::thread([self = shared_from_this(), target = std::move(target)] {
    const bool page =
        target == "/" || target.rfind("/?", 0) == 0 || target.rfind("/web", 0) == 0;
    client::ApiClient api;  // one per request: a long poll holds its own connection
    Result<std::pair<unsigned, std::string>> got = api.GetRaw(page ? "/web" : target);
    http::response<http::string_body> res =
        !got.ok() ? Answer(502, nlohmann::json{{"error", got.status().message()}}.dump(),
                           "application/json")
                  : Answer(got->first, std::move(got->second),
                           page ? "text/html; charset=utf-8" : "application/json");
    asio::post(self->stream_.get_executor(),
               [self, res = std::move(res)]() mutable { self->Reply(std::move(res)); });
  }).detach();
}

void Connection::Reply(http::response<http::string_body> res) {
  if (closed_) return;
  res_ = std::move(res);
  stream_.expires_after(kWriteTimeout);
  http::async_write(stream_, res_, [self = shared_from_this()](beast::error_code, std::size_t) {
    self->Close();
  });
}

// A directory of the user's alone: $XDG_RUNTIME_DIR, else $TMPDIR or /tmp.
Result<std::string> PrivateDirectory() {
  std::string base = "/tmp";
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime)
    base = runtime;
  else if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp)
    base = tmp;
  std::string pattern = base + "/lockstep-web-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)  // mode 0700
    return IoError("cannot create a directory in " + base + ": " + std::strerror(errno));
  return pattern;
}

// The login file, readable by its owner only, created before anything is written to it.
Status WriteLoginFile(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return IoError(path + ": " + std::strerror(errno));
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return written ? Status::Ok() : IoError(path + ": cannot write it");
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
  Result<std::string> dir = PrivateDirectory();
  if (!dir.ok()) return Fail("lockstep web", dir.status());
  const std::string login = *dir + "/login.html";
  if (Status s = WriteLoginFile(login, LoginFile(port, key)); !s.ok()) {
    std::filesystem::remove_all(*dir);
    return Fail("lockstep web", s);
  }
  std::printf(
      "lockstep web: serving http://127.0.0.1:%d/ as you. To sign in, open this file in your "
      "browser (only you can read it: it holds the key):\n  file://%s\n",
      port, login.c_str());
  std::fflush(stdout);
  Proxy proxy(std::move(acceptor), CookieName(port), key);
  proxy.Accept();
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](beast::error_code, int) {
    std::error_code gone;
    std::filesystem::remove_all(*dir, gone);
    io.stop();
  });
  io.run();
  // Forwards still waiting on lockstepd hold the connections they answer: end here, not in
  // their destructors.
  std::fflush(stdout);
  ::_exit(0);
}

}  // namespace lockstep::cli
