// gunrock_sssp: gpusp's driver for Gunrock's single-source shortest paths (gunrock/algorithms/sssp.hxx).
//
// gpusp builds this file against the pinned Gunrock archive (gpusp.data.peers, `gpusp peers build gunrock`) and
// runs it from gpusp.solvers.gunrock. It reads gpusp's binary CSR (exactly the arcs gpusp's own solvers get:
// parallel arcs and self-loops included), puts the graph on the GPU once, and answers runs from given sources:
//
//   gunrock_sssp GRAPH.csr --serve [--load-balance NAME] [--uniquify 0|1] [--gunrock-stdout PATH]
//       reads commands from stdin, one per line, and answers each with one JSON line on stdout:
//       "run S" (one timed run from S), "save PATH" (the last run's distances into PATH), "quit";
//   gunrock_sssp GRAPH.csr --sources FILE [--warmup W] [--trials T] [--distances OUT] [...]
//       for each source of FILE (one per line): W untimed runs, T timed runs (one JSON line each), and the last
//       run's distances appended to OUT.
// What Gunrock itself prints goes to --gunrock-stdout (default /dev/null), never among the answers.
//
// Before anything else it prints one JSON line: the graph, the GPU, the build and a self-test of the atomic
// minimum the SSSP relies on. A run is what a user of Gunrock pays for one sssp::run call with a context kept
// across calls: the problem's set-up and allocations, the enactor's frontiers, the enact loop and the frees at the
// end, timed with CUDA events on the context's stream and with the host clock; Gunrock's own enact time (its
// events around the loop only) is reported beside it. Exit status: 0 done, 1 a CUDA or Gunrock error, 2 bad
// arguments or input, 3 no usable GPU (the solver then records a skip).
//
// Distances are the graph's integer weight type (int32 or int64, the itemsize in the CSR header); both are native
// to CUDA's atomicMin, so no distance is ever rounded. Unreachable vertices keep Gunrock's infinity, the type's
// largest value.

// The device-pass fix. Gunrock's gunrock/util/math.hxx picks its device atomics with `#if __HIP_DEVICE_COMPILE__`,
// a macro that HIP's compiler defines in its device pass but nvcc never does. Built with nvcc alone, every kernel
// therefore gets the host branch of math::atomic::min, `std::min(*address, value)`: a plain read that stores
// nothing, so SSSP's relaxations never lower a distance and nearly every vertex stays infinite. nvcc defines
// __CUDA_ARCH__ exactly in its device pass, so defining __HIP_DEVICE_COMPILE__ there, before any Gunrock header is
// read, gives the kernels the real atomics and leaves the host pass as it was. GPUSP_GUNROCK_NO_DEVICE_FIX builds
// the driver without it, so that a test on a GPU can show the wrong distances.
#if defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && !defined(GPUSP_GUNROCK_NO_DEVICE_FIX)
#define __HIP_DEVICE_COMPILE__ 1
#endif

#include <gunrock/algorithms/sssp.hxx>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef SM_TARGET
#error "build with -DSM_TARGET=<compute capability x 10>, the -arch the driver is compiled for"
#endif

namespace {

constexpr char CSR_MAGIC[8] = {'G', 'P', 'U', 'S', 'P', 'C', 'S', 'R'};
constexpr char DIST_MAGIC[8] = {'G', 'P', 'U', 'S', 'P', 'D', 'S', 'T'};
constexpr int EXIT_RUNTIME = 1, EXIT_INPUT = 2, EXIT_NO_GPU = 3;

#ifdef GPUSP_GUNROCK_NO_DEVICE_FIX
constexpr bool DEVICE_FIX = false;
#else
constexpr bool DEVICE_FIX = true;
#endif

using vertex_t = int;
using edge_t = int;  // Gunrock's advance kernels index arcs with edge_t: graphs of 2^31 arcs or more are refused

// An error of the input or the command line (exit 2), apart from CUDA's and Gunrock's (exit 1).
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// No GPU this build can run on (exit 3).
struct NoGpu : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      out += ' ';
    else
      out += c;
  }
  return out + "\"";
}

// The driver's answers, one JSON line each, go to the standard output it was started with and nowhere else: Gunrock
// itself prints to std::cout in places (merge_path_v2's advance prints every frontier it sorts), so std::cout is
// pointed elsewhere (--gunrock-stdout, default /dev/null) before Gunrock runs.
FILE* answers = stdout;

void answer(const std::string& line) {
  std::fputs(line.c_str(), answers);
  std::fputc('\n', answers);
  std::fflush(answers);
}

