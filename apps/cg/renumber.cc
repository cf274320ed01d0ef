#include "apps/cg/renumber.h"

#include <algorithm>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/cuthill_mckee_ordering.hpp>
#include <boost/property_map/property_map.hpp>
#include <cstdlib>
#include <utility>

namespace aiac::cg {

std::vector<int> ReverseCuthillMcKee(const SpRef& a) {
  const int n = static_cast<int>(a.rows());
  // The graph of A + A^T as directed edges both ways (a CSR graph has no undirected form): its
  // out-edges are a row's neighbours. Parallel edges (a_ij and a_ji both stored) change no
  // neighbour set, only degrees, alike for every row of a symmetric pattern.
  std::vector<std::pair<int, int>> edges;
  edges.reserve(static_cast<size_t>(2 * a.nonZeros()));
  for (int i = 0; i < n; ++i) {
    for (SpRef::InnerIterator it(a, i); it; ++it) {
      const int j = static_cast<int>(it.col());
      if (j == i) continue;
      edges.emplace_back(i, j);
      edges.emplace_back(j, i);
    }
  }
  using Graph = boost::compressed_sparse_row_graph<boost::directedS>;
  const Graph g(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(),
                static_cast<size_t>(n));
  edges = {};
  std::vector<boost::default_color_type> colors(static_cast<size_t>(n));
  const auto color =
      boost::make_iterator_property_map(colors.begin(), boost::get(boost::vertex_index, g));
  std::vector<Graph::vertex_descriptor> cm(static_cast<size_t>(n));
  boost::cuthill_mckee_ordering(g, cm.rbegin(), color, boost::make_out_degree_map(g));
  return std::vector<int>(cm.begin(), cm.end());
}

SpMat Renumbered(const SpRef& a, const std::vector<int>& order) {
  const int n = static_cast<int>(a.rows());
  std::vector<int> position(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) position[static_cast<size_t>(order[static_cast<size_t>(i)])] = i;
  std::vector<int> outer(static_cast<size_t>(n) + 1, 0), inner(static_cast<size_t>(a.nonZeros()));
  std::vector<double> values(inner.size());
  std::vector<std::pair<int, double>> row;
  for (int i = 0; i < n; ++i) {
    row.clear();
    for (SpRef::InnerIterator it(a, order[static_cast<size_t>(i)]); it; ++it) {
      row.emplace_back(position[static_cast<size_t>(it.col())], it.value());
    }
    std::sort(row.begin(), row.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    const int at = outer[static_cast<size_t>(i)];
    for (size_t k = 0; k < row.size(); ++k) {
      inner[static_cast<size_t>(at) + k] = row[k].first;
      values[static_cast<size_t>(at) + k] = row[k].second;
    }
    outer[static_cast<size_t>(i) + 1] = at + static_cast<int>(row.size());
  }
  return CompressedMatrix(n, n, outer, inner, values);
}

int Bandwidth(const SpRef& a) {
  int bandwidth = 0;
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    for (SpRef::InnerIterator it(a, i); it; ++it)
      bandwidth = std::max(bandwidth, static_cast<int>(std::abs(it.col() - i)));
  }
  return bandwidth;
}

}  // namespace aiac::cg
