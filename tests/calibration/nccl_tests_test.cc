#include "calibration/nccl_tests.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "util/csv.h"
#include "util/textproto.h"

namespace moesim::calibration {
namespace {

// The logs under testdata/ are hand-written in the formats nccl-tests
// prints (see nccl_tests.h); every expected number below is copied from the
// cited line of the file.
std::string Testdata(const std::string& name) {
  auto text = util::ReadFile(std::string(MOESIM_SOURCE_DIR) +
                             "/tests/calibration/testdata/" + name);
  EXPECT_TRUE(text) << text.error().message;
  return text ? *text : std::string();
}

std::vector<CollectiveRow> ParseOk(const std::string& name,
                                   std::string_view tier) {
  auto rows = ParseNcclTestsLog(Testdata(name), name, tier);
  EXPECT_TRUE(rows) << rows.error().message;
  return rows ? *rows : std::vector<CollectiveRow>();
}

std::string ParseError(std::string_view text, std::string_view file,
                       std::string_view tier = "nvlink") {
  auto rows = ParseNcclTestsLog(text, file, tier);
  EXPECT_FALSE(rows) << file << " parsed to " << rows->size() << " rows";
  return rows ? std::string() : rows.error().message;
}

// A minimal well-formed log (nccl-tests 2.13 layout) to vary in the tests.
constexpr std::string_view kHeader =
    "#       size         count      type   redop    root     time   algbw   "
    "busbw #wrong     time   algbw   busbw #wrong\n";
constexpr std::string_view kRow =
    "        4096          1024     float     sum      -1    12.41    0.33    "
    "0.58       0    12.19    0.34    0.59       0\n";
std::string SmallLog(std::string_view before_header = "",
                     std::string_view row = kRow) {
  return "# nThread 1 nGpus 2 minBytes 4096 maxBytes 4096 step: 2(factor)\n"
         "#  Rank  0 Group  0 Pid   7 on h device  0 [0x18] NVIDIA H100\n"
         "#  Rank  1 Group  0 Pid   7 on h device  1 [0x2a] NVIDIA H100\n" +
         std::string(before_header) + std::string(kHeader) + std::string(row) +
         "# Out of bounds values : 0 OK\n";
}

TEST(NcclTestsLog, AllReduce8xH100ReadsEveryRowAndTheRunMetadata) {
  auto rows = ParseOk("all_reduce_perf_8xh100.log", "nvlink");
  // -b 8 -e 8G -f 8: 8, 64, ..., 8589934592 = 11 sizes (lines 19-29).
  ASSERT_EQ(rows.size(), 11u);
  // line 19: "8 2 float sum -1 11.02 0.00 0.00 0 ..."
  EXPECT_EQ(rows[0].bytes, 8);
  EXPECT_DOUBLE_EQ(rows[0].latency_us, 11.02);
  // busbw prints as 0.00: recomputed from size and time with the
  // all-reduce bus factor, 8 B * 2 * 7/8 / 11.02 us = 0.00127 GB/s.
  EXPECT_DOUBLE_EQ(rows[0].bus_gb_s, 8 * 2 * 7.0 / 8 / 11.02e-6 / 1e9);
  // line 27: "134217728 ... 598.4 224.29 392.52 0 596.1 ..." (out-of-place)
  EXPECT_EQ(rows[8].bytes, 134217728);
  EXPECT_DOUBLE_EQ(rows[8].latency_us, 598.4);
  EXPECT_DOUBLE_EQ(rows[8].bus_gb_s, 392.52);
  // line 29: "8589934592 ... 32951 260.69 456.20 0 32907 ..."
  EXPECT_EQ(rows[10].bytes, 8589934592.0);
  EXPECT_DOUBLE_EQ(rows[10].latency_us, 32951);
  EXPECT_DOUBLE_EQ(rows[10].bus_gb_s, 456.20);
  for (const CollectiveRow& r : rows) {
    EXPECT_EQ(r.collective, "all_reduce");  // line 3: .../all_reduce_perf
    EXPECT_EQ(r.algorithm, "auto");         // no NCCL_ALGO in the log
    EXPECT_EQ(r.tier, "nvlink");
    EXPECT_EQ(r.group_size, 8);  // Rank 0-7 on lines 7-14
    // Lines 7-14 "NVIDIA H100 80GB HBM3"; line 2 "Thu Mar 13 ... 2025".
    EXPECT_EQ(r.source, "measured:nvidia-h100-80gb-hbm3:2025-03-13");
  }
}

TEST(NcclTestsLog, Alltoall16RanksOnTwoNodesSkipsMpiAndNcclNoise) {
  auto rows = ParseOk("alltoall_perf_16xh100_2nodes.log", "net");
  // -b 1K -e 1G -f 4: 11 sizes; lines 29 (mpirun) and 41 (NCCL INFO) skipped.
  ASSERT_EQ(rows.size(), 11u);
  // line 35: "1048576 16384 float none -1 101.30 10.35 9.70 0 100.70 ... N/A"
  EXPECT_EQ(rows[5].bytes, 1048576);
  EXPECT_DOUBLE_EQ(rows[5].latency_us, 101.30);
  EXPECT_DOUBLE_EQ(rows[5].bus_gb_s, 9.70);
  // line 40: "1073741824 ... 13795.0 77.84 72.97 0 13781.0 77.91 73.04 N/A"
  EXPECT_EQ(rows[10].bytes, 1073741824);
  EXPECT_DOUBLE_EQ(rows[10].latency_us, 13795.0);
  EXPECT_DOUBLE_EQ(rows[10].bus_gb_s, 72.97);
  EXPECT_EQ(rows[10].collective, "alltoall");  // line 4
  EXPECT_EQ(rows[10].tier, "net");
  // nGpus 1 per process (line 5), 16 MPI processes: Rank 0-15, lines 8-23.
  EXPECT_EQ(rows[10].group_size, 16);
  // line 1: "Started: 2025-06-02T14:20:11+00:00"
  EXPECT_EQ(rows[10].source, "measured:nvidia-h100-80gb-hbm3:2025-06-02");
}

TEST(NcclTestsLog, AllGatherTakesNcclAlgoFromTheCommandEcho) {
  auto rows = ParseOk("all_gather_perf_8xh100.log", "nvlink");
  ASSERT_EQ(rows.size(), 7u);  // -b 1M -e 4G -f 4, lines 17-23
  // line 23: "4294967296 134217728 float none -1 11862 362.08 316.82 0 ..."
  EXPECT_EQ(rows[6].bytes, 4294967296.0);
  EXPECT_DOUBLE_EQ(rows[6].latency_us, 11862);
  EXPECT_DOUBLE_EQ(rows[6].bus_gb_s, 316.82);
  EXPECT_EQ(rows[6].collective, "all_gather");
  EXPECT_EQ(rows[6].algorithm, "ring");  // line 1: NCCL_ALGO=Ring
  EXPECT_EQ(rows[6].group_size, 8);
  // No date anywhere in the log.
  EXPECT_EQ(rows[6].source, "measured:nvidia-h100-80gb-hbm3:unknown-date");
}

TEST(NcclTestsLog, ReduceScatterWithTimestampColumnDatesTheRun) {
  auto rows = ParseOk("reduce_scatter_perf_8xh200.log", "nvlink");
  ASSERT_EQ(rows.size(), 6u);  // lines 18-23
  // line 21: "67108864 2097152 float sum -1 181.40 369.95 323.71 0 ...
  //           2025-07-01 09:15:03" (the timestamp is two more fields)
  EXPECT_EQ(rows[3].bytes, 67108864);
  EXPECT_DOUBLE_EQ(rows[3].latency_us, 181.40);
  EXPECT_DOUBLE_EQ(rows[3].bus_gb_s, 323.71);
  EXPECT_EQ(rows[3].collective, "reduce_scatter");
  EXPECT_EQ(rows[3].group_size, 8);
  // "NVIDIA H200" on lines 6-13; first date: the timestamp of line 18.
  EXPECT_EQ(rows[3].source, "measured:nvidia-h200:2025-07-01");
}

TEST(NcclTestsLog, SendrecvInTheOldLayoutWithAnErrorColumn) {
  auto rows = ParseOk("sendrecv_perf_2xa100_2nodes.log", "net");
  // nccl-tests 2.0 layout: no redop/root, "error" (max |delta|) columns.
  ASSERT_EQ(rows.size(), 7u);  // lines 12-18
  // line 18: "268435456 67108864 float 11296 23.76 23.76 0e+00 11291 ..."
  EXPECT_EQ(rows[6].bytes, 268435456);
  EXPECT_DOUBLE_EQ(rows[6].latency_us, 11296);
  EXPECT_DOUBLE_EQ(rows[6].bus_gb_s, 23.76);
  EXPECT_EQ(rows[6].collective, "sendrecv");
  // "#   Rank  0 Pid ..." without Group, one per node (lines 6-7).
  EXPECT_EQ(rows[6].group_size, 2);
  EXPECT_EQ(rows[6].source, "measured:a100-sxm4-40gb:2021-11-08");
}

TEST(NcclTestsLog, SourceOverrideReplacesTheMeasuredSource) {
  auto rows =
      ParseNcclTestsLog(Testdata("all_gather_perf_8xh100.log"), "ag.log",
                        "nvlink", "published:vendor run, 2025");
  ASSERT_TRUE(rows) << rows.error().message;
  EXPECT_EQ(rows->front().source, "published:vendor run, 2025");
}

TEST(NcclTestsLog, CollectiveFromTheFileNameWhenTheLogNamesNone) {
  // SmallLog has no command echo and no "Collective test starting".
  auto rows =
      ParseNcclTestsLog(SmallLog(), "runs/8xh100_all_reduce.log", "nvlink");
  ASSERT_TRUE(rows) << rows.error().message;
  EXPECT_EQ(rows->front().collective, "all_reduce");
  EXPECT_EQ(rows->front().group_size, 2);  // two Rank lines
  EXPECT_EQ(rows->front().source, "measured:nvidia-h100:unknown-date");
}

TEST(NcclTestsLog, NcclAlgoSettingsMapToTheSchema) {
  auto algo = [](std::string_view echo) {
    auto rows = ParseNcclTestsLog(SmallLog(echo), "all_reduce.log", "net");
    return rows ? rows->front().algorithm : rows.error().message;
  };
  EXPECT_EQ(algo("mpirun -x NCCL_ALGO=TREE ./all_reduce_perf\n"), "tree");
  EXPECT_EQ(algo("export NCCL_ALGO='NVLS'\n"), "nvls");
  EXPECT_EQ(algo("h:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring.\n"),
            "ring");
  // An exclusion or a list leaves NCCL a choice.
  EXPECT_EQ(algo("NCCL_ALGO=^NVLS\n"), "auto");
  EXPECT_EQ(algo("NCCL_ALGO=Ring,Tree\n"), "auto");
  EXPECT_EQ(algo("NCCL_ALGO=PAT\n"),
            "all_reduce.log:4: NCCL_ALGO 'pat': collectives.csv takes ring, "
            "tree, nvls, or a list or exclusion (^x) of them, which NCCL "
            "chooses from (auto)");
  EXPECT_EQ(algo("NCCL_ALGO=Ring\nNCCL_ALGO=Tree\n"),
            "all_reduce.log:5: NCCL_ALGO 'tree' differs from 'ring' at line "
            "4: one log must hold one algorithm setting");
}

TEST(NcclTestsLog, HeaderWithoutHashAndRepeatedSizesAreRead) {
  // Some job wrappers strip the leading '#'; `-d all` repeats sizes, which
  // are averaged into one row (collectives.csv refuses a repeated point).
  std::string log = SmallLog();
  log.replace(log.find(kHeader), 1, " ");
  std::string slower(kRow);
  slower.replace(slower.find("12.41"), 5, "14.41");
  slower.replace(slower.find("0.33"), 4, "0.28");  // 4096 B / 14.41 us
  slower.replace(slower.find("0.58"), 4, "0.50");
  log += std::string(kHeader) + std::string(kRow) + slower;
  auto rows = ParseNcclTestsLog(log, "sendrecv_perf.log", "net");
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  // Means of the three measurements: (12.41 * 2 + 14.41) / 3, (0.58 * 2 +
  // 0.50) / 3.
  EXPECT_NEAR(rows->front().latency_us, 13.0766667, 1e-6);
  EXPECT_NEAR(rows->front().bus_gb_s, 0.5533333, 1e-6);
}

TEST(NcclTestsLog, SizeZeroRowsAreSkippedTimeZeroAndHugeBusbwRefused) {
  // nccl-tests prints size 0 when a size holds under one element per rank.
  std::string zero(kRow);
  zero.replace(zero.find("        4096          1024"), 25,
               "           0             0");
  std::string log = SmallLog("", zero);
  log += std::string(kHeader) + std::string(kRow);
  auto rows = ParseNcclTestsLog(log, "all_reduce_perf.log", "nvlink");
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().bytes, 4096);

