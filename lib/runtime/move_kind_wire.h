// runtime::MoveKind <-> proto::MoveKind, for the daemon and the spawner alike (header only: the
// runtime library itself knows nothing of the wire).
#pragma once

#include "proto/aiac.capnp.h"
#include "runtime/task_runner.h"

namespace aiac::runtime {

inline proto::MoveKind ToProto(MoveKind kind) {
  switch (kind) {
    case MoveKind::kExport:
      return proto::MoveKind::EXPORT;
    case MoveKind::kImport:
      return proto::MoveKind::IMPORT;
    case MoveKind::kDrop:
      return proto::MoveKind::DROP;
    case MoveKind::kConfirm:
      return proto::MoveKind::CONFIRM;
  }
  return proto::MoveKind::CONFIRM;
}

inline MoveKind FromProto(proto::MoveKind kind) {
  switch (kind) {
    case proto::MoveKind::EXPORT:
      return MoveKind::kExport;
    case proto::MoveKind::IMPORT:
      return MoveKind::kImport;
    case proto::MoveKind::DROP:
      return MoveKind::kDrop;
    default:
      return MoveKind::kConfirm;  // (an unknown kind from a newer peer: only forgets)
  }
}

}  // namespace aiac::runtime
