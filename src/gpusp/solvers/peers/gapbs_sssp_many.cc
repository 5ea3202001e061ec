// gapbs_sssp_many: gpusp's driver for the GAP Benchmark Suite's single-source shortest paths (GAPBS's sssp.cc).
//
// gpusp builds this file against the pinned GAPBS archive (`gpusp peers build gapbs`, gpusp.solvers.peers.build) with
// GAPBS's own flags, and runs it from gpusp.solvers.peers.gapbs. It compiles GAPBS's sssp.cc itself (its main()
// renamed away), so the kernel (DeltaStep), the verifier (SSSPVerifier), the graph builder and reader and the timer
// are GAPBS's code, unchanged; what this file adds is one process for many sources. It loads the graph once with
// GAPBS's builder (any file GAPBS reads, by its suffix: .wsg serialized, .gr, .el, .wel, ...), then:
//
//   gapbs_sssp_many GRAPH --serve [--delta D] [--threads P]
//       reads commands from stdin, one per line, and answers each with one JSON line on stdout:
//       "run S" (one timed trial from S), "verify" (GAPBS's verifier on the last trial's distances, timed apart),
//       "save PATH" (the last trial's distances as n little-endian int32 into PATH), "quit";
//   gapbs_sssp_many GRAPH --sources FILE [--warmup W] [--trials T] [--verify] [--distances DIR] [--delta D] [...]
//       W untimed trials from the first source (the OpenMP threads start there), then for each source of FILE (one
//       per line): T timed trials (one JSON line each), optionally the verifier, and the last trial's distances
//       written to DIR/source-S.int32; a last line with the whole loop's wall time.
//
// Before anything else it prints one JSON line: the graph's size, the threads, delta and the load time (GAPBS's
// timer around its builder). A trial's time is GAPBS's own: its Timer around one DeltaStep call, as its
// BenchmarkKernel times a trial (the distance and frontier allocations included). Distances are GAPBS's int32
// WeightT; unreachable vertices keep its kDistInf, 2^30 - 1. What GAPBS itself prints (load times, its messages
// before it exits on a file it cannot read) goes to stderr, never among the answers. Exit status: 0 done, 1 a
// failure, 2 bad arguments or input.

#include <fcntl.h>
#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <getopt.h>
#include <iostream>
#include <limits>
#include <queue>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// GAPBS's kernel, verifier, builder, reader and timer: its sssp.cc compiled here as it is, with its main() renamed
// so that this file's is the program's. Every header either file needs is included above, outside the rename.
#define main gapbs_sssp_main
#include "sssp.cc"
#undef main

namespace {

constexpr int EXIT_RUNTIME = 1, EXIT_INPUT = 2;
constexpr std::size_t MAX_REPORTED = 10;  // the verifier's mismatch lines kept in an answer

// An error of the input or the command line (exit 2), apart from the run's failures (exit 1).
struct InputError : std::runtime_error {
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  }
  return out + "\"";
}

std::string json_number(double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6f", value);
  return buf;
}

// The answers go to the standard output the driver was started with and nowhere else: GAPBS prints with printf and
// std::cout (its load times, and its messages before std::exit on a file it cannot read), so file descriptor 1 is
// pointed at stderr before GAPBS runs.
FILE* answers = stdout;

void answer(const std::string& line) {
  std::fputs(line.c_str(), answers);
  std::fputc('\n', answers);
  std::fflush(answers);
}

