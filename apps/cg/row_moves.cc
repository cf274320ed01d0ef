#include "apps/cg/row_moves.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "apps/cg/byte_codec.h"

namespace aiac::cg {
namespace {

constexpr uint32_t kRowMoveMagic = 0x6d726763;  // "cgrm"
constexpr char kMovableSliceMagic[4] = {'a', 'c', 'g', 'v'};

bool InRows(int lo, int hi, int n) { return 0 <= lo && lo <= hi && hi <= n; }

}  // namespace

int MinBlockRows(int bandwidth, int overlap) { return std::max(1, overlap + bandwidth + 1); }

bool SlicesCanMove(int bandwidth, const std::vector<int>& starts, int overlap) {
  for (size_t l = 0; l + 1 < starts.size(); ++l) {
    if (starts[l + 1] - starts[l] < MinBlockRows(bandwidth, overlap)) return false;
  }
  return true;
}

std::pair<int, int> SlabRows(int n, int lo, int hi, int overlap) {
  return {std::max(0, lo - overlap), std::min(n, hi + overlap)};
}

int SlabOverlap(const std::vector<int>& starts, const std::vector<std::vector<int>>& block_rows) {
  int overlap = 0;
  for (size_t l = 0; l < block_rows.size(); ++l) {
    if (block_rows[l].empty()) continue;
    overlap = std::max(
        {overlap, starts[l] - block_rows[l].front(), block_rows[l].back() + 1 - starts[l + 1]});
  }
  return overlap;
}

std::optional<int> SymmetricBandwidth(const SpRef& a) {
  if (a.rows() != a.cols()) return std::nullopt;
  const int* inner = a.innerIndexPtr();
  // A symmetric pattern's widest entry above the diagonal is its widest below it.
  int bandwidth = 0;
  const bool symmetric =
      VisitMirrors(a, [&](int i, int k, int) { bandwidth = std::max(bandwidth, inner[k] - i); });
  if (!symmetric) return std::nullopt;
  return bandwidth;
}

std::vector<int> LocalStarts(int n, uint32_t tasks, uint32_t l, int lo, int hi) {
  std::vector<int> starts(static_cast<size_t>(tasks) + 1, 0);
  for (uint32_t m = l + 2; m <= tasks; ++m) starts[m] = n;
  starts[l] = lo;
  starts[l + 1] = hi;
  return starts;
}

namespace {

// Block `task` of slices `starts`, the slab of its slice, from its rows' entries `row` and b.
Block SliceBlock(const RowFn& row, const std::vector<double>& b_rows, int n,
                 const std::vector<int>& starts, uint32_t task, int overlap,
                 int64_t nonzeros_hint) {
  const int lo = starts[task], hi = starts[task + 1];
  const auto [first, last] = SlabRows(n, lo, hi, overlap);
  std::vector<int> rows(static_cast<size_t>(last - first)), own(static_cast<size_t>(hi - lo));
  for (size_t k = 0; k < rows.size(); ++k) rows[k] = first + static_cast<int>(k);
  for (size_t k = 0; k < own.size(); ++k) own[k] = lo - first + static_cast<int>(k);
  const OwnerFn owner = [&starts](int r) { return static_cast<uint32_t>(OwnerOf(starts, r)); };
  return BuildBlock(row, b_rows, n, std::move(rows), std::move(own), owner,
                    SymmetricSendLists(row, n, starts, task, overlap), nonzeros_hint);
}

}  // namespace

Block HeldBlock(const HeldRows& held, int n, const std::vector<int>& starts, uint32_t task,
                int overlap) {
  AIAC_CHECK(std::pair(held.lo, held.hi()) == SlabRows(n, starts[task], starts[task + 1], overlap));
  const RowFn row = [&held](int i, std::vector<int>& cols, std::vector<double>& vals) {
    held.Row(i, cols, vals);
  };
  return SliceBlock(row, held.b, n, starts, task, overlap, static_cast<int64_t>(held.cols.size()));
}

Block GeneratedBlock(const GeneratedSpec& spec, const std::vector<int>& starts, uint32_t task,
                     int overlap) {
  const auto [lo, hi] = SlabRows(spec.n, starts[task], starts[task + 1], overlap);
  const RowFn row = [spec](int i, std::vector<int>& cols, std::vector<double>& vals) {
    GeneratedRow(spec, i, cols, vals);
  };
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
  return SliceBlock(row, b_rows, spec.n, starts, task, overlap,
                    static_cast<int64_t>(hi - lo) * (2 * spec.bandwidth + 1));
}

std::string EncodeMovableSlice(int bandwidth, int overlap, std::string_view slice) {
  SliceWriter w;
  for (char c : kMovableSliceMagic) w.Put<char>(c);
  w.Put<int32_t>(bandwidth);
  w.Put<int32_t>(overlap);
  std::string out = w.Take();
  out.append(slice);
  return out;
}

bool IsMovableSlice(std::string_view slice) {
  return slice.size() >= sizeof kMovableSliceMagic &&
         slice.substr(0, sizeof kMovableSliceMagic) ==
             std::string_view(kMovableSliceMagic, sizeof kMovableSliceMagic);
}

Result<MovableSlice> DecodeMovableSlice(std::string_view bytes) {
  MovableSlice m;
  int32_t bandwidth = -1, overlap = -1;
  const size_t head = sizeof kMovableSliceMagic + sizeof bandwidth + sizeof overlap;
  if (!IsMovableSlice(bytes) || bytes.size() < head)
    return InvalidArgument("cg: not the slice of a task whose rows move");
  std::memcpy(&bandwidth, bytes.data() + sizeof kMovableSliceMagic, sizeof bandwidth);
  std::memcpy(&overlap, bytes.data() + sizeof kMovableSliceMagic + sizeof bandwidth,
              sizeof overlap);
  if (bandwidth < 0 || overlap < 0) {
    return InvalidArgument(
        "cg: the slice of a task whose rows move gives a negative bandwidth or overlap");
  }
  m.bandwidth = bandwidth;
  m.overlap = overlap;
  m.slice = bytes.substr(head);
  return m;
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
  PutHeldRows(w, move.entries);
  return w.Take();
}

Result<RowMove> DecodeRowMove(std::string_view bytes, int n) {
  SliceReader r(bytes);
  uint32_t magic = 0;
  RowMove m;
  const bool read = r.Get(magic) && magic == kRowMoveMagic && r.Get(m.n) && r.Get(m.lo) &&
                    r.Get(m.hi) && r.GetVector(m.x, static_cast<uint64_t>(std::max(0, n))) &&
                    r.Get(m.halo_lo) &&
                    r.GetVector(m.halo, static_cast<uint64_t>(std::max(0, n))) &&
                    GetHeldRows(r, m.entries, n) && r.done();
  if (!read) return InvalidArgument("cg: not rows of this system moving between tasks");
  if (m.n != n || !InRows(m.lo, m.hi, n) || m.x.size() != static_cast<size_t>(m.hi - m.lo) ||
      !InRows(m.halo_lo, m.halo_lo + static_cast<int>(m.halo.size()), n) ||
      (!m.entries.empty() && (m.entries.lo > m.lo || m.entries.hi() < m.hi))) {
    return InvalidArgument("cg: moving rows " + std::to_string(m.lo) + ".." + std::to_string(m.hi) +
                           " of " + std::to_string(m.n) + " do not fit this system of " +
                           std::to_string(n) + " rows");
  }
  return m;
}

}  // namespace aiac::cg
