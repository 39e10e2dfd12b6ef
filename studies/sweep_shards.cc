// Sweep shards on disk: a shard's candidates written as JSON with a
// checksum (FormatSweepShard), and the merge of every shard back into the
// sweep (MergeSweepShards), each row checked before it is trusted.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scenarios/limits.h"
#include "scenarios/vocabulary.h"
#include "studies/physical_limits.h"
#include "studies/sweep.h"
#include "util/fnv.h"
#include "util/format.h"
#include "util/message.h"
#include "util/textproto.h"

namespace moesim::studies {
namespace {

using util::Result;

// SweepShard.rows_fnv: FNV-1a over each candidate's deterministic binary
// form (field-number order; JSON doubles read back exactly, so the value
// recomputed from a part read from disk is the one its shard wrote).
std::string RowsChecksum(const SweepShard& part) {
  uint64_t h = util::kFnvOffsetBasis;
  std::string bytes;
  for (const SweepCandidate& c : part.candidates()) {
    bytes.clear();
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    c.SerializeToCodedStream(&coded);
    coded.Trim();
    util::FnvAddValue(h, bytes);
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx",
                static_cast<unsigned long long>(h));
  return hex;
}

// Shard file `file` read into `part` and checked on its own and against
// `first` (the first file's shard; `first_file` its name); `seen` gathers
// the shard numbers (MergeSweepTexts).
Result<void> ReadShard(const std::string& file, const std::string& text,
                       const SweepShard* first, const std::string& first_file,
                       std::set<int>& seen, SweepShard& part) {
  google::protobuf::util::JsonParseOptions options;
  if (auto status =
          google::protobuf::util::JsonStringToMessage(text, &part, options);
      !status.ok()) {
    std::string message(status.message());
    return util::Fail(
        file + ": not a sweep shard: " + message.substr(0, message.find('\n')));
  }
  if (part.format() != 1) {
    return util::Fail(file + ": format: expected 1, got " +
                      std::to_string(part.format()));
  }
  // A part is checked on its own before it is trusted: its counts size
  // the merge (a shard count of 0 divided by zero, a crafted total
  // allocated without bound).
  if (part.total() < 1 || part.total() > kMaxSweepCandidates) {
    return util::Fail(file + ": total: must be in [1, " +
                      std::to_string(kMaxSweepCandidates) +
                      "] (the limit of a sweep), got " +
                      std::to_string(part.total()));
  }
  if (part.num_shards() < 1 || part.num_shards() > part.total()) {
    return util::Fail(file + ": num_shards: must be in [1, total = " +
                      std::to_string(part.total()) + "], got " +
                      std::to_string(part.num_shards()));
  }
  if (part.shard() < 0 || part.shard() >= part.num_shards()) {
    return util::Fail(file + ": shard: must be in [0, num_shards = " +
                      std::to_string(part.num_shards()) + "), got " +
                      std::to_string(part.shard()));
  }
  const int64_t expected =
      (part.total() - part.shard() + part.num_shards() - 1) / part.num_shards();
  if (part.candidates_size() != expected) {
    return util::Fail(
        file + ": candidates: shard " + std::to_string(part.shard()) + "/" +
        std::to_string(part.num_shards()) + " of " +
        std::to_string(part.total()) + " candidates holds " +
        std::to_string(expected) + ", the file has " +
        std::to_string(part.candidates_size()) + " (truncated or edited?)");
  }

  if (part.fingerprint() != first->fingerprint() ||
      part.total() != first->total() ||
      part.num_shards() != first->num_shards()) {
    return util::Fail(
        file + ": fingerprint: shard of another sweep (" + part.fingerprint() +
        ", " + std::to_string(part.total()) + " candidates, " +
        std::to_string(part.num_shards()) + " shards) than " + first_file +
        " (" + first->fingerprint() + ", " + std::to_string(first->total()) +
        ", " + std::to_string(first->num_shards()) + ")");
  }
  if (!seen.insert(part.shard()).second) {
    return util::Fail(file + ": shard: " + std::to_string(part.shard()) + "/" +
                      std::to_string(part.num_shards()) + " given twice");
  }
  return {};
}

}  // namespace

std::string FormatSweepShard(const SweepOutcome& o, int shard, int num_shards) {
  SweepShard part;
  part.set_format(1);
  part.set_model(o.model);
  part.set_system(o.system);
  part.set_fingerprint(o.fingerprint);
  part.set_total(o.total);
  part.set_shard(shard);
  part.set_num_shards(num_shards);
  part.set_seconds(o.seconds);
  for (const SweepCandidate& c : o.candidates) *part.add_candidates() = c;
  part.set_rows_fnv(RowsChecksum(part));
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = false;
  options.preserve_proto_field_names = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(part, &json, options);
  return json + "\n";
}

Result<SweepOutcome> MergeSweepShards(const std::vector<std::string>& files) {
  std::vector<std::string> texts;
  for (const std::string& file : files) {
    auto text = util::ReadFile(file);
    if (!text) return std::unexpected(text.error());
    texts.push_back(std::move(*text));
  }
  return MergeSweepTexts(files, texts);
}

Result<SweepOutcome> MergeSweepTexts(const std::vector<std::string>& files,
                                     const std::vector<std::string>& texts) {
  if (files.empty()) return util::Fail("sweep merge: no partial results given");
  SweepOutcome out;
  std::vector<SweepShard> parts;
  std::set<int> seen;
  for (size_t f = 0; f < files.size(); ++f) {
    SweepShard& part = parts.emplace_back();
    const SweepShard* first = f == 0 ? &part : &parts.front();
    if (auto ok =
            ReadShard(files[f], texts[f], first, files.front(), seen, part);
        !ok)
      return std::unexpected(ok.error());
  }
  const SweepShard& first = parts.front();
  for (int k = 0; k < first.num_shards(); ++k) {
    if (!seen.count(k)) {
      return util::Fail("sweep merge: shard " + std::to_string(k) + "/" +
                        std::to_string(first.num_shards()) + " is missing");
    }
  }
  out.model = first.model();
  out.system = first.system();
  out.fingerprint = first.fingerprint();
  out.total = first.total();
  out.candidates.resize(static_cast<size_t>(first.total()));
  std::vector<bool> filled(out.candidates.size(), false);
  for (size_t p = 0; p < parts.size(); ++p) {
    out.seconds += parts[p].seconds();
    // Each row is checked against the rules first (the more specific
    // message), then the part against its checksum.
    const std::string sum = RowsChecksum(parts[p]);
    for (int k = 0; k < parts[p].candidates_size(); ++k) {
      SweepCandidate& c = *parts[p].mutable_candidates(k);
      const int64_t i = c.index();
      if (i < 0 || i >= out.total ||
          i % first.num_shards() != parts[p].shard() || filled[i]) {
        return util::Fail(files[p] + ": candidates: index " +
                          std::to_string(i) + " does not belong to shard " +
                          std::to_string(parts[p].shard()));
      }
      if (auto row = CheckCandidateRow(c); !row) {
        return util::Fail(files[p] + ": candidates[" + std::to_string(k) +
                          "] (index " + std::to_string(i) +
                          "): " + row.error().message);
      }
      filled[i] = true;
      out.candidates[i] = std::move(c);
    }
    if (parts[p].rows_fnv().empty()) {
      return util::Fail(files[p] +
                        ": rows_fnv: missing (a part of an older moesim, or "
                        "edited: run its shard again)");
    }
    if (sum != parts[p].rows_fnv()) {
      return util::Fail(files[p] +
                        ": rows_fnv: the rows do not match their "
                        "checksum (" +
                        parts[p].rows_fnv() + "; they give " + sum +
                        "): edited or damaged after the shard wrote "
                        "them");
    }
  }
  for (size_t i = 0; i < filled.size(); ++i) {
    if (!filled[i]) {
      return util::Fail("sweep merge: candidate " + std::to_string(i) +
                        " is in no shard (truncated file?)");
    }
  }
  return out;
}

}  // namespace moesim::studies
