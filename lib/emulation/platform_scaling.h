// A platform file made smaller, and written back as text: what an experiment does to put a
// platform of a hundred nodes on one host (tests/eval/vs_mpi, docs/results.md "Versus MPI").
// Pure.
#pragma once

#include <string>

#include "emulation/platform_file.h"

namespace aiac::emulation {

// `platform` with `nodes` of its nodes (clamped to [cluster count, node count]): each cluster
// keeps one, and the rest go in proportion to the clusters' sizes (largest remainders); a
// cluster keeps the powers at the middle of `keep` equal slices of its sorted powers, so the
// spread of the powers (the heterogeneity degree) is about kept. Links, figures and background
// loads are unchanged; the result is named `name`.
PlatformFile ScalePlatform(const PlatformFile& platform, size_t nodes, const std::string& name);

// The platform file's text, which ParsePlatformFile reads back to the same platform.
std::string FormatPlatformFile(const PlatformFile& platform);

}  // namespace aiac::emulation
