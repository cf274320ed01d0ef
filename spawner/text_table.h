// Rows of text as an aligned table, the way `sinfo` and `squeue` print: a header of capitals,
// each column as wide as its widest cell, two spaces between columns, no trailing spaces.
#pragma once

#include <string>
#include <vector>

namespace aiac::spawner {

std::string AlignedTable(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows);

}  // namespace aiac::spawner
