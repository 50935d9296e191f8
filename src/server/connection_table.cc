#include "server/connection_table.h"

#include <tuple>
#include <utility>
#include <vector>

namespace lockstep::server {

ConnectionTable::ConnectionTable(std::size_t max_connections, std::size_t max_tcp_connections)
    : max_connections_(max_connections), max_tcp_connections_(max_tcp_connections) {}

ConnectionTable::Id ConnectionTable::Admit(std::weak_ptr<Closable> connection,
                                           Transport transport) {
  std::shared_ptr<Closable> victim;
  Id id = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_all_) return 0;
    const bool tcp = transport == Transport::kTls;
    const bool full =
        entries_.size() >= max_connections_ || (tcp && tcp_count_ >= max_tcp_connections_);
    if (full) {
      Id victim_id = ChooseVictimLocked(transport);
      if (victim_id == 0) return 0;
      victim = entries_[victim_id].connection.lock();
      EraseLocked(victim_id);
    }
    id = next_id_++;
    Entry& e = entries_[id];
    e.connection = std::move(connection);
    e.transport = transport;
    e.last_active = ++clock_;
    if (tcp) ++tcp_count_;
  }
  if (victim) victim->CloseSoon();
  return id;
}

ConnectionTable::Id ConnectionTable::ChooseVictimLocked(Transport transport) const {
  // Only a TCP connection frees room for a TCP one when TCP's own share is full.
  const bool tcp_only = transport == Transport::kTls && tcp_count_ >= max_tcp_connections_;
  Id best = 0;
  std::tuple<int, std::uint64_t> best_key{};
  for (const auto& [id, e] : entries_) {
    if (e.busy) continue;
    const bool e_tcp = e.transport == Transport::kTls;
    if (tcp_only && !e_tcp) continue;
    // Rank 0: a TCP connection nobody has vouched for yet; rank 1: the rest.
    std::tuple<int, std::uint64_t> key{e_tcp && !e.authenticated ? 0 : 1, e.last_active};
    if (best == 0 || key < best_key) {
      best = id;
      best_key = key;
    }
  }
  return best;
}

void ConnectionTable::TouchLocked(Id id, bool busy) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  it->second.busy = busy;
  it->second.last_active = ++clock_;
}

void ConnectionTable::MarkBusy(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  TouchLocked(id, true);
}

void ConnectionTable::MarkIdle(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  TouchLocked(id, false);
}

void ConnectionTable::MarkAuthenticated(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it != entries_.end()) it->second.authenticated = true;
}

void ConnectionTable::EraseLocked(Id id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (it->second.transport == Transport::kTls) --tcp_count_;
  entries_.erase(it);
}

void ConnectionTable::Remove(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  EraseLocked(id);
}

bool ConnectionTable::CloseOneIdle() {
  std::shared_ptr<Closable> victim;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Id id = ChooseVictimLocked(Transport::kUnixSocket);
    if (id == 0) return false;
    victim = entries_[id].connection.lock();
    EraseLocked(id);
  }
  if (victim) victim->CloseSoon();
  return true;
}

void ConnectionTable::CloseAll() {
  std::vector<std::shared_ptr<Closable>> open;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_all_ = true;
    for (auto& [id, e] : entries_)
      if (auto c = e.connection.lock()) open.push_back(std::move(c));
    entries_.clear();
    tcp_count_ = 0;
  }
  for (auto& c : open) c->CloseSoon();
}

std::size_t ConnectionTable::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

std::size_t ConnectionTable::tcp_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tcp_count_;
}

}  // namespace lockstep::server
