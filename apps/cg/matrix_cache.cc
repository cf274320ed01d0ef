#include "apps/cg/matrix_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string_view>
#include <thread>
#include <utility>

#include "apps/cg/byte_codec.h"
#include "apps/cg/matrix_market.h"
#include "core/atomic_file.h"
#include "core/crc32c.h"

namespace aiac::cg {

namespace {

constexpr char kMagic[8] = {'A', 'I', 'A', 'C', 'C', 'S', 'R', '2'};
// Version 1 had the values right after the columns, 8-aligned only half of the time.
constexpr char kMagicV1[8] = {'A', 'I', 'A', 'C', 'C', 'S', 'R', '1'};
constexpr std::streamsize kSample = 1 << 20;  // bytes of the source's head and tail in its key

// The file layout: the header, then outer (rows + 1 ints), inner (nnz ints), 4 zero bytes when
// rows + 1 + nnz is odd, values (nnz doubles). The header is 72 bytes: in a mapping every array is
// aligned for its type, so the spawner uses the mapped arrays as they are (MappedMatrixCache).
struct Header {
  char magic[8];
  MatrixFileVersion source;
  int64_t rows, cols, nnz;
  uint32_t outer_crc, inner_crc, values_crc, zero;
};
static_assert(sizeof(Header) == 8 + 24 + 24 + 16, "no padding in the cache header");

// Bytes from the start of the file to the values.
uint64_t ValuesOffset(int64_t rows, int64_t nnz) {
  const uint64_t ints = sizeof(Header) + static_cast<uint64_t>(rows + 1 + nnz) * sizeof(int);
  return (ints + alignof(double) - 1) / alignof(double) * alignof(double);
}

template <typename T>
std::string_view Bytes(const T* data, int64_t count) {
  return {reinterpret_cast<const char*>(data), static_cast<size_t>(count) * sizeof(T)};
}

// What every reader checks of a cache's header before it trusts the sizes: the magic, the
// version of the source it was made from, and sizes that add up to the cache's `length`.
Status CheckHeader(const Header& h, uint64_t length, const MatrixFileVersion& version,
                   const std::string& path) {
  auto damaged = [&](const std::string& what) {
    return Corruption("the cache " + path + " is damaged: " + what);
  };
  if (std::memcmp(h.magic, kMagicV1, sizeof kMagicV1) == 0) {
    return Unavailable("the cache " + path + " is of an older format");
  }
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return damaged("not an aiac matrix cache");
  if (!(h.source == version))
    return Unavailable("the cache " + path + " was made from another version of the file");
  if (h.rows < 1 || h.rows > kMaxMatrixRows || h.cols < 1 || h.cols > kMaxMatrixRows || h.nnz < 0 ||
      length != ValuesOffset(h.rows, h.nnz) + static_cast<uint64_t>(h.nnz) * sizeof(double)) {
    return damaged("its sizes do not match its length");
  }
  return Status::Ok();
}

}  // namespace

std::string MatrixCachePath(const std::string& matrix_path) { return matrix_path + ".aiac-csr"; }

Result<MatrixFileVersion> MatrixFileVersionOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return NotFound("cannot read " + path + ": " + std::strerror(errno));
  MatrixFileVersion key{};
  key.size = static_cast<uint64_t>(st.st_size);
  key.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  std::ifstream in(path, std::ios::binary);
  std::string sample(static_cast<size_t>(std::min<uint64_t>(key.size, 2 * kSample)), '\0');
  if (key.size <= 2 * kSample) {
    in.read(sample.data(), static_cast<std::streamsize>(sample.size()));
  } else {
    in.read(sample.data(), kSample);
    in.seekg(-kSample, std::ios::end);
    in.read(sample.data() + kSample, kSample);
  }
  if (!in) return IoError("cannot read " + path);
  key.sample_crc = Crc32c(sample);
  return key;
}

Result<MappedMatrixCache> LoadMatrixCache(const std::string& matrix_path,
                                          const MatrixFileVersion& version) {
  AIAC_ASSIGN_OR_RETURN(auto cache, MappedMatrixCache::Map(matrix_path, version, true));
  AIAC_RETURN_IF_ERROR(cache.CheckWhole());
  return cache;
}

Status SaveMatrixCache(const std::string& matrix_path, const SpMat& a,
                       const MatrixFileVersion& version) {
  if (!a.isCompressed()) return InvalidArgument("the matrix to cache must be compressed");
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.source = version;
  h.rows = a.rows();
  h.cols = a.cols();
  h.nnz = a.nonZeros();
  h.outer_crc = Crc32c(Bytes(a.outerIndexPtr(), h.rows + 1));
  h.inner_crc = Crc32c(Bytes(a.innerIndexPtr(), h.nnz));
  h.values_crc = Crc32c(Bytes(a.valuePtr(), h.nnz));
  const std::string path = MatrixCachePath(matrix_path);
  const char padding[alignof(double)] = {};
  const auto pad = ValuesOffset(h.rows, h.nnz) - sizeof h -
                   static_cast<uint64_t>(h.rows + 1 + h.nnz) * sizeof(int);
  return WriteFileAtomically(
      path, {Bytes(&h, 1), Bytes(a.outerIndexPtr(), h.rows + 1), Bytes(a.innerIndexPtr(), h.nnz),
             std::string_view(padding, pad), Bytes(a.valuePtr(), h.nnz)});
}

