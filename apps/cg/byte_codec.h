// Little-endian-as-stored byte encoding of the CG app's data slices (blocks, block outlines):
// plain values, length-prefixed vectors and compressed sparse matrices. SliceReader checks every
// length against what is left and a caller's limit, and a matrix's structure, before anything is
// trusted, so a damaged slice decodes to an error, never to an out-of-bounds read. Slices travel
// between machines of the same architecture (the plugin is built for it).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "apps/cg/cg_problem.h"

namespace aiac::cg {

class SliceWriter {
 public:
  template <typename T>
  void Put(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <typename T>
  void PutVector(const std::vector<T>& v) {
    Put<uint64_t>(v.size());
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void PutString(std::string_view v) {
    Put<uint64_t>(v.size());
    out_.append(v);
  }
  void PutMatrix(const SpMat& m) {
    Put<int32_t>(static_cast<int32_t>(m.rows()));
    Put<int32_t>(static_cast<int32_t>(m.cols()));
    std::vector<int> ptr(m.outerIndexPtr(), m.outerIndexPtr() + m.rows() + 1);
    std::vector<int> idx(m.innerIndexPtr(), m.innerIndexPtr() + m.nonZeros());
    std::vector<double> val(m.valuePtr(), m.valuePtr() + m.nonZeros());
    PutVector(ptr);
    PutVector(idx);
    PutVector(val);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class SliceReader {
 public:
  explicit SliceReader(std::string_view in) : in_(in) {}
  template <typename T>
  bool Get(T& v) {
    if (in_.size() - pos_ < sizeof v) return false;
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return true;
  }
  template <typename T>
  bool GetVector(std::vector<T>& v, uint64_t limit) {
    uint64_t n;
    if (!Get(n) || n > limit || n > (in_.size() - pos_) / sizeof(T)) return false;
    v.resize(n);
    if (n > 0)
      std::memcpy(v.data(), in_.data() + pos_,
                  n * sizeof(T));  // (an empty vector's data() may be null)
    pos_ += n * sizeof(T);
    return true;
  }
  bool GetString(std::string& v, uint64_t limit) {
    uint64_t n;
    if (!Get(n) || n > limit || n > in_.size() - pos_) return false;
    v.assign(in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool GetMatrix(SpMat& m) {
    int32_t rows, cols;
    std::vector<int> ptr, idx;
    std::vector<double> val;
    if (!Get(rows) || !Get(cols) || rows < 0 || cols < 0) return false;
    if (!GetVector(ptr, static_cast<uint64_t>(rows) + 1) ||
        ptr.size() != static_cast<size_t>(rows) + 1)
      return false;
    if (!GetVector(idx, in_.size()) || !GetVector(val, in_.size()) || idx.size() != val.size())
      return false;
    if (ptr[0] != 0 || ptr[rows] != static_cast<int>(idx.size())) return false;
    for (int r = 0; r < rows; ++r) {
      if (ptr[r] > ptr[r + 1]) return false;
      for (int k = ptr[r]; k < ptr[r + 1]; ++k) {
        if (idx[k] < 0 || idx[k] >= cols || (k > ptr[r] && idx[k] <= idx[k - 1])) return false;
      }
    }
    m = CompressedMatrix(rows, cols, ptr, idx, val);
    return true;
  }
  bool done() const { return pos_ == in_.size(); }
  size_t position() const { return pos_; }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

// Whether `v` is strictly ascending within 0..limit-1: row and column lists of a slice.
inline bool AscendingBelow(const std::vector<int>& v, int limit) {
  for (size_t k = 0; k < v.size(); ++k) {
    if (v[k] < 0 || v[k] >= limit || (k > 0 && v[k] <= v[k - 1])) return false;
  }
  return true;
}

}  // namespace aiac::cg
