#include "runtime/mailbox.h"

#include <gtest/gtest.h>

#include <thread>

#include "support/test_support.h"

namespace aiac::runtime {
namespace {

TEST(MailboxTest, NewestValueWinsAndOlderOnesAreDropped) {
  Mailbox box;
  EXPECT_TRUE(box.Put(1, 5, "five"));
  EXPECT_FALSE(box.Put(1, 3, "three"));       // stale: arrived after a newer one
  EXPECT_FALSE(box.Put(1, 5, "five again"));  // duplicate
  EXPECT_TRUE(box.Put(1, 7, "seven"));
  EXPECT_TRUE(box.Put(2, 1, "other"));
  auto got = box.TakeNew();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].from, 1u);
  EXPECT_EQ(got[0].iteration, 7u);
  EXPECT_EQ(got[0].bytes, "seven");
  EXPECT_EQ(got[1].bytes, "other");
  EXPECT_EQ(box.dropped(), 2u);
  EXPECT_TRUE(box.TakeNew().empty()) << "taken values are not handed out twice";
  EXPECT_FALSE(box.Put(1, 6, "late"));  // older than what the task already used
  EXPECT_TRUE(box.Put(1, 8, "eight"));
  EXPECT_EQ(box.TakeNew()[0].bytes, "eight");
}

// A neighbour that iterated for its other inputs sends the same bytes under a newer iteration:
// the task has them, so they neither wake it nor come out of TakeNew (two neighbours that
// iterate on every new input would otherwise send each other the same values forever); what
// the sender says about its convergence and about our values is taken all the same.
TEST(MailboxTest, TheSameBytesUnderANewerIterationAreNotNew) {
  Mailbox box;
  EXPECT_FALSE(box.WaitForNew(std::chrono::milliseconds(0)));
  EXPECT_TRUE(box.Put(1, 4, "x", false, 0));
  EXPECT_TRUE(box.WaitForNew(std::chrono::milliseconds(0)));
  ASSERT_EQ(box.TakeNew().size(), 1u);
  EXPECT_FALSE(box.WaitForNew(std::chrono::milliseconds(0)));
  EXPECT_FALSE(box.Put(1, 5, "x", true, 9));
  EXPECT_FALSE(box.WaitForNew(std::chrono::milliseconds(0)));
  EXPECT_FALSE(box.WaitForNew(std::chrono::milliseconds(10)));
  EXPECT_TRUE(box.TakeNew().empty());
  EXPECT_EQ(box.Taken(1), 5u) << "the task holds iteration 5's value";
  EXPECT_TRUE(box.AllConverged({1}, {{1, 9}}))
      << "the sender's convergence and what it saw are news";
  // A different value in between is superseded by the sender's newer one, the bytes the task has.
  EXPECT_TRUE(box.Put(1, 6, "y"));
  EXPECT_FALSE(box.Put(1, 7, "x", true, 9));
  EXPECT_TRUE(box.TakeNew().empty());
  EXPECT_FALSE(box.Put(1, 6, "y")) << "older than the newest";
  // Other bytes are news again; a sender's new incarnation starts afresh.
  EXPECT_TRUE(box.Put(1, 8, "z"));
  EXPECT_EQ(box.TakeNew()[0].bytes, "z");
  EXPECT_TRUE(box.Put(1, 1, "z", false, 0, 2));
  EXPECT_EQ(box.TakeNew()[0].bytes, "z");
  // A synchronous step needs every iteration's value, the same or not.
  Mailbox sync(true);
  EXPECT_TRUE(sync.Put(1, 1, "x"));
  ASSERT_TRUE(sync.TakeIteration({1}, 1, std::chrono::milliseconds(100)).has_value());
  EXPECT_TRUE(sync.Put(1, 2, "x"));
  EXPECT_TRUE(sync.TakeIteration({1}, 2, std::chrono::milliseconds(100)).has_value());
}

