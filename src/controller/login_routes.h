// The login routes (login_endpoints.h) behind ApiService: decoding, who may call, answers.
#pragma once

#include <boost/beast/http.hpp>

#include "controller/api_routes.h"
#include "controller/controller.h"
#include "controller/login_endpoints.h"

namespace lockstep::controller {

// Answers `request` when it is one of the login routes (true), else leaves it (false). A
// cluster without login environments (`login` null) answers the description of bare hosts.
bool HandleLoginRequest(Controller& controller, LoginEndpoints* login, const Caller& caller,
                        const boost::beast::http::request<boost::beast::http::string_body>& request,
                        const Replier& reply);

}  // namespace lockstep::controller