void divert_gunrock_stdout(const std::string& path) {
  std::fflush(stdout);
  int kept = dup(STDOUT_FILENO);
  int target = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (kept < 0 || target < 0 || dup2(target, STDOUT_FILENO) < 0)
    throw InputError("--gunrock-stdout " + path + ": cannot write");
  close(target);
  answers = fdopen(kept, "w");
  if (answers == nullptr)
    throw InputError("cannot keep the standard output for the answers");
}

struct Options {
  std::string graph, sources, distances, gunrock_stdout = "/dev/null";
  bool serve = false;
  int warmup = 1, trials = 1;
  std::string load_balance = "block_mapped";
  bool uniquify = false;
};

int parse_count(const std::string& flag, const std::string& text, int minimum) {
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < minimum || value > 1000000)
    throw InputError(flag + " " + text + ": expected an integer >= " + std::to_string(minimum));
  return static_cast<int>(value);
}

Options parse_arguments(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw InputError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--serve")
      opt.serve = true;
    else if (arg == "--sources")
      opt.sources = value();
    else if (arg == "--distances")
      opt.distances = value();
    else if (arg == "--warmup")
      opt.warmup = parse_count(arg, value(), 0);
    else if (arg == "--trials")
      opt.trials = parse_count(arg, value(), 1);
    else if (arg == "--load-balance")
      opt.load_balance = value();
    else if (arg == "--gunrock-stdout")
      opt.gunrock_stdout = value();
    else if (arg == "--uniquify") {
      std::string v = value();
      if (v != "0" && v != "1")
        throw InputError("--uniquify " + v + ": expected 0 or 1");
      opt.uniquify = v == "1";
    } else if (!arg.empty() && arg[0] == '-')
      throw InputError("unknown option " + arg);
    else if (opt.graph.empty())
      opt.graph = arg;
    else
      throw InputError("unexpected argument " + arg);
  }
  if (opt.graph.empty() || opt.serve == !opt.sources.empty())
    throw InputError(
        "usage: gunrock_sssp GRAPH.csr (--serve | --sources FILE [--warmup W] [--trials T] [--distances OUT]) "
        "[--load-balance block_mapped|thread_mapped|merge_path|merge_path_v2] [--uniquify 0|1] "
        "[--gunrock-stdout PATH]");
  return opt;
}

// The advance load balance by the name gpusp's registry uses (Gunrock's enumerator names).
gunrock::operators::load_balance_t load_balance_of(const std::string& name) {
  using lb = gunrock::operators::load_balance_t;
  if (name == "block_mapped")
    return lb::block_mapped;
  if (name == "thread_mapped")
    return lb::thread_mapped;
  if (name == "merge_path")
    return lb::merge_path;
  if (name == "merge_path_v2")
    return lb::merge_path_v2;
  throw InputError("--load-balance " + name +
                   ": expected block_mapped, thread_mapped, merge_path or merge_path_v2");
}

// gpusp's binary CSR on the host: header (magic, n, m, weight itemsize as int64), offsets (int64), targets
// (int32), weights (int32 or int64).
struct HostCsr {
  std::int64_t n = 0, m = 0, itemsize = 0;
  std::vector<std::int64_t> offsets;
  std::vector<std::int32_t> targets;
  std::vector<char> weights;
};

template <typename T>
void read_exact(std::ifstream& in, T* data, std::int64_t count, const std::string& path, const char* what) {
  in.read(reinterpret_cast<char*>(data), static_cast<std::streamsize>(count * sizeof(T)));
  if (!in)
    throw InputError(path + ": truncated (reading the " + what + ")");
}