// What waits untaken came from a converged sender (a change within its local test) or not (a
// change that may unsettle the task): a converged task answers a round despite the first,
// never despite the second, even when the same bytes come again marked converged.
TEST(MailboxTest, ANewValueFromASenderNotConvergedIsToldApartUntilTaken) {
  Mailbox box;
  EXPECT_FALSE(box.HasNewFromUnconverged());
  EXPECT_TRUE(box.Put(1, 1, "a", true));
  EXPECT_TRUE(box.WaitForNew(std::chrono::milliseconds(0)));
  EXPECT_FALSE(box.HasNewFromUnconverged());
  EXPECT_TRUE(box.Put(1, 2, "b", false));
  EXPECT_TRUE(box.HasNewFromUnconverged());
  EXPECT_TRUE(box.Put(1, 3, "c", true));
  EXPECT_TRUE(box.HasNewFromUnconverged()) << "b's change is not absorbed yet";
  ASSERT_EQ(box.TakeNew().size(), 1u);
  EXPECT_FALSE(box.HasNewFromUnconverged());
  EXPECT_TRUE(box.Put(2, 1, "d", true));
  EXPECT_TRUE(box.WaitForNew(std::chrono::milliseconds(0)));
  EXPECT_FALSE(box.HasNewFromUnconverged());
  // A changed value superseded by the bytes the task holds leaves nothing to absorb.
  EXPECT_TRUE(box.Put(1, 4, "e", false));
  EXPECT_FALSE(box.Put(1, 5, "c", true));
  EXPECT_FALSE(box.HasNewFromUnconverged());
  EXPECT_TRUE(box.Put(1, 6, "f", true));
  EXPECT_FALSE(box.HasNewFromUnconverged());
}

TEST(MailboxTest, WaitForNewWakesOnPutAndTimesOut) {
  Mailbox box;
  EXPECT_FALSE(box.WaitForNew(std::chrono::milliseconds(10)));
  std::thread writer([&] {
    testing::WaitUntil([&] { return box.waiters() == 1; });  // the reader blocks first
    box.Put(3, 1, "x");
  });
  EXPECT_TRUE(box.WaitForNew(std::chrono::seconds(5)));
  writer.join();
}

// What an idle runner waits for: a value accepted, a sender's convergence or acknowledgement
// that changed, or Wake(); not a copy that tells nothing new.
TEST(MailboxTest, ChangesCountWhatCouldGiveAnIdleTaskWork) {
  Mailbox box;
  uint64_t c = box.changes();
  EXPECT_FALSE(box.WaitForChange(c, std::chrono::milliseconds(0)));
  EXPECT_TRUE(box.Put(1, 1, "a", false, 0));
  EXPECT_NE(box.changes(), c);
  c = box.changes();
  EXPECT_FALSE(box.Put(1, 1, "a", false, 0));  // the same value again: nothing new
  EXPECT_EQ(box.changes(), c);
  EXPECT_FALSE(box.Put(1, 1, "a", true, 0));  // now converged
  EXPECT_NE(box.changes(), c);
  c = box.changes();
  EXPECT_FALSE(box.Put(1, 1, "a", true, 4));  // and it absorbed our iteration 4
  EXPECT_NE(box.changes(), c);
  c = box.changes();
  box.TakeNew();
  EXPECT_FALSE(box.Put(1, 2, "a", true, 4));  // a newer iteration with the bytes taken
  EXPECT_EQ(box.changes(), c);
  std::thread waker([&] {
    testing::WaitUntil([&] { return box.waiters() == 1; });  // the reader blocks first
    box.Wake();
  });
  EXPECT_TRUE(box.WaitForChange(c, std::chrono::seconds(30)));
  waker.join();
  c = box.changes();
  box.Close();
  EXPECT_FALSE(box.WaitForChange(c, std::chrono::seconds(30)));  // closed: at once
}

TEST(MailboxTest, SyncModeKeepsEachIterationUntilTaken) {
  Mailbox box(true);
  // Neighbour 1 runs one iteration ahead: both of its values must survive.
  box.Put(1, 1, "a1");
  box.Put(1, 2, "a2");
  box.Put(2, 1, "b1");
  auto first = box.TakeIteration({1, 2}, 1, std::chrono::milliseconds(100));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ((*first)[0].bytes, "a1");
  EXPECT_EQ((*first)[1].bytes, "b1");
  // Iteration 2 of neighbour 2 is missing: the wait times out.
  EXPECT_FALSE(box.TakeIteration({1, 2}, 2, std::chrono::milliseconds(20)).has_value());
  std::thread writer([&] { box.Put(2, 2, "b2"); });
  auto second = box.TakeIteration({1, 2}, 2, std::chrono::seconds(5));
  writer.join();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ((*second)[0].bytes, "a2");
  EXPECT_EQ((*second)[1].bytes, "b2");
}

