// A binary cache of a Matrix Market matrix as the CG app uses it (compressed sparse rows), next
// to the file: FILE.aiac-csr. A second run on the same input maps the arrays instead of parsing
// text and building rows (an 800,000-row banded system: 0.04 s against about 1 s).
//
// The cache names its source by size, modification time (ns) and a CRC32C of the source's
// first and last MiB, so an edited or replaced file is read again (and the cache rewritten);
// each array carries a CRC32C and the structure is checked, so a damaged or truncated cache is
// ignored rather than trusted. It is written to a temporary file renamed into place, so a
// reader never sees half of one. Not thread-safe against two writers of the same cache; the
// rename keeps either one's complete file.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/cg/cg_problem.h"
#include "core/status.h"

namespace aiac::cg {

std::string MatrixCachePath(const std::string& matrix_path);

// What names a version of the matrix file: its size, modification time and a CRC32C of its first
// and last MiB. Stored as it is in the cache's header.
struct MatrixFileVersion {
  uint64_t size;
  int64_t mtime_ns;
  uint32_t sample_crc;
  uint32_t zero;  // (no padding: every byte of the cache file is defined)
  bool operator==(const MatrixFileVersion&) const = default;
};
Result<MatrixFileVersion> MatrixFileVersionOf(const std::string& matrix_path);

// The matrix of `matrix_path` from its cache, when the cache was made from `version` of it:
// mapped, not copied (the pages are the page cache's; an 800,000-row matrix took 0.6 s to copy
// into fresh memory on our VM), and checked whole: every array's checksum and the structure.
// NotFound when there is none; Unavailable when it was made from another version of the file
// or in an older format; Corruption naming the damage when it is damaged. (A cache is only ever
// replaced by a rename, never rewritten in place: a mapping keeps the file it checked.)
class MappedMatrixCache;
Result<MappedMatrixCache> LoadMatrixCache(const std::string& matrix_path,
                                          const MatrixFileVersion& version);

// Writes the cache of `matrix_path` (its matrix `a`, compressed), made from `version` of the file:
// the version taken before the file was read, so that a file changed while it was parsed is
// read again next time. An error names the reason (a read-only folder, say); the caller goes on
// without a cache.
Status SaveMatrixCache(const std::string& matrix_path, const SpMat& a,
                       const MatrixFileVersion& version);

// A cache file mapped read-only: the spawner's whole matrix (LoadMatrixCache), or a daemon's rows
// as it builds its own block (block_outline.h): only the pages of those rows are read, and
// daemons on one host share them in the page cache. Open checks the header, the source version
// the spawner read and the sizes; Row checks the row's columns. The whole-array checksums are not
// checked there (that would read the whole file): the spawner checked them when it loaded the
// same version. Move-only.
class MappedMatrixCache {
 public:
  // NotFound when there is no cache; Unavailable when it was made from another version of the
  // file than `version`; Corruption naming the damage.
  static Result<MappedMatrixCache> Open(const std::string& matrix_path,
                                        const MatrixFileVersion& version);
  MappedMatrixCache(MappedMatrixCache&& other) noexcept;
  MappedMatrixCache& operator=(MappedMatrixCache&& other) noexcept;
  MappedMatrixCache(const MappedMatrixCache&) = delete;
  MappedMatrixCache& operator=(const MappedMatrixCache&) = delete;
  ~MappedMatrixCache();

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t nnz() const { return nnz_; }
  // Row `i` (0 <= i < rows()): its columns, ascending, and values. Corruption, naming the row,
  // when its extent or columns are out of order or out of range.
  Status Row(int64_t i, std::vector<int>& cols, std::vector<double>& vals) const;
  // The whole matrix over the mapped arrays (valid while this lives): to be used only after
  // CheckWhole (LoadMatrixCache), since Eigen trusts the structure.
  Eigen::Map<const SpMat> matrix() const;
  // Every array's checksum and the whole structure: Corruption naming the damage.
  Status CheckWhole() const;

 private:
  friend Result<MappedMatrixCache> LoadMatrixCache(const std::string&, const MatrixFileVersion&);
  MappedMatrixCache() = default;
  // `whole`: every page will be read, map them at once.
  static Result<MappedMatrixCache> Map(const std::string& matrix_path,
                                       const MatrixFileVersion& version, bool whole);
  std::string path_;
  void* map_ = nullptr;
  size_t length_ = 0;
  int64_t rows_ = 0, cols_ = 0, nnz_ = 0;
  const int* outer_ = nullptr;
  const int* inner_ = nullptr;
  const double* values_ = nullptr;
  std::array<uint32_t, 3> header_crcs_{};  // outer, inner, values
};

}  // namespace aiac::cg
