// A ghost face sent to a neighbouring GPU, three ways, with the GPUs idle and busy (issue 28):
//   local         pack kernel into a buffer on this GPU (what an unpack costs, ~5 us on the H100)
//   remote        pack kernel storing straight into the neighbour's memory (peer access; what
//                 Saguaro's CUDA IPC messages do: Nsight Compute measured 103-195 us per 2.2 MB
//                 face in a 4-GPU run, bench/results/2026-11-27-scaling-H100-x4-notes.md)
//   local + copy  pack kernel into a local buffer, then a copy engine (cudaMemcpyPeerAsync)
// "busy": a memory-bound kernel runs meanwhile on both GPUs (the neighbour's and this GPU's
// interiors), the pack on a stream of the highest priority as Saguaro's exchange queue.
// The face is the wave equation's at 256^3, fd order 4: 2 fields, 2 planes of 260 x 260 points
// in arrays of row pitch 264 (2.16 MB). Every variant's message is checked against the local one.
// One process, GPUs 0 and 1 (peer access between them; CUDA IPC maps the same links).
// On a machine with 2 or more GPUs: nvcc -O3 -arch=sm_90 -std=c++17 -o peer_pack
// bench/profile/peer_pack.cu && ./peer_pack
#include "profile_common.cuh"

namespace {
constexpr int kAlloc = 260, kPitch = 264, kGhost = 2, kFields = 2;
constexpr long long kPlane = (long long)kPitch * kAlloc, kArray = kPlane * kAlloc;
constexpr unsigned kFace = unsigned(kGhost) * kAlloc * kAlloc; // points per field

struct Fields {
  const double* p[kFields];
};

// message[f * kFace + point] = field f at the point of the top z slab (as saguaro_pack).
__global__ void pack(Fields fields, double* __restrict__ message) {
  const unsigned n = kFace * kFields;
  for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
    const unsigned f = t / kFace, r = t - f * kFace, q = r / kAlloc;
    const unsigned i = r - q * kAlloc, j = q % kAlloc, k = q / kAlloc + (kAlloc - 2 * kGhost);
    message[t] = fields.p[f][k * kPlane + j * kPitch + i];
  }
}

double* device_array(int device, std::size_t n, double fill) {
  CK(cudaSetDevice(device));
  double* p = nullptr;
  CK(cudaMalloc(&p, n * sizeof(double)));
  std::vector<double> h(n);
  for (std::size_t i = 0; i < n; ++i) h[i] = fill + double(i % 977) * 1e-3;
  CK(cudaMemcpy(p, h.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  return p;
}

bool same(const double* a, const double* b, std::size_t n) {
  std::vector<double> x(n), y(n);
  CK(cudaMemcpy(x.data(), a, n * sizeof(double), cudaMemcpyDefault));
  CK(cudaMemcpy(y.data(), b, n * sizeof(double), cudaMemcpyDefault));
  return x == y;
}
} // namespace

int main() {
  int devices = 0, access = 0;
  CK(cudaGetDeviceCount(&devices));
  if (devices < 2) {
    printf("peer_pack: needs 2 GPUs, this machine has %d\n", devices);
    return 1;
  }
  CK(cudaDeviceCanAccessPeer(&access, 0, 1));
  printf("peer access 0 -> 1: %s\n", access ? "yes" : "no");
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    if (access) CK(cudaDeviceEnablePeerAccess(1 - d, 0));
  }
  const std::size_t message_n = std::size_t(kFace) * kFields;
  Fields fields{};
  for (int f = 0; f < kFields; ++f) fields.p[f] = device_array(0, kArray, 1.0 + f);
  double* local = device_array(0, message_n, 0.0);
  double* remote = device_array(1, message_n, 0.0);
  const u64 busy_n2 = u64(1) << 26; // double2: 1 GiB per array
  double2 *busy_a[2], *busy_b[2];
  cudaStream_t busy_stream[2], exchange, clear;
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaMalloc(&busy_a[d], busy_n2 * sizeof(double2)));
    CK(cudaMalloc(&busy_b[d], busy_n2 * sizeof(double2)));
    CK(cudaMemset(busy_a[d], 0, busy_n2 * sizeof(double2)));
    CK(cudaMemset(busy_b[d], 0, busy_n2 * sizeof(double2)));
    CK(cudaStreamCreateWithFlags(&busy_stream[d], cudaStreamNonBlocking));
  }
  CK(cudaStreamCreateWithFlags(&clear, cudaStreamNonBlocking)); // on GPU 1
  CK(cudaSetDevice(0));
  int least = 0, greatest = 0;
  CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  CK(cudaStreamCreateWithPriority(&exchange, cudaStreamNonBlocking, greatest));
  const double bytes = double(message_n) * sizeof(double);
  const unsigned blocks = (unsigned(message_n) + 255) / 256;

  struct Variant {
    const char* name;
    double* target;
    bool copy;
  };
  const Variant variants[] = {
      {"local", local, false}, {"remote", remote, false}, {"local + copy", local, true}};
  for (int load = 0; load < 2; ++load) {
    // Both GPUs busy for the whole timing: 300 triads over 2 x 1 GiB each (~0.3 s), one thread
    // per element, so that blocks retire all the time as an interior's do.
    if (load == 1)
      for (int d = 0; d < 2; ++d) {
        CK(cudaSetDevice(d));
        for (int r = 0; r < 300; ++r)
          triad<<<unsigned(busy_n2 / 256), 256, 0, busy_stream[d]>>>(busy_a[d], busy_b[d],
                                                                     busy_b[d], 0.5, busy_n2);
      }
    CK(cudaSetDevice(0));
    for (const Variant& v : variants) {
      char name[64];
      snprintf(name, sizeof name, "%s, %s", v.name, load ? "busy" : "idle");
      // The neighbour's message starts empty for every variant (its own stream: the busy
      // triads go on).
      CK(cudaSetDevice(1));
      CK(cudaMemsetAsync(remote, 0, message_n * sizeof(double), clear));
      CK(cudaStreamSynchronize(clear));
      CK(cudaSetDevice(0));
      cudaEvent_t e0, e1;
      CK(cudaEventCreate(&e0));
      CK(cudaEventCreate(&e1));
      std::vector<float> ms;
      for (int r = 0; r < 24; ++r) {
        CK(cudaEventRecord(e0, exchange));
        pack<<<blocks, 256, 0, exchange>>>(fields, v.target);
        if (v.copy)
          CK(cudaMemcpyPeerAsync(remote, 1, local, 0, message_n * sizeof(double), exchange));
        CK(cudaEventRecord(e1, exchange));
        CK(cudaEventSynchronize(e1));
        float t = 0;
        CK(cudaEventElapsedTime(&t, e0, e1));
        if (r >= 3) ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      const float m = ms[ms.size() / 2];
      printf("%-28s %8.1f us  %6.1f GB/s\n", name, m * 1e3, bytes / (m * 1e-3) / 1e9);
      if (v.copy || v.target == remote) {
        pack<<<blocks, 256, 0, exchange>>>(fields, local);
        CK(cudaStreamSynchronize(exchange));
        if (!same(remote, local, message_n)) {
          printf("peer_pack: %s: the message differs from the local pack\n", name);
          return 1;
        }
      }
      CK(cudaEventDestroy(e0));
      CK(cudaEventDestroy(e1));
    }
    for (int d = 0; d < 2; ++d) CK(cudaStreamSynchronize(busy_stream[d]));
  }
  printf("messages checked against the local pack: equal\n");
  return 0;
}