void divert_gapbs_output() {
  std::cout.flush();
  std::fflush(stdout);
  int kept = dup(STDOUT_FILENO);
  if (kept < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    throw std::runtime_error("cannot keep the standard output for the answers");
  answers = fdopen(kept, "w");
  if (answers == nullptr)
    throw std::runtime_error("cannot keep the standard output for the answers");
}

struct Options {
  std::string graph, sources, distances;
  bool serve = false, verify = false;
  int warmup = 1, trials = 1, threads = 0;
  WeightT delta = 1;  // GAPBS's own default for -d
};

long parse_integer(const std::string& flag, const std::string& text, long minimum, long maximum) {
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < minimum || value > maximum)
    throw InputError(flag + " " + text + ": expected an integer from " + std::to_string(minimum) + " to " +
                     std::to_string(maximum));
  return value;
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
    else if (arg == "--verify")
      opt.verify = true;
    else if (arg == "--sources")
      opt.sources = value();
    else if (arg == "--distances")
      opt.distances = value();
    else if (arg == "--warmup")
      opt.warmup = static_cast<int>(parse_integer(arg, value(), 0, 1000000));
    else if (arg == "--trials")
      opt.trials = static_cast<int>(parse_integer(arg, value(), 1, 1000000));
    else if (arg == "--threads")
      opt.threads = static_cast<int>(parse_integer(arg, value(), 0, 1 << 20));
    else if (arg == "--delta")
      opt.delta = static_cast<WeightT>(parse_integer(arg, value(), 1, kDistInf));
    else if (!arg.empty() && arg[0] == '-')
      throw InputError("unknown option " + arg);
    else if (opt.graph.empty())
      opt.graph = arg;
    else
      throw InputError("unexpected argument " + arg);
  }
  if (opt.graph.empty() || opt.serve == !opt.sources.empty())
    throw InputError(
        "usage: gapbs_sssp_many GRAPH (--serve | --sources FILE [--warmup W] [--trials T] [--verify] "
        "[--distances DIR]) [--delta D] [--threads P]");
  if (opt.serve && (opt.verify || !opt.distances.empty()))
    throw InputError("--verify and --distances go with --sources (served, ask `verify` and `save PATH`)");
  return opt;
}

std::string suffix_of(const std::string& path) {
  std::size_t dot = path.rfind('.');
  std::size_t slash = path.rfind('/');
  return dot == std::string::npos || (slash != std::string::npos && dot < slash) ? "" : path.substr(dot);
}

// What GAPBS's reader would stop on with a bare exit, said first with the file's name: a file that cannot be read, a
// suffix it does not read into a weighted graph, a .wsg whose size is not that of its own header.
void check_input(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path + ": cannot open");
  const std::string suffix = suffix_of(path);
  const char* known[] = {".wsg", ".gr", ".el", ".wel", ".graph", ".mtx"};
  if (std::find(std::begin(known), std::end(known), suffix) == std::end(known))
    throw InputError(path + ": GAPBS reads a weighted graph from .wsg, .gr, .el, .wel, .graph or .mtx, not '" +
                     suffix + "'");
  if (suffix != ".wsg")
    return;
  bool directed = false;
  SGOffset arcs = 0, n = 0;
  in.read(reinterpret_cast<char*>(&directed), sizeof(bool));
  in.read(reinterpret_cast<char*>(&arcs), sizeof(SGOffset));
  in.read(reinterpret_cast<char*>(&n), sizeof(SGOffset));
  if (!in)
    throw InputError(path + ": shorter than a .wsg header");
  in.seekg(0, std::ios::end);
  const std::int64_t size = static_cast<std::int64_t>(in.tellg());
  if (n < 1 || n > std::numeric_limits<NodeID>::max() || arcs < 0 || arcs > (std::int64_t{1} << 40))
    throw InputError(path + ": .wsg header says n = " + std::to_string(n) + ", " + std::to_string(arcs) + " arcs");
  const std::int64_t half = (n + 1) * static_cast<std::int64_t>(sizeof(SGOffset)) +
                            arcs * static_cast<std::int64_t>(sizeof(WNode));
  const std::int64_t expected = 1 + 2 * static_cast<std::int64_t>(sizeof(SGOffset)) + (directed ? 2 : 1) * half;
  if (size != expected)
    throw InputError(path + ": " + std::to_string(size) + " bytes; a " + (directed ? "directed" : "undirected") +
                     " .wsg of n = " + std::to_string(n) + " and " + std::to_string(arcs) + " arcs has " +
                     std::to_string(expected));
}

// GAPBS's builder takes its input from a command line object: this one names the file and nothing else.
class GraphFile : public CLBase {
 public:
  explicit GraphFile(const std::string& path) : CLBase(0, nullptr, "gapbs_sssp_many") { filename_ = path; }
};

std::vector<NodeID> read_sources(const std::string& path, std::int64_t n) {
  std::ifstream in(path);
  if (!in)
    throw InputError(path + ": cannot open");
  std::vector<NodeID> out;
  std::string line;
  for (int row = 1; std::getline(in, line); ++row) {
    std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#')
      continue;
    std::size_t last = line.find_last_not_of(" \t\r");
    std::string word = line.substr(first, last - first + 1);
    char* end = nullptr;
    errno = 0;
    long long s = std::strtoll(word.c_str(), &end, 10);
    if (*end != '\0' || errno != 0 || s < 0 || s >= n)
      throw InputError(path + ":" + std::to_string(row) + ": '" + word + "' is no vertex of 0.." +
                       std::to_string(n - 1));
    out.push_back(static_cast<NodeID>(s));
  }
  if (out.empty())
    throw InputError(path + ": no sources");
  return out;
}

