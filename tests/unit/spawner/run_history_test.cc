#include "spawner/run_history.h"

#include <gtest/gtest.h>

#include "spawner/plot_command.h"
#include "support/test_support.h"

namespace aiac::spawner {
namespace {

TEST(RunHistoryTest, RowsAsDocumentedAndThePlotMarksEachEvent) {
  testing::TempDir dir;
  const std::string path = dir / "h.csv";
  {
    auto h = RunHistory::Create(path);
    ASSERT_TRUE(h.ok()) << h.status().message();
    (*h)->Report(0.25, 0, 1, 10, 0.5);
    (*h)->Report(0.5, 1, 1, 12, 0.25);
    (*h)->Failure(0.75, 1, 1);
    (*h)->Resumed(1.5, 1, 2, 10);
    (*h)->Move(1.75, 0, 36);
    (*h)->Report(2, 1, 2, 14, 0.125);
    (*h)->Residual(2.5, 1e-9);
    EXPECT_TRUE((*h)->Flush());
  }
  const std::string csv = testing::ReadFile(path);
  EXPECT_EQ(csv,
            "seconds,event,task,incarnation,iteration,change,residual\n"
            "0.250,report,0,1,10,5.000000e-01,\n"
            "0.500,report,1,1,12,2.500000e-01,\n"
            "0.750,failure,1,1,,,\n"
            "1.500,resumed,1,2,10,,\n"
            "1.750,move,0,,,36,\n"
            "2.000,report,1,2,14,1.250000e-01,\n"
            "2.500,residual,,,,,1.000000e-09\n");
  auto script = HistoryPlotScript(csv, "out.png", "a run");
  ASSERT_TRUE(script.ok()) << script.status().message();
  // Task 1's curve, and its loss drawn where its change stood then.
  EXPECT_NE(script->find("0.5 0.25\n2 0.125\n"), std::string::npos) << *script;
  EXPECT_NE(script->find("$failures << EOD\n0.75 0.25\n"), std::string::npos) << *script;
  EXPECT_NE(script->find("$residuals << EOD\n2.5 1e-09\n"), std::string::npos) << *script;
  EXPECT_NE(script->find("title 'daemon lost'"), std::string::npos) << *script;
  EXPECT_NE(script->find("set output 'out.png'"), std::string::npos) << *script;
}

TEST(RunHistoryTest, WhatIsNotAHistoryIsRefusedNamingTheLine) {
  const std::string header = "seconds,event,task,incarnation,iteration,change,residual\n";
  EXPECT_EQ(HistoryPlotScript("a,b\n", "o.png", "t").status().code(), StatusCode::kInvalidArgument);
  auto bad = HistoryPlotScript(header + "0.1,report,0,1,1,0.5,\n0.2,explode,0,1,,,\n", "o", "t");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 3"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(HistoryPlotScript(header + "x,report,0,1,1,0.5,\n", "o", "t").ok());
  EXPECT_FALSE(HistoryPlotScript(header, "o", "t").ok());  // nothing to draw
  // A quote in a title or a path cannot end gnuplot's string.
  auto quoted = HistoryPlotScript(header + "0.1,report,0,1,1,0.5,\n", "it's.png", "Bob's run");
  ASSERT_TRUE(quoted.ok());
  EXPECT_NE(quoted->find("set output 'it''s.png'"), std::string::npos) << *quoted;
}

}  // namespace
}  // namespace aiac::spawner