Result<MappedMatrixCache> MappedMatrixCache::Open(const std::string& matrix_path,
                                                  const MatrixFileVersion& version) {
  return Map(matrix_path, version, false);
}

Result<MappedMatrixCache> MappedMatrixCache::Map(const std::string& matrix_path,
                                                 const MatrixFileVersion& version, bool whole) {
  MappedMatrixCache m;
  m.path_ = MatrixCachePath(matrix_path);
  auto damaged = [&](const std::string& what) {
    return Corruption("the cache " + m.path_ + " is damaged: " + what);
  };
  const int fd = ::open(m.path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound("no cache " + m.path_);
    return IoError("cannot read " + m.path_ + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) < sizeof(Header)) {
    ::close(fd);
    return damaged("shorter than its header");
  }
  m.length_ = static_cast<size_t>(st.st_size);
  // All of it read (the spawner): its pages mapped in one go rather than one fault at a time.
  void* map =
      ::mmap(nullptr, m.length_, PROT_READ, MAP_PRIVATE | (whole ? MAP_POPULATE : 0), fd, 0);
  ::close(fd);  // the mapping keeps the file
  if (map == MAP_FAILED) return IoError("cannot map " + m.path_ + ": " + std::strerror(errno));
  m.map_ = map;
  Header h{};
  std::memcpy(&h, map, sizeof h);
  AIAC_RETURN_IF_ERROR(CheckHeader(h, m.length_, version, m.path_));
  m.rows_ = h.rows;
  m.cols_ = h.cols;
  m.nnz_ = h.nnz;
  const char* base = static_cast<const char*>(map) + sizeof h;
  m.outer_ = reinterpret_cast<const int*>(base);  // the header is 72 bytes: ints are aligned
  m.inner_ = m.outer_ + h.rows + 1;
  m.values_ =
      reinterpret_cast<const double*>(static_cast<const char*>(map) + ValuesOffset(h.rows, h.nnz));
  m.header_crcs_ = {h.outer_crc, h.inner_crc, h.values_crc};
  if (m.outer_[0] != 0 || m.outer_[h.rows] != h.nnz) return damaged("bad row starts");
  return m;
}

MappedMatrixCache::MappedMatrixCache(MappedMatrixCache&& other) noexcept {
  *this = std::move(other);
}

MappedMatrixCache& MappedMatrixCache::operator=(MappedMatrixCache&& other) noexcept {
  if (this != &other) {
    if (map_) ::munmap(map_, length_);
    path_ = std::move(other.path_);
    map_ = std::exchange(other.map_, nullptr);
    length_ = std::exchange(other.length_, 0);
    rows_ = other.rows_;
    cols_ = other.cols_;
    nnz_ = other.nnz_;
    outer_ = other.outer_;
    inner_ = other.inner_;
    values_ = other.values_;
    header_crcs_ = other.header_crcs_;
  }
  return *this;
}

Eigen::Map<const SpMat> MappedMatrixCache::matrix() const {
  return {static_cast<Eigen::Index>(rows_),
          static_cast<Eigen::Index>(cols_),
          static_cast<Eigen::Index>(nnz_),
          outer_,
          inner_,
          values_};
}

Status MappedMatrixCache::CheckWhole() const {
  auto damaged = [&](const std::string& what) {
    return Corruption("the cache " + path_ + " is damaged: " + what);
  };
  // The values' checksum (half the file) on a second thread, the rest here.
  uint32_t values_crc = 0;
  {
    std::jthread values([&] { values_crc = Crc32c(Bytes(values_, nnz_)); });
    if (Crc32c(Bytes(outer_, rows_ + 1)) != header_crcs_[0] ||
        Crc32c(Bytes(inner_, nnz_)) != header_crcs_[1]) {
      return damaged("a checksum does not match");
    }
  }
  if (values_crc != header_crcs_[2]) return damaged("a checksum does not match");
  // The structure too: Eigen trusts it, and a wrong index would be read out of bounds.
  if (outer_[0] != 0 || outer_[rows_] != nnz_) return damaged("bad row starts");
  for (int64_t r = 0; r < rows_; ++r) {
    if (outer_[r + 1] < outer_[r]) return damaged("bad row starts");
    for (int k = outer_[r]; k < outer_[r + 1]; ++k) {
      if (inner_[k] < 0 || inner_[k] >= cols_ || (k > outer_[r] && inner_[k] <= inner_[k - 1])) {
        return damaged("bad column index in row " + std::to_string(r + 1));
      }
    }
  }
  return Status::Ok();
}

MappedMatrixCache::~MappedMatrixCache() {
  if (map_) ::munmap(map_, length_);
}

Status MappedMatrixCache::Row(int64_t i, std::vector<int>& cols, std::vector<double>& vals) const {
  const int begin = outer_[i], end = outer_[i + 1];
  if (begin < 0 || end < begin || end > nnz_) {
    return Corruption("the cache " + path_ + " is damaged: bad row starts at row " +
                      std::to_string(i + 1));
  }
  cols.assign(inner_ + begin, inner_ + end);
  vals.assign(values_ + begin, values_ + end);
  if (!AscendingBelow(cols, static_cast<int>(cols_))) {
    return Corruption("the cache " + path_ + " is damaged: bad column index in row " +
                      std::to_string(i + 1));
  }
  return Status::Ok();
}

}  // namespace aiac::cg
