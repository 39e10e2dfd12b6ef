// Reading one row of a measured-runs CSV (studies/measured_runs.h): the
// column readers (studies/measured_runs_columns.cc) and the row
// (studies/measured_runs_row.cc). Private to the studies library.
#ifndef MOESIM_STUDIES_MEASURED_RUNS_INTERNAL_H_
#define MOESIM_STUDIES_MEASURED_RUNS_INTERNAL_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "models/zoo.h"
#include "studies/measured_runs.h"
#include "util/csv.h"
#include "util/error.h"

namespace moesim::studies::internal {

// "<file>:<line>: <column>: <rule>", the one-line error of a bad row.
util::Error RowError(const std::string& file, int line, std::string_view column,
                     std::string_view rule);

// A whole number in [0, 1e9], or empty.
util::Result<std::optional<int>> Integer(const std::string& text,
                                         const std::string& file, int line,
                                         std::string_view column);

// The modelled keys of the `extra` column as Megatron arguments; a key with
// no Megatron-LM flag goes to moesim's own flag in `flags`
// (batch_p2p_sync, a Megatron-Bridge config field).
std::string ExtraArgs(const std::string& extra, ScenarioFlags& flags);

// The optional cp_comm_type column and the hierarchical sizes in `extra`
// (hierarchical_context_parallel_sizes=8 4, inner first, as Megatron's
// flag): a word moesim does not know, or a split Transformer Engine
// refuses (scenarios::CpExchangeRule), is an error naming the row.
util::Result<void> CpExchange(const util::CsvTable& t, size_t i,
                              const std::string& file,
                              const models::Model& model, MeasuredRun& r);

// The word columns against moesim's vocabularies (scenarios/vocabulary.h)
// and the schema's confidence levels (validation README): an unknown word is
// refused with its row, not left to make the row silently unsimulated.
util::Result<void> CheckWords(const util::CsvTable& t, size_t i,
                              const std::string& file, int line);

// Row `i` of `t` (read from `file`) as a run: its flags, measurements and
// whether moesim can express it; errors name the row and the column.
util::Result<MeasuredRun> ParseRow(const util::CsvTable& t, size_t i,
                                   const std::string& file);

}  // namespace moesim::studies::internal

#endif  // MOESIM_STUDIES_MEASURED_RUNS_INTERNAL_H_