HostCsr read_csr(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path + ": cannot open");
  char magic[8];
  read_exact(in, magic, 8, path, "magic");
  if (std::memcmp(magic, CSR_MAGIC, 8) != 0)
    throw InputError(path + ": not a gpusp binary CSR (no GPUSPCSR magic)");
  HostCsr g;
  std::int64_t header[3];
  read_exact(in, header, 3, path, "header");
  g.n = header[0], g.m = header[1], g.itemsize = header[2];
  if (g.n < 1 || g.n > std::numeric_limits<vertex_t>::max() || g.m < 0)
    throw InputError(path + ": n = " + std::to_string(g.n) + ", m = " + std::to_string(g.m) + " out of range");
  if (g.m > std::numeric_limits<edge_t>::max())
    throw InputError(path + ": " + std::to_string(g.m) + " arcs; this build indexes arcs with 32-bit edge_t");
  if (g.itemsize != 4 && g.itemsize != 8)
    throw InputError(path + ": weight itemsize " + std::to_string(g.itemsize) + ", expected 4 or 8");
  g.offsets.resize(g.n + 1);
  g.targets.resize(g.m);
  g.weights.resize(g.m * g.itemsize);
  read_exact(in, g.offsets.data(), g.n + 1, path, "offsets");
  read_exact(in, g.targets.data(), g.m, path, "targets");
  read_exact(in, g.weights.data(), g.m * g.itemsize, path, "weights");
  if (in.peek() != std::char_traits<char>::eof())
    throw InputError(path + ": bytes after the weights (not a gpusp binary CSR of this n and m)");
  if (g.offsets.front() != 0 || g.offsets.back() != g.m)
    throw InputError(path + ": offsets run from " + std::to_string(g.offsets.front()) + " to " +
                     std::to_string(g.offsets.back()) + ", expected 0 to m");
  for (std::int64_t v = 0; v < g.n; ++v)
    if (g.offsets[v + 1] < g.offsets[v])
      throw InputError(path + ": offsets decrease after vertex " + std::to_string(v));
  for (std::int64_t e = 0; e < g.m; ++e)
    if (g.targets[e] < 0 || g.targets[e] >= g.n)
      throw InputError(path + ": arc " + std::to_string(e) + " points to vertex " + std::to_string(g.targets[e]));
  return g;
}

std::vector<vertex_t> read_sources(const std::string& path, std::int64_t n) {
  std::ifstream in(path);
  if (!in)
    throw InputError(path + ": cannot open");
  std::vector<vertex_t> out;
  std::string line;
  for (int row = 1; std::getline(in, line); ++row) {
    if (line.empty() || line[0] == '#')
      continue;
    char* end = nullptr;
    long long s = std::strtoll(line.c_str(), &end, 10);
    if (end == line.c_str() || s < 0 || s >= n)
      throw InputError(path + ":" + std::to_string(row) + ": " + line + " is no vertex of 0.." + std::to_string(n - 1));
    out.push_back(static_cast<vertex_t>(s));
  }
  if (out.empty())
    throw InputError(path + ": no sources");
  return out;
}

// The atomic minimum SSSP relaxes with, tried on the device: without the device-pass fix it only reads.
template <typename dist_t>
__global__ void try_atomic_min(dist_t* value) {
  gunrock::math::atomic::min(value, dist_t(1));
}

template <typename dist_t>
bool atomic_min_works() {
  dist_t start = 5, after = 0;
  dist_t* d = nullptr;
  check(cudaMalloc(&d, sizeof(dist_t)), "cudaMalloc (self-test)");
  check(cudaMemcpy(d, &start, sizeof(dist_t), cudaMemcpyHostToDevice), "cudaMemcpy (self-test)");
  try_atomic_min<dist_t><<<1, 1>>>(d);
  check(cudaGetLastError(), "self-test launch");
  check(cudaMemcpy(&after, d, sizeof(dist_t), cudaMemcpyDeviceToHost), "cudaMemcpy (self-test)");
  check(cudaFree(d), "cudaFree (self-test)");
  return after == 1;
}

