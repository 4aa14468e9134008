// kill -9 at random times during a run with HDF5 output and checkpoints (issue 23): after every
// kill each HDF5 file in the output directory opens and every dataset and attribute in it reads
// back; every restart (IO::recover = "autoprobe") resumes from the newest checkpoint, or starts
// afresh before there is one; and the run finally ends with norms bit-identical to a run that was
// never stopped, and the same HDF5 datasets holding the same bytes.
//
//   kill_test SAGUARO SOURCE_DIR [KILLS]     (default 20 kills; SAGUARO_KILL_SEED=N repeats a run)
//
// A small grid (12^3 cells, RK4) on the CPU backend, one rank (saguaro as its own MPI singleton);
// norms every 2 iterations, HDF5 of phi every 4 (most of the run's time goes to those writes,
// so that many kills land inside one), a checkpoint every 20. The first kill comes as soon as
// the norms file appears (before the first checkpoint: the restart is a fresh run that must
// truncate the output); the others after a delay uniform in [0, startup + (T - startup) /
// KILLS], T the uninterrupted run's wall time, so that the kills spread over the run and about
// half of it is done when they are over (with 1.5 instead of 1, a machine that got faster
// after the straight run, as a loaded CI machine does, let the run end after 9 of 20 kills).
// Exit status 0 when every check passed.
#include <hdf5.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <signal.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

