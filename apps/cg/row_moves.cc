#include "apps/cg/row_moves.h"

#include <algorithm>
#include <string_view>

#include "apps/cg/byte_codec.h"

namespace aiac::cg {
namespace {

constexpr uint32_t kRowMoveMagic = 0x6d726763;  // "cgrm"

bool InRows(int lo, int hi, int n) { return 0 <= lo && lo <= hi && hi <= n; }

}  // namespace

int MinBlockRows(const GeneratedSpec& spec) { return std::max(1, spec.bandwidth + 1); }

bool SlicesCanMove(const GeneratedSpec& spec, const std::vector<int>& starts) {
  for (size_t l = 0; l + 1 < starts.size(); ++l) {
    if (starts[l + 1] - starts[l] < MinBlockRows(spec)) return false;
  }
  return true;
}

std::vector<int> LocalStarts(int n, uint32_t tasks, uint32_t l, int lo, int hi) {
  std::vector<int> starts(static_cast<size_t>(tasks) + 1, 0);
  for (uint32_t m = l + 2; m <= tasks; ++m) starts[m] = n;
  starts[l] = lo;
  starts[l + 1] = hi;
  return starts;
}

Block GeneratedBlock(const GeneratedSpec& spec, const std::vector<int>& starts, uint32_t task) {
  const int lo = starts[task], hi = starts[task + 1];
  const RowFn row = [spec](int i, std::vector<int>& cols, std::vector<double>& vals) { GeneratedRow(spec, i, cols, vals); };
  std::vector<double> b_rows;
  b_rows.reserve(static_cast<size_t>(hi - lo));
  std::vector<int> cols;
  std::vector<double> vals;
  for (int i = lo; i < hi; ++i) {
    GeneratedRow(spec, i, cols, vals);
    double sum = 0;
    for (double v : vals) sum += v;
    b_rows.push_back(sum);  // b = A * ones
  }
  std::vector<int> rows(static_cast<size_t>(hi - lo)), own(rows.size());
  for (size_t k = 0; k < rows.size(); ++k) {
    rows[k] = lo + static_cast<int>(k);
    own[k] = static_cast<int>(k);
  }
  const OwnerFn owner = [&starts](int r) { return static_cast<uint32_t>(OwnerOf(starts, r)); };
  return BuildBlock(row, b_rows, spec.n, std::move(rows), std::move(own), owner,
                    SymmetricSendLists(row, spec.n, starts, task),
                    static_cast<int64_t>(hi - lo) * (2 * spec.bandwidth + 1));
}

std::string EncodeRowMove(const RowMove& move) {
  SliceWriter w;
  w.Put<uint32_t>(kRowMoveMagic);
  w.Put<int32_t>(move.n);
  w.Put<int32_t>(move.lo);
  w.Put<int32_t>(move.hi);
  w.PutVector(move.x);
  w.Put<int32_t>(move.halo_lo);
  w.PutVector(move.halo);
  return w.Take();
}

Result<RowMove> DecodeRowMove(std::string_view bytes, int n) {
  SliceReader r(bytes);
  uint32_t magic = 0;
  RowMove m;
  const bool read = r.Get(magic) && magic == kRowMoveMagic && r.Get(m.n) && r.Get(m.lo) && r.Get(m.hi) &&
                    r.GetVector(m.x, static_cast<uint64_t>(std::max(0, n))) && r.Get(m.halo_lo) &&
                    r.GetVector(m.halo, static_cast<uint64_t>(std::max(0, n))) && r.done();
  if (!read) return InvalidArgument("cg: not rows of a generated system moving between tasks");
  if (m.n != n || !InRows(m.lo, m.hi, n) || m.x.size() != static_cast<size_t>(m.hi - m.lo) ||
      !InRows(m.halo_lo, m.halo_lo + static_cast<int>(m.halo.size()), n)) {
    return InvalidArgument("cg: moving rows " + std::to_string(m.lo) + ".." + std::to_string(m.hi) + " of " +
                           std::to_string(m.n) + " do not fit this system of " + std::to_string(n) + " rows");
  }
  return m;
}

}  // namespace aiac::cg
