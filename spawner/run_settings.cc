#include "spawner/run_settings.h"

#include <algorithm>

#include "core/config.h"

namespace aiac::spawner {

namespace {

template <typename E>
std::string NameOf(const std::vector<std::pair<std::string, E>>& names, E value) {
  for (const auto& [name, v] : names) {
    if (v == value) return name;
  }
  return "?";
}

// "a, b, c or d".
template <typename E>
std::string Choices(const std::vector<std::pair<std::string, E>>& names) {
  std::vector<std::string> words;
  for (const auto& [name, value] : names) words.push_back(name);
  return ChoiceList(words);
}

template <typename E>
Result<E> Parse(const std::vector<std::pair<std::string, E>>& names, const std::string& flag,
                const std::string& name) {
  auto it =
      std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.first == name; });
  if (it != names.end()) return it->second;
  return InvalidArgument(flag + " must be " + Choices(names) + ", not '" + name + "'");
}

}  // namespace

const std::vector<std::pair<std::string, Split>>& SplitNames() {
  static const std::vector<std::pair<std::string, Split>> names = {
      {"power", Split::kPower}, {"equal", Split::kEqual}, {"sm", Split::kSm}, {"sp", Split::kSp}};
  return names;
}

const std::vector<std::pair<std::string, Migration>>& MigrationNames() {
  static const std::vector<std::pair<std::string, Migration>> names = {
      {"distpm", Migration::kDistPM},
      {"greedy", Migration::kGreedy},
      {"ring", Migration::kRing},
      {"nearest", Migration::kNearest},
      {"spawner", Migration::kSpawner}};
  return names;
}

std::string SplitName(Split split) { return NameOf(SplitNames(), split); }
std::string MigrationName(Migration migration) { return NameOf(MigrationNames(), migration); }

Result<Split> ParseSplit(const std::string& name) { return Parse(SplitNames(), "--split", name); }

Result<Migration> ParseMigration(const std::string& name) {
  return Parse(MigrationNames(), "--migration", name);
}

}  // namespace aiac::spawner