  std::string no_time(kRow);
  no_time.replace(no_time.find("12.41"), 5, " 0.00");
  auto timeless =
      ParseNcclTestsLog(SmallLog("", no_time), "all_reduce_perf.log", "nvlink");
  ASSERT_FALSE(timeless);
  EXPECT_NE(
      timeless.error().message.find(
          "all_reduce_perf.log:5: time (out-of-place) '0.00': must be > 0"),
      std::string::npos)
      << timeless.error().message;

  std::string huge(kRow);
  huge.replace(huge.find("0.58"), 4, "1e308");
  auto fast =
      ParseNcclTestsLog(SmallLog("", huge), "all_reduce_perf.log", "nvlink");
  ASSERT_FALSE(fast);
  EXPECT_NE(fast.error().message.find("busbw (out-of-place) '1e308': above "
                                      "100000 GB/s"),
            std::string::npos)
      << fast.error().message;
}

TEST(NcclTestsLog, RowsThatContradictThemselvesAreRefused) {
  // Issue 44 cause 8. nccl-tests (src/common.cu) prints size = count x 4
  // bytes for a float all_reduce and algbw = size / time: kRow's 4096 B,
  // 1024 floats and 12.41 us give 0.33 GB/s.
  struct Case {
    const char* from;
    const char* to;
    const char* message;
  };
  const Case cases[] = {
      {"        4096          1024", "        4098          1024",
       "all_reduce_perf.log:5: size 4098: not a whole number of float "
       "elements (4 bytes each)"},
      {"        4096          1024", "        4096          1000",
       "all_reduce_perf.log:5: size 4096: not a whole multiple of count 1000 "
       "x 4 bytes"},
      {"0.33", "3.30",
       "all_reduce_perf.log:5: algbw (out-of-place) 3.30: disagrees with size "
       "/ time = 4096 B / 12.41 us = 0.33"},
      {"0.34", "0.30",
       "all_reduce_perf.log:5: algbw (in-place) 0.30: disagrees with size / "
       "time = 4096 B / 12.19 us = 0.336"},
  };
  for (const Case& c : cases) {
    std::string row(kRow);
    row.replace(row.find(c.from), std::string_view(c.from).size(), c.to);
    auto rows =
        ParseNcclTestsLog(SmallLog("", row), "all_reduce_perf.log", "nvlink");
    ASSERT_FALSE(rows) << c.to;
    EXPECT_NE(rows.error().message.find(c.message), std::string::npos)
        << rows.error().message;
  }
  // Within what printing rounds away (0.01 GB/s + 2%): 0.34 for 0.330.
  std::string rounded(kRow);
  rounded.replace(rounded.find("0.33"), 4, "0.34");
  EXPECT_TRUE(ParseNcclTestsLog(SmallLog("", rounded), "all_reduce_perf.log",
                                "nvlink"));
}

TEST(NcclTestsCsv, RoundTripText) {
  auto rows = ParseOk("sendrecv_perf_2xa100_2nodes.log", "net");
  // Lines 12-18, out-of-place busbw and time as printed (20.60 -> 20.6).
  EXPECT_EQ(CollectiveRowsToCsv(rows),
            "collective,algorithm,tier,group_size,bytes,bus_gb_s,latency_us,"
            "source\n"
            "sendrecv,auto,net,2,1024,0.05,19.83,"
            "measured:a100-sxm4-40gb:2021-11-08\n"
            "sendrecv,auto,net,2,8192,0.38,21.45,"
            "measured:a100-sxm4-40gb:2021-11-08\n"
            "sendrecv,auto,net,2,65536,2.27,28.92,"
            "measured:a100-sxm4-40gb:2021-11-08\n"
            "sendrecv,auto,net,2,524288,10.05,52.18,"
            "measured:a100-sxm4-40gb:2021-11-08\n"
            "sendrecv,auto,net,2,4194304,20.6,203.6,"
            "measured:a100-sxm4-40gb:2021-11-08\n"
            "sendrecv,auto,net,2,33554432,23.42,1432.7,"
            "measured:a100-sxm4-40gb:2021-11-08\n"
            "sendrecv,auto,net,2,268435456,23.76,11296,"
            "measured:a100-sxm4-40gb:2021-11-08\n");
  // The CSV reads back with the project's reader to the same values.
  auto all_reduce = ParseOk("all_reduce_perf_8xh100.log", "nvlink");
  auto table = util::CsvTable::Parse(CollectiveRowsToCsv(all_reduce), "t.csv");
  ASSERT_TRUE(table) << table.error().message;
  ASSERT_EQ(table->num_rows(), all_reduce.size());
  for (size_t i = 0; i < all_reduce.size(); ++i) {
    EXPECT_EQ(std::stod(table->Get(i, "bytes")), all_reduce[i].bytes);
    // %.6g keeps six significant digits.
    EXPECT_NEAR(std::stod(table->Get(i, "bus_gb_s")), all_reduce[i].bus_gb_s,
                1e-5 * all_reduce[i].bus_gb_s);
    EXPECT_EQ(std::stod(table->Get(i, "latency_us")), all_reduce[i].latency_us);
    EXPECT_EQ(table->Get(i, "source"), all_reduce[i].source);
  }
  EXPECT_EQ(table->Get(10, "bytes"), "8589934592");  // line 29
}

TEST(NcclTestsCsv, NumbersNeverUseAnExponentAndFieldsAreQuoted) {
  CollectiveRow r{"alltoall",    "auto",  "net",      16,
                  17179869184.0, 0.00001, 12345678.9, "published:a, \"b\""};
  EXPECT_EQ(CollectiveRowsToCsv({r}),
            "collective,algorithm,tier,group_size,bytes,bus_gb_s,latency_us,"
            "source\n"
            "alltoall,auto,net,16,17179869184,0.00001,12345679,"
            "\"published:a, \"\"b\"\"\"\n");
  auto table = util::CsvTable::Parse(CollectiveRowsToCsv({r}), "t.csv");
  ASSERT_TRUE(table);
  EXPECT_EQ(table->Get(0, "source"), "published:a, \"b\"");
}

TEST(NcclTestsErrors, TruncatedRowNamesItsLine) {
  EXPECT_EQ(ParseError(Testdata("truncated_row.log"), "truncated_row.log"),
            "truncated_row.log:28: data row has 7 fields, the table header at "
            "line 17 has 13: truncated or malformed row");
}

TEST(NcclTestsErrors, NonNumericBusbwNamesItsLineAndColumn) {
  EXPECT_EQ(
      ParseError(Testdata("nonnumeric_busbw.log"), "nonnumeric_busbw.log"),
      "nonnumeric_busbw.log:20: busbw (out-of-place) '-nan': must be a number "
      ">= 0 (not NaN)");
  std::string row(kRow);
  row.replace(row.find("0.58"), 4, "abcd");
  EXPECT_EQ(ParseError(SmallLog("", row), "all_reduce.log"),
            "all_reduce.log:5: busbw (out-of-place) 'abcd': must be a number "
            ">= 0 (not NaN)");
  row = kRow;
  row.replace(row.find("12.19"), 5, "-1.00");
  EXPECT_EQ(ParseError(SmallLog("", row), "all_reduce.log"),
            "all_reduce.log:5: time (in-place) '-1.00': must be a number >= 0 "
            "(not NaN)");
  row = kRow;
  row.replace(row.find("4096"), 4, "4e+3");
  EXPECT_EQ(ParseError(SmallLog("", row), "all_reduce.log"),
            "all_reduce.log:5: size '4e+3': must be a whole number of bytes "
            "(at most 2^53)");
}

TEST(NcclTestsErrors, MissingHeaderPointsAtTheFirstRow) {
  EXPECT_EQ(ParseError(Testdata("missing_header.log"), "missing_header.log"),
            "missing_header.log:13: data row before any table header: the '#  "
            "size  count  type ... busbw' header line must come first");
  EXPECT_EQ(ParseError("# nThread 1 nGpus 8\nsome text\n", "x.log"),
            "x.log:3: no table header: expected a '#  size  count  type ... "
            "time  algbw  busbw ...' line (nccl-tests prints it before the "
            "results)");
}

TEST(NcclTestsErrors, NonZeroWrongRefusesTheRun) {
  EXPECT_EQ(ParseError(Testdata("wrong_nonzero.log"), "wrong_nonzero.log"),
            "wrong_nonzero.log:21: #wrong (out-of-place) is 2048: the run "
            "produced wrong results; refusing to calibrate from a failed run");
  // Unchecked rows (#wrong N/A) with a failed footer are refused too.
  std::string row(kRow);
  row.replace(row.rfind('0'), 1, "N/A");
  std::string log = SmallLog("", row);
  log.replace(log.find(": 0 OK"), 6, ": 12 FAILED");
  EXPECT_EQ(ParseError(log, "all_reduce.log"),
            "all_reduce.log:6: Out of bounds values '12': the run produced "
            "wrong results; refusing to calibrate from a failed run");
}

TEST(NcclTestsErrors, EmptyLog) {
  EXPECT_EQ(ParseError(Testdata("empty.log"), "empty.log"),
            "empty.log:1: empty log: an nccl-tests log has a table header and "
            "data rows");
  EXPECT_EQ(ParseError(" \n\r\n", "blank.log"),
            "blank.log:1: empty log: an nccl-tests log has a table header and "
            "data rows");
}

TEST(NcclTestsErrors, NoDataRows) {
  std::string log = SmallLog();
  log.erase(log.find(kRow), kRow.size());
  EXPECT_EQ(ParseError(log, "all_reduce.log"),
            "all_reduce.log:4: no data rows: the table header is followed by "
            "no row of results (the run stopped before its first size?)");
}

TEST(NcclTestsErrors, UnknownCollectiveAndTier) {
  EXPECT_EQ(ParseError(SmallLog("$ ./build/gather_perf -b 4K -e 4K -g 2\n"),
                       "run.log"),
            "run.log:4: unknown collective 'gather_perf': collectives.csv "
            "takes all_reduce, all_gather, reduce_scatter, alltoall, "
            "sendrecv, broadcast");
  EXPECT_EQ(ParseError(SmallLog(), "run.log"),
            "run.log:1: unknown collective: neither the log nor the file name "
            "names an nccl-tests binary (all_reduce_perf, all_gather_perf, "
            "reduce_scatter_perf, alltoall_perf, sendrecv_perf, "
            "broadcast_perf)");
  // Two "# Collective test starting:" lines: two runs in one file.
  EXPECT_EQ(ParseError(SmallLog("# Collective test starting: all_reduce_perf\n"
                                "# Collective test starting: alltoall_perf\n"),
                       "run.log"),
            "run.log:5: second collective 'alltoall_perf' after "
            "'all_reduce_perf' at line 4: one log must hold one collective");
  // Two binaries and no "# Collective test starting:" line: ambiguous.
  EXPECT_EQ(ParseError(SmallLog("+ ./all_reduce_perf -g 2\n"
                                "+ ./all_gather_perf -g 2\n"),
                       "run.log"),
            "run.log:5: log names 'all_gather_perf' after 'all_reduce_perf' "
            "at line 4: cannot tell which one the table measures; give one "
            "log per run");
  EXPECT_EQ(ParseError(SmallLog(), "all_reduce.log", "pcie"),
            "all_reduce.log: tier 'pcie': must be nvlink (one NVLink domain) "
            "or net (across domains)");
}

TEST(NcclTestsErrors, RanksRepeatedByLoneProcessesAreRefused) {
  // A build without MPI=1 under mpirun: every process is rank 0.
  std::string log = SmallLog(
      "#  Rank  0 Group  0 Pid   9 on g device  0 [0x18] NVIDIA H100\n");
  EXPECT_EQ(ParseError(log, "all_reduce.log"),
            "all_reduce.log:4: rank 0 listed again (pid 9 on g; line 2 has pid "
            "7 on h): one log must hold one run of an MPI build (without "
            "MPI=1, mpirun starts processes that each run alone)");
}

TEST(NcclTestsErrors, MixedGpusNeedASourceOverride) {
  std::string log = SmallLog(
      "#  Rank  2 Group  0 Pid   9 on g device  0 [0x18] NVIDIA H200\n");
  EXPECT_EQ(ParseError(log, "all_reduce.log"),
            "all_reduce.log:4: GPU 'NVIDIA H200' differs from 'NVIDIA H100' at "
            "line 2: a measured source names one GPU; pass a source override");
  EXPECT_TRUE(ParseNcclTestsLog(log, "all_reduce.log", "net", "derived:x"));
}

TEST(NcclTestsRobustness, GarbageBytesGiveAnErrorNotACrash) {
  std::string bytes;
  uint32_t state = 12345;  // fixed LCG stream: the same bytes every run
  for (int i = 0; i < 1 << 16; ++i) {
    state = state * 1664525u + 1013904223u;
    bytes += static_cast<char>(state >> 24);
  }
  std::string message = ParseError(bytes, "garbage.bin");
  EXPECT_EQ(message.rfind("garbage.bin:", 0), 0u) << message;
  // The same garbage inside a table is a malformed row, not a crash.
  std::string inside = SmallLog("", std::string("4096 ") + bytes + "\n");
  EXPECT_EQ(ParseError(inside, "all_reduce.log").rfind("all_reduce.log:", 0),
            0u);
}

TEST(NcclTestsRobustness, VeryLongLinesKeepTheMessageShort) {
  std::string huge(1 << 20, '7');
  std::string message =
      ParseError(SmallLog(std::string(1 << 20, 'x') + "\n",
                          "4096 1024 float sum -1 " + huge +
                              " 0.33 0.58 0 12.19 0.34 0.59 0\n"),
                 "all_reduce.log");
  // Line 4 is the 1 MiB line of 'x' (noise), line 6 the row whose time
  // has 2^20 digits: the message quotes its first 32 characters.
  EXPECT_EQ(message, "all_reduce.log:6: time (out-of-place) '" +
                         std::string(32, '7') +
                         "...': must be a number >= 0 (not NaN)");
}

TEST(NcclTestsRobustness, EveryPrefixAndByteFlipOfALogParsesOrFails) {
  std::string log = Testdata("alltoall_perf_16xh100_2nodes.log");
  for (size_t n = 0; n <= log.size(); ++n) {
    auto rows = ParseNcclTestsLog(log.substr(0, n), "a.log", "net");
    if (rows) {
      EXPECT_LE(rows->size(), 11u);
    }
  }
  for (size_t i = 0; i < log.size(); ++i) {
    for (char c : {'\0', '\xff', '\n', '#', '9'}) {
      std::string flipped = log;
      flipped[i] = c;
      auto rows = ParseNcclTestsLog(flipped, "a.log", "net");
      if (!rows) {
        EXPECT_EQ(rows.error().message.rfind("a.log", 0), 0u);
      }
    }
  }
}

// alltoall_perf before 2.13 left its redop column blank (nccl-tests@526eaca
// src/alltoall.cu print_line_header): a row one word shorter than the
// header still reads, each number in its own column.
TEST(NcclTestsLog, OldAlltoallWithABlankRedopColumn) {
  auto rows = ParseOk("alltoall_perf_8xa100_2021.log", "nvlink");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].collective, "alltoall");
  EXPECT_EQ(rows[0].bytes, 1048576);
  EXPECT_DOUBLE_EQ(rows[0].latency_us, 64.41);  // line 18
  EXPECT_DOUBLE_EQ(rows[1].bus_gb_s, 95.13);    // line 19
  EXPECT_EQ(rows[0].group_size, 8);
}

