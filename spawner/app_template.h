// The files `aiac-spawner new-app NAME` writes: a complete, buildable app against the installed
// SDK (find_package(aiac)), small enough to read in one sitting, its job file, and a program
// that runs it in one process (app::RunLocally). The app
// solves A x = b by asynchronous Jacobi iterations, A = tridiag(-1, 4, -1) of `n` rows and
// b = A * ones (so x = ones): each task owns a slab of rows and needs one value from each
// neighbouring task per iteration. A is strictly diagonally dominant, so the iterations
// converge whatever the delays between tasks (Bertsekas and Tsitsiklis, section 6.2).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace aiac::spawner {

// (file name, content) pairs for an app named `name`, in the order they are written.
std::vector<std::pair<std::string, std::string>> AppTemplate(const std::string& name);

}  // namespace aiac::spawner
