// `lockstep logs -f`: what is new in a job's log since the last fetch. The API gives the whole
// text of the run each time: one pod's (or the output file's) as it is, several pods' as blocks of
// lines prefixed `<pod>: `, one block per pod, each growing at its end. The follower counts the
// lines printed of each block and prints the rest. Not thread-safe; one per followed job.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace lockstep::cli {

class LogFollower {
 public:
  explicit LogFollower(unsigned long long job_id) : job_(job_id) {}

  // The lines of `text` not printed yet, complete ones only unless `final` (the job has ended:
  // nothing more will come, so a last line without its newline is printed, with one added). A
  // block that became shorter is a new run's: printed from its start.
  std::string Next(std::string_view text, bool final);

 private:
  // The pod a line belongs to: the `<prefix>-<job>-<rank>` before ": ", else "" (one source).
  std::string BlockOf(std::string_view line) const;

  unsigned long long job_;
  std::map<std::string, std::size_t> printed_;  // lines printed, by block
};

}  // namespace lockstep::cli
