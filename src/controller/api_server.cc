#include "controller/api_server.h"

#include <ctime>
#include <string_view>
#include <utility>

#include "controller/api_routes.h"
#include "controller/login_routes.h"
#include "controller/web_routes.h"

namespace lockstep::controller {
namespace {

namespace http = boost::beast::http;

std::string_view PathOf(const server::Request& req) {
  std::string_view t(req.target().data(), req.target().size());
  t = t.substr(0, t.find('?'));
  while (t.size() > 1 && t.back() == '/') t.remove_suffix(1);
  return t;
}

// Issuing (/api/v1/tokens) and revoking (/api/v1/tokens/revoke): the Unix socket only.
bool IsTokensTarget(const server::Request& req) {
  return PathOf(req) == "/api/v1/tokens" || PathOf(req) == "/api/v1/tokens/revoke";
}

// The controller's caller; a Unix peer's name from the identity source, else the host's user
// database (it may block: this runs on a worker thread).
Caller ControllerCaller(const server::Caller& who, const identity::UserDirectory& directory) {
  Caller c{who.uid, who.gid, who.user};
  if (c.user.empty()) {
    std::optional<identity::UserRecord> u = directory.UserByUid(c.uid);
    if (!u) u = identity::HostDirectory()->UserByUid(c.uid);
    c.user = u ? u->name : std::to_string(c.uid);
  }
  return c;
}

}  // namespace

Result<std::unique_ptr<ApiService>> ApiService::Create(Controller& controller,
                                                       const ApiServiceOptions& options) {
  if (options.route_threads < 1) return InvalidArgument("api: route_threads must be at least 1");
  std::unique_ptr<ApiService> service(new ApiService(controller, options));
  Result<std::size_t> gone = service->tokens_.RemoveExpired(std::time(nullptr));
  if (!gone.ok()) return gone.status();
  return service;
}

ApiService::ApiService(Controller& controller, const ApiServiceOptions& options)
    : controller_(controller),
      agents_(options.agents),
      observe_(options.observe),
      login_(options.login),
      policy_(options.policy),
      directory_(options.directory ? options.directory : [] { return identity::HostDirectory(); }),
      tokens_(controller.store(),
              [directory = directory_](std::uint32_t uid) -> std::optional<std::string> {
                std::optional<identity::UserRecord> u = directory()->UserByUid(uid);
                if (!u) return std::nullopt;
                return u->name;
              }),
      route_pool_(options.route_threads) {}

void ApiService::Handle(server::Request request, server::Caller caller, server::Responder respond) {
  route_pool_.Post([this, request = std::move(request), caller = std::move(caller),
                    respond = std::move(respond)] {
    try {
      Route(request, caller, respond);
    } catch (...) {
      respond.Respond(server::JsonError(http::status::internal_server_error,
                                        "internal error while handling the request"));
    }
  });
}

void ApiService::Authenticate(std::string token, Done done) {
  route_pool_.Post([this, token = std::move(token), done = std::move(done)] {
    Result<Caller> who = tokens_.Authenticate(token, std::time(nullptr));
    if (!who.ok()) return done(who.status());
    server::Caller c;
    c.uid = who->uid;
    c.gid = who->gid;
    c.user = who->user;
    c.transport = server::Transport::kTls;
    done(std::move(c));
  });
}

void ApiService::Route(const server::Request& req, const server::Caller& who,
                       const server::Responder& respond) {
  // Every request is counted (sdiag, lockstep_api_request_seconds) when it is answered.
  const auto arrived = std::chrono::steady_clock::now();
  const Caller caller = ControllerCaller(who, *directory_());
  Replier reply = [this, respond, arrived, caller,
                   route = RouteOf(std::string(req.method_string()),
                                   std::string_view(req.target().data(), req.target().size()))](
                      ApiResponse response) {
    controller_.stats().RecordRpc(route, caller.user, caller.uid,
                                  std::chrono::steady_clock::now() - arrived);
    respond.Respond(std::move(response));
  };
  if (IsTokensTarget(req)) {
    // A token never begets another: a stolen one cannot be renewed forever.
    if (who.transport != server::Transport::kUnixSocket)
      return reply(server::JsonError(
          http::status::forbidden,
          "tokens are issued only on lockstepd's Unix socket (lockstep token)"));
    return reply(HandleTokenRequest(controller_, tokens_, caller, req, std::time(nullptr),
                                    directory_().get()));
  }
  if (HandleLoginRequest(controller_, login_, caller, req, reply)) return;
  if (HandlePolicyRequest(controller_, policy_, caller, req, reply)) return;
  if (HandleObserveRequest(controller_, observe_, caller, req, reply)) return;
  if (HandleWebRequest(controller_, caller, req, reply)) return;
  HandleRequest(controller_, agents_, caller, req, std::move(reply));
}

}  // namespace lockstep::controller
