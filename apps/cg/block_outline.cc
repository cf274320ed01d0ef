#include "apps/cg/block_outline.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "apps/cg/byte_codec.h"

namespace aiac::cg {
namespace {

constexpr uint32_t kOutlineMagic = 0x72676361;  // "acgr" as stored

}  // namespace

BlockOutline OutlineBlock(const SpRef& a, std::vector<double> b_rows, std::vector<int> rows,
                          std::vector<int> own, const std::vector<uint32_t>& owner,
                          std::vector<Block::Send> out, std::string matrix,
                          const MatrixFileVersion& source) {
  BlockOutline o;
  o.n = static_cast<int>(a.rows());
  o.matrix = std::move(matrix);
  o.source = source;
  o.rows = std::move(rows);
  o.own = std::move(own);
  o.out = std::move(out);
  o.b = std::move(b_rows);
  const RowIndex index(o.rows);
  std::vector<std::pair<uint32_t, int>>
      outside;  // (owner, column) of every entry outside the block
  for (const int r : o.rows) {
    o.nonzeros += a.outerIndexPtr()[r + 1] - a.outerIndexPtr()[r];
    for (SpRef::InnerIterator it(a, r); it; ++it) {
      const int c = static_cast<int>(it.col());
      if (index(c) < 0) outside.emplace_back(owner[static_cast<size_t>(c)], c);
    }
  }
  std::sort(outside.begin(), outside.end());
  outside.erase(std::unique(outside.begin(), outside.end()), outside.end());
  for (const auto& [m, c] : outside) {
    if (o.in.empty() || o.in.back().task != m) o.in.push_back({m, {}});
    o.in.back().cols.push_back(c);
  }
  return o;
}

std::string EncodeBlockOutline(const BlockOutline& o) {
  SliceWriter w;
  w.Put<uint32_t>(kOutlineMagic);
  w.Put<int32_t>(o.n);
  w.Put<int64_t>(o.nonzeros);
  w.PutString(o.matrix);
  w.Put(o.source);
  w.PutVector(o.rows);
  w.PutVector(o.own);
  w.PutVector(o.b);
  w.Put<uint32_t>(static_cast<uint32_t>(o.in.size()));
  for (const auto& i : o.in) {
    w.Put<uint32_t>(i.task);
    w.PutVector(i.cols);
  }
  w.Put<uint32_t>(static_cast<uint32_t>(o.out.size()));
  for (const auto& s : o.out) {
    w.Put<uint32_t>(s.task);
    w.PutVector(s.rows);
  }
  return w.Take();
}

bool IsBlockOutline(std::string_view slice) {
  uint32_t magic = 0;
  return SliceReader(slice).Get(magic) && magic == kOutlineMagic;
}

Result<BlockOutline> DecodeBlockOutline(std::string_view bytes) {
  SliceReader r(bytes);
  BlockOutline o;
  uint32_t magic = 0, nin = 0, nout = 0;
  auto bad = [] { return Corruption("cg: the task's block outline does not decode"); };
  if (!r.Get(magic) || magic != kOutlineMagic || !r.Get(o.n) || o.n < 1 || !r.Get(o.nonzeros) ||
      o.nonzeros < 0 || !r.GetString(o.matrix, 4096) || o.matrix.empty() || o.matrix[0] != '/' ||
      !r.Get(o.source) || !r.GetVector(o.rows, bytes.size()) || o.rows.empty() ||
      !AscendingBelow(o.rows, o.n) || !r.GetVector(o.own, bytes.size()) ||
      !AscendingBelow(o.own, static_cast<int>(o.rows.size())) || !r.GetVector(o.b, bytes.size()) ||
      o.b.size() != o.rows.size() || !r.Get(nin)) {
    return bad();
  }
  for (uint32_t k = 0; k < nin; ++k) {
    BlockOutline::Input i;
    if (!r.Get(i.task) || !r.GetVector(i.cols, bytes.size()) || i.cols.empty() ||
        !AscendingBelow(i.cols, o.n) || (!o.in.empty() && i.task <= o.in.back().task)) {
      return bad();
    }
    o.in.push_back(std::move(i));
  }
  if (!r.Get(nout)) return bad();
  for (uint32_t k = 0; k < nout; ++k) {
    Block::Send s;
    if (!r.Get(s.task) || !r.GetVector(s.rows, bytes.size()) ||
        !AscendingBelow(s.rows, static_cast<int>(o.rows.size()))) {
      return bad();
    }
    o.out.push_back(std::move(s));
  }
  if (!r.done()) return bad();
  return o;
}

Result<Block> BuildBlockFromCache(BlockOutline o, const MappedMatrixCache& cache) {
  const std::string what = "cg: the matrix cache does not match the spawner's block outline";
  if (cache.rows() != o.n || cache.cols() != o.n) {
    return Corruption(what + " (" + std::to_string(cache.rows()) + " rows, not " +
                      std::to_string(o.n) + ")");
  }
  if (o.nonzeros > cache.nnz()) {
    return Corruption(what + " (" + std::to_string(o.nonzeros) +
                      " entries in a block of a matrix of " + std::to_string(cache.nnz()) + ")");
  }
  // Who owns each column outside the block, as the spawner saw it; an entry the spawner did not
  // see outside the block has no owner, and the block is refused below.
  constexpr uint32_t kNoOwner = std::numeric_limits<uint32_t>::max();
  std::vector<std::pair<int, uint32_t>> owners;
  for (const auto& i : o.in) {
    for (int c : i.cols) owners.emplace_back(c, i.task);
  }
  std::sort(owners.begin(), owners.end());
  bool unknown_column = false;
  const OwnerFn owner = [&](int c) {
    auto it = std::lower_bound(owners.begin(), owners.end(), std::pair<int, uint32_t>(c, 0));
    if (it == owners.end() || it->first != c) {
      unknown_column = true;
      return kNoOwner;
    }
    return it->second;
  };
  Status read = Status::Ok();
  const RowFn row = [&](int i, std::vector<int>& cols, std::vector<double>& vals) {
    if (Status s = cache.Row(i, cols, vals); !s.ok()) {
      if (read.ok()) read = s;
      cols.clear();
      vals.clear();
    }
  };
  const int64_t nonzeros = o.nonzeros;
  Block blk = BuildBlock(row, o.b, o.n, std::move(o.rows), std::move(o.own), owner,
                         std::move(o.out), nonzeros);
  if (!read.ok()) return read;
  bool same = !unknown_column && blk.nonzeros == nonzeros && blk.in.size() == o.in.size();
  for (size_t k = 0; same && k < o.in.size(); ++k) {
    same = blk.in[k].task == o.in[k].task && blk.in[k].cols == o.in[k].cols;
  }
  if (!same) return Corruption(what + " (another matrix of the same size?)");
  return blk;
}

Result<Block> BuildBlockFromCache(BlockOutline outline) {
  auto cache = MappedMatrixCache::Open(outline.matrix, outline.source);
  if (!cache.ok()) {
    return Status(cache.status().code(),
                  "cg: this daemon cannot read its block from the shared matrix " + outline.matrix +
                      ": " + cache.status().message());
  }
  return BuildBlockFromCache(std::move(outline), *cache);
}

}  // namespace aiac::cg
