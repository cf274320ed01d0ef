#include "emulation/platform_scaling.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

namespace aiac::emulation {

namespace {

// The shortest text that reads back as the same double.
std::string Number(double v) {
  char s[32];
  const auto end = std::to_chars(s, s + sizeof s, v).ptr;
  return std::string(s, end);
}

}  // namespace

PlatformFile ScalePlatform(const PlatformFile& platform, size_t nodes, const std::string& name) {
  const size_t clusters = platform.clusters.size(), total = platform.node_count();
  nodes = std::clamp(nodes, clusters, total);
  // One each, then the rest by largest remainder of the clusters' shares.
  std::vector<size_t> keep(clusters, 1);
  std::vector<std::pair<double, size_t>> remainders;
  size_t given = clusters;
  for (size_t c = 0; c < clusters; ++c) {
    const double share = static_cast<double>(platform.clusters[c].powers.size()) *
                         (nodes - clusters) / static_cast<double>(total);
    const auto whole = static_cast<size_t>(std::floor(share));
    keep[c] += std::min(whole, platform.clusters[c].powers.size() - 1);
    given += keep[c] - 1;
    remainders.push_back({share - std::floor(share), c});
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  for (size_t k = 0; given < nodes && k < remainders.size(); ++k) {
    const size_t c = remainders[k].second;
    if (keep[c] < platform.clusters[c].powers.size()) {
      ++keep[c];
      ++given;
    }
  }
  PlatformFile out = platform;
  out.name = name;
  for (size_t c = 0; c < clusters; ++c) {
    std::vector<double> sorted = platform.clusters[c].powers;
    std::sort(sorted.begin(), sorted.end());
    std::vector<double> kept;
    for (size_t k = 0; k < keep[c]; ++k) {
      // Rank (k + 1/2) / keep of the sorted powers: the middle of each of `keep` equal slices.
      const auto rank = static_cast<size_t>((k + 0.5) * sorted.size() / keep[c]);
      kept.push_back(sorted[std::min(rank, sorted.size() - 1)]);
    }
    out.clusters[c].powers = kept;
  }
  return out;
}

std::string FormatPlatformFile(const PlatformFile& platform) {
  std::ostringstream t;
  t << "name = \"" << platform.name << "\"\n";
  for (const auto& c : platform.clusters) {
    t << "\n[[clusters]]\nname = \"" << c.name << "\"\npowers = [";
    for (size_t k = 0; k < c.powers.size(); ++k) t << (k ? ", " : "") << Number(c.powers[k]);
    t << "]\nlatency_ms = " << Number(c.latency_ms)
      << "\nbandwidth_mbps = " << Number(c.bandwidth_mbps) << "\n";
    if (c.background) {
      t << "background = {mean_jobs = " << Number(c.background->mean_jobs)
        << ", std_jobs = " << Number(c.background->std_jobs)
        << ", mean_size = " << Number(c.background->mean_size) << "}\n";
    }
  }
  for (const auto& l : platform.links) {
    t << "\n[[links]]\na = \"" << l.a << "\"\nb = \"" << l.b
      << "\"\nlatency_ms = " << Number(l.latency_ms)
      << "\nbandwidth_mbps = " << Number(l.bandwidth_mbps) << "\n";
  }
  return t.str();
}

}  // namespace aiac::emulation
