// How much memory this process may still allocate, to refuse inputs whose declared sizes could
// never fit before anything is allocated for them: the smallest of MemAvailable
// (/proc/meminfo), the cgroup's memory.max less its memory.current, and RLIMIT_AS.
//
// MemoryBudget: one budget per process for what its peers declare they will send before it can
// act on it (a message reassembled from parts, chunked task or plugin data, a large frame being
// read). Each declared total reserves its bytes before anything is allocated for it; the
// Reservation gives them back when the data is done with or its connection closes. Budgets per
// message did not hold across messages: four Part messages declaring 12 GiB each were all
// accepted on a 22 GiB machine.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"

namespace aiac {

uint64_t AvailableMemoryBytes();

// ResourceExhausted "WHAT needs about X GiB of memory, this machine has Y GiB available" when
// `bytes` exceeds AvailableMemoryBytes().
Status CheckFitsInMemory(const std::string& what, double bytes);

class MemoryBudget {
 public:
  // Bytes reserved from a budget until destroyed (or Release()d). Move-only; an empty one
  // (default-constructed, or from a null budget) holds nothing.
  class Reservation {
   public:
    Reservation() = default;
    Reservation(Reservation&& other) noexcept { *this = std::move(other); }
    Reservation& operator=(Reservation&& other) noexcept;
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;
    ~Reservation() { Release(); }
    void Release();
    uint64_t bytes() const { return bytes_; }

   private:
    friend class MemoryBudget;
    std::shared_ptr<std::atomic<uint64_t>> reserved_;
    uint64_t bytes_ = 0;
  };

  explicit MemoryBudget(uint64_t limit_bytes)
      : limit_(limit_bytes), reserved_(std::make_shared<std::atomic<uint64_t>>(0)) {}

  // `bytes` for `what`, or ResourceExhausted "WHAT: N MiB do not fit in this process's memory
  // budget (R MiB of L MiB in use)". What is reserved already is never taken back for a
  // newcomer: work in progress finishes first. Thread-safe.
  Result<Reservation> Reserve(const std::string& what, uint64_t bytes);

  uint64_t limit() const { return limit_; }
  uint64_t reserved() const { return reserved_->load(); }

 private:
  uint64_t limit_;
  std::shared_ptr<std::atomic<uint64_t>> reserved_;  // shared with the reservations
};

// Reserves from `budget` when there is one; an empty reservation when it is null.
Result<MemoryBudget::Reservation> ReserveFrom(MemoryBudget* budget, const std::string& what,
                                              uint64_t bytes);

// The budget a process gets unless told otherwise: half of AvailableMemoryBytes() at start, at
// least 256 MiB.
uint64_t DefaultMemoryBudgetBytes();

}  // namespace aiac
