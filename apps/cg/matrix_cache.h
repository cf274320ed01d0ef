// A binary cache of a Matrix Market matrix as the CG app uses it (compressed sparse rows), next
// to the file: FILE.aiac-csr. A second run on the same input loads the arrays instead of
// parsing text and sorting entries (an 800,000-row banded system: about 0.1 s against 2 s).
//
// The cache names its source by size, modification time (ns) and a CRC32C of the source's
// first and last MiB, so an edited or replaced file is read again (and the cache rewritten);
// each array carries a CRC32C and the structure is checked, so a damaged or truncated cache is
// ignored rather than trusted. It is written to a temporary file renamed into place, so a
// reader never sees half of one. Not thread-safe against two writers of the same cache; the
// rename keeps either one's complete file.
#pragma once

#include <cstdint>
#include <string>

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

// The matrix of `matrix_path` from its cache, when the cache was made from `version` of it.
// NotFound when there is none; Unavailable when it was made from another version of the file;
// Corruption naming the damage when it is damaged.
Result<SpMat> LoadMatrixCache(const std::string& matrix_path, const MatrixFileVersion& version);

// Writes the cache of `matrix_path` (its matrix `a`, compressed), made from `version` of the file:
// the version taken before the file was read, so that a file changed while it was parsed is
// read again next time. An error names the reason (a read-only folder, say); the caller goes on
// without a cache.
Status SaveMatrixCache(const std::string& matrix_path, const SpMat& a, const MatrixFileVersion& version);

}  // namespace aiac::cg
