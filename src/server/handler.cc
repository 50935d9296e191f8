#include "server/handler.h"

#include <atomic>
#include <utility>

namespace lockstep::server {

struct Responder::State {
  explicit State(std::shared_ptr<ResponseSink> s) : sink(std::move(s)) {}
  ~State() {
    if (!answered.exchange(true))
      sink->Deliver(JsonError(boost::beast::http::status::internal_server_error,
                              "the request was not answered"));
  }
  std::shared_ptr<ResponseSink> sink;
  std::atomic<bool> answered{false};
};

Responder::Responder(std::shared_ptr<ResponseSink> sink)
    : state_(std::make_shared<State>(std::move(sink))) {}

void Responder::Respond(Response response) const {
  if (state_->answered.exchange(true)) return;
  state_->sink->Deliver(std::move(response));
}

bool Responder::answered() const {
  return state_->answered.load();
}

}  // namespace lockstep::server
