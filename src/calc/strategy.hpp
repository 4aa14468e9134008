// A buffering strategy as one unit: its letter, name and description (the CLI's and the .par
// file's words), where it applies, how its loads map onto buffers (the kernel plan), and its
// terms in the performance model. Each strategy is one file in calc/strategies/; the list in
// calc/strategies/list.cpp registers them, and everything else (the mapper's candidate set,
// the CLI's choices, the keyword list that test/unit/test_strategies.cpp checks thorn/param.ccl
// against) is derived from that list. docs/gpu.md, "Adding a buffering strategy", says how.
#pragma once

#include "calc/code_plan.hpp"
#include "calc/mapping.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace saguaro::calc {

// Table IIb of Hu, Koppelman & Brandt for one input grid function of a kernel, relative to the
// kernel's iteration axis (the model's view of a stencil).
struct StencilShape {
  int s_xn = 0, s_xp = 0, s_x = 0; // magnitudes of the most negative / positive x offset; sum
  int s_f = 0, s_e = 0;            // extent (max - min) along f and e
  int r_x = 0, r_f = 0, r_e = 0, r_o = 0, r = 0; // reuse counts (offsets by alignment)
  int offsets = 0;                               // |S|: loads per point when unbuffered
};
StencilShape stencil_shape(const std::vector<Offset>& offsets, int iteration_axis);

// The paper's round-to-line operators: ceil(a)^<C> = ceil(a / LS) LS, and the "+" form that
// charges half a line more for a row that need not start on a line boundary.
inline double round_line(double a, double line) {
  return std::ceil(a / line) * line;
}
inline double round_line_plus(double a, double line) {
  return std::ceil(a / line + 0.5) * line;
}

// What a strategy's model terms may depend on besides the stencil: the block and the L2 line.
struct ModelBlock {
  double tx = 0, tf = 0, tee = 0, plane = 0; // plane = t_x t_f
  double LS_L2 = 0;                          // L2 access granule [elements]
  double alpha = 0;                          // elements moved per element used along x
};

// Which of the model's traffic paths (Table IVa-b) an input's loads take.
enum class TrafficPath {
  Global,   // plain global loads: the model's L2 reuse and capacity-miss terms (u); on GPUs
            // that cache global loads in L1 the read-only path's instead
  ReadOnly, // the read-only data cache's terms (c)
  Direct,   // the strategy moves its data itself: its ModelTerms::traffic and l2_footprint
};

// Which resource a strategy's reuse competes for: Algorithm 1 (Hu et al.) takes the best move
// of each kind in every round.
enum class ReuseResource {
  None,          // no reuse (u)
  OnChip,        // registers and shared memory (r, b, p)
  ReadOnlyCache, // the read-only data cache (c)
};

// One input's terms in the model, per its StencilShape (Table IV). All but `traffic`,
// `l2_footprint` and `issue` are counts; the model adds them over inputs.
struct ModelTerms {
  double registers = 0;    // Table IVd: registers per thread [elements]
  double smem_paper = 0;   // Table IVd's M_smem [elements per block]
  double smem_code = 0;    // what the generated code allocates [elements per block]
  double traffic = 0;      // Direct: L2 <-> SM and DRAM traffic [elements per point]
  double l2_footprint = 0; // Direct: M^L2, its lines in L2 [elements per block]
  double shared_loads = 0; // Table IVc's shared-memory loads per point
  double barriers = 0;     // barriers per point
  double issue = 0;        // load and store instructions per point (Chemora's s_i)
};

// Building a kernel plan's buffers (calc/code_plan.cpp): what a strategy's plan calls.
class PlanBuilder {
public:
  PlanBuilder(CodePlan& plan, std::size_t& shared_doubles) : plan_(plan), shared_(shared_doubles) {}
  int e() const { return plan_.e; }
  int f() const { return plan_.f; }
  const BlockConfig& block() const { return plan_.block; }
  // A register pipeline of `g` over the e extent of `line` (0 included when `with_zero`).
  int add_pipeline(int g, const std::vector<Offset>& line, bool with_zero);
  // A shared tile of `g`: the block's t_x x t_f x t_ee points grown by `offsets`' extent.
  int add_tile(int g, const std::vector<Offset>& offsets);
  // A shared plane of `g`: the block's t_x x t_f points of the current e grown by the extent
  // of `offsets` (in the plane), its own points filled from slot 0 of pipeline `fill`.
  int add_plane(int g, const std::vector<Offset>& offsets, int fill);
  // Loads of offset `o` from each kind of buffer.
  Load global(const Offset& o) const { return {o, BufferKind::Global, -1, 0}; }
  Load read_only(const Offset& o) const { return {o, BufferKind::ReadOnly, -1, 0}; }
  Load pipeline_slot(int pipeline, const Offset& o) const;
  Load tile_element(int tile, const Offset& o) const;
  Load plane_element(int plane, const Offset& o) const;

private:
  CodePlan& plan_;
  std::size_t& shared_;
};

struct Strategy {
  Buffering id{};           // assigned by the registry: its place in the list
  char letter = '?';        // in mappings, mapping files, Saguaro::cuda_buffering, the CLI
  const char* name = "";    // "register"
  const char* summary = ""; // one line: the CLI's help and param.ccl's keyword description
  TrafficPath path = TrafficPath::Direct;
  ReuseResource resource = ReuseResource::OnChip;
  bool shared_memory = false; // its buffers are in shared memory (a kernel's barriers wait on it)
  // Whether it applies to a grid function read at `offsets` by a kernel iterating along e
  // (which also writes it when `written`); when not, `why` says why.
  bool (*applies)(const std::vector<Offset>& offsets, int e, bool written,
                  std::string& why) = nullptr;
  // The buffers it needs for `offsets` and one load per offset, in order.
  std::vector<Load> (*plan)(PlanBuilder& b, int grid_function,
                            const std::vector<Offset>& offsets) = nullptr;
  // Its terms in the model for an input of this shape.
  ModelTerms (*model)(const StencilShape& s, const ModelBlock& block) = nullptr;
};

// Every strategy, in the list's order (u r b p c q, then any a test registered); `id` is the
// place in it.
// What several strategies' rules and models share.
const char* axis_name(int axis); // "x", "y", "z"
// Whether a grid function read at `offsets` has values to reuse (more than one offset); when
// not, `why` says so.
bool has_reuse(const std::vector<Offset>& offsets, std::string& why);
// Whether offset `o` lies on the e line through the point (no x and no f component) of a kernel
// whose other axis is `f`: what a register pipeline along e can carry.
inline bool on_e_line(const Offset& o, int f) {
  return o[0] == 0 && o[std::size_t(f)] == 0;
}
// Table IVd's terms of a strategy that loads every offset itself: one register, one load
// issued per offset (its traffic is its path's, priced in model.cpp).
ModelTerms per_offset_load_terms(const StencilShape& shape);

const std::vector<const Strategy*>& strategies();
const Strategy& strategy(Buffering b);
const Strategy* strategy_for_letter(char c); // null for other letters
std::vector<std::string> strategy_letters(); // {"u", "r", "b", "p", "c", "q"}: the list's letters

// A test hook: registers `s` (giving it the next id) for the life of the object.
class ScopedStrategy {
public:
  explicit ScopedStrategy(Strategy s);
  ~ScopedStrategy();
  ScopedStrategy(const ScopedStrategy&) = delete;
  ScopedStrategy& operator=(const ScopedStrategy&) = delete;
  Buffering id() const { return strategy_.id; }

private:
  Strategy strategy_;
};

} // namespace saguaro::calc
