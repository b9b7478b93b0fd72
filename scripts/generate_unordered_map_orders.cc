// Writes test/fixtures/unordered_map_orders.json: for lists of distinct names, the order in which a
// GCC libstdc++ std::unordered_map<std::string, int> yields them after they are inserted in list
// order, the order in which Triton's core walks a request's inputs (src/kernel/triton-input-order.ts).
//
//   g++ -O2 -std=c++17 scripts/generate_unordered_map_orders.cc -o /tmp/orders
//   /tmp/orders > test/fixtures/unordered_map_orders.json
#include <iostream>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

std::string
Quoted(const std::string& text)
{
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

int
main()
{
  std::mt19937 rng(20261211);
  const std::string alphabet =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-";
  const std::vector<std::string> non_ascii = {
      "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};

  // Triton's usual names, across the sizes where the map rehashes (13, 29, 59 buckets).
  std::vector<std::vector<std::string>> lists;
  for (const int size : {1, 2, 3, 4, 8, 13, 14, 29, 30, 60}) {
    std::vector<std::string> names;
    for (int i = 0; i < size; i++) {
      names.push_back("INPUT" + std::to_string(i));
    }
    lists.push_back(names);
  }
  // Random names: empty, short, past 8 bytes (the hash's word loop), non-ASCII.
  for (int n = 0; n < 100; n++) {
    const int size = 1 + rng() % 20;
    std::vector<std::string> names;
    std::unordered_set<std::string> seen;
    while (static_cast<int>(names.size()) < size) {
      std::string name;
      const int length = rng() % 13;
      for (int i = 0; i < length; i++) {
        name += (rng() % 10 == 0) ? non_ascii[rng() % non_ascii.size()]
                                  : std::string(1, alphabet[rng() % alphabet.size()]);
      }
      if (seen.insert(name).second) {
        names.push_back(name);
      }
    }
    lists.push_back(names);
  }

  std::cout << "[\n";
  for (size_t l = 0; l < lists.size(); l++) {
    std::unordered_map<std::string, int> map;
    for (size_t i = 0; i < lists[l].size(); i++) {
      map.emplace(lists[l][i], static_cast<int>(i));
    }
    std::cout << "  {\"names\": [";
    for (size_t i = 0; i < lists[l].size(); i++) {
      std::cout << (i > 0 ? ", " : "") << Quoted(lists[l][i]);
    }
    std::cout << "], \"order\": [";
    bool first = true;
    for (const auto& entry : map) {
      std::cout << (first ? "" : ", ") << entry.second;
      first = false;
    }
    std::cout << "]}" << (l + 1 < lists.size() ? "," : "") << "\n";
  }
  std::cout << "]\n";
  return 0;
}