// A neighbour restored from its checkpoint (a new incarnation) sends again its values of the
// checkpoint's last two iterations, then the ones after; values of a synchronous iteration are
// the same whoever computed them, so what its predecessor sent and was not taken still holds,
// and what was taken is not taken twice.
TEST(MailboxTest, SyncModeKeepsWhatAReplacedNeighboursPredecessorSentAndTakesNothingTwice) {
  Mailbox box(true);
  box.Put(1, 1, "a1", false, 0, 1);
  box.Put(1, 2, "a2", false, 0, 1);
  ASSERT_TRUE(box.TakeIteration({1}, 1, std::chrono::milliseconds(100)).has_value());
  // Restored at iteration 2: it sends 1 and 2 again, then 3.
  EXPECT_FALSE(box.Put(1, 1, "a1", false, 0, 2)) << "taken already";
  box.Put(1, 2, "a2", false, 0, 2);
  box.Put(1, 3, "a3", false, 0, 2);
  EXPECT_FALSE(box.Put(1, 3, "a3", false, 0, 2)) << "sent again over a new connection";
  EXPECT_FALSE(box.Put(1, 4, "late", false, 0, 1)) << "the old daemon is fenced off";
  auto second = box.TakeIteration({1}, 2, std::chrono::milliseconds(100));
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ((*second)[0].bytes, "a2");
  auto third = box.TakeIteration({1}, 3, std::chrono::milliseconds(100));
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ((*third)[0].bytes, "a3");

  // A value its predecessor sent but the dead daemon's restore does not send again (restored
  // from a later checkpoint than what we took): still there.
  Mailbox kept(true);
  kept.Put(1, 5, "a5", false, 0, 1);
  kept.Put(1, 7, "a7", false, 0, 2);
  auto five = kept.TakeIteration({1}, 5, std::chrono::milliseconds(100));
  ASSERT_TRUE(five.has_value());
  EXPECT_EQ((*five)[0].bytes, "a5");
}

TEST(MailboxTest, CloseWakesWaiters) {
  Mailbox box(true);
  std::thread closer([&] {
    testing::WaitUntil([&] { return box.waiters() == 1; });  // the waiter blocks first
    box.Close();
  });
  EXPECT_FALSE(box.TakeIteration({1}, 1, std::chrono::seconds(10)).has_value());
  closer.join();
  EXPECT_FALSE(box.WaitForNew(std::chrono::seconds(10)));
}

}  // namespace
TEST(MailboxTest, InputsAreFinalOnlyWhenEveryNewestValueCameFromAConvergedSender) {
  Mailbox box;
  EXPECT_TRUE(box.AllConverged({}));       // no inputs: nothing can change
  EXPECT_FALSE(box.AllConverged({1, 2}));  // nobody sent yet
  box.Put(1, 4, "a", true);
  EXPECT_FALSE(box.AllConverged({1, 2}));
  box.Put(2, 9, "b", true);
  EXPECT_TRUE(box.AllConverged({1, 2}));
  box.Put(2, 10, "b'", false);  // the sender moved again
  EXPECT_FALSE(box.AllConverged({1, 2}));
  box.Put(2, 8, "stale", true);  // dropped: changes nothing
  EXPECT_FALSE(box.AllConverged({1, 2}));
}

TEST(MailboxTest, AConvergedSenderCountsOnlyOnceItHasAbsorbedOurNewestValues) {
  Mailbox box;
  box.Put(1, 5, "a", true, /*seen=*/3);
  EXPECT_TRUE(box.AllConverged({1}, {{1, 3}}));
  // We sent a changed value at our iteration 4: neighbour 1's "converged" predates it.
  EXPECT_FALSE(box.AllConverged({1}, {{1, 4}}));
  box.Put(1, 6, "a", true, /*seen=*/4);
  EXPECT_TRUE(box.AllConverged({1}, {{1, 4}}));
  // A one-way neighbour (nothing asked of it) and a neighbour we never sent to (0) need nothing.
  box.Put(2, 1, "c", true);
  EXPECT_TRUE(box.AllConverged({1, 2}, {{1, 4}, {2, 0}}));
}

