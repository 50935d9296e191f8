// The web view's routes (docs/observability.md, "Web view"): the page itself (GET /web, one
// HTML document with its script and style inside: the cluster may have no internet), who is
// asking (GET /api/v1/web/whoami), and a job's details for its owner and operators only
// (GET /api/v1/web/jobs/ID: the job, why it pends, its priority breakdown, its output's tail).
// Everything else the page shows comes from the API's lists and the event stream.
#pragma once

#include "controller/api_routes.h"
#include "controller/controller.h"

namespace lockstep::controller {

// Answers `request` when it is a web view route and returns true; false leaves it to others.
bool HandleWebRequest(Controller& c, const Caller& caller,
                      const boost::beast::http::request<boost::beast::http::string_body>& req,
                      Replier& reply);

// The page (web_page.cc).
const std::string& WebPage();

}  // namespace lockstep::controller
