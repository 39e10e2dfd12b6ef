// Tests of the shipped GPU systems (topology/systems/*.textproto) and of
// LoadSystem's errors (topology/system.h).
#include "topology/system.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace moesim::topology {
namespace {

// The six systems topology/CMakeLists.txt embeds, sorted.
const std::vector<std::string> kShipped = {"dgx-b200",    "dgx-b300",
                                           "dgx-h100",    "gb200-nvl72",
                                           "gb300-nvl72", "hgx-h200"};

TEST(SystemTest, ShippedNamesAreTheSixSystems) {
  EXPECT_EQ(SystemNames(), kShipped);
}

TEST(SystemTest, EveryShippedSystemLoadsAndIsComplete) {
  for (const std::string& name : SystemNames()) {
    SCOPED_TRACE(name);
    auto system = LoadSystem(name);
    ASSERT_TRUE(system.has_value()) << system.error().message;
    EXPECT_EQ(system->name(), name);
    const Gpu& gpu = system->gpu();
    EXPECT_FALSE(gpu.name().empty());
    EXPECT_FALSE(gpu.calibration().empty());
    EXPECT_FALSE(gpu.source().empty());
    EXPECT_FALSE(system->source().empty());
    EXPECT_GT(gpu.memory_gib(), 0);
    EXPECT_GT(gpu.bf16_dense_tflops(), 0);
    // FP8 is twice BF16 on every shipped GPU (gpu_specs.csv; H100/H200 list
    // 1979 against 2 x 989 = 1978 because both are rounded from 989.4).
    EXPECT_NEAR(gpu.fp8_dense_tflops(), 2 * gpu.bf16_dense_tflops(), 1.0);
    // TF32 is half of BF16 on every shipped GPU (gpu_specs.csv).
    EXPECT_DOUBLE_EQ(gpu.tf32_dense_tflops(), gpu.bf16_dense_tflops() / 2);
    EXPECT_GT(gpu.hbm_tbps(), 0);
    EXPECT_GT(gpu.sm_count(), 0);
    EXPECT_EQ(system->nvlink_domain_gpus() % system->gpus_per_node(), 0);
  }
}

// gpu_specs.csv row "H100 SXM5 80GB": bf16_dense_tflops 989, fp8 1979
// (dense; the datasheet's 1979 / 3958 are with 2:4 sparsity).
TEST(SystemTest, H100PeaksFromGpuSpecs) {
  auto system = LoadSystem("dgx-h100");
  ASSERT_TRUE(system.has_value()) << system.error().message;
  EXPECT_DOUBLE_EQ(system->gpu().bf16_dense_tflops(), 989);
  EXPECT_DOUBLE_EQ(system->gpu().fp8_dense_tflops(), 1979);
  EXPECT_EQ(system->gpu().sm_count(), 132);  // gpu_specs.csv
  EXPECT_EQ(system->gpus_per_node(), 8);
  EXPECT_EQ(system->nvlink_domain_gpus(), 8);
  // nvidia-smi memory.total 81559 MiB = 79.65 GiB, below the 80 GB label.
  EXPECT_NEAR(system->gpu().memory_gib(), 81559.0 / 1024, 0.01);
}

// gpu_specs.csv: GB200 nvlink_domain_gpus 72; hardware_facts.md section 2:
// 18 compute trays x 4 GPUs, each tray one host.
TEST(SystemTest, Gb200IsOneNvl72Domain) {
  auto system = LoadSystem("gb200-nvl72");
  ASSERT_TRUE(system.has_value()) << system.error().message;
  EXPECT_EQ(system->nvlink_domain_gpus(), 72);
  EXPECT_EQ(system->gpus_per_node(), 4);
  EXPECT_EQ(system->nvlink_domain_gpus() / system->gpus_per_node(),
            18);  // compute trays
}

// The GPU list is read from the shipped systems (gpu.calibration, ordered
// Hopper then Blackwell by topology/systems/*.textproto gpu.architecture),
// not written in code; these six are the files' values.
TEST(SystemTest, ShippedGpusComeFromTheSystemFiles) {
  EXPECT_EQ(ShippedGpus(),
            (std::vector<std::string>{"h100", "h200", "b200", "b300", "gb200",
                                      "gb300"}));
  auto unknown = SystemForGpu("z100");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message,
            "gpu: unknown GPU 'z100'; known: h100, h200, b200, b300, gb200, "
            "gb300");
}

// Every runs.csv GPU maps to a shipped system whose calibration folder is
// that GPU.
TEST(SystemTest, SystemForGpuMatchesCalibration) {
  for (const std::string& gpu : ShippedGpus()) {
    SCOPED_TRACE(gpu);
    auto name = SystemForGpu(gpu);
    ASSERT_TRUE(name.has_value()) << name.error().message;
    auto system = LoadSystem(*name);
    ASSERT_TRUE(system.has_value()) << system.error().message;
    EXPECT_EQ(system->gpu().calibration(), gpu);
  }
}

TEST(SystemTest, UnknownNameListsShippedSystems) {
  auto system = LoadSystem("dgx-a100");
  ASSERT_FALSE(system.has_value());
  const std::string& message = system.error().message;
  EXPECT_EQ(message.rfind("system: unknown system 'dgx-a100'; shipped: ", 0),
            0u)
      << message;
  for (const std::string& name : kShipped) {
    EXPECT_NE(message.find(name), std::string::npos)
        << name << " not in: " << message;
  }
}

// Writes `text` to a fresh file under the test's temporary directory.
std::string WriteTempFile(const std::string& file_name,
                          const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + file_name;
  std::ofstream(path) << text;
  return path;
}

TEST(SystemTest, MalformedTextprotoGivesFileAndLine) {
  // Line 3 has an unknown field.
  std::string path = WriteTempFile("malformed_system.textproto",
                                   "name: \"x\"\n"
                                   "gpus_per_node: 8\n"
                                   "gpus_per_rack: 72\n");
  auto system = LoadSystem(path);
  ASSERT_FALSE(system.has_value());
  EXPECT_EQ(system.error().message.rfind(path + ":3:", 0), 0u)
      << system.error().message;
  std::filesystem::remove(path);
}

TEST(SystemTest, MissingFieldIsNamed) {
  std::string path = WriteTempFile("no_gpu_system.textproto",
                                   "name: \"x\"\n"
                                   "gpus_per_node: 8\n"
                                   "nvlink_domain_gpus: 8\n");
  auto system = LoadSystem(path);
  ASSERT_FALSE(system.has_value());
  EXPECT_EQ(system.error().message, path + ": gpu: must be set");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace moesim::topology
