// Eigen's SparseMatrix plugin (EIGEN_SPARSEMATRIX_PLUGIN, set for every target in the top
// CMakeLists.txt): a move constructor and move assignment. Eigen 3.4 declares neither, so
// std::move of a SparseMatrix, returning one into a Result, or moving a Block copied every
// array: four copies of an 800,000-row matrix (163 MB each) cost a second of the spawner's read,
// and each daemon copied its block and couplings several times as it built them. The moved-from
// matrix is left empty, 0 x 0 as a default-constructed one (construction), or with this one's
// old contents (assignment): usable either way. Included inside the class body, in every
// translation unit alike (the definition is global).

SparseMatrix(SparseMatrix&& other) noexcept
    : Base(), m_outerSize(-1), m_innerSize(0), m_outerIndex(0), m_innerNonZeros(0) {
  check_template_parameters();
  resize(0, 0);  // as the default constructor: the row starts of an empty matrix
  this->swap(other);
}

SparseMatrix& operator=(SparseMatrix&& other) noexcept {
  this->swap(other);
  return *this;
}
