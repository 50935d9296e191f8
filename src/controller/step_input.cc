#include "controller/step_input.h"

#include <algorithm>
#include <climits>

#include "common/base64.h"

namespace lockstep::controller {
namespace {

nlohmann::json ClosedAnswer() {
  return {{"closed", true}, {"eof", true}, {"offset", 0}, {"data", ""}};
}

Result<std::int64_t> NonNegative(const nlohmann::json& body, const char* key, std::int64_t hi) {
  if (!body.contains(key)) return 0;
  const nlohmann::json& v = body[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > hi)
    return InvalidArgument(std::string("step: '") + key + "' must be an integer from 0 to " +
                           std::to_string(hi));
  return v.get<std::int64_t>();
}

}  // namespace

Result<StepInputRequest> DecodeStepInputRequest(const nlohmann::json& req) {
  StepInputRequest r;
  if (req.contains("input")) {
    if (!req["input"].is_string()) return InvalidArgument("step: 'input' must be a string");
    const std::string mode = req["input"].get<std::string>();
    if (mode == "all") {
      r.mode = StepInputRequest::Mode::kAll;
    } else if (mode != "none") {
      if (mode.empty() || mode.size() > 7 ||
          mode.find_first_not_of("0123456789") != std::string::npos)
        return InvalidArgument("step: 'input' must be \"all\", \"none\" or a task id, not '" +
                               mode + "'");
      r.mode = StepInputRequest::Mode::kTask;
      r.task = std::stoi(mode);
    }
  }
  if (req.contains("input_file")) {
    if (!req["input_file"].is_string() || req["input_file"].get<std::string>().empty())
      return InvalidArgument("step: 'input_file' must be a file name");
    if (r.mode != StepInputRequest::Mode::kNone)
      return InvalidArgument("step: 'input' and 'input_file' exclude each other");
    r.mode = StepInputRequest::Mode::kFile;
    r.file = req["input_file"].get<std::string>();
  }
  if (req.contains("pty")) {
    if (!req["pty"].is_boolean()) return InvalidArgument("step: 'pty' must be true or false");
    r.pty = req["pty"].get<bool>();
  }
  Result<std::int64_t> rows = NonNegative(req, "rows", 65535);
  Result<std::int64_t> cols = NonNegative(req, "cols", 65535);
  if (!rows.ok()) return rows.status();
  if (!cols.ok()) return cols.status();
  r.rows = static_cast<int>(*rows), r.cols = static_cast<int>(*cols);
  if (r.pty && r.mode != StepInputRequest::Mode::kTask)
    return InvalidArgument("step: 'pty' needs srun's input forwarded to one task ('input')");
  if (r.pty && !req.value("stream", false))
    return InvalidArgument("step: 'pty' needs the step's output streamed ('stream')");
  if (r.mode != StepInputRequest::Mode::kNone && r.mode != StepInputRequest::Mode::kFile &&
      !req.value("stream", false))
    return InvalidArgument(
        "step: srun's input is forwarded only to a step that streams ('stream')");
  return r;
}

Result<StepInputWrite> DecodeStepInputWrite(const nlohmann::json& body) {
  if (!body.is_object()) return InvalidArgument("step input: the body must be an object");
  for (const auto& [key, value] : body.items())
    if (key != "offset" && key != "data" && key != "eof" && key != "rows" && key != "cols" &&
        key != "append")
      return InvalidArgument("step input: unknown field '" + key + "'");
  StepInputWrite w;
  if (body.contains("append")) {
    if (!body["append"].is_boolean())
      return InvalidArgument("step input: 'append' must be true or false");
    w.append = body["append"].get<bool>();
    if (w.append && body.contains("offset"))
      return InvalidArgument("step input: 'append' writes take no 'offset'");
  }
  Result<std::int64_t> offset = NonNegative(body, "offset", INT64_MAX);
  Result<std::int64_t> rows = NonNegative(body, "rows", 65535);
  Result<std::int64_t> cols = NonNegative(body, "cols", 65535);
  for (const Result<std::int64_t>* f : {&offset, &rows, &cols})
    if (!f->ok()) return f->status();
  w.offset = static_cast<std::uint64_t>(*offset);
  if (body.contains("data")) {
    if (!body["data"].is_string()) return InvalidArgument("step input: 'data' must be a string");
    Result<std::string> data = Base64Decode(body["data"].get<std::string>());
    if (!data.ok()) return InvalidArgument("step input: 'data' is not base64");
    w.data = std::move(*data);
  }
  if (body.contains("eof")) {
    if (!body["eof"].is_boolean())
      return InvalidArgument("step input: 'eof' must be true or false");
    w.eof = body["eof"].get<bool>();
  }
  if ((*rows > 0) != (*cols > 0))
    return InvalidArgument("step input: 'rows' and 'cols' go together");
  if (*rows > 0) w.winsize = {static_cast<int>(*rows), static_cast<int>(*cols)};
  return w;
}

StepInputs::StepInputs() : timer_([this] { TimerLoop(); }) {}

StepInputs::~StepInputs() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  timer_.join();
}

