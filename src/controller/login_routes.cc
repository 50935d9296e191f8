#include "controller/login_routes.h"

#include <charconv>
#include <string_view>

namespace lockstep::controller {
namespace {

namespace http = boost::beast::http;
using Json = nlohmann::json;

constexpr std::string_view kLogin = "/api/v1/login";
constexpr std::string_view kSessions = "/api/v1/login/sessions/";

Result<Json> BodyOf(const http::request<http::string_body>& req) {
  if (req.body().empty()) return Json::object();
  Json j = Json::parse(req.body(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("the request body must be a JSON object");
  return j;
}

// "offset=N" of the query, 0 when absent.
Result<std::uint64_t> OffsetOf(std::string_view query) {
  constexpr std::string_view kKey = "offset=";
  for (std::size_t at = 0; at < query.size();) {
    std::size_t amp = query.find('&', at);
    if (amp == std::string_view::npos) amp = query.size();
    std::string_view kv = query.substr(at, amp - at);
    if (kv.substr(0, kKey.size()) == kKey) {
      std::uint64_t v = 0;
      std::string_view n = kv.substr(kKey.size());
      auto r = std::from_chars(n.data(), n.data() + n.size(), v);
      if (r.ec != std::errc() || r.ptr != n.data() + n.size() || n.empty())
        return InvalidArgument("offset: not a number");
      return v;
    }
    at = amp + 1;
  }
  return std::uint64_t{0};
}

void Answer(const Replier& reply, const Result<Json>& r) {
  reply(r.ok() ? JsonResponse(http::status::ok, *r) : ErrorResponse(r.status()));
}

}  // namespace

bool HandleLoginRequest(Controller& controller, LoginEndpoints* login, const Caller& caller,
                        const http::request<http::string_body>& req, const Replier& reply) {
  std::string_view target(req.target().data(), req.target().size());
  const std::size_t q = target.find('?');
  const std::string_view path = target.substr(0, q);
  const std::string_view query = q == std::string_view::npos ? "" : target.substr(q + 1);
  if (path != kLogin && path.substr(0, kSessions.size()) != kSessions) return false;
  const http::verb verb = req.method();
  if (path == kLogin) {
    if (verb == http::verb::get) {
      Answer(reply, login ? login->Describe()
                          : Json{{"mode", "hosts"}, {"hosts", Json::array()}, {"alias", ""}});
      return true;
    }
    if (verb != http::verb::post) {
      reply(ErrorResponse(InvalidArgument("login: GET or POST")));
      return true;
    }
    if (!login) {
      reply(ErrorResponse(FailedPrecondition(
          "login: this cluster runs on hosts: `lockstep login` opens a shell on a login host")));
      return true;
    }
    Result<Json> body = BodyOf(req);
    if (!body.ok()) return Answer(reply, body.status()), true;
    Answer(reply, login->Open(caller, controller.IsOperator(caller.uid), *body));
    return true;
  }
  // /api/v1/login/sessions/ID/(input|output|close)
  std::string_view rest = path.substr(kSessions.size());
  const std::size_t slash = rest.find('/');
  const std::string id(rest.substr(0, slash));
  const std::string_view what = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  if (!login || id.empty()) {
    reply(ErrorResponse(NotFound("login: no session " + id)));
    return true;
  }
  if (what == "output" && verb == http::verb::get) {
    Result<std::uint64_t> offset = OffsetOf(query);
    if (!offset.ok()) return Answer(reply, offset.status()), true;
    login->Output(caller, id, *offset, [reply](Result<Json> r) { Answer(reply, r); });
    return true;
  }
  if ((what == "input" || what == "close") && verb == http::verb::post) {
    Result<Json> body = BodyOf(req);
    if (!body.ok()) return Answer(reply, body.status()), true;
    if (what == "input") return Answer(reply, login->Input(caller, id, *body)), true;
    Status s = login->Close(caller, id);
    Answer(reply, s.ok() ? Result<Json>(Json{{"ok", true}}) : Result<Json>(s));
    return true;
  }
  reply(ErrorResponse(NotFound("login: no route " + std::string(path))));
  return true;
}

}  // namespace lockstep::controller