// What a confirmation round waits for: only the neighbours asked about (those we sent a changed
// value to), each having absorbed it and still converged; a one-way sender is not asked.
TEST(MailboxTest, OurNewestValueIsAbsorbedOnceEachNeighbourAskedAboutSawItConverged) {
  Mailbox box;
  EXPECT_TRUE(box.AbsorbedByConverged({}));
  EXPECT_TRUE(box.AbsorbedByConverged({{1, 0}}));   // nothing sent to it
  EXPECT_FALSE(box.AbsorbedByConverged({{1, 4}}));  // nothing back yet
  box.Put(1, 5, "a", true, /*seen=*/3);
  EXPECT_FALSE(box.AbsorbedByConverged({{1, 4}}));  // our iteration 4 still on its way
  box.Put(1, 6, "a", false, /*seen=*/4);
  EXPECT_FALSE(box.AbsorbedByConverged({{1, 4}}));  // absorbed, and it unsettled the neighbour
  box.Put(1, 7, "a", true, /*seen=*/4);
  EXPECT_TRUE(box.AbsorbedByConverged({{1, 4}}));
  box.Put(2, 1, "b", false);  // a one-way sender, not converged: not asked about
  EXPECT_TRUE(box.AbsorbedByConverged({{1, 4}}));
  // An idle neighbour sends its newest value again to say it absorbed more of ours: the same
  // iteration, so no new input, but its `seen` and convergence count.
  EXPECT_FALSE(box.AbsorbedByConverged({{1, 6}}));
  EXPECT_FALSE(box.Put(1, 7, "a", true, /*seen=*/6));
  EXPECT_TRUE(box.AbsorbedByConverged({{1, 6}}));
  EXPECT_EQ(box.TakeNew().size(), 2u);  // iteration 7 of task 1 and task 2's, each once
  EXPECT_FALSE(box.Put(1, 7, "a", true, /*seen=*/6));
  EXPECT_TRUE(box.TakeNew().empty());
}

TEST(MailboxTest, ANewIncarnationWinsOverEverythingItsPredecessorSent) {
  Mailbox box;
  EXPECT_TRUE(box.Put(1, 500, "old", false, 0, 1));
  ASSERT_EQ(box.TakeNew().size(), 1u);
  EXPECT_EQ(box.Taken(1), 500u);
  // Restored from the checkpoint of iteration 420 on another daemon: lower iteration, newer value.
  EXPECT_TRUE(box.Put(1, 421, "restored", false, 0, 2));
  EXPECT_EQ(box.Taken(1), 0u);  // nothing of the new incarnation absorbed yet
  auto v = box.TakeNew();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].bytes, "restored");
  EXPECT_EQ(box.Taken(1), 421u);
  // The old daemon, back from a pause, is fenced off whatever its iteration.
  EXPECT_FALSE(box.Put(1, 9999, "late", true, 0, 1));
  EXPECT_TRUE(box.TakeNew().empty());
  EXPECT_FALSE(box.AllConverged({1}));
}

TEST(MailboxTest, WhatANeighbourSawOfAPreviousOwnerOfOurTaskCountsForNothing) {
  Mailbox box;
  box.set_own_incarnation(2);  // we were restored on a new daemon, from iteration 7
  // Sent before the neighbour heard of us: its count of what it saw is the dead daemon's (25).
  box.Put(1, 40, "x", true, /*seen=*/25, /*incarnation=*/1, /*seen_incarnation=*/1);
  EXPECT_FALSE(box.AllConverged({1}, {{1, 8}}));
  box.Put(1, 41, "x", true, /*seen=*/8, /*incarnation=*/1, /*seen_incarnation=*/2);
  EXPECT_TRUE(box.AllConverged({1}, {{1, 8}}));
}

}  // namespace aiac::runtime
