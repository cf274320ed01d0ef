#include "apps/synthetic/workload.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/splitmix.h"

namespace aiac::synthetic {
namespace {

// The unit of work, and the hash of the schedule.
constexpr auto Mix = SplitMix64;

constexpr uint32_t kItemsMagic = 0x31797361;   // "asy1" as stored
constexpr uint32_t kRangesMagic = 0x72797361;  // "asyr" as stored
constexpr uint64_t kChecksumMask = (uint64_t{1} << 52) - 1;

template <typename T>
void Put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <typename T>
bool Get(std::string_view& in, T& v) {
  if (in.size() < sizeof v) return false;
  std::memcpy(&v, in.data(), sizeof v);
  in.remove_prefix(sizeof v);
  return true;
}

// Item `id`'s data (WorkloadSpec::item_bytes), appended to `out`.
void PutData(std::string& out, uint32_t id, uint32_t bytes) {
  for (uint32_t at = 0; at < bytes; at += 8) {
    const uint64_t word = Mix((uint64_t{id} << 24) ^ at);
    out.append(reinterpret_cast<const char*>(&word), std::min<uint32_t>(8, bytes - at));
  }
}

}  // namespace

uint32_t HotStart(const WorkloadSpec& spec, uint32_t phase) {
  return static_cast<uint32_t>(Mix(spec.seed ^ Mix(0x5eed0000ull + phase)) % spec.items);
}

uint32_t StepCost(const WorkloadSpec& spec, uint32_t item, uint32_t k) {
  const auto width = static_cast<uint32_t>(std::floor(spec.hot_fraction * spec.items));
  const uint32_t start = HotStart(spec, k / spec.phase_iterations);
  // Distance from the window's start, going up and wrapping round.
  const uint32_t offset = item >= start ? item - start : item + spec.items - start;
  return offset < width ? spec.base_cost * spec.hot_factor : spec.base_cost;
}

Item InitialItem(const WorkloadSpec& spec, uint32_t id) {
  return {id, 0, Mix(spec.seed * 0x100000001b3ull ^ id)};
}

void Step(const WorkloadSpec& spec, Item& item) {
  uint64_t x = item.state ^ (uint64_t{item.id} << 32 | item.done);
  for (uint32_t u = StepCost(spec, item.id, item.done); u > 0; --u) x = Mix(x);
  item.state = x;
  ++item.done;
}

uint64_t Checksum(const std::vector<Item>& items) {
  uint64_t sum = 0;
  for (const Item& it : items) sum += Mix(it.state ^ (uint64_t{it.id} * 0x9e3779b97f4a7c15ull));
  return sum & kChecksumMask;
}

uint64_t ExpectedChecksum(const WorkloadSpec& spec) {
  std::vector<Item> all;
  all.reserve(spec.items);
  for (uint32_t i = 0; i < spec.items; ++i) {
    Item it = InitialItem(spec, i);
    while (it.done < spec.iterations) Step(spec, it);
    all.push_back(it);
  }
  return Checksum(all);
}

std::string EncodeItems(const std::vector<Item>& items, uint32_t item_bytes) {
  std::string out;
  out.reserve(8 + items.size() * (16 + item_bytes));
  Put(out, kItemsMagic);
  Put(out, static_cast<uint32_t>(items.size()));
  for (const Item& it : items) {
    Put(out, it.id);
    Put(out, it.done);
    Put(out, it.state);
    PutData(out, it.id, item_bytes);
  }
  return out;
}

Result<std::vector<Item>> DecodeItems(std::string_view bytes, const WorkloadSpec& spec) {
  auto bad = [](const std::string& why) {
    return Corruption("synthetic: items do not decode: " + why);
  };
  uint32_t magic = 0, count = 0;
  if (!Get(bytes, magic) || magic != kItemsMagic || !Get(bytes, count)) return bad("no header");
  if (bytes.size() != static_cast<uint64_t>(count) * (16 + spec.item_bytes))
    return bad("size does not match the count");
  std::vector<Item> items(count);
  std::string data;
  for (Item& it : items) {
    Get(bytes, it.id);
    Get(bytes, it.done);
    Get(bytes, it.state);
    if (it.id >= spec.items || it.done > spec.iterations)
      return bad("item " + std::to_string(it.id) + " out of range");
    data.clear();
    PutData(data, it.id, spec.item_bytes);
    if (bytes.substr(0, data.size()) != data)
      return bad("item " + std::to_string(it.id) + "'s data is damaged");
    bytes.remove_prefix(data.size());
  }
  return items;
}

std::string EncodeRanges(const ItemRanges& ranges) {
  std::string out;
  Put(out, kRangesMagic);
  Put(out, static_cast<uint32_t>(ranges.size()));
  for (const auto& [begin, end] : ranges) {
    Put(out, begin);
    Put(out, end);
  }
  return out;
}

Result<ItemRanges> DecodeRanges(std::string_view bytes, uint32_t items) {
  auto bad = [] { return Corruption("synthetic: the task's item ranges do not decode"); };
  uint32_t magic = 0, count = 0;
  if (!Get(bytes, magic) || magic != kRangesMagic || !Get(bytes, count) ||
      bytes.size() != static_cast<uint64_t>(count) * 8) {
    return bad();
  }
  ItemRanges ranges(count);
  uint32_t last = 0;
  for (auto& [begin, end] : ranges) {
    Get(bytes, begin);
    Get(bytes, end);
    if (begin < last || end <= begin || end > items) return bad();
    last = end;
  }
  return ranges;
}

std::vector<ItemRanges> SplitItems(uint32_t items, uint32_t tasks,
                                   const std::vector<double>& shares) {
  std::vector<double> w = shares.empty() ? std::vector<double>(tasks, 1.0) : shares;
  double total = 0;
  for (double x : w) total += x;
  std::vector<ItemRanges> out(tasks);
  double acc = 0;
  uint32_t begin = 0;
  for (uint32_t t = 0; t < tasks; ++t) {
    acc += w[t];
    // The cut after task t, keeping at least one item for each task still to come.
    auto end = static_cast<uint32_t>(std::llround(items * (acc / total)));
    end = std::clamp<uint32_t>(end, std::min(items, begin + 1),
                               items - std::min(items, tasks - 1 - t));
    if (t + 1 == tasks) end = items;
    if (end > begin) out[t].push_back({begin, end});
    begin = std::max(begin, end);
  }
  return out;
}

}  // namespace aiac::synthetic
