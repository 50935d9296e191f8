#include "server/blocking_handler.h"

#include <boost/asio/post.hpp>
#include <utility>

namespace lockstep::server {

WorkerPool::WorkerPool(std::size_t threads) : threads_(threads), pool_(threads) {}

WorkerPool::~WorkerPool() {
  pool_.stop();
  pool_.join();
}

void WorkerPool::Post(std::function<void()> work) {
  boost::asio::post(pool_, std::move(work));
}

BlockingHandler::BlockingHandler(WorkerPool& pool, Function function)
    : pool_(pool), function_(std::move(function)) {}

void BlockingHandler::Handle(Request request, Caller caller, Responder respond) {
  pool_.Post([this, request = std::move(request), caller = std::move(caller), respond] {
    Response response;
    try {
      response = function_(request, caller);
    } catch (...) {
      response = JsonError(boost::beast::http::status::internal_server_error,
                           "internal error while handling the request");
    }
    respond.Respond(std::move(response));
  });
}

}  // namespace lockstep::server
