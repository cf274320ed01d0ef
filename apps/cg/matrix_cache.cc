#include "apps/cg/matrix_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string_view>
#include <utility>

#include "apps/cg/byte_codec.h"
#include "apps/cg/matrix_market.h"
#include "core/crc32c.h"
#include "core/memory_budget.h"

namespace aiac::cg {

namespace {

constexpr char kMagic[8] = {'A', 'I', 'A', 'C', 'C', 'S', 'R', '1'};
constexpr std::streamsize kSample = 1 << 20;  // bytes of the source's head and tail in its key

// The file layout: the header, then outer (rows + 1 ints), inner (nnz ints), values (nnz doubles).
struct Header {
  char magic[8];
  MatrixFileVersion source;
  int64_t rows, cols, nnz;
  uint32_t outer_crc, inner_crc, values_crc, zero;
};
static_assert(sizeof(Header) == 8 + 24 + 24 + 16, "no padding in the cache header");

template <typename T>
std::string_view Bytes(const T* data, int64_t count) {
  return {reinterpret_cast<const char*>(data), static_cast<size_t>(count) * sizeof(T)};
}

// What every reader checks of a cache's header before it trusts the sizes: the magic, the
// version of the source it was made from, and sizes that add up to the cache's `length`.
Status CheckHeader(const Header& h, uint64_t length, const MatrixFileVersion& version, const std::string& path) {
  auto damaged = [&](const std::string& what) { return Corruption("the cache " + path + " is damaged: " + what); };
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return damaged("not an aiac matrix cache");
  if (!(h.source == version)) return Unavailable("the cache " + path + " was made from another version of the file");
  if (h.rows < 1 || h.rows > kMaxMatrixRows || h.cols < 1 || h.cols > kMaxMatrixRows || h.nnz < 0 ||
      length != sizeof h + static_cast<uint64_t>(h.rows + 1) * sizeof(int) +
                    static_cast<uint64_t>(h.nnz) * (sizeof(int) + sizeof(double))) {
    return damaged("its sizes do not match its length");
  }
  return Status::Ok();
}

}  // namespace

std::string MatrixCachePath(const std::string& matrix_path) { return matrix_path + ".aiac-csr"; }

Result<MatrixFileVersion> MatrixFileVersionOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return NotFound("cannot read " + path + ": " + std::strerror(errno));
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

Result<SpMat> LoadMatrixCache(const std::string& matrix_path, const MatrixFileVersion& version) {
  const std::string path = MatrixCachePath(matrix_path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("no cache " + path);
  auto damaged = [&](const std::string& what) { return Corruption("the cache " + path + " is damaged: " + what); };
  Header h{};
  if (!in.read(reinterpret_cast<char*>(&h), sizeof h)) return damaged("shorter than its header");
  // Sizes are checked against the cache's own length before anything is allocated for them.
  in.seekg(0, std::ios::end);
  AIAC_RETURN_IF_ERROR(CheckHeader(h, static_cast<uint64_t>(in.tellg()), version, path));
  AIAC_RETURN_IF_ERROR(CheckFitsInMemory("the cached matrix " + path,
                                         static_cast<double>(h.nnz) * 12 + static_cast<double>(h.rows) * 4));
  in.seekg(sizeof h);
  SpMat a(static_cast<Eigen::Index>(h.rows), static_cast<Eigen::Index>(h.cols));
  a.resizeNonZeros(static_cast<Eigen::Index>(h.nnz));
  in.read(reinterpret_cast<char*>(a.outerIndexPtr()), (h.rows + 1) * static_cast<std::streamsize>(sizeof(int)));
  in.read(reinterpret_cast<char*>(a.innerIndexPtr()), h.nnz * static_cast<std::streamsize>(sizeof(int)));
  in.read(reinterpret_cast<char*>(a.valuePtr()), h.nnz * static_cast<std::streamsize>(sizeof(double)));
  if (!in) return damaged("cut short");
  if (Crc32c(Bytes(a.outerIndexPtr(), h.rows + 1)) != h.outer_crc ||
      Crc32c(Bytes(a.innerIndexPtr(), h.nnz)) != h.inner_crc || Crc32c(Bytes(a.valuePtr(), h.nnz)) != h.values_crc) {
    return damaged("a checksum does not match");
  }
  // The structure too: Eigen trusts it, and a wrong index would be read out of bounds.
  const int* outer = a.outerIndexPtr();
  const int* inner = a.innerIndexPtr();
  if (outer[0] != 0 || outer[h.rows] != h.nnz) return damaged("bad row starts");
  for (int64_t r = 0; r < h.rows; ++r) {
    if (outer[r + 1] < outer[r]) return damaged("bad row starts");
    for (int k = outer[r]; k < outer[r + 1]; ++k) {
      if (inner[k] < 0 || inner[k] >= h.cols || (k > outer[r] && inner[k] <= inner[k - 1])) {
        return damaged("bad column index in row " + std::to_string(r + 1));
      }
    }
  }
  return a;
}

Status SaveMatrixCache(const std::string& matrix_path, const SpMat& a, const MatrixFileVersion& version) {
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
  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return IoError("cannot write " + temp + ": " + std::strerror(errno));
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    for (auto bytes : {Bytes(a.outerIndexPtr(), h.rows + 1), Bytes(a.innerIndexPtr(), h.nnz),
                       Bytes(a.valuePtr(), h.nnz)}) {
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    out.flush();
    if (!out) {
      out.close();
      std::remove(temp.c_str());
      return IoError("cannot write " + temp + " (disk full?)");
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temp.c_str());
    return IoError("cannot rename " + temp + " to " + path + ": " + why);
  }
  return Status::Ok();
}

Result<MappedMatrixCache> MappedMatrixCache::Open(const std::string& matrix_path, const MatrixFileVersion& version) {
  MappedMatrixCache m;
  m.path_ = MatrixCachePath(matrix_path);
  auto damaged = [&](const std::string& what) { return Corruption("the cache " + m.path_ + " is damaged: " + what); };
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
  void* map = ::mmap(nullptr, m.length_, PROT_READ, MAP_PRIVATE, fd, 0);
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
  // The doubles are 8-aligned only when rows + 1 + nnz is even: they are copied out bytewise.
  m.values_ = reinterpret_cast<const char*>(m.inner_ + h.nnz);
  if (m.outer_[0] != 0 || m.outer_[h.rows] != h.nnz) return damaged("bad row starts");
  return m;
}

MappedMatrixCache::MappedMatrixCache(MappedMatrixCache&& other) noexcept { *this = std::move(other); }

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
  }
  return *this;
}

MappedMatrixCache::~MappedMatrixCache() {
  if (map_) ::munmap(map_, length_);
}

Status MappedMatrixCache::Row(int64_t i, std::vector<int>& cols, std::vector<double>& vals) const {
  const int begin = outer_[i], end = outer_[i + 1];
  if (begin < 0 || end < begin || end > nnz_) {
    return Corruption("the cache " + path_ + " is damaged: bad row starts at row " + std::to_string(i + 1));
  }
  cols.assign(inner_ + begin, inner_ + end);
  vals.resize(cols.size());
  std::memcpy(vals.data(), values_ + static_cast<size_t>(begin) * sizeof(double), cols.size() * sizeof(double));
  if (!AscendingBelow(cols, static_cast<int>(cols_))) {
    return Corruption("the cache " + path_ + " is damaged: bad column index in row " + std::to_string(i + 1));
  }
  return Status::Ok();
}

}  // namespace aiac::cg
