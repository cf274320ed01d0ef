#include "core/ready_file.h"

#include <cstdio>
#include <fstream>

namespace aiac {

Status WriteFileAtomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << content;
    out.flush();
    if (!out) return IoError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return IoError("cannot rename " + tmp);
  return Status::Ok();
}

}  // namespace aiac