void StepInputs::Open(Key key, std::vector<std::string> readers, int rows, int cols) {
  std::lock_guard<std::mutex> lock(mu_);
  Stream& s = streams_[key];
  for (std::string& r : readers) s.taken.try_emplace(std::move(r), 0);
  if (rows > 0 && cols > 0) s.rows = rows, s.cols = cols, s.winsize_version = 1;
}

void StepInputs::Close(Key key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = streams_.find(key);
    if (it == streams_.end()) return;
    it->second.closed = true;
  }
  changed_.notify_all();  // the timer answers the waiters and drops the stream
}

nlohmann::json StepInputs::WriteAnswer(const Stream& s, bool append, std::size_t taken) {
  if (append) return {{"taken", taken}, {"eof", s.eof}, {"closed", false}};
  return {{"offset", s.from_srun}, {"eof", s.eof}, {"closed", false}};
}

bool StepInputs::IsOpen(Key key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find(key);
  return it != streams_.end() && !it->second.closed;
}

void StepInputs::Write(Key key, StepInputWrite w, std::chrono::milliseconds wait, Done done) {
  Result<nlohmann::json> answer = nlohmann::json();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = streams_.find(key);
    if (it == streams_.end()) {
      answer = NotFound("step " + std::to_string(key.first) + "." + std::to_string(key.second) +
                        " does not read srun's input");
    } else if (it->second.closed) {
      answer = ClosedAnswer();
    } else {
      Stream& s = it->second;
      // srun's offsets count srun's bytes only: sattach's appends do not move them.
      const std::uint64_t end = w.append ? w.offset : s.from_srun;
      if (w.offset > end) {
        answer = InvalidArgument("step input: offset " + std::to_string(w.offset) +
                                 " is past the input's end " + std::to_string(end));
      } else if (s.eof && (w.append || w.offset + w.data.size() > end) && !w.data.empty()) {
        answer = FailedPrecondition("step input: input after its end of file");
      } else {
        const std::size_t skip = std::min<std::uint64_t>(end - w.offset, w.data.size());
        const std::size_t room = kCapacity - std::min(kCapacity, s.data.size());
        const std::size_t take = std::min(room, w.data.size() - skip);
        s.data.append(w.data, skip, take);
        if (!w.append) s.from_srun += take;
        if (w.eof && skip + take == w.data.size()) s.eof = true;
        if (w.winsize && (w.winsize->first != s.rows || w.winsize->second != s.cols)) {
          s.rows = w.winsize->first, s.cols = w.winsize->second;
          ++s.winsize_version;
        }
        const bool stuck = take == 0 && skip < w.data.size();
        if (stuck && wait.count() > 0) {
          waiters_.push_back(
              {key, true, w.append, "", s.end(), 0, SteadyClock::now() + wait, std::move(done)});
          changed_.notify_all();
          return;
        }
        answer = WriteAnswer(s, w.append, take);
      }
    }
  }
  changed_.notify_all();  // readers may have input now
  done(std::move(answer));
}

