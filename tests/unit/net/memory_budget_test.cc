// One memory budget per process: what is reserved comes back when the reservation goes, a
// declaration that does not fit is refused with the figures, and the part assembler, the chunk
// buffer and the frame parser all draw from it, so several connections cannot each declare what
// only one could hold.
#include "core/memory_budget.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "net/frame.h"
#include "net/message_parts.h"

namespace aiac {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(MemoryBudgetTest, ReservationsComeBackAndWhatDoesNotFitIsRefused) {
  MemoryBudget budget(100 * kMiB);
  auto a = budget.Reserve("a", 60 * kMiB);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(budget.reserved(), 60 * kMiB);
  auto b = budget.Reserve("a message of 62914560 bytes", 60 * kMiB);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(b.status().message(),
            "a message of 62914560 bytes: 60.0 MiB do not fit in this process's memory budget "
            "(60.0 MiB of 100.0 MiB in use)");
  {
    MemoryBudget::Reservation moved = std::move(*a);
    EXPECT_EQ(budget.reserved(), 60 * kMiB);
  }
  EXPECT_EQ(budget.reserved(), 0u);
  EXPECT_TRUE(budget.Reserve("all of it", 100 * kMiB).ok());
  EXPECT_EQ(budget.reserved(), 0u);  // (the temporary reservation is gone)
  EXPECT_FALSE(budget.Reserve("more than all", 100 * kMiB + 1).ok());
  EXPECT_TRUE(ReserveFrom(nullptr, "no budget", uint64_t{1} << 60).ok());
}

TEST(MemoryBudgetTest, ThreadsNeverReserveMoreThanTheLimit) {
  MemoryBudget budget(1000);
  std::vector<std::thread> threads;
  std::atomic<int> over{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        auto r = budget.Reserve("x", 300);
        if (budget.reserved() > 1000) ++over;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(over.load(), 0);
  EXPECT_EQ(budget.reserved(), 0u);
}

// The first part of a message declaring `total` bytes, as a parsed envelope.
std::unique_ptr<net::IncomingMessage> FirstPart(uint64_t total) {
  capnp::MallocMessageBuilder message;
  auto p = message.initRoot<proto::Envelope>().initPart();
  p.setOffset(0);
  p.setTotal(total);
  const std::string bytes(64, 'x');
  p.setBytes(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(bytes.data()), bytes.size()));
  auto frame = net::EncodeFrame(message);
  net::FrameParser parser;
  parser.Feed(std::span(reinterpret_cast<const std::byte*>(frame.begin()),
                        frame.size() * sizeof(capnp::word)));
  auto m = parser.Next();
  EXPECT_TRUE(m.ok() && *m);
  return std::move(*m);
}

// Four connections each declaring a message of 40 MiB against a budget of 100 MiB: two fit,
// the others are refused; once a connection goes, its share is free again.
TEST(MemoryBudgetTest, MessagesInPartsOnSeveralConnectionsShareOneBudget) {
  MemoryBudget budget(100 * kMiB);
  std::vector<std::unique_ptr<net::PartAssembler>> connections;
  int refused = 0;
  for (int c = 0; c < 4; ++c) {
    connections.push_back(std::make_unique<net::PartAssembler>(net::FrameLimits{}, &budget));
    auto part = FirstPart(40 * kMiB);
    auto added = connections.back()->Add(part->root().getPart());
    if (!added.ok()) {
      ++refused;
      EXPECT_NE(added.status().message().find("do not fit in this process's memory budget"),
                std::string::npos)
          << added.status().message();
    }
  }
  EXPECT_EQ(refused, 2);
  EXPECT_EQ(budget.reserved(), 80 * kMiB);
  connections.front().reset();
  EXPECT_EQ(budget.reserved(), 40 * kMiB);
}

// A large frame reserves its size while its body comes, and gives it back once it is through.
TEST(MemoryBudgetTest, AFrameBeingReadHoldsItsSizeUntilItIsThrough) {
  MemoryBudget budget(kMiB);
  capnp::MallocMessageBuilder message;
  auto r = message.initRoot<proto::Envelope>().initResult();
  const std::string data(600 * 1024, 'd');
  r.setData(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(data.data()), data.size()));
  auto frame = net::EncodeFrame(message);
  const auto* bytes = reinterpret_cast<const std::byte*>(frame.begin());
  const size_t size = frame.size() * sizeof(capnp::word);

  net::FrameParser first({}, &budget), second({}, &budget);
  first.Feed(std::span(bytes, size / 2));
  ASSERT_TRUE(first.Next().ok());
  EXPECT_EQ(budget.reserved(), size);
  second.Feed(std::span(bytes, size / 2));
  auto refused = second.Next();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  first.Feed(std::span(bytes + size / 2, size - size / 2));
  auto whole = first.Next();
  ASSERT_TRUE(whole.ok() && *whole);
  EXPECT_EQ(budget.reserved(), 0u);
}

}  // namespace
}  // namespace aiac
