// Direct peer faces of the ghost exchange (Decomposition::direct): a rank's send slab copied
// straight into its neighbour's ghost layers, through the neighbour's arrays opened here by
// CUDA IPC, instead of packed into a message buffer the neighbour unpacks. What the neighbour
// tells once (where its ghost slab lies in its arrays) and per new array (the array's handle).
#include "grid/grid.hpp"

#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace saguaro::grid {

namespace {

constexpr int kSlabTag = 200;  // + 2 axis + side: the receiving box of a direct face
constexpr int kArrayTag = 300; // + 2 axis + side: the handles of arrays new to the exchange

// An ArrayBox as bytes (alloc, lo, hi, pitch as ints) and back.
std::string box_bytes(const runtime::ArrayBox& b) {
  const std::array<int, 10> w{b.alloc[0], b.alloc[1], b.alloc[2], b.lo[0], b.lo[1],
                              b.lo[2],    b.hi[0],    b.hi[1],    b.hi[2], b.pitch};
  return std::string(reinterpret_cast<const char*>(w.data()), sizeof w);
}
runtime::ArrayBox bytes_box(const std::string& bytes) {
  std::array<int, 10> w{};
  if (bytes.size() != sizeof w) throw std::logic_error("saguaro::grid: not a box's bytes");
  std::memcpy(w.data(), bytes.data(), sizeof w);
  runtime::ArrayBox b;
  for (int a = 0; a < 3; ++a) {
    b.alloc[a] = w[std::size_t(a)];
    b.lo[a] = w[std::size_t(3 + a)];
    b.hi[a] = w[std::size_t(6 + a)];
  }
  b.pitch = w[9];
  return b;
}

} // namespace

// Each rank sends, per direct face (a, s), the box its ghosts of that face have in its arrays
// to neighbour[a][s], which copies its side-(1 - s) slab there.
void Decomposition::open_peer_slabs() const {
  const std::vector<Face> faces = faces_where(messages_.direct);
  std::vector<std::string> mine;
  for (const auto& [a, s] : faces) mine.push_back(box_bytes(local_slab(a, s, false)));
  const std::vector<std::string> theirs = swap_with_neighbours(faces, kSlabTag, mine);
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const auto [a, s] = faces[f];
    messages_.peer_box[a][s] = bytes_box(theirs[f]);
    if (messages_.peer_box[a][s].volume() != local_slab(a, s, true).volume())
      throw std::logic_error("saguaro::grid: a direct face's slabs differ in size on its sides");
  }
}

// The arrays of `fields` this rank has not exchanged before, opened on every direct face's
// neighbour: both sides meet the same new arrays at the same exchange (the same grid functions
// in the same registers), so the handles travel in the fields' order.
void Decomposition::open_peer_arrays(const std::vector<double*>& fields) const {
  const std::vector<Face> faces = faces_where(messages_.direct);
  if (faces.empty()) return;
  runtime::ArraySpace& space = *messages_.space;
  std::vector<double*> fresh;
  for (double* f : fields)
    if (!messages_.peer_array.count(f)) fresh.push_back(f);
  if (fresh.empty()) return;
  std::string handles;
  for (double* f : fresh) handles += space.export_array(f);
  const std::vector<std::string> theirs =
      swap_with_neighbours(faces, kArrayTag, std::vector<std::string>(faces.size(), handles));
  const std::size_t one = handles.size() / fresh.size();
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    auto& opened = messages_.peer_array[fresh[i]];
    opened = {};
    for (std::size_t f = 0; f < faces.size(); ++f) {
      const auto [a, s] = faces[f];
      const std::string handle = theirs[f].substr(i * one, one);
      // One neighbour on both sides (two ranks along a periodic axis): its array opened once.
      for (std::size_t e = 0; e < f && opened[a][s] == nullptr; ++e)
        if (neighbour_[faces[e][0]][faces[e][1]] == neighbour_[a][s] &&
            theirs[e].compare(i * one, one, handle) == 0)
          opened[a][s] = opened[faces[e][0]][faces[e][1]];
      if (opened[a][s] == nullptr) opened[a][s] = space.import_array(handle);
    }
  }
}

std::vector<double*> Decomposition::peer_arrays(const std::vector<const double*>& fields, int a,
                                                int s) const {
  std::vector<double*> to;
  to.reserve(fields.size());
  for (const double* f : fields) {
    auto opened = messages_.peer_array.find(f);
    if (opened == messages_.peer_array.end() || opened->second[a][s] == nullptr)
      throw std::logic_error("saguaro::grid: an array of a direct face was not opened");
    to.push_back(opened->second[a][s]);
  }
  return to;
}

void Decomposition::close_peer_arrays() const {
  std::set<double*> imported; // an array opened for two faces is closed once
  for (const auto& [mine, opened] : messages_.peer_array)
    for (const auto& axis : opened)
      for (double* theirs : axis)
        if (theirs != nullptr) imported.insert(theirs);
  if (messages_.space != nullptr)
    for (double* theirs : imported) messages_.space->close_import(theirs);
  messages_.peer_array.clear();
}

} // namespace saguaro::grid
