// The one median: the tuner's per-candidate time and merge's cross-rank
// aggregate must agree on what "median" means (the mean of the two middle
// values for an even count), or a recorded table would rank candidates
// differently from the run that timed them.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

namespace tunelock {

// REQUIRES: !sorted.empty() and `sorted` in ascending order.
inline double median_of_sorted(std::span<const double> sorted) {
  const std::size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

// REQUIRES: !samples.empty().
inline double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return median_of_sorted(samples);
}

}  // namespace tunelock