// mpirun --tag-output and srun -l prefixes are not part of the log.
TEST(NcclTestsLog, LaunchPrefixesAreStripped) {
  auto rows = ParseOk("all_reduce_perf_8xh100_tagged.log", "nvlink");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].latency_us, 21.50);
  EXPECT_EQ(rows[0].group_size, 2);
  std::string labelled;
  for (const std::string& line : util::SplitList(
           SmallLog("# Collective test starting: all_reduce_perf\n"), "\n"))
    labelled += "0: " + line + "\n";
  auto srun = ParseNcclTestsLog(labelled, "srun.log", "nvlink");
  ASSERT_TRUE(srun) << srun.error().message;
  EXPECT_DOUBLE_EQ((*srun)[0].latency_us, 12.41);
}

// nccl-tests -J FILE.json: the same rows as the printed table.
TEST(NcclTestsLog, JsonOutputImports) {
  NcclLogFacts facts;
  auto rows =
      ParseNcclTestsLog(Testdata("all_reduce_perf_2xh100.json"),
                        "all_reduce_perf_2xh100.json", "nvlink", "", 0, &facts);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].collective, "all_reduce");
  EXPECT_EQ((*rows)[0].algorithm, "ring");  // env NCCL_ALGO=Ring
  EXPECT_DOUBLE_EQ((*rows)[0].latency_us, 20.5);
  EXPECT_DOUBLE_EQ((*rows)[1].bus_gb_s, 67.65);
  EXPECT_EQ((*rows)[0].group_size, 2);
  EXPECT_EQ((*rows)[0].source, "measured:nvidia-h100-80gb-hbm3:2025-11-02");
  EXPECT_EQ(facts.hosts, 1);
  EXPECT_EQ(facts.gpu, "NVIDIA H100 80GB HBM3");
  // A value the table would refuse is named by its JSON path.
  std::string bad = Testdata("all_reduce_perf_2xh100.json");
  bad.replace(bad.find("\"bus_bw\": 67.65"), 15, "\"bus_bw\": -1.00");
  auto refused = ParseNcclTestsLog(bad, "x.json", "nvlink");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message.substr(0, 19), "x.json: results[1]:")
      << refused.error().message;
  auto no_results = ParseNcclTestsLog("{\"args\": []}", "y.json", "nvlink");
  ASSERT_FALSE(no_results);
  EXPECT_EQ(no_results.error().message,
            "y.json: results: missing: an nccl-tests -J file holds a "
            "\"results\" list");
}

