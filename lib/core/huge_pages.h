// Large arrays about to be filled for the first time, backed by 2 MiB pages where the kernel
// allows it (transparent huge pages in "madvise" mode, Debian's default; a no-op elsewhere).
// On our VM, faulting in fresh 4 KiB pages cost about 1.2 ms per MB (a 163 MB array: 0.19 s of a
// matrix read), 2 MiB pages 0.03 s for the same array.
#pragma once

#include <cstddef>
#include <string>

namespace aiac {

// Advises the whole 2 MiB pages inside [data, data + bytes); smaller arrays are left alone.
// Only pages not yet touched change: call it right after allocating (reserve, not resize, for a
// vector) and before writing.
void AdviseHugePages(const void* data, size_t bytes);

// The same for every large allocation of the process, its libraries' included (CHOLMOD's
// factors and workspace, Eigen's dense blocks, which no call above reaches): glibc's malloc
// advises the memory it maps when the tunable glibc.malloc.hugetlb is 1, and reads its tunables
// only when the program starts. So this re-executes the program (the file /proc/self/exe names, the
// same arguments and environment) with glibc.malloc.hugetlb=1 added to GLIBC_TUNABLES, and returns
// without doing anything when that tunable is set already, whatever its value (a user's
// `GLIBC_TUNABLES=glibc.malloc.hugetlb=0` stands), or when the exec fails. The daemon and the
// spawner call it first in main, before they start a thread or open a descriptor (the exec
// keeps only the inherited ones); an app's child process inherits the environment. A 2-D
// Poisson run of 1,000,000 rows on 5 local daemons took 0.6-0.7x the time (docs/results.md).
void ReexecWithHugePageMalloc(char** argv);

// `tunables` (a GLIBC_TUNABLES value) with glibc.malloc.hugetlb=1 added, or as it is when it
// names that tunable already: what ReexecWithHugePageMalloc runs the program with.
std::string WithHugePageMalloc(const std::string& tunables);

}  // namespace aiac