// The GPU, checked against the architecture this driver was compiled for.
std::string gpu_summary() {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    throw NoGpu(std::string("no CUDA GPU is usable (") +
                (status != cudaSuccess ? cudaGetErrorString(status) : "no device") + ")");
  cudaDeviceProp props;
  check(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
  int cc = props.major * 10 + props.minor;
  if (cc < SM_TARGET)
    throw NoGpu("the driver is built for sm_" + std::to_string(SM_TARGET) + " and the GPU (" + props.name +
                ") is sm_" + std::to_string(cc) + "; rebuild with `gpusp peers build gunrock --arch " +
                std::to_string(cc) + " --force`");
  std::ostringstream out;
  out << "\"gpu\": " << json_string(props.name) << ", \"compute_capability\": \"" << props.major << "." << props.minor
      << "\", \"sm_target\": " << SM_TARGET;
  return out.str();
}

struct RunTimes {
  float call_ms = 0, enact_ms = 0;
  double host_ms = 0;
  int iterations = 0;
};

// One SSSP run from `source` into `distances`, what gunrock::sssp::run(G, param, result, context) does in the
// pinned commit (problem set-up and reset, enactor, enact, and the frees as both go out of scope), spelled out so
// that the enactor's iteration count can be read before it goes.
template <typename graph_t, typename dist_t>
float sssp_call(graph_t& G, vertex_t source, dist_t* distances, const gunrock::options_t& options,
                std::shared_ptr<gunrock::gcuda::multi_context_t>& context, int& iterations) {
  using param_type = gunrock::sssp::param_t<vertex_t>;
  using result_type = gunrock::sssp::result_t<vertex_t, dist_t>;
  using problem_type = gunrock::sssp::problem_t<graph_t, param_type, result_type>;
  using enactor_type = gunrock::sssp::enactor_t<problem_type>;
  param_type param(source, options);
  result_type result(distances, nullptr, G.get_number_of_vertices());
  problem_type problem(G, param, result, context);
  problem.init();
  problem.reset();
  enactor_type enactor(&problem, context);
  float enact_ms = enactor.enact();
  iterations = enactor.iteration;
  return enact_ms;
}

template <typename dist_t>
class Session {
 public:
  Session(const HostCsr& host, const Options& opt) : n_(host.n), m_(host.m) {
    options_.advance_load_balance = load_balance_of(opt.load_balance);
    options_.enable_uniquify = opt.uniquify;
    context_ = std::make_shared<gunrock::gcuda::multi_context_t>(0);
    auto t0 = std::chrono::steady_clock::now();
    csr_.number_of_rows = csr_.number_of_columns = static_cast<vertex_t>(n_);
    csr_.number_of_nonzeros = static_cast<edge_t>(m_);
    std::vector<edge_t> offsets(host.offsets.begin(), host.offsets.end());
    const dist_t* weights = reinterpret_cast<const dist_t*>(host.weights.data());
    csr_.row_offsets = offsets;
    csr_.column_indices = std::vector<vertex_t>(host.targets.begin(), host.targets.end());
    csr_.nonzero_values = std::vector<dist_t>(weights, weights + m_);
    gunrock::graph::graph_properties_t properties;
    properties.directed = true;
    properties.symmetric = false;
    properties.weighted = true;
    graph_ = std::make_unique<graph_type>(gunrock::graph::build<device>(properties, csr_));
    distances_.resize(n_);
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
    check(cudaDeviceSynchronize(), "upload");
    upload_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  ~Session() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }

  double upload_ms() const { return upload_ms_; }

  RunTimes run(vertex_t source) {
    RunTimes t;
    auto stream = context_->get_context(0)->stream();
    check(cudaDeviceSynchronize(), "before a run");
    auto h0 = std::chrono::steady_clock::now();
    check(cudaEventRecord(start_, stream), "cudaEventRecord");
    t.enact_ms = sssp_call(*graph_, source, distances_.data().get(), options_, context_, t.iterations);
    check(cudaEventRecord(stop_, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "a run");
    t.host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h0).count();
    check(cudaEventElapsedTime(&t.call_ms, start_, stop_), "cudaEventElapsedTime");
    check(cudaGetLastError(), "a run");
    last_source_ = source;
    return t;
  }

  // The last run's distances as one record (source, then n values) appended to `out`.
  void write_record(std::ostream& out) {
    std::vector<dist_t> host(n_);
    check(cudaMemcpy(host.data(), distances_.data().get(), n_ * sizeof(dist_t), cudaMemcpyDeviceToHost),
          "cudaMemcpy (distances)");
    std::int64_t source = last_source_;
    out.write(reinterpret_cast<const char*>(&source), sizeof(source));
    out.write(reinterpret_cast<const char*>(host.data()), static_cast<std::streamsize>(n_ * sizeof(dist_t)));
  }

  void write_header(std::ostream& out) const {
    std::int64_t header[2] = {n_, static_cast<std::int64_t>(sizeof(dist_t))};
    out.write(DIST_MAGIC, 8);
    out.write(reinterpret_cast<const char*>(header), sizeof(header));
  }

  // The last run's distances into `path` alone, through a temporary file renamed at the end.
  void save(const std::string& path) {
    if (last_source_ < 0)
      throw InputError("save before any run");
    std::string tmp = path + ".part";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out)
        throw InputError(tmp + ": cannot write");
      write_header(out);
      write_record(out);
      if (!out.flush())
        throw InputError(tmp + ": write failed");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw InputError(path + ": cannot rename " + tmp + " onto it");
  }

 private:
  std::int64_t n_, m_;
  gunrock::options_t options_;
  std::shared_ptr<gunrock::gcuda::multi_context_t> context_;
  static constexpr auto device = gunrock::memory::memory_space_t::device;
  using graph_type = gunrock::graph::graph_t<device, vertex_t, edge_t, dist_t,
                                             gunrock::graph::graph_csr_t<device, vertex_t, edge_t, dist_t>>;
  gunrock::format::csr_t<device, vertex_t, edge_t, dist_t> csr_;  // the device arrays the graph views
  std::unique_ptr<graph_type> graph_;
  thrust::device_vector<dist_t> distances_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  double upload_ms_ = 0;
  vertex_t last_source_ = -1;
};

