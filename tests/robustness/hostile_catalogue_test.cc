// The hostile-input catalogue (issue 29): inputs a careless or hostile user
// gives, each run through the real `moesim` binary, which must answer as
// tools/main.cc promises for bad input: exit code 2, exactly one line on
// stderr, "moesim: <message>", naming the file (with its line where the
// parser knows it) or the flag, the field and the rule; no signal, done
// within 5 s (30 s in sanitized builds) and within 1 GiB of address space.
//
// Unlike bad_input_catalogue_test.cc, whose inputs are files under inputs/,
// each row here carries its files: written into the row's own folder
// ({d} in arguments and fragments) before the run, from a literal, from a
// checked-in file with one text replaced (copy_of, old_text -> new_text:
// one field of a real HF config, one row of a real nccl-tests log), or as
// `nest` levels of JSON arrays. Families: every integer, real, word and
// path flag of run / topo / sweep / validate / calibrate / advise; sweep
// specs and sweep merge parts; scenario files; HF configs; runs CSVs; A/B
// pairs CSVs; nccl-tests logs; limits estimated before the work (trace
// size, full mode on the flow network, outputs into folders).
//
// Each fragment is the start of the message moesim prints for its row (at
// most some 120 characters: the file, the field and the rule), read from
// the binary when the row was written and checked by hand against the rule
// it states; a row failing here means the message or the rule changed.
#include <gtest/gtest.h>
#include <signal.h>
#include <string.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "child_process.h"