int failures = 0;
void fail(const std::string& what) {
  std::printf("FAIL: %s\n", what.c_str());
  std::fflush(stdout);
  ++failures;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string par_text(const std::string& source, const fs::path& work, const std::string& out,
                     int itlast) {
  std::ostringstream p;
  p << "ActiveThorns = \"Saguaro WaveDemo\"\n"
    << "Saguaro::equations = \"" << source << "/par/wave.edl\"\n"
    << "Saguaro::backend = \"cpu\"\n"
    << "Saguaro::cache_dir = \"" << (work / "cache").string() << "\"\n"
    << "Saguaro::prediction_log = no\n"
    << "Saguaro::progress_every = 0.25\n"
    << "Cactus::cctk_show_schedule = no\n"
    << "CoordBase::spacing = \"numcells\"\n"
    << "CoordBase::ncells_x = 12\nCoordBase::ncells_y = 12\nCoordBase::ncells_z = 12\n"
    << "Periodic::periodic = yes\nMoL::ODE_Method = \"RK4\"\nTime::dtfac = 0.25\n"
    << "Cactus::terminate = \"iteration\"\nCactus::cctk_itlast = " << itlast << "\n"
    << "IO::out_dir = \"" << (work / out).string() << "\"\n"
    << "IO::out_every = 2\n"
    << "IOScalar::out_vars = \"WaveDemo::phi WaveDemo::pi\"\n"
    << "IOHDF5::out_every = 4\nIOHDF5::out_vars = \"WaveDemo::phi\"\n"
    << "IO::checkpoint_every = 20\nIO::checkpoint_keep = 2\n"
    << "IO::recover = \"autoprobe\"\n";
  return p.str();
}

// Starts `saguaro par` with stdout and stderr into `log`.
pid_t start(const std::string& saguaro, const fs::path& par, const fs::path& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execl(saguaro.c_str(), saguaro.c_str(), par.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Waits for the child; its exit status, or 128 + the signal that ended it.
int finish(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Whether the child has ended (then *code is as finish's).
bool ended(pid_t pid, int* code) {
  int status = 0;
  if (waitpid(pid, &status, WNOHANG) != pid) return false;
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Reading every HDF5 file back

struct Visit {
  std::string file;
  std::string error;
  std::vector<std::string> datasets;
};

herr_t read_attribute(hid_t loc, const char* name, const H5A_info_t*, void* data) {
  auto* visit = static_cast<Visit*>(data);
  const hid_t attribute = H5Aopen(loc, name, H5P_DEFAULT);
  const hid_t type = attribute >= 0 ? H5Aget_type(attribute) : -1;
  const hid_t space = attribute >= 0 ? H5Aget_space(attribute) : -1;
  const hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  const std::size_t size = type >= 0 ? H5Tget_size(type) : 0;
  std::vector<char> bytes(n > 0 && size > 0 ? static_cast<std::size_t>(n) * size : 1);
  if (attribute < 0 || type < 0 || n < 0 || H5Aread(attribute, type, bytes.data()) < 0)
    visit->error = std::string("attribute ") + name + " does not read";
  if (space >= 0) H5Sclose(space);
  if (type >= 0) H5Tclose(type);
  if (attribute >= 0) H5Aclose(attribute);
  return visit->error.empty() ? 0 : -1;
}

herr_t read_object(hid_t root, const char* name, const H5L_info_t*, void* data) {
  auto* visit = static_cast<Visit*>(data);
  const hid_t object = H5Oopen(root, name, H5P_DEFAULT);
  if (object < 0) {
    visit->error = std::string("object '") + name + "' does not open";
    return -1;
  }
  hsize_t index = 0;
  if (H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_NATIVE, &index, read_attribute, visit) < 0 &&
      visit->error.empty())
    visit->error = std::string("the attributes of '") + name + "' do not read";
  if (visit->error.empty() && H5Iget_type(object) == H5I_DATASET) {
    const hid_t type = H5Dget_type(object);
    const hid_t space = H5Dget_space(object);
    const hssize_t n = H5Sget_simple_extent_npoints(space);
    std::vector<char> bytes(
        std::max<std::size_t>(1, static_cast<std::size_t>(n) * H5Tget_size(type)));
    if (n < 0 || H5Dread(object, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) < 0)
      visit->error = std::string("dataset '") + name + "' does not read";
    visit->datasets.push_back(name);
    H5Sclose(space);
    H5Tclose(type);
  }
  H5Oclose(object);
  return visit->error.empty() ? 0 : -1;
}

// Opens `path` and reads every attribute and dataset in it; "" or what failed.
std::string read_everything(const fs::path& path, std::vector<std::string>* datasets = nullptr) {
  Visit visit{path.string(), {}, {}};
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return "does not open";
  hsize_t index = 0;
  if (H5Aiterate2(file, H5_INDEX_NAME, H5_ITER_NATIVE, &index, read_attribute, &visit) >= 0)
    if (H5Lvisit(file, H5_INDEX_NAME, H5_ITER_NATIVE, read_object, &visit) < 0 &&
        visit.error.empty())
      visit.error = "its links do not iterate";
  H5Fclose(file);
  if (datasets != nullptr) *datasets = visit.datasets;
  return visit.error;
}

// Every HDF5 file under `dir` (output, its previous versions, checkpoints) reads back whole.
// Files under `.tmp` names are writes in progress, never read by anyone.
int check_all_readable(const fs::path& dir, int attempt) {
  int files = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool h5 = name.size() > 3 && name.compare(name.size() - 3, 3, ".h5") == 0;
    const bool prev = name.size() > 8 && name.compare(name.size() - 8, 8, ".h5.prev") == 0;
    if (!h5 && !prev) continue;
    ++files;
    if (const std::string error = read_everything(it->path()); !error.empty())
      fail("after kill " + std::to_string(attempt) + ": " + it->path().string() + ": " + error);
  }
  return files;
}

// The bytes of dataset `name` in `file`.
std::vector<char> dataset_bytes(hid_t file, const std::string& name) {
  const hid_t d = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  if (d < 0) return {};
  const hid_t type = H5Dget_type(d), space = H5Dget_space(d);
  std::vector<char> bytes(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)) *
                          H5Tget_size(type));
  H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data());
  H5Sclose(space);
  H5Tclose(type);
  H5Dclose(d);
  return bytes;
}

// The same datasets, byte for byte, but for the metadata group's (its parameter text holds the
// other run's IO::out_dir).
void compare_hdf5(const fs::path& expected, const fs::path& got) {
  std::vector<std::string> want, have;
  if (!read_everything(expected, &want).empty() || !read_everything(got, &have).empty()) {
    fail("the final HDF5 files do not read: " + got.string());
    return;
  }
  std::sort(want.begin(), want.end());
  std::sort(have.begin(), have.end());
  if (want != have) {
    fail(got.string() + " holds " + std::to_string(have.size()) + " datasets, the straight run " +
         std::to_string(want.size()));
    return;
  }
  const hid_t a = H5Fopen(expected.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t b = H5Fopen(got.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  int differ = 0;
  for (const std::string& name : want)
    if (name.rfind("Parameters and Global Attributes", 0) != 0 &&
        dataset_bytes(a, name) != dataset_bytes(b, name))
      ++differ;
  H5Fclose(a);
  H5Fclose(b);
  if (differ > 0) fail(std::to_string(differ) + " datasets of " + got.string() + " differ");
}

// The iteration of the newest complete checkpoint in `dir` (its `.done` marker), or 0.
int newest_checkpoint(const fs::path& dir) {
  int newest = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::string prefix = "checkpoint.chkpt.it_", suffix = ".done";
    if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() + suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      newest = std::max(newest, std::atoi(name.c_str() + prefix.size()));
  }
  return newest;
}

// An attempt that got past its start-up (its log says where it runs to) started where it had
// to: from the newest checkpoint there was, or afresh when there was none.
void check_resumed(const std::string& log, int checkpoint, int attempt) {
  if (log.find("running to iteration") == std::string::npos) return;
  const bool recovered = log.find("recovered from iteration") != std::string::npos;
  const std::string want = "recovered from iteration " + std::to_string(checkpoint) + " ";
  if (checkpoint > 0 && log.find(want) == std::string::npos)
    fail("attempt " + std::to_string(attempt) + " did not say '" + want + "':\n" + log);
  if (checkpoint == 0 && recovered)
    fail("attempt " + std::to_string(attempt) + " recovered without a checkpoint:\n" + log);
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: kill_test SAGUARO SOURCE_DIR [KILLS]\n");
    return 2;
  }
  const std::string saguaro = argv[1], source = argv[2];
  const int kills = argc > 3 ? std::atoi(argv[3]) : 20;
  const char* seed_text = std::getenv("SAGUARO_KILL_SEED");
  const unsigned seed = seed_text != nullptr
                            ? static_cast<unsigned>(std::strtoul(seed_text, nullptr, 10))
                            : std::random_device{}();
  std::mt19937 random(seed);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); // failures are reported as such

  char pattern[] = "/tmp/saguaro-kill-XXXXXX";
  const fs::path work = mkdtemp(pattern);
  const int itlast = 16000;
  std::ofstream(work / "straight.par") << par_text(source, work, "straight", itlast);
  std::ofstream(work / "killed.par") << par_text(source, work, "killed", itlast);
  std::ofstream(work / "empty.par") << par_text(source, work, "empty", 0);
  const auto test_start = Clock::now();

  // The uninterrupted run (it also compiles the kernels into the cache), and a start-up alone.
  auto t = Clock::now();
  if (const int code = finish(start(saguaro, work / "straight.par", work / "straight.log")))
    fail("the straight run ended with status " + std::to_string(code));
  const double straight = seconds_since(t);
  t = Clock::now();
  finish(start(saguaro, work / "empty.par", work / "empty.log"));
  const double startup = seconds_since(t);
  const double window = startup + std::max(0.0, straight - startup) / kills;
  std::printf("seed %u: straight run %.2f s, start-up %.2f s, kill delays in [0, %.2f] s\n", seed,
              straight, startup, window);
  std::fflush(stdout);

  const fs::path out = work / "killed";
  const fs::path norms = out / "phi.norms.tsv";
  int done = 0, files_checked = 0, resumed = 0;
  bool completed = false;
  for (int attempt = 1; attempt <= kills && failures == 0; ++attempt) {
    const fs::path log = work / ("attempt" + std::to_string(attempt) + ".log");
    const int checkpoint = newest_checkpoint(out / "checkpoints");
    const pid_t pid = start(saguaro, work / "killed.par", log);
    const auto launched = Clock::now();
    int code = -1;
    if (attempt == 1) { // as soon as the run has output, before its first checkpoint
      while (!fs::exists(norms) && !ended(pid, &code) && seconds_since(launched) < 60)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    } else {
      const double delay = std::uniform_real_distribution<double>(0.0, window)(random);
      while (seconds_since(launched) < delay && !ended(pid, &code))
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (code < 0) {
      kill(pid, SIGKILL);
      code = finish(pid);
    }
    if (code == 0) { // the run got to its end before the kill
      completed = true;
      break;
    }
    if (code != 128 + SIGKILL) {
      fail("attempt " + std::to_string(attempt) + " ended with status " + std::to_string(code) +
           ":\n" + read_text(log));
      break;
    }
    ++done;
    files_checked += check_all_readable(out, attempt);
    check_resumed(read_text(log), checkpoint, attempt);
    resumed += read_text(log).find("recovered from iteration") != std::string::npos ? 1 : 0;
  }

  // The run to its end, resuming from the newest checkpoint.
  if (failures == 0 && !completed) {
    const fs::path log = work / "final.log";
    if (const int code = finish(start(saguaro, work / "killed.par", log)))
      fail("the final run ended with status " + std::to_string(code) + ":\n" + read_text(log));
    else if (done > 1 && read_text(log).find("recovered from iteration") == std::string::npos)
      fail("the final run did not recover:\n" + read_text(log));
  }
  if (failures == 0) {
    for (const char* file : {"phi.norms.tsv", "pi.norms.tsv"})
      if (read_text(work / "straight" / file) != read_text(out / file))
        fail(std::string(file) + " differs from the straight run's");
    compare_hdf5(work / "straight/phi.file_0.h5", out / "phi.file_0.h5");
    for (const char* left : {"phi.file_0.h5.prev", "phi.file_0.h5.tmp"})
      if (fs::exists(out / left)) fail(std::string(left) + " left after the run ended");
  }
  std::printf("%d kills (%d HDF5 files read back whole after them; %d restarts resumed from a "
              "checkpoint before their kill), %s; %.1f s in all: %s\n",
              done, files_checked, resumed,
              completed ? "the run ended before the next kill" : "then the run to its end",
              seconds_since(test_start), failures == 0 ? "passed" : "FAILED");
  if (done < kills / 2) fail("only " + std::to_string(done) + " kills took place");
  if (failures == 0)
    fs::remove_all(work);
  else
    std::printf("kept %s\n", work.c_str());
  return failures == 0 ? 0 : 1;
}
