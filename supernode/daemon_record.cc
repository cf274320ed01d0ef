#include "supernode/daemon_record.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/endpoint.h"
#include "core/names.h"
#include "core/printable.h"

namespace aiac::supernode {

Status CheckDaemonRecord(const DaemonRecord& r) {
  AIAC_RETURN_IF_ERROR(CheckName("daemon id", r.id));
  AIAC_RETURN_IF_ERROR(CheckName("cluster name", r.cluster));
  if (r.address.size() > kMaxNameBytes || !ParseEndpoint(r.address).ok()) {
    return InvalidArgument("address " + Printable(r.address, 64) + " is not HOST:PORT");
  }
  if (!std::isfinite(r.power) || r.power < 0) {
    return InvalidArgument("power must be a finite number >= 0");
  }
  if (r.version.size() > 32 || Printable(r.version, 32, false) != r.version) {
    return InvalidArgument("version " + Printable(r.version, 32) +
                           " is not a version (32 printable characters at most)");
  }
  return Status::Ok();
}

void ToProto(const DaemonRecord& r, proto::DaemonInfo::Builder out) {
  out.setId(r.id);
  out.setAddress(r.address);
  out.setCluster(r.cluster);
  out.setPower(r.power);
  out.setCores(r.cores);
  out.setState(r.busy ? proto::DaemonState::BUSY : proto::DaemonState::FREE);
  out.setJob(r.job);
  out.setOwner(r.owner);
  out.setVersion(r.version);
}

DaemonRecord FromProto(proto::DaemonInfo::Reader in) {
  DaemonRecord r;
  r.id = in.getId().cStr();
  r.address = in.getAddress().cStr();
  r.cluster = in.getCluster().cStr();
  r.power = in.getPower();
  r.cores = in.getCores();
  r.busy = in.getState() == proto::DaemonState::BUSY;
  r.job = in.getJob().cStr();
  r.owner = in.getOwner().cStr();
  r.version = in.getVersion().cStr();
  return r;
}

void ToProto(const DaemonView& v, proto::DaemonInfo::Builder out) {
  ToProto(v.record, out);
  out.setRunning(v.running);
  out.setHeartbeatAgeMs(v.heartbeat_age.count());
}

DaemonView ViewFromProto(proto::DaemonInfo::Reader in) {
  return {FromProto(in), in.getRunning(), std::chrono::milliseconds(in.getHeartbeatAgeMs())};
}

std::string Encode(const DaemonRecord& r) {
  nlohmann::json j = {{"id", r.id},          {"address", r.address}, {"cluster", r.cluster},
                      {"power", r.power},    {"cores", r.cores},     {"busy", r.busy},
                      {"job", r.job},        {"owner", r.owner},     {"seq", r.seq},
                      {"version", r.version}};
  return j.dump();
}

Result<DaemonRecord> Decode(std::string_view text) {
  try {
    auto j = nlohmann::json::parse(text);
    DaemonRecord r;
    r.id = j.at("id").get<std::string>();
    r.address = j.at("address").get<std::string>();
    r.cluster = j.at("cluster").get<std::string>();
    r.power = j.at("power").get<double>();
    r.cores = j.at("cores").get<uint32_t>();
    r.busy = j.at("busy").get<bool>();
    r.job = j.at("job").get<std::string>();
    r.owner = j.at("owner").get<std::string>();
    r.seq = j.at("seq").get<uint64_t>();
    r.version = j.value("version", std::string());  // records written before 0.1.0 have none
    return r;
  } catch (const nlohmann::json::exception& e) {
    return Corruption(std::string("daemon record does not decode: ") + e.what());
  }
}

}  // namespace aiac::supernode
