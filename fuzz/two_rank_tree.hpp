// A group of two ranks for the verify-tree fuzz target and its seeds. The
// target plays one rank against a scripted peer whose messages are the fuzz
// input; the seed writer runs both ranks over a loopback and keeps what each
// received, so the fuzzer starts from the real messages of a check with a
// conflict (partial, verdict, and the conflict round's texts).
//
// Input layout: one byte picks the side (even: rank 0, which receives its
// child's partial; odd: rank 1, which receives rank 0's verdict), four
// little-endian bytes give the first message's length, then the first
// message; the rest is the second message (the conflict round's, read only
// when the first names suspects).
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/base/error.hpp"
#include "tunelock/verify/tree_collective.hpp"

namespace tunelock::fuzzing {

struct TreeInput {
  int rank = 0;
  std::vector<std::string> messages;  // what the peer sends, in order
};

inline std::string encode_tree_input(const TreeInput& input) {
  std::string out(1, static_cast<char>(input.rank));
  const std::string& first = input.messages.at(0);
  for (int i = 0; i < 4; ++i) out += static_cast<char>((first.size() >> (8 * i)) & 0xff);
  out += first;
  if (input.messages.size() > 1) out += input.messages[1];
  return out;
}

inline TreeInput decode_tree_input(std::string_view bytes) {
  TreeInput input;
  if (bytes.size() < 5) return input;
  input.rank = static_cast<unsigned char>(bytes[0]) % 2;
  std::size_t length = 0;
  for (int i = 0; i < 4; ++i)
    length |= static_cast<std::size_t>(static_cast<unsigned char>(bytes[1 + i])) << (8 * i);
  const std::string_view rest = bytes.substr(5);
  length = std::min(length, rest.size());
  input.messages = {std::string(rest.substr(0, length)), std::string(rest.substr(length))};
  return input;
}

// One rank of a two-rank group whose peer says what the script says.
class ScriptedPeer final : public TreeCollective {
 public:
  ScriptedPeer(int rank, std::vector<std::string> script)
      : rank_(rank), script_(script.begin(), script.end()) {}
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  std::string group_id() const override { return "fuzz"; }
  std::vector<std::string> all_gather(std::string_view) override {
    throw Error("fuzz: the tree path never gathers");
  }

 protected:
  void send(std::span<const int>, std::uint64_t, std::string_view) override {}
  std::vector<std::string> receive(std::span<const int> from, std::uint64_t, int) override {
    if (script_.empty() || from.size() != 1) throw Error("fuzz: the peer sent nothing more");
    std::vector<std::string> out{std::move(script_.front())};
    script_.pop_front();
    return out;
  }

 private:
  int rank_;
  std::deque<std::string> script_;
};

// Two ranks in one process, each on its own thread; every message a rank
// receives is kept in `received[rank]`.
struct Loopback {
  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<std::string> inbox[2];
  std::vector<std::string> received[2];
};

class LoopbackRank final : public TreeCollective {
 public:
  LoopbackRank(Loopback& loopback, int rank) : loopback_(loopback), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  std::string group_id() const override { return "seed"; }
  std::vector<std::string> all_gather(std::string_view) override {
    throw Error("seeds: the tree path never gathers");
  }

 protected:
  void send(std::span<const int>, std::uint64_t, std::string_view bytes) override {
    std::lock_guard lock(loopback_.mutex);
    loopback_.inbox[1 - rank_].emplace_back(bytes);
    loopback_.arrived.notify_all();
  }
  std::vector<std::string> receive(std::span<const int>, std::uint64_t, int) override {
    std::unique_lock lock(loopback_.mutex);
    loopback_.arrived.wait(lock, [&] { return !loopback_.inbox[rank_].empty(); });
    std::string message = std::move(loopback_.inbox[rank_].front());
    loopback_.inbox[rank_].pop_front();
    loopback_.received[rank_].push_back(message);
    return {std::move(message)};
  }

 private:
  Loopback& loopback_;
  int rank_;
};

}  // namespace tunelock::fuzzing
