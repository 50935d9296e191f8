#include "common/clock.h"

namespace lockstep {
namespace {

class RealClock : public Clock {
 public:
  Time Now() const override {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  Monotonic MonotonicNow() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace

Clock& SystemClock() {
  static RealClock* clock = new RealClock();  // never destroyed: threads may read it at exit
  return *clock;
}

}  // namespace lockstep
