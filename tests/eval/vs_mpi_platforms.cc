#include "eval/vs_mpi_platforms.h"

namespace aiac::eval {

emulation::PlatformFile HomogeneousPlatform(const std::string& name, size_t nodes) {
  emulation::PlatformFile p;
  p.name = name;
  p.clusters.push_back({"c", std::vector<double>(nodes, 1.0), 0.05, 1000, std::nullopt});
  return p;
}

emulation::PlatformFile TwoSitesPlatform(const std::string& name, size_t per_site) {
  emulation::PlatformFile p;
  p.name = name;
  p.clusters.push_back({"site-a", std::vector<double>(per_site, 1.0), 0.05, 1000, std::nullopt});
  p.clusters.push_back({"site-b", std::vector<double>(per_site, 1.0), 0.05, 1000, std::nullopt});
  p.links.push_back({"site-a", "site-b", 20, 100});
  return p;
}

}  // namespace aiac::eval
