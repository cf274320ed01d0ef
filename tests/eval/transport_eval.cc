// What our transport and checkpoint store cost against the raw means underneath (docs/results.md,
// `transport`), in one run on this machine: the round trip of a small message and 1 MB
// one way through our framed transport (TLS 1.3, and without encryption) against raw Asio TCP
// over loopback (bench/transport_timings.h); checkpoint writes of 100 KB and 1 MB states into
// the RocksDB store against synced appends to a raw file (bench/checkpoint_timings.h). Each
// figure is the best of several repetitions, alternated, so a burst of other load hits every
// variant alike. Rows: {"measure", "variant", "value", "unit", "vs_raw"} (vs_raw: time ratio,
// 1.00 = as fast as the raw means). Writes DIR/transport.json and DIR/transport.png.
//
//   build/bin/transport_eval --out DIR [--seed S] [--quick]
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "checkpoint_timings.h"
#include "core/temp_dir.h"
#include "eval/eval_support.h"
#include "transport_timings.h"

int main(int argc, char** argv) {
  using aiac::bench::Timings;
  using aiac::net::Transport;
  const auto args = aiac::eval::ParseEvalArgs(argc, argv, "transport_eval");
  const int reps = args.quick ? 3 : 5;
  const int round_trips = args.quick ? 1000 : 5000;
  const int megabytes = args.quick ? 10 : 50;
  const int checkpoints = args.quick ? 50 : 200;
  std::printf(
      "transport: %d x (%d round trips, %d x 1 MB, %d checkpoints per size), best of each\n", reps,
      round_trips, megabytes, checkpoints);
  aiac::bench::Framed(Transport::kTls, round_trips / 10 + 1, 2);  // warm-up
  Timings raw{1e30, 1e30}, plain{1e30, 1e30}, tls{1e30, 1e30};
  auto best = [](Timings& b, const Timings& t) {
    b.round_trip_us = std::min(b.round_trip_us, t.round_trip_us);
    b.megabyte_ms = std::min(b.megabyte_ms, t.megabyte_ms);
  };
  for (int r = 0; r < reps; ++r) {
    best(raw, aiac::bench::RawTcp(round_trips, megabytes));
    best(plain, aiac::bench::Framed(Transport::kPlaintextBenchmarkOnly, round_trips, megabytes));
    best(tls, aiac::bench::Framed(Transport::kTls, round_trips, megabytes));
  }
  nlohmann::json rows = nlohmann::json::array();
  std::ostringstream dat;
  auto row = [&](const std::string& measure, const std::string& variant, double value,
                 const char* unit, double raw_value) {
    rows.push_back({{"measure", measure},
                    {"variant", variant},
                    {"value", value},
                    {"unit", unit},
                    {"vs_raw", value / raw_value}});
    std::printf("%-24s %-22s %10.2f %-3s %6.2fx raw\n", measure.c_str(), variant.c_str(), value,
                unit, value / raw_value);
  };
  for (const auto& [name, t] : {std::pair<const char*, Timings>{"raw Asio TCP", raw},
                                {"framed, no encryption", plain},
                                {"framed, TLS 1.3 (aiac)", tls}}) {
    row("small round trip", name, t.round_trip_us, "us", raw.round_trip_us);
    row("1 MB transfer", name, t.megabyte_ms, "ms", raw.megabyte_ms);
  }
  dat << "\"round trip\" " << 1.0 << ' ' << plain.round_trip_us / raw.round_trip_us << ' '
      << tls.round_trip_us / raw.round_trip_us << "\n";
  dat << "\"1 MB\" " << 1.0 << ' ' << plain.megabyte_ms / raw.megabyte_ms << ' '
      << tls.megabyte_ms / raw.megabyte_ms << "\n";
  const std::string root = aiac::TempRoot() + "/aiac-transport-eval-" + std::to_string(::getpid());
  std::filesystem::create_directories(root);
  for (size_t bytes : {size_t{100} << 10, size_t{1} << 20}) {
    const std::string state = aiac::bench::State(bytes, bytes + args.seed);
    double raw_s = 1e30, store_s = 1e30;
    for (int r = 0; r < reps; ++r) {
      raw_s = std::min(raw_s, aiac::bench::RawSeconds(root + "/raw", state, checkpoints));
      store_s = std::min(store_s, aiac::bench::StoreSeconds(root + "/store", state, checkpoints));
    }
    const std::string measure = std::to_string(bytes >> 10) + " KB checkpoint";
    row(measure, "raw file, fdatasync", raw_s / checkpoints * 1e3, "ms", raw_s / checkpoints * 1e3);
    row(measure, "checkpoint store", store_s / checkpoints * 1e3, "ms", raw_s / checkpoints * 1e3);
    dat << '"' << measure << "\" 1.0 NaN " << store_s / raw_s << "\n";
  }
  std::filesystem::remove_all(root);
  aiac::eval::WriteTable(args.out, "transport", rows);
  aiac::eval::Plot(
      args.out, "transport", dat.str(),
      "set title 'Time against the raw means (1 = as fast, lower is better)'\n"
      "set style data histograms\nset style histogram clustered\nset style fill solid 0.8 border "
      "-1\n"
      "set ylabel 'time / raw'\nset yrange [0:*]\nset key below\n"
      "plot datafile using 2:xtic(1) title 'raw', '' using 3 title 'framed, no encryption', "
      "'' using 4 title 'aiac (TLS 1.3; store for checkpoints)'\n");
  std::printf("table: %s/transport.json, plot: %s/transport.png\n", args.out.c_str(),
              args.out.c_str());
  return 0;
}