NodeID parse_source(const std::string& text, std::int64_t n) {
  char* end = nullptr;
  errno = 0;
  long long s = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || s < 0 || s >= n)
    throw InputError("source '" + text + "' is no vertex of 0.." + std::to_string(n - 1));
  return static_cast<NodeID>(s);
}

// Keeps the first lines written to it and counts them all: GAPBS's verifier prints one line per wrong vertex.
class FirstLines : public std::streambuf {
 public:
  std::vector<std::string> lines;
  std::int64_t count = 0;

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof())
      return traits_type::not_eof(c);
    if (c == '\n') {
      if (lines.size() < MAX_REPORTED)
        lines.push_back(current_);
      current_.clear();
      ++count;
    } else if (lines.size() < MAX_REPORTED) {
      current_ += static_cast<char>(c);
    }
    return c;
  }

 private:
  std::string current_;
};

class Session {
 public:
  Session(const std::string& path, WeightT delta) : delta_(delta) {
    GraphFile cli(path);
    WeightedBuilder builder(cli);
    Timer t;
    t.Start();
    g_ = builder.MakeGraph();
    t.Stop();
    load_ms_ = t.Millisecs();
    if (g_.num_edges_directed() < 1)
      throw InputError(path + ": no arc that is not a self-loop (GAPBS's DeltaStep needs one)");
  }

  const WGraph& graph() const { return g_; }
  double load_ms() const { return load_ms_; }

  // One trial from `source`: GAPBS's timer around DeltaStep, as its BenchmarkKernel times a trial. The previous
  // trial's distances are freed after the timer stops.
  double run(NodeID source) {
    Timer t;
    t.Start();
    pvector<WeightT> dist = DeltaStep(g_, source, delta_);
    t.Stop();
    last_.swap(dist);
    last_source_ = source;
    return t.Millisecs();
  }

  // GAPBS's verifier (a serial Dijkstra) on the last trial's distances, timed apart, its mismatch lines caught.
  std::string verify() {
    require_a_run("verify");
    FirstLines said;
    std::streambuf* kept = std::cout.rdbuf(&said);
    Timer t;
    t.Start();
    bool ok = false;
    try {
      ok = SSSPVerifier(g_, last_source_, last_);
    } catch (...) {
      std::cout.rdbuf(kept);
      throw;
    }
    t.Stop();
    std::cout.rdbuf(kept);
    std::string mismatches = "[";
    for (std::size_t i = 0; i < said.lines.size(); ++i)
      mismatches += (i ? ", " : "") + json_string(said.lines[i]);
    return "{\"source\": " + std::to_string(last_source_) + ", \"verified\": " + (ok ? "true" : "false") +
           ", \"verify_ms\": " + json_number(t.Millisecs()) + ", \"mismatch_count\": " + std::to_string(said.count) +
           ", \"mismatches\": " + mismatches + "], " + summary() + "}";
  }

  // The last trial's distances (n int32, little-endian as the host) into `path`, through a temporary file renamed
  // at the end; the answer gives the write's time, which a batch's wall time includes.
  std::string save(const std::string& path) {
    require_a_run("save");
    std::string tmp = path + ".part";
    Timer t;
    t.Start();
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out)
        throw InputError(tmp + ": cannot write");
      out.write(reinterpret_cast<const char*>(last_.data()),
                static_cast<std::streamsize>(last_.size() * sizeof(WeightT)));
      if (!out.flush())
        throw InputError(tmp + ": write failed");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      std::remove(tmp.c_str());
      throw InputError(path + ": cannot rename " + tmp + " onto it");
    }
    t.Stop();
    return "{\"source\": " + std::to_string(last_source_) + ", \"saved\": " + json_string(path) +
           ", \"save_ms\": " + json_number(t.Millisecs()) + ", " + summary() + "}";
  }

 private:
  void require_a_run(const std::string& what) const {
    if (last_source_ < 0)
      throw InputError(what + " before any run");
  }

  // The vertices the last trial reached and the largest distance among them (what tells whether GAPBS's int32
  // distances hold the whole answer: docs/peers.md).
  std::string summary() const {
    const std::int64_t n = static_cast<std::int64_t>(last_.size());
    const WeightT* dist = last_.data();
    std::int64_t reached = 0;
    WeightT largest = 0;
#pragma omp parallel for reduction(+ : reached) reduction(max : largest)
    for (std::int64_t v = 0; v < n; ++v) {
      if (dist[v] != kDistInf) {
        ++reached;
        largest = std::max(largest, dist[v]);
      }
    }
    return "\"reached\": " + std::to_string(reached) + ", \"max_distance\": " + std::to_string(largest);
  }

  WGraph g_;
  WeightT delta_;
  double load_ms_ = 0;
  pvector<WeightT> last_;
  NodeID last_source_ = -1;
};

