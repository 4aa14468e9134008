// The buffering strategies, in order: their place in this list is their calc::Buffering id
// (u r b p c q are the enum's named values), the order the mapper tries them in and the model
// adds their terms in. A new strategy: its file in this folder, a line below, and the keyword
// in thorn/param.ccl (docs/gpu.md, "Adding a buffering strategy").
#include "calc/strategy.hpp"

namespace saguaro::calc {

Strategy unbuffered_strategy();
Strategy register_strategy();
Strategy shared_strategy();
Strategy plus_strategy();
Strategy read_only_strategy();
Strategy queue_strategy();

std::vector<Strategy> builtin_strategies() {
  return {
      unbuffered_strategy(), register_strategy(),  shared_strategy(),
      plus_strategy(),       read_only_strategy(), queue_strategy(),
  };
}

} // namespace saguaro::calc
