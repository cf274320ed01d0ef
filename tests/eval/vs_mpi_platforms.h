// The platforms vs_mpi compares aiac and PETSc on (docs/results.md, "Versus MPI"), as platform
// files aiac-emulate lays out: one homogeneous cluster, two sites joined by a 20 ms link, and the
// MAHEVE platforms scaled down to what one host can hold (emulation/platform_scaling.h). Pure.
#pragma once

#include <string>

#include "emulation/platform_file.h"

namespace aiac::eval {

// `nodes` nodes of equal power 1 in one cluster, 0.05 ms and 1000 Mbps apart.
emulation::PlatformFile HomogeneousPlatform(const std::string& name, size_t nodes);

// Two clusters ("site-a", "site-b") of `per_site` nodes of power 1, 0.05 ms and 1000 Mbps
// inside a site, 20 ms and 100 Mbps between them.
emulation::PlatformFile TwoSitesPlatform(const std::string& name, size_t per_site);

}  // namespace aiac::eval