std::string trial_line(NodeID source, int trial, bool warmup, double ms) {
  return "{\"source\": " + std::to_string(source) + ", \"trial\": " + std::to_string(trial) +
         ", \"warmup\": " + (warmup ? "true" : "false") + ", \"trial_ms\": " + json_number(ms) + "}";
}

// --serve: one JSON line per command; a bad command is answered with an error line and the session goes on.
int serve(Session& session) {
  const std::int64_t n = session.graph().num_nodes();
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string command, argument;
    words >> command;
    std::getline(words >> std::ws, argument);
    try {
      if (command == "run") {
        NodeID source = parse_source(argument, n);
        answer(trial_line(source, 0, false, session.run(source)));
      } else if (command == "verify") {
        answer(session.verify());
      } else if (command == "save") {
        if (argument.empty())
          throw InputError("save needs a path");
        answer(session.save(argument));
      } else if (command == "quit") {
        return 0;
      } else {
        throw InputError("unknown command " + json_string(line) + " (run S, verify, save PATH, quit)");
      }
    } catch (const InputError& e) {
      answer("{\"error\": " + json_string(e.what()) + "}");
    }
  }
  return 0;
}

// --sources: warm-up trials from the first source, then the timed trials of every source, each source's check and
// distances after its last trial.
int batch(Session& session, const Options& opt) {
  std::vector<NodeID> sources = read_sources(opt.sources, session.graph().num_nodes());
  if (!opt.distances.empty() && mkdir(opt.distances.c_str(), 0777) != 0 && errno != EEXIST)
    throw InputError(opt.distances + ": cannot make the folder (" + std::strerror(errno) + ")");
  Timer wall;
  wall.Start();
  for (int i = 0; i < opt.warmup; ++i)
    answer(trial_line(sources[0], i, true, session.run(sources[0])));
  for (NodeID source : sources) {
    for (int i = 0; i < opt.trials; ++i)
      answer(trial_line(source, i, false, session.run(source)));
    if (opt.verify)
      answer(session.verify());
    if (!opt.distances.empty())
      answer(session.save(opt.distances + "/source-" + std::to_string(source) + ".int32"));
  }
  wall.Stop();
  answer("{\"done\": true, \"sources\": " + std::to_string(sources.size()) + ", \"wall_ms\": " +
         json_number(wall.Millisecs()) + "}");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options opt = parse_arguments(argc, argv);
    check_input(opt.graph);
    if (opt.threads > 0)
      omp_set_num_threads(opt.threads);
    divert_gapbs_output();
    Session session(opt.graph, opt.delta);
    const WGraph& g = session.graph();
    answer("{\"ready\": true, \"graph\": " + json_string(opt.graph) + ", \"n\": " + std::to_string(g.num_nodes()) +
           ", \"m\": " + std::to_string(g.num_edges_directed()) + ", \"directed\": " +
           (g.directed() ? "true" : "false") + ", \"threads\": " + std::to_string(omp_get_max_threads()) +
           ", \"delta\": " + std::to_string(opt.delta) + ", \"load_ms\": " + json_number(session.load_ms()) + "}");
    return opt.serve ? serve(session) : batch(session, opt);
  } catch (const InputError& e) {
    std::cerr << "gapbs_sssp_many: error: " << e.what() << std::endl;
    return EXIT_INPUT;
  } catch (const std::exception& e) {
    std::cerr << "gapbs_sssp_many: failed: " << e.what() << std::endl;
    return EXIT_RUNTIME;
  }
}
