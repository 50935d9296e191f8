// The server's open connections and the admission policy: a cap on all of them, a smaller cap
// on TCP ones, and, when a new connection finds no room, which idle one to close for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "server/caller.h"

namespace lockstep::server {

// A connection as the table sees it: something it can ask to close.
class Closable {
 public:
  virtual ~Closable() = default;
  // Asks the connection to close soon (it is no longer in the table): for pressure, or because
  // the server stops. Called from any thread,
  // never with the table's lock held; must not block.
  virtual void CloseSoon() = 0;
};

// Counts connections and chooses whom to close under pressure. A connection is *busy* while
// the application holds one of its requests or its response is being written; otherwise it is
// *idle* (handshaking, waiting for or reading a request). Busy connections are never closed
// for pressure. Among idle ones, TCP connections that have not yet authenticated (no request
// with a valid token so far) go first, then the others; the least recently active first.
//
// Ownership: holds only weak references to the connections.
// Thread-safety: every method may be called from any thread (one internal mutex).
class ConnectionTable {
 public:
  using Id = std::uint64_t;  // 0 is never an admitted connection's id

  ConnectionTable(std::size_t max_connections, std::size_t max_tcp_connections);

  // Admits a new connection. When the cap of its transport (or the total cap) is reached, the
  // least valuable idle connection that frees room is removed and asked to close first.
  // Returns 0, admitting nothing, when no room can be made: every candidate is busy.
  Id Admit(std::weak_ptr<Closable> connection, Transport transport);

  // The connection's state changes (no-ops for an id no longer in the table).
  void MarkBusy(Id id);
  void MarkIdle(Id id);
  void MarkAuthenticated(Id id);
  // The connection has closed.
  void Remove(Id id);
  // Out of file descriptors before the cap: removes and asks to close the least valuable idle
  // connection, as for a new Unix connection at the cap. False when every one is busy.
  bool CloseOneIdle();
  // The server stops: every connection is asked to close and none is admitted any more.
  void CloseAll();

  std::size_t size() const;
  std::size_t tcp_size() const;

 private:
  struct Entry {
    std::weak_ptr<Closable> connection;
    Transport transport = Transport::kUnixSocket;
    bool authenticated = false;
    bool busy = false;
    std::uint64_t last_active = 0;  // a tick of `clock_`: larger is more recent
  };

  // The id of the idle connection to close to admit one of `transport`, or 0. Requires mu_.
  Id ChooseVictimLocked(Transport transport) const;
  void EraseLocked(Id id);
  void TouchLocked(Id id, bool busy);

  const std::size_t max_connections_;
  const std::size_t max_tcp_connections_;
  mutable std::mutex mu_;
  std::unordered_map<Id, Entry> entries_;  // guarded by mu_
  std::size_t tcp_count_ = 0;              // guarded by mu_
  Id next_id_ = 1;                         // guarded by mu_
  std::uint64_t clock_ = 0;                // guarded by mu_: a logical clock, one tick per change
  bool closing_all_ = false;               // guarded by mu_
};

}  // namespace lockstep::server