std::string run_line(vertex_t source, const RunTimes& t, int trial, bool warmup) {
  std::ostringstream out;
  out.precision(6);
  out << std::fixed << "{\"source\": " << source << ", \"trial\": " << trial
      << ", \"warmup\": " << (warmup ? "true" : "false") << ", \"call_ms\": " << t.call_ms
      << ", \"enact_ms\": " << t.enact_ms << ", \"host_ms\": " << t.host_ms << ", \"iterations\": " << t.iterations
      << "}";
  return out.str();
}

vertex_t parse_source(const std::string& text, std::int64_t n) {
  char* end = nullptr;
  long long s = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || s < 0 || s >= n)
    throw InputError("source " + text + " is no vertex of 0.." + std::to_string(n - 1));
  return static_cast<vertex_t>(s);
}

// --serve: one JSON line per command; a bad command is answered with an error line and the session goes on.
template <typename dist_t>
int serve(Session<dist_t>& session, std::int64_t n) {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string command, argument;
    words >> command;
    std::getline(words >> std::ws, argument);
    try {
      if (command == "run") {
        vertex_t source = parse_source(argument, n);
        answer(run_line(source, session.run(source), 0, false));
      } else if (command == "save") {
        if (argument.empty())
          throw InputError("save needs a path");
        session.save(argument);
        answer("{\"saved\": " + json_string(argument) + "}");
      } else if (command == "quit") {
        return 0;
      } else {
        throw InputError("unknown command " + json_string(line) + " (run S, save PATH, quit)");
      }
    } catch (const InputError& e) {
      answer("{\"error\": " + json_string(e.what()) + "}");
    }
  }
  return 0;
}

// --sources: warm-up and timed runs per source, distances of each source's last run appended to --distances.
template <typename dist_t>
int batch(Session<dist_t>& session, const Options& opt, std::int64_t n) {
  std::vector<vertex_t> sources = read_sources(opt.sources, n);
  std::ofstream out;
  std::string tmp = opt.distances + ".part";
  if (!opt.distances.empty()) {
    out.open(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw InputError(tmp + ": cannot write");
    session.write_header(out);
  }
  for (vertex_t source : sources) {
    for (int i = 0; i < opt.warmup; ++i)
      answer(run_line(source, session.run(source), i, true));
    for (int i = 0; i < opt.trials; ++i)
      answer(run_line(source, session.run(source), i, false));
    if (out.is_open())
      session.write_record(out);
  }
  if (out.is_open()) {
    out.close();
    if (!out || std::rename(tmp.c_str(), opt.distances.c_str()) != 0)
      throw InputError(opt.distances + ": writing the distances failed");
  }
  return 0;
}

template <typename dist_t>
int drive(const HostCsr& host, const Options& opt, const std::string& gpu) {
  bool atomics = atomic_min_works<dist_t>();
  Session<dist_t> session(host, opt);
  std::ostringstream ready;
  ready << "{\"ready\": true, \"n\": " << host.n << ", \"m\": " << host.m << ", \"distance_bytes\": " << sizeof(dist_t)
        << ", \"load_balance\": " << json_string(opt.load_balance)
        << ", \"uniquify\": " << (opt.uniquify ? "true" : "false") << ", " << gpu
        << ", \"device_fix\": " << (DEVICE_FIX ? "true" : "false")
        << ", \"atomic_min_ok\": " << (atomics ? "true" : "false") << ", \"upload_ms\": " << session.upload_ms() << "}";
  answer(ready.str());
  return opt.serve ? serve(session, host.n) : batch(session, opt, host.n);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options opt = parse_arguments(argc, argv);
    load_balance_of(opt.load_balance);
    HostCsr host = read_csr(opt.graph);
    std::string gpu = gpu_summary();
    divert_gunrock_stdout(opt.gunrock_stdout);
    // the distance type follows the weights: one binary serves int32 and int64 graphs
    return host.itemsize == 4 ? drive<std::int32_t>(host, opt, gpu) : drive<long long>(host, opt, gpu);
  } catch (const InputError& e) {
    std::cerr << "gunrock_sssp: error: " << e.what() << std::endl;
    return EXIT_INPUT;
  } catch (const NoGpu& e) {
    std::cerr << "gunrock_sssp: unavailable: " << e.what() << std::endl;
    return EXIT_NO_GPU;
  } catch (const std::exception& e) {
    std::cerr << "gunrock_sssp: failed: " << e.what() << std::endl;
    return EXIT_RUNTIME;
  }
}