void StepInputs::Read(Key key, const std::string& reader, std::uint64_t offset,
                      std::uint64_t winsize_seen, std::chrono::milliseconds wait, Done done) {
  const SteadyClock::time_point deadline = SteadyClock::now() + wait;
  Waiter w{key, false, false, reader, offset, winsize_seen, deadline, std::move(done)};
  std::optional<Result<nlohmann::json>> answer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = streams_.find(key);
    if (it == streams_.end()) {
      answer = nlohmann::json(ClosedAnswer());  // ended and gone, or never forwarded
    } else if (!it->second.taken.count(reader)) {
      answer = PermissionDenied("node " + reader + " runs no task that reads this step's input");
    } else {
      Stream& s = it->second;
      if (offset > s.end())
        answer = InvalidArgument("step input: offset " + std::to_string(offset) +
                                 " is past the input's end " + std::to_string(s.end()));
      else
        answer = TryAnswerLocked(w, wait.count() <= 0);
      if (!answer) {
        waiters_.push_back(std::move(w));
        changed_.notify_all();
        return;
      }
    }
  }
  changed_.notify_all();  // a writer may have room now
  w.done(std::move(*answer));
}

std::optional<Result<nlohmann::json>> StepInputs::TryAnswerLocked(Waiter& w, bool expired) {
  auto it = streams_.find(w.key);
  if (it == streams_.end() || it->second.closed || stopping_) return nlohmann::json(ClosedAnswer());
  Stream& s = it->second;
  if (w.writer) {
    if (s.data.size() >= kCapacity && !expired) return std::nullopt;
    return WriteAnswer(s, w.append, 0);  // room now: the writer sends the rest again
  }
  // The reader took everything before its offset: drop what every reader has taken.
  std::uint64_t& taken = s.taken[w.reader];
  taken = std::max(taken, std::min(w.offset, s.end()));
  std::uint64_t all_taken = s.end();
  for (const auto& [reader, at] : s.taken) all_taken = std::min(all_taken, at);
  if (all_taken > s.base) {
    s.data.erase(0, all_taken - s.base);
    s.base = all_taken;
  }
  const bool has_data = s.end() > taken;
  const bool ready = has_data || s.eof || s.winsize_version > w.winsize_seen;
  if (!ready && !expired) return std::nullopt;
  const std::size_t from = taken - s.base;
  const std::size_t n = std::min(kReadMax, s.data.size() - from);
  const std::uint64_t next = taken + n;
  return nlohmann::json{{"data", Base64Encode(std::string_view(s.data).substr(from, n))},
                        {"offset", next},
                        {"eof", s.eof && next == s.end()},
                        {"closed", false},
                        {"rows", s.rows},
                        {"cols", s.cols},
                        {"winsize", s.winsize_version}};
}

void StepInputs::TimerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    const SteadyClock::time_point now = SteadyClock::now();
    SteadyClock::time_point next = SteadyClock::time_point::max();
    std::vector<std::pair<Done, Result<nlohmann::json>>> answers;
    for (std::size_t i = 0; i < waiters_.size();) {
      Waiter& w = waiters_[i];
      std::optional<Result<nlohmann::json>> a = TryAnswerLocked(w, w.deadline <= now);
      if (a) {
        answers.emplace_back(std::move(w.done), std::move(*a));
        waiters_.erase(waiters_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        next = std::min(next, w.deadline);
        ++i;
      }
    }
    // Closed streams go once nobody waits on them.
    for (auto it = streams_.begin(); it != streams_.end();) {
      const bool waited = std::any_of(waiters_.begin(), waiters_.end(),
                                      [&](const Waiter& w) { return w.key == it->first; });
      it = it->second.closed && !waited ? streams_.erase(it) : std::next(it);
    }
    if (!answers.empty()) {
      lock.unlock();
      for (auto& [done, answer] : answers) done(std::move(answer));
      answers.clear();
      lock.lock();
      continue;
    }
    if (stopping_) return;  // every waiter was answered above (closed)
    if (next == SteadyClock::time_point::max())
      changed_.wait(lock);
    else
      changed_.wait_until(lock, next);
  }
}

}  // namespace lockstep::controller
