// Reading a Matrix Market matrix: ReadMatrixMarket (the whole file mapped, std::from_chars,
// line-aligned chunks parsed on every core) against reading the same file one line at a time
// with a string stream per line (how it was read before), and against just reading its bytes.
// The file is a banded SPD system like the CG app generates (symmetric, lower triangle).
// Prints seconds and the ratios stream/aiac (how many times faster) and aiac/bytes. Then the
// whole of what the CG app does to get its matrix (ReadMatrix: parse, compressed rows) from the
// text against mapping and checking its binary cache (matrix_cache.h): text/cache.
// Run: build/bin/mtx_read_bench [rows] [bandwidth]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "apps/cg/cg_app.h"
#include "apps/cg/matrix_market.h"
#include "bench_support.h"
#include "core/temp_dir.h"

using namespace aiac;
using Clock = std::chrono::steady_clock;

namespace {

void WriteBanded(const std::string& path, long rows, int bandwidth) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  long nnz = 0;
  for (long i = 0; i < rows; ++i) nnz += std::min<long>(i, bandwidth) + 1;
  std::fprintf(f, "%%%%MatrixMarket matrix coordinate real symmetric\n%ld %ld %ld\n", rows, rows,
               nnz);
  uint64_t x = 88172645463325252ull;
  for (long i = 0; i < rows; ++i) {
    for (long j = std::max<long>(0, i - bandwidth); j < i; ++j) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      std::fprintf(f, "%ld %ld %.17g\n", i + 1, j + 1,
                   -1.0 + 0.5 * static_cast<double>(x % 1000000) / 1e6);
    }
    std::fprintf(f, "%ld %ld %.17g\n", i + 1, i + 1, 2.0 * bandwidth + 1);
  }
  std::fclose(f);
}

// The baseline: a stream per line, as ReadMatrixMarket did before; returns the entry count.
size_t ReadByLines(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // banner
  std::getline(in, line);  // sizes
  size_t entries = 0;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    long long i, j;
    double v;
    if (s >> i >> j >> v) entries += i == j ? 1 : 2;
  }
  return entries;
}

size_t ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return all.size();
}

}  // namespace

int main(int argc, char** argv) {
  const long rows = argc > 1 ? std::atol(argv[1]) : 200000;
  const int bandwidth = argc > 2 ? std::atoi(argv[2]) : 12;
  auto dir = MakeTempDir("mtx-bench");
  if (!dir.ok()) {
    std::fprintf(stderr, "mtx_read_bench: %s\n", dir.status().ToString().c_str());
    return 1;
  }
  const std::string path = *dir + "/a.mtx";
  WriteBanded(path, rows, bandwidth);
  double best_aiac = 1e9, best_lines = 1e9, best_bytes = 1e9;
  size_t entries = 0, bytes = 0;
  for (int turn = 0; turn < 3; ++turn) {  // best of three, alternating
    auto t = Clock::now();
    bytes = ReadBytes(path);
    best_bytes = std::min(best_bytes, bench::SecondsSince(t));
    t = Clock::now();
    auto m = cg::ReadMatrixMarket(path);
    best_aiac = std::min(best_aiac, bench::SecondsSince(t));
    if (!m.ok()) {
      std::fprintf(stderr, "mtx_read_bench: %s\n", m.status().ToString().c_str());
      return 1;
    }
    entries = m->entries.size();
    t = Clock::now();
    const size_t by_lines = ReadByLines(path);
    best_lines = std::min(best_lines, bench::SecondsSince(t));
    if (by_lines != entries) {
      std::fprintf(stderr, "mtx_read_bench: %zu entries by lines, %zu by ReadMatrixMarket\n",
                   by_lines, entries);
      return 1;
    }
  }
  // The app's whole read, from the text and from the cache (written by the first cached read).
  double best_text = 1e9, best_cache = 1e9;
  std::vector<std::string> notes;
  if (!cg::ReadMatrix(path, true, notes).ok()) return 1;
  for (int turn = 0; turn < 3; ++turn) {
    notes.clear();
    auto t = Clock::now();
    auto text = cg::ReadMatrix(path, false, notes);
    best_text = std::min(best_text, bench::SecondsSince(t));
    t = Clock::now();
    auto cached = cg::ReadMatrix(path, true, notes);
    best_cache = std::min(best_cache, bench::SecondsSince(t));
    if (!text.ok() || !cached.ok() || notes.size() != 1 ||
        notes[0].find("from its cache") == std::string::npos ||
        text->matrix().nonZeros() != cached->matrix().nonZeros()) {
      std::fprintf(stderr, "mtx_read_bench: the cache was not used or differs\n");
      return 1;
    }
  }
  std::filesystem::remove_all(*dir);
  std::printf("%ld rows, bandwidth %d: %.1f MB, %zu stored entries (best of 3)\n", rows, bandwidth,
              bytes / 1e6, entries);
  std::printf(
      "  ReadMatrixMarket  %.3f s\n  stream per line   %.3f s   stream/aiac %.1fx\n"
      "  bytes only        %.3f s   aiac/bytes  %.1fx\n",
      best_aiac, best_lines, best_lines / best_aiac, best_bytes, best_aiac / best_bytes);
  std::printf(
      "  CG matrix from the text   %.3f s\n  CG matrix from its cache  %.3f s   text/cache %.1fx\n",
      best_text, best_cache, best_text / best_cache);
  return 0;
}
