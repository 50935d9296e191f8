#include "server/connection_table.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace lockstep::server {
namespace {

struct FakeConnection : Closable {
  void CloseSoon() override { ++closes; }
  int closes = 0;
};

class ConnectionTableTest : public ::testing::Test {
 protected:
  // A new connection of `t`, kept alive by the test.
  std::pair<ConnectionTable::Id, FakeConnection*> Add(ConnectionTable& table, Transport t) {
    conns_.push_back(std::make_shared<FakeConnection>());
    return {table.Admit(conns_.back(), t), conns_.back().get()};
  }
  std::vector<std::shared_ptr<FakeConnection>> conns_;
};

TEST_F(ConnectionTableTest, AtTheCapTheLeastRecentlyActiveIdleConnectionIsClosed) {
  ConnectionTable table(3, 3);
  auto a = Add(table, Transport::kUnixSocket);
  auto b = Add(table, Transport::kUnixSocket);
  auto c = Add(table, Transport::kUnixSocket);
  table.MarkBusy(a.first);
  table.MarkIdle(a.first);  // a is now the most recently active
  auto d = Add(table, Transport::kUnixSocket);
  EXPECT_NE(d.first, 0u);
  EXPECT_EQ(b.second->closes, 1);
  EXPECT_EQ(a.second->closes + c.second->closes, 0);
  EXPECT_EQ(table.size(), 3u);
}

TEST_F(ConnectionTableTest, BusyConnectionsAreNeverClosedAndANewOneIsRefusedInstead) {
  ConnectionTable table(2, 2);
  auto a = Add(table, Transport::kUnixSocket);
  auto b = Add(table, Transport::kUnixSocket);
  table.MarkBusy(a.first);
  table.MarkBusy(b.first);
  auto c = Add(table, Transport::kUnixSocket);
  EXPECT_EQ(c.first, 0u);
  EXPECT_EQ(a.second->closes + b.second->closes, 0);
  EXPECT_EQ(table.size(), 2u);
  table.MarkIdle(b.first);
  EXPECT_NE(Add(table, Transport::kUnixSocket).first, 0u);
  EXPECT_EQ(b.second->closes, 1);
}

TEST_F(ConnectionTableTest, UnauthenticatedTcpConnectionsGoFirstEvenWhenNewer) {
  ConnectionTable table(3, 3);
  auto unix_conn = Add(table, Transport::kUnixSocket);
  auto known = Add(table, Transport::kTls);
  table.MarkAuthenticated(known.first);
  auto stranger = Add(table, Transport::kTls);
  Add(table, Transport::kUnixSocket);
  EXPECT_EQ(stranger.second->closes, 1);
  EXPECT_EQ(unix_conn.second->closes + known.second->closes, 0);
}

TEST_F(ConnectionTableTest, TcpBeyondItsShareClosesOnlyTcpConnections) {
  ConnectionTable table(4, 2);
  auto u1 = Add(table, Transport::kUnixSocket);  // oldest, but not TCP
  auto t1 = Add(table, Transport::kTls);
  table.MarkAuthenticated(t1.first);
  auto t2 = Add(table, Transport::kTls);
  table.MarkAuthenticated(t2.first);
  auto t3 = Add(table, Transport::kTls);
  EXPECT_NE(t3.first, 0u);
  EXPECT_EQ(u1.second->closes, 0);
  EXPECT_EQ(t1.second->closes, 1);  // the least recently active TCP connection
  EXPECT_EQ(table.tcp_size(), 2u);
  EXPECT_EQ(table.size(), 3u);
}

TEST_F(ConnectionTableTest, TcpBeyondItsShareIsRefusedWhenEveryTcpConnectionIsBusy) {
  ConnectionTable table(4, 1);
  auto t1 = Add(table, Transport::kTls);
  table.MarkBusy(t1.first);
  EXPECT_EQ(Add(table, Transport::kTls).first, 0u);
  EXPECT_NE(Add(table, Transport::kUnixSocket).first, 0u);  // the Unix socket still has room
}

TEST_F(ConnectionTableTest, RemoveFreesRoomAndCloseAllRefusesEveryNewConnection) {
  ConnectionTable table(1, 1);
  auto a = Add(table, Transport::kTls);
  table.Remove(a.first);
  EXPECT_EQ(table.tcp_size(), 0u);
  auto b = Add(table, Transport::kUnixSocket);
  EXPECT_EQ(a.second->closes, 0);
  table.CloseAll();
  EXPECT_EQ(b.second->closes, 1);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(Add(table, Transport::kUnixSocket).first, 0u);
}

TEST_F(ConnectionTableTest, OutOfDescriptorsClosesTheLeastValuableIdleConnection) {
  ConnectionTable table(10, 10);
  auto known = Add(table, Transport::kTls);
  table.MarkAuthenticated(known.first);
  auto busy = Add(table, Transport::kUnixSocket);
  table.MarkBusy(busy.first);
  auto stranger = Add(table, Transport::kTls);
  EXPECT_TRUE(table.CloseOneIdle());
  EXPECT_EQ(stranger.second->closes, 1);
  EXPECT_TRUE(table.CloseOneIdle());
  EXPECT_EQ(known.second->closes, 1);
  EXPECT_FALSE(table.CloseOneIdle());  // only a busy one is left
  EXPECT_EQ(busy.second->closes, 0);
}

}  // namespace
}  // namespace lockstep::server