namespace {

using moesim::testing_util::BuiltWithAsan;
using moesim::testing_util::ChildLimits;
using moesim::testing_util::ChildResult;
using moesim::testing_util::RunChild;

struct InlineFile {
  const char* path;                // relative to the row's folder
  const char* content = nullptr;   // the file's text, or:
  const char* copy_of = nullptr;   // a file of the source tree, with
  const char* old_text = nullptr;  // this text (once) replaced
  const char* new_text = nullptr;  // by this one, or:
  int nest = 0;                    // {"a": [[[...]]]} this deep
};

struct HostileInput {
  const char* name;
  std::vector<std::string> args;  // after `moesim`; "{d}": the row's folder
  std::vector<InlineFile> files;
  const char* fragment;  // the start of the one stderr line, after "moesim: "
};

std::ostream& operator<<(std::ostream& os, const HostileInput& c) {
  return os << c.name;
}

const HostileInput kCatalogue[] = {
    {"RunFlagGpusHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "0x10"},
     {},
     "flags: --gpus: '0x10' is not a decimal integer"},
    {"RunFlagGpusOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "010"},
     {},
     "flags: --gpus: '010' is not a decimal integer"},
    {"RunFlagGpusExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "1e3"},
     {},
     "flags: --gpus: '1e3' is not a decimal integer"},
    {"RunFlagGpusNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "-5"},
     {},
     "flags: --gpus: must be >= 1, got -5"},
    {"RunFlagGpusWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "abc"},
     {},
     "flags: --gpus: 'abc' is not a decimal integer"},
    {"RunFlagGpusHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "99999999999"},
     {},
     "flags: --gpus: '99999999999' is out of range (integers up to 214"
     "7483647)"},
    {"RunFlagGpusEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", ""},
     {},
     "flags: --gpus: '' is not a decimal integer"},
    {"RunFlagGpusFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "3.5"},
     {},
     "flags: --gpus: '3.5' is not a decimal integer"},
    {"RunFlagSeqHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--seq", "0x10"},
     {},
     "flags: --seq: '0x10' is not a decimal integer"},
    {"RunFlagSeqOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--seq", "010"},
     {},
     "flags: --seq: '010' is not a decimal integer"},
    {"RunFlagSeqExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--seq", "1e3"},
     {},
     "flags: --seq: '1e3' is not a decimal integer"},
    {"RunFlagSeqNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--seq", "-5"},
     {},
     "flags: --seq: must be >= 1, got -5"},
    {"RunFlagSeqWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--seq", "abc"},
     {},
     "flags: --seq: 'abc' is not a decimal integer"},
    {"RunFlagSeqHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--seq", "99999999999"},
     {},
     "flags: --seq: '99999999999' is out of range (integers up to 2147"
     "483647)"},
    {"RunFlagSeqEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--seq", ""},
     {},
     "flags: --seq: '' is not a decimal integer"},
    {"RunFlagSeqFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--seq", "3.5"},
     {},
     "flags: --seq: '3.5' is not a decimal integer"},
    {"RunFlagMbsHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--mbs", "0x10"},
     {},
     "flags: --mbs: '0x10' is not a decimal integer"},
    {"RunFlagMbsOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--mbs", "010"},
     {},
     "flags: --mbs: '010' is not a decimal integer"},
    {"RunFlagMbsExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--mbs", "1e3"},
     {},
     "flags: --mbs: '1e3' is not a decimal integer"},
    {"RunFlagMbsNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--mbs", "-5"},
     {},
     "flags: --mbs: must be >= 1, got -5"},
    {"RunFlagMbsWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--mbs", "abc"},
     {},
     "flags: --mbs: 'abc' is not a decimal integer"},
    {"RunFlagMbsHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--mbs", "99999999999"},
     {},
     "flags: --mbs: '99999999999' is out of range (integers up to 2147"
     "483647)"},
    {"RunFlagMbsEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--mbs", ""},
     {},
     "flags: --mbs: '' is not a decimal integer"},
    {"RunFlagMbsFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--mbs", "3.5"},
     {},
     "flags: --mbs: '3.5' is not a decimal integer"},
    {"RunFlagGbsHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--gbs", "0x10"},
     {},
     "flags: --gbs: '0x10' is not a decimal integer"},
    {"RunFlagGbsOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--gbs", "010"},
     {},
     "flags: --gbs: '010' is not a decimal integer"},
    {"RunFlagGbsExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--gbs", "1e3"},
     {},
     "flags: --gbs: '1e3' is not a decimal integer"},
    {"RunFlagGbsNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--gbs", "-5"},
     {},
     "flags: --gbs: must be >= 1, got -5"},
    {"RunFlagGbsWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--gbs", "abc"},
     {},
     "flags: --gbs: 'abc' is not a decimal integer"},
    {"RunFlagGbsHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--gbs", "99999999999"},
     {},
     "flags: --gbs: '99999999999' is out of range (integers up to 2147"
     "483647)"},
    {"RunFlagGbsEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--gbs", ""},
     {},
     "flags: --gbs: '' is not a decimal integer"},
    {"RunFlagGbsFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--gbs", "3.5"},
     {},
     "flags: --gbs: '3.5' is not a decimal integer"},
    {"RunFlagTpHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--tp", "0x10"},
     {},
     "flags: --tp: '0x10' is not a decimal integer"},
    {"RunFlagTpOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--tp", "010"},
     {},
     "flags: --tp: '010' is not a decimal integer"},
    {"RunFlagTpExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--tp", "1e3"},
     {},
     "flags: --tp: '1e3' is not a decimal integer"},
    {"RunFlagTpNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--tp", "-5"},
     {},
     "flags: --tp: must be >= 1, got -5"},
    {"RunFlagTpWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--tp", "abc"},
     {},
     "flags: --tp: 'abc' is not a decimal integer"},
    {"RunFlagTpHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--tp", "99999999999"},
     {},
     "flags: --tp: '99999999999' is out of range (integers up to 21474"
     "83647)"},
    {"RunFlagTpEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--tp", ""},
     {},
     "flags: --tp: '' is not a decimal integer"},
    {"RunFlagTpFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--tp", "3.5"},
     {},
     "flags: --tp: '3.5' is not a decimal integer"},
    {"RunFlagCpHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cp", "0x10"},
     {},
     "flags: --cp: '0x10' is not a decimal integer"},
    {"RunFlagCpOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cp", "010"},
     {},
     "flags: --cp: '010' is not a decimal integer"},
    {"RunFlagCpExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cp", "1e3"},
     {},
     "flags: --cp: '1e3' is not a decimal integer"},
    {"RunFlagCpNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cp", "-5"},
     {},
     "flags: --cp: must be >= 1, got -5"},
    {"RunFlagCpWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cp", "abc"},
     {},
     "flags: --cp: 'abc' is not a decimal integer"},
    {"RunFlagCpHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cp", "99999999999"},
     {},
     "flags: --cp: '99999999999' is out of range (integers up to 21474"
     "83647)"},
    {"RunFlagCpEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cp", ""},
     {},
     "flags: --cp: '' is not a decimal integer"},
    {"RunFlagCpFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cp", "3.5"},
     {},
     "flags: --cp: '3.5' is not a decimal integer"},
    {"RunFlagEpHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep", "0x10"},
     {},
     "flags: --ep: '0x10' is not a decimal integer"},
    {"RunFlagEpOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep", "010"},
     {},
     "flags: --ep: '010' is not a decimal integer"},
    {"RunFlagEpExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep", "1e3"},
     {},
     "flags: --ep: '1e3' is not a decimal integer"},
    {"RunFlagEpNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep", "-5"},
     {},
     "flags: --ep: must be >= 1, got -5"},
    {"RunFlagEpWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep", "abc"},
     {},
     "flags: --ep: 'abc' is not a decimal integer"},
    {"RunFlagEpHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep", "99999999999"},
     {},
     "flags: --ep: '99999999999' is out of range (integers up to 21474"
     "83647)"},
    {"RunFlagEpEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep", ""},
     {},
     "flags: --ep: '' is not a decimal integer"},
    {"RunFlagEpFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep", "3.5"},
     {},
     "flags: --ep: '3.5' is not a decimal integer"},
    {"RunFlagEtpHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--etp", "0x10"},
     {},
     "flags: --etp: '0x10' is not a decimal integer"},
    {"RunFlagEtpOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--etp", "010"},
     {},
     "flags: --etp: '010' is not a decimal integer"},
    {"RunFlagEtpExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--etp", "1e3"},
     {},
     "flags: --etp: '1e3' is not a decimal integer"},
    {"RunFlagEtpNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--etp", "-5"},
     {},
     "flags: --etp: must be >= 1, got -5"},
    {"RunFlagEtpWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--etp", "abc"},
     {},
     "flags: --etp: 'abc' is not a decimal integer"},
    {"RunFlagEtpHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--etp", "99999999999"},
     {},
     "flags: --etp: '99999999999' is out of range (integers up to 2147"
     "483647)"},
    {"RunFlagEtpEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--etp", ""},
     {},
     "flags: --etp: '' is not a decimal integer"},
    {"RunFlagEtpFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--etp", "3.5"},
     {},
     "flags: --etp: '3.5' is not a decimal integer"},
    {"RunFlagPpHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp", "0x10"},
     {},
     "flags: --pp: '0x10' is not a decimal integer"},
    {"RunFlagPpOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp", "010"},
     {},
     "flags: --pp: '010' is not a decimal integer"},
    {"RunFlagPpExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp", "1e3"},
     {},
     "flags: --pp: '1e3' is not a decimal integer"},
    {"RunFlagPpNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp", "-5"},
     {},
     "flags: --pp: must be >= 1, got -5"},
    {"RunFlagPpWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp", "abc"},
     {},
     "flags: --pp: 'abc' is not a decimal integer"},
    {"RunFlagPpHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp", "99999999999"},
     {},
     "flags: --pp: '99999999999' is out of range (integers up to 21474"
     "83647)"},
    {"RunFlagPpEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp", ""},
     {},
     "flags: --pp: '' is not a decimal integer"},
    {"RunFlagPpFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp", "3.5"},
     {},
     "flags: --pp: '3.5' is not a decimal integer"},
    {"RunFlagVppHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--vpp", "0x10"},
     {},
     "flags: --vpp: '0x10' is not a decimal integer"},
    {"RunFlagVppOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--vpp", "010"},
     {},
     "flags: --vpp: '010' is not a decimal integer"},
    {"RunFlagVppExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--vpp", "1e3"},
     {},
     "flags: --vpp: '1e3' is not a decimal integer"},
    {"RunFlagVppNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--vpp", "-5"},
     {},
     "flags: --vpp: must be >= 1, got -5"},
    {"RunFlagVppWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--vpp", "abc"},
     {},
     "flags: --vpp: 'abc' is not a decimal integer"},
    {"RunFlagVppHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--vpp", "99999999999"},
     {},
     "flags: --vpp: '99999999999' is out of range (integers up to 2147"
     "483647)"},
    {"RunFlagVppEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--vpp", ""},
     {},
     "flags: --vpp: '' is not a decimal integer"},
    {"RunFlagVppFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--vpp", "3.5"},
     {},
     "flags: --vpp: '3.5' is not a decimal integer"},
    {"RunFlagNumLayersHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--num-layers", "0x10"},
     {},
     "flags: --num-layers: '0x10' is not a decimal integer"},
    {"RunFlagNumLayersOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--num-layers", "010"},
     {},
     "flags: --num-layers: '010' is not a decimal integer"},
    {"RunFlagNumLayersExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--num-layers", "1e3"},
     {},
     "flags: --num-layers: '1e3' is not a decimal integer"},
    {"RunFlagNumLayersNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--num-layers", "-5"},
     {},
     "flags: --num-layers: must be >= 1, got -5"},
    {"RunFlagNumLayersWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--num-layers", "abc"},
     {},
     "flags: --num-layers: 'abc' is not a decimal integer"},
    {"RunFlagNumLayersHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--num-layers", "99999999999"},
     {},
     "flags: --num-layers: '99999999999' is out of range (integers up "
     "to 2147483647)"},
    {"RunFlagNumLayersEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--num-layers", ""},
     {},
     "flags: --num-layers: '' is not a decimal integer"},
    {"RunFlagNumLayersFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--num-layers", "3.5"},
     {},
     "flags: --num-layers: '3.5' is not a decimal integer"},
    {"RunFlagEpOverlapHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep-overlap", "0x10"},
     {},
     "flags: --ep-overlap: '0x10' is not a decimal integer"},
    {"RunFlagEpOverlapOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep-overlap", "010"},
     {},
     "flags: --ep-overlap: '010' is not a decimal integer"},
    {"RunFlagEpOverlapExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep-overlap", "1e3"},
     {},
     "flags: --ep-overlap: '1e3' is not a decimal integer"},
    {"RunFlagEpOverlapNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep-overlap", "-5"},
     {},
     "flags: --ep-overlap: must be 0 or 1, got -5"},
    {"RunFlagEpOverlapWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep-overlap", "abc"},
     {},
     "flags: --ep-overlap: 'abc' is not a decimal integer"},
    {"RunFlagEpOverlapHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep-overlap", "99999999999"},
     {},
     "flags: --ep-overlap: '99999999999' is out of range (integers up "
     "to 2147483647)"},
    {"RunFlagEpOverlapEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep-overlap", ""},
     {},
     "flags: --ep-overlap: '' is not a decimal integer"},
    {"RunFlagEpOverlapFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep-overlap", "3.5"},
     {},
     "flags: --ep-overlap: '3.5' is not a decimal integer"},
    {"RunFlagOffloadOverlapHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--offload-overlap", "0x10"},
     {},
     "flags: --offload-overlap: '0x10' is not a decimal integer"},
    {"RunFlagOffloadOverlapOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--offload-overlap", "010"},
     {},
     "flags: --offload-overlap: '010' is not a decimal integer"},
    {"RunFlagOffloadOverlapExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--offload-overlap", "1e3"},
     {},
     "flags: --offload-overlap: '1e3' is not a decimal integer"},
    {"RunFlagOffloadOverlapNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--offload-overlap", "-5"},
     {},
     "flags: --offload-overlap: must be 0 or 1, got -5"},
    {"RunFlagOffloadOverlapWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--offload-overlap", "abc"},
     {},
     "flags: --offload-overlap: 'abc' is not a decimal integer"},
    {"RunFlagOffloadOverlapHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--offload-overlap", "99999999999"},
     {},
     "flags: --offload-overlap: '99999999999' is out of range (integer"
     "s up to 2147483647)"},
    {"RunFlagOffloadOverlapEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--offload-overlap", ""},
     {},
     "flags: --offload-overlap: '' is not a decimal integer"},
    {"RunFlagOffloadOverlapFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--offload-overlap", "3.5"},
     {},
     "flags: --offload-overlap: '3.5' is not a decimal integer"},
    {"RunFlagManualGcHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--manual-gc", "0x10"},
     {},
     "flags: --manual-gc: '0x10' is not a decimal integer"},
    {"RunFlagManualGcOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--manual-gc", "010"},
     {},
     "flags: --manual-gc: '010' is not a decimal integer"},
    {"RunFlagManualGcExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--manual-gc", "1e3"},
     {},
     "flags: --manual-gc: '1e3' is not a decimal integer"},
    {"RunFlagManualGcNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--manual-gc", "-5"},
     {},
     "flags: --manual-gc: must be 0 or 1, got -5"},
    {"RunFlagManualGcWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--manual-gc", "abc"},
     {},
     "flags: --manual-gc: 'abc' is not a decimal integer"},
    {"RunFlagManualGcHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--manual-gc", "99999999999"},
     {},
     "flags: --manual-gc: '99999999999' is out of range (integers up t"
     "o 2147483647)"},
    {"RunFlagManualGcEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--manual-gc", ""},
     {},
     "flags: --manual-gc: '' is not a decimal integer"},
    {"RunFlagManualGcFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--manual-gc", "3.5"},
     {},
     "flags: --manual-gc: '3.5' is not a decimal integer"},
    {"RunFlagBatchP2pSyncHex",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--batch-p2p-sync", "0x10"},
     {},
     "flags: --batch-p2p-sync: '0x10' is not a decimal integer"},
    {"RunFlagBatchP2pSyncOctal",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--batch-p2p-sync", "010"},
     {},
     "flags: --batch-p2p-sync: '010' is not a decimal integer"},
    {"RunFlagBatchP2pSyncExp",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--batch-p2p-sync", "1e3"},
     {},
     "flags: --batch-p2p-sync: '1e3' is not a decimal integer"},
    {"RunFlagBatchP2pSyncNeg",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--batch-p2p-sync", "-5"},
     {},
     "flags: --batch-p2p-sync: must be 0 or 1, got -5"},
    {"RunFlagBatchP2pSyncWord",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--batch-p2p-sync", "abc"},
     {},
     "flags: --batch-p2p-sync: 'abc' is not a decimal integer"},
    {"RunFlagBatchP2pSyncHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--batch-p2p-sync", "99999999999"},
     {},
     "flags: --batch-p2p-sync: '99999999999' is out of range (integers"
     " up to 2147483647)"},
    {"RunFlagBatchP2pSyncEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--batch-p2p-sync", ""},
     {},
     "flags: --batch-p2p-sync: '' is not a decimal integer"},
    {"RunFlagBatchP2pSyncFrac",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--batch-p2p-sync", "3.5"},
     {},
     "flags: --batch-p2p-sync: '3.5' is not a decimal integer"},
    {"RunFlagEpOverlapTwo",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep-overlap", "2"},
     {},
     "flags: --ep-overlap: must be 0 or 1, got 2"},
    {"RunFlagOffloadOverlapTwo",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--offload-overlap", "2"},
     {},
     "flags: --offload-overlap: must be 0 or 1, got 2"},
    {"RunFlagManualGcTwo",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--manual-gc", "3"},
     {},
     "flags: --manual-gc: must be 0 or 1, got 3"},
    {"RunFlagBatchP2pSyncTwo",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--batch-p2p-sync", "2"},
     {},
     "flags: --batch-p2p-sync: must be 0 or 1, got 2"},
    {"RunFlagTpZero",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--tp", "0"},
     {},
     "flags: --tp: must be >= 1, got 0"},
    {"RunFlagCpZero",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cp", "0"},
     {},
     "flags: --cp: must be >= 1, got 0"},
    {"RunFlagPpZero",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp", "0"},
     {},
     "flags: --pp: must be >= 1, got 0"},
    {"RunFlagVppZero",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--vpp", "0"},
     {},
     "flags: --vpp: must be >= 1, got 0"},
    {"RunFlagMbsZero",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--mbs", "0"},
     {},
     "flags: --mbs: must be >= 1, got 0"},
    {"RunFlagGbsZero",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--gbs", "0"},
     {},
     "flags: --gbs: must be >= 1, got 0"},
    {"RunFlagSeqZero",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--seq", "0"},
     {},
     "flags: --seq: must be >= 1, got 0"},
    {"RunFlagNumLayersZero",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--num-layers", "0"},
     {},
     "flags: --num-layers: must be >= 1, got 0"},
    {"RunFlagEpZero",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep", "0"},
     {},
     "flags: --ep: must be >= 1, got 0"},
    {"RunFlagEtpZero",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--etp", "0"},
     {},
     "flags: --etp: must be >= 1, got 0"},
    {"RunFlagCpuOffload1p5",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cpu-offload", "1.5"},
     {},
     "flags: --cpu-offload: must be in [0, 1] (a fraction of the optim"
     "izer state), got 1.5"},
    {"RunFlagCpuOffloadM0p1",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cpu-offload", "-0.1"},
     {},
     "flags: --cpu-offload: must be in [0, 1] (a fraction of the optim"
     "izer state), got -0.1"},
    {"RunFlagCpuOffloadNan",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cpu-offload", "nan"},
     {},
     "flags: --cpu-offload: must be in [0, 1] (a fraction of the optim"
     "izer state), got nan"},
    {"RunFlagCpuOffloadInf",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cpu-offload", "inf"},
     {},
     "flags: --cpu-offload: must be in [0, 1] (a fraction of the optim"
     "izer state), got inf"},
    {"RunFlagCpuOffloadAbc",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cpu-offload", "abc"},
     {},
     "flags: --cpu-offload: 'abc' is not a number"},
    {"RunFlagRoutingSkewM1",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--routing-skew", "-1"},
     {},
     "flags: --routing-skew: must be a Zipf exponent in [0, 10], got -"
     "1"},
    {"RunFlagRoutingSkewNan",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--routing-skew", "nan"},
     {},
     "flags: --routing-skew: must be a Zipf exponent in [0, 10], got n"
     "an"},
    {"RunFlagRoutingSkewInf",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--routing-skew", "inf"},
     {},
     "flags: --routing-skew: must be a Zipf exponent in [0, 10], got i"
     "nf"},
    {"RunFlagRoutingSkewAbc",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--routing-skew", "abc"},
     {},
     "flags: --routing-skew: 'abc' is not a number"},
    {"RunFlagPrecisionBad0",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--precision", "fp7"},
     {},
     "flags: --precision: unknown 'fp7' (bf16, fp8-cs, fp8-delayed, fp"
     "8-block, mxfp8, nvfp4)"},
    {"RunFlagPrecisionBad1",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--precision", "BF16"},
     {},
     "flags: --precision: unknown 'BF16' (bf16, fp8-cs, fp8-delayed, f"
     "p8-block, mxfp8, nvfp4)"},
    {"RunFlagDispatcherBad2",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--dispatcher", "nccl"},
     {},
     "flags: --dispatcher: unknown 'nccl' (alltoall, deepep, hybridep)"},
    {"RunFlagPipelineScheduleBad",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp", "2", "--pipeline-schedule", "zbh1"},
     {},
     "flags: --pipeline-schedule: unknown 'zbh1' (1f1b, zb-h1)"},
    {"RunFlagPipelineScheduleInterleaved",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp", "2", "--vpp", "2", "--pipeline-schedule", "zb-h1"},
     {},
     "flags: --pipeline-schedule: zb-h1 runs without interleaving; needs "
     "virtual_pipeline_model_parallel_size 1, got 2"},
    {"RunFlagRecomputeBad3",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--recompute", "bogus"},
     {},
     "flags: --recompute: unknown module 'bogus' (core_attn, mla_up_pr"
     "oj, layernorm, moe_act, mlp, moe, shared_experts;"},
    {"RunFlagRecomputeBad4",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--recompute", "full,mlp"},
     {},
     "flags: --recompute: 'full' cannot be combined with modules"},
    {"RunFlagRecomputeBad5",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--recompute", "none;mlp"},
     {},
     "flags: --recompute: 'none' cannot be combined with modules"},
    {"RunFlagCudaGraphBad6",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cuda-graph", "te:bogus"},
     {},
     "flags: --cuda-graph: unknown TE scope 'bogus' (attn, mlp, moe, m"
     "oe_router, moe_preprocess)"},
    {"RunFlagCudaGraphBad7",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cuda-graph", "always"},
     {},
     "flags: --cuda-graph: unknown 'always' (none, full_iteration, te:"
     "<scope;scope>, local:transformer_layer)"},
    {"RunFlagRoutingBad8",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--routing", "random"},
     {},
     "flags: --routing: unknown 'random' (force_balanced, dropless_nat"
     "ural, tokendrop)"},
    {"RunFlagCpCommTypeBad9",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--cp-comm-type", "ring"},
     {},
     "flags: --cp-comm-type: unknown 'ring' (p2p, a2a, allgather, a2a+"
     "p2p)"},
    {"RunFlagHierarchicalCpSizesBad10",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--hierarchical-cp-sizes", "8,x"},
     {},
     "flags: --hierarchical-cp-sizes: 'x' is not an integer (sizes lik"
     "e 8,4)"},
    {"RunFlagHierarchicalCpSizesBad11",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--hierarchical-cp-sizes", "0"},
     {},
     "flags: --hierarchical-cp-sizes: every size must be >= 1, got 0"},
    {"RunFlagNetworkBad12",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--network", "bogus"},
     {},
     "flags: --network: bogus not in {analytical,flow}"},
    {"RunFlagStragglerBad13",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--straggler", "x"},
     {},
     "flags: --straggler: needs --full (only the full mode replays eac"
     "h rank)"},
    {"RunFlagPpLayoutBad14",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp-layout", "Et|tL"},
     {},
     "flags: --pp-layout: has 2 stages but pipeline_model_parallel_siz"
     "e is 1: set it to the pipeline's ranks (VPP = stages /"},
    {"RunFlagPpLayoutBad15",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp-layout", "("},
     {},
     "flags: --pp-layout: missing ')' at position 2 of \"(\""},
    {"RunFlagPpLayoutBad16",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp-layout", "Q"},
     {},
     "flags: --pp-layout: unknown symbol 'Q' (use E, t, m, L, '|', X*n"
     " and (...)*n) at position 1 of \"Q\""},
    {"RunFlagPpLayoutBad17",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp-layout", "t*"},
     {},
     "flags: --pp-layout: '*' must be followed by a count at position "
     "3 of \"t*\""},
    {"RunFlagPpLayoutBad18",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp-layout", "t*99999999"},
     {},
     "flags: --pp-layout: repeat count too large at position 11 of \"t"
     "*99999999\""},
    {"RunFlagPpLayoutBad19",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--pp-layout",
      "(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
      "((((((((((((((((((((((((((((((((((((t)))))))))))))))))))))))))))"
      "))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))"
      ")))))))))"},
     {},
     "flags: --pp-layout: nests more than 64 groups at position 65 of"},
    {"RunFlagCalibrationBad20",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--calibration", "{d}/absent.textproto"},
     {},
     "{d}/absent.textproto: cannot read file"},
    {"RunFlagRoutingHistogramBad21",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--routing-histogram", "{d}/absent.txt"},
     {},
     "{d}/absent.txt: cannot read file"},
    {"RunFlagTraceBad22",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--trace", "/nonexistent-dir/t.json"},
     {},
     "flags: --trace: cannot write '/nonexistent-dir/t.json': no folde"
     "r '/nonexistent-dir'"},
    {"RunModelUnknown",
     {"run", "--model", "qwen9", "--system", "dgx-h100", "--gpus", "8"},
     {},
     "flags: --model: unknown model 'qwen9'; the zoo has: deepseek-v3,"
     " deepseek-v3-nomtp, gpt-oss-120b, gpt-oss-20b, kimi-k2,"},
    {"RunModelPasswd",
     {"run", "--model", "/etc/passwd", "--system", "dgx-h100", "--gpus", "8"},
     {},
     "flags: --model: /etc/passwd: a model file must end in .textproto"
     " (moesim's format) or .json (an HF config.json)"},
    {"RunModelAbsentTextproto",
     {"run", "--model", "{d}/absent.textproto", "--system", "dgx-h100",
      "--gpus", "8"},
     {},
     "flags: --model: {d}/absent.textproto: cannot read file"},
    {"RunModelAbsentJson",
     {"run", "--model", "{d}/absent/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {},
     "flags: --model: {d}/absent/config.json: cannot read file"},
    {"RunModelDir",
     {"run", "--model", "{d}", "--system", "dgx-h100", "--gpus", "8"},
     {},
     "flags: --model: {d}: a model file must end in .textproto (moesim"
     "'s format) or .json (an HF config.json)"},
    {"RunModelEmpty",
     {"run", "--model", "", "--system", "dgx-h100", "--gpus", "8"},
     {},
     "flags: --model: required"},
    {"RunSystemUnknown",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-z100", "--gpus", "8"},
     {},
     "flags: --system: unknown system 'dgx-z100'; shipped: dgx-b200, d"
     "gx-b300, dgx-h100, gb200-nvl72, gb300-nvl72, hgx-h200"},
    {"RunSystemHosts",
     {"run", "--model", "qwen3-30b-a3b", "--system", "/etc/hosts", "--gpus",
      "8"},
     {},
     "flags: --system: /etc/hosts: a system file must end in .textprot"
     "o"},
    {"RunSystemAbsent",
     {"run", "--model", "qwen3-30b-a3b", "--system", "{d}/absent.textproto",
      "--gpus", "8"},
     {},
     "flags: --system: {d}/absent.textproto: cannot read file"},
    {"RunSystemEmpty",
     {"run", "--model", "qwen3-30b-a3b", "--system", "", "--gpus", "8"},
     {},
     "flags: --system: required"},
    {"RunFullStraggler0",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--full", "--straggler", "x"},
     {},
     "flags: --straggler: must be RANK:FACTOR (e.g. 12:1.5), got 'x'"},
    {"RunFullStraggler1",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--full", "--straggler", "0:0"},
     {},
     "flags: --straggler: factor must be a number in [1, 10], got '0'"},
    {"RunFullStraggler2",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--full", "--straggler", "0:1e308"},
     {},
     "flags: --straggler: factor must be a number in [1, 10], got '1e3"
     "08'"},
    {"RunFullStraggler3",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--full", "--straggler", "-1:2"},
     {},
     "flags: --straggler: rank -1 must be a GPU rank in [0, 8)"},
    {"RunFullStraggler4",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--full", "--straggler", "99999:2"},
     {},
     "flags: --straggler: rank 99999 must be a GPU rank in [0, 8)"},
    {"RunFullStraggler5",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--full", "--straggler", "0:nan"},
     {},
     "flags: --straggler: factor must be a number in [1, 10], got 'nan"
     "'"},
    {"RunFullStraggler6",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--full", "--straggler", "0:0.5"},
     {},
     "flags: --straggler: factor must be a number in [1, 10], got '0.5"
     "'"},
    {"RunFullStraggler7",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--full", "--straggler", "a:2"},
     {},
     "flags: --straggler: must be RANK:FACTOR (e.g. 12:1.5), got 'a:2'"},
    {"RunFullStraggler8",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--full", "--straggler", "0:2,0"},
     {},
     "flags: --straggler: must be RANK:FACTOR (e.g. 12:1.5), got '0:2,"
     "0'"},
    {"RunNoGpus",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100"},
     {},
     "flags: --gpus: required"},
    {"RunNoModel",
     {"run", "--system", "dgx-h100", "--gpus", "8"},
     {},
     "flags: --model: required"},
    {"RunUnknownFlag",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--bogus"},
     {},
     "flags: The following argument was not expected: --bogus"},
    {"RunGpusNotDivisible",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "12",
      "--ep", "8"},
     {},
     "flags: --gpus: 12 GPUs are not divisible by"},
    {"RunTpNotDividingHeads",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--tp", "3"},
     {},
     "flags: --gpus: 8 GPUs are not divisible by"},
    {"RunFullFlowHuge",
     {"run", "--model", "deepseek-v3", "--system", "dgx-h100", "--gpus", "1024",
      "--full", "--network", "flow"},
     {},
     "flags: --full: full mode on the flow network: 1024 GPUs is beyon"
     "d its limit of 512 ranks (its time grows with the"},
    {"MegatronArgsUnknownValue",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--tensor-model-parallel-size x"},
     {},
     "flags: --megatron-args: --tensor-model-parallel-size: 'x' is not"
     " an integer"},
    {"MegatronArgsMtpHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--mtp-num-layers 100000"},
     {},
     "flags: --mtp-num-layers: 100000 is above the limit of 16 layers"},
    {"MegatronArgsLayoutNested",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args",
      "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layou"
      "t (((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
      "(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
      "(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
      "((((((((((t)))))))))))))))))))))))))))))))))))))))))))))))))))))"
      "))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))"
      "))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))"
      ")))))))))))))))))))"},
     {},
     "flags: --pp-layout: nests more than 64 groups at position 65 of"},
    {"MegatronArgsUnterminatedQuote",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--recompute-modules 'mlp"},
     {},
     "flags: --megatron-args: unterminated single quote"},
    {"MegatronArgsMissingValue",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--seq-length"},
     {},
     "flags: --megatron-args: --seq-length: needs a value"},
    {"MegatronArgsInterleaved5",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args",
      "--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeli"
      "ne-stage 3 --micro-batch-size 1 --global-batch-size 10"},
     {},
     "flags: --gbs: with an interleaved pipeline (virtual_pipeline_mod"
     "el_parallel_size 4), the 5 micro-batches per step"},
    {"TopoGpusZero",
     {"topo", "dgx-h100", "--gpus", "0"},
     {},
     "flags: --gpus: must be > 0, got 0"},
    {"TopoGpusNeg",
     {"topo", "dgx-h100", "--gpus", "-1"},
     {},
     "flags: --gpus: must be > 0, got -1"},
    {"TopoGpusHex",
     {"topo", "dgx-h100", "--gpus", "0x10"},
     {},
     "flags: --gpus: '0x10' is not a decimal integer"},
    {"TopoGpusPerDomainNeg",
     {"topo", "dgx-h100", "--gpus", "16", "--gpus-per-domain", "-1"},
     {},
     "flags: --gpus-per-domain: must be >= 1, got -1"},
    {"TopoTpZero",
     {"topo", "dgx-h100", "--gpus", "8", "--tp", "0"},
     {},
     "flags: --tp: must be >= 1, got 0"},
    {"TopoTpNotDividing",
     {"topo", "dgx-h100", "--gpus", "8", "--tp", "3"},
     {},
     "flags: --gpus: 8 is not divisible by tp*cp*pp = 3"},
    {"TopoRankOrderBogus",
     {"topo", "dgx-h100", "--gpus", "8", "--rank-order", "bogus"},
     {},
     "flags: --rank-order: must order tp, cp, ep, dp, pp each once (Me"
     "gatron-Core, default tp-cp-ep-dp-pp), got 'bogus'"},
    {"TopoDotUnwritable",
     {"topo", "dgx-h100", "--gpus", "8", "--dot", "/nonexistent-dir/x.dot"},
     {},
     "flags: --dot: cannot write '/nonexistent-dir/x.dot': no folder '"
     "/nonexistent-dir'"},
    {"TopoNoSystem",
     {"topo", "--gpus", "8"},
     {},
     "flags: SYSTEM: a system is required"},
    {"TopoSystemUnknown",
     {"topo", "dgx-z100", "--gpus", "8"},
     {},
     "system: unknown system 'dgx-z100'; shipped: dgx-b200, dgx-b300, "
     "dgx-h100, gb200-nvl72, gb300-nvl72, hgx-h200 (or pass a"},
    {"TopoGpusHuge",
     {"topo", "dgx-h100", "--gpus", "99999999999"},
     {},
     "flags: --gpus: '99999999999' is out of range (integers up to 214"
     "7483647)"},
    {"SweepFlagTpEmpty",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--tp", ""},
     {},
     "flags: --tp: empty: give at least one value or leave the flag ou"
     "t"},
    {"SweepFlagTpWord",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--tp", "a"},
     {},
     "flags: --tp: 'a' is not an integer or a range (values like 1,2,4"
     "; a:b doubles from a to b; a:b:s steps by s)"},
    {"SweepFlagTpZero",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--tp", "0"},
     {},
     "flags: --tp: must be >= 1, got 0"},
    {"SweepFlagTpHex",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--tp", "0x2"},
     {},
     "flags: --tp: '0x2' is not an integer or a range (values like 1,2"
     ",4; a:b doubles from a to b; a:b:s steps by s)"},
    {"SweepFlagTpNeg",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--tp", "-2"},
     {},
     "flags: --tp: must be >= 1, got -2"},
    {"SweepFlagTpTrailingComma",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--tp", "1,2,"},
     {},
     "flags: --tp: '' is not an integer or a range (values like 1,2,4;"
     " a:b doubles from a to b; a:b:s steps by s)"},
    {"SweepFlagCpuOffloadTwo",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--cpu-offload", "2"},
     {},
     "flags: --cpu-offload: must be in [0, 1] (a fraction of the optim"
     "izer state), got 2"},
    {"SweepFlagCpuOffloadNan",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--cpu-offload", "nan"},
     {},
     "flags: --cpu-offload: must be in [0, 1] (a fraction of the optim"
     "izer state), got nan"},
    {"SweepFlagEpOverlapTwo",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--ep-overlap", "2"},
     {},
     "flags: --ep-overlap: must be 0 or 1, got '2'"},
    {"SweepFlagPrecisionBogus",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--precision", "bf16,fp7"},
     {},
     "flags: --precision: unknown 'fp7' (bf16, fp8-cs, fp8-delayed, fp"
     "8-block, mxfp8, nvfp4)"},
    {"SweepFlagRecomputeBogus",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--recompute", "bogus"},
     {},
     "flags: --recompute: unknown module 'bogus' (core_attn, mla_up_pr"
     "oj, layernorm, moe_act, mlp, moe, shared_experts;"},
    {"SweepFlagConstraintNoOp",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--constraint", "tp*cp"},
     {},
     "flags: --constraint: 'tp*cp': needs a comparison (<=, <, >=, >, "
     "==, !=)"},
    {"SweepFlagConstraintUnknownTerm",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--constraint", "x <= 1"},
     {},
     "flags: --constraint: 'x <= 1': unknown term 'x' (a product of tp"
     ", cp, ep, etp, pp, vpp, dp, edp, mbs, gbs, num_gpus,"},
    {"SweepFlagConstraintNegative",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--constraint", "tp <= -1"},
     {},
     "flags: --constraint: 'tp <= -1': numbers must be >= 0, got -1"},
    {"SweepFlagConstraintDangling",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--constraint", "tp <"},
     {},
     "flags: --constraint: 'tp <': unknown term '' (a product of tp, c"
     "p, ep, etp, pp, vpp, dp, edp, mbs, gbs, num_gpus,"},
    {"SweepFlagMetricBogus",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--metric", "speed"},
     {},
     "flags: --metric: speed not in {tokens_per_sec_per_gpu,tflops_per"
     "_gpu,step_time_s}"},
    {"SweepFlagTopZero",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--top", "0"},
     {},
     "flags: --top: must be >= 1, got 0"},
    {"SweepFlagJobsNeg",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "-j", "-1"},
     {},
     "flags: --jobs: must be >= 0, got -1"},
    {"SweepFlagShardOneOfOne",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--shard", "1/1"},
     {},
     "flags: --shard: needs K/N with 0 <= K < N, e.g. 0/4, got '1/1'"},
    {"SweepFlagShardWords",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--shard", "a/b"},
     {},
     "flags: --shard: needs K/N with 0 <= K < N, e.g. 0/4, got 'a/b'"},
    {"SweepFlagShardZeroOfZero",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--shard", "0/0"},
     {},
     "flags: --shard: needs K/N with 0 <= K < N, e.g. 0/4, got '0/0'"},
    {"SweepFlagMaxGpusPerReplicaNeg",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--max-gpus-per-replica", "-1"},
     {},
     "flags: --max-gpus-per-replica: must be >= 1, got -1"},
    {"SweepFlagCsvUnwritable",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--csv", "/nonexistent-dir/x.csv"},
     {},
     "flags: --csv: cannot write '/nonexistent-dir/x.csv': no folder '"
     "/nonexistent-dir'"},
    {"SweepFlagHtmlUnwritable",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--html", "/nonexistent-dir/x.html"},
     {},
     "flags: --html: cannot write '/nonexistent-dir/x.html': no folder"
     " '/nonexistent-dir'"},
    {"SweepFlagSeqHuge",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--seq", "99999999999"},
     {},
     "flags: --seq: '99999999999' is not an integer or a range (values"
     " like 1,2,4; a:b doubles from a to b; a:b:s steps by s)"},
    {"SweepFlagTooMany",
     {"sweep",
      "--model",
      "qwen3-30b-a3b",
      "--system",
      "dgx-h100",
      "--gpus",
      "8",
      "--tp",
      "1,2,4,8",
      "--cp",
      "1,2,4,8",
      "--ep",
      "1,2,4,8",
      "--etp",
      "1,2,4,8",
      "--pp",
      "1,2,4,8",
      "--vpp",
      "1,2,4,8",
      "--mbs",
      "1,2,4,8",
      "--gbs",
      "8,16,32,64",
      "--seq",
      "4096,8192,16384,32768",
      "--recompute",
      "none",
      "--recompute",
      "full",
      "--cpu-offload",
      "0,0.5"},
     {},
     "flags: --seq: the space has 1048576 candidates (4 seq_len x 4 tp"
     " x 4 cp x 4 ep x 4 etp x 4 pp x 4 vpp x 4 mbs x 4 gbs x"},
    {"SweepSpecEmpty",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto", .content = ""}},
     "{d}/spec.textproto: base.model: required"},
    {"SweepSpecGarbage",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto", .content = "\001\002"}},
     "{d}/spec.textproto:1:1: Invalid control characters encountered i"
     "n text."},
    {"SweepSpecUnknownField",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "bogus: 1\n"}},
     "{d}/spec.textproto:2:6: Message type \"moesim.scenarios.Sweep\" "
     "has no field named \"bogus\"."},
    {"SweepSpecTpValueZero",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "tp { values: [0] }\n"}},
     "{d}/spec.textproto:2: tp: values must be >= 1, got 0"},
    {"SweepSpecRangeFromAboveTo",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "tp { from: 8 to: 1 times: 2 }\n"}},
     "{d}/spec.textproto:2: tp: a range needs 1 <= from <= to, got fro"
     "m 8 to 1"},
    {"SweepSpecRangeTimesOne",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "tp { from: 1 to: 8 times: 1 }\n"}},
     "{d}/spec.textproto:2: tp: a range needs exactly one of times >= "
     "2 or step >= 1"},
    {"SweepSpecRangeTimesAndStep",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "tp { from: 1 to: 8 times: 2 step: 1 }\n"}},
     "{d}/spec.textproto:2: tp: a range needs exactly one of times >= "
     "2 or step >= 1"},
    {"SweepSpecRangeIntMax",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "tp { from: 1 to: 2147483647 step: 1 }\n"}},
     "{d}/spec.textproto:2: tp: more than 1000000 values (the limit of"
     " a sweep)"},
    {"SweepSpecValuesMillionPlus",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "tp { from: 1 to: 1000001 step: 1 }\n"}},
     "{d}/spec.textproto:2: tp: more than 1000000 values (the limit of"
     " a sweep)"},
    {"SweepSpecBaseFilePasswd",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base_file: \"/etc/passwd\"\n"
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"}},
     "{d}/spec.textproto:1: base_file: /etc/passwd: a scenario file mu"
     "st end in .textproto"},
    {"SweepSpecBaseFileUp",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base_file: \"../../../../../../etc/shadow\"\n"
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"}},
     "{d}/spec.textproto:1: base_file: ../../../../../../etc/shadow: a"
     " scenario file must end in .textproto"},
    {"SweepSpecBaseFileAbsent",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base_file: \"absent.textproto\"\n"
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"}},
     "{d}/spec.textproto:1: base_file: {d}/absent.textproto: cannot re"
     "ad file"},
    {"SweepSpecBaseNoModel",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content = "base { system: \"dgx-h100\" num_gpus: 8 }\n"}},
     "{d}/spec.textproto:1: base.model: required"},
    {"SweepSpecBaseNoSystem",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content = "base { model: \"qwen3-30b-a3b\" num_gpus: 8 }\n"}},
     "{d}/spec.textproto:1: base.system: required"},
    {"SweepSpecBaseNoGpus",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content = "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" }\n"}},
     "{d}/spec.textproto:1: base.num_gpus: required (here or as the nu"
     "m_gpus axis)"},
    {"SweepSpecBaseModelUnknown",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen9\" system: \"dgx-h100\" num_gpus: 8 }\n"}},
     "{d}/spec.textproto:1: base.model: unknown model 'qwen9'; the zoo"
     " has: deepseek-v3, deepseek-v3-nomtp, gpt-oss-120b,"},
    {"SweepSpecBaseModelPasswd",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"/etc/passwd\" system: \"dgx-h100\" num_gpus: 8 }"
           "\n"}},
     "{d}/spec.textproto:1: base.model: /etc/passwd: a model file must"
     " end in .textproto (moesim's format) or .json (an HF"},
    {"SweepSpecBasePrecisionBogus",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " precision: \"fp7\" }\n"}},
     "{d}/spec.textproto:1: base.precision: unknown 'fp7' (bf16, fp8-c"
     "s, fp8-delayed, fp8-block, mxfp8, nvfp4)"},
    {"SweepSpecRuleUnknownTerm",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "constraints { rule: \"tp*x <= 8\" }\n"}},
     "{d}/spec.textproto:2: constraints.rule: 'tp*x <= 8': unknown ter"
     "m 'x' (a product of tp, cp, ep, etp, pp, vpp, dp, edp,"},
    {"SweepSpecRuleNoComparison",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "constraints { rule: \"tp*cp\" }\n"}},
     "{d}/spec.textproto:2: constraints.rule: 'tp*cp': needs a compari"
     "son (<=, <, >=, >, ==, !=)"},
    {"SweepSpecRuleNegative",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "constraints { rule: \"tp >= -1\" }\n"}},
     "{d}/spec.textproto:2: constraints.rule: 'tp >= -1': numbers must"
     " be >= 0, got -1"},
    {"SweepSpecRuleNumberHuge",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "constraints { rule: \"tp <= 99999999999999999999\" }\n"}},
     "{d}/spec.textproto:2: constraints.rule: 'tp <= 99999999999999999"
     "999': number 99999999999999999999 is above 2^63 - 1"},
    {"SweepSpecMaxGpusNegative",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "constraints { max_gpus_per_model_replica: -1 }\n"}},
     "{d}/spec.textproto:2: constraints.max_gpus_per_model_replica: mu"
     "st be >= 1, got -1"},
    {"SweepSpecCpuOffloadAbove",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "cpu_offload: [1.5]\n"}},
     "{d}/spec.textproto:2: cpu_offload: must be in [0, 1] (a fraction"
     " of the optimizer state), got 1.5"},
    {"SweepSpecCpuOffloadNan",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "cpu_offload: [nan]\n"}},
     "{d}/spec.textproto:2: cpu_offload: must be in [0, 1] (a fraction"
     " of the optimizer state), got nan"},
    {"SweepSpecRecomputeBogus",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "recompute: [\"bogus\"]\n"}},
     "{d}/spec.textproto:2: recompute: unknown module 'bogus' (core_at"
     "tn, mla_up_proj, layernorm, moe_act, mlp, moe,"},
    {"SweepSpecPrecisionEmptyList",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "precision: []\n"}},
     "{d}/spec.textproto:2: precision: empty list: give at least one v"
     "alue or leave it out"},
    {"SweepSpecDispatcherBogus",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "dispatcher: [\"nccl\"]\n"}},
     "{d}/spec.textproto:2: dispatcher: unknown 'nccl' (alltoall, deep"
     "ep, hybridep)"},
    {"SweepSpecCudaGraphBogus",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "cuda_graph: [\"always\"]\n"}},
     "{d}/spec.textproto:2: cuda_graph: unknown 'always' (none, full_i"
     "teration, te:<scope;scope>, local:transformer_layer)"},
    {"SweepSpecTooManyCandidates",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "tp { from: 1 to: 1000 step: 1 }\n"
           "cp { from: 1 to: 1001 step: 1 }\n"}},
     "{d}/spec.textproto:3: cp: the space has 1001000 candidates (1000"
     " tp x 1001 cp), more than the limit of 1000000; narrow"},
    {"SweepSpecDuplicateAxis",
     {"sweep", "{d}/spec.textproto"},
     {{.path = "spec.textproto",
       .content =
           "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8"
           " }\n"
           "tp { values: [1] }\n"
           "tp { values: [2] }\n"}},
     "{d}/spec.textproto:3:4: Non-repeated field \"tp\" is specified m"
     "ultiple times."},
    {"SweepMergeNotJson",
     {"sweep", "merge", "{d}/a.json"},
     {{.path = "a.json", .content = "not json"}},
     "{d}/a.json: not a sweep shard: Unexpected token."},
    {"SweepMergeFormatTwo",
     {"sweep", "merge", "{d}/a.json", "{d}/b.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 2, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 0, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"0\", \"num_gpus\": 8, \"tp\": 1, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"},
      {.path = "b.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 1, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"1\", \"num_gpus\": 8, \"tp\": 2, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"}},
     "{d}/a.json: format: expected 1, got 2"},
    {"SweepMergeNumShardsZero",
     {"sweep", "merge", "{d}/a.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 0, \"shard\": 0, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"0\", \"num_gpus\": 8, \"tp\": 1, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"}},
     "{d}/a.json: num_shards: must be in [1, total = 2], got 0"},
    {"SweepMergeNumShardsNegative",
     {"sweep", "merge", "{d}/a.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": -3, \"shard\": 0, \"seconds\": 0.1, \"candidate"
           "s\": [{\"index\": \"0\", \"num_gpus\": 8, \"tp\": 1, \"verdict\""
           ": \"oom\", \"reason\": \"x\"}]}"}},
     "{d}/a.json: num_shards: must be in [1, total = 2], got -3"},
    {"SweepMergeTotalZero",
     {"sweep", "merge", "{d}/a.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"0\","
           " \"num_shards\": 2, \"shard\": 0, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"0\", \"num_gpus\": 8, \"tp\": 1, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"}},
     "{d}/a.json: total: must be in [1, 1000000] (the limit of a sweep"
     "), got 0"},
    {"SweepMergeTotalHuge",
     {"sweep", "merge", "{d}/a.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"4000"
           "000000000\", \"num_shards\": 2, \"shard\": 0, \"seconds\": 0.1, "
           "\"candidates\": [{\"index\": \"0\", \"num_gpus\": 8, \"tp\": 1, "
           "\"verdict\": \"oom\", \"reason\": \"x\"}]}"}},
     "{d}/a.json: total: must be in [1, 1000000] (the limit of a sweep"
     "), got 4000000000000"},
    {"SweepMergeShardAboveCount",
     {"sweep", "merge", "{d}/a.json", "{d}/b.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 5, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"0\", \"num_gpus\": 8, \"tp\": 1, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"},
      {.path = "b.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 1, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"1\", \"num_gpus\": 8, \"tp\": 2, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"}},
     "{d}/a.json: shard: must be in [0, num_shards = 2), got 5"},
    {"SweepMergeShardNegative",
     {"sweep", "merge", "{d}/a.json", "{d}/b.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": -1, \"seconds\": 0.1, \"candidate"
           "s\": [{\"index\": \"0\", \"num_gpus\": 8, \"tp\": 1, \"verdict\""
           ": \"oom\", \"reason\": \"x\"}]}"},
      {.path = "b.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 1, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"1\", \"num_gpus\": 8, \"tp\": 2, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"}},
     "{d}/a.json: shard: must be in [0, num_shards = 2), got -1"},
    {"SweepMergeCandidatesMissing",
     {"sweep", "merge", "{d}/a.json", "{d}/b.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 0, \"seconds\": 0.1, \"candidates"
           "\": []}"},
      {.path = "b.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 1, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"1\", \"num_gpus\": 8, \"tp\": 2, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"}},
     "{d}/a.json: candidates: shard 0/2 of 2 candidates holds 1, the f"
     "ile has 0 (truncated or edited?)"},
    {"SweepMergeCandidatesExtra",
     {"sweep", "merge", "{d}/a.json", "{d}/b.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 0, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"0\", \"num_gpus\": 8, \"tp\": 1, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}, {\"index\": \"0\", \"num_gpus\": 8"
           ", \"tp\": 1, \"verdict\": \"oom\", \"reason\": \"x\"}]}"},
      {.path = "b.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 1, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"1\", \"num_gpus\": 8, \"tp\": 2, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"}},
     "{d}/a.json: candidates: shard 0/2 of 2 candidates holds 1, the f"
     "ile has 2 (truncated or edited?)"},
    {"SweepMergeFingerprintDiffers",
     {"sweep", "merge", "{d}/a.json", "{d}/b.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 0, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"0\", \"num_gpus\": 8, \"tp\": 1, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"},
      {.path = "b.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"0000000000000000\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 1, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"1\", \"num_gpus\": 8, \"tp\": 2, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"}},
     "{d}/b.json: fingerprint: shard of another sweep (000000000000000"
     "0, 2 candidates, 2 shards) than {d}/a.json"},
    {"SweepMergeShardTwice",
     {"sweep", "merge", "{d}/a.json", "{d}/b.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 0, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"0\", \"num_gpus\": 8, \"tp\": 1, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"},
      {.path = "b.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 0, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"0\", \"num_gpus\": 8, \"tp\": 1, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"}},
     "{d}/b.json: shard: 0/2 given twice"},
    {"SweepMergeShardMissing",
     {"sweep", "merge", "{d}/a.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 0, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"0\", \"num_gpus\": 8, \"tp\": 1, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"}},
     "sweep merge: shard 1/2 is missing"},
    // Issue 44 cause 7: a part's rows obey the rules EvaluateSweep writes
    // them by, and match the part's checksum (rows_fnv).
    {"SweepMergeRowTp999",
     {"sweep", "merge", "{d}/a.json"},
     {{.path = "a.json",
       .content = "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": "
                  "\"dgx-h100\", \"fingerprint\": \"99156382f9b8b4d7\", "
                  "\"total\": \"1\", \"num_shards\": 1, \"shard\": 0, "
                  "\"seconds\": 0.1, \"candidates\": [{\"index\": \"0\", "
                  "\"num_gpus\": 8, \"seq_len\": 4096, \"tp\": 999, \"cp\": 1, "
                  "\"ep\": 8, \"etp\": 1, \"pp\": 1, \"vpp\": 1, \"mbs\": 1, "
                  "\"gbs\": 8, \"recompute\": \"none\", \"precision\": "
                  "\"bf16\", \"dispatcher\": \"alltoall\", \"cuda_graph\": "
                  "\"none\", \"verdict\": \"ok\", \"tokens_per_sec_per_gpu\": "
                  "1000, \"tflops_per_gpu\": 300, \"step_time_s\": 1, "
                  "\"peak_memory_gib\": 50, \"margin_gib\": 29}]}"}},
     "{d}/a.json: candidates[0] (index 0): num_gpus: must be a multiple of "
     "tp*cp*pp = 999, got 8"},
    {"SweepMergeRowMetricHugeNegative",
     {"sweep", "merge", "{d}/a.json"},
     {{.path = "a.json",
       .content = "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": "
                  "\"dgx-h100\", \"fingerprint\": \"99156382f9b8b4d7\", "
                  "\"total\": \"1\", \"num_shards\": 1, \"shard\": 0, "
                  "\"seconds\": 0.1, \"candidates\": [{\"index\": \"0\", "
                  "\"num_gpus\": 8, \"seq_len\": 4096, \"tp\": 1, \"cp\": 1, "
                  "\"ep\": 8, \"etp\": 1, \"pp\": 1, \"vpp\": 1, \"mbs\": 1, "
                  "\"gbs\": 8, \"recompute\": \"none\", \"precision\": "
                  "\"bf16\", \"dispatcher\": \"alltoall\", \"cuda_graph\": "
                  "\"none\", \"verdict\": \"ok\", \"tokens_per_sec_per_gpu\": "
                  "1000, \"tflops_per_gpu\": -1e300, \"step_time_s\": 1, "
                  "\"peak_memory_gib\": 50, \"margin_gib\": 29}]}"}},
     "{d}/a.json: candidates[0] (index 0): tflops_per_gpu: must be > 0 and at "
     "most 100000 when the verdict is ok, got -1.0000000000000001e+300"},
    {"SweepMergeRowVerdictUnknown",
     {"sweep", "merge", "{d}/a.json"},
     {{.path = "a.json",
       .content = "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": "
                  "\"dgx-h100\", \"fingerprint\": \"99156382f9b8b4d7\", "
                  "\"total\": \"1\", \"num_shards\": 1, \"shard\": 0, "
                  "\"seconds\": 0.1, \"candidates\": [{\"index\": \"0\", "
                  "\"num_gpus\": 8, \"seq_len\": 4096, \"tp\": 1, \"cp\": 1, "
                  "\"ep\": 8, \"etp\": 1, \"pp\": 1, \"vpp\": 1, \"mbs\": 1, "
                  "\"gbs\": 8, \"recompute\": \"none\", \"precision\": "
                  "\"bf16\", \"dispatcher\": \"alltoall\", \"cuda_graph\": "
                  "\"none\", \"verdict\": \"great\", \"reason\": \"x\"}]}"}},
     "{d}/a.json: candidates[0] (index 0): verdict: must be ok, oom, invalid, "
     "excluded or failed, got 'great'"},
    {"SweepMergeRowOkWithReason",
     {"sweep", "merge", "{d}/a.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": "
           "\"dgx-h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": "
           "\"1\", \"num_shards\": 1, \"shard\": 0, \"seconds\": 0.1, "
           "\"candidates\": [{\"index\": \"0\", \"num_gpus\": 8, \"seq_len\": "
           "4096, \"tp\": 1, \"cp\": 1, \"ep\": 8, \"etp\": 1, \"pp\": 1, "
           "\"vpp\": 1, \"mbs\": 1, \"gbs\": 8, \"recompute\": \"none\", "
           "\"precision\": \"bf16\", \"dispatcher\": \"alltoall\", "
           "\"cuda_graph\": \"none\", \"verdict\": \"ok\", "
           "\"tokens_per_sec_per_gpu\": 1000, \"tflops_per_gpu\": 300, "
           "\"step_time_s\": 1, \"peak_memory_gib\": 50, \"margin_gib\": 29, "
           "\"reason\": \"x\"}]}"}},
     "{d}/a.json: candidates[0] (index 0): reason: must be empty when the "
     "verdict is ok"},
    {"SweepMergeRowOomThatFits",
     {"sweep", "merge", "{d}/a.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": "
           "\"dgx-h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": "
           "\"1\", \"num_shards\": 1, \"shard\": 0, \"seconds\": 0.1, "
           "\"candidates\": [{\"index\": \"0\", \"num_gpus\": 8, \"seq_len\": "
           "4096, \"tp\": 1, \"cp\": 1, \"ep\": 8, \"etp\": 1, \"pp\": 1, "
           "\"vpp\": 1, \"mbs\": 1, \"gbs\": 8, \"recompute\": \"none\", "
           "\"precision\": \"bf16\", \"dispatcher\": \"alltoall\", "
           "\"cuda_graph\": \"none\", \"verdict\": \"oom\", \"reason\": \"x\", "
           "\"peak_memory_gib\": 70, \"margin_gib\": 9.6}]}"}},
     "{d}/a.json: candidates[0] (index 0): margin_gib: must be < 0 when the "
     "verdict is oom"},
    {"SweepMergeRowsChecksumWrong",
     {"sweep", "merge", "{d}/a.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": "
           "\"dgx-h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": "
           "\"1\", \"num_shards\": 1, \"shard\": 0, \"seconds\": 0.1, "
           "\"candidates\": [{\"index\": \"0\", \"num_gpus\": 8, \"seq_len\": "
           "4096, \"tp\": 1, \"cp\": 1, \"ep\": 8, \"etp\": 1, \"pp\": 1, "
           "\"vpp\": 1, \"mbs\": 1, \"gbs\": 8, \"recompute\": \"none\", "
           "\"precision\": \"bf16\", \"dispatcher\": \"alltoall\", "
           "\"cuda_graph\": \"none\", \"verdict\": \"ok\", "
           "\"tokens_per_sec_per_gpu\": 1000, \"tflops_per_gpu\": 300, "
           "\"step_time_s\": 1, \"peak_memory_gib\": 50, \"margin_gib\": 29}], "
           "\"rows_fnv\": \"0000000000000000\"}"}},
     "{d}/a.json: rows_fnv: the rows do not match their checksum "
     "(0000000000000000; they give f0fd8c963a57e45b): edited or damaged after "
     "the shard wrote them"},
    {"SweepMergeRowsChecksumMissing",
     {"sweep", "merge", "{d}/a.json"},
     {{.path = "a.json",
       .content = "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": "
                  "\"dgx-h100\", \"fingerprint\": \"99156382f9b8b4d7\", "
                  "\"total\": \"1\", \"num_shards\": 1, \"shard\": 0, "
                  "\"seconds\": 0.1, \"candidates\": [{\"index\": \"0\", "
                  "\"num_gpus\": 8, \"seq_len\": 4096, \"tp\": 1, \"cp\": 1, "
                  "\"ep\": 8, \"etp\": 1, \"pp\": 1, \"vpp\": 1, \"mbs\": 1, "
                  "\"gbs\": 8, \"recompute\": \"none\", \"precision\": "
                  "\"bf16\", \"dispatcher\": \"alltoall\", \"cuda_graph\": "
                  "\"none\", \"verdict\": \"ok\", \"tokens_per_sec_per_gpu\": "
                  "1000, \"tflops_per_gpu\": 300, \"step_time_s\": 1, "
                  "\"peak_memory_gib\": 50, \"margin_gib\": 29}]}"}},
     "{d}/a.json: rows_fnv: missing (a part of an older moesim, or edited: run "
     "its shard again)"},
    {"SweepMergeIndexWrongShard",
     {"sweep", "merge", "{d}/a.json", "{d}/b.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 0, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"1\"}]}"},
      {.path = "b.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"2\","
           " \"num_shards\": 2, \"shard\": 1, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"1\", \"num_gpus\": 8, \"tp\": 2, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"}},
     "{d}/a.json: candidates: index 1 does not belong to shard 0"},
    {"SweepMergeTotalNotNumber",
     {"sweep", "merge", "{d}/a.json"},
     {{.path = "a.json",
       .content =
           "{\"format\": 1, \"model\": \"qwen3-30b-a3b\", \"system\": \"dgx-"
           "h100\", \"fingerprint\": \"99156382f9b8b4d7\", \"total\": \"x\","
           " \"num_shards\": 2, \"shard\": 0, \"seconds\": 0.1, \"candidates"
           "\": [{\"index\": \"0\", \"num_gpus\": 8, \"tp\": 1, \"verdict\":"
           " \"oom\", \"reason\": \"x\"}]}"}},
     "{d}/a.json: not a sweep shard: (total): invalid value \"x\" for "
     "type TYPE_INT64"},
    {"ScenarioSeqHuge",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"
                  "seq_length: 100000000\n"}},
     "{d}/s.textproto:4: seq_length: 100000000 is above the limit of 1"
     "6777216 tokens"},
    {"ScenarioMtpAboveLimit",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"
                  "mtp_num_layers: 17\n"}},
     "{d}/s.textproto:4: mtp_num_layers: 17 is above the limit of 16 l"
     "ayers"},
    {"ScenarioNumLayersAboveLimit",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"
                  "num_layers: 2000\n"}},
     "{d}/s.textproto:4: num_layers: 2000 is above the limit of 1024 l"
     "ayers"},
    {"ScenarioLayoutTpNegative",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"
                  "layout { tensor_model_parallel_size: -2 }\n"}},
     "{d}/s.textproto: layout.tensor_model_parallel_size: must be >= 1"
     ", got -2"},
    {"ScenarioLayoutGbsNotMultiple",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"
                  "layout { micro_batch_size: 1 global_batch_size: 9 }\n"}},
     "{d}/s.textproto: layout.global_batch_size: global_batch_size 9 i"
     "s not divisible by micro_batch_size*DP = 1*8 = 8"},
    {"ScenarioLayoutInterleaved5",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content =
           "model: \"qwen3-30b-a3b\"\n"
           "system: \"dgx-h100\"\n"
           "num_gpus: 8\n"
           "layout { pipeline_model_parallel_size: 4 virtual_pipeline_model_"
           "parallel_size: 4 micro_batch_size: 1 global_batch_size: 10 }\n"}},
     "{d}/s.textproto: layout.global_batch_size: with an interleaved p"
     "ipeline (virtual_pipeline_model_parallel_size 4), the 5"},
    {"ScenarioLayoutNested100",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content =
           "model: \"qwen3-30b-a3b\"\n"
           "system: \"dgx-h100\"\n"
           "num_gpus: 8\n"
           "layout { pipeline_model_parallel_size: 2 pipeline_model_parallel"
           "_layout: \"((((((((((((((((((((((((((((((((((((((((((((((((((((("
           "(((((((((((((((((((((((((((((((((((((((((((((((t))))))))))))))))"
           "))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))"
           "))))))))))))))))))))\" }\n"}},
     "{d}/s.textproto: layout.pipeline_model_parallel_layout: nests mo"
     "re than 64 groups at position 65 of"},
    {"ScenarioLayoutUnknownSymbol",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content =
           "model: \"qwen3-30b-a3b\"\n"
           "system: \"dgx-h100\"\n"
           "num_gpus: 8\n"
           "layout { pipeline_model_parallel_size: 2 pipeline_model_parallel"
           "_layout: \"Et*24|t*24Lx\" }\n"}},
     "{d}/s.textproto: layout.pipeline_model_parallel_layout: unknown "
     "symbol 'x' (use E, t, m, L, '|', X*n and (...)*n) at"},
    {"ScenarioLayoutWrongStages",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content =
           "model: \"qwen3-30b-a3b\"\n"
           "system: \"dgx-h100\"\n"
           "num_gpus: 8\n"
           "layout { pipeline_model_parallel_size: 2 pipeline_model_parallel"
           "_layout: \"Et*48L\" }\n"}},
     "{d}/s.textproto: layout.pipeline_model_parallel_layout: has 1 st"
     "ages, not a multiple of pipeline_model_parallel_size 2"},
    {"ScenarioLayoutWrongLayers",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content =
           "model: \"qwen3-30b-a3b\"\n"
           "system: \"dgx-h100\"\n"
           "num_gpus: 8\n"
           "layout { pipeline_model_parallel_size: 2 pipeline_model_parallel"
           "_layout: \"Et*24|t*23L\" }\n"}},
     "{d}/s.textproto: layout.pipeline_model_parallel_layout: places 4"
     "7 decoder layers (t), the model has 48"},
    {"ScenarioRecomputeModuleBogus",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content =
           "model: \"qwen3-30b-a3b\"\n"
           "system: \"dgx-h100\"\n"
           "num_gpus: 8\n"
           "recompute { granularity: \"selective\" modules: [\"bogus\"] }\n"}},
     "{d}/s.textproto: recompute.modules: unknown module 'bogus' (core"
     "_attn, mla_up_proj, layernorm, moe_act, mlp, moe,"},
    {"ScenarioRecomputeGranularityBogus",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"
                  "recompute { granularity: \"some\" }\n"}},
     "{d}/s.textproto: recompute.granularity: unknown 'some' (selectiv"
     "e, full, or empty for none)"},
    {"ScenarioCpCommTypeBogus",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"
                  "cp_comm_type: \"ring\"\n"}},
     "{d}/s.textproto:4: cp_comm_type: unknown 'ring' (p2p, a2a, allga"
     "ther, a2a+p2p)"},
    {"ScenarioRoutingBogus",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"
                  "routing: \"random\"\n"}},
     "{d}/s.textproto:4: routing: unknown 'random' (force_balanced, dr"
     "opless_natural, tokendrop)"},
    {"ScenarioPrecisionBogus",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"
                  "precision: \"fp7\"\n"}},
     "{d}/s.textproto:4: precision: unknown 'fp7' (bf16, fp8-cs, fp8-d"
     "elayed, fp8-block, mxfp8, nvfp4)"},
    {"ScenarioDispatcherBogus",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"
                  "dispatcher: \"nccl\"\n"}},
     "{d}/s.textproto:4: dispatcher: unknown 'nccl' (alltoall, deepep,"
     " hybridep)"},
    {"ScenarioModelNoExtension",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"/etc/passwd\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"}},
     "{d}/s.textproto:1: model: /etc/passwd: a model file must end in "
     ".textproto (moesim's format) or .json (an HF"},
    {"ScenarioModelRelativeAbsent",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"models/absent.textproto\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"}},
     "{d}/s.textproto:1: model: {d}/models/absent.textproto: cannot re"
     "ad file"},
    {"ScenarioSystemNoExtension",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"/etc/hosts\"\n"
                  "num_gpus: 8\n"}},
     "{d}/s.textproto:2: system: /etc/hosts: a system file must end in"
     " .textproto"},
    {"ScenarioNumGpusNegative",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: -8\n"}},
     "{d}/s.textproto:3: num_gpus: must be >= 1, got -8"},
    {"ScenarioStringForInt",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: \"8\"\n"}},
     "{d}/s.textproto:3:11: Expected integer, got: \"8\""},
    {"ScenarioUnterminatedString",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto", .content = "model: \"qwen3-30b-a3b\n"}},
     "{d}/s.textproto:1:22: String literals cannot cross line boundari"
     "es."},
    {"ScenarioUnclosedBrace",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"
                  "layout {\n"}},
     "{d}/s.textproto:5:1: Expected identifier, got:"},
    {"ScenarioCrInValue",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3\r30b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"}},
     "{d}/s.textproto:1: model: unknown model 'qwen3\\r30b'; the zoo h"
     "as: deepseek-v3, deepseek-v3-nomtp, gpt-oss-120b,"},
    {"ScenarioEscInValue",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3\033[31m\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"}},
     "{d}/s.textproto:1: model: unknown model 'qwen3\\x1B[31m'; the zo"
     "o has: deepseek-v3, deepseek-v3-nomtp, gpt-oss-120b,"},
    {"ScenarioCpuOffloadAbove",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"
                  "optimizer_offload_fraction: 1.5\n"}},
     "{d}/s.textproto:4: optimizer_offload_fraction: must be in [0, 1]"
     ", got 1.5"},
    {"ScenarioCapacityNegative",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"
                  "routing: \"tokendrop\"\n"
                  "moe_expert_capacity_factor: -1\n"}},
     "{d}/s.textproto:5: moe_expert_capacity_factor: must be > 0 and a"
     "t most 1e9, got -1"},
    {"ScenarioTwoLineNameCrLf",
     {"memory", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "model: \"a\\r\\nb\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"}},
     "{d}/s.textproto:1: model: unknown model 'a\\r\\nb'; the zoo has:"
     " deepseek-v3, deepseek-v3-nomtp, gpt-oss-120b,"},
    {"ScenarioSeqWithFlag",
     {"memory", "{d}/s.textproto", "--mbs", "1"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"
                  "seq_length: 100000000\n"}},
     "{d}/s.textproto:4: seq_length: 100000000 is above the limit of 1"
     "6777216 tokens"},
    {"ScenarioFlagWithFile",
     {"memory", "{d}/s.textproto", "--tp", "3"},
     {{.path = "s.textproto",
       .content = "model: \"qwen3-30b-a3b\"\n"
                  "system: \"dgx-h100\"\n"
                  "num_gpus: 8\n"}},
     "{d}/s.textproto:3: num_gpus: 8 GPUs are not divisible by"},
    {"HfRootArray",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json", .content = "[]"}},
     "flags: --model: {d}/m/config.json: malformed JSON: : Root elemen"
     "t must be a message."},
    {"HfRootNumber",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json", .content = "42"}},
     "flags: --model: {d}/m/config.json: malformed JSON: : Root elemen"
     "t must be a message."},
    {"HfEmpty",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json", .content = ""}},
     "flags: --model: {d}/m/config.json:1:1: malformed JSON: unexpecte"
     "d end of input"},
    {"HfHiddenMissing",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"hidden_size\": 2048,\n"
                   "  \"initializer_range\": 0.02,",
       .new_text = "  \"initializer_range\": 0.02,"}},
     "flags: --model: {d}/m/config.json: hidden_size: missing (require"
     "d for model_type qwen3_moe)"},
    {"HfHiddenZero",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"hidden_size\": 2048,",
       .new_text = "  \"hidden_size\": 0,"}},
     "flags: --model: {d}/m/config.json: hidden_size: must be > 0, got"
     " 0"},
    {"HfHiddenNegative",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"hidden_size\": 2048,",
       .new_text = "  \"hidden_size\": -2048,"}},
     "flags: --model: {d}/m/config.json: hidden_size: must be > 0, got"
     " -2048"},
    {"HfHiddenString",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"hidden_size\": 2048,",
       .new_text = "  \"hidden_size\": \"2048\","}},
     "flags: --model: {d}/m/config.json: hidden_size: expected an inte"
     "ger, got '2048'"},
    {"HfHiddenFraction",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"hidden_size\": 2048,",
       .new_text = "  \"hidden_size\": 2048.5,"}},
     "flags: --model: {d}/m/config.json: hidden_size: expected an inte"
     "ger, got 2048.5"},
    {"HfHiddenHuge",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"hidden_size\": 2048,",
       .new_text = "  \"hidden_size\": 1e+20,"}},
     "flags: --model: {d}/m/config.json: hidden_size: expected an inte"
     "ger, got 1e+20"},
    {"HfHeadsZero",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"num_attention_heads\": 32,",
       .new_text = "  \"num_attention_heads\": 0,"}},
     "flags: --model: {d}/m/config.json: num_attention_heads: must be "
     "> 0, got 0"},
    {"HfLayersMissing",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"num_hidden_layers\": 48,\n"
                   "  \"num_key_value_heads\": 4,",
       .new_text = "  \"num_key_value_heads\": 4,"}},
     "flags: --model: {d}/m/config.json: num_hidden_layers: missing (r"
     "equired for model_type qwen3_moe)"},
    {"HfLayersHuge",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"num_hidden_layers\": 48,",
       .new_text = "  \"num_hidden_layers\": 5000,"}},
     "flags: --model: {d}/m/config.json: num_hidden_layers: 5000 is ab"
     "ove the limit of 1024"},
    {"HfVocabZero",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"vocab_size\": 151936",
       .new_text = "  \"vocab_size\": 0"}},
     "flags: --model: {d}/m/config.json: vocab_size: must be > 0, got "
     "0"},
    {"HfExpertsZero",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"num_experts\": 128,",
       .new_text = "  \"num_experts\": 0,"}},
     "flags: --model: {d}/m/config.json: num_experts: must be >= 1, go"
     "t 0"},
    {"HfTopkAboveExperts",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"num_experts_per_tok\": 8,",
       .new_text = "  \"num_experts_per_tok\": 129,"}},
     "flags: --model: {d}/m/config.json: moe_router_topk: must not exc"
     "eed num_moe_experts (128)"},
    {"HfTopkZero",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"num_experts_per_tok\": 8,",
       .new_text = "  \"num_experts_per_tok\": 0,"}},
     "flags: --model: {d}/m/config.json: moe_router_topk: must be > 0,"
     " got 0"},
    {"HfKvHeadsAboveHeads",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"num_key_value_heads\": 4,",
       .new_text = "  \"num_key_value_heads\": 64,"}},
     "flags: --model: {d}/m/config.json: num_query_groups: must divide"
     " num_attention_heads (32)"},
    {"HfKvHeadsNotDividing",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"num_key_value_heads\": 4,",
       .new_text = "  \"num_key_value_heads\": 5,"}},
     "flags: --model: {d}/m/config.json: num_query_groups: must divide"
     " num_attention_heads (32)"},
    {"HfMlpOnlyNegative",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"mlp_only_layers\": [],",
       .new_text = "  \"mlp_only_layers\": [-1],"}},
     "flags: --model: {d}/m/config.json: mlp_only_layers: layer -1 is "
     "not in [0, 48) (num_hidden_layers)"},
    {"HfMlpOnlyString",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"mlp_only_layers\": [],",
       .new_text = "  \"mlp_only_layers\": \"0\","}},
     "flags: --model: {d}/m/config.json: mlp_only_layers: expected a l"
     "ist of integers, got '0'"},
    {"HfIntermediateZero",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"intermediate_size\": 6144,",
       .new_text = "  \"intermediate_size\": 0,"}},
     "flags: --model: {d}/m/config.json: intermediate_size: must be >="
     " 1, got 0"},
    {"HfArchitecturesUnknown",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .content = "{\n"
                  "  \"architectures\": [\"FooForCausalLM\"],\n"
                  "  \"attention_bias\": false,\n"
                  "  \"attention_dropout\": 0.0,\n"
                  "  \"bos_token_id\": 151643,\n"
                  "  \"decoder_sparse_step\": 1,\n"
                  "  \"eos_token_id\": 151645,\n"
                  "  \"head_dim\": 128,\n"
                  "  \"hidden_act\": \"silu\",\n"
                  "  \"hidden_size\": 2048,\n"
                  "  \"initializer_range\": 0.02,\n"
                  "  \"intermediate_size\": 6144,\n"
                  "  \"max_position_embeddings\": 40960,\n"
                  "  \"max_window_layers\": 48,\n"
                  "  \"mlp_only_layers\": [],\n"
                  "  \"model_type\": \"foo\",\n"
                  "  \"moe_intermediate_size\": 768,\n"
                  "  \"norm_topk_prob\": true,\n"
                  "  \"num_attention_heads\": 32,\n"
                  "  \"num_experts\": 128,\n"
                  "  \"num_experts_per_tok\": 8,\n"
                  "  \"num_hidden_layers\": 48,\n"
                  "  \"num_key_value_heads\": 4,\n"
                  "  \"output_router_logits\": false,\n"
                  "  \"rms_norm_eps\": 1e-06,\n"
                  "  \"rope_scaling\": null,\n"
                  "  \"rope_theta\": 1000000.0,\n"
                  "  \"router_aux_loss_coef\": 0.001,\n"
                  "  \"sliding_window\": null,\n"
                  "  \"tie_word_embeddings\": false,\n"
                  "  \"torch_dtype\": \"bfloat16\",\n"
                  "  \"use_cache\": true,\n"
                  "  \"use_sliding_window\": false,\n"
                  "  \"vocab_size\": 151936\n"
                  "}\n"}},
     "flags: --model: {d}/m/config.json: model_type: unsupported 'foo'"
     "; supported: deepseek_v3, kimi_k2, qwen3_moe,"},
    {"HfNanLiteral",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"hidden_size\": 2048,",
       .new_text = "  \"hidden_size\": NaN,"}},
     "flags: --model: {d}/m/config.json:10:18: malformed JSON: expecte"
     "d a value"},
    {"HfInfLiteral",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"hidden_size\": 2048,",
       .new_text = "  \"hidden_size\": Infinity,"}},
     "flags: --model: {d}/m/config.json:10:18: malformed JSON: expecte"
     "d a value"},
    {"HfComment",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "{",
       .new_text = "// config\n"
                   "{"}},
     "flags: --model: {d}/m/config.json:1:1: malformed JSON: comment ("
     "JSON has none)"},
    {"HfTrailingGarbage",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .content = "{\n"
                  "  \"architectures\": [\"Qwen3MoeForCausalLM\"],\n"
                  "  \"attention_bias\": false,\n"
                  "  \"attention_dropout\": 0.0,\n"
                  "  \"bos_token_id\": 151643,\n"
                  "  \"decoder_sparse_step\": 1,\n"
                  "  \"eos_token_id\": 151645,\n"
                  "  \"head_dim\": 128,\n"
                  "  \"hidden_act\": \"silu\",\n"
                  "  \"hidden_size\": 2048,\n"
                  "  \"initializer_range\": 0.02,\n"
                  "  \"intermediate_size\": 6144,\n"
                  "  \"max_position_embeddings\": 40960,\n"
                  "  \"max_window_layers\": 48,\n"
                  "  \"mlp_only_layers\": [],\n"
                  "  \"model_type\": \"qwen3_moe\",\n"
                  "  \"moe_intermediate_size\": 768,\n"
                  "  \"norm_topk_prob\": true,\n"
                  "  \"num_attention_heads\": 32,\n"
                  "  \"num_experts\": 128,\n"
                  "  \"num_experts_per_tok\": 8,\n"
                  "  \"num_hidden_layers\": 48,\n"
                  "  \"num_key_value_heads\": 4,\n"
                  "  \"output_router_logits\": false,\n"
                  "  \"rms_norm_eps\": 1e-06,\n"
                  "  \"rope_scaling\": null,\n"
                  "  \"rope_theta\": 1000000.0,\n"
                  "  \"router_aux_loss_coef\": 0.001,\n"
                  "  \"sliding_window\": null,\n"
                  "  \"tie_word_embeddings\": false,\n"
                  "  \"torch_dtype\": \"bfloat16\",\n"
                  "  \"use_cache\": true,\n"
                  "  \"use_sliding_window\": false,\n"
                  "  \"vocab_size\": 151936\n"
                  "}\n"
                  " x"}},
     "flags: --model: {d}/m/config.json:36:2: malformed JSON: text aft"
     "er the JSON value"},
    {"HfUnterminatedString",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json", .content = "{\"hidden_size\": \"2048"}},
     "flags: --model: {d}/m/config.json:1:22: malformed JSON: untermin"
     "ated string"},
    {"HfBadEscape",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json", .content = "{\"a\": \"\\q\"}"}},
     "flags: --model: {d}/m/config.json:1:8: malformed JSON: unknown e"
     "scape inside a string"},
    {"HfControlCharInString",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json", .content = "{\"a\": \"x\001y\"}"}},
     "flags: --model: {d}/m/config.json:1:9: malformed JSON: control c"
     "haracter inside a string"},
    {"HfNumberOverflow",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"hidden_size\": 2048,",
       .new_text = "  \"hidden_size\": 1e400,"}},
     "flags: --model: {d}/m/config.json: malformed JSON: Number exceed"
     "s the range of double."},
    {"HfLeadingZero",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"hidden_size\": 2048,",
       .new_text = "  \"hidden_size\": 02048,"}},
     "flags: --model: {d}/m/config.json:10:19: malformed JSON: number "
     "with a leading zero"},
    {"HfDeep10000",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json", .nest = 10000}},
     "flags: --model: {d}/m/config.json:1:37: malformed JSON: nested d"
     "eeper than 32 levels"},
    {"HfDuplicateKeyConflict",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"hidden_size\": 2048,",
       .new_text = "  \"hidden_size\": 2048, \"hidden_size\": 0,"}},
     "flags: --model: {d}/m/config.json:10:24: malformed JSON: key \"hidde"
     "n_size\" twice in one object"},
    {"HfHeadDimZero",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/qwen3-30b-a3b/config.json",
       .old_text = "  \"head_dim\": 128,",
       .new_text = "  \"head_dim\": 0,"}},
     "flags: --model: {d}/m/config.json: head_dim: must be >= 1, got 0"},
    {"HfLayersExponent",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .content = "{\n"
                  "  \"model_type\": \"qwen3_moe\",\n"
                  "  \n"
                  "  \"num_hidden_layers\": 1519E6\n"
                  "}"}},
     "flags: --model: {d}/m/config.json: num_hidden_layers: 1519000000"
     " is above the limit of 1024"},
    {"HfDeepseekMtpHuge",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/deepseek-v3/config.json",
       .old_text = "  \"num_nextn_predict_layers\": 1,",
       .new_text = "  \"num_nextn_predict_layers\": 100000,"}},
     "flags: --model: {d}/m/config.json: mtp_num_layers: 100000 is abo"
     "ve the limit of 16"},
    {"HfDeepseekExpertsZero",
     {"memory", "--model", "{d}/m/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     {{.path = "m/config.json",
       .copy_of = "tests/data/hf/deepseek-v3/config.json",
       .old_text = "  \"n_routed_experts\": 256,",
       .new_text = "  \"n_routed_experts\": 0,"}},
     "flags: --model: {d}/m/config.json: n_routed_experts: must be >= "
     "1, got 0"},
    {"RunsMissingConfidence",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,notes"
           "\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,,,,,,,,\n"}},
     "{d}/runs.csv:1: missing column 'confidence'"},
    {"RunsMissingTp",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,cp,ep,etp,pp,vpp,cp_comm_t"
           "ype,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_off"
           "load,routing,mtp_layers,pp_layout,extra,measured_tflops_per_gpu,"
           "measured_tokens_per_sec_per_gpu,measured_step_time_s,measured_pe"
           "ak_mem_gib,flops_formula,container,source,recipe_source,confiden"
           "ce,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,8,1,1,,,bf16,alltoall,full,no"
           "ne,0,0,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:1: missing column 'tp'"},
    {"RunsCpuOffloadAbove",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,1.5,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: cpu_offload: must be in [0, 1] (a fraction of th"
     "e optimizer state), got 1.5"},
    {"RunsCpuOffloadNegative",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,-0.5,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: cpu_offload: must be in [0, 1] (a fraction of th"
     "e optimizer state), got -0.5"},
    {"RunsEpOverlapTwo",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,2,0,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: ep_overlap: must be 0 or 1, got 2"},
    {"RunsConfidenceBogus",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,,,,,,,,certain,\n"}},
     "{d}/runs.csv:2: confidence: unknown 'certain' (high, medium, low"
     ")"},
    {"RunsConfidenceEmpty",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,,,,,,,,,\n"}},
     "{d}/runs.csv:2: confidence: unknown '' (high, medium, low)"},
    {"RunsRecomputeBogus",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,bogus"
           ",none,0,0,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: recompute: unknown module 'bogus' (core_attn, ml"
     "a_up_proj, layernorm, moe_act, mlp, moe,"},
    {"RunsRoutingBogus",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,random,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: routing: unknown 'random' (force_balanced, dropl"
     "ess_natural, tokendrop)"},
    {"RunsPrecisionBogus",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,fp7,alltoall,full,n"
           "one,0,0,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: precision: unknown 'fp7' (bf16, fp8-cs, fp8-dela"
     "yed, fp8-block, mxfp8, nvfp4)"},
    {"RunsDispatcherBogus",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,nccl,full,none"
           ",0,0,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: dispatcher: unknown 'nccl' (alltoall, deepep, hy"
     "bridep)"},
    {"RunsCudaGraphBogus",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "always,0,0,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: cuda_graph: unknown 'always' (none, full_iterati"
     "on, te:<scope;scope>, local:transformer_layer)"},
    {"RunsCapacityNan",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,capacity_factor=nan,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: extra capacity_factor: 'nan' is not a number"},
    {"RunsCapacityZero",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,capacity_factor=0,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: extra capacity_factor: must be > 0, got '0'"},
    {"RunsCapacityWord",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,capacity_factor=big,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: extra capacity_factor: 'big' is not a number"},
    {"RunsTflopsHuge",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,1e308,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: measured_tflops_per_gpu: must be > 0 and at most"
     " 100000 TFLOPS per GPU, got 1e308"},
    {"RunsStepTimeNegative",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,,-1,,,,,,high,\n"}},
     "{d}/runs.csv:2: measured_step_time_s: must be > 0 and at most 1e"
     "+06 seconds per step, got -1"},
    {"RunsMemoryHuge",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,,,1e9,,,,,high,\n"}},
     "{d}/runs.csv:2: measured_peak_mem_gib: must be > 0 and at most 1"
     "0000 GiB per GPU, got 1e9"},
    {"RunsTokensZero",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,0,,,,,,,high,\n"}},
     "{d}/runs.csv:2: measured_tokens_per_sec_per_gpu: must be > 0 and"
     " at most 1e+09 tokens per second per GPU, got 0"},
    {"RunsIdEmpty",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           ",qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,no"
           "ne,0,0,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: id: is empty"},
    {"RunsModelUnknown",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen9,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,none,0,0"
           ",force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: model: unknown model 'qwen9'"},
    {"RunsGpuUnknown",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,z100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: gpu: unknown GPU 'z100' (h100, h200, b200, b300,"
     " gb200, gb300)"},
    {"RunsGpusFraction",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,1.5,4096,1,8,1,1,8,1,1,,,bf16,alltoall,ful"
           "l,none,0,0,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: num_gpus: '1.5' is not a whole number"},
    {"RunsTpNegative",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,-1,1,8,1,1,,,bf16,alltoall,full"
           ",none,0,0,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: tp: '-1' is not a whole number"},
    {"RunsSeqWord",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,abc,1,8,1,1,8,1,1,,,bf16,alltoall,full,n"
           "one,0,0,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: seq_len: 'abc' is not a number"},
    {"RunsMtpWord",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,x,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: mtp_layers: 'x' is not a number"},
    {"RunsFlopsFormulaBogus",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,,,,bogus,,,,high,\n"}},
     "{d}/runs.csv:2: flops_formula: unknown 'bogus' (megatron-bridge,"
     " nemo-2024)"},
    {"RunsCpCommTypeBogus",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,ring,bf16,alltoall,f"
           "ull,none,0,0,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: cp_comm_type: unknown 'ring' (p2p, a2a, allgathe"
     "r, a2a+p2p)"},
    {"RunsTflopsInf",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,inf,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: measured_tflops_per_gpu: 'inf' is not a number"},
    {"RunsGbsHex",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,0x10,1,1,8,1,1,,,bf16,alltoall,fu"
           "ll,none,0,0,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:2: gbs: '0x10' is not a number"},
    {"RunsIdDuplicate",
     {"validate", "{d}/runs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,,,,,,,,high,\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,,,,,,,,high,\n"}},
     "{d}/runs.csv:3: id: 'r1' duplicates line 2"},
    {"NcclTimeZero",
     {"calibrate", "import-nccl-tests", "{d}/all_reduce_perf.log", "--system",
      "dgx-h100", "--tier", "nvlink"},
     {{.path = "all_reduce_perf.log",
       .copy_of = "tests/calibration/testdata/all_reduce_perf_8xh100.log",
       .old_text =
           "           8             2     float     sum      -1    11.02   "
           " 0.00    0.00       0    10.71    0.00    0.00       0",
       .new_text =
           "8   2   float   sum   -1   0.00   0.00   0.00   0   10.71   0.00"
           "   0.00   0"}},
     "{d}/all_reduce_perf.log:19: time (out-of-place) '0.00': must be "
     "> 0 for a message of 8 bytes"},
    // Issue 44 cause 8: rows that contradict themselves.
    {"NcclFloatSizeNotWhole",
     {"calibrate", "import-nccl-tests", "{d}/all_reduce_perf.log", "--system",
      "dgx-h100", "--tier", "nvlink"},
     {{.path = "all_reduce_perf.log",
       .copy_of = "tests/calibration/testdata/all_reduce_perf_8xh100.log",
       .old_text =
           "    16777216       4194304     float     sum      -1    118.6  "
           "141.46  247.56       0    117.9  142.30  249.03       0",
       .new_text =
           "    16777218       4194304     float     sum      -1    118.6  "
           "141.46  247.56       0    117.9  142.30  249.03       0"}},
     "{d}/all_reduce_perf.log:26: size 16777218: not a whole number of float "
     "elements (4 bytes each): a corrupt row?"},
    {"NcclAlgbwNotSizeOverTime",
     {"calibrate", "import-nccl-tests", "{d}/all_reduce_perf.log", "--system",
      "dgx-h100", "--tier", "nvlink"},
     {{.path = "all_reduce_perf.log",
       .copy_of = "tests/calibration/testdata/all_reduce_perf_8xh100.log",
       .old_text =
           "    16777216       4194304     float     sum      -1    118.6  "
           "141.46  247.56       0    117.9  142.30  249.03       0",
       .new_text =
           "    16777216       4194304     float     sum      -1    118.6  "
           "41.46  247.56       0    117.9  142.30  249.03       0"}},
     "{d}/all_reduce_perf.log:26: algbw (out-of-place) 41.46: disagrees with "
     "size / time = 16777216 B / 118.6 us = 141.46"},
    {"NcclBusbwHuge",
     {"calibrate", "import-nccl-tests", "{d}/all_reduce_perf.log", "--system",
      "dgx-h100", "--tier", "nvlink"},
     {{.path = "all_reduce_perf.log",
       .copy_of = "tests/calibration/testdata/all_reduce_perf_8xh100.log",
       .old_text =
           "           8             2     float     sum      -1    11.02   "
           " 0.00    0.00       0    10.71    0.00    0.00       0",
       .new_text =
           "8   2   float   sum   -1   11.02   0.00   1e308   0   10.71   0."
           "00   0.00   0"}},
     "{d}/all_reduce_perf.log:19: busbw (out-of-place) '1e308': above "
     "100000 GB/s, 100x any NVLink; a corrupt log?"},
    {"NcclSizeNegative",
     {"calibrate", "import-nccl-tests", "{d}/all_reduce_perf.log", "--system",
      "dgx-h100", "--tier", "nvlink"},
     {{.path = "all_reduce_perf.log",
       .copy_of = "tests/calibration/testdata/all_reduce_perf_8xh100.log",
       .old_text =
           "           8             2     float     sum      -1    11.02   "
           " 0.00    0.00       0    10.71    0.00    0.00       0",
       .new_text =
           "-8   2   float   sum   -1   11.02   0.00   0.00   0   10.71   0."
           "00   0.00   0"}},
     "{d}/all_reduce_perf.log:19: size '-8': must be a whole number of"
     " bytes (at most 2^53)"},
    {"NcclTimeNan",
     {"calibrate", "import-nccl-tests", "{d}/all_reduce_perf.log", "--system",
      "dgx-h100", "--tier", "nvlink"},
     {{.path = "all_reduce_perf.log",
       .copy_of = "tests/calibration/testdata/all_reduce_perf_8xh100.log",
       .old_text =
           "           8             2     float     sum      -1    11.02   "
           " 0.00    0.00       0    10.71    0.00    0.00       0",
       .new_text =
           "8   2   float   sum   -1   nan   0.00   0.00   0   10.71   0.00 "
           "  0.00   0"}},
     "{d}/all_reduce_perf.log:19: time (out-of-place) 'nan': must be a"
     " number >= 0 (not NaN)"},
    {"NcclOnlySizeZero",
     {"calibrate", "import-nccl-tests", "{d}/all_reduce_perf.log", "--system",
      "dgx-h100", "--tier", "nvlink"},
     {{.path = "all_reduce_perf.log",
       .content =
           "+ date\n"
           "Thu Mar 13 10:41:07 UTC 2025\n"
           "+ NCCL_DEBUG=WARN /opt/nccl-tests/build/all_reduce_perf -b 8 -e "
           "8G -f 8 -g 8\n"
           "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 8(facto"
           "r) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0"
           "\n"
           "#\n"
           "# Using devices\n"
           "#  Rank  0 Group  0 Pid 412877 on h100-node-07 device  0 [0x18] "
           "NVIDIA H100 80GB HBM3\n"
           "#  Rank  1 Group  0 Pid 412877 on h100-node-07 device  1 [0x2a] "
           "NVIDIA H100 80GB HBM3\n"
           "#  Rank  2 Group  0 Pid 412877 on h100-node-07 device  2 [0x3a] "
           "NVIDIA H100 80GB HBM3\n"
           "#  Rank  3 Group  0 Pid 412877 on h100-node-07 device  3 [0x5d] "
           "NVIDIA H100 80GB HBM3\n"
           "#  Rank  4 Group  0 Pid 412877 on h100-node-07 device  4 [0x9a] "
           "NVIDIA H100 80GB HBM3\n"
           "#  Rank  5 Group  0 Pid 412877 on h100-node-07 device  5 [0xab] "
           "NVIDIA H100 80GB HBM3\n"
           "#  Rank  6 Group  0 Pid 412877 on h100-node-07 device  6 [0xba] "
           "NVIDIA H100 80GB HBM3\n"
           "#  Rank  7 Group  0 Pid 412877 on h100-node-07 device  7 [0xdb] "
           "NVIDIA H100 80GB HBM3\n"
           "#\n"
           "#                                                              o"
           "ut-of-place                       in-place          \n"
           "#       size         count      type   redop    root     time   "
           "algbw   busbw #wrong     time   algbw   busbw #wrong\n"
           "#        (B)    (elements)                               (us)  ("
           "GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"
           "0   2   float   sum   -1   11.02   0.00   0.00   0   10.71   0.0"
           "0   0.00   0\n"
           "# Out of bounds values : 0 OK\n"
           "# Avg bus bandwidth    : 150.047 \n"
           "#\n"}},
     "{d}/all_reduce_perf.log:17: every data row has size 0 (1 rows): "
     "nothing moved, nothing to calibrate; run with a larger"},
    {"NcclTierBogus",
     {"calibrate", "import-nccl-tests", "{d}/all_reduce_perf.log", "--system",
      "dgx-h100", "--tier", "pcie"},
     {{.path = "all_reduce_perf.log",
       .copy_of = "tests/calibration/testdata/all_reduce_perf_8xh100.log"}},
     "flags: --tier: must be nvlink or net, got 'pcie'"},
    {"NcclOutUnwritable",
     {"calibrate", "import-nccl-tests", "{d}/all_reduce_perf.log", "--system",
      "dgx-h100", "--out", "/nonexistent-dir/c.csv", "--tier", "nvlink"},
     {{.path = "all_reduce_perf.log",
       .copy_of = "tests/calibration/testdata/all_reduce_perf_8xh100.log"}},
     "flags: --out: cannot write '/nonexistent-dir/c.csv': no folder '"
     "/nonexistent-dir'"},
    {"NcclOutIsInput",
     {"calibrate", "import-nccl-tests", "{d}/all_reduce_perf.log", "--system",
      "dgx-h100", "--out", "{d}/all_reduce_perf.log", "--tier", "nvlink"},
     {{.path = "all_reduce_perf.log",
       .copy_of = "tests/calibration/testdata/all_reduce_perf_8xh100.log"}},
     "flags: --out: '{d}/all_reduce_perf.log' is the input file read a"
     "s '{d}/all_reduce_perf.log'; writing it would destroy"},
    {"NcclSystemUnknown",
     {"calibrate", "import-nccl-tests", "{d}/all_reduce_perf.log", "--system",
      "dgx-z100", "--tier", "nvlink"},
     {{.path = "all_reduce_perf.log",
       .copy_of = "tests/calibration/testdata/all_reduce_perf_8xh100.log"}},
     "system: unknown system 'dgx-z100'; shipped: dgx-b200, dgx-b300, "
     "dgx-h100, gb200-nvl72, gb300-nvl72, hgx-h200 (or pass a"},
    {"FitFoldsZero",
     {"calibrate", "fit", "--out", "{d}/p.textproto", "--folds", "0"},
     {},
     "flags: --folds: must be in [2, 100], got 0"},
    {"FitFoldsNeg",
     {"calibrate", "fit", "--out", "{d}/p.textproto", "--folds", "-2"},
     {},
     "flags: --folds: must be in [2, 100], got -2"},
    {"FitLossBogus",
     {"calibrate", "fit", "--out", "{d}/p.textproto", "--loss", "l3"},
     {},
     "flags: --loss: l3 not in {squared,soft_l1}"},
    {"FitConfidenceBogus",
     {"calibrate", "fit", "--out", "{d}/p.textproto", "--confidence",
      "certain"},
     {},
     "flags: --confidence: unknown level 'certain' (high, medium, low)"},
    {"FitFactorsBogus",
     {"calibrate", "fit", "--out", "{d}/p.textproto", "--factors", "bogus"},
     {},
     "flags: --factors: unknown factor 'bogus' (gemm_efficiency, group"
     "ed_gemm_efficiency, attention_efficiency,"},
    {"FitMaxEvaluationsNeg",
     {"calibrate", "fit", "--out", "{d}/p.textproto", "--max-evaluations",
      "-1"},
     {},
     "flags: --max-evaluations: must be in [2, 1000], got -1"},
    {"FitRunsAbsent",
     {"calibrate", "fit", "--out", "{d}/p.textproto", "--runs",
      "{d}/absent.csv"},
     {},
     "flags: --runs: {d}/absent.csv: cannot read file"},
    {"FitJobsHex",
     {"calibrate", "fit", "--out", "{d}/p.textproto", "-j", "0x4"},
     {},
     "flags: --jobs: must be >= 0, got 0x4"},
    {"FitOutUnwritable",
     {"calibrate", "fit", "--out", "/nonexistent-dir/p.textproto"},
     {},
     "flags: --out: cannot write '/nonexistent-dir/p.textproto': no fo"
     "lder '/nonexistent-dir'"},
    {"ValidateMinAboveMax",
     {"validate", "--min-seq-len", "8192", "--max-seq-len", "4096"},
     {},
     "flags: --min-seq-len: 8192 is above --max-seq-len 4096: no run c"
     "ould be selected"},
    {"ValidateGroupByBogus",
     {"validate", "--group-by", "colour"},
     {},
     "flags: --group-by: unknown key 'colour' (model, gpu, precision, "
     "confidence, container, cuda_graph, seq_len, cp,"},
    {"ValidatePairsAbsent",
     {"validate", "--pairs", "{d}/absent.csv"},
     {},
     "flags: --pairs: {d}/absent.csv: cannot read file"},
    {"ValidateCalibrationAbsent",
     {"validate", "--calibration", "{d}/absent.textproto"},
     {},
     "{d}/absent.textproto: cannot read file"},
    {"ValidateJobsNeg",
     {"validate", "-j", "-1"},
     {},
     "flags: --jobs: must be >= 0, got -1"},
    {"ValidateMinSeqHex",
     {"validate", "--min-seq-len", "0x10"},
     {},
     "flags: --min-seq-len: must be >= 0, got 0x10"},
    {"ValidateRunsAbsent",
     {"validate", "{d}/absent.csv"},
     {},
     "flags: RUNS: {d}/absent.csv: cannot read file"},
    {"ValidateRunsDir",
     {"validate", "{d}"},
     {},
     "flags: RUNS: {d}: cannot read file: is a folder"},
    {"KernelsGpuBogus",
     {"validate-kernels", "--gpu", "z100"},
     {},
     "flags: --gpu: unknown GPU 'z100' (known: h100, h200, b200, b300,"
     " gb200, gb300)"},
    {"KernelsTablesAbsent",
     {"validate-kernels", "--gpu", "h100", "--tables", "{d}/absent"},
     {},
     "{d}/absent: not a folder of calibration tables"},
    {"AdviseMaxStepsHex",
     {"advise", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--max-steps", "0x3"},
     {},
     "flags: --max-steps: must be in [0, 1000000], got 0x3"},
    {"AdviseMaxCandidatesNeg",
     {"advise", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--max-candidates", "-1"},
     {},
     "flags: --max-candidates: must be in [0, 1000000], got -1"},
    {"AdviseTpThree",
     {"advise", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--tp", "3"},
     {},
     "flags: --gpus: 8 GPUs are not divisible by"},
    {"PairsAMeasuredZero",
     {"validate", "{d}/runs.csv", "--pairs", "{d}/pairs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,,,,,,,,high,\n"},
      {.path = "pairs.csv",
       .content =
           "pair_id,knob,a_id,b_id,a_value,b_value,metric,a_measured,b_measu"
           "red,source,notes\n"
           "p1,tp,r1,r2,1,2,step_time_s,0,2,x,y\n"}},
     "{d}/pairs.csv:2: a_measured: must be > 0, got 0"},
    {"PairsBMeasuredNegative",
     {"validate", "{d}/runs.csv", "--pairs", "{d}/pairs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,,,,,,,,high,\n"},
      {.path = "pairs.csv",
       .content =
           "pair_id,knob,a_id,b_id,a_value,b_value,metric,a_measured,b_measu"
           "red,source,notes\n"
           "p1,tp,r1,r2,1,2,step_time_s,1,-2,x,y\n"}},
     "{d}/pairs.csv:2: b_measured: must be > 0, got -2"},
    {"PairsAMeasuredNan",
     {"validate", "{d}/runs.csv", "--pairs", "{d}/pairs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,,,,,,,,high,\n"},
      {.path = "pairs.csv",
       .content =
           "pair_id,knob,a_id,b_id,a_value,b_value,metric,a_measured,b_measu"
           "red,source,notes\n"
           "p1,tp,r1,r2,1,2,step_time_s,nan,2,x,y\n"}},
     "{d}/pairs.csv:2: a_measured: 'nan' is not a number"},
    {"PairsBMeasuredWord",
     {"validate", "{d}/runs.csv", "--pairs", "{d}/pairs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,,,,,,,,high,\n"},
      {.path = "pairs.csv",
       .content =
           "pair_id,knob,a_id,b_id,a_value,b_value,metric,a_measured,b_measu"
           "red,source,notes\n"
           "p1,tp,r1,r2,1,2,step_time_s,1,fast,x,y\n"}},
     "{d}/pairs.csv:2: b_measured: 'fast' is not a number"},
    {"PairsMissingColumn",
     {"validate", "{d}/runs.csv", "--pairs", "{d}/pairs.csv", "-j1"},
     {{.path = "runs.csv",
       .content =
           "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,cp_com"
           "m_type,precision,dispatcher,recompute,cuda_graph,ep_overlap,cpu_"
           "offload,routing,mtp_layers,pp_layout,extra,measured_tflops_per_g"
           "pu,measured_tokens_per_sec_per_gpu,measured_step_time_s,measured"
           "_peak_mem_gib,flops_formula,container,source,recipe_source,confi"
           "dence,notes\n"
           "r1,qwen3-30b-a3b,h100,8,4096,1,8,1,1,8,1,1,,,bf16,alltoall,full,"
           "none,0,0,force_balanced,,,,200,,,,,,,,high,\n"},
      {.path = "pairs.csv",
       .content = "pair_id,knob,a_id\n"
                  "p1,tp,r1\n"}},
     "{d}/pairs.csv:1: missing column 'b_id'"},
    {"RunTraceTooLarge",
     {"run", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--gbs", "131072", "--trace", "{d}/t.json"},
     {},
     "flags: --trace: about 1.4 GB of Chrome JSON is beyond its limit "
     "of 1 GB, which Perfetto cannot load either; trace fewer"},
    {"RunFullFlowBeyond512",
     {"run", "--model", "deepseek-v3", "--system", "dgx-h100", "--gpus", "1024",
      "--full", "--network", "flow"},
     {},
     "flags: --full: full mode on the flow network: 1024 GPUs is beyon"
     "d its limit of 512 ranks (its time grows with the"},
    {"RunFullBeyondRanks",
     {"run", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "32768",
      "--full"},
     {},
     "flags: --full: 32768 GPUs is beyond full mode's limit of 16384 r"
     "anks (each rank is replayed; drop --full for the"},
    {"RunTraceIntoFolder",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--trace", "{d}"},
     {},
     "flags: --trace: cannot write '{d}': it is a folder"},
    {"SweepCsvIntoFolder",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--csv", "{d}"},
     {},
     "flags: --csv: cannot write '{d}': it is a folder"},
    {"SweepHtmlSameAsCsv",
     {"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--csv", "{d}/o.csv", "--html", "{d}/o.csv"},
     {},
     "flags: --html: '{d}/o.csv' is also the --csv output; choose anot"
     "her path"},
    {"TopoDotIntoFolder",
     {"topo", "dgx-h100", "--gpus", "8", "--dot", "{d}"},
     {},
     "flags: --dot: cannot write '{d}': it is a folder"},  // Issue 44 causes 1,
                                                           // 5 and 6: a system
                                                           // or model file's
                                                           // numbers (zero,
    // tiny, huge, negative, NaN or infinite) stop at load with the field and
    // its rule (util::CheckNumericRanges and the files' own rules), where
    // they used to abort in sim/ or change the prediction in silence.
    {"SystemFp8PeakZeroRunInFp8",
     {"run", "--model", "qwen3-30b-a3b", "--system", "{d}/s.textproto",
      "--gpus", "8", "--precision", "fp8-cs"},
     {{.path = "s.textproto",
       .copy_of = "topology/systems/dgx-h100.textproto",
       .old_text = "fp8_dense_tflops: 1979",
       .new_text = "fp8_dense_tflops: 0"}},
     "flags: --precision: fp8-cs needs FP8 tensor cores; system dgx-h100 has "
     "gpu.fp8_dense_tflops 0"},
    {"SystemBf16PeakTiny",
     {"run", "--model", "qwen3-30b-a3b", "--system", "{d}/s.textproto",
      "--gpus", "8"},
     {{.path = "s.textproto",
       .copy_of = "topology/systems/dgx-h100.textproto",
       .old_text = "bf16_dense_tflops: 989",
       .new_text = "bf16_dense_tflops: 1e-300"}},
     "flags: --system: {d}/s.textproto: gpu.bf16_dense_tflops: must be 0 "
     "(none) or >= 1 TFLOPS"},
    {"SystemHbmZero",
     {"run", "--model", "qwen3-30b-a3b", "--system", "{d}/s.textproto",
      "--gpus", "8"},
     {{.path = "s.textproto",
       .copy_of = "topology/systems/dgx-h100.textproto",
       .old_text = "hbm_tbps: 3.35",
       .new_text = "hbm_tbps: 0"}},
     "flags: --system: {d}/s.textproto: gpu.hbm_tbps: must be >= 0.1 TB/s"},
    {"SystemHbmNan",
     {"run", "--model", "qwen3-30b-a3b", "--system", "{d}/s.textproto",
      "--gpus", "8"},
     {{.path = "s.textproto",
       .copy_of = "topology/systems/dgx-h100.textproto",
       .old_text = "hbm_tbps: 3.35",
       .new_text = "hbm_tbps: nan"}},
     "flags: --system: {d}/s.textproto: gpu.hbm_tbps: must be >= 0.1 TB/s"},
    {"SystemSmCountNegative",
     {"run", "--model", "qwen3-30b-a3b", "--system", "{d}/s.textproto",
      "--gpus", "8"},
     {{.path = "s.textproto",
       .copy_of = "topology/systems/dgx-h100.textproto",
       .old_text = "sm_count: 132",
       .new_text = "sm_count: -132"}},
     "flags: --system: {d}/s.textproto: gpu.sm_count: must be > 0"},
    {"SystemNicInfinite",
     {"run", "--model", "qwen3-30b-a3b", "--system", "{d}/s.textproto",
      "--gpus", "8"},
     {{.path = "s.textproto",
       .copy_of = "topology/systems/dgx-h100.textproto",
       .old_text = "gbit_s: 400",
       .new_text = "gbit_s: inf"}},
     "flags: --system: {d}/s.textproto: nic.gbit_s: must be finite and >= 1 "
     "Gb/s"},
    {"SystemNvlinkHuge",
     {"run", "--model", "qwen3-30b-a3b", "--system", "{d}/s.textproto",
      "--gpus", "8"},
     {{.path = "s.textproto",
       .copy_of = "topology/systems/dgx-h100.textproto",
       .old_text = "link_gb_s: 25 ",
       .new_text = "link_gb_s: 1e300 "}},
     "flags: --system: {d}/s.textproto:30: nvlink.link_gb_s: must be finite, "
     ">= 0 and <= 1000000000, got 1.0000000000000001e+300"},
    {"ScenarioArchitectureNegative",
     {"run", "{d}/s.textproto"},
     {{.path = "s.textproto",
       .content = "system: \"dgx-h100\"\nnum_gpus: 8\nseq_length: 4096\n"
                  "num_layers: 4\narchitecture { hidden_size: 1024 "
                  "num_attention_heads: 8 vocab_size: 32000 num_moe_experts: "
                  "8 moe_router_topk: 2 moe_ffn_hidden_size: 512 "
                  "moe_shared_expert_intermediate_size: -768 }\n"}},
     "{d}/s.textproto: architecture.moe_shared_expert_intermediate_size: "
     "must be finite, >= 0 and <= 2147483648, got -768"},
    {"ModelVocabDivisorHuge",
     {"run", "--model", "{d}/m.textproto", "--system", "dgx-h100", "--gpus",
      "64", "--ep", "8", "--pp", "4"},
     {{.path = "m.textproto",
       .copy_of = "models/zoo/deepseek-v3.textproto",
       .old_text = "make_vocab_size_divisible_by: 1280",
       .new_text = "make_vocab_size_divisible_by: 9223372036854775807"}},
     "flags: --model: {d}/m.textproto:14: make_vocab_size_divisible_by: must "
     "be finite, >= 0 and <= 2147483648, got 9223372036854775807"},
    {"ModelVocabDivisorNegative",
     {"run", "--model", "{d}/m.textproto", "--system", "dgx-h100", "--gpus",
      "64", "--ep", "8", "--pp", "4"},
     {{.path = "m.textproto",
       .copy_of = "models/zoo/deepseek-v3.textproto",
       .old_text = "make_vocab_size_divisible_by: 1280",
       .new_text = "make_vocab_size_divisible_by: -128"}},
     "flags: --model: {d}/m.textproto:14: make_vocab_size_divisible_by: must "
     "be finite, >= 0 and <= 2147483648, got -128"},
    {"ModelSharedExpertNegative",
     {"run", "--model", "{d}/m.textproto", "--system", "dgx-h100", "--gpus",
      "64", "--ep", "8", "--pp", "4"},
     {{.path = "m.textproto",
       .copy_of = "models/zoo/deepseek-v3.textproto",
       .old_text = "moe_shared_expert_intermediate_size: 2048",
       .new_text = "moe_shared_expert_intermediate_size: -768"}},
     "flags: --model: {d}/m.textproto:31: moe_shared_expert_intermediate_size: "
     "must be finite, >= 0 and <= 2147483648, got -768"},
    {"ModelYarnMscaleInfinite",
     {"run", "--model", "{d}/m.textproto", "--system", "dgx-h100", "--gpus",
      "64", "--ep", "8", "--pp", "4"},
     {{.path = "m.textproto",
       .copy_of = "models/zoo/deepseek-v3.textproto",
       .old_text = "yarn_mscale: 1\n",
       .new_text = "yarn_mscale: inf\n"}},
     "flags: --model: {d}/m.textproto:21: yarn_mscale: must be finite, >= 0 "
     "and <= 2147483648, got inf"},
    {"ModelWindowSkipNegative",
     {"run", "--model", "{d}/m.textproto", "--system", "dgx-h100", "--gpus",
      "64", "--ep", "8", "--pp", "4"},
     {{.path = "m.textproto",
       .copy_of = "models/zoo/deepseek-v3.textproto",
       .old_text = "num_layers: 61\n",
       .new_text = "num_layers: 61\nwindow_attn_skip_freq: -2\n"}},
     "flags: --model: {d}/m.textproto:10: window_attn_skip_freq: must be "
     "finite, >= 0 and <= 2147483648, got -2"},
    {"ModelLinearFreqNegative",
     {"run", "--model", "{d}/m.textproto", "--system", "dgx-h100", "--gpus",
      "64", "--ep", "8", "--pp", "4"},
     {{.path = "m.textproto",
       .copy_of = "models/zoo/deepseek-v3.textproto",
       .old_text = "num_layers: 61\n",
       .new_text = "num_layers: 61\nlinear_attention_freq: -1\n"}},
     "flags: --model: {d}/m.textproto:10: linear_attention_freq: must be "
     "finite, >= 0 and <= 2147483648, got -1"},
    {"ModelRecipeLayoutUnclosed",
     {"run", "--model", "{d}/m.textproto", "--system", "dgx-h100", "--gpus",
      "64", "--ep", "8", "--pp", "4"},
     {{.path = "m.textproto",
       .copy_of = "models/zoo/deepseek-v3.textproto",
       .old_text = "layout: \"Et*16|t*16|t*16|t*13mL\"",
       .new_text = "layout: \"((((\""}},
     "flags: --model: {d}/m.textproto: recipe.pipeline_layouts (pp 4, vpp 1): "
     "'((((': pipeline_model_parallel_layout: missing ')' at position 5 of "
     "\"((((\""},
};

std::string Replace(std::string s, const std::string& from,
                    const std::string& to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos;
       at += to.size())
    s.replace(at, from.size(), to);
  return s;
}

std::string ReadSource(const std::string& path) {
  std::ifstream in(std::string(MOESIM_SOURCE_DIR) + "/" + path,
                   std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes the row's files into `dir`; the reason when one cannot be made.
std::string WriteFiles(const HostileInput& c,
                       const std::filesystem::path& dir) {
  for (const InlineFile& f : c.files) {
    std::string text;
    if (f.nest > 0) {
      text =
          "{\"a\":" + std::string(f.nest, '[') + std::string(f.nest, ']') + "}";
    } else if (f.copy_of != nullptr) {
      text = ReadSource(f.copy_of);
      if (text.empty()) return std::string("cannot read ") + f.copy_of;
      if (f.old_text != nullptr) {
        const size_t at = text.find(f.old_text);
        if (at == std::string::npos)
          return std::string(f.copy_of) + " has no '" + f.old_text + "'";
        text.replace(at, strlen(f.old_text), f.new_text);
      }
    } else {
      text = f.content;
    }
    const std::filesystem::path path = dir / f.path;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
  }
  return "";
}

class HostileInputTest : public testing::TestWithParam<HostileInput> {};

TEST_P(HostileInputTest, ExitsTwoWithOneLineNamingFieldAndRule) {
  const HostileInput& c = GetParam();
  const std::filesystem::path dir =
      std::filesystem::path(testing::TempDir()) / "moesim_hostile" / c.name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string written = WriteFiles(c, dir);
  ASSERT_EQ(written, "");

  std::vector<std::string> argv = {MOESIM_BINARY};
  for (const std::string& a : c.args) argv.push_back(Replace(a, "{d}", dir));
  ChildLimits limits;
  limits.address_space_bytes = uint64_t{1} << 30;
  limits.wall = std::chrono::milliseconds(BuiltWithAsan() ? 30'000 : 5'000);
  const ChildResult r = RunChild(argv, limits);
  ASSERT_FALSE(r.timed_out)
      << "still running after " << r.elapsed.count() << " ms";
  ASSERT_TRUE(r.exited) << "killed by signal " << r.signal << " ("
                        << strsignal(r.signal) << "); stderr:\n"
                        << r.err;
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  const std::string expected =
      "moesim: " + Replace(c.fragment, "{d}", dir.string());
  EXPECT_TRUE(r.err.starts_with(expected))
      << "expected: " << expected << "\ngot: " << r.err;
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Rows, HostileInputTest, testing::ValuesIn(kCatalogue),
                         [](const testing::TestParamInfo<HostileInput>& info) {
                           return std::string(info.param.name);
                         });

// The issue asks for at least 400 cases across tests/robustness/; this
// file holds most of them, bad_input_catalogue_test.cc the rest.
TEST(HostileInputTableTest, HasAtLeastThreeHundredRows) {
  EXPECT_GE(std::size(kCatalogue), 300u);
}

}  // namespace