// --group-size: where the log lists no ranks; an error where it disagrees.
TEST(NcclTestsLog, StatedGroupSize) {
  const std::string bare = "# Collective test starting: all_reduce_perf\n" +
                           std::string(kHeader) + std::string(kRow) +
                           "# Out of bounds values : 0 OK\n";
  auto unknown = ParseNcclTestsLog(bare, "bare.log", "net", "measured:x:y");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("give --group-size"),
            std::string::npos);
  auto stated = ParseNcclTestsLog(bare, "bare.log", "net", "measured:x:y", 16);
  ASSERT_TRUE(stated) << stated.error().message;
  EXPECT_EQ((*stated)[0].group_size, 16);
  auto contradicted = ParseNcclTestsLog(
      SmallLog("# Collective test starting: all_reduce_perf\n"), "s.log",
      "nvlink", "", 4);
  ASSERT_FALSE(contradicted);
  EXPECT_NE(contradicted.error().message.find(
                "the log lists 2 ranks, --group-size says 4"),
            std::string::npos);
  NcclLogFacts facts;
  ASSERT_TRUE(ParseNcclTestsLog(Testdata("alltoall_perf_16xh100_2nodes.log"),
                                "a.log", "net", "", 0, &facts));
  EXPECT_EQ(facts.hosts, 2);  // node-a, node-b
  EXPECT_EQ(facts.group_size, 16);
}

}  // namespace
}  // namespace moesim::calibration
